// Images (types/image.hpp): any bytes are decoded or refused with a format_error, whole or only
// the part a transform reads (a crop at a DCT scale, the rows under it left unread where the data
// holds its end), then resized, flipped and normalised within the decoded pixels. The first byte
// chooses the transform and the channels. Images said to be larger than 2^20 pixels are left
// out: their cost is the decoder's, bounded by the library's limit, not a finding.
#include <tablio/types/image.hpp>

#include <cstring>
#include <string>

#include "fuzz_support.hpp"

namespace {

// The most pixels a PNG's IHDR or any of a JPEG's frame headers (SOFn) says the image has.
std::uint64_t claimed_pixels(std::string_view bytes) {
  auto at = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
  auto big_endian = [&](std::size_t i, int n) {
    std::uint64_t v = 0;
    for (int k = 0; k < n; ++k) v = v << 8 | at(i + static_cast<std::size_t>(k));
    return v;
  };
  if (bytes.size() >= 24 && bytes.substr(1, 3) == "PNG") return big_endian(16, 4) * big_endian(20, 4);
  std::uint64_t most = 0;
  for (std::size_t i = 0; i + 9 <= bytes.size(); ++i)
    if (at(i) == 0xFF && (at(i + 1) & 0xF0) == 0xC0 && at(i + 1) != 0xC4 && at(i + 1) != 0xC8 &&
        at(i + 1) != 0xCC)
      most = std::max(most, big_endian(i + 5, 2) * big_endian(i + 7, 2));
  return most;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tablio;
  if (size < 1) return 0;
  const std::uint8_t choice = data[0];
  const std::string_view bytes = fuzz::as_chars(data + 1, size - 1);
  if (claimed_pixels(bytes) > (std::uint64_t{1} << 20)) return 0;
  auto t = std::make_shared<image_transform>();
  switch (choice % 6) {
    case 0:
      break;  // decoded whole
    case 1:
      t->random_resized_crop.size = 24;
      t->flip = 0.5;
      t->dct_scaling = true;
      break;
    case 2:
      t->resize = 30;
      t->center_crop = 24;
      t->mean = {0.5f, 0.4f, 0.3f};
      t->std = {0.2f, 0.2f, 0.2f};
      break;
    case 3:
      t->caffe = true;
      t->crop_size = 8;
      t->mirror = true;
      break;
    case 4:
      t->center_crop = 40;
      break;  // padded where the image is smaller
    case 5:
      t->random_resized_crop.size = 7;
      t->dct_scaling = true;
      break;
  }
  image_options o;
  o.channels = (choice >> 3) % 2 ? 0 : 3;
  o.channels_first = (choice >> 4) % 2 != 0;
  o.bgr = (choice >> 5) % 2 != 0;
  if (t->any()) o.transform = t;
  image out;
  if (!fuzz::accepts([&] { decode_image(bytes, out, o, "fuzz", std::to_string(size)); })) return 0;
  const std::uint64_t area = std::uint64_t{out.width} * out.height * out.channels;
  fuzz::require(out.pixels.size() == area || out.values.size() == area);
  if (t->random_resized_crop.size)
    fuzz::require(out.width == t->random_resized_crop.size && out.height == t->random_resized_crop.size);
  return 0;
}
