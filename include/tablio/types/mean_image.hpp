// Caffe's mean image: the BlobProto that compute_image_mean writes to a `.binaryproto` file and
// that `transform_param { mean_file }` subtracts from every image.
//
//   1 num, 2 channels, 3 height, 4 width (int32, the legacy shape)   7 shape (BlobShape:
//   1 dim, repeated int64)   5 data (repeated float, packed or not)   8 double_data
//   6 diff, 9 double_diff (ignored, as Caffe ignores them for a mean)
//
// Read as Caffe's Blob::FromProto reads it: the legacy shape when any of its four fields is
// present, else `shape`; the values from double_data when it has any, else from data, exactly
// as many as the shape holds. The channels, height and width are those of Caffe's legacy
// accessors (the shape's axes 1, 2, 3, an absent axis counting 1), which the image must match.
#pragma once

#include <tablio/codec/protobuf_wire.hpp>
#include <tablio/core/endian.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// A mean image of channels x height x width floats, in Caffe's (C, H, W) order.
struct mean_image {
  std::uint32_t channels = 0, height = 0, width = 0;
  std::vector<float> values;  // at least channels * height * width (a blob of num > 1 has more)
};

namespace detail {

// The floats of a repeated float or double field, packed or one by one.
template <class T>
void append_reals(protobuf_wire::cursor& c, std::uint32_t type, std::vector<double>& out,
                  std::uint64_t most) {
  using namespace protobuf_wire;
  constexpr std::uint32_t one = sizeof(T) == 4 ? fixed32 : fixed64;
  auto take = [&](const char* p) { out.push_back(static_cast<double>(load<std::endian::little, T>(p))); };
  if (type == one) {
    c.need(sizeof(T));
    if (out.size() >= most) c.fail({decimal(most), " values, as the shape holds"}, {"more"});
    take(c.p);
    c.p += sizeof(T);
    return;
  }
  if (type != length_delimited)
    c.fail({"a repeated ", sizeof(T) == 4 ? "float" : "double"}, {"wire type ", decimal(type)});
  std::string_view packed = c.get_bytes();
  if (packed.size() % sizeof(T))
    c.fail({"packed values of ", decimal(sizeof(T)), " bytes"}, {decimal(packed.size()), " bytes"});
  if (out.size() + packed.size() / sizeof(T) > most)
    c.fail({decimal(most), " values, as the shape holds"}, {"more"});
  for (std::size_t i = 0; i < packed.size(); i += sizeof(T)) take(packed.data() + i);
}

}  // namespace detail

// Reads a BlobProto (a `.binaryproto` mean file's bytes) as Caffe's data layer reads its
// mean_file. A damaged message, a shape that does not hold its values, or a negative or
// oversized dimension throws format_error naming `source` and the offset. What the shape
// claims is checked against the bytes before anything is allocated for it.
inline mean_image read_mean_image(std::string_view bytes, const std::string& source) {
  using namespace protobuf_wire;
  cursor c{bytes.data(), bytes.data() + bytes.size(), bytes.data(), &source};
  std::int64_t legacy[4] = {1, 1, 1, 1};
  bool has_legacy = false;
  std::vector<std::int64_t> shape;
  std::vector<double> data, doubles;
  // Each value takes at least 4 bytes: more than that many is a lie about the shape.
  const std::uint64_t most = bytes.size() / 4;
  while (!c.done()) {
    const char* at = c.p;
    const std::uint64_t tag = c.get_varint();
    const auto type = static_cast<std::uint32_t>(tag & 7);
    const std::uint64_t field = tag >> 3;
    if (field >= 1 && field <= 4 && type == varint) {
      legacy[field - 1] = static_cast<std::int32_t>(c.get_varint());
      has_legacy = true;
    } else if (field == 7 && type == length_delimited) {
      cursor s = c.sub(c.get_bytes());
      shape.clear();
      while (!s.done()) {
        const std::uint64_t t = s.get_varint();
        if (t == (1u << 3 | varint)) {
          shape.push_back(static_cast<std::int64_t>(s.get_varint()));
        } else if (t == (1u << 3 | length_delimited)) {
          cursor dims = s.sub(s.get_bytes());
          while (!dims.done()) shape.push_back(static_cast<std::int64_t>(dims.get_varint()));
        } else {
          s.skip(static_cast<std::uint32_t>(t & 7));
        }
      }
    } else if (field == 5) {
      detail::append_reals<float>(c, type, data, most);
    } else if (field == 8) {
      detail::append_reals<double>(c, type, doubles, most);
    } else {
      c.p = at;
      c.get_varint();
      c.skip(type);
    }
  }
  if (has_legacy) shape.assign(legacy, legacy + 4);
  if (shape.size() > 4) c.fail({"a mean of at most 4 axes"}, {decimal(shape.size()), " axes"});
  std::uint64_t count = 1;
  for (std::int64_t d : shape) {
    if (d < 0 || static_cast<std::uint64_t>(d) > most)
      c.fail({"a shape that the values fill"}, {"an axis of ", decimal(d)});
    count *= static_cast<std::uint64_t>(d);
    if (count > most)
      c.fail({"a shape that the values fill"}, {"one of more than ", decimal(most), " values"});
  }
  const std::vector<double>& values = doubles.empty() ? data : doubles;
  if (values.size() != count)
    c.fail({decimal(count), " values, as the shape holds"}, {decimal(values.size())});
  auto axis = [&](std::size_t i) {  // Caffe's LegacyShape(i)
    return static_cast<std::uint32_t>(i < shape.size() ? shape[i] : 1);
  };
  if (std::uint64_t{axis(1)} * axis(2) * axis(3) > count)
    c.fail({"a mean of at least one image"}, {"a shape of ", decimal(count), " values"});
  mean_image m;
  m.channels = axis(1);
  m.height = axis(2);
  m.width = axis(3);
  m.values.assign(values.begin(), values.end());
  return m;
}

TABLIO_END_NAMESPACE
