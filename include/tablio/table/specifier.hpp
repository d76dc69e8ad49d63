// The grammar of table specifiers: Kaldi's wspecifiers ("ark,scp,t:a.ark,a.scp") and
// rspecifiers ("ark,s,cs:-"), exactly as Kaldi accepts and rejects them, over every format
// the table layer knows (table/formats.hpp: ark, scp, tfrecord, lmdb, idx, tar, and formats a
// program registers). Besides Kaldi's options, a format may take:
//
//   key=NAME            records keep their keys in the Example's bytes feature NAME
//   shard=I/N           (reading) entries I, I+N, I+2N... of the whole table
//   gzip, zlib, nz      (writing) compress, or not (by default, as the name's suffix says)
//   ext=EXT             member files KEY.EXT (tar)
//   unsafekeys          (reading) keys with a leading '/' or ".." too: the caller checks them (tar)
//   unended             (reading) files may end without the end blocks their writer left out (tar),
//                       or inside a record's header, read as the end, as TensorFlow does (tfrecord)
//   segments=FILE       (reading, any format) the utterances a Kaldi segments file cuts from the
//                       table's recordings (table/segments.hpp), with extract-segments' options
//   max_overshoot=S, min_segment_length=S   in seconds
//   cache=DIR           (reading, any format) remote objects are fetched whole into DIR, once
//   cache_limit=BYTES   (reading, any format) the cache's size, past which old copies go
//   maxcount=N, maxsize=BYTES   (writing) a new shard file after N entries or BYTES bytes
//   FORMAT,scp:A,S      (writing) also a script S with a "key A:offset" line per entry
//   threads=N           (any format) entries decoded ahead of the reader, or encoded behind the
//                       writer, by N threads, in table order (docs/threads.md)
//
// "scp" alone names a script: read the objects it points at, or write each object to the file
// it lists for its key.
#pragma once

#include <tablio/core/config.hpp>
#include <tablio/core/error.hpp>
#include <tablio/core/parse_float.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/stream/specifier.hpp>
#include <tablio/table/erased_framing.hpp>

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

// Kaldi's classification, extended with TFRecord, LMDB and IDX; other formats are `other`.
enum class wspecifier_kind {
  archive,
  script,
  archive_and_script,
  tfrecord,
  tfrecord_and_script,
  lmdb,
  idx,
  other,
  other_and_script
};
// Kaldi's classification of rspecifiers, extended as wspecifier_kind is.
enum class rspecifier_kind { archive, script, tfrecord, lmdb, idx, other };

// How a written table is compressed: as its name's suffix says (.gz), not at all, or as asked.
enum class output_compression { by_suffix, none, gzip, zlib };

// Options of record tables (TFRecord, scripts of records).
struct record_table_options {
  std::string key_feature;  // key=NAME: the bytes feature holding each record's key
  // Whether both name the same key feature.
  bool operator==(const record_table_options&) const = default;
};

// A parsed wspecifier: the format, the file or files it writes and the options it takes
// (parse_wspecifier, require_wspecifier).
struct wspecifier {
  wspecifier_kind kind{};
  std::string format;       // "ark", "tfrecord", "tar"...; "scp" writes to the files a script lists
  std::string archive;      // wxfilename of the table (empty for "scp:")
  std::string script;       // wxfilename of the script beside it, or rxfilename of "scp:"'s script
  bool binary = true;       // b (default) / t
  bool flush = false;       // f / nf (default)
  bool permissive = false;  // p
  record_table_options records;
  output_compression compression = output_compression::by_suffix;  // gzip / zlib / nz
  std::string extension;                                           // ext=EXT
  std::uint64_t max_count = 0, max_size = 0;                       // maxcount=, maxsize=
  unsigned threads = 0;                                            // threads=N (0: open_options')

  // Whether it writes a TFRecord file, which holds values that are not Examples in their
  // Example form (holder/example_form.hpp).
  bool writes_tfrecord() const {
    return kind == wspecifier_kind::tfrecord || kind == wspecifier_kind::tfrecord_and_script;
  }
};

// How a segments file cuts recordings (table/segments.hpp): extract-segments' options.
struct segment_options {
  float max_overshoot = 0.5f;       // seconds a segment may end past its recording, and is cut there
  float min_segment_length = 0.1f;  // seconds a segment must be longer than
  // Whether both cut alike.
  bool operator==(const segment_options&) const = default;
};

// A parsed rspecifier: the format, the file it reads and the options it takes
// (parse_rspecifier, require_rspecifier).
struct rspecifier {
  rspecifier_kind kind{};
  std::string format;          // "ark", "scp", "tfrecord"...
  std::string filename;        // rxfilename of the table (or script)
  bool once = false;           // o / no
  bool sorted = false;         // s / ns
  bool called_sorted = false;  // cs / ncs
  bool permissive = false;     // p / np
  bool background = false;     // bg
  record_table_options records;
  std::uint64_t shard_index = 0, shard_count = 1;  // shard=I/N
  std::string extension;                           // ext=EXT
  bool unsafe_keys = false;                        // unsafekeys
  bool unended = false;                            // unended
  remote_options remote;                           // cache=DIR, cache_limit=BYTES
  std::string segments;                            // segments=FILE
  segment_options segmenting;
  unsigned threads = 0;  // threads=N (0: open_options')
};

// What a format takes in a specifier besides Kaldi's options (bits of table_format's masks).
// files (reading): its filename may name several files, each a table of its own ("a,b",
// globs, name@16, numbered names), which table_files() lists. numbered_keys (reading): its
// keys are the records' numbers, counted across its files, unless key=NAME names a feature
// that holds them.
namespace format_option {
inline constexpr unsigned key = 1;              // key=NAME
inline constexpr unsigned shard = 2;            // shard=K/N
inline constexpr unsigned compression = 4;      // gzip, zlib, nz
inline constexpr unsigned extension = 8;        // ext=EXT
inline constexpr unsigned split = 16;           // maxcount=N, maxsize=BYTES
inline constexpr unsigned script = 32;          // FORMAT,scp: beside the table
inline constexpr unsigned files = 64;           // several files, each a table
inline constexpr unsigned unsafe_keys = 128;    // unsafekeys
inline constexpr unsigned numbered_keys = 256;  // keys are the records' numbers
inline constexpr unsigned unended = 512;        // unended
}  // namespace format_option

// A format specifiers can name: what it takes, and how it opens. A format that cannot be
// written (or read) has no open_output (or open_input).
struct table_format {
  std::string_view name;
  unsigned write_options = 0;
  unsigned read_options = 0;
  owned<any_output_base> (*open_output)(const wspecifier&, const open_options&) = nullptr;
  owned<any_input_base> (*open_input)(const rspecifier&, const open_options&) = nullptr;
};

// The format called `name`: built in, or registered (table/formats.hpp).
TABLIO_IMPL std::optional<table_format> find_format(std::string_view name);

// Parses a wspecifier; nullopt when it is none (for ark and scp: when Kaldi would classify it
// as kNoWspecifier).
TABLIO_IMPL std::optional<wspecifier> parse_wspecifier(std::string_view spec);
// Parses an rspecifier; nullopt when it is none (for ark and scp: when Kaldi would classify it
// as kNoRspecifier).
TABLIO_IMPL std::optional<rspecifier> parse_rspecifier(std::string_view spec);
// The same, throwing usage_error for a specifier that is none.
TABLIO_IMPL wspecifier require_wspecifier(std::string_view spec);
// The same for an rspecifier: usage_error, which says why, for a specifier that is none.
TABLIO_IMPL rspecifier require_rspecifier(std::string_view spec);

// The specifier with "key=NAME" among its options: "tfrecord:a" -> "tfrecord,key=NAME:a".
inline std::string with_key_option(std::string_view spec, std::string_view name) {
  std::size_t colon = spec.find(':');
  return std::string(spec.substr(0, colon)) + ",key=" + std::string(name) + std::string(spec.substr(colon));
}

#if TABLIO_HEADER_IMPLEMENTATION

namespace detail {

// Parses "NAME=VALUE" into value; false if o is not that option or VALUE is empty.
inline bool parse_named_option(std::string_view o, std::string_view name, std::string& value) {
  if (o.size() <= name.size() + 1 || !o.starts_with(name) || o[name.size()] != '=') return false;
  value = o.substr(name.size() + 1);
  return true;
}
inline bool parse_number_option(std::string_view o, std::string_view name, std::uint64_t& value) {
  std::string digits;
  return parse_named_option(o, name, digits) && parse_number(digits, value) && value > 0;
}

// Parses "NAME=SECONDS", a number at least 0; false otherwise.
inline bool parse_seconds_option(std::string_view o, std::string_view name, float& value) {
  std::string text;
  if (!parse_named_option(o, name, text)) return false;
  float v;
  auto [end, ec] = parse_float(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !(v >= 0 && v < 1e9f)) return false;
  value = v;
  return true;
}

// Threads a table may be given (threads=N): more would only hold memory.
inline constexpr std::uint64_t max_table_threads = 256;

// Parses "threads=N", 1 to max_table_threads, into threads (0 until given); false otherwise,
// and for a second threads= of another number, which would leave unsaid which one holds.
inline bool parse_threads_option(std::string_view o, unsigned& threads) {
  std::uint64_t n = 0;
  if (!parse_number_option(o, "threads", n) || n > max_table_threads || (threads != 0 && threads != n))
    return false;
  threads = static_cast<unsigned>(n);
  return true;
}

// Parses "shard=I/N" with I < N; false otherwise.
inline bool parse_shard_option(std::string_view o, std::uint64_t& index, std::uint64_t& count) {
  std::string value;
  if (!parse_named_option(o, "shard", value)) return false;
  std::size_t slash = value.find('/');
  if (slash == std::string::npos) return false;
  std::string_view v = value;
  return parse_number(v.substr(0, slash), index) && parse_number(v.substr(slash + 1), count) && count > 0 &&
         index < count;
}

inline wspecifier_kind writer_kind(std::string_view format, bool with_script) {
  if (format == "ark") return with_script ? wspecifier_kind::archive_and_script : wspecifier_kind::archive;
  if (format == "tfrecord")
    return with_script ? wspecifier_kind::tfrecord_and_script : wspecifier_kind::tfrecord;
  if (format == "scp") return wspecifier_kind::script;
  if (format == "lmdb") return wspecifier_kind::lmdb;
  if (format == "idx") return wspecifier_kind::idx;
  return with_script ? wspecifier_kind::other_and_script : wspecifier_kind::other;
}
inline rspecifier_kind reader_kind(std::string_view format) {
  return format == "ark"        ? rspecifier_kind::archive
         : format == "scp"      ? rspecifier_kind::script
         : format == "tfrecord" ? rspecifier_kind::tfrecord
         : format == "lmdb"     ? rspecifier_kind::lmdb
         : format == "idx"      ? rspecifier_kind::idx
                                : rspecifier_kind::other;
}

}  // namespace detail

TABLIO_IMPL std::optional<wspecifier> parse_wspecifier(std::string_view spec) {
  auto split = detail::split_specifier(spec);
  if (!split) return std::nullopt;
  wspecifier w;
  std::optional<table_format> format;
  bool with_script = false;
  unsigned used = 0;  // format options given
  for (std::string_view o : split->first) {
    if (o == "b" || o == "t") {
      w.binary = o == "b";
    } else if (o == "f" || o == "nf") {
      w.flush = o == "f";
    } else if (o == "p") {
      w.permissive = true;
    } else if (o == "gzip" || o == "zlib" || o == "nz") {
      w.compression = o == "gzip"   ? output_compression::gzip
                      : o == "zlib" ? output_compression::zlib
                                    : output_compression::none;
      used |= format_option::compression;
    } else if (detail::parse_named_option(o, "key", w.records.key_feature)) {
      used |= format_option::key;
    } else if (detail::parse_named_option(o, "ext", w.extension)) {
      used |= format_option::extension;
    } else if (detail::parse_number_option(o, "maxcount", w.max_count) ||
               detail::parse_number_option(o, "maxsize", w.max_size)) {
      used |= format_option::split;
    } else if (detail::parse_threads_option(o, w.threads)) {
      continue;  // any format's
    } else if (o == "scp") {
      if (with_script) return std::nullopt;
      with_script = true;
    } else if (auto f = find_format(o); f && f->open_output) {
      if (format || with_script) return std::nullopt;  // one format, before "scp" ("ark,scp")
      format = f;
    } else {
      return std::nullopt;
    }
  }
  std::string_view rest = split->second;
  if (format) {
    unsigned allowed = format->write_options;
    if ((used & ~allowed) != 0 || (with_script && !(allowed & format_option::script))) return std::nullopt;
    w.format = format->name;
    if (with_script) {
      std::size_t comma = rest.find(',');
      if (comma == std::string_view::npos) return std::nullopt;
      w.archive = rest.substr(0, comma);
      w.script = rest.substr(comma + 1);
    } else {
      w.archive = rest;
    }
  } else {
    if (!with_script || used != 0) return std::nullopt;
    w.format = "scp";
    w.script = rest;
  }
  w.kind = detail::writer_kind(w.format, format && with_script);
  return w;
}

TABLIO_IMPL std::optional<rspecifier> parse_rspecifier(std::string_view spec) {
  auto split = detail::split_specifier(spec);
  if (!split) return std::nullopt;
  rspecifier r;
  std::optional<table_format> format;
  unsigned used = 0;
  for (std::string_view o : split->first) {
    if (o == "b" || o == "t") continue;  // accepted and ignored: objects say their own mode
    if (o == "o" || o == "no")
      r.once = o == "o";
    else if (o == "s" || o == "ns")
      r.sorted = o == "s";
    else if (o == "cs" || o == "ncs")
      r.called_sorted = o == "cs";
    else if (o == "p" || o == "np")
      r.permissive = o == "p";
    else if (o == "bg")
      r.background = true;
    else if (detail::parse_named_option(o, "key", r.records.key_feature))
      used |= format_option::key;
    else if (detail::parse_shard_option(o, r.shard_index, r.shard_count))
      used |= format_option::shard;
    else if (detail::parse_named_option(o, "ext", r.extension))
      used |= format_option::extension;
    else if (o == "unsafekeys")
      used |= format_option::unsafe_keys;
    else if (o == "unended")
      used |= format_option::unended;
    else if (detail::parse_named_option(o, "segments", r.segments) ||
             detail::parse_seconds_option(o, "max_overshoot", r.segmenting.max_overshoot) ||
             detail::parse_seconds_option(o, "min_segment_length", r.segmenting.min_segment_length))
      continue;  // over any format's recordings
    else if (detail::parse_named_option(o, "cache", r.remote.cache) ||
             detail::parse_number_option(o, "cache_limit", r.remote.cache_limit))
      continue;  // for the files of any format
    else if (detail::parse_threads_option(o, r.threads))
      continue;  // any format's table
    else if (auto f = find_format(o); f && f->open_input) {
      if (format) return std::nullopt;
      format = f;
    } else {
      return std::nullopt;
    }
  }
  if (!format || (used & ~format->read_options) != 0) return std::nullopt;
  r.unsafe_keys = (used & format_option::unsafe_keys) != 0;
  r.unended = (used & format_option::unended) != 0;
  r.format = format->name;
  r.kind = detail::reader_kind(r.format);
  r.filename = split->second;
  return r;
}

namespace detail {
// Why spec is no specifier (parse(spec) failed), in words a newcomer can act on.
template <class Parse>
TABLIO_COLD std::string specifier_problem(std::string_view spec, bool writing, Parse parse) {
  auto split = split_specifier(spec);
  if (!split)
    return spec.find(':') == std::string_view::npos
               ? "no ':': a specifier is FORMAT[,OPTIONS]:NAME, such as 'ark:feats.ark' or 'scp:feats.scp'"
               : "whitespace at its end";
  int formats = 0;
  bool script = false;
  for (std::string_view o : split->first) {
    if (o.empty()) return "an empty option (a space, or ',' twice, before the ':')";
    if (writing && o == "scp") {
      script = true;
    } else if (find_format(o)) {
      ++formats;
    } else if (o.starts_with("threads=") && !parse(std::string(o) + ",ark:x")) {
      return join({"'", o, "': threads=N is a number of threads, 1 to ", decimal(max_table_threads)});
    } else if (!writing && (o == "gzip" || o == "zlib" || o == "nz")) {
      return join({"'", o, "' says how a writer compresses: a reader finds gzip or zlib input by itself"});
    } else if (o != "scp" && !parse(std::string(o) + ",ark:x") && !parse(std::string(o) + ",tar:x")) {
      return join({"'", o, "' is no format and no option"});
    }
  }
  if (formats == 0 && !script) return "no format (ark, scp, tfrecord, lmdb, idx, tar...) before the ':'";
  if (formats > 1)
    return writing ? "two formats" : "two formats: a table is read from one ('ark:NAME' or 'scp:NAME')";
  if (script && formats == 1 && split->second.find(',') == std::string_view::npos)
    return "FORMAT,scp:TABLE,SCRIPT names two files, with a ',' between them";
  return "an option its format does not take (docs/specifiers.md lists what each takes)";
}
}  // namespace detail

TABLIO_IMPL wspecifier require_wspecifier(std::string_view spec) {
  if (auto w = parse_wspecifier(spec)) return std::move(*w);
  throw_usage_error(
      {"invalid wspecifier '", spec,
       "': ", detail::specifier_problem(spec, true, [](std::string_view s) { return parse_wspecifier(s); })});
}
TABLIO_IMPL rspecifier require_rspecifier(std::string_view spec) {
  if (auto r = parse_rspecifier(spec)) return std::move(*r);
  throw_usage_error(
      {"invalid rspecifier '", spec, "': ", detail::specifier_problem(spec, false, [](std::string_view s) {
         return parse_rspecifier(s);
       })});
}

#endif  // TABLIO_HEADER_IMPLEMENTATION

TABLIO_END_NAMESPACE

// The formats, which find_format() needs.
#include <tablio/table/formats.hpp>
