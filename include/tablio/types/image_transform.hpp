// The transforms a training job applies to each decoded image, done where the image is decoded
// (in the table's threads) so that batches come out of the table ready, with the values the
// framework's own code gives:
//
// - torchvision's, on images as Pillow decodes them: RandomResizedCrop(size, scale, ratio) with
//   its own way of drawing the box (ten attempts, then the centre at a clamped ratio), or
//   Resize(shorter side) then CenterCrop(size); RandomHorizontalFlip(p); uint8 pixels, or with a
//   mean and std float32 ones as ToTensor() then Normalize(mean, std) compute them. Resizing is
//   Pillow's own bilinear (types/image_resample.hpp).
// - Caffe's transform_param, as DataTransformer::Transform applies it: crop_size (random
//   offsets in training, the centre in testing), mirror, mean_file or mean_value, scale, to
//   float32 (C, H, W) values computed in float as Caffe computes them.
//
// What is random (a box, offsets, a flip) is drawn from the transform's seed and the record's
// key alone: the same record gets the same draws however the table is read (in threads, by
// any worker, in a resumed epoch), and a job changes the seed per epoch for new ones.
#pragma once

#include <tablio/core/error.hpp>
#include <tablio/types/image_resample.hpp>
#include <tablio/types/image_types.hpp>
#include <tablio/types/mean_image.hpp>

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// What to do to each decoded image: torchvision's transforms or Caffe's transform_param (not
// both), or nothing (every field at its default).
struct image_transform {
  // torchvision: RandomResizedCrop(size, scale, ratio), for training...
  struct random_resized_crop_options {
    std::uint32_t size = 0;  // the output's side; 0: none
    double scale[2] = {0.08, 1.0};
    double ratio[2] = {3.0 / 4.0, 4.0 / 3.0};
  } random_resized_crop;
  std::uint32_t resize = 0;       // ...or Resize(n): the shorter side to n, for evaluation...
  std::uint32_t center_crop = 0;  // ...then CenterCrop(n)
  double flip = 0;                // RandomHorizontalFlip(p)
  std::vector<float> mean, std;   // ToTensor() and Normalize(mean, std): float32 values

  // Caffe's transform_param: crop_size, mirror, mean_file or mean_value, scale, and the phase.
  bool caffe = false;  // applies these (float32 (C, H, W) values) rather than torchvision's
  std::uint32_t crop_size = 0;
  bool mirror = false;
  bool train = true;  // TRAIN: random offsets; TEST: the centre (mirror applies in both, as in Caffe)
  std::vector<float> mean_value;
  std::shared_ptr<const mean_image> mean_file;
  float scale = 1;

  std::uint64_t seed = 0;  // with the record's key, what the random draws come from

  // A JPEG is decoded scaled down by 1/2, 1/4 or 1/8 in its DCT where the crop (or the resized
  // image) is still at least that many times its output size, as Pillow's draft scales: the cost
  // follows the output, and the pixels are those of torchvision's transforms on the image
  // Pillow's draft gives (the box scaled by the same factor), not on the whole image.
  bool dct_scaling = false;

  // Whether anything is done.
  bool any() const noexcept {
    return caffe || random_resized_crop.size || resize || center_crop || flip > 0 || !mean.empty();
  }
};

// A record's random draws, and where its output comes from: the box cropped (in the decoded
// image for random_resized_crop and Caffe's crop_size; in the resized image for center_crop;
// the whole image otherwise) and whether the output is flipped left to right.
struct transform_draw {
  std::int32_t left = 0, top = 0;  // below 0 where a centre crop larger than the image pads it
  std::uint32_t width = 0, height = 0;
  bool flip = false;
};

namespace detail {

// splitmix64 over the seed and the key's bytes: a stream of draws for one record.
class draw_source {
 public:
  draw_source(std::uint64_t seed, std::string_view key) noexcept : state_(seed ^ 0x6a09e667f3bcc909u) {
    std::uint64_t h = 0xcbf29ce484222325u;  // FNV-1a of the key, mixed in below
    for (char c : key) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3u;
    state_ ^= mix(h + key.size());
  }
  std::uint64_t next() noexcept { return mix(state_ += 0x9e3779b97f4a7c15u); }
  // Uniform in [lo, hi).
  double uniform(double lo, double hi) noexcept {
    return lo + (hi - lo) * (static_cast<double>(next() >> 11) * 0x1.0p-53);
  }
  // Uniform in [0, n), n >= 1, without modulo bias.
  std::uint32_t below(std::uint32_t n) noexcept {
    const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % n);
    std::uint64_t v;
    do v = next();
    while (v >= limit);
    return static_cast<std::uint32_t>(v % n);
  }

 private:
  static std::uint64_t mix(std::uint64_t z) noexcept {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
  }
  std::uint64_t state_;
};

// Python's round(): halves to even, as the current rounding mode does by default.
inline double round_half_even(double v) noexcept { return std::nearbyint(v); }

// torchvision's RandomResizedCrop.get_params, with its attempts and its fallback.
inline transform_draw draw_resized_crop(const image_transform::random_resized_crop_options& o,
                                        std::uint32_t width, std::uint32_t height, draw_source& rng) {
  const double area = static_cast<double>(width) * height;
  // torch computes the log ratio and its exponent in float32
  const float log_lo = std::log(static_cast<float>(o.ratio[0])),
              log_hi = std::log(static_cast<float>(o.ratio[1]));
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * static_cast<float>(rng.uniform(o.scale[0], o.scale[1]));
    const double aspect = std::exp(static_cast<float>(rng.uniform(log_lo, log_hi)));
    const double w = round_half_even(std::sqrt(target * aspect)),
                 h = round_half_even(std::sqrt(target / aspect));
    if (w > 0 && w <= width && h > 0 && h <= height) {
      transform_draw d;
      d.width = static_cast<std::uint32_t>(w);
      d.height = static_cast<std::uint32_t>(h);
      d.top = static_cast<std::int32_t>(rng.below(height - d.height + 1));
      d.left = static_cast<std::int32_t>(rng.below(width - d.width + 1));
      return d;
    }
  }
  const double in_ratio = static_cast<double>(width) / height, least = std::fmin(o.ratio[0], o.ratio[1]),
               most = std::fmax(o.ratio[0], o.ratio[1]);
  transform_draw d{0, 0, width, height, false};
  if (in_ratio < least)
    d.height = static_cast<std::uint32_t>(round_half_even(width / least));
  else if (in_ratio > most)
    d.width = static_cast<std::uint32_t>(round_half_even(height * most));
  d.top = static_cast<std::int32_t>((height - d.height) / 2);
  d.left = static_cast<std::int32_t>((width - d.width) / 2);
  return d;
}

// torchvision's output size of Resize(n) for an image: the shorter side n, the longer side
// int(n * long / short).
// int(n * long / short), at most 2^32 - 1 (an output check_transform refuses).
inline void resized_size(std::uint32_t n, std::uint32_t& width, std::uint32_t& height) noexcept {
  const bool tall = width <= height;
  const std::uint64_t shorter = tall ? width : height, longer = tall ? height : width;
  const double exact = shorter ? static_cast<double>(n * longer) / static_cast<double>(shorter) : 0.0;
  const auto scaled = exact < 4294967295.0 ? static_cast<std::uint32_t>(exact) : ~std::uint32_t{0};
  width = tall ? n : scaled;
  height = tall ? scaled : n;
}

[[noreturn]] TABLIO_COLD inline void bad_transform(std::string_view source, std::string_view key,
                                                   message expected, message found) {
  throw_format_error(source, std::nullopt, key, std::move(expected), std::move(found));
}

// Caffe's DataTransformer::Transform of one image of channels x height x width, whose crop's
// value at (c, y, x) is at[c * cs + y * ys + x * xs], into out: channels x crop x crop floats
// (or the whole image).
template <class T>
void caffe_transform(const T* at, std::size_t cs, std::size_t ys, std::size_t xs, std::uint32_t channels,
                     std::uint32_t height, std::uint32_t width, const image_transform& t,
                     const transform_draw& d, float* out) {
  const float* mean = t.mean_file ? t.mean_file->values.data() : nullptr;
  for (std::uint32_t c = 0; c < channels; ++c) {
    const float value_mean = t.mean_value.empty() ? 0.0f : t.mean_value[t.mean_value.size() == 1 ? 0 : c];
    for (std::uint32_t y = 0; y < d.height; ++y) {
      const auto top = static_cast<std::size_t>(d.top) + y, left = static_cast<std::size_t>(d.left);
      const T* row = at + c * cs + y * ys;
      float* o = out + (std::size_t{c} * d.height + y) * d.width;
      const float* m = mean ? mean + (std::size_t{c} * height + top) * width + left : nullptr;
      for (std::uint32_t x = 0; x < d.width; ++x) {
        const float pixel = static_cast<float>(row[x * xs]);
        const float v = m                       ? (pixel - m[x]) * t.scale
                        : !t.mean_value.empty() ? (pixel - value_mean) * t.scale
                                                : pixel * t.scale;
        o[d.flip ? d.width - 1 - x : x] = v;
      }
    }
  }
}

}  // namespace detail

// The draws for a record of `key` whose decoded image is width x height: torchvision's box and
// flip, or Caffe's offsets and mirror, as their code draws them (from another generator). A
// Caffe crop larger than the image is a usage_error (check_transform names the record).
inline transform_draw draw_transform(const image_transform& t, std::uint32_t width, std::uint32_t height,
                                     std::string_view key) {
  if (width == 0 || height == 0)
    throw_usage_error({"an image to transform has pixels, not ", decimal(width), "x", decimal(height)});
  detail::draw_source rng(t.seed, key);
  transform_draw d{0, 0, width, height, false};
  if (t.caffe) {
    // Caffe draws the mirror first (in either phase), then the row offset, then the column
    // offset (in training).
    const bool training = t.train;
    d.flip = t.mirror && rng.below(2) != 0;
    if (t.crop_size) {
      if (t.crop_size > width || t.crop_size > height)
        throw_usage_error({"crop_size ", decimal(t.crop_size), " is larger than the image (", decimal(width),
                           "x", decimal(height), ")"});
      d.width = d.height = t.crop_size;
      const std::uint32_t rows = height - t.crop_size + 1, columns = width - t.crop_size + 1;
      d.top = static_cast<std::int32_t>(training ? rng.below(rows) : (rows - 1) / 2);
      d.left = static_cast<std::int32_t>(training ? rng.below(columns) : (columns - 1) / 2);
    }
    return d;
  }
  if (t.random_resized_crop.size) {
    d = detail::draw_resized_crop(t.random_resized_crop, width, height, rng);
  } else {
    if (t.resize) detail::resized_size(t.resize, width, height);
    d = {0, 0, width, height, false};
    if (t.center_crop) {  // torchvision's centre, in the padded image when the crop is larger
      const auto centre = [](std::uint32_t size, std::uint32_t crop) -> std::int32_t {
        if (crop <= size) return static_cast<std::int32_t>(detail::round_half_even((size - crop) / 2.0));
        // padded by (crop - size) / 2 before and the rest after, the crop is all of it
        return -static_cast<std::int32_t>((crop - size) / 2);
      };
      d.left = centre(width, t.center_crop);
      d.top = centre(height, t.center_crop);
      d.width = d.height = t.center_crop;
    }
  }
  if (t.flip > 0) d.flip = rng.uniform(0, 1) < t.flip;
  return d;
}

// Checks that the transform can be applied to images of `channels` channels and width x height
// (Caffe's crop no larger than the image, its mean of the image's size and channels); a
// format_error naming source and key if not.
inline void check_transform(const image_transform& t, std::uint32_t channels, std::uint32_t width,
                            std::uint32_t height, std::string_view source, std::string_view key) {
  if (!t.caffe) {
    // A resize keeps the ratio of sides a header may claim: its output is bounded as a decoded
    // image is, never allocated from a claim alone.
    std::uint32_t w = width, h = height;
    if (t.resize) detail::resized_size(t.resize, w, h);
    if (t.resize && std::uint64_t{w} * h > detail::max_image_pixels)
      detail::bad_transform(source, key,
                            {"an image whose Resize(", decimal(t.resize), ") has at most ",
                             decimal(detail::max_image_pixels), " pixels"},
                            {"one of ", decimal(width), "x", decimal(height)});
    return;
  }
  if (t.crop_size && (t.crop_size > width || t.crop_size > height))
    detail::bad_transform(source, key,
                          {"an image of at least crop_size ", decimal(t.crop_size), " on each side"},
                          {"one of ", decimal(width), "x", decimal(height)});
  if (t.mean_file &&
      (t.mean_file->channels != channels || t.mean_file->height != height || t.mean_file->width != width))
    detail::bad_transform(source, key,
                          {"an image of the mean_file's ", decimal(t.mean_file->channels), "x",
                           decimal(t.mean_file->height), "x", decimal(t.mean_file->width), " (C x H x W)"},
                          {"one of ", decimal(channels), "x", decimal(height), "x", decimal(width)});
  if (t.mean_value.size() > 1 && t.mean_value.size() != channels)
    detail::bad_transform(source, key,
                          {"an image of ", decimal(t.mean_value.size()), " channels, one per mean_value"},
                          {"one of ", decimal(channels)});
}

// What a transform needs of an image of width x height for a record: the DCT scale to decode a
// JPEG at (1: none), the scaled image's size, the rectangle of it the output reads (the rest
// need not be decoded), and the draws in the scaled image.
struct transform_plan {
  std::uint32_t scale = 1;
  std::uint32_t width = 0, height = 0;
  pixel_rect source;
  transform_draw draw;
  std::optional<bilinear_resize> resize;  // Resize's, for the window CenterCrop keeps of it
};

namespace detail {

// The largest of 8, 4, 2 that `fits` (how many times the output fits in the input) allows.
inline std::uint32_t dct_scale_for(std::uint32_t fits) noexcept {
  for (std::uint32_t s : {8u, 4u, 2u})
    if (fits >= s) return s;
  return 1;
}

inline resize_window resized_window(const image_transform& t, const transform_plan& p) {
  std::uint32_t w = p.width, h = p.height;
  resized_size(t.resize, w, h);
  resize_window win{p.width, p.height, w, h, 0, 0, w, h};
  if (t.center_crop) {  // the crop's part within the resized image
    const std::int64_t x0 = std::max<std::int64_t>(p.draw.left, 0),
                       y0 = std::max<std::int64_t>(p.draw.top, 0);
    const std::int64_t x1 = std::min<std::int64_t>(p.draw.left + std::int64_t{p.draw.width}, w),
                       y1 = std::min<std::int64_t>(p.draw.top + std::int64_t{p.draw.height}, h);
    win.left = static_cast<std::uint32_t>(x0);
    win.top = static_cast<std::uint32_t>(y0);
    win.columns = static_cast<std::uint32_t>(std::max<std::int64_t>(x1 - x0, 0));
    win.rows = static_cast<std::uint32_t>(std::max<std::int64_t>(y1 - y0, 0));
    if (!win.columns || !win.rows) win.columns = win.rows = 0;
  }
  return win;
}

}  // namespace detail

// The plan of t for the record of `key` whose image is width x height (before any scaling).
inline transform_plan plan_transform(const image_transform& t, std::uint32_t width, std::uint32_t height,
                                     std::string_view key) {
  transform_plan p;
  p.draw = draw_transform(t, width, height, key);
  if (!t.caffe && t.dct_scaling) {
    if (t.random_resized_crop.size) {
      const std::uint32_t size = t.random_resized_crop.size;
      p.scale = detail::dct_scale_for(std::min(p.draw.width / size, p.draw.height / size));
    } else if (t.resize) {
      std::uint32_t w = width, h = height;
      detail::resized_size(t.resize, w, h);
      p.scale = detail::dct_scale_for(std::min(width / w, height / h));
    }
  }
  p.width = (width + p.scale - 1) / p.scale;
  p.height = (height + p.scale - 1) / p.scale;
  if (p.scale > 1) {
    if (t.random_resized_crop.size) {  // the box at the scale, its edges rounded down
      const transform_draw& d = p.draw;
      const auto x0 = static_cast<std::uint32_t>(d.left) / p.scale,
                 y0 = static_cast<std::uint32_t>(d.top) / p.scale;
      const std::uint32_t x1 =
          std::min(p.width, std::max(x0 + 1, (static_cast<std::uint32_t>(d.left) + d.width) / p.scale));
      const std::uint32_t y1 =
          std::min(p.height, std::max(y0 + 1, (static_cast<std::uint32_t>(d.top) + d.height) / p.scale));
      p.draw = {static_cast<std::int32_t>(x0), static_cast<std::int32_t>(y0), x1 - x0, y1 - y0, d.flip};
    } else {  // Resize and CenterCrop of the scaled image: its centre, the same flip
      p.draw = draw_transform(t, p.width, p.height, key);
    }
  }
  const transform_draw& d = p.draw;
  if (t.caffe || t.random_resized_crop.size) {
    p.source = {static_cast<std::uint32_t>(d.left), static_cast<std::uint32_t>(d.top),
                static_cast<std::uint32_t>(d.left) + d.width, static_cast<std::uint32_t>(d.top) + d.height};
  } else if (t.resize) {
    p.source = p.resize.emplace(detail::resized_window(t, p)).source();
  } else if (t.center_crop) {
    p.source = {static_cast<std::uint32_t>(std::max(d.left, 0)),
                static_cast<std::uint32_t>(std::max(d.top, 0)),
                static_cast<std::uint32_t>(std::min<std::int64_t>(d.left + std::int64_t{d.width}, p.width)),
                static_cast<std::uint32_t>(std::min<std::int64_t>(d.top + std::int64_t{d.height}, p.height))};
  } else {
    p.source = {0, 0, p.width, p.height};
  }
  return p;
}

namespace detail {

// Copies a transform's (H, W, C) bytes `src` into `to`, converted by `value` (of a byte and its
// channel), flipped left to right or not, as (C, H, W) with channels_first, else (H, W, C). The
// loops are apart for each case, so that the compiler sees plain strides in each.
template <std::uint32_t c, class T, class Value>
void lay_out(const std::uint8_t* __restrict src, std::uint32_t width, std::uint32_t height, bool flip,
             bool channels_first, T* __restrict to, Value value) {
  const std::size_t area = std::size_t{width} * height, row = std::size_t{width} * c;
  // A row's pixels into `row_to`, in reverse order when `reversed`: each pixel's channels `plane`
  // apart (C planes of `area`), or side by side.
  const auto copy_row = [&](const std::uint8_t* __restrict from, T* __restrict row_to, bool reversed) {
    const std::size_t step = channels_first ? 1 : c, plane = channels_first ? area : 1;
    for (std::size_t x = 0; x < width; ++x) {
      T* __restrict pixel = row_to + (reversed ? width - 1 - x : x) * step;
      for (std::uint32_t k = 0; k < c; ++k) pixel[k * plane] = value(from[x * c + k], k);
    }
  };
  for (std::size_t y = 0; y < height; ++y, src += row) {
    T* row_to = to + y * (channels_first ? width : row);
    if (flip)
      copy_row(src, row_to, true);
    else
      copy_row(src, row_to, false);
  }
}

// Flips, lays out and normalises a transform's (H, W, C) bytes into out.
inline void finish_transform(const image_transform& t, const transform_draw& d, const std::uint8_t* src,
                             std::uint32_t width, std::uint32_t height, std::uint32_t c, bool channels_first,
                             bool bgr, image& out) {
  const std::size_t area = std::size_t{width} * height;
  out.width = width;
  out.height = height;
  out.channels = c;
  out.channels_first = channels_first;
  out.bgr = bgr;
  if (t.mean.empty()) {
    out.values.clear();
    out.pixels.resize(area * c);
    const auto same = [](std::uint8_t v, std::uint32_t) { return v; };
    if (c == 3)
      lay_out<3>(src, width, height, d.flip, channels_first, out.pixels.data(), same);
    else
      lay_out<1>(src, width, height, d.flip, channels_first, out.pixels.data(), same);
    return;
  }
  // ToTensor's v / 255 then Normalize's (v - mean) / std, in float: of a byte, so looked up.
  float normalised[3][256];
  for (std::uint32_t k = 0; k < c; ++k) {
    const std::uint32_t colour = bgr ? 2 - k : k;  // Normalize's mean and std name R, G, B
    const float m = t.mean[t.mean.size() == 1 ? 0 : colour], s = t.std[t.std.size() == 1 ? 0 : colour];
    for (int v = 0; v < 256; ++v) normalised[k][v] = (static_cast<float>(v) / 255.0f - m) / s;
  }
  out.pixels.clear();
  out.values.resize(area * c);
  const auto looked_up = [&](std::uint8_t v, std::uint32_t k) { return normalised[k][v]; };
  if (c == 3)
    lay_out<3>(src, width, height, d.flip, channels_first, out.values.data(), looked_up);
  else
    lay_out<1>(src, width, height, d.flip, channels_first, out.values.data(), looked_up);
}

}  // namespace detail

// Applies t as planned to the pixels `in` of the plan's source rectangle (of the scaled image,
// (H, W, C) bytes from its corner), into `out`: bytes (H, W, C), or (C, H, W) with
// channels_first; float32 values (C, H, W) under Caffe's transform_param or a normalisation.
// `bgr`: in's three channels are B, G, R (a normalisation's mean and std name R, G, B).
inline void apply_transform(const image_transform& t, const transform_plan& p, pixel_region in,
                            bool channels_first, image& out, bool bgr = false) {
  const std::uint32_t c = in.channels;
  const transform_draw& d = p.draw;
  if (t.caffe) {
    out.channels = c;
    out.width = d.width;
    out.height = d.height;
    out.channels_first = true;
    out.bgr = bgr && c == 3;
    out.pixels.clear();
    out.values.resize(std::size_t{c} * d.width * d.height);
    detail::caffe_transform(in.data, 1, in.stride, c, c, p.height, p.width, t, d, out.values.data());
    return;
  }
  thread_local std::vector<std::uint8_t> result, window;
  std::uint32_t width = in.width, height = in.height;
  if (t.random_resized_crop.size) {
    width = height = t.random_resized_crop.size;
    resize_bilinear(in, width, height, result);
  } else if (t.resize) {
    const resize_window& win = p.resize->window();
    p.resize->run(in, t.center_crop ? window : result);
    width = t.center_crop ? d.width : win.columns;
    height = t.center_crop ? d.height : win.rows;
    if (t.center_crop) {  // the window, within the crop (padded where the crop is larger)
      result.assign(std::size_t{width} * height * c, 0);
      const auto x0 = static_cast<std::uint32_t>(static_cast<std::int64_t>(win.left) - d.left),
                 y0 = static_cast<std::uint32_t>(static_cast<std::int64_t>(win.top) - d.top);
      for (std::uint32_t y = 0; y < win.rows; ++y)
        std::copy_n(window.data() + std::size_t{y} * win.columns * c, std::size_t{win.columns} * c,
                    result.data() + (std::size_t{y0 + y} * width + x0) * c);
    }
  } else if (t.center_crop) {
    width = d.width;
    height = d.height;
    result.assign(std::size_t{width} * height * c, 0);
    const auto x0 = static_cast<std::uint32_t>(static_cast<std::int64_t>(p.source.x0) - d.left),
               y0 = static_cast<std::uint32_t>(static_cast<std::int64_t>(p.source.y0) - d.top);
    for (std::uint32_t y = 0; y < in.height; ++y)
      std::copy_n(in.data + y * in.stride, std::size_t{in.width} * c,
                  result.data() + (std::size_t{y0 + y} * width + x0) * c);
  } else {
    result.resize(std::size_t{width} * height * c);
    for (std::uint32_t y = 0; y < height; ++y)
      std::copy_n(in.data + y * in.stride, std::size_t{width} * c,
                  result.data() + std::size_t{y} * width * c);
  }
  detail::finish_transform(t, d, result.data(), width, height, c, channels_first, bgr && c == 3, out);
}

// Applies t, with the draws for `key`, to a decoded (H, W, C) image `in` (at full scale: no DCT
// scaling), into `out`, as apply_transform gives it. A crop or mean the image does not fit is a
// format_error naming source and key.
inline void transform_image(const image& in, const image_transform& t, bool channels_first, image& out,
                            std::string_view source, std::string_view key) {
  if (in.channels_first && in.channels != 1)
    throw_usage_error({"transform_image takes an image of (H, W, C) pixels"});
  check_transform(t, in.channels, in.width, in.height, source, key);
  image_transform whole = t;
  whole.dct_scaling = false;
  const transform_plan p = plan_transform(whole, in.width, in.height, key);
  const std::size_t stride = std::size_t{in.width} * in.channels;
  const pixel_region region{in.pixels.data() + p.source.y0 * stride + std::size_t{p.source.x0} * in.channels,
                            stride, p.source.x1 - p.source.x0, p.source.y1 - p.source.y0, in.channels};
  apply_transform(whole, p, region, channels_first, out, in.bgr);
}

TABLIO_END_NAMESPACE
