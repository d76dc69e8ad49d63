// Training transforms (types/image_transform.hpp): Pillow's bilinear resize against Pillow's own
// output, torchvision's and Caffe's draws, Caffe's arithmetic, and Caffe's mean files, good and
// damaged. Pixels against torchvision and Caffe's transform on real images are the Python
// tests' (test_image_transforms.py).
#include <tablio/types/image.hpp>
#include <tablio/types/image_transform.hpp>

#include "test_support.hpp"

#include <random>
#include <set>

using namespace tablio;

namespace {

// A 7 x 5 RGB pattern, and what Pillow 9.4's Image.resize(size, Image.BILINEAR) gives for it.
const std::vector<std::uint8_t> pattern = {
    0,  0,   0,   37, 5,   9,   74,  10,  36,  111, 15,  81,  148, 20,  144, 185, 25,  225, 222, 30,  68,
    11, 53,  29,  48, 58,  38,  85,  63,  65,  122, 68,  110, 159, 73,  173, 196, 78,  254, 233, 83,  97,
    22, 106, 58,  59, 111, 67,  96,  116, 94,  133, 121, 139, 170, 126, 202, 207, 131, 27,  244, 136, 126,
    33, 159, 87,  70, 164, 96,  107, 169, 123, 144, 174, 168, 181, 179, 231, 218, 184, 56,  255, 189, 155,
    44, 212, 116, 81, 217, 125, 118, 222, 152, 155, 227, 197, 192, 232, 4,   229, 237, 85,  10,  242, 184};
const std::vector<std::uint8_t> pillow_3x2 = {43, 57,  41, 122, 68,  114, 201, 79,  151,
                                              65, 163, 99, 144, 174, 143, 194, 185, 116};
const std::vector<std::uint8_t> pillow_7x3 = {
    5,  23,  12,  42, 28,  21,  79,  33,  48,  116, 38,  93,  153, 43,  156, 190, 48,  237, 227, 53,  80,
    22, 106, 58,  59, 111, 67,  96,  116, 94,  133, 121, 139, 170, 126, 202, 207, 131, 84,  244, 136, 126,
    39, 189, 104, 76, 194, 113, 113, 199, 140, 150, 204, 185, 187, 209, 101, 224, 214, 73,  115, 219, 172};

pixel_region region_of(const std::vector<std::uint8_t>& p) { return {p.data(), 7 * 3, 7, 5, 3}; }

image pattern_image() {
  image im;
  im.pixels = pattern;
  im.width = 7;
  im.height = 5;
  im.channels = 3;
  return im;
}

// A BlobProto as compute_image_mean writes it: the legacy shape, then the values packed.
std::string blob(std::uint32_t c, std::uint32_t h, std::uint32_t w, const std::vector<float>& values) {
  std::string out;
  std::uint32_t field = 1;
  for (std::uint32_t d : {1u, c, h, w}) {
    protobuf_wire::put_varint(out, field++ << 3);
    protobuf_wire::put_varint(out, d);
  }
  out += static_cast<char>(5 << 3 | 2);
  protobuf_wire::put_varint(out, values.size() * 4);
  for (float v : values) {
    char b[4];
    std::memcpy(b, &v, 4);  // little-endian machines only: the test's own bytes
    out.append(b, 4);
  }
  return out;
}

}  // namespace

TEST_CASE("resize_bilinear gives Pillow's pixels, and a region is resized as an image of its own") {
  std::vector<std::uint8_t> out;
  resize_bilinear(region_of(pattern), 3, 2, out);
  CHECK(out == pillow_3x2);
  resize_bilinear(region_of(pattern), 7, 3, out);  // vertical pass alone
  CHECK(out == pillow_7x3);
  resize_bilinear(region_of(pattern), 7, 5, out);  // the same size: the same pixels
  CHECK(out == pattern);
  // The right 4 x 5 of the pattern resized is the same as a 4 x 5 image of it resized.
  std::vector<std::uint8_t> crop;
  for (int y = 0; y < 5; ++y)
    crop.insert(crop.end(), pattern.begin() + y * 21 + 9, pattern.begin() + y * 21 + 21);
  std::vector<std::uint8_t> whole, part;
  resize_bilinear({crop.data(), 12, 4, 5, 3}, 2, 3, whole);
  resize_bilinear({pattern.data() + 9, 21, 4, 5, 3}, 2, 3, part);
  CHECK(whole == part);
}

// Pillow's two passes, written plainly from an axis's weights: what any faster path must equal.
std::vector<std::uint8_t> plain_resize(const std::vector<std::uint8_t>& in, std::uint32_t w, std::uint32_t h,
                                       std::uint32_t c, std::uint32_t to_w, std::uint32_t to_h) {
  auto pass = [c](const std::vector<std::uint8_t>& from, std::uint32_t lines, std::uint32_t size,
                  std::uint32_t to, std::size_t step, std::size_t line_step, std::size_t to_step,
                  std::size_t to_line_step, std::size_t out_size) {
    const detail::resample_axis a(size, to);
    std::vector<std::uint8_t> out(out_size);
    for (std::uint32_t line = 0; line < lines; ++line)
      for (std::uint32_t o = 0; o < to; ++o)
        for (std::uint32_t k = 0; k < c; ++k) {
          std::int32_t sum = 1 << (detail::resample_bits - 1);
          for (std::uint32_t i = 0; i < a.count[o]; ++i)
            sum += from[line * line_step + (a.first[o] + i) * step + k] * a.weights[o * a.taps + i];
          out[line * to_line_step + o * to_step + k] = detail::clip_resampled(sum);
        }
    return out;
  };
  std::vector<std::uint8_t> across = in;
  if (to_w != w)
    across = pass(in, h, w, to_w, c, std::size_t{w} * c, c, std::size_t{to_w} * c, std::size_t{h} * to_w * c);
  if (to_h == h) return across;
  return pass(across, to_w, h, to_h, std::size_t{to_w} * c, c, std::size_t{to_w} * c, c,
              std::size_t{to_h} * to_w * c);
}

TEST_CASE("Resizing gives the plain two passes' bytes, for every size, window and channel count") {
  std::mt19937 rng(7);
  for (int t = 0; t < 400; ++t) {
    const std::uint32_t c = t % 4 == 0 ? 1 : 3, w = 1 + rng() % 120, h = 1 + rng() % 120;
    const std::uint32_t to_w = t % 7 == 0 ? w : 1 + rng() % 100, to_h = t % 5 == 0 ? h : 1 + rng() % 100;
    std::vector<std::uint8_t> in(std::size_t{w} * h * c);
    for (auto& b : in) b = static_cast<std::uint8_t>(t % 3 == 0 ? (rng() & 1) * 255 : rng() & 255);
    std::vector<std::uint8_t> got;
    resize_bilinear({in.data(), std::size_t{w} * c, w, h, c}, to_w, to_h, got);
    const std::vector<std::uint8_t> expected = plain_resize(in, w, h, c, to_w, to_h);
    REQUIRE(got == expected);
    // A window of the result, from only the part of the image it reads, copied apart so that
    // a read past that part is one past the allocation.
    const auto below = [&](std::uint32_t n) { return static_cast<std::uint32_t>(rng() % n); };
    const std::uint32_t left = below(to_w), top = below(to_h);
    const resize_window window{w, h, to_w, to_h, left, top, 1 + below(to_w - left), 1 + below(to_h - top)};
    const bilinear_resize resize(window);
    const pixel_rect from = resize.source();
    const std::size_t part_row = std::size_t{from.x1 - from.x0} * c;
    std::vector<std::uint8_t> part((from.y1 - from.y0) * part_row);
    for (std::uint32_t y = from.y0; y < from.y1; ++y)
      std::copy_n(in.begin() + static_cast<std::ptrdiff_t>((std::size_t{y} * w + from.x0) * c), part_row,
                  part.begin() + static_cast<std::ptrdiff_t>((y - from.y0) * part_row));
    resize.run({part.data(), part_row, from.x1 - from.x0, from.y1 - from.y0, c}, got);
    for (std::uint32_t y = 0; y < window.rows; ++y)
      REQUIRE(std::equal(
          got.begin() + static_cast<std::ptrdiff_t>(std::size_t{y} * window.columns * c),
          got.begin() + static_cast<std::ptrdiff_t>(std::size_t{y + 1} * window.columns * c),
          expected.begin() + static_cast<std::ptrdiff_t>((std::size_t{top + y} * to_w + left) * c)));
  }
}

TEST_CASE("Draws depend on the seed and the key alone, and stay in the image") {
  image_transform t;
  t.random_resized_crop.size = 32;
  t.flip = 0.5;
  t.seed = 3;
  std::set<std::tuple<int, int, unsigned, unsigned>> boxes;
  int flips = 0;
  for (int i = 0; i < 200; ++i) {
    const std::string key = "k" + std::to_string(i);
    const transform_draw d = draw_transform(t, 300, 200, key), again = draw_transform(t, 300, 200, key);
    CHECK((d.left == again.left && d.top == again.top && d.width == again.width && d.flip == again.flip));
    CHECK((d.left >= 0 && d.left + d.width <= 300 && d.top >= 0 && d.top + d.height <= 200));
    CHECK(double(d.width) * d.height >= 0.08 * 300 * 200 * 0.95);
    boxes.insert({d.left, d.top, d.width, d.height});
    flips += d.flip;
  }
  CHECK(boxes.size() > 190);
  CHECK((flips > 70 && flips < 130));
  image_transform other = t;
  other.seed = 4;
  int moved = 0;
  for (int i = 0; i < 50; ++i)
    moved += draw_transform(t, 300, 200, std::to_string(i)).left !=
             draw_transform(other, 300, 200, std::to_string(i)).left;
  CHECK(moved > 40);
}

TEST_CASE("Caffe's phases: random offsets and mirroring in training, the centre in testing") {
  image_transform t;
  t.caffe = true;
  t.crop_size = 3;
  t.mirror = true;
  t.train = false;
  int mirrored_in_test = 0;
  for (int i = 0; i < 100; ++i) {
    const transform_draw d = draw_transform(t, 7, 5, std::to_string(i));
    CHECK((d.left == 2 && d.top == 1 && d.width == 3 && d.height == 3));
    mirrored_in_test += d.flip;
  }
  CHECK((mirrored_in_test > 30 && mirrored_in_test < 70));  // Caffe mirrors in TEST too
  CHECK_THROWS_AS(draw_transform(t, 2, 5, "k"), usage_error);
  transform_draw d;
  t.train = true;
  std::set<std::pair<int, int>> offsets;
  int mirrored = 0;
  for (int i = 0; i < 100; ++i) {
    d = draw_transform(t, 7, 5, std::to_string(i));
    offsets.insert({d.left, d.top});
    mirrored += d.flip;
    CHECK((d.left >= 0 && d.left <= 4 && d.top >= 0 && d.top <= 2));
  }
  CHECK(offsets.size() == 15);  // every offset of (7 - 3 + 1) x (5 - 3 + 1)
  CHECK((mirrored > 30 && mirrored < 70));
}

TEST_CASE("Caffe's transform: (pixel - mean) * scale in float over the crop, mirrored, (C, H, W)") {
  image_transform t;
  t.caffe = true;
  t.crop_size = 3;
  t.train = false;
  t.mean_value = {10.5f, 20, 30};
  t.scale = 0.017f;
  image out;
  transform_image(pattern_image(), t, true, out, "f", "k");
  REQUIRE((out.channels == 3 && out.height == 3 && out.width == 3 && out.values.size() == 27 &&
           out.pixels.empty()));
  for (unsigned c = 0; c < 3; ++c)
    for (unsigned y = 0; y < 3; ++y)
      for (unsigned x = 0; x < 3; ++x) {
        const float pixel = pattern[((1 + y) * 7 + 2 + x) * 3 + c];
        CHECK(out.values[(c * 3 + y) * 3 + x] == (pixel - t.mean_value[c]) * t.scale);
      }
  // A mean file: the mean's pixel under each of the crop's.
  auto mean = std::make_shared<mean_image>();
  mean->channels = 3;
  mean->height = 5;
  mean->width = 7;
  for (int i = 0; i < 105; ++i) mean->values.push_back(static_cast<float>(i) * 0.5f);
  t.mean_value.clear();
  t.mean_file = mean;
  transform_image(pattern_image(), t, true, out, "f", "k");
  CHECK(out.values[(1 * 3 + 2) * 3 + 0] ==
        (float(pattern[((1 + 2) * 7 + 2) * 3 + 1]) - mean->values[(1 * 5 + 3) * 7 + 2]) * t.scale);
  // An image the crop or the mean does not fit is the record's format_error.
  t.crop_size = 6;
  CHECK_THROWS_WITH(
      transform_image(pattern_image(), t, true, out, "train_lmdb", "rec7"),
      Catch::Contains("train_lmdb") && Catch::Contains("rec7") && Catch::Contains("crop_size 6"));
  t.crop_size = 0;
  mean->width = 8;
  CHECK_THROWS_AS(transform_image(pattern_image(), t, true, out, "train_lmdb", "rec7"), format_error);
}

TEST_CASE(
    "torchvision's transforms: a centre crop larger than the image pads it with zeros, a flip mirrors") {
  image_transform t;
  t.center_crop = 9;
  image out;
  transform_image(pattern_image(), t, false, out, "f", "k");
  REQUIRE((out.width == 9 && out.height == 9 && out.pixels.size() == 243));
  // padded by 1 left (and 1 right), by 2 above (and 2 below)
  CHECK(out.pixels[0] == 0);
  CHECK(std::equal(pattern.begin(), pattern.begin() + 21, out.pixels.begin() + (2 * 9 + 1) * 3));
  t = {};
  t.flip = 1;
  transform_image(pattern_image(), t, true, out, "f", "k");
  CHECK((out.channels_first && out.pixels[0] == pattern[6 * 3] && out.pixels[35 + 6] == pattern[1]));
  t.flip = 0;
  t.mean = {0.5f};
  t.std = {0.25f};
  transform_image(pattern_image(), t, false, out, "f", "k");
  CHECK(out.values[4] == (float(pattern[4]) / 255.0f - 0.5f) / 0.25f);
}

TEST_CASE("Normalize's mean and std name R, G, B, in whatever order the channels come") {
  image rgb = pattern_image(), bgr = pattern_image();
  bgr.bgr = true;
  for (std::size_t i = 0; i < bgr.pixels.size(); i += 3) std::swap(bgr.pixels[i], bgr.pixels[i + 2]);
  image_transform t;
  t.mean = {0.1f, 0.5f, 0.9f};
  t.std = {0.2f, 0.3f, 0.4f};
  image from_rgb, from_bgr;
  transform_image(rgb, t, true, from_rgb, "f", "k");
  transform_image(bgr, t, true, from_bgr, "f", "k");
  CHECK(from_bgr.bgr);
  const std::size_t plane = std::size_t{from_rgb.width} * from_rgb.height;
  for (std::size_t c = 0; c < 3; ++c)
    CHECK(std::equal(from_rgb.values.begin() + c * plane, from_rgb.values.begin() + (c + 1) * plane,
                     from_bgr.values.begin() + (2 - c) * plane));
}

TEST_CASE("A transform's output is bounded as a decoded image is, whatever sides a header claims") {
  image_transform t;
  t.resize = 256;
  t.center_crop = 224;
  CHECK_NOTHROW(check_transform(t, 3, 640, 480, "f", "k"));
  // 1 x 100,000,000 pixels resized to a shorter side of 256: 25.6 billion pixels
  CHECK_THROWS_WITH(
      check_transform(t, 3, 1, 100000000, "shard.tar", "k"),
      Catch::Contains("shard.tar") && Catch::Contains("Resize(256)") && Catch::Contains("1x100000000"));
  const transform_draw d = draw_transform(t, 1, 100000000, "k");  // no undefined conversion on the way
  CHECK((d.width == 224 && d.height == 224));
  CHECK_THROWS_WITH(draw_transform(t, 0, 5, "k"), Catch::Contains("0x5"));
}

TEST_CASE("A mean file is read as Caffe reads it; a damaged one is a format_error naming it") {
  std::vector<float> values(2 * 3 * 4);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) + 0.25f;
  const std::string good = blob(2, 3, 4, values);
  const mean_image m = read_mean_image(good, "mean.binaryproto");
  CHECK((m.channels == 2 && m.height == 3 && m.width == 4 && m.values == values));
  for (std::size_t cut : {good.size() - 1, good.size() - 4, std::size_t{3}})
    CHECK_THROWS_WITH(read_mean_image(good.substr(0, cut), "mean.binaryproto"),
                      Catch::Contains("mean.binaryproto"));
  // A shape that claims more than the values give, or far more than the bytes could hold.
  CHECK_THROWS_WITH(read_mean_image(blob(2, 3, 2, values), "m"),
                    Catch::Contains("12 values, as the shape holds"));
  CHECK_THROWS_WITH(read_mean_image(blob(2, 3, 5, values), "m"),
                    Catch::Contains("shape that the values fill"));
  CHECK_THROWS_WITH(read_mean_image(blob(2000000, 3000000, 4, values), "m"),
                    Catch::Contains("format error in 'm'") && Catch::Contains("shape that the values fill"));
  std::string negative;
  protobuf_wire::put_varint(negative, 2 << 3);
  protobuf_wire::put_varint(negative, ~std::uint64_t{0});  // channels -1
  CHECK_THROWS_WITH(read_mean_image(negative, "m"), Catch::Contains("axis of -1"));
}

#if defined(TABLIO_WITH_JPEG)
TEST_CASE(
    "A JPEG transformed from the part it needs has the pixels of the image decoded whole, then transformed") {
  for (const char* name : {"q90.jpg", "q75-444.jpg", "progressive.jpg", "gray.jpg"}) {
    const std::string bytes = test::read_file(test::data_path(std::string("images/") + name));
    image whole;
    decode_image(bytes, whole, {}, name);
    std::vector<image_transform> transforms(4);
    transforms[0].random_resized_crop.size = 24;
    transforms[0].flip = 0.5;
    transforms[1].resize = 30;
    transforms[1].center_crop = 24;
    transforms[2].caffe = true;
    transforms[2].crop_size = 20;
    transforms[2].mirror = true;
    transforms[3].center_crop = 16;
    for (image_transform& t : transforms) {
      auto shared = std::make_shared<const image_transform>(t);
      for (int k = 0; k < 20; ++k) {
        const std::string key = "k" + std::to_string(k);
        image part, expected;
        image_options o;
        o.channels_first = true;
        o.transform = shared;
        decode_image(bytes, part, o, name, key);
        transform_image(whole, t, true, expected, name, key);
        CHECK((part.pixels == expected.pixels && part.values == expected.values &&
               part.width == expected.width));
      }
    }
  }
}

TEST_CASE("A JPEG cut short is refused with a transform too, wherever the part it needs lies") {
  const std::string bytes = test::read_file(test::data_path("images/q90.jpg"));
  auto t = std::make_shared<image_transform>();
  t->caffe = true;
  t->crop_size = 8;
  t->train = false;
  image_options o;
  o.transform = t;
  image out;
  CHECK_NOTHROW(decode_image(bytes, out, o, "q90.jpg", "k"));
  // Cut below the crop (only its end missing, or the rows under it), or within it; of an image
  // of one scan, and of a progressive one (read whole at the start).
  const std::string progressive = test::read_file(test::data_path("images/progressive.jpg"));
  for (const std::string* image_bytes : {&bytes, &progressive})
    for (std::size_t cut : {image_bytes->size() - 2, image_bytes->size() * 3 / 4, image_bytes->size() / 2})
      CHECK_THROWS_WITH(decode_image(image_bytes->substr(0, cut), out, o, "q90.jpg", "k"),
                        Catch::Contains("q90.jpg") && Catch::Contains("'k'") &&
                            Catch::Contains("expected a whole JPEG image, found Premature end of JPEG file"));
  CHECK_THROWS_WITH(decode_image(bytes.substr(0, 400), out, o, "q90.jpg", "k"),
                    Catch::Contains("q90.jpg") && Catch::Contains("expected a JPEG image"));
  // Scan data overwritten (not the headers): decoded past with libjpeg's warning, as Pillow
  // decodes it, with the transform as without.
  std::string corrupt = bytes;
  for (std::size_t i = corrupt.size() / 2; i < corrupt.size() / 2 + 64; ++i) corrupt[i] = '\x55';
  image whole, part;
  image_options plain;
  decode_image(corrupt, whole, plain, "q90.jpg", "k");
  decode_image(corrupt, part, o, "q90.jpg", "k");
  image expected;
  transform_image(whole, *t, false, expected, "q90.jpg", "k");
  CHECK(part.values == expected.values);
}
#endif
