// Pillow's bilinear resize of 8-bit images (Image.resize(size, Image.BILINEAR), which is what
// torchvision's Resize and RandomResizedCrop call on a PIL image), computed as Pillow computes
// it so that the pixels are Pillow's, not merely close: a triangle filter widened by the
// reduction factor (antialiasing), its weights normalised in double and rounded to 22-bit fixed
// point, a horizontal pass over the rows the vertical pass needs, then the vertical pass, each
// sum rounded and clipped to 0..255.
#pragma once

#include <tablio/core/config.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>  // SSE2, which every x86-64 processor has
#define TABLIO_RESAMPLE_SSE2 1
#endif
#if TABLIO_GNU_EXTENSIONS && defined(__x86_64__)
#include <immintrin.h>
#include <tablio/core/cpu_features.hpp>
#define TABLIO_RESAMPLE_AVX2 1  // also compiled for AVX2, used where the processor has it
#endif

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
// A 22-bit weight w is split as (w >> 11) * 2048 + (w & 2047), two halves that fit 16 bits, so
// that 16-bit multiply-adds give the 32-bit sums exactly: 2048 * sum(p * high) + sum(p * low).
inline constexpr int resample_half_bits = 11;

// One axis's filter: for each output position, the first input position it reads, how many,
// and their fixed-point weights (`taps` per position).
struct resample_axis {
  std::vector<std::uint32_t> first, count;
  std::vector<std::int32_t> weights;
  std::size_t taps = 0;
  // For each position, its weights in pairs (taps rounded up to even, the last of an odd count
  // paired with 0): the high halves of a pair in one 32-bit word (the first in its low 16
  // bits), and the low halves in another, as 16-bit multiply-adds take them.
  std::vector<std::int32_t> high_pairs, low_pairs;
  std::size_t pairs = 0;

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
    pairs = (taps + 1) / 2;
    high_pairs.assign(pairs * out_size, 0);
    low_pairs.assign(pairs * out_size, 0);
    auto pair = [](std::int32_t a, std::int32_t b) {
      return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint16_t>(a)) |
                                       static_cast<std::uint32_t>(static_cast<std::uint16_t>(b)) << 16);
    };
    for (std::uint32_t out = 0; out < out_size; ++out)
      for (std::size_t j = 0; j < pairs; ++j) {
        const std::int32_t* w = &weights[out * taps + 2 * j];
        const std::int32_t second = 2 * j + 1 < taps ? w[1] : 0;
        high_pairs[out * pairs + j] = pair(w[0] >> resample_half_bits, second >> resample_half_bits);
        low_pairs[out * pairs + j] =
            pair(w[0] & ((1 << resample_half_bits) - 1), second & ((1 << resample_half_bits) - 1));
      }
  }
};

#if defined(TABLIO_RESAMPLE_SSE2)
// The sums of 16-bit multiply-adds by high and low halves, rounded and clipped as Pillow does:
// ((high << 11) + low + 2^21) >> 22, saturated to 0..255 in 8-bit lanes (the low 4 or 8).
inline __m128i resampled_bytes(__m128i high0, __m128i low0, __m128i high1, __m128i low1) noexcept {
  const __m128i half = _mm_set1_epi32(1 << (resample_bits - 1));
  auto sum = [&](__m128i high, __m128i low) {
    return _mm_srai_epi32(_mm_add_epi32(_mm_add_epi32(_mm_slli_epi32(high, resample_half_bits), low), half),
                          resample_bits);
  };
  const __m128i words = _mm_packs_epi32(sum(high0, low0), sum(high1, low1));
  return _mm_packus_epi16(words, words);
}
#endif

TABLIO_ALWAYS_INLINE std::uint8_t clip_resampled(std::int32_t sum) noexcept {
  if (sum >= (1 << resample_bits << 8)) return 255;
  if (sum <= 0) return 0;
  return static_cast<std::uint8_t>(sum >> resample_bits);
}

#if defined(TABLIO_RESAMPLE_SSE2)
// An output column of 3-byte pixels for the vector loops: the offset of its first pixel in a row,
// its pairs of taps and their weights.
struct rgb_column {
  std::size_t start;
  std::uint32_t pairs;
  const std::int32_t *high, *low;
  rgb_column(const resample_axis& a, std::uint32_t at, std::uint32_t shift) noexcept
      : start(std::size_t{a.first[at] - shift} * 3),
        pairs((a.count[at] + 1) / 2),
        high(&a.high_pairs[at * a.pairs]),
        low(&a.low_pairs[at * a.pairs]) {}
  // Whether its loads, 8 bytes from each pair's first pixel, stay within a row of row_bytes.
  bool within(std::size_t row_bytes) const noexcept {
    return start + 6 * std::size_t{pairs} + 2 <= row_bytes;
  }
};

// Two rows of 3-byte pixels horizontally (src and src + stride, into dst and dst + dst_stride),
// from output column 0 on, sharing each column's weights: two taps' pixels at a time, loaded as
// 8 bytes from the first and spread as 16-bit (r0 r1 g0 g1 b0 b1 . .), so that a multiply-add by
// the pair's weights gives the (r, g, b, .) sums. Stops at the first column whose loads would pass
// the rows' `row_bytes` (left to the plain loop): returns where it stopped.
inline std::uint32_t resample_rgb_rows(const std::uint8_t* __restrict src, std::size_t stride,
                                       std::size_t row_bytes, const resample_axis& a, std::uint32_t first,
                                       std::uint32_t n, std::uint32_t shift, std::uint8_t* __restrict dst,
                                       std::size_t dst_stride) {
  const __m128i zero = _mm_setzero_si128();
  std::uint32_t x = 0;
  for (; x < n; ++x) {
    const rgb_column column(a, first + x, shift);
    if (!column.within(row_bytes)) break;
    __m128i high0 = zero, low0 = zero, high1 = zero, low1 = zero;
    const std::uint8_t* p = src + column.start;
    for (std::uint32_t j = 0; j < column.pairs; ++j, p += 6) {
      const __m128i rows = _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)),
                                              _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + stride)));
      const __m128i next = _mm_srli_epi64(rows, 24);  // each row's second pixel, under its first
      const __m128i words0 = _mm_unpacklo_epi8(_mm_unpacklo_epi8(rows, next), zero);
      const __m128i words1 = _mm_unpacklo_epi8(_mm_unpackhi_epi8(rows, next), zero);
      const __m128i h = _mm_set1_epi32(column.high[j]), l = _mm_set1_epi32(column.low[j]);
      high0 = _mm_add_epi32(high0, _mm_madd_epi16(words0, h));
      low0 = _mm_add_epi32(low0, _mm_madd_epi16(words0, l));
      high1 = _mm_add_epi32(high1, _mm_madd_epi16(words1, h));
      low1 = _mm_add_epi32(low1, _mm_madd_epi16(words1, l));
    }
    const __m128i bytes = resampled_bytes(high0, low0, high1, low1);
    const auto first_rgb = static_cast<std::uint32_t>(_mm_cvtsi128_si32(bytes));
    const auto second_rgb = static_cast<std::uint32_t>(_mm_cvtsi128_si32(_mm_srli_si128(bytes, 4)));
    std::memcpy(dst + std::size_t{x} * 3, &first_rgb, 3);
    std::memcpy(dst + dst_stride + std::size_t{x} * 3, &second_rgb, 3);
  }
  return x;
}
#endif

#if defined(TABLIO_RESAMPLE_AVX2)
// resample_rgb_rows for four rows (src + k * stride into dst + k * dst_stride), rows 0 and 1 in
// the low 128-bit lane of each register and rows 2 and 3 in the high one.
TABLIO_TARGET("avx2")
inline std::uint32_t resample_rgb_rows_avx2(const std::uint8_t* __restrict src, std::size_t stride,
                                            std::size_t row_bytes, const resample_axis& a,
                                            std::uint32_t first, std::uint32_t n, std::uint32_t shift,
                                            std::uint8_t* __restrict dst, std::size_t dst_stride) {
  const __m256i zero = _mm256_setzero_si256(), half = _mm256_set1_epi32(1 << (resample_bits - 1));
  std::uint32_t x = 0;
  for (; x < n; ++x) {
    const rgb_column column(a, first + x, shift);
    if (!column.within(row_bytes)) break;
    __m256i high02 = zero, low02 = zero, high13 = zero, low13 = zero;
    const std::uint8_t* p = src + column.start;
    for (std::uint32_t j = 0; j < column.pairs; ++j, p += 6) {
      const __m128i row0 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
      const __m128i row1 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + stride));
      const __m128i row2 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 2 * stride));
      const __m128i row3 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 3 * stride));
      const __m256i rows = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi64(row0, row1)),
                                                   _mm_unpacklo_epi64(row2, row3), 1);
      const __m256i next = _mm256_srli_epi64(rows, 24);  // each row's second pixel, under its first
      const __m256i words02 = _mm256_unpacklo_epi8(_mm256_unpacklo_epi8(rows, next), zero);
      const __m256i words13 = _mm256_unpacklo_epi8(_mm256_unpackhi_epi8(rows, next), zero);
      const __m256i h = _mm256_set1_epi32(column.high[j]), l = _mm256_set1_epi32(column.low[j]);
      high02 = _mm256_add_epi32(high02, _mm256_madd_epi16(words02, h));
      low02 = _mm256_add_epi32(low02, _mm256_madd_epi16(words02, l));
      high13 = _mm256_add_epi32(high13, _mm256_madd_epi16(words13, h));
      low13 = _mm256_add_epi32(low13, _mm256_madd_epi16(words13, l));
    }
    // ((high << 11) + low + 2^21) >> 22, saturated to bytes: rows 0, 1 | rows 2, 3, 4 bytes each
    const __m256i sums02 = _mm256_srai_epi32(
        _mm256_add_epi32(_mm256_add_epi32(_mm256_slli_epi32(high02, resample_half_bits), low02), half),
        resample_bits);
    const __m256i sums13 = _mm256_srai_epi32(
        _mm256_add_epi32(_mm256_add_epi32(_mm256_slli_epi32(high13, resample_half_bits), low13), half),
        resample_bits);
    const __m256i words = _mm256_packs_epi32(sums02, sums13);
    const __m256i bytes = _mm256_packus_epi16(words, words);
    const __m128i rows01 = _mm256_castsi256_si128(bytes), rows23 = _mm256_extracti128_si256(bytes, 1);
    const std::uint32_t rgb[4] = {static_cast<std::uint32_t>(_mm_cvtsi128_si32(rows01)),
                                  static_cast<std::uint32_t>(_mm_cvtsi128_si32(_mm_srli_si128(rows01, 4))),
                                  static_cast<std::uint32_t>(_mm_cvtsi128_si32(rows23)),
                                  static_cast<std::uint32_t>(_mm_cvtsi128_si32(_mm_srli_si128(rows23, 4)))};
    for (std::size_t k = 0; k < 4; ++k) std::memcpy(dst + k * dst_stride + std::size_t{x} * 3, &rgb[k], 3);
  }
  return x;
}
#endif

// One row horizontally: output columns [x, n) of it, the first of the row at `first` of the axis.
template <unsigned C>
void resample_row(const std::uint8_t* __restrict src, const resample_axis& a, std::uint32_t first,
                  std::uint32_t x, std::uint32_t n, std::uint32_t shift, std::uint8_t* __restrict dst) {
  for (; x < n; ++x) {
    const std::int32_t* w = &a.weights[(first + x) * a.taps];
    const std::uint8_t* p = src + std::size_t{a.first[first + x] - shift} * C;
    std::int32_t sum[C];
    for (unsigned c = 0; c < C; ++c) sum[c] = 1 << (resample_bits - 1);
    for (std::uint32_t i = 0; i < a.count[first + x]; ++i)
      for (unsigned c = 0; c < C; ++c) sum[c] += p[i * C + c] * w[i];
    for (unsigned c = 0; c < C; ++c) dst[x * C + c] = clip_resampled(sum[c]);
  }
}

// Rows [0, rows) horizontally, each holding `row_bytes` bytes: row y from src + y * stride into
// dst + y * dst_stride, output columns [0, n), the first at `first` of the axis.
template <unsigned C>
void resample_rows(const std::uint8_t* src, std::size_t stride, std::size_t row_bytes, const resample_axis& a,
                   std::uint32_t first, std::uint32_t n, std::uint32_t shift, std::uint8_t* dst,
                   std::size_t dst_stride, std::uint32_t rows) {
  std::uint32_t y = 0;
#if defined(TABLIO_RESAMPLE_AVX2)
  if constexpr (C == 3)
    if (cpu_has_avx2())
      for (; y + 4 <= rows; y += 4) {
        const std::uint8_t* from = src + y * stride;
        std::uint8_t* to = dst + y * dst_stride;
        const std::uint32_t x =
            resample_rgb_rows_avx2(from, stride, row_bytes, a, first, n, shift, to, dst_stride);
        for (std::uint32_t k = 0; k < 4; ++k)
          resample_row<C>(from + k * stride, a, first, x, n, shift, to + k * dst_stride);
      }
#endif
  for (; y < rows; y += 2) {
    const std::uint8_t* from = src + y * stride;
    std::uint8_t* to = dst + y * dst_stride;
    const bool pair = y + 1 < rows;  // an odd last row is done as a pair with itself
    std::uint32_t x = 0;
#if defined(TABLIO_RESAMPLE_SSE2)
    if constexpr (C == 3)
      x = resample_rgb_rows(from, pair ? stride : 0, row_bytes, a, first, n, shift, to,
                            pair ? dst_stride : 0);
#else
    (void)row_bytes;
#endif
    resample_row<C>(from, a, first, x, n, shift, to);
    if (pair) resample_row<C>(from + stride, a, first, x, n, shift, to + dst_stride);
  }
}

// Output row y of the axis vertically, from rows `stride` apart, row r at in + (r - shift) * stride.
template <unsigned C>
void resample_column(const std::uint8_t* in, std::size_t stride, std::uint32_t shift, const resample_axis& a,
                     std::uint32_t y, std::size_t bytes, std::int32_t* __restrict sums,
                     std::uint8_t* __restrict dst) {
  const std::int32_t* w = &a.weights[y * a.taps];
  const std::uint8_t* src = in + (a.first[y] - shift) * stride;
  std::size_t done = 0;
#if defined(TABLIO_RESAMPLE_SSE2)
  // Eight bytes at a time, two rows at a time: (p, p') of rows k and k + 1, times their weights.
  const std::uint32_t count = a.count[y];
  const std::int32_t* high = &a.high_pairs[y * a.pairs];
  const std::int32_t* low = &a.low_pairs[y * a.pairs];
  const __m128i zero = _mm_setzero_si128();
  for (; done + 8 <= bytes; done += 8) {
    __m128i high0 = zero, low0 = zero, high1 = zero, low1 = zero;
    const std::uint8_t* r = src + done;
    for (std::uint32_t k = 0; k < count; k += 2, r += 2 * stride) {
      const __m128i first = _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(r)), zero);
      const __m128i second =
          k + 1 < count
              ? _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(r + stride)), zero)
              : zero;
      const __m128i lanes0 = _mm_unpacklo_epi16(first, second), lanes1 = _mm_unpackhi_epi16(first, second);
      const __m128i h = _mm_set1_epi32(high[k / 2]), l = _mm_set1_epi32(low[k / 2]);
      high0 = _mm_add_epi32(high0, _mm_madd_epi16(lanes0, h));
      high1 = _mm_add_epi32(high1, _mm_madd_epi16(lanes1, h));
      low0 = _mm_add_epi32(low0, _mm_madd_epi16(lanes0, l));
      low1 = _mm_add_epi32(low1, _mm_madd_epi16(lanes1, l));
    }
    _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + done), resampled_bytes(high0, low0, high1, low1));
  }
#endif
  for (std::size_t i = done; i < bytes; ++i) sums[i] = 1 << (resample_bits - 1);
  for (std::uint32_t k = 0; k < a.count[y]; ++k, src += stride) {
    const std::uint8_t* __restrict r = src;
    const std::int32_t wk = w[k];
    for (std::size_t i = done; i < bytes; ++i) sums[i] += r[i] * wk;
  }
  for (std::size_t i = done; i < bytes; ++i) dst[i] = clip_resampled(sums[i]);
}

}  // namespace detail

// What to resize: an image of in_width x in_height to width x height, and the window of the
// result wanted (left, top, columns, rows; all of it by default).
struct resize_window {
  std::uint32_t in_width = 0, in_height = 0, width = 0, height = 0;
  std::uint32_t left = 0, top = 0, columns = 0, rows = 0;
};

// A rectangle of an image: columns [x0, x1), rows [y0, y1).
struct pixel_rect {
  std::uint32_t x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

// Pillow's bilinear resize (Image.resize(size, Image.BILINEAR)) of an image, computed for a
// window of the result from the part of the image that window reads (source()): the window's
// pixels are those of Pillow's whole result, so that a crop of a resized image costs the crop.
class bilinear_resize {
 public:
  // Computes the filters of both axes for the resize `w` names.
  explicit bilinear_resize(const resize_window& w) : w_(w) {
    if (!w_.columns && !w_.rows) {
      w_.columns = w_.width;
      w_.rows = w_.height;
    }
    horizontal_ = w_.width != w_.in_width;
    vertical_ = w_.height != w_.in_height;
    if (horizontal_) columns_.emplace(w_.in_width, w_.width);
    if (vertical_) rows_.emplace(w_.in_height, w_.height);
  }

  // What is resized, and the window of it computed.
  const resize_window& window() const noexcept { return w_; }

  // The input the window reads.
  pixel_rect source() const noexcept {
    pixel_rect r{w_.left, w_.top, w_.left + w_.columns, w_.top + w_.rows};
    if (w_.columns == 0 || w_.rows == 0) return r;
    if (horizontal_) {
      r.x0 = columns_->first[w_.left];
      r.x1 = columns_->first[r.x1 - 1] + columns_->count[r.x1 - 1];
    }
    if (vertical_) {
      r.y0 = rows_->first[w_.top];
      r.y1 = rows_->first[r.y1 - 1] + rows_->count[r.y1 - 1];
    }
    return r;
  }

  // Resizes: `in` holds the image's pixels from (source().x0, source().y0), at least to
  // source()'s end; `out` gets the window, (rows, columns, channels) bytes.
  void run(pixel_region in, std::vector<std::uint8_t>& out) const {
    out.resize(std::size_t{w_.columns} * w_.rows * in.channels);
    if (w_.columns == 0 || w_.rows == 0) return;
    if (in.channels == 3)
      run<3>(in, out.data());
    else
      run<1>(in, out.data());
  }

 private:
  template <unsigned C>
  void run(pixel_region in, std::uint8_t* out) const {
    const pixel_rect from = source();
    const std::size_t row_bytes = std::size_t{w_.columns} * C,
                      in_row_bytes = std::size_t{from.x1 - from.x0} * C;
    if (!horizontal_ && !vertical_) {
      for (std::uint32_t y = 0; y < w_.rows; ++y)
        std::copy_n(in.data + y * in.stride, row_bytes, out + y * row_bytes);
      return;
    }
    if (!vertical_) {
      detail::resample_rows<C>(in.data, in.stride, in_row_bytes, *columns_, w_.left, w_.columns, from.x0, out,
                               row_bytes, w_.rows);
      return;
    }
    thread_local std::vector<std::int32_t> sums;
    sums.resize(row_bytes);
    if (!horizontal_) {
      const std::uint8_t* first_column = in.data + std::size_t{w_.left - from.x0} * C;
      for (std::uint32_t y = 0; y < w_.rows; ++y)
        detail::resample_column<C>(first_column, in.stride, from.y0, *rows_, w_.top + y, row_bytes,
                                   sums.data(), out + y * row_bytes);
      return;
    }
    // The horizontal pass over the input rows the vertical one reads, and only those.
    thread_local std::vector<std::uint8_t> between;
    between.resize(std::size_t{from.y1 - from.y0} * row_bytes);
    detail::resample_rows<C>(in.data, in.stride, in_row_bytes, *columns_, w_.left, w_.columns, from.x0,
                             between.data(), row_bytes, from.y1 - from.y0);
    for (std::uint32_t y = 0; y < w_.rows; ++y)
      detail::resample_column<C>(between.data(), row_bytes, from.y0, *rows_, w_.top + y, row_bytes,
                                 sums.data(), out + y * row_bytes);
  }

  resize_window w_;
  bool horizontal_ = false, vertical_ = false;
  std::optional<detail::resample_axis> columns_, rows_;
};

// Resizes `in` to width x height into `out` ((H, W, C) bytes, resized to fit), with the pixels
// Pillow's Image.resize((width, height), Image.BILINEAR) gives for an image of the region alone
// (its crop), in 1 or 3 channels. Sizes of 0 give an empty image.
inline void resize_bilinear(pixel_region in, std::uint32_t width, std::uint32_t height,
                            std::vector<std::uint8_t>& out) {
  if (width == 0 || height == 0 || in.width == 0 || in.height == 0) {
    out.clear();
    return;
  }
  bilinear_resize({in.width, in.height, width, height}).run(in, out);
}

TABLIO_END_NAMESPACE
