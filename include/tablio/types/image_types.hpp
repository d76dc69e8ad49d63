// The types of decoded images and of how they are decoded (types/image.hpp), apart from the
// decoding itself, for what takes or gives images without decoding them (transforms).
#pragma once

#include <tablio/core/config.hpp>
#include <tablio/core/error.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

TABLIO_BEGIN_NAMESPACE

namespace detail {

// What Pillow refuses as a decompression bomb, twice its MAX_IMAGE_PIXELS (it only warns of
// less): a larger image is refused (a few bytes of header can claim any size), so that what one
// image may allocate stays bounded.
inline constexpr std::uint64_t max_image_pixels = 2 * std::uint64_t{89478485};

}  // namespace detail

struct image_transform;

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
  // B, G, R order, as OpenCV (and so Caffe) gives colour images, rather than R, G, B (a
  // transform's mean and std, torchvision's, still name R, G, B).
  bool bgr = false;
  // What is done to the decoded image (types/image_transform.hpp): a crop, a resize, a flip,
  // a mean subtracted; channels_first then lays out its output. None when null.
  std::shared_ptr<const image_transform> transform;
};

// A decoded image: 8-bit pixels (or a transform's float32 values), (H, W, C) or, with
// channels_first, (C, H, W).
struct image {
  std::vector<std::uint8_t> pixels;
  std::vector<float> values;  // float32 values in place of pixels, where a transform gives them
  std::uint32_t height = 0, width = 0, channels = 0;
  bool channels_first = false;
  bool bgr = false;  // three channels in B, G, R order (image_options::bgr), not R, G, B
};

// Whether b starts as a JPEG does (FF D8 FF).
inline bool is_jpeg(std::string_view b) noexcept {
  return b.size() >= 3 && b[0] == '\xff' && b[1] == '\xd8' && b[2] == '\xff';
}
// Whether b starts with PNG's 8-byte signature.
inline bool is_png(std::string_view b) noexcept { return b.starts_with("\x89PNG\r\n\x1a\n"); }

// Whether a WebDataset sample member of this extension holds an image: jpg, jpeg or png, alone
// or last ("left.jpg").
inline bool is_image_extension(std::string_view extension) noexcept {
  for (std::string_view image : {"jpg", "jpeg", "png"})
    if (extension == image || (extension.size() > image.size() && extension.ends_with(image) &&
                               extension[extension.size() - image.size() - 1] == '.'))
      return true;
  return false;
}

TABLIO_END_NAMESPACE
