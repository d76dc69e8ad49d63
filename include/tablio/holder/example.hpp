// Holders of tf.Example and tf.SequenceExample values.
//
// In a TFRecord file (or any record framing) the record is the message's wire bytes, written
// as libprotobuf writes them deterministically. A table's key can live in a bytes feature
// (of the Example, of the SequenceExample's context): it is added on write and taken out on
// read, so a value goes through a keyed TFRecord table unchanged; a value that has a feature
// of that name is refused on write, since the key would replace it. In an archive, the wire
// bytes are stored as a bytes_holder stores them.
//
// example_view_holder reads without copying: its value views the record and is valid until
// the table moves on. example_struct_holder<T> holds a user's aggregate stored as an Example
// (see types/example_mapping.hpp).
#pragma once

#include <tablio/holder/bytes.hpp>
#include <tablio/types/example.hpp>
#include <tablio/types/example_mapping.hpp>
#include <tablio/types/example_view.hpp>

#include <optional>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

namespace detail {

[[noreturn]] TABLIO_COLD inline void fail_key_feature(const std::string& name, std::string_view key_name,
                                                      bool absent) {
  throw_format_error(name, std::nullopt, {}, {"a bytes feature '", key_name, "' holding the key"},
                     {absent ? "no such feature" : "a feature of another kind or size"});
}

// The key a record keeps in a bytes feature of `features`, removed from them.
inline std::string take_key_feature(example& features, std::string_view key_name, const std::string& name) {
  auto it = features.features.find(std::string(key_name));
  auto* values = it == features.features.end() ? nullptr : std::get_if<std::vector<std::string>>(&it->second);
  if (!values || values->size() != 1) fail_key_feature(name, key_name, it == features.features.end());
  std::string key = std::move(values->front());
  features.features.erase(it);
  features.unknown.in_feature.erase(std::string(key_name));
  return key;
}

// The key a viewed record keeps in a bytes feature, removed from its features.
inline std::string take_key_feature(example_view& features, std::string_view key_name,
                                    const std::string& name) {
  std::optional<feature_view> f = features.take(key_name);
  if (!f || f->kind != feature_kind::bytes || f->count != 1) fail_key_feature(name, key_name, !f);
  return std::string(f->bytes().front());
}

inline example& features_of(example& ex) noexcept { return ex; }
inline example& features_of(sequence_example& seq) noexcept { return seq.context; }
inline const example& features_of(const example& ex) noexcept { return ex; }
inline const example& features_of(const sequence_example& seq) noexcept { return seq.context; }

// A value to be written with its key in feature key_name must not have a feature of that name:
// the key would replace it, and reading would take it out, so the value would not come back.
inline void check_no_key_feature(const example& features, std::string_view key_name, std::string_view key) {
  if (features.features.count(std::string(key_name)) != 0)
    throw_usage_error({"the Example of key '", key, "' has a feature '", key_name, "' of its own, where key=",
                       key_name, " keeps the key: rename the feature, or choose another key="});
}

struct example_format {
  static constexpr std::string_view extension = "example";
  static void encode(const example& v, std::string& out) { encode_example(v, out); }
  static void decode(std::string_view bytes, example& v, const std::string& name) {
    v = decode_example(bytes, name);
  }
};
struct sequence_example_format {
  static constexpr std::string_view extension = "seqexample";
  static void encode(const sequence_example& v, std::string& out) { encode_sequence_example(v, out); }
  static void decode(std::string_view bytes, sequence_example& v, const std::string& name) {
    v = decode_sequence_example(bytes, name);
  }
};
struct example_view_format {
  static constexpr std::string_view extension = "example";
  static void encode(const example_view& v, std::string& out) { encode_example(v.to_example(), out); }
  static void decode(std::string_view bytes, example_view& v, const std::string& name) {
    v.parse(bytes, name);
  }
};

// A message whose records can keep a table's key in a bytes feature (of an Example, of a
// SequenceExample's context).
template <class T, class Format>
class keyed_message_holder : public encoded_holder<T, Format> {
 public:
  using encoded_holder<T, Format>::encode_record;
  static void encode_record(std::string& out, const T& v, std::string_view key_name, std::string_view key) {
    check_no_key_feature(features_of(v), key_name, key);
    thread_local example_encoder encoder;
    example_encoder::extra_feature extra{key_name, key};
    encoder.run(v, out, &extra);
  }
  std::string take_record_key(std::string_view key_name, const std::string& name) {
    return take_key_feature(features_of(this->value_), key_name, name);
  }
};

}  // namespace detail

// The Holder of a table of tf.Examples: each entry one serialized Example, read into an example.
using example_holder = detail::keyed_message_holder<example, detail::example_format>;
// The Holder of a table of tf.SequenceExamples, read into a sequence_example.
using sequence_example_holder =
    detail::keyed_message_holder<sequence_example, detail::sequence_example_format>;

namespace detail {
class example_view_record_holder : public encoded_holder<example_view, example_view_format> {
 public:
  using encoded_holder<example_view, example_view_format>::encode_record;
  static void encode_record(std::string& out, const example_view& v, std::string_view key_name,
                            std::string_view key) {
    example_holder::encode_record(out, v.to_example(), key_name, key);
  }
  std::string take_record_key(std::string_view key_name, const std::string& name) {
    return take_key_feature(this->value_, key_name, name);
  }
};
}  // namespace detail

// Reads Examples as views into the record (or, from an archive, into the holder's own copy
// of the bytes), keys kept in a feature (key=NAME) included. Writing takes owned examples: a
// view is for reading.
using example_view_holder = detail::example_view_record_holder;

// A Holder and keyed_record_holder of a user's aggregate T, stored as the Example
// to_example(T) makes (types/example_mapping.hpp): T needs example_field_names, or Boost.PFR's
// field names.
template <class T>
class example_struct_holder : public holder_storage<T> {
 public:
  static constexpr std::string_view extension = "example";
  // The Holder concept: writes the Example of v as example_holder does.
  static void write(writer& w, bool binary, const T& v) { example_holder::write(w, binary, to_example(v)); }
  // The Holder concept: reads an Example and fills the value from it; throws format_error
  // naming the feature that is missing or of the wrong kind or size.
  void read(reader& r) {
    example_.read(r);
    from_example(example_.value(), this->value_, r.name());
  }
  // The record_holder concept: the record is the Example of v, in wire bytes.
  static void encode_record(std::string& out, const T& v) { encode_example(to_example(v), out); }
  // The keyed_record_holder concept: the same, with the key in bytes feature key_name; throws
  // usage_error when v's Example has a feature of that name.
  static void encode_record(std::string& out, const T& v, std::string_view key_name, std::string_view key) {
    example_holder::encode_record(out, to_example(v), key_name, key);
  }
  // The record_holder concept: decodes the Example and fills the value from it (features no
  // field names, as the key's, are ignored); throws format_error as read() does.
  void decode_record(std::string_view bytes, const std::string& name) {
    example_.decode_record(bytes, name);
    from_example(example_.value(), this->value_, name);
  }
  // The keyed_record_holder concept: the key the last record decoded kept in bytes feature
  // key_name; throws format_error when it has no such feature of one bytes value.
  std::string take_record_key(std::string_view key_name, const std::string& name) {
    return example_.take_record_key(key_name, name);
  }

 private:
  example_holder example_;
};

TABLIO_END_NAMESPACE
