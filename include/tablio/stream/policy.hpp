// What names may open when they come from untrusted input: the process's policy, and the
// checks every open of a name makes under it.
//
// A service that opens uploads sets the policy once, for the whole process: TABLIO_UNTRUSTED=1
// in the environment (=network to keep remote objects), TABLIO_CONFINE=DIR, or
// set_process_policy(). The policy only ever tightens what each open's own options allow:
//   untrusted   no commands ("cmd |", "| cmd"), no standard input, regular files only (no
//               devices, FIFOs or folders), no cache named by a specifier, no remote objects
//               unless the policy keeps them, untrusted_limits, and a table opened from a
//               specifier confined to its own folder when no folder is given
//   confine     every local name resolves (symbolic links followed) inside the folder, to a
//               regular file; no commands and no standard input either
// open_options::untrusted and open_options::confine ask the same of one open.
#pragma once

#include <tablio/core/config.hpp>
#include <tablio/core/error.hpp>
#include <tablio/stream/open_options.hpp>
#include <tablio/stream/platform/file_io.hpp>
#include <tablio/stream/remote/url.hpp>

#include <optional>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

// The process's policy for names from untrusted input (the header's opening comment): what
// set_process_policy() takes and current_process_policy() gives.
struct process_policy {
  bool untrusted = false;
  bool allow_pipes = true;  // false under untrusted
  // Remote objects; unset: closed under untrusted, open otherwise (TABLIO_UNTRUSTED=network,
  // or true here, keeps them under untrusted).
  std::optional<bool> allow_network;
  std::string confine;  // a folder; empty: anywhere
  // Bounds every open keeps to besides its own (the tighter of each); by default none.
  limits parse_limits = unbounded_limits;
};

// The process's policy: what set_process_policy() set, else the environment's when first asked.
TABLIO_IMPL process_policy current_process_policy();
// Tightens the process's policy for every open from now on, in every thread: untrusted, closed
// pipes and a closed network stay so, limits only tighten, and a new confining folder must lie
// inside the one set before.
TABLIO_IMPL void set_process_policy(const process_policy& policy);

// The options one open obeys: its own, tightened by the process's policy (untrusted joins
// untrusted; untrusted closes commands and, unless the policy keeps it, the network; limits
// become the tighter of the caller's, the policy's and, untrusted, untrusted_limits). For
// reading, the process's confining folder applies when the options name none, and is checked
// besides theirs when they do. An output's names are the caller's own: only a folder its
// options name confines them (a table's, for the files a script lists: open_table_output).
TABLIO_IMPL open_options governed(const open_options& options, bool for_output = false);

// Whether an input opened under these (governed) options takes regular files only, inside
// its folders, with no command and no standard input.
inline bool is_closed(const open_options& governed_options) {
  return governed_options.untrusted || !governed_options.confine.empty() || !governed_options.allow_local;
}
// The same for an output: it is closed when confined.
inline bool is_closed_output(const open_options& governed_options) {
  return !governed_options.confine.empty();
}

// What a local name is opened for: reading (it must exist), a probe (a shard looked for,
// which may not exist), or writing (it may not exist, and must not be a link).
enum class local_use { read, probe, write };

namespace detail {

// Refuses a name: 'name' and why (then a folder, quoted), as every refusal here says it.
[[noreturn]] TABLIO_COLD inline void refuse(const std::string& name, std::string_view why,
                                            std::string_view folder = {}) {
  throw access_error(printable(join({quoted_excerpt(name), why, folder, folder.empty() ? "" : "'"})));
}
[[noreturn]] inline void outside(const std::string& name, const std::string& folder) {
  refuse(name, " lies outside the confining folder '", folder);
}
[[noreturn]] inline void not_regular(const std::string& name) {
  refuse(name, " is not a regular file: untrusted or confined input opens regular files only");
}
[[noreturn]] inline void linked_output(const std::string& name) {
  refuse(name,
         " is a link to a file with another name (or no regular file): untrusted or confined output never "
         "writes through one");
}

// Refusals of names the governed options close; each says which option closes it. Remote
// names appear without their user or query (a presigned URL's signature).
TABLIO_IMPL void check_command_allowed(std::string_view name, const open_options& governed_options);
TABLIO_IMPL void check_standard_stream_allowed(std::string_view name, const open_options& governed_options);
[[noreturn]] inline void no_network(std::string_view name) {  // a URL from the input: quoted short
  throw access_error(
      printable(join({"network access is disabled; refusing ", quoted_excerpt(remote::redacted(name))})));
}

// The path to open for a local name: under closed options, the name resolved (no symbolic
// link left) after checking it lies inside each confining folder (the options', and for
// input the process's) and is a regular file where it exists; else the name itself. Cold, as
// open_local_file: only closed options come here, and every header-only translation unit that
// opens files compiles them (cold code is compiled for size, a tenth less of it).
TABLIO_RARELY_USED TABLIO_IMPL std::string checked_local_path(const std::string& name,
                                                              const open_options& governed_options,
                                                              local_use use = local_use::read);
// Opens a local file for `use` under the governed options (checked_local_path); under closed
// options, never a device, FIFO or folder, and never through a link swapped in between the
// check and the open.
// `rules` adds to those closed options take.
TABLIO_RARELY_USED TABLIO_IMPL os::native_file open_local_file(const std::string& name, os::file_use use,
                                                               const open_options& governed_options,
                                                               const char* action, os::open_rules rules = {});
// Refuses a file an output would write through to another: a symbolic link or a second name of
// a file (a link planted beside an upload for a file elsewhere), a device, a FIFO, a folder.
// A missing file passes.
TABLIO_IMPL void check_plain_output(const std::string& name);

}  // namespace detail

TABLIO_END_NAMESPACE

#if TABLIO_HEADER_IMPLEMENTATION
#include <tablio/core/mutex.hpp>
#include <tablio/stream/platform/paths.hpp>

#include <cerrno>
#include <cstdlib>

TABLIO_BEGIN_NAMESPACE

namespace detail {

struct policy_holder {
  mutex guard;
  process_policy policy;
  bool read = false;  // the environment read
};
inline policy_holder& the_policy() {
  static policy_holder holder;
  return holder;
}

using os::resolved_path;

inline bool lies_inside(std::string_view path, std::string_view folder) {
  if (folder.ends_with('/')) return path.starts_with(folder);  // a root: "/", "C:/"
  return path.starts_with(folder) && (path.size() == folder.size() || path[folder.size()] == '/');
}

// The folder part of a name ("." for none; a root keeps its separator).
inline std::string folder_of(const std::string& name) {
  const std::size_t slash = name.find_last_of(os::separators);
  if (slash == std::string::npos) return ".";
  const bool root = os::root_length(os::generic_name(name.substr(0, slash + 1))) == slash + 1;
  return name.substr(0, root ? slash + 1 : slash);
}

// A confining folder, resolved; it must exist.
inline std::string resolved_folder(const std::string& folder) {
  std::string f = resolved_path(folder);
  if (f.empty()) throw_io_error(folder, errno, {"cannot resolve the confining folder"});
  return f;
}

TABLIO_COLD inline process_policy policy_from_environment() {  // once a process
  process_policy p;
  if (const char* v = std::getenv("TABLIO_UNTRUSTED"); v && *v && std::string_view(v) != "0") {
    p.untrusted = true;
    p.allow_pipes = false;
    p.allow_network = std::string_view(v) == "network";
  }
  if (const char* v = std::getenv("TABLIO_CONFINE"); v && *v) {
    // Resolved once: a relative folder stays the one it named when the process changes folder.
    std::string resolved = resolved_path(v);
    p.confine = resolved.empty() ? std::string(v) : resolved;
  }
  return p;
}

// The folder a name that does not resolve would lie in, as far as it exists: its longest
// leading part that resolves, links followed as the system follows them ("up/root/.." is where
// the link root leads, then up), from the current folder for a relative name none of whose
// parts exists. Empty when the rest climbs ("..") from there, or passes a link to nothing: that
// is judged outside.
TABLIO_COLD inline std::string would_lie_in(const std::string& name) {
  std::size_t end = name.size();
  std::string lead;
  while (lead.empty() && end > 0 && (end = name.find_last_of(os::separators, end - 1)) != std::string::npos)
    lead = resolved_path(name.substr(0, end + (end == 0)));  // "/x": the root
  if (lead.empty()) lead = resolved_path(".");
  os::file_status st;
  for (std::size_t at = end == std::string::npos ? 0 : end + 1, stop = at; stop != std::string::npos;
       at = stop + 1) {
    stop = name.find_first_of(os::separators, at);
    if (name.compare(at, stop == std::string::npos ? std::string::npos : stop - at, "..") == 0 ||
        (os::status_of(name.substr(0, stop), false, st) && st.kind == os::file_kind::link))
      return {};  // climbs, or passes a link to nothing (wherever it points, found or not)
  }
  return lead;
}

// A name that cannot be resolved is refused as outside, as one that exists would be, when it
// would lie outside a confining folder, or passes a link to nothing (would_lie_in: whether a file
// out there exists is not the input's to learn); else it is missing.
[[noreturn]] TABLIO_COLD inline void missing(const std::string& name, int errnum,
                                             std::initializer_list<std::string> folders, const char* what) {
  const std::string where = would_lie_in(name);
  for (const std::string& folder : folders)
    if (!folder.empty() && (where.empty() || !lies_inside(where, resolved_folder(folder))))
      outside(name, folder);
  throw_io_error(name, errnum, {what});
}

}  // namespace detail

TABLIO_IMPL process_policy current_process_policy() {
  detail::policy_holder& h = detail::the_policy();
  detail::lock lock(h.guard);
  if (!h.read) {
    h.policy = detail::policy_from_environment();
    h.read = true;
  }
  return h.policy;
}

TABLIO_IMPL void set_process_policy(const process_policy& policy) {
  process_policy now = current_process_policy();
  if (!policy.confine.empty() && !now.confine.empty() &&
      !detail::lies_inside(detail::resolved_folder(policy.confine), detail::resolved_folder(now.confine)))
    throw_usage_error(
        {"the process is confined to '", now.confine, "'; '", policy.confine, "' is not inside it"});
  detail::policy_holder& h = detail::the_policy();
  detail::lock lock(h.guard);
  h.policy.untrusted = h.policy.untrusted || policy.untrusted;
  h.policy.allow_pipes = h.policy.allow_pipes && policy.allow_pipes && !policy.untrusted;
  h.policy.allow_network =
      h.policy.allow_network.value_or(true) && policy.allow_network.value_or(!policy.untrusted);
  h.policy.parse_limits = tightest(h.policy.parse_limits, policy.parse_limits);
  if (!policy.confine.empty()) h.policy.confine = detail::resolved_folder(policy.confine);
}

TABLIO_IMPL open_options governed(const open_options& options, bool for_output) {
  open_options o = options;
  process_policy p = current_process_policy();
  o.untrusted = o.untrusted || p.untrusted;
  o.parse_limits = tightest(o.parse_limits, p.parse_limits);
  if (o.untrusted) {
    o.allow_pipes = false;
    o.parse_limits = tightest(o.parse_limits, untrusted_limits);
  }
  if (!p.allow_pipes) o.allow_pipes = false;
  if (!p.allow_network.value_or(true)) o.allow_network = false;
  if (o.confine.empty() && !for_output) o.confine = p.confine;
  if (!o.confine.empty()) o.allow_pipes = false;
  return o;
}

namespace detail {

TABLIO_IMPL void check_command_allowed(std::string_view name, const open_options& o) {
  if (o.allow_pipes) return;
  std::string_view why = o.untrusted          ? "the input is untrusted"
                         : !o.confine.empty() ? "names are confined to a folder"
                                              : "pipes are disabled";
  throw access_error(printable(join({"commands are refused (", why, "): ", quoted_excerpt(name)})));
}

TABLIO_IMPL void check_standard_stream_allowed(std::string_view name, const open_options& o) {
  if (!is_closed(o)) return;
  throw access_error(join(
      {"standard input and output are refused for untrusted or confined input: ", quoted_excerpt(name)}));
}

TABLIO_IMPL std::string checked_local_path(const std::string& name, const open_options& o, local_use use) {
  const bool writing = use == local_use::write;
  if (!o.allow_local && !writing)
    throw access_error(printable(
        join({"a remote table's untrusted entries name no local file: refusing ", quoted_excerpt(name)})));
  if (writing ? !is_closed_output(o) : !is_closed(o)) return name;
  const std::string process_confine = writing ? std::string() : current_process_policy().confine;
  std::string path;
  if (use != local_use::read) {
    // The folder must exist and lie inside; the file itself may not exist yet.
    std::size_t slash = name.find_last_of(os::separators);
    std::string base = slash == std::string::npos ? name : name.substr(slash + 1);
    if (base.empty() || base == "." || base == "..") not_regular(name);
    std::string resolved = resolved_path(folder_of(name));
    if (resolved.empty()) missing(name, errno, {o.confine, process_confine}, "cannot resolve the folder of");
    path = resolved + (resolved.ends_with('/') ? "" : "/") + base;
  } else {
    path = resolved_path(name);
    if (path.empty()) missing(name, errno, {o.confine, process_confine}, "cannot open for reading");
  }
  if (!o.confine.empty() && !lies_inside(path, resolved_folder(o.confine))) outside(name, o.confine);
  if (!process_confine.empty() && process_confine != o.confine &&
      !lies_inside(path, resolved_folder(process_confine)))
    outside(name, process_confine);
  if (writing) {
    check_plain_output(path);
    return path;
  }
  os::file_status st;
  if (os::status_of(path, false, st) ? st.kind != os::file_kind::regular
                                     : use == local_use::read || errno != ENOENT)
    not_regular(name);
  return path;
}

TABLIO_IMPL void check_plain_output(const std::string& name) {
  os::file_status st;
  if (os::status_of(name, false, st) ? st.kind != os::file_kind::regular || st.links > 1 : errno != ENOENT)
    linked_output(name);
}

TABLIO_IMPL os::native_file open_local_file(const std::string& name, os::file_use use, const open_options& o,
                                            const char* action, os::open_rules rules) {
  const bool writing = use != os::file_use::read;
  std::string path = checked_local_path(name, o, writing ? local_use::write : local_use::read);
  bool closed = writing ? is_closed_output(o) : is_closed(o);
  // Closed: the checked path has no link left, and a FIFO swapped in must not block the open.
  // An untrusted output's name is the caller's, but its last part may have been planted in an
  // upload's folder (a link to a file elsewhere, where the index beside shards goes): never
  // followed either.
  const bool guarded = closed || o.untrusted;
  // Nor through a hard link: checked on the open file before it is emptied.
  const bool plain_output = writing && guarded;
  const bool truncate = plain_output && use == os::file_use::write;
  rules.no_links = rules.no_links || guarded;
  rules.no_blocking = rules.no_blocking || guarded;
  rules.keep_bytes = rules.keep_bytes || truncate;
  os::native_file fd = os::open_file(path, use, rules);
  if (fd == os::no_file() && errno == ELOOP && guarded)
    refuse(name, " is a symbolic link, which untrusted or confined input never follows");
  if (fd == os::no_file()) throw_io_error(name, errno, {action});
  if (closed || plain_output) {
    os::file_status st;
    bool regular = os::status_of(fd, st) && st.kind == os::file_kind::regular;
    bool linked = regular && plain_output && st.links > 1;  // a device is an output the caller named
    if ((closed && !regular) || linked) {
      os::close_quietly(fd);
      if (linked) linked_output(name);
      not_regular(name);
    }
    if (truncate && regular && !os::truncate_file(fd)) {  // a device has nothing to truncate
      int e = errno;
      os::close_quietly(fd);
      throw_io_error(name, e, {action});
    }
  }
  return fd;
}

}  // namespace detail

TABLIO_END_NAMESPACE

#endif  // TABLIO_HEADER_IMPLEMENTATION
