// Images decoded to pixels: JPEG through libjpeg-turbo's TurboJPEG, PNG through libpng (the
// tablio::jpeg component), to 8-bit arrays with the pixels Pillow gives for the same image
// converted to RGB or L, so that a model trained on either sees the same input:
//
//   tablio::image im;
//   tablio::decode_image(bytes, im, {.channels = 3, .at_least = {224, 224}}, "shard-0.tar", key);
//
// JPEG: the accurate integer DCT and smooth chroma upsampling, as Pillow's decoder leaves them;
// at_least scales the decoding by 1/2, 1/4 or 1/8 in the DCT, as Pillow's Image.draft does for
// that size, so that a large photo is not decoded whole to be shrunk. PNG: palette, gray of
// 1, 2 or 4 bits and 16-bit color are expanded or reduced as Pillow reads them; alpha is
// dropped, as Pillow's convert("RGB") drops it. What Pillow converts by its own formulas
// (CMYK JPEG, 16-bit gray PNG) is refused rather than given other pixels. Bad or cut images are
// a format_error naming the file and key; a JPEG with corrupt data that libjpeg decodes past
// with a warning is decoded, as Pillow decodes it.
#pragma once

#include <tablio/core/config.hpp>
#include <tablio/core/error.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// How decode_image gives the pixels: channels, a size to draft a JPEG down to, layout and
// colour order.
struct image_options {
  // 3: RGB (gray replicated); 1: gray (L: color converted as Pillow's convert("L") does for
  // JPEG's own luma only: other images are refused); 0: as stored, 1 or 3.
  unsigned channels = 3;
  // Scale a JPEG down in its DCT by the largest of 1/2, 1/4, 1/8 that leaves it at least this
  // wide and high (Pillow's draft); 0: full size.
  struct size {
    std::uint32_t width = 0, height = 0;
  } at_least;
  // Channels first (C, H, W), as Caffe's data layer gives images, rather than (H, W, C).
  bool channels_first = false;
  // B, G, R order, as OpenCV (and so Caffe) gives colour images, rather than R, G, B.
  bool bgr = false;
};

// A decoded image: 8-bit pixels, (H, W, C) or, with channels_first, (C, H, W).
struct image {
  std::vector<std::uint8_t> pixels;
  std::uint32_t height = 0, width = 0, channels = 0;
  bool channels_first = false;
};

// Whether b starts as a JPEG does (FF D8 FF).
inline bool is_jpeg(std::string_view b) noexcept {
  return b.size() >= 3 && b[0] == '\xff' && b[1] == '\xd8' && b[2] == '\xff';
}
// Whether b starts with PNG's 8-byte signature.
inline bool is_png(std::string_view b) noexcept { return b.starts_with("\x89PNG\r\n\x1a\n"); }

TABLIO_END_NAMESPACE

#if defined(TABLIO_WITH_JPEG)
#include <tablio/types/image_decoding.hpp>
#endif
