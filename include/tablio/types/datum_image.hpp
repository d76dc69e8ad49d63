// A Caffe Datum's image and back: an encoded Datum's image decoded, a raw Datum's (C, H, W)
// pixels transformed as Caffe's DataTransformer::Transform(Datum) or torchvision's transforms
// take them, and a decoded image stored as the raw Datum Caffe's convert_imageset writes.
#pragma once

#include <tablio/core/error.hpp>
#include <tablio/types/datum.hpp>
#include <tablio/types/image.hpp>
#include <tablio/types/image_transform.hpp>

#include <cstdint>
#include <optional>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

// Applies t to a raw Datum's image (C, H, W), bytes or float_data, into out, with the draws for
// `key`: Caffe's transform_param as DataTransformer::Transform(Datum) applies it (float32
// (C, H, W) values), or torchvision's (bytes of 1 or 3 channels, in the stored channel order,
// B, G, R as Caffe stores colour, laid out as channels_first says). A Datum whose sizes do not hold its data,
// or that torchvision's transforms cannot take, is a format_error naming source and key.
template <class Bytes>
void transform_raw_datum(const basic_datum<Bytes>& d, const image_transform& t, bool channels_first,
                         image& out, std::string_view source, std::string_view key) {
  const bool floats = d.data.empty() && !d.float_data.empty();
  const std::size_t values = floats ? d.float_data.size() : d.data.size();
  if (d.channels <= 0 || d.height <= 0 || d.width <= 0 ||
      std::uint64_t(d.channels) * std::uint64_t(d.height) * std::uint64_t(d.width) != values)
    throw_format_error(source, std::nullopt, key, {"a Datum whose channels, height and width hold its data"},
                       {decimal(d.channels), "x", decimal(d.height), "x", decimal(d.width), " for ",
                        decimal(values), " values"});
  const auto c = static_cast<std::uint32_t>(d.channels), h = static_cast<std::uint32_t>(d.height),
             w = static_cast<std::uint32_t>(d.width);
  if (t.caffe) {
    check_transform(t, c, w, h, source, key);
    const transform_draw draw = draw_transform(t, w, h, key);
    out.pixels.clear();
    out.values.resize(std::size_t{c} * draw.width * draw.height);
    out.channels = c;
    out.width = draw.width;
    out.height = draw.height;
    out.channels_first = true;
    const std::size_t plane = std::size_t{h} * w,
                      corner = static_cast<std::size_t>(draw.top) * w + static_cast<std::size_t>(draw.left);
    if (floats)
      detail::caffe_transform(d.float_data.data() + corner, plane, w, 1, c, h, w, t, draw, out.values.data());
    else
      detail::caffe_transform(reinterpret_cast<const std::uint8_t*>(d.data.data()) + corner, plane, w, 1, c,
                              h, w, t, draw, out.values.data());
    return;
  }
  if (floats || (c != 1 && c != 3))
    throw_format_error(source, std::nullopt, key,
                       {"a Datum of 1 or 3 channels of bytes, for torchvision's transforms"},
                       {floats ? "float_data" : "other channels"});
  thread_local image laid_out;  // (H, W, C), as the transforms take it
  laid_out.pixels.resize(values);
  laid_out.values.clear();
  laid_out.channels = c;
  laid_out.height = h;
  laid_out.width = w;
  laid_out.channels_first = false;
  laid_out.bgr = c == 3;  // as Caffe stores a colour image
  const auto* planes = reinterpret_cast<const std::uint8_t*>(d.data.data());
  const std::size_t plane = std::size_t{h} * w;
  for (std::size_t i = 0; i < plane; ++i)
    for (std::uint32_t k = 0; k < c; ++k) laid_out.pixels[i * c + k] = planes[k * plane + i];
  transform_image(laid_out, t, channels_first, out, source, key);
}

#if defined(TABLIO_WITH_JPEG)
// A Datum's image as `options` asks for it, into out: an encoded Datum's decoded (and
// transformed), a raw one's transformed (transform_raw_datum); false for a raw Datum and no
// transform, whose pixels are already what it holds.
template <class Bytes>
bool datum_image(const basic_datum<Bytes>& d, const image_options& options, image& out,
                 std::string_view source, std::string_view key) {
  if (d.encoded) {
    decode_image(d.data, out, options, source, key);
    return true;
  }
  if (!options.transform || !options.transform->any()) return false;
  transform_raw_datum(d, *options.transform, options.channels_first, out, source, key);
  return true;
}
#endif

// Stores a decoded image in `out` as Caffe's convert_imageset stores one (CVMatToDatum):
// channels, height, width and its (C, H, W) bytes, not encoded; a transform's float32 values
// go to float_data. The label is left as it is. The image is (C, H, W), or (H, W) of one channel.
inline void store_image(const image& im, datum& out) {
  if (!im.channels_first && im.channels != 1)
    throw_usage_error({"a Datum stores an image's channels first: decode it with channels_first"});
  out.channels = static_cast<std::int32_t>(im.channels);
  out.height = static_cast<std::int32_t>(im.height);
  out.width = static_cast<std::int32_t>(im.width);
  out.encoded = false;
  out.present.channels = out.present.height = out.present.width = out.present.encoded = true;
  if (im.values.empty()) {
    out.data.assign(reinterpret_cast<const char*>(im.pixels.data()), im.pixels.size());
    out.present.data = true;
    out.float_data.clear();
  } else {
    out.data.clear();
    out.present.data = false;
    out.float_data = im.values;
  }
}

TABLIO_END_NAMESPACE
