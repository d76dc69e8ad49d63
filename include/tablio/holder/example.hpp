// Holders of tf.Example and tf.SequenceExample values.
//
// In a TFRecord file (or any record framing) the record is the message's wire bytes, written
// as libprotobuf writes them deterministically. A table's key can live in a bytes feature
// (of the Example, of the SequenceExample's context): it is added on write and taken out on
// read, so a value goes through a keyed TFRecord table unchanged. In an archive, the wire
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

#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

namespace detail {

// The key a record keeps in a bytes feature of `features`, removed from them.
inline std::string take_key_feature(example& features, std::string_view key_name, const std::string& name) {
  auto it = features.features.find(std::string(key_name));
  const auto* values =
      it == features.features.end() ? nullptr : std::get_if<std::vector<std::string>>(&it->second);
  if (!values || values->size() != 1)
    throw format_error(
        {name, std::nullopt, {}}, "a bytes feature '" + std::string(key_name) + "' holding the key",
        it == features.features.end() ? "no such feature" : "a feature of another kind or size");
  std::string key = std::move(values->front());
  features.features.erase(it);
  features.unknown.in_feature.erase(std::string(key_name));
  return key;
}

// The archive form of a message: its wire bytes as a bytes object.
template <class Encode>
void write_message_object(writer& w, bool binary, Encode encode) {
  thread_local std::string bytes;
  encode(bytes);
  bytes_holder::write(w, binary, bytes);
}

}  // namespace detail

class example_holder : public holder_storage<example> {
 public:
  static void write(writer& w, bool binary, const example& v) {
    detail::write_message_object(w, binary, [&](std::string& out) { encode_example(v, out); });
  }
  void read(reader& r) {
    bytes_.read(r);
    value_ = decode_example(bytes_.value(), r.name());
  }
  static void encode_record(std::string& out, const example& v) { encode_example(v, out); }
  static void encode_record(std::string& out, const example& v, std::string_view key_name,
                            std::string_view key) {
    thread_local detail::example_encoder encoder;
    detail::example_encoder::extra_feature extra{key_name, key};
    encoder.run(v, out, &extra);
  }
  void decode_record(std::string_view bytes, const std::string& name) {
    value_ = decode_example(bytes, name);
  }
  std::string take_record_key(std::string_view key_name, const std::string& name) {
    return detail::take_key_feature(value_, key_name, name);
  }

 private:
  bytes_holder bytes_;
};

class sequence_example_holder : public holder_storage<sequence_example> {
 public:
  static void write(writer& w, bool binary, const sequence_example& v) {
    detail::write_message_object(w, binary, [&](std::string& out) { encode_sequence_example(v, out); });
  }
  void read(reader& r) {
    bytes_.read(r);
    value_ = decode_sequence_example(bytes_.value(), r.name());
  }
  static void encode_record(std::string& out, const sequence_example& v) { encode_sequence_example(v, out); }
  static void encode_record(std::string& out, const sequence_example& v, std::string_view key_name,
                            std::string_view key) {
    thread_local detail::example_encoder encoder;
    detail::example_encoder::extra_feature extra{key_name, key};
    encoder.run(v, out, &extra);
  }
  void decode_record(std::string_view bytes, const std::string& name) {
    value_ = decode_sequence_example(bytes, name);
  }
  std::string take_record_key(std::string_view key_name, const std::string& name) {
    return detail::take_key_feature(value_.context, key_name, name);
  }

 private:
  bytes_holder bytes_;
};

// Reads Examples as views into the record (or, from an archive, into the holder's own copy
// of the bytes). Writing takes owned examples: a view is for reading.
class example_view_holder : public holder_storage<example_view> {
 public:
  static void write(writer& w, bool binary, const example_view& v) {
    example_holder::write(w, binary, v.to_example());
  }
  void read(reader& r) {
    bytes_.read(r);
    value_.parse(bytes_.value(), r.name());
  }
  void decode_record(std::string_view bytes, const std::string& name) { value_.parse(bytes, name); }
  static void encode_record(std::string& out, const example_view& v) { encode_example(v.to_example(), out); }

 private:
  bytes_holder bytes_;
};

template <class T>
class example_struct_holder : public holder_storage<T> {
 public:
  static void write(writer& w, bool binary, const T& v) { example_holder::write(w, binary, to_example(v)); }
  void read(reader& r) {
    example_.read(r);
    from_example(example_.value(), this->value_, r.name());
  }
  static void encode_record(std::string& out, const T& v) { encode_example(to_example(v), out); }
  static void encode_record(std::string& out, const T& v, std::string_view key_name, std::string_view key) {
    example_holder::encode_record(out, to_example(v), key_name, key);
  }
  void decode_record(std::string_view bytes, const std::string& name) {
    example_.decode_record(bytes, name);
    from_example(example_.value(), this->value_, name);
  }
  std::string take_record_key(std::string_view key_name, const std::string& name) {
    return example_.take_record_key(key_name, name);
  }

 private:
  example_holder example_;
};

TABLIO_END_NAMESPACE
