// Caffe's Datum (proto2, package caffe): an image or a feature vector with its label.
//
//   1 channels, 2 height, 3 width (int32)   4 data (bytes; CHW order, or a whole PNG/JPEG
//   5 label (int32)                          file when encoded)
//   6 float_data (repeated float)            7 encoded (bool)
//
// The encoder writes what Caffe writes: fields in number order, float_data unpacked (tag 35
// and 4 bytes per value), a negative int32 as a 10-byte varint, and proto2 presence kept:
// channels, height, width and label are written even when 0 (as Caffe's converters set
// them), data when it is non-empty or was present, encoded when true or present. The decoder
// also accepts packed float_data, fields in any order (the last value wins), and unknown
// fields, which it keeps and writes back after the known ones; but a record all of whose
// fields are unknown is another message type's (a tf.Example), and a format_error.
//
// datum_view is the same message with `data` viewing the record; it skips unknown fields (a
// view is for reading values, a datum for round trips).
#pragma once

#include <tablio/codec/protobuf_wire.hpp>
#include <tablio/core/endian.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// Caffe's Datum message, its fields as members. Bytes is std::string (datum: owns its data) or
// std::string_view (datum_view: views the record it was decoded from).
template <class Bytes>
struct basic_datum {
  std::int32_t channels = 0;
  std::int32_t height = 0;
  std::int32_t width = 0;
  Bytes data{};
  std::int32_t label = 0;
  std::vector<float> float_data;
  bool encoded = false;

  // proto2 presence of the optional fields: what the encoder writes.
  struct fields {
    bool channels = true, height = true, width = true, data = false, label = true, encoded = false;
    bool operator==(const fields&) const = default;  // The same fields present.
  } present;
  Bytes unknown{};  // fields this library does not know, in wire form

  bool operator==(const basic_datum&) const = default;  // Every field, presence and unknown bytes equal.
};

// A Caffe Datum that owns its pixel bytes: what a table of Datums reads and writes.
using datum = basic_datum<std::string>;
// A Caffe Datum whose pixel bytes view the serialized record: no copy, valid while the record is.
using datum_view = basic_datum<std::string_view>;

// Decodes a serialized Datum; with datum_view, `data` views `bytes`.
template <class Bytes>
void decode_datum(std::string_view bytes, basic_datum<Bytes>& d, const std::string& name = "<datum>") {
  using namespace protobuf_wire;
  // Reset field by field: the vectors keep their capacity for the next record.
  d.channels = d.height = d.width = d.label = 0;
  d.data = Bytes{};
  d.float_data.clear();
  d.encoded = false;
  d.present = {false, false, false, false, false, false};
  d.unknown = Bytes{};
  cursor c{bytes.data(), bytes.data() + bytes.size(), bytes.data(), &name};
  auto int32 = [&](std::int32_t& field, bool& present) {
    field = static_cast<std::int32_t>(static_cast<std::uint32_t>(c.get_varint()));  // as protobuf truncates
    present = true;
  };
  std::size_t unknown_fields = 0;
  auto keep_unknown = [&](const char* at, std::uint32_t type) {
    ++unknown_fields;
    if (type == 3 || type == 4) c.fail({"no groups"}, {"a group"});
    c.skip(type);
    if constexpr (std::is_same_v<Bytes, std::string>) d.unknown.append(at, c.p);
  };
  // What Caffe's converters write starts with channels, height and width, each a one-byte
  // varint (an image's dimensions): taken in one step, then the loop reads the rest.
  const auto* u = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.size() >= 6 && u[0] == 0x08 && u[2] == 0x10 && u[4] == 0x18 &&
      ((u[1] | u[3] | u[5]) & 0x80) == 0) {
    d.channels = u[1];
    d.height = u[3];
    d.width = u[5];
    d.present.channels = d.present.height = d.present.width = true;
    c.p += 6;
  }
  while (!c.done()) {
    const char* at = c.p;
    std::uint64_t tag = c.get_varint();
    std::uint32_t type = static_cast<std::uint32_t>(tag & 7);
    switch (tag >> 3) {
      case 1:
        if (type == varint) {
          int32(d.channels, d.present.channels);
          continue;
        }
        break;
      case 2:
        if (type == varint) {
          int32(d.height, d.present.height);
          continue;
        }
        break;
      case 3:
        if (type == varint) {
          int32(d.width, d.present.width);
          continue;
        }
        break;
      case 4:
        if (type == length_delimited) {
          d.data = Bytes(c.get_bytes());
          d.present.data = true;
          continue;
        }
        break;
      case 5:
        if (type == varint) {
          int32(d.label, d.present.label);
          continue;
        }
        break;
      case 6:
        if (type == fixed32) {
          c.need(4);
          d.float_data.push_back(load<std::endian::little, float>(c.p));
          c.p += 4;
          continue;
        }
        if (type == length_delimited) {
          std::string_view packed = c.get_bytes();
          if (packed.size() % 4)
            c.fail({"packed floats (a multiple of 4 bytes)"}, {decimal(packed.size()), " bytes"});
          std::size_t at_end = d.float_data.size();
          d.float_data.resize(at_end + packed.size() / 4);
          load_array<std::endian::little>(d.float_data.data() + at_end, packed.data(), packed.size() / 4);
          continue;
        }
        break;
      case 7:
        if (type == varint) {
          d.encoded = c.get_varint() != 0;
          d.present.encoded = true;
          continue;
        }
        break;
      default:
        break;
    }
    keep_unknown(at, type);
  }
  // A record with unknown fields and nothing of a Datum that would be written again (an empty
  // packed float list is not) is another type's: read as a Datum it would be an empty one.
  const auto& p = d.present;
  const bool any_known =
      p.channels || p.height || p.width || p.data || p.label || p.encoded || !d.float_data.empty();
  if (unknown_fields != 0 && !any_known) c.fail_foreign("Caffe Datum");
}

// The same, returning the Datum: decode_datum(bytes) owns its bytes, decode_datum<std::string_view>
// views them.
template <class Bytes = std::string>
basic_datum<Bytes> decode_datum(std::string_view bytes, const std::string& name = "<datum>") {
  basic_datum<Bytes> d;
  decode_datum(bytes, d, name);
  return d;
}

// Serializes d as Caffe's protobuf serializer does (fields in number order, as the header says)
// into out, replacing what out held.
template <class Bytes>
void encode_datum(const basic_datum<Bytes>& d, std::string& out) {
  using protobuf_wire::varint_size;
  auto int32_size = [](std::int32_t v) {
    return 1 + varint_size(static_cast<std::uint64_t>(static_cast<std::int64_t>(v)));
  };
  const bool data = d.present.data || !d.data.empty(), encoded = d.present.encoded || d.encoded;
  std::size_t size =
      (d.present.channels ? int32_size(d.channels) : 0) + (d.present.height ? int32_size(d.height) : 0) +
      (d.present.width ? int32_size(d.width) : 0) + (data ? protobuf_wire::field_size(d.data.size()) : 0) +
      (d.present.label ? int32_size(d.label) : 0) + 5 * d.float_data.size() + (encoded ? 2 : 0) +
      d.unknown.size();
  out.resize(size);
  char* p = out.data();
  auto put_int32 = [&](char tag, std::int32_t v) {
    *p++ = tag;
    p = protobuf_wire::put_varint(p, static_cast<std::uint64_t>(static_cast<std::int64_t>(v)));
  };
  if (d.present.channels) put_int32(0x08, d.channels);
  if (d.present.height) put_int32(0x10, d.height);
  if (d.present.width) put_int32(0x18, d.width);
  if (data) {
    *p++ = 0x22;
    p = protobuf_wire::put_varint(p, d.data.size());
    if (!d.data.empty()) std::memcpy(p, d.data.data(), d.data.size());
    p += d.data.size();
  }
  if (d.present.label) put_int32(0x28, d.label);
  for (float f : d.float_data) {
    *p++ = 0x35;
    store<std::endian::little>(p, f);
    p += 4;
  }
  if (encoded) {
    *p++ = 0x38;
    *p++ = d.encoded ? 1 : 0;
  }
  if (!d.unknown.empty()) std::memcpy(p, d.unknown.data(), d.unknown.size());
}

// The same, returning the bytes.
template <class Bytes>
std::string encode_datum(const basic_datum<Bytes>& d) {
  std::string out;
  encode_datum(d, out);
  return out;
}

TABLIO_END_NAMESPACE
