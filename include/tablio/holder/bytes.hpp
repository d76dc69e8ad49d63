// bytes_holder: any payload, kept unchanged. In a record framing (TFRecord, LMDB) the record
// is the payload itself; in an archive it is a length-prefixed string object ("\0B", then
// Kaldi's int32 length and the bytes; in text mode "length bytes").
//
// encoded_holder<T, Format>: a value stored as its encoding (a protobuf message): the record
// is the encoding, and an archive holds the encoding as bytes_holder holds bytes. Format has
//   static void encode(const T&, std::string& out);
//   static void decode(std::string_view bytes, T&, const std::string& name);
// and may name its records' file extension (`static constexpr std::string_view extension`).
#pragma once

#include <tablio/codec/std/string.hpp>
#include <tablio/holder/holder.hpp>

#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

// A Holder of std::string payloads, and a record_taking_holder: the record is the payload.
class bytes_holder : public holder<std::string> {
 public:
  // The record_holder concept: the record is v, copied.
  static void encode_record(std::string& out, const std::string& v) { out = v; }
  // The record_holder concept: the value is the record's bytes, copied; never fails.
  void decode_record(std::string_view bytes, const std::string& /*name*/) { value_.assign(bytes); }
  // The record_taking_holder concept: takes the record by swapping strings, with no copy.
  void take_record(std::string& record, const std::string& /*name*/) { value_.swap(record); }
};

// A Holder and record_holder of T stored as its encoding by Format (see tablio/holder/bytes.hpp).
template <class T, class Format>
class encoded_holder : public holder_storage<T> {
 public:
  static constexpr std::string_view extension = [] {
    if constexpr (requires { Format::extension; })
      return std::string_view(Format::extension);
    else
      return std::string_view("bin");
  }();

  // The Holder concept: writes v's encoding as bytes_holder writes bytes.
  static void write(writer& w, bool binary, const T& v) {
    thread_local std::string bytes;
    Format::encode(v, bytes);
    bytes_holder::write(w, binary, bytes);
  }
  // The Holder concept: reads the bytes as bytes_holder does and decodes them; the value may
  // view the holder's copy of them until the next read.
  void read(reader& r) {
    bytes_.read(r);
    Format::decode(bytes_.value(), this->value_, r.name());
  }
  // The record_holder concept: the record is v's encoding.
  static void encode_record(std::string& out, const T& v) { Format::encode(v, out); }
  // The record_holder concept: decodes the record; Format's errors name `name`.
  void decode_record(std::string_view bytes, const std::string& name) {
    Format::decode(bytes, this->value_, name);
  }

 private:
  bytes_holder bytes_;  // an archive's copy of the bytes, which a view may point into
};

TABLIO_END_NAMESPACE
