// The grammar of Kaldi's table specifiers: wspecifiers ("ark,scp,t:a.ark,a.scp") and
// rspecifiers ("ark,s,cs:-"), exactly as Kaldi accepts and rejects them, extended with
// TFRecord tables:
//
//   "tfrecord:f.tfrecord"               records keyed by ordinal ("00000000", "00000001"...)
//   "tfrecord,key=utt:f.tfrecord"       keys kept in the Example's bytes feature "utt"
//   "tfrecord,scp:f.tfrecord,f.scp"     (writing) also an scp pointing at each record
//   "tfrecord,gzip:f.tfrecord.gz"       (writing) GZIP or "zlib"; also chosen by a .gz or .zz
//                                       suffix; readers detect compression themselves
//   "scp,key=utt:f.scp"                 (reading) such a script, the keys checked and taken out
//   "tfrecord,shard=2/8:train-*"        (reading) every 8th record from the 3rd, of all files
//                                       the glob matches, in name order ("train@128" names
//                                       TensorFlow's train-00000-of-00128 ... shards)
//
// LMDB databases: "lmdb:folder" (keys are the database's; "lmdb,shard=I/N:" reads a shard), and
// IDX files: "idx:train-images-idx3-ubyte" (keys are the item indexes "00000000"...)
//
// It lives in the stream layer because classifying an extended filename needs it: Kaldi
// refuses an rxfilename such as "ark:foo" that looks like a specifier.
#pragma once

#include <tablio/core/error.hpp>

#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

TABLIO_BEGIN_NAMESPACE

enum class wspecifier_kind { archive, script, archive_and_script, tfrecord, tfrecord_and_script, lmdb, idx };
enum class rspecifier_kind { archive, script, tfrecord, lmdb, idx };

enum class output_compression { by_suffix, none, gzip, zlib };

// Options of record tables (TFRecord), shared by both kinds of specifier.
struct record_table_options {
  std::string key_feature;  // key=NAME: the bytes feature holding each record's key
  bool operator==(const record_table_options&) const = default;
};

struct wspecifier {
  wspecifier_kind kind{};
  std::string archive;      // wxfilename of the archive (archive, archive_and_script)
  std::string script;       // wxfilename (archive_and_script) or rxfilename (script) of the scp
  bool binary = true;       // b (default) / t
  bool flush = false;       // f / nf (default)
  bool permissive = false;  // p
  record_table_options records;
  output_compression compression = output_compression::by_suffix;  // gzip / zlib / nz
};

struct rspecifier {
  rspecifier_kind kind{};
  std::string filename;        // rxfilename of the archive or the script
  bool once = false;           // o / no
  bool sorted = false;         // s / ns
  bool called_sorted = false;  // cs / ncs
  bool permissive = false;     // p / np
  bool background = false;     // bg
  record_table_options records;
  std::uint64_t shard_index = 0, shard_count = 1;  // shard=I/N
};

namespace detail {

// Splits the options before the first ':' on ',' and ' ', keeping empty pieces as Kaldi
// does (so "o, s, ark:x" has empty options and is invalid).
inline std::optional<std::pair<std::vector<std::string_view>, std::string_view>> split_specifier(
    std::string_view spec) {
  std::size_t colon = spec.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  if (spec.empty() || std::isspace(static_cast<unsigned char>(spec.back()))) return std::nullopt;
  std::vector<std::string_view> options;
  std::string_view head = spec.substr(0, colon);
  std::size_t start = 0;
  for (std::size_t i = 0; i <= head.size(); ++i) {
    if (i == head.size() || head[i] == ',' || head[i] == ' ') {
      options.push_back(head.substr(start, i - start));
      start = i + 1;
    }
  }
  return std::pair{std::move(options), spec.substr(colon + 1)};
}

// Parses "key=NAME" into options; false if o is not a key option or NAME is empty.
inline bool parse_key_option(std::string_view o, record_table_options& options) {
  if (!o.starts_with("key=") || o.size() == 4) return false;
  options.key_feature = o.substr(4);
  return true;
}

// Parses "shard=I/N" with I < N; false otherwise.
inline bool parse_shard_option(std::string_view o, std::uint64_t& index, std::uint64_t& count) {
  if (!o.starts_with("shard=")) return false;
  o.remove_prefix(6);
  auto number = [](std::string_view digits, std::uint64_t& v) {
    if (digits.empty() || digits.size() > 18) return false;
    v = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return true;
  };
  std::size_t slash = o.find('/');
  if (slash == std::string_view::npos) return false;
  return number(o.substr(0, slash), index) && number(o.substr(slash + 1), count) && count > 0 &&
         index < count;
}

}  // namespace detail

// Parses a wspecifier; nullopt when Kaldi would classify it as kNoWspecifier.
inline std::optional<wspecifier> parse_wspecifier(std::string_view spec) {
  auto split = detail::split_specifier(spec);
  if (!split) return std::nullopt;
  wspecifier w;
  bool have_archive = false, have_script = false, have_tfrecord = false, have_lmdb = false,
       record_options = false;
  for (std::string_view o : split->first) {
    if (o == "b")
      w.binary = true;
    else if (o == "t")
      w.binary = false;
    else if (o == "f")
      w.flush = true;
    else if (o == "nf")
      w.flush = false;
    else if (o == "p")
      w.permissive = true;
    else if (o == "gzip" || o == "zlib" || o == "nz") {
      w.compression = o == "gzip"   ? output_compression::gzip
                      : o == "zlib" ? output_compression::zlib
                                    : output_compression::none;
      record_options = true;
    } else if (detail::parse_key_option(o, w.records)) {
      record_options = true;
    } else if (o == "ark" || o == "tfrecord") {
      if (have_archive || have_tfrecord || have_lmdb || have_script) return std::nullopt;  // "ark,scp" once
      (o == "ark" ? have_archive : have_tfrecord) = true;
    } else if (o == "lmdb" || o == "idx") {
      if (have_archive || have_tfrecord || have_lmdb || have_script) return std::nullopt;
      have_lmdb = true;
      w.kind = o == "lmdb" ? wspecifier_kind::lmdb : wspecifier_kind::idx;
    } else if (o == "scp") {
      if (have_script || have_lmdb) return std::nullopt;
      have_script = true;
    } else {
      return std::nullopt;
    }
  }
  std::string_view rest = split->second;
  if (record_options && !have_tfrecord) return std::nullopt;
  if ((have_archive || have_tfrecord) && have_script) {
    std::size_t comma = rest.find(',');
    if (comma == std::string_view::npos) return std::nullopt;
    w.kind = have_archive ? wspecifier_kind::archive_and_script : wspecifier_kind::tfrecord_and_script;
    w.archive = rest.substr(0, comma);
    w.script = rest.substr(comma + 1);
  } else if (have_archive || have_tfrecord || have_lmdb) {
    if (!have_lmdb) w.kind = have_archive ? wspecifier_kind::archive : wspecifier_kind::tfrecord;
    w.archive = rest;
  } else if (have_script) {
    w.kind = wspecifier_kind::script;
    w.script = rest;
  } else {
    return std::nullopt;
  }
  return w;
}

// Parses an rspecifier; nullopt when Kaldi would classify it as kNoRspecifier.
inline std::optional<rspecifier> parse_rspecifier(std::string_view spec) {
  auto split = detail::split_specifier(spec);
  if (!split) return std::nullopt;
  rspecifier r;
  bool have_kind = false, record_options = false;
  for (std::string_view o : split->first) {
    if (o == "b" || o == "t") continue;  // accepted and ignored: objects say their own mode
    if (o == "o")
      r.once = true;
    else if (o == "no")
      r.once = false;
    else if (o == "s")
      r.sorted = true;
    else if (o == "ns")
      r.sorted = false;
    else if (o == "cs")
      r.called_sorted = true;
    else if (o == "ncs")
      r.called_sorted = false;
    else if (o == "p")
      r.permissive = true;
    else if (o == "np")
      r.permissive = false;
    else if (o == "bg")
      r.background = true;
    else if (detail::parse_key_option(o, r.records) ||
             detail::parse_shard_option(o, r.shard_index, r.shard_count))
      record_options = true;
    else if (o == "ark" || o == "scp" || o == "tfrecord" || o == "lmdb" || o == "idx") {
      if (have_kind) return std::nullopt;
      have_kind = true;
      r.kind = o == "ark"        ? rspecifier_kind::archive
               : o == "scp"      ? rspecifier_kind::script
               : o == "tfrecord" ? rspecifier_kind::tfrecord
               : o == "lmdb"     ? rspecifier_kind::lmdb
                                 : rspecifier_kind::idx;
    } else {
      return std::nullopt;
    }
  }
  // key=NAME applies to TFRecord files and scripts pointing at records; shard=I/N to TFRecord
  // files, LMDB databases and IDX files.
  bool sharded = r.kind == rspecifier_kind::tfrecord || r.kind == rspecifier_kind::lmdb ||
                 r.kind == rspecifier_kind::idx;
  bool keyed = r.kind == rspecifier_kind::tfrecord || r.kind == rspecifier_kind::script;
  if (!have_kind || (r.shard_count > 1 && !sharded) || (!r.records.key_feature.empty() && !keyed) ||
      (record_options && r.kind == rspecifier_kind::archive))
    return std::nullopt;
  r.filename = split->second;
  return r;
}

// The same, throwing usage_error for a specifier Kaldi would not accept.
inline wspecifier require_wspecifier(std::string_view spec) {
  if (auto w = parse_wspecifier(spec)) return std::move(*w);
  throw usage_error("invalid wspecifier '" + std::string(spec) + "'");
}
inline rspecifier require_rspecifier(std::string_view spec) {
  if (auto r = parse_rspecifier(spec)) return std::move(*r);
  throw usage_error("invalid rspecifier '" + std::string(spec) + "'");
}

TABLIO_END_NAMESPACE
