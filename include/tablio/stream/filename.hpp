// Kaldi's extended filenames. An rxfilename names an input: "-" (stdin), "cmd |" (a pipe),
// "f.ark:1234" (a file at an offset) or a file. A wxfilename names an output: "-" (stdout),
// "| cmd" (a pipe) or a file. Both may also name a remote object, "http://...", "https://..."
// or "s3://bucket/key" (an input at an offset too: "s3://bucket/f.ark:1234"), which the
// tablio::curl component opens (stream/remote.hpp). open_input()/open_output() classify and
// open them; pipes and remote objects can be refused for names that come from untrusted input.
#pragma once

#include <tablio/core/config.hpp>
#include <tablio/stream/file.hpp>
#include <tablio/stream/open_options.hpp>
#include <tablio/stream/pipe.hpp>
#include <tablio/stream/policy.hpp>
#include <tablio/stream/reader.hpp>
#include <tablio/stream/remote/url.hpp>
#include <tablio/stream/specifier.hpp>
#include <tablio/stream/writer.hpp>
#if defined(TABLIO_WITH_CURL)
#include <tablio/stream/remote.hpp>
#endif

#include <cctype>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

// What an rxfilename names (classify_rxfilename): none for a name that is not one.
enum class input_kind { none, file, standard_input, pipe, offset_file, remote };
// What a wxfilename names (classify_wxfilename): none for a name that is not one.
enum class output_kind { none, file, standard_output, pipe, remote };

// An http://, https:// or s3:// name.
inline bool is_remote_name(std::string_view name) noexcept {
  return name.starts_with("http://") || name.starts_with("https://") || name.starts_with("s3://");
}

namespace detail {

inline bool is_space_char(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
inline bool is_digit_char(char c) { return c >= '0' && c <= '9'; }

// Looks like "ark:..." or "scp,t:...": Kaldi refuses such names as filenames.
inline bool looks_like_specifier(std::string_view name) {
  return (name[0] == 'a' || name[0] == 's') && name.find(':') != std::string_view::npos &&
         is_kaldi_specifier(name);
}

// Position of the ':' in a name ending in ":<digits>", or npos. In a remote name it follows
// the path ("http://host:8080/f.ark:1234"), never the host's port.
inline std::size_t offset_colon(std::string_view name) {
  std::size_t i = name.size();
  if (i == 0 || !is_digit_char(name[i - 1])) return std::string_view::npos;
  while (i > 1 && is_digit_char(name[i - 1])) --i;
  if (name[i - 1] != ':') return std::string_view::npos;
  if (is_remote_name(name)) {
    std::size_t path = name.find('/', name.find("://") + 3);
    if (path == std::string_view::npos || path > i - 1) return std::string_view::npos;
  }
  return i - 1;
}

}  // namespace detail

// What an rxfilename names, as Kaldi's ClassifyRxfilename says, with `remote` for a remote
// object: none for a name Kaldi refuses (a leading '|', surrounding whitespace, an
// rspecifier-like "ark:x", a '|' inside, a NUL byte).
inline input_kind classify_rxfilename(std::string_view name) {
  if (name.empty() || name == "-") return input_kind::standard_input;
  if (name.find('\0') != std::string_view::npos) return input_kind::none;  // the system would cut it there
  if (name.front() == '|') return input_kind::none;
  if (name.back() == '|') return input_kind::pipe;
  if (is_remote_name(name)) return input_kind::remote;
  if (detail::is_space_char(name.front()) || detail::is_space_char(name.back())) return input_kind::none;
  if (detail::looks_like_specifier(name)) return input_kind::none;
  if (detail::offset_colon(name) != std::string_view::npos) return input_kind::offset_file;
  if (name.find('|') != std::string_view::npos) return input_kind::none;
  return input_kind::file;
}

// What a wxfilename names, as Kaldi's ClassifyWxfilename says, with `remote` for a remote
// object: none for a name Kaldi refuses (a trailing '|', surrounding whitespace, a
// wspecifier-like "ark:x", a "file:offset" name, a NUL byte).
inline output_kind classify_wxfilename(std::string_view name) {
  if (name.empty() || name == "-") return output_kind::standard_output;
  if (name.find('\0') != std::string_view::npos) return output_kind::none;
  if (name.front() == '|') return output_kind::pipe;
  if (detail::is_space_char(name.front()) || detail::is_space_char(name.back()) || name.back() == '|')
    return output_kind::none;
  if (is_remote_name(name)) return output_kind::remote;
  if (detail::looks_like_specifier(name)) return output_kind::none;
  if (detail::offset_colon(name) != std::string_view::npos) return output_kind::none;
  if (name.find('|') != std::string_view::npos) return output_kind::none;
  return output_kind::file;
}

// A file name and byte offset parsed from "file:offset" (or a remote name's "url:offset").
struct offset_filename {
  std::string file;
  std::uint64_t offset = 0;
};

// "file:offset" split, or nullopt when the offset is no number below 2^63.
inline std::optional<offset_filename> parse_offset_filename(std::string_view name) {
  std::size_t colon = detail::offset_colon(name);
  if (colon == std::string_view::npos) return std::nullopt;
  std::string digits(name.substr(colon + 1));
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(digits.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0' || v > std::numeric_limits<std::int64_t>::max()) return std::nullopt;
  return offset_filename{std::string(name.substr(0, colon)), v};
}

// parse_offset_filename, throwing usage_error for a name with no ":offset" or an invalid one.
inline offset_filename split_offset_filename(std::string_view name) {
  if (detail::offset_colon(name) == std::string_view::npos)
    throw_usage_error({"not a file:offset name: '", name, "'"});
  std::optional<offset_filename> f = parse_offset_filename(name);
  if (!f) throw_usage_error({"invalid offset in '", name, "'"});
  return std::move(*f);
}

// Whether an input can be opened at any offset: a file or a remote object (without an offset
// of its own).
inline bool can_open_at(std::string_view name) {
  input_kind k = classify_rxfilename(name);
  return k == input_kind::file ||
         (k == input_kind::remote && detail::offset_colon(name) == std::string_view::npos);
}

// Opens an rxfilename for reading. These three obey the options and the process's policy
// (stream/policy.hpp): what they close is an access_error.
TABLIO_IMPL reader open_input(std::string_view name, const open_options& options = {});
// Opens a file or a remote object (can_open_at) for reading from byte `offset`, for random
// access (reads at places a table knows: a remote object fetches ranges).
TABLIO_IMPL reader open_input_at(std::string_view name, std::uint64_t offset,
                                 const open_options& options = {});
// Opens a wxfilename for writing.
TABLIO_IMPL writer open_output(std::string_view name, const open_options& options = {});

namespace detail {
#if !defined(TABLIO_WITH_CURL)
[[noreturn]] inline void needs_curl(std::string_view name) {
  throw_usage_error({"'", remote::redacted(name),
                     "' is a remote object: link the tablio::curl CMake target (libcurl) to open http://, "
                     "https:// and s3:// names"});
}
#endif
inline reader open_remote(std::string_view name, std::uint64_t offset, access_pattern access,
                          const open_options& options) {
  if (!options.allow_network) no_network(name);
#if defined(TABLIO_WITH_CURL)
  return open_remote_input(name, offset, access, options);
#else
  (void)offset, (void)access;
  needs_curl(name);
#endif
}
}  // namespace detail

#if TABLIO_HEADER_IMPLEMENTATION
namespace detail {
// A local file opened for reading under governed options, from byte `offset`.
inline reader open_local_input(const std::string& name, std::uint64_t offset, const open_options& o) {
  if (!is_closed(o)) return reader(file_source(name, offset), name, o.parse_limits);
  return reader(
      file_source(file_descriptor(open_local_file(name, os::file_use::read, o, "cannot open for reading"),
                                  name, true),
                  offset),
      name, o.parse_limits);
}
}  // namespace detail

TABLIO_IMPL reader open_input_at(std::string_view name, std::uint64_t offset, const open_options& options) {
  std::string n(name);
  if (!can_open_at(name))
    throw_usage_error({"'", n, "' cannot be opened at an offset: it is not a file or a remote object"});
  open_options o = governed(options);
  reader in = classify_rxfilename(name) == input_kind::file
                  ? detail::open_local_input(n, offset, o)
                  : detail::open_remote(name, offset, access_pattern::random, o);
  in.seek(offset);  // refills start small, as after any seek: lookups read little
  return in;
}

TABLIO_IMPL reader open_input(std::string_view name, const open_options& options) {
  std::string n(name);
  open_options o = governed(options);
  switch (classify_rxfilename(name)) {
    case input_kind::standard_input:
      detail::check_standard_stream_allowed(n, o);
      return reader(stdin_source(), "<stdin>", o.parse_limits);
    case input_kind::file:
      return detail::open_local_input(n, 0, o);
    case input_kind::offset_file: {
      offset_filename f = split_offset_filename(name);
      return detail::open_local_input(f.file, f.offset, o);
    }
    case input_kind::pipe: {
      detail::check_command_allowed(n, o);
      std::string command = n.substr(0, n.find_last_not_of(" \t", n.size() - 2) + 1);
      return reader(pipe_source(command), n, o.parse_limits);
    }
    case input_kind::remote: {
      if (detail::offset_colon(name) == std::string_view::npos)
        return detail::open_remote(name, 0, access_pattern::sequential, o);
      offset_filename f = split_offset_filename(name);
      return detail::open_remote(f.file, f.offset, access_pattern::sequential, o);
    }
    case input_kind::none:
      break;
  }
  throw_usage_error({"invalid rxfilename '", n, "'"});
}

TABLIO_IMPL writer open_output(std::string_view name, const open_options& options) {
  std::string n(name);
  open_options o = governed(options, true);
  switch (classify_wxfilename(name)) {
    case output_kind::standard_output:
      if (is_closed_output(o)) detail::check_standard_stream_allowed(n, o);
      return writer(stdout_sink(), "<stdout>");
    case output_kind::file:
      if (!is_closed_output(o) && !o.untrusted) return writer(file_sink(n), n);
      return writer(file_sink(detail::file_descriptor(
                        detail::open_local_file(n, detail::os::file_use::write, o, "cannot open for writing"),
                        n, true)),
                    n);
    case output_kind::pipe: {
      detail::check_command_allowed(n, o);
      return writer(pipe_sink(n.substr(1)), n);
    }
    case output_kind::remote:
      if (!o.allow_network) detail::no_network(name);
#if defined(TABLIO_WITH_CURL)
      return open_remote_output(name, o);
#else
      detail::needs_curl(name);
#endif
    case output_kind::none:
      break;
  }
  throw_usage_error({"invalid wxfilename '", n, "'"});
}
#endif  // TABLIO_HEADER_IMPLEMENTATION

TABLIO_END_NAMESPACE
