// tf.Example: named features, each a list of bytes, floats or int64s, with an encoder that
// writes the bytes libprotobuf writes with deterministic (sorted-key) serialization, and a
// decoder that accepts what libprotobuf accepts: packed and unpacked lists, map entries in
// either order or missing a part, repeated keys (the last wins), features with no kind, and
// unknown fields (kept and written back after the known ones, as libprotobuf does). Malformed
// wire data is a format_error, and so is a record none of whose fields is the message's (a
// Datum read as an Example), which libprotobuf would take for an empty message; an empty
// record is an empty message.
#pragma once

#include <tablio/codec/protobuf_wire.hpp>
#include <tablio/core/endian.hpp>
#include <tablio/stream/reader.hpp>
#include <tablio/stream/writer.hpp>

#include <bit>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// One feature: no kind, or a list of bytes, floats or int64s.
using feature =
    std::variant<std::monostate, std::vector<std::string>, std::vector<float>, std::vector<std::int64_t>>;

// tf.Example: its features by name, and what the encoder needs to give the input back.
struct example {
  std::map<std::string, feature> features;  // std::map orders keys bytewise, as deterministic output needs
  bool features_present = false;            // the Features message itself, even if empty

  // Fields of the wire data this library does not know, kept as libprotobuf keeps them, so
  // that re-encoding gives the input back: in Example, in Features, and per key in the
  // Feature and in its list.
  struct unknown_fields {
    std::string in_example, in_features;
    std::map<std::string, std::pair<std::string, std::string>> in_feature;
    bool operator==(const unknown_fields&) const = default;  // The same bytes in each place.
  } unknown;

  // Sets the feature `key` to the list v, replacing any feature of that name, whatever its kind.
  void set(std::string key, std::vector<std::int64_t> v) { put(std::move(key), std::move(v)); }
  void set(std::string key, std::vector<float> v) { put(std::move(key), std::move(v)); }
  void set(std::string key, std::vector<std::string> v) { put(std::move(key), std::move(v)); }
  // The list of feature `key` when it is a list of T (std::int64_t, float or std::string);
  // nullptr when there is no such feature or it holds another kind.
  template <class T>
  const std::vector<T>* get(const std::string& key) const {
    auto it = features.find(key);
    return it == features.end() ? nullptr : std::get_if<std::vector<T>>(&it->second);
  }
  bool operator==(const example&) const = default;  // The same features and unknown fields.

 private:
  void put(std::string key, feature f) {
    features_present = true;
    features[std::move(key)] = std::move(f);
  }
};

// One feature list of a SequenceExample: a sequence of features (frames, tokens...).
struct feature_list {
  std::vector<feature> features;
  // Unknown fields kept for re-encoding: per feature (in the Feature, in its list), and in
  // the FeatureList itself.
  std::vector<std::pair<std::string, std::string>> unknown_in_features;
  std::string unknown;
  bool operator==(const feature_list&) const = default;  // The same features and unknown fields.
};

// tf.SequenceExample: context features and named feature lists.
struct sequence_example {
  example context;  // its Features and their unknown fields
  bool context_present = false;
  std::map<std::string, feature_list> feature_lists;
  bool feature_lists_present = false;
  std::string unknown;                                       // in SequenceExample
  std::string unknown_in_feature_lists;                      // in FeatureLists
  bool operator==(const sequence_example&) const = default;  // Every part equal.
};

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
    // A oneof member seen again merges into it; another member replaces it, and the unknown
    // fields of the list it replaces go with that list.
    auto member = [&]<class V>(std::type_identity<V>) -> V& {
      if (!std::holds_alternative<V>(f)) {
        f = V{};
        unknown.second.clear();
      }
      return std::get<V>(f);
    };
    if (field == 1) {
      auto& v = member(std::type_identity<std::vector<std::string>>{});
      while (!list.done()) {
        const char* at = list.p;
        std::uint64_t t = list.get_varint();
        if ((t >> 3) == 1 && (t & 7) == length_delimited)
          v.emplace_back(list.get_bytes());
        else
          list.keep_unknown(at, static_cast<std::uint32_t>(t & 7), unknown.second);
      }
    } else if (field == 2) {
      auto& v = member(std::type_identity<std::vector<float>>{});
      while (!list.done()) {
        const char* at = list.p;
        std::uint64_t t = list.get_varint();
        if ((t >> 3) == 1 && (t & 7) == length_delimited) {
          std::string_view packed = list.get_bytes();
          if (packed.size() % 4)
            list.fail({"packed floats (a multiple of 4 bytes)"}, {decimal(packed.size()), " bytes"});
          std::size_t at_end = v.size();
          v.resize(at_end + packed.size() / 4);
          load_array<std::endian::little>(v.data() + at_end, packed.data(), packed.size() / 4);
        } else if ((t >> 3) == 1 && (t & 7) == fixed32) {
          list.need(4);
          v.push_back(load<std::endian::little, float>(list.p));
          list.p += 4;
        } else {
          list.keep_unknown(at, static_cast<std::uint32_t>(t & 7), unknown.second);
        }
      }
    } else {
      auto& v = member(std::type_identity<std::vector<std::int64_t>>{});
      while (!list.done()) {
        const char* at = list.p;
        std::uint64_t t = list.get_varint();
        if ((t >> 3) == 1 && (t & 7) == length_delimited) {
          cursor packed = list.sub(list.get_bytes());
          v.reserve(v.size() + count_varints(packed));
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

// Serializes Examples and SequenceExamples in two passes, as libprotobuf does: the sizes of
// nested messages first, kept in the order the second pass needs them, then the bytes,
// written once into a buffer of the exact final size.
class example_encoder {
 public:
  using unknown_pair = std::pair<std::string, std::string>;
  // A bytes feature of one value written as if the Features held it (a table entry's key);
  // it replaces a feature of the same name.
  struct extra_feature {
    std::string_view name, value;
  };

  void run(const example& ex, std::string& out, const extra_feature* extra = nullptr) {
    sizes_.clear();
    bool features = ex.features_present || !ex.features.empty() || extra;
    std::size_t size = features ? protobuf_wire::field_size(features_size(ex, extra)) : 0;
    start(out, size + ex.unknown.in_example.size());
    if (features) put_features(0x0A, ex, extra);
    put(ex.unknown.in_example);
  }

  void run(const sequence_example& seq, std::string& out, const extra_feature* extra = nullptr) {
    sizes_.clear();
    using protobuf_wire::field_size;
    bool context = seq.context_present || !seq.context.features.empty() || extra;
    bool lists = seq.feature_lists_present || !seq.feature_lists.empty();
    std::size_t size = context ? field_size(features_size(seq.context, extra)) : 0;
    if (lists) size += field_size(feature_lists_size(seq));
    start(out, size + seq.unknown.size());
    if (context) put_features(0x0A, seq.context, extra);
    if (lists) put_feature_lists(seq);
    put(seq.unknown);
  }

 private:
  // ----- pass 1: sizes
  std::size_t feature_size(const feature& f, const unknown_pair* unknown) {
    using protobuf_wire::field_size;
    if (std::holds_alternative<std::monostate>(f)) return unknown ? unknown->first.size() : 0;
    std::size_t slot = sizes_.size();
    sizes_.push_back(0);
    std::size_t list = 0;
    if (auto* b = std::get_if<std::vector<std::string>>(&f)) {
      for (const auto& v : *b) list += field_size(v.size());
    } else if (auto* fl = std::get_if<std::vector<float>>(&f)) {
      if (!fl->empty()) list = field_size(4 * fl->size());
    } else if (auto* in = std::get_if<std::vector<std::int64_t>>(&f); in && !in->empty()) {
      std::size_t packed = 0;
      for (auto x : *in) packed += protobuf_wire::varint_size(static_cast<std::uint64_t>(x));
      sizes_.push_back(packed);
      list = field_size(packed);
    }
    if (unknown) list += unknown->second.size();
    sizes_[slot] = list;
    return field_size(list) + (unknown ? unknown->first.size() : 0);
  }

  static std::size_t extra_feature_size(const extra_feature& e) {
    return protobuf_wire::field_size(protobuf_wire::field_size(e.value.size()));
  }

  // Visits (key, feature or nullptr for the extra one, its unknown fields) in key order.
  template <class Visit>
  static void for_each_entry(const example& ex, const extra_feature* extra, Visit visit) {
    bool extra_done = extra == nullptr;
    const auto& unknown = ex.unknown.in_feature;
    for (const auto& [key, value] : ex.features) {
      if (!extra_done && std::string_view(key) >= extra->name) {
        visit(extra->name, nullptr, nullptr);
        extra_done = true;
        if (std::string_view(key) == extra->name) continue;
      }
      const unknown_pair* u = nullptr;
      if (!unknown.empty())
        if (auto it = unknown.find(key); it != unknown.end()) u = &it->second;
      visit(std::string_view(key), &value, u);
    }
    if (!extra_done) visit(extra->name, nullptr, nullptr);
  }

  std::size_t features_size(const example& ex, const extra_feature* extra) {
    using protobuf_wire::field_size;
    std::size_t slot = sizes_.size();
    sizes_.push_back(0);
    std::size_t total = ex.unknown.in_features.size();
    for_each_entry(ex, extra, [&](std::string_view key, const feature* f, const unknown_pair* unknown) {
      std::size_t value = f ? feature_size(*f, unknown) : extra_feature_size(*extra);
      total += field_size(field_size(key.size()) + field_size(value));
    });
    sizes_[slot] = total;
    return total;
  }

  std::size_t feature_lists_size(const sequence_example& seq) {
    using protobuf_wire::field_size;
    std::size_t slot = sizes_.size();
    sizes_.push_back(0);
    std::size_t total = seq.unknown_in_feature_lists.size();
    for (const auto& [key, list] : seq.feature_lists) {
      std::size_t list_slot = sizes_.size();
      sizes_.push_back(0);
      std::size_t body = list.unknown.size();
      for (std::size_t i = 0; i < list.features.size(); ++i)
        body += field_size(feature_size(list.features[i], list_unknown(list, i)));
      sizes_[list_slot] = body;
      total += field_size(field_size(key.size()) + field_size(body));
    }
    sizes_[slot] = total;
    return total;
  }

  static const unknown_pair* list_unknown(const feature_list& list, std::size_t i) {
    return i < list.unknown_in_features.size() ? &list.unknown_in_features[i] : nullptr;
  }

  // ----- pass 2: bytes
  void start(std::string& out, std::size_t size) {
    out.resize(size);
    p_ = out.data();
    next_ = 0;
  }

  void put(std::string_view bytes) {
    if (bytes.empty()) return;
    std::memcpy(p_, bytes.data(), bytes.size());
    p_ += bytes.size();
  }
  void put_header(char tag, std::size_t size) {
    *p_++ = tag;
    p_ = protobuf_wire::put_varint(p_, size);
  }
  void put_field(char tag, std::string_view body) {
    put_header(tag, body.size());
    put(body);
  }
  std::size_t take() { return sizes_[next_++]; }

  void put_feature(const feature& f, const unknown_pair* unknown) {
    if (!std::holds_alternative<std::monostate>(f)) {
      std::size_t list = take();
      if (auto* b = std::get_if<std::vector<std::string>>(&f)) {
        put_header(0x0A, list);
        for (const auto& v : *b) put_field(0x0A, v);
      } else if (auto* fl = std::get_if<std::vector<float>>(&f)) {
        put_header(0x12, list);
        if (!fl->empty()) {
          put_header(0x0A, 4 * fl->size());
          store_array<std::endian::little>(p_, fl->data(), fl->size());
          p_ += 4 * fl->size();
        }
      } else if (auto* in = std::get_if<std::vector<std::int64_t>>(&f)) {
        put_header(0x1A, list);
        if (!in->empty()) {
          put_header(0x0A, take());
          for (auto x : *in) p_ = protobuf_wire::put_varint(p_, static_cast<std::uint64_t>(x));
        }
      }
      if (unknown) put(unknown->second);
    }
    if (unknown) put(unknown->first);
  }

  void put_features(char tag, const example& ex, const extra_feature* extra) {
    using protobuf_wire::field_size;
    put_header(tag, take());
    for_each_entry(ex, extra, [&](std::string_view key, const feature* f, const unknown_pair* unknown) {
      if (f) {
        std::size_t value = feature_size_at(*f, unknown);
        put_header(0x0A, field_size(key.size()) + field_size(value));
        put_field(0x0A, key);
        put_header(0x12, value);
        put_feature(*f, unknown);
      } else {
        std::size_t value = extra_feature_size(*extra);
        put_header(0x0A, field_size(key.size()) + field_size(value));
        put_field(0x0A, key);
        put_header(0x12, value);
        put_header(0x0A, field_size(extra->value.size()));
        put_field(0x0A, extra->value);
      }
    });
    put(ex.unknown.in_features);
  }

  // A feature's encoded size from the sizes pass 1 stored (the next one to take).
  std::size_t feature_size_at(const feature& f, const unknown_pair* unknown) const {
    std::size_t tail = unknown ? unknown->first.size() : 0;
    if (std::holds_alternative<std::monostate>(f)) return tail;
    return protobuf_wire::field_size(sizes_[next_]) + tail;
  }

  void put_feature_lists(const sequence_example& seq) {
    using protobuf_wire::field_size;
    put_header(0x12, take());
    for (const auto& [key, list] : seq.feature_lists) {
      std::size_t body = take();
      put_header(0x0A, field_size(key.size()) + field_size(body));
      put_field(0x0A, key);
      put_header(0x12, body);
      for (std::size_t i = 0; i < list.features.size(); ++i) {
        const unknown_pair* unknown = list_unknown(list, i);
        put_header(0x0A, feature_size_at(list.features[i], unknown));
        put_feature(list.features[i], unknown);
      }
      put(list.unknown);
    }
    put(seq.unknown_in_feature_lists);
  }

  std::vector<std::size_t> sizes_;
  std::size_t next_ = 0;
  char* p_ = nullptr;
};

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
      if (type == 3 || type == 4) c.fail({"no groups"}, {"a group"});
      c.keep_unknown(tag_start, type, ex.unknown.in_example);
      continue;
    }
    ex.features_present = true;
    detail::decode_features(c.sub(c.get_bytes()), ex);  // several Features fields merge
  }
  if (!ex.features_present && !bytes.empty()) c.fail_foreign("tf.Example");
  return ex;
}

// Serializes as libprotobuf does with deterministic output: keys in bytewise order, both key
// and value written in every map entry, unknown fields after the known ones.
inline void encode_example(const example& ex, std::string& out) {
  thread_local detail::example_encoder encoder;  // keeps its size table between calls
  encoder.run(ex, out);
}
inline std::string encode_example(const example& ex) {
  std::string out;
  encode_example(ex, out);
  return out;
}

// Parses a serialized tf.SequenceExample as decode_example parses an Example; `name` appears in
// errors.
inline sequence_example decode_sequence_example(std::string_view bytes,
                                                const std::string& name = "<sequence_example>") {
  using namespace protobuf_wire;
  sequence_example seq;
  cursor c{bytes.data(), bytes.data() + bytes.size(), bytes.data(), &name};
  while (!c.done()) {
    const char* tag_start = c.p;
    std::uint64_t tag = c.get_varint();
    std::uint32_t field = static_cast<std::uint32_t>(tag >> 3), type = static_cast<std::uint32_t>(tag & 7);
    if (type == 3 || type == 4) c.fail({"no groups"}, {"a group"});
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
                                 // Only lists with unknown fields keep per-feature entries.
                                 bool any_unknown = false;
                                 for (const auto& u : list.unknown_in_features)
                                   any_unknown |= !u.first.empty() || !u.second.empty();
                                 if (!any_unknown) list.unknown_in_features.clear();
                                 seq.feature_lists[std::move(key)] = std::move(list);
                               });
    } else {
      c.keep_unknown(tag_start, type, seq.unknown);
    }
  }
  if (!seq.context_present && !seq.feature_lists_present && !bytes.empty())
    c.fail_foreign("tf.SequenceExample");
  return seq;
}

// Serializes as libprotobuf does with deterministic output, as encode_example does.
inline void encode_sequence_example(const sequence_example& seq, std::string& out) {
  thread_local detail::example_encoder encoder;
  encoder.run(seq, out);
}
// The same, into a new string.
inline std::string encode_sequence_example(const sequence_example& seq) {
  std::string out;
  encode_sequence_example(seq, out);
  return out;
}

TABLIO_END_NAMESPACE
