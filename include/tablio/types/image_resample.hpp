// Pillow's bilinear resize of 8-bit images (Image.resize(size, Image.BILINEAR), which is what
// torchvision's Resize and RandomResizedCrop call on a PIL image), computed as Pillow computes
// it so that the pixels are Pillow's, not merely close: a triangle filter widened by the
// reduction factor (antialiasing), its weights normalised in double and rounded to 22-bit fixed
// point, a horizontal pass over the rows the vertical pass needs, then the vertical pass, each
// sum rounded and clipped to 0..255.
#pragma once

#include <tablio/core/config.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// A rectangle of an (H, W, C) image of bytes: `width` x `height` pixels of `channels` bytes,
// rows `stride` bytes apart, from `data`.
struct pixel_region {
  const std::uint8_t* data = nullptr;
  std::size_t stride = 0;
  std::uint32_t width = 0, height = 0, channels = 0;
};

namespace detail {

inline constexpr int resample_bits = 22;  // Pillow's PRECISION_BITS for 8-bit images

// One axis's filter: for each output position, the first input position it reads, how many,
// and their fixed-point weights (`taps` per position).
struct resample_axis {
  std::vector<std::uint32_t> first, count;
  std::vector<std::int32_t> weights;
  std::size_t taps = 0;

  resample_axis(std::uint32_t in_size, std::uint32_t out_size) : first(out_size), count(out_size) {
    const double scale = static_cast<double>(in_size) / out_size;
    const double filter_scale = scale < 1.0 ? 1.0 : scale;
    const double support = filter_scale;  // the triangle's support, 1, widened
    taps = static_cast<std::size_t>(std::ceil(support)) * 2 + 1;
    weights.assign(taps * out_size, 0);
    std::vector<double> k(taps);
    const double narrowing = 1.0 / filter_scale;  // Pillow multiplies by it, rather than divide
    for (std::uint32_t out = 0; out < out_size; ++out) {
      const double center = (out + 0.5) * scale;
      int lo = static_cast<int>(center - support + 0.5);
      if (lo < 0) lo = 0;
      int hi = static_cast<int>(center + support + 0.5);
      if (hi > static_cast<int>(in_size)) hi = static_cast<int>(in_size);
      const int n = hi - lo;
      double total = 0;
      for (int i = 0; i < n; ++i) {
        double x = (i + lo - center + 0.5) * narrowing;
        if (x < 0) x = -x;
        k[static_cast<std::size_t>(i)] = x < 1.0 ? 1.0 - x : 0.0;
        total += k[static_cast<std::size_t>(i)];
      }
      std::int32_t* w = &weights[out * taps];
      for (int i = 0; i < n; ++i) {
        const double v =
            total != 0.0 ? k[static_cast<std::size_t>(i)] / total : k[static_cast<std::size_t>(i)];
        w[i] = static_cast<std::int32_t>(v * (1 << resample_bits) + (v < 0 ? -0.5 : 0.5));
      }
      first[out] = static_cast<std::uint32_t>(lo);
      count[out] = static_cast<std::uint32_t>(n);
    }
  }
};

TABLIO_ALWAYS_INLINE std::uint8_t clip_resampled(std::int32_t sum) noexcept {
  if (sum >= (1 << resample_bits << 8)) return 255;
  if (sum <= 0) return 0;
  return static_cast<std::uint8_t>(sum >> resample_bits);
}

// Output pixels (x, row) of rows [0, rows) from input rows [row0, row0 + rows), horizontally.
template <unsigned C>
void resample_rows(pixel_region in, std::uint32_t row0, std::uint32_t rows, const resample_axis& a,
                   std::uint8_t* out, std::uint32_t out_width) {
  for (std::uint32_t y = 0; y < rows; ++y) {
    const std::uint8_t* __restrict src = in.data + (row0 + y) * in.stride;
    std::uint8_t* __restrict dst = out + std::size_t{y} * out_width * C;
    for (std::uint32_t x = 0; x < out_width; ++x) {
      const std::int32_t* w = &a.weights[x * a.taps];
      const std::uint8_t* p = src + std::size_t{a.first[x]} * C;
      std::int32_t sum[C];
      for (unsigned c = 0; c < C; ++c) sum[c] = 1 << (resample_bits - 1);
      for (std::uint32_t i = 0; i < a.count[x]; ++i)
        for (unsigned c = 0; c < C; ++c) sum[c] += p[i * C + c] * w[i];
      for (unsigned c = 0; c < C; ++c) dst[x * C + c] = clip_resampled(sum[c]);
    }
  }
}

// Output rows, vertically: each from the input rows its weights name (first[y] - shift on).
template <unsigned C>
void resample_columns(const std::uint8_t* in, std::size_t in_stride, std::uint32_t shift,
                      const resample_axis& a, std::uint8_t* out, std::uint32_t width,
                      std::uint32_t out_height) {
  const std::size_t row = std::size_t{width} * C;
  std::vector<std::int32_t> sums(row);
  for (std::uint32_t y = 0; y < out_height; ++y) {
    const std::int32_t* w = &a.weights[y * a.taps];
    std::int32_t* __restrict s = sums.data();
    for (std::size_t i = 0; i < row; ++i) s[i] = 1 << (resample_bits - 1);
    const std::uint8_t* src = in + (a.first[y] - shift) * in_stride;
    for (std::uint32_t k = 0; k < a.count[y]; ++k, src += in_stride) {
      const std::uint8_t* __restrict r = src;
      const std::int32_t wk = w[k];
      for (std::size_t i = 0; i < row; ++i) s[i] += r[i] * wk;
    }
    std::uint8_t* __restrict dst = out + y * row;
    for (std::size_t i = 0; i < row; ++i) dst[i] = clip_resampled(s[i]);
  }
}

template <unsigned C>
void resample_image(pixel_region in, std::uint32_t width, std::uint32_t height, std::uint8_t* out) {
  const bool horizontal = width != in.width, vertical = height != in.height;
  if (!horizontal && !vertical) {
    for (std::uint32_t y = 0; y < height; ++y)
      for (std::size_t i = 0; i < std::size_t{width} * C; ++i)
        out[y * std::size_t{width} * C + i] = in.data[y * in.stride + i];
    return;
  }
  const resample_axis columns(in.width, width), rows(in.height, height);
  if (!horizontal) return resample_columns<C>(in.data, in.stride, 0, rows, out, width, height);
  // The horizontal pass runs over the input rows the vertical one reads, and only those.
  const std::uint32_t top = rows.first[0], bottom = rows.first[height - 1] + rows.count[height - 1];
  if (!vertical) return resample_rows<C>(in, 0, height, columns, out, width);
  thread_local std::vector<std::uint8_t> between;
  between.resize(std::size_t{bottom - top} * width * C);
  resample_rows<C>(in, top, bottom - top, columns, between.data(), width);
  resample_columns<C>(between.data(), std::size_t{width} * C, top, rows, out, width, height);
}

}  // namespace detail

// Resizes `in` to width x height into `out` ((H, W, C) bytes, resized to fit), with the pixels
// Pillow's Image.resize((width, height), Image.BILINEAR) gives for an image of the region alone
// (its crop), in 1 or 3 channels. Sizes of 0 give an empty image.
inline void resize_bilinear(pixel_region in, std::uint32_t width, std::uint32_t height,
                            std::vector<std::uint8_t>& out) {
  out.resize(std::size_t{width} * height * in.channels);
  if (width == 0 || height == 0 || in.width == 0 || in.height == 0) return;
  if (in.channels == 3)
    detail::resample_image<3>(in, width, height, out.data());
  else
    detail::resample_image<1>(in, width, height, out.data());
}

TABLIO_END_NAMESPACE
