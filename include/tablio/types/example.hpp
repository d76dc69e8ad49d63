// tf.Example: named features, each a list of bytes, floats or int64s, with an encoder that
// writes the bytes libprotobuf writes with deterministic (sorted-key) serialization, and a
// decoder that accepts what libprotobuf accepts: packed and unpacked lists, unknown fields,
// map entries in either order or missing a part, repeated keys (the last wins), features
// with no kind, and unknown fields (kept and written back after the known ones, as
// libprotobuf does). Malformed wire data is a format_error.
#pragma once

#include <tablio/core/endian.hpp>
#include <tablio/stream/reader.hpp>
#include <tablio/stream/writer.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// One feature: no kind, or a list of bytes, floats or int64s.
using feature =
    std::variant<std::monostate, std::vector<std::string>, std::vector<float>, std::vector<std::int64_t>>;

struct example {
  std::map<std::string, feature> features;  // std::map orders keys bytewise, as deterministic output needs
  bool features_present = false;            // the Features message itself, even if empty

  // Fields of the wire data this library does not know, kept as libprotobuf keeps them, so
  // that re-encoding gives the input back: in Example, in Features, and per key in the
  // Feature and in its list.
  struct unknown_fields {
    std::string in_example, in_features;
    std::map<std::string, std::pair<std::string, std::string>> in_feature;
    bool operator==(const unknown_fields&) const = default;
  } unknown;

  void set(std::string key, std::vector<std::int64_t> v) { put(std::move(key), std::move(v)); }
  void set(std::string key, std::vector<float> v) { put(std::move(key), std::move(v)); }
  void set(std::string key, std::vector<std::string> v) { put(std::move(key), std::move(v)); }
  template <class T>
  const std::vector<T>* get(const std::string& key) const {
    auto it = features.find(key);
    return it == features.end() ? nullptr : std::get_if<std::vector<T>>(&it->second);
  }
  bool operator==(const example&) const = default;

 private:
  void put(std::string key, feature f) {
    features_present = true;
    features[std::move(key)] = std::move(f);
  }
};

namespace protobuf_wire {

enum wire_type : std::uint32_t { varint = 0, fixed64 = 1, length_delimited = 2, fixed32 = 5 };

inline void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
inline std::size_t varint_size(std::uint64_t v) noexcept {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// A bounded view being parsed; errors name the record and the offset in it.
struct cursor {
  const char* p;
  const char* end;
  const char* begin;
  const std::string* name;

  [[noreturn]] void fail(const std::string& expected, const std::string& found) const {
    throw format_error({*name, static_cast<std::uint64_t>(p - begin), {}}, expected, found);
  }
  bool done() const noexcept { return p == end; }
  std::uint64_t get_varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (p == end) fail("a varint", "end of data");
      auto b = static_cast<unsigned char>(*p++);
      if (shift == 63 && b > 1) fail("a varint of at most 64 bits", "more");
      v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return v;
    }
    fail("a varint of at most 10 bytes", "more");
  }
  std::string_view get_bytes() {
    std::uint64_t n = get_varint();
    if (n > static_cast<std::uint64_t>(end - p))
      fail(std::to_string(n) + " bytes", "only " + std::to_string(end - p));
    std::string_view v(p, static_cast<std::size_t>(n));
    p += n;
    return v;
  }
  cursor sub(std::string_view bytes) const {
    return {bytes.data(), bytes.data() + bytes.size(), begin, name};
  }
  // Skips the field whose tag started at tag_start and keeps its bytes in `kept`.
  void keep_unknown(const char* tag_start, std::uint32_t type, std::string& kept) {
    skip(type);
    kept.append(tag_start, p);
  }
  void skip(std::uint32_t type) {
    switch (type) {
      case varint:
        get_varint();
        return;
      case fixed64:
        need(8);
        p += 8;
        return;
      case length_delimited:
        get_bytes();
        return;
      case fixed32:
        need(4);
        p += 4;
        return;
      default:
        fail("a known wire type", "wire type " + std::to_string(type));
    }
  }
  void need(std::size_t n) const {
    if (static_cast<std::size_t>(end - p) < n) fail(std::to_string(n) + " bytes", "end of data");
  }
};

}  // namespace protobuf_wire

namespace detail {

inline void decode_feature(protobuf_wire::cursor c, feature& f,
                           std::pair<std::string, std::string>& unknown) {
  using namespace protobuf_wire;
  while (!c.done()) {
    const char* tag_start = c.p;
    std::uint64_t tag = c.get_varint();
    std::uint32_t field = static_cast<std::uint32_t>(tag >> 3), type = static_cast<std::uint32_t>(tag & 7);
    if (field < 1 || field > 3 || type != length_delimited) {
      c.keep_unknown(tag_start, type, unknown.first);
      continue;
    }
    cursor list = c.sub(c.get_bytes());
    // A oneof member seen again merges into it; another member replaces it.
    if (field == 1) {
      if (!std::holds_alternative<std::vector<std::string>>(f)) f = std::vector<std::string>{};
      auto& v = std::get<std::vector<std::string>>(f);
      while (!list.done()) {
        std::uint64_t t = list.get_varint();
        if ((t >> 3) == 1 && (t & 7) == length_delimited)
          v.emplace_back(list.get_bytes());
        else
          list.skip(static_cast<std::uint32_t>(t & 7));
      }
    } else if (field == 2) {
      if (!std::holds_alternative<std::vector<float>>(f)) f = std::vector<float>{};
      auto& v = std::get<std::vector<float>>(f);
      while (!list.done()) {
        const char* at = list.p;
        std::uint64_t t = list.get_varint();
        if ((t >> 3) == 1 && (t & 7) == length_delimited) {
          std::string_view packed = list.get_bytes();
          if (packed.size() % 4)
            list.fail("packed floats (a multiple of 4 bytes)", std::to_string(packed.size()) + " bytes");
          for (std::size_t i = 0; i < packed.size(); i += 4)
            v.push_back(load<std::endian::little, float>(packed.data() + i));
        } else if ((t >> 3) == 1 && (t & 7) == fixed32) {
          list.need(4);
          v.push_back(load<std::endian::little, float>(list.p));
          list.p += 4;
        } else {
          list.keep_unknown(at, static_cast<std::uint32_t>(t & 7), unknown.second);
        }
      }
    } else {
      if (!std::holds_alternative<std::vector<std::int64_t>>(f)) f = std::vector<std::int64_t>{};
      auto& v = std::get<std::vector<std::int64_t>>(f);
      while (!list.done()) {
        const char* at = list.p;
        std::uint64_t t = list.get_varint();
        if ((t >> 3) == 1 && (t & 7) == length_delimited) {
          cursor packed = list.sub(list.get_bytes());
          while (!packed.done()) v.push_back(static_cast<std::int64_t>(packed.get_varint()));
        } else if ((t >> 3) == 1 && (t & 7) == varint) {
          v.push_back(static_cast<std::int64_t>(list.get_varint()));
        } else {
          list.keep_unknown(at, static_cast<std::uint32_t>(t & 7), unknown.second);
        }
      }
    }
  }
}

inline void encode_feature(std::string& out, const feature& f,
                           const std::pair<std::string, std::string>* unknown) {
  using namespace protobuf_wire;
  std::string list;
  char tag = 0;
  if (auto* b = std::get_if<std::vector<std::string>>(&f)) {
    tag = 0x0A;
    for (const auto& s : *b) {
      list.push_back(0x0A);
      put_varint(list, s.size());
      list += s;
    }
  } else if (auto* fl = std::get_if<std::vector<float>>(&f)) {
    tag = 0x12;
    if (!fl->empty()) {
      list.push_back(0x0A);
      put_varint(list, fl->size() * 4);
      std::size_t at = list.size();
      list.resize(at + fl->size() * 4);
      for (std::size_t i = 0; i < fl->size(); ++i)
        store<std::endian::little>(list.data() + at + 4 * i, (*fl)[i]);
    }
  } else if (auto* in = std::get_if<std::vector<std::int64_t>>(&f)) {
    tag = 0x1A;
    if (!in->empty()) {
      std::size_t n = 0;
      for (auto x : *in) n += varint_size(static_cast<std::uint64_t>(x));
      list.push_back(0x0A);
      put_varint(list, n);
      for (auto x : *in) put_varint(list, static_cast<std::uint64_t>(x));
    }
  }
  if (tag != 0) {
    if (unknown) list += unknown->second;
    out.push_back(tag);
    put_varint(out, list.size());
    out += list;
  }
  if (unknown) out += unknown->first;
}

}  // namespace detail

namespace detail {

// Parses the entries of a protobuf map<string, V> held as field 1 of the message in `c`:
// on_entry(key, value parts) for each entry, where the parts are every occurrence of the
// value field (protobuf merges them). Other fields of the message are kept in `unknown`.
template <class OnEntry>
void parse_string_map(protobuf_wire::cursor c, std::string& unknown, OnEntry on_entry) {
  using namespace protobuf_wire;
  std::vector<cursor> parts;
  while (!c.done()) {
    const char* at = c.p;
    std::uint64_t t = c.get_varint();
    if ((t >> 3) != 1 || (t & 7) != length_delimited) {
      c.keep_unknown(at, static_cast<std::uint32_t>(t & 7), unknown);
      continue;
    }
    cursor entry = c.sub(c.get_bytes());
    std::string key;
    parts.clear();
    while (!entry.done()) {
      std::uint64_t et = entry.get_varint();
      if ((et & 7) == length_delimited && (et >> 3) == 1)
        key = std::string(entry.get_bytes());
      else if ((et & 7) == length_delimited && (et >> 3) == 2)
        parts.push_back(entry.sub(entry.get_bytes()));
      else
        entry.skip(static_cast<std::uint32_t>(et & 7));  // a map entry's extra fields are dropped
    }
    on_entry(std::move(key), parts);
  }
}

// Fills ex.features (and their unknown fields) from a Features message.
inline void decode_features(protobuf_wire::cursor c, example& ex) {
  parse_string_map(c, ex.unknown.in_features,
                   [&](std::string key, const std::vector<protobuf_wire::cursor>& parts) {
                     feature value;
                     std::pair<std::string, std::string> value_unknown;
                     for (const auto& part : parts) decode_feature(part, value, value_unknown);
                     // A repeated key: the last entry wins, with its own unknown fields.
                     if (value_unknown.first.empty() && value_unknown.second.empty())
                       ex.unknown.in_feature.erase(key);
                     else
                       ex.unknown.in_feature[key] = std::move(value_unknown);
                     ex.features[std::move(key)] = std::move(value);
                   });
}

// Appends "tag, length, body" for a length-delimited field.
inline void put_field(std::string& out, char tag, std::string_view body) {
  out.push_back(tag);
  protobuf_wire::put_varint(out, body.size());
  out.append(body);
}

// A map entry of a string key and a message value, both always written, as libprotobuf does.
inline void put_map_entry(std::string& out, std::string_view key, std::string_view value) {
  std::string entry;
  put_field(entry, 0x0A, key);
  put_field(entry, 0x12, value);
  put_field(out, 0x0A, entry);
}

// The Features message of ex: entries in bytewise key order, then its unknown fields.
inline std::string encode_features(const example& ex) {
  std::string features;
  for (const auto& [key, value] : ex.features) {
    std::string feature_bytes;
    auto unknown = ex.unknown.in_feature.find(key);
    encode_feature(feature_bytes, value, unknown == ex.unknown.in_feature.end() ? nullptr : &unknown->second);
    put_map_entry(features, key, feature_bytes);
  }
  features += ex.unknown.in_features;
  return features;
}

}  // namespace detail

// Parses a serialized tf.Example; `name` appears in errors.
inline example decode_example(std::string_view bytes, const std::string& name = "<example>") {
  using namespace protobuf_wire;
  example ex;
  cursor c{bytes.data(), bytes.data() + bytes.size(), bytes.data(), &name};
  while (!c.done()) {
    const char* tag_start = c.p;
    std::uint64_t tag = c.get_varint();
    std::uint32_t type = static_cast<std::uint32_t>(tag & 7);
    if ((tag >> 3) != 1 || type != length_delimited) {
      if (type == 3 || type == 4) c.fail("no groups", "a group");
      c.keep_unknown(tag_start, type, ex.unknown.in_example);
      continue;
    }
    ex.features_present = true;
    detail::decode_features(c.sub(c.get_bytes()), ex);  // several Features fields merge
  }
  return ex;
}

// Serializes as libprotobuf does with deterministic output: keys in bytewise order, both key
// and value written in every map entry, unknown fields after the known ones.
inline std::string encode_example(const example& ex) {
  std::string out;
  if (ex.features_present || !ex.features.empty()) detail::put_field(out, 0x0A, detail::encode_features(ex));
  out += ex.unknown.in_example;
  return out;
}

// One feature list of a SequenceExample: a sequence of features (frames, tokens...).
struct feature_list {
  std::vector<feature> features;
  // Unknown fields kept for re-encoding: per feature (in the Feature, in its list), and in
  // the FeatureList itself.
  std::vector<std::pair<std::string, std::string>> unknown_in_features;
  std::string unknown;
  bool operator==(const feature_list&) const = default;
};

// tf.SequenceExample: context features and named feature lists.
struct sequence_example {
  example context;  // its Features and their unknown fields
  bool context_present = false;
  std::map<std::string, feature_list> feature_lists;
  bool feature_lists_present = false;
  std::string unknown;                   // in SequenceExample
  std::string unknown_in_feature_lists;  // in FeatureLists
  bool operator==(const sequence_example&) const = default;
};

inline sequence_example decode_sequence_example(std::string_view bytes,
                                                const std::string& name = "<sequence_example>") {
  using namespace protobuf_wire;
  sequence_example seq;
  cursor c{bytes.data(), bytes.data() + bytes.size(), bytes.data(), &name};
  while (!c.done()) {
    const char* tag_start = c.p;
    std::uint64_t tag = c.get_varint();
    std::uint32_t field = static_cast<std::uint32_t>(tag >> 3), type = static_cast<std::uint32_t>(tag & 7);
    if (type == 3 || type == 4) c.fail("no groups", "a group");
    if (field == 1 && type == length_delimited) {
      seq.context_present = true;
      detail::decode_features(c.sub(c.get_bytes()), seq.context);
    } else if (field == 2 && type == length_delimited) {
      seq.feature_lists_present = true;
      detail::parse_string_map(c.sub(c.get_bytes()), seq.unknown_in_feature_lists,
                               [&](std::string key, const std::vector<cursor>& parts) {
                                 feature_list list;
                                 for (cursor part : parts) {
                                   while (!part.done()) {
                                     const char* at = part.p;
                                     std::uint64_t t = part.get_varint();
                                     if ((t >> 3) == 1 && (t & 7) == length_delimited) {
                                       list.features.emplace_back();
                                       list.unknown_in_features.emplace_back();
                                       detail::decode_feature(part.sub(part.get_bytes()),
                                                              list.features.back(),
                                                              list.unknown_in_features.back());
                                     } else {
                                       part.keep_unknown(at, static_cast<std::uint32_t>(t & 7), list.unknown);
                                     }
                                   }
                                 }
                                 seq.feature_lists[std::move(key)] = std::move(list);
                               });
    } else {
      c.keep_unknown(tag_start, type, seq.unknown);
    }
  }
  return seq;
}

inline std::string encode_sequence_example(const sequence_example& seq) {
  std::string out;
  if (seq.context_present || !seq.context.features.empty())
    detail::put_field(out, 0x0A, detail::encode_features(seq.context));
  if (seq.feature_lists_present || !seq.feature_lists.empty()) {
    std::string lists;
    for (const auto& [key, list] : seq.feature_lists) {
      std::string list_bytes;
      for (std::size_t i = 0; i < list.features.size(); ++i) {
        std::string feature_bytes;
        detail::encode_feature(feature_bytes, list.features[i],
                               i < list.unknown_in_features.size() ? &list.unknown_in_features[i] : nullptr);
        detail::put_field(list_bytes, 0x0A, feature_bytes);
      }
      list_bytes += list.unknown;
      detail::put_map_entry(lists, key, list_bytes);
    }
    lists += seq.unknown_in_feature_lists;
    detail::put_field(out, 0x12, lists);
  }
  out += seq.unknown;
  return out;
}

TABLIO_END_NAMESPACE
