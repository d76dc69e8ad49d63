// Shard indexes: the JSON that WebDataset's indexed datasets (wids) read, listing a sharded
// table's files with how many samples each holds and its size, so that a reader can plan an
// epoch over thousands of remote shards without reading them:
//
//   {"__kind__": "wids-shard-index-v1", "wids_version": 1, "name": "train",
//    "format": "tar", "value_type": "example",   (or "format": "tfrecord", "key": "id")
//    "shardlist": [{"url": "train-000000.tar", "nsamples": 100, "filesize": 1034240,
//                   "first_key": "s00000", "last_key": "s00099", "sorted": true}, ...]}
//
// "format", "value_type" (the tar members' extension), "key" (the Example feature a TFRecord
// table keeps its keys in, key=), the shards' keys and "sorted" are tablio's,
// fields wids ignores. URLs are relative to the index's folder, as wids resolves them. Writers of shards
// write the index last, once every shard is complete, beside the shards (shard_index_name):
// a dataset with an index is whole.
#pragma once

#include <tablio/core/error.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/stream/platform/file_io.hpp>
#include <tablio/stream/platform/paths.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// One shard of an index: its URL, how many entries and bytes it holds, and its keys' range.
struct shard_index_entry {
  std::string url;  // relative to the index's folder
  std::uint64_t samples = 0, bytes = 0;
  std::string first_key, last_key;  // empty for a shard with no entries
  // Whether each key is greater (bytewise) than the one before it, as in Kaldi's sorted
  // tables: then [first_key, last_key] bounds the shard's keys, and a lookup by key needs
  // only the shards whose range holds it.
  bool sorted = true;

  // Counts an entry with this key, in the shard's order.
  void add(std::string_view key) {
    if (samples++ == 0)
      first_key = key;
    else if (sorted && !(last_key < key))
      sorted = false;
    last_key = key;
  }
};

// A shard index, as to_json writes it: the dataset's name and format, and its shards in order.
struct shard_index {
  std::string name;        // the dataset's, as wids names it
  std::string format;      // tablio's format name: "tar", "tfrecord"
  std::string value_type;  // a tar table's member extension ("example", "bin"); else empty
  std::vector<shard_index_entry> shards;
  std::string key;  // the Example feature a TFRecord table keeps its keys in (key=); else empty
};

namespace detail {

// Where a shard pattern's fixed part ends: at its shard number ("%06d", a glob, "{0..9}",
// "@16"), else (one name, as shard_table takes it) at the first '.' of its last component.
inline std::size_t shard_pattern_stem_end(std::string_view pattern) {
  std::size_t at = pattern.find_first_of("%*?[{");
  if (std::size_t sign = pattern.rfind('@');
      sign != std::string_view::npos && sign + 1 < pattern.size() &&
      pattern.find_first_not_of("0123456789", sign + 1) == std::string_view::npos)
    at = std::min(at, sign);
  if (at != std::string_view::npos) return at;
  std::size_t slash = pattern.find_last_of(detail::os::separators);
  std::size_t start = slash == std::string_view::npos ? 0 : slash + 1;
  std::size_t dot = pattern.find('.', start + 1);
  return dot == std::string_view::npos ? pattern.size() : dot;
}

// A JSON string. JSON is UTF-8: a key's bytes that are not are written as the lone
// surrogates U+DC80..U+DCFF, which Python's json reads back as the str that names that key
// (its surrogateescape form).
inline void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    char c = s[i];
    std::size_t n = utf8_sequence_length(s, i);
    char escaped[8];
    if (n == 0) {
      std::snprintf(escaped, sizeof escaped, "\\udc%02x", static_cast<unsigned char>(c));
      out += escaped;
      n = 1;
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      out += escaped;
    } else {
      out.append(s, i, n);
    }
    i += n;
  }
  out += '"';
}

}  // namespace detail

// The folder a shard pattern's index and URLs are relative to: up to the last '/' before its
// shard number ("s3://b/train/shard-%06d.tar" -> "s3://b/train/").
inline std::string shard_index_folder(std::string_view pattern) {
  std::string_view stem = pattern.substr(0, detail::shard_pattern_stem_end(pattern));
  std::size_t slash = stem.find_last_of(detail::os::separators);
  return std::string(slash == std::string_view::npos ? std::string_view() : stem.substr(0, slash + 1));
}

// The index beside the shards a pattern names, after the name's part before the shard
// number: "train-%06d.tar", "train-*-of-00016.tfrecord", "train-{000000..000099}.tar",
// "train@16" and shard_table's "train.tar" all give "train.shardindex.json".
inline std::string shard_index_name(std::string_view pattern) {
  std::string folder = shard_index_folder(pattern);
  std::string_view stem =
      pattern.substr(folder.size(), detail::shard_pattern_stem_end(pattern) - folder.size());
  while (!stem.empty() && (stem.back() == '-' || stem.back() == '_' || stem.back() == '.'))
    stem.remove_suffix(1);
  return folder + std::string(stem.empty() ? std::string_view("shards") : stem) + ".shardindex.json";
}

// A shard's URL in an index at `folder`: relative when it is inside it.
inline std::string shard_index_url(std::string_view folder, std::string_view shard) {
  return std::string(shard.starts_with(folder) ? shard.substr(folder.size()) : shard);
}

// The index as the JSON the header's opening comment shows, keys and URLs escaped (bytes that
// are not UTF-8 as the lone surrogates Python reads back); a shard of no entries has no keys.
inline std::string to_json(const shard_index& index) {
  std::string out = "{\n  \"__kind__\": \"wids-shard-index-v1\",\n  \"wids_version\": 1,\n  \"name\": ";
  detail::append_json_string(out, index.name);
  out += ",\n  \"format\": ";
  detail::append_json_string(out, index.format);
  if (!index.value_type.empty()) {
    out += ",\n  \"value_type\": ";
    detail::append_json_string(out, index.value_type);
  }
  if (!index.key.empty()) {
    out += ",\n  \"key\": ";
    detail::append_json_string(out, index.key);
  }
  out += ",\n  \"shardlist\": [";
  for (std::size_t i = 0; i < index.shards.size(); ++i) {
    const shard_index_entry& s = index.shards[i];
    out += i ? ",\n    {\"url\": " : "\n    {\"url\": ";
    detail::append_json_string(out, s.url);
    out += ", \"nsamples\": " + std::to_string(s.samples) + ", \"filesize\": " + std::to_string(s.bytes);
    if (s.samples != 0) {
      out += ", \"first_key\": ";
      detail::append_json_string(out, s.first_key);
      out += ", \"last_key\": ";
      detail::append_json_string(out, s.last_key);
      if (s.sorted) out += ", \"sorted\": true";
    }
    out += '}';
  }
  out += index.shards.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

// The size of a shard: a file, or a remote object (one HEAD request).
inline std::uint64_t stored_size(const std::string& name, const open_options& options = {}) {
  open_options open = governed(options);  // the name may come from an index
  if (is_remote_name(name)) {
#if defined(TABLIO_WITH_CURL)
    return remote_size(name, open);  // which refuses it where the network is not allowed
#else
    detail::needs_curl(name);
#endif
  }
  detail::os::file_status st;
  std::string path = detail::checked_local_path(name, open);
  if (!detail::os::status_of(path, true, st)) throw_io_error(name, errno, {"cannot find the size of"});
  return st.size;
}

// Writes the index of shards named by `pattern` beside them (shard_index_name).
inline void write_shard_index(std::string_view pattern, shard_index index, const open_options& open = {}) {
  std::string name = shard_index_name(pattern);
  if (index.name.empty()) {
    std::string_view file = std::string_view(name).substr(shard_index_folder(pattern).size());
    index.name = file.substr(0, file.size() - std::string_view(".shardindex.json").size());
  }
  writer out = open_output(name, open);
  std::string json = to_json(index);
  out.write(json.data(), json.size());
  out.close();
}

TABLIO_END_NAMESPACE
