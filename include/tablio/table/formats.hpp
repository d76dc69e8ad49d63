// The formats specifiers name: the built-in ones, one entry each below, and those a program
// registers with register_format(). An entry says what the format takes in a specifier and
// opens its framing from the parsed specifier.
#pragma once

#include <tablio/core/config.hpp>
#include <tablio/table/erased_framing.hpp>
#include <tablio/table/specifier.hpp>

#include <optional>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

// Makes a format of the program's own nameable in specifiers ("NAME:..."), for every table
// class and thread. Its name is new, and neither one of Kaldi's options nor one of tablio's.
TABLIO_IMPL void register_format(const table_format& format);

// The framing a parsed specifier names, opened. Under the untrusted policy (or options) with no
// confining folder, a table read is confined to its own folder (that of its file, its files'
// pattern or its script), and so are the files a script written to lists; a specifier may not
// name a cache there.
TABLIO_IMPL owned<any_output_base> open_table_output(const wspecifier& w, const open_options& options = {});
// The table a parsed rspecifier names, opened for reading with table_input_options (segments=
// cuts its recordings' table); usage_error for a format neither built in nor registered.
TABLIO_IMPL owned<any_input_base> open_table_input(const rspecifier& r, const open_options& options = {});

// The options what a table named `name` lists is opened with: governed (stream/policy.hpp), and
// under untrusted ones confined to the folder of `name` (of a list's first name; to `name`
// itself when it is a folder, as an LMDB database is) unless they name a folder; a remote table's entries, an
// index's shards, reach no local file at all.
TABLIO_IMPL open_options table_open_options(const open_options& options, std::string_view name);

// The options a table read with `r` opens its files with: table_open_options, and the cache the
// specifier names (refused under the untrusted policy).
TABLIO_IMPL open_options table_input_options(const rspecifier& r, const open_options& options);

namespace detail {
// What opens a table of recordings cut by a segments file (segments=FILE): set by
// <tablio/table/segments.hpp>, which a program that reads segments includes, so that others
// compile none of it.
using segments_opener = owned<any_input_base> (*)(const rspecifier&, owned<any_input_base> recordings,
                                                  const open_options&);
inline segments_opener open_segments = nullptr;
}  // namespace detail

TABLIO_END_NAMESPACE

#if TABLIO_HEADER_IMPLEMENTATION
#include <tablio/core/mutex.hpp>
#include <tablio/framing/ark.hpp>
#include <tablio/framing/idx.hpp>
#include <tablio/framing/lmdb_reader.hpp>
#include <tablio/framing/scp.hpp>
#include <tablio/framing/tar.hpp>
#include <tablio/framing/tfrecord.hpp>
#if defined(TABLIO_WITH_LMDB)
#include <tablio/framing/lmdb.hpp>
#endif
#include <tablio/stream/platform/file_io.hpp>
#include <tablio/stream/platform/paths.hpp>
#include <tablio/stream/shard_index.hpp>
#include <tablio/stream/shards.hpp>

#include <algorithm>

TABLIO_BEGIN_NAMESPACE

namespace detail {

// Whether a path names a symbolic link.
inline bool is_link(const std::string& path) {
  os::file_status st;
  return os::status_of(path, false, st) && st.kind == os::file_kind::link;
}

// The folder a table named `name` is confined to under the untrusted policy: its name's folder
// (the name itself when it is a folder, as an LMDB database is), short of any component that is a
// symbolic link (for an absolute name, of the last ones that are: the system's own links sit
// above), so that a link planted in an upload does not carry the folder elsewhere.
inline std::string implied_folder(std::string_view name) {
  std::string path = os::generic_name(std::string(name));
  os::file_status st;
  std::string folder =
      os::status_of(path, false, st) && st.kind == os::file_kind::directory ? path : shard_index_folder(path);
  const std::size_t root = os::root_length(folder);
  while (folder.size() > std::max<std::size_t>(root, 1) && folder.back() == '/') folder.pop_back();
  auto parent = [root](const std::string& f) {
    std::size_t slash = f.rfind('/');
    return slash == std::string::npos ? std::string() : slash < root ? f.substr(0, root) : f.substr(0, slash);
  };
  if (root == 0) {
    for (std::size_t end = folder.find('/');; end = folder.find('/', end + 1)) {
      std::string prefix = folder.substr(0, end);
      if (is_link(prefix)) {
        folder = parent(prefix);
        break;
      }
      if (end == std::string::npos) break;
    }
  } else {
    while (folder.size() > 1 && is_link(folder)) folder = parent(folder);
  }
  return folder.empty() ? "." : folder;
}

template <class F, class... Args>
owned<any_output_base> erased_output_of(Args&&... args) {
  return make_owned<erased_output<F>>(std::forward<Args>(args)...);
}
template <class F, class... Args>
owned<any_input_base> erased_input_of(Args&&... args) {
  return make_owned<erased_input<F>>(std::forward<Args>(args)...);
}

inline owned<any_output_base> open_ark_output(const wspecifier& w, const open_options& o) {
  return erased_output_of<archive_writer>(w.archive, archive_options{w.binary, w.flush}, o);
}
inline owned<any_input_base> open_ark_input(const rspecifier& r, const open_options& o) {
  return erased_input_of<archive_reader>(r.filename, o);
}

inline owned<any_output_base> open_scp_output(const wspecifier& w, const open_options& o) {
  return erased_output_of<script_targets_output>(w.script, script_output_options{w.binary, w.permissive}, o);
}
inline owned<any_input_base> open_scp_input(const rspecifier& r, const open_options& o) {
  return erased_input_of<script_input>(r.filename, script_input_options{r.records.key_feature, r.sorted}, o);
}

inline owned<any_output_base> open_tfrecord_table_output(const wspecifier& w, const open_options& o) {
  std::optional<compression> c;
  if (w.compression != output_compression::by_suffix)
    c = w.compression == output_compression::gzip   ? compression::gzip
        : w.compression == output_compression::zlib ? compression::zlib
                                                    : compression::none;
  if (!w.script.empty() && c.value_or(compression_for_suffix(w.archive)) != compression::none)
    throw_usage_error({"'", w.archive, "': a script cannot point into a compressed TFRecord file"});
  return erased_output_of<tfrecord_output>(w.archive,
                                           tfrecord_output_options{w.records.key_feature, c, w.flush}, o);
}
inline owned<any_input_base> open_tfrecord_table_input(const rspecifier& r, const open_options& o) {
  return erased_input_of<tfrecord_input>(
      r.filename, tfrecord_input_options{r.records.key_feature, r.shard_index, r.shard_count, r.unended}, o);
}

#if defined(TABLIO_WITH_LMDB)
inline owned<any_output_base> open_lmdb_output(const wspecifier& w, const open_options& options) {
  if (is_remote_name(w.archive))
    throw_usage_error(
        {"'", w.archive, "': an LMDB database is a local folder; write it there, then copy it"});
  if (open_options o = governed(options, true); o.untrusted || is_closed_output(o))
    check_lmdb_output(w.archive, o);
  return erased_output_of<lmdb_output>(w.archive);
}
#else
inline owned<any_output_base> open_lmdb_output(const wspecifier& w, const open_options&) {
  throw_usage_error(
      {"'", w.archive, "': writing an LMDB database needs liblmdb: link the tablio::lmdb CMake target"});
}
#endif
// Reading needs no liblmdb: tablio reads the file itself. With liblmdb, a database that may be
// written meanwhile is read in a snapshot held in its lock table.
inline owned<any_input_base> open_lmdb_input(const rspecifier& r, const open_options& o) {
  lmdb_read_options read{.shard_index = r.shard_index, .shard_count = r.shard_count};
#if defined(TABLIO_WITH_LMDB)
  if (!is_remote_name(r.filename))
    return erased_input_of<lmdb_input>(open_lmdb_reader(r.filename, {}, read, o));
#else
  if (!is_remote_name(r.filename)) return erased_input_of<lmdb_input>(r.filename, read, lmdb_options{}, o);
#endif
#if defined(TABLIO_WITH_CURL)
  // A remote database (FOLDER/data.mdb) is read from its copy in the cache, as one file.
  if (!o.allow_network) no_network(r.filename);
  std::string url = r.filename;
  while (!url.empty() && url.back() == '/') url.pop_back();
  open_options cached = o;  // the copy lies in the cache, the service's own folder
  cached.confine.clear();
  return erased_input_of<lmdb_input>(cached_remote_copy(url + "/data.mdb", o), read,
                                     lmdb_options{.no_subdir = true}, cached);
#else
  needs_curl(r.filename);
#endif
}

inline owned<any_output_base> open_idx_output(const wspecifier& w, const open_options& o) {
  return erased_output_of<idx_output>(w.archive, o);
}
inline owned<any_input_base> open_idx_input(const rspecifier& r, const open_options& o) {
  // Under p, a file a killed writer left is read up to its last whole item.
  return erased_input_of<idx_input>(r.filename, idx_input_options{r.shard_index, r.shard_count, r.permissive},
                                    o);
}

inline owned<any_output_base> open_tar_output(const wspecifier& w, const open_options& o) {
  return erased_output_of<tar_output>(w.archive, tar_output_options{w.extension, w.max_count, w.max_size}, o);
}
inline owned<any_input_base> open_tar_input(const rspecifier& r, const open_options& o) {
  return erased_input_of<tar_input>(
      r.filename, tar_input_options{r.extension, r.shard_index, r.shard_count, r.unsafe_keys, r.unended}, o);
}

namespace fo = format_option;
inline constexpr table_format builtin_formats[] = {
    {"ark", fo::script, 0, open_ark_output, open_ark_input},
    {"scp", 0, fo::key, open_scp_output, open_scp_input},
    {"tfrecord", fo::key | fo::compression | fo::script,
     fo::key | fo::shard | fo::files | fo::numbered_keys | fo::unended, open_tfrecord_table_output,
     open_tfrecord_table_input},
    {"lmdb", 0, fo::shard, open_lmdb_output, open_lmdb_input},
    {"idx", 0, fo::shard | fo::numbered_keys, open_idx_output, open_idx_input},
    {"tar", fo::extension | fo::split | fo::script,
     fo::extension | fo::shard | fo::files | fo::unsafe_keys | fo::unended, open_tar_output, open_tar_input},
};

// Formats a program registered: a list that only grows, so that names stay where they are.
struct registered_format {
  table_format format;
  std::string name;
  const registered_format* next;
};
struct format_registry {
  mutex guard;
  const registered_format* first = nullptr;
};
inline format_registry& registered_formats() {
  static format_registry registry;
  return registry;
}

}  // namespace detail

TABLIO_IMPL std::optional<table_format> find_format(std::string_view name) {
  for (const table_format& f : detail::builtin_formats)
    if (f.name == name) return f;
  detail::format_registry& registry = detail::registered_formats();
  detail::lock lock(registry.guard);
  for (const detail::registered_format* r = registry.first; r; r = r->next)
    if (r->format.name == name) return r->format;
  return std::nullopt;
}

TABLIO_IMPL void register_format(const table_format& format) {
  static constexpr std::string_view reserved[] = {"b",  "t",  "f",   "nf", "p",  "o",    "no",   "s",
                                                  "ns", "cs", "ncs", "np", "bg", "gzip", "zlib", "nz"};
  bool plain = !format.name.empty() && format.name.find_first_of("=, :") == std::string_view::npos;
  for (std::string_view r : reserved) plain = plain && format.name != r;
  if (!plain || (!format.open_output && !format.open_input))
    throw_usage_error({"cannot register a format named '", format.name,
                       "': it needs a name that is no option, and a way to open it"});
  if (find_format(format.name))
    throw_usage_error({"a format named '", format.name, "' is registered already"});
  detail::format_registry& registry = detail::registered_formats();
  detail::lock lock(registry.guard);
  auto* r = new detail::registered_format{format, std::string(format.name), registry.first};
  r->format.name = r->name;
  registry.first = r;
}

TABLIO_IMPL open_options table_open_options(const open_options& options, std::string_view name) {
  open_options o = governed(options);  // as for reading: the process's folder applies
  if (!o.untrusted) return o;
  std::string_view first = name.substr(0, detail::list_item_end(name));
  if (is_remote_name(first)) {
    o.allow_local = false;
  } else if (o.confine.empty()) {
    o.confine = detail::implied_folder(first);
  }
  return o;
}

TABLIO_IMPL owned<any_output_base> open_table_output(const wspecifier& w, const open_options& options) {
  std::optional<table_format> format = find_format(w.format);
  if (!format || !format->open_output) throw_usage_error({"no writable format '", w.format, "'"});
  // The files a script lists come from it: confined like a table read.
  const open_options& open = w.format == "scp" ? table_open_options(options, w.script) : options;
  if (!w.archive.empty() && !w.script.empty()) {
    const output_kind kind = classify_wxfilename(w.archive);
    if (kind == output_kind::standard_output || kind == output_kind::pipe)  // Kaldi warns, and writes
      throw_usage_error({"'", w.archive, "': a script beside a table names offsets in its file, which ",
                         kind == output_kind::pipe ? "a command's input" : "standard output",
                         " has not; write the table to a file (ark,scp:feats.ark,feats.scp)"});
  }
  owned<any_output_base> framing = format->open_output(w, open);
  if (w.archive.empty() || w.script.empty()) return framing;  // no script beside it
  if (std::string_view why = framing->script_refusal(); !why.empty())
    throw_usage_error({"'", w.archive, "': ", why});
  return detail::erased_output_of<scripted_output<any_output>>(any_output(std::move(framing)),
                                                               open_output(w.script, options), w.flush);
}
TABLIO_IMPL owned<any_input_base> open_table_input(const rspecifier& r, const open_options& options) {
  if (!r.segments.empty()) {  // the recordings, cut by the segments file
    if (!detail::open_segments)
      throw_usage_error({"segments=", r.segments, ": include <tablio/table/segments.hpp> in the program"});
    rspecifier recordings = r;
    recordings.segments.clear();
    return detail::open_segments(r, open_table_input(recordings, options), options);
  }
  std::optional<table_format> format = find_format(r.format);
  if (!format || !format->open_input) throw_usage_error({"no readable format '", r.format, "'"});
  return format->open_input(r, table_input_options(r, options));
}

TABLIO_IMPL open_options table_input_options(const rspecifier& r, const open_options& options) {
  open_options open = table_open_options(options, r.filename);
  if (r.remote.cache.empty() && r.remote.cache_limit == 0) return open;
  if (open.untrusted)
    throw access_error("a specifier cannot name a cache (cache=, cache_limit=) for untrusted input");
  // cache=DIR, cache_limit=BYTES: for every format's files
  if (!r.remote.cache.empty()) open.remote.cache = r.remote.cache;
  if (r.remote.cache_limit != 0) open.remote.cache_limit = r.remote.cache_limit;
  return open;
}

TABLIO_END_NAMESPACE

#endif  // TABLIO_HEADER_IMPLEMENTATION
