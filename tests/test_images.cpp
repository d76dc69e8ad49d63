// Images decoded by tablio::jpeg against the pixels Pillow decodes from the same files
// (tests/data/images, written and decoded by Pillow: images/make.py), and bad images.
#include <tablio/types/image.hpp>

#include "test_support.hpp"

using namespace tablio;

namespace {

std::string images(const std::string& name) { return test::data_path("images/" + name); }

image decoded(const std::string& name, image_options options = {}) {
  image out;
  decode_image(test::read_file(images(name)), out, options, name, "key");
  return out;
}

std::string pixels(const image& im) { return std::string(im.pixels.begin(), im.pixels.end()); }

image_options channels(unsigned n) {
  image_options o;
  o.channels = n;
  return o;
}

// PNG's chunk CRC (CRC-32 of ISO 3309), for a chunk changed on purpose.
std::uint32_t crc32(std::string_view bytes) {
  std::uint32_t c = 0xffffffffu;
  for (unsigned char b : bytes) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return c ^ 0xffffffffu;
}

}  // namespace

TEST_CASE("JPEG and PNG images decode to the pixels Pillow gives", "[images]") {
  for (const char* name : {"q90.jpg", "q75-444.jpg", "progressive.jpg", "gray.jpg", "rgb.png", "rgba.png",
                           "palette.png", "bilevel.png", "gray-alpha.png"}) {
    INFO(name);
    image rgb = decoded(name);
    CHECK(rgb.channels == 3);
    CHECK(pixels(rgb) == test::read_file(images(std::string(name) + ".rgb")));
  }
  for (const char* name : {"gray.jpg", "bilevel.png", "gray-alpha.png"}) {
    INFO(name);
    image gray = decoded(name, channels(1));
    CHECK(gray.channels == 1);
    CHECK(pixels(gray) == test::read_file(images(std::string(name) + ".l")));
    CHECK(decoded(name, channels(0)).channels == 1);  // as stored
  }
  CHECK(decoded("q90.jpg", channels(0)).channels == 3);
  CHECK_THROWS_MATCHES(decoded("q90.jpg", channels(1)), format_error, test::says("colour"));
}

TEST_CASE("a JPEG is scaled in its DCT as Pillow's draft scales it", "[images]") {
  struct {
    const char* name;
    std::uint32_t width, height;
    std::uint32_t decoded_width;
  } cases[] = {{"q90.jpg", 40, 30, 40},
               {"q90.jpg", 64, 64, 160},
               {"progressive.jpg", 20, 15, 20},
               {"gray.jpg", 80, 60, 80}};
  for (auto c : cases) {
    INFO(c.name << " " << c.width << "x" << c.height);
    image_options draft;
    draft.at_least = {c.width, c.height};
    image im = decoded(c.name, draft);
    CHECK(im.width == c.decoded_width);
    CHECK(pixels(im) == test::read_file(images(std::string(c.name) + ".draft" + std::to_string(c.width) +
                                               "x" + std::to_string(c.height) + ".rgb")));
  }
}

TEST_CASE("channels first and B, G, R order are the same pixels moved", "[images]") {
  image_options first, reversed;
  first.channels_first = true;
  reversed.bgr = true;
  image hwc = decoded("q90.jpg"), chw = decoded("q90.jpg", first), bgr = decoded("rgb.png", reversed),
        rgb = decoded("rgb.png"), jpeg_bgr = decoded("q90.jpg", reversed);
  const std::size_t area = std::size_t{hwc.width} * hwc.height;
  REQUIRE(chw.pixels.size() == hwc.pixels.size());
  CHECK(chw.channels_first);
  for (std::size_t i : {std::size_t{0}, area / 2, area - 1})
    for (std::size_t c = 0; c < 3; ++c) {
      CHECK(chw.pixels[c * area + i] == hwc.pixels[i * 3 + c]);
      CHECK(jpeg_bgr.pixels[i * 3 + c] == hwc.pixels[i * 3 + 2 - c]);
    }
  for (std::size_t i = 0; i < rgb.pixels.size(); i += 3) CHECK(bgr.pixels[i] == rgb.pixels[i + 2]);
}

TEST_CASE("bad images are format errors naming the image and its key", "[images]") {
  std::string jpeg = test::read_file(images("q90.jpg")), png = test::read_file(images("rgb.png"));
  image out;
  auto fails = [&](std::string bytes, const char* says) {
    INFO(says);
    CHECK_THROWS_MATCHES(decode_image(bytes, out, {}, "shard-0.tar", "k7"), format_error, test::says(says));
    try {
      decode_image(bytes, out, {}, "shard-0.tar", "k7");
    } catch (const format_error& e) {
      CHECK(e.key() == "k7");
      CHECK(e.path() == "shard-0.tar");
    }
  };
  fails("", "a JPEG or PNG image");
  fails("GIF89a", "a JPEG or PNG image");
  for (std::size_t cut : {std::size_t{4}, std::size_t{200}, jpeg.size() / 2, jpeg.size() - 2})
    fails(jpeg.substr(0, cut), "JPEG");
  for (std::size_t cut : {std::size_t{9}, std::size_t{40}, png.size() / 2, png.size() - 20})
    fails(png.substr(0, cut), "PNG");
  std::string damaged = png;
  damaged[png.size() / 2] ^= 0x5a;  // a CRC that fails, or data that does not inflate
  fails(damaged, "PNG");
  fails(test::read_file(images("cmyk.jpg")), "CMYK");
  fails(test::read_file(images("gray16.png")), "16-bit gray");
  // A header that claims more pixels than Pillow would open: refused before any allocation.
  std::string huge = png;
  huge.replace(16, 8, std::string("\x00\x01\x00\x00\x00\x01\x00\x00", 8));  // 65536 x 65536
  std::uint32_t crc = crc32(std::string_view(huge).substr(12, 17));         // "IHDR" and its data
  for (int i = 0; i < 4; ++i) huge[29 + i] = static_cast<char>(crc >> (24 - 8 * i));
  fails(huge, "pixels");
  std::string tall = jpeg;
  std::size_t sof = tall.find("\xff\xc0", 2);
  REQUIRE(sof != std::string::npos);
  tall[sof + 5] = '\xff', tall[sof + 6] = '\xff';  // 65535 rows
  tall[sof + 7] = '\xff', tall[sof + 8] = '\xff';  // 65535 columns
  fails(tall, "pixels");
  CHECK_THROWS_AS(decode_image(jpeg, out, channels(2), "x", "k"), usage_error);
}
