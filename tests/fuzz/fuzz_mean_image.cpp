// Caffe's mean files (types/mean_image.hpp): any bytes are read or refused with a format_error,
// never allocating more than the bytes could hold; a mean read is then subtracted by Caffe's
// transform from an image of its shape (if small), reading only within the mean.
#include <tablio/types/image_transform.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tablio;
  mean_image m;
  if (!fuzz::accepts([&] { m = read_mean_image(fuzz::as_chars(data, size), "fuzz"); })) return 0;
  const std::uint64_t area = std::uint64_t{m.channels} * m.height * m.width;
  fuzz::require(area <= m.values.size() && m.values.size() * 4 <= size);
  if (area == 0 || area > (1u << 16)) return 0;
  image im;
  im.channels = m.channels;
  im.height = m.height;
  im.width = m.width;
  im.pixels.assign(area, 7);
  image_transform t;
  t.caffe = true;
  t.crop_size = std::min(m.height, m.width);
  t.mirror = true;
  t.mean_file = std::make_shared<const mean_image>(std::move(m));
  image out;
  transform_image(im, t, true, out, "fuzz", std::to_string(size));
  fuzz::require(out.values.size() == std::uint64_t{im.channels} * t.crop_size * t.crop_size);
  return 0;
}
