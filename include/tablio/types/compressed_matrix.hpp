// Kaldi's CompressedMatrix, bit-exact: the same compressed bytes as Kaldi for every method
// (1-7) and the same decompressed floats, evaluated in Kaldi's order and precision.
//
// Binary: "CM " / "CM2 " / "CM3 ", then 16 raw bytes {float min_value, float range, int32
// rows, int32 cols}, then for CM per-column headers {uint16 p0, p25, p75, p100} and the bytes
// column by column; for CM2 uint16 and for CM3 uint8 values row by row. Text: the
// decompressed matrix in Kaldi's text form (read back and recompressed with method 1).
#pragma once

#include <tablio/codec/concepts.hpp>
#include <tablio/core/config.hpp>
#include <tablio/core/endian.hpp>
#include <tablio/core/float_math.hpp>
#include <tablio/types/kaldi_matrix_io.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// Kaldi's CompressionMethod values.
enum class compression_method : int {
  automatic = 1,                  // CM when rows > 8, else CM2
  speech_feature = 2,             // CM: per-column percentiles, one byte per value
  two_byte_auto = 3,              // CM2 over the matrix's range
  two_byte_signed_integer = 4,    // CM2 over [-32768, 32767]
  one_byte_auto = 5,              // CM3 over the matrix's range
  one_byte_unsigned_integer = 6,  // CM3 over [0, 255]
  one_byte_zero_one = 7,          // CM3 over [0, 1]
};

namespace detail {

// Without FMA contraction: Kaldi's results are those of separately rounded operations. Only
// when the compiler may fuse (FMA instructions, e.g. -march=native on x86) is a register
// barrier needed.
template <class F>
inline F unfused(F x) noexcept {
#if (defined(__FP_FAST_FMAF) || defined(__FP_FAST_FMA) || defined(__FMA__)) && TABLIO_GNU_EXTENSIONS
#if defined(__x86_64__) || defined(__i386__)
  __asm__("" : "+x"(x));
#elif defined(__aarch64__)
  __asm__("" : "+w"(x));
#else
  volatile F v = x;
  x = v;
#endif
#endif
  return x;
}

// unfused() in place, for a value or a portable vector (a vector argument by value changes the
// ABI, and GCC warns).
template <class V>
TABLIO_ALWAYS_INLINE void keep_unfused(V& x) noexcept {
#if (defined(__FP_FAST_FMAF) || defined(__FP_FAST_FMA) || defined(__FMA__)) && TABLIO_GNU_EXTENSIONS
#if defined(__x86_64__) || defined(__i386__)
  __asm__("" : "+x"(x));  // FMA comes with AVX, whose registers hold eight floats
#else
  __asm__("" : "+m"(x));
#endif
#else
  static_cast<void>(x);
#endif
}

#if TABLIO_GNU_EXTENSIONS
// GCC's and Clang's portable vectors: SSE2, AVX or NEON registers, whichever the function is
// compiled for.
#define TABLIO_VECTOR_EXTENSIONS
using float8 = float __attribute__((vector_size(32)));
using float4 = float __attribute__((vector_size(16)));
using double4 = double __attribute__((vector_size(32)));
using int32x8 = std::int32_t __attribute__((vector_size(32)));
using uint16x8 = std::uint16_t __attribute__((vector_size(16)));
using uint8x8 = std::uint8_t __attribute__((vector_size(8)));
// Asks for the line `ahead` bytes past p, which may lie past the array (a prefetch never faults,
// and no pointer is formed there). The loops that read a matrix once wait on memory without it.
// Inlined by force: GCC takes a function that only prefetches for one without effects, and
// drops its calls.
TABLIO_ALWAYS_INLINE void prefetch(const void* p, std::size_t ahead) noexcept {
  TABLIO_PREFETCH(reinterpret_cast<std::uintptr_t>(p) + ahead);
}
#if (defined(__x86_64__) || defined(__i386__)) && !defined(__AVX__) && !defined(TABLIO_NO_CPU_DISPATCH)
// Hot loops also compiled for AVX, chosen at run time on the CPUs that have it.
#define TABLIO_AVX_DISPATCH
#endif
#endif

}  // namespace detail

// A matrix stored as Kaldi's CompressedMatrix holds it: a global minimum and range, then 8- or
// 16-bit codes (see tablio/types/compressed_matrix.hpp). Made by compressing floats or doubles, or read from
// Kaldi's binary form; it gives back floats through decompress().
class compressed_matrix {
 public:
  // How the values are coded, as the token names it: CM, CM2 or CM3.
  enum class format : std::int32_t { one_byte_with_column_headers = 1, two_byte = 2, one_byte = 3 };

  compressed_matrix() = default;

  // Compresses rows x cols row-major values as Kaldi's CompressedMatrix(mat, method) does.
  template <std::floating_point T>
  compressed_matrix(const T* data, std::int32_t rows, std::int32_t cols,
                    compression_method method = compression_method::automatic) {
    compress(data, rows, cols, method);
  }

  // Rows of the matrix it holds; 0 when empty.
  std::int32_t num_rows() const noexcept { return rows_; }
  // Columns of the matrix it holds; 0 when empty.
  std::int32_t num_cols() const noexcept { return cols_; }
  // Whether it holds no matrix (0 x 0), as a default-constructed one does.
  bool empty() const noexcept { return cols_ == 0; }
  // How the values are coded: CM, CM2 or CM3.
  format storage_format() const noexcept { return format_; }
  // The least value the codes stand for (the global header's min_value).
  float min_value() const noexcept { return min_value_; }
  // The span of values the codes stand for: the greatest is min_value() + range().
  float range() const noexcept { return range_; }
  // The stored bytes after the 16-byte header (column headers and values).
  const std::vector<unsigned char>& bytes() const noexcept { return data_; }
  // Multiplies every value by alpha, as Kaldi's CompressedMatrix::Scale: the codes stay, the
  // span they stand for is scaled.
  void scale(float alpha) noexcept {
    min_value_ *= alpha;
    range_ *= alpha;
  }

  // Replaces the contents with rows x cols row-major values compressed by `method`, bit for bit
  // as Kaldi's CompressedMatrix::CopyFromMat. Throws usage_error for a shape Kaldi cannot hold
  // (rows or columns alone zero), and for NaN or infinite values, which leave it empty.
  template <std::floating_point T>
  void compress(const T* data, std::int32_t rows, std::int32_t cols, compression_method method) {
    kaldi_io::check_matrix_shape(rows, cols);
    data_.clear();
    rows_ = cols_ = 0;
    if (rows == 0) return;
    if (method == compression_method::automatic)
      method = rows > 8 ? compression_method::speech_feature : compression_method::two_byte_auto;
    switch (method) {
      case compression_method::speech_feature:
        format_ = format::one_byte_with_column_headers;
        break;
      case compression_method::two_byte_auto:
      case compression_method::two_byte_signed_integer:
        format_ = format::two_byte;
        break;
      case compression_method::one_byte_auto:
      case compression_method::one_byte_unsigned_integer:
      case compression_method::one_byte_zero_one:
        format_ = format::one_byte;
        break;
      default:
        throw_usage_error({"invalid compression method ", decimal(static_cast<int>(method))});
    }
    const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    float min_value, range;
    switch (method) {
      case compression_method::two_byte_signed_integer:
        min_value = -32768.0f;
        range = 65535.0f;
        break;
      case compression_method::one_byte_unsigned_integer:
        min_value = 0.0f;
        range = 255.0f;
        break;
      case compression_method::one_byte_zero_one:
        min_value = 0.0f;
        range = 1.0f;
        break;
      default: {
        T lo, hi;
        if (find_range(data, n, lo, hi)) throw_nan();
        min_value = static_cast<float>(lo);
        float max_value = static_cast<float>(hi);
        if (max_value == min_value)
          max_value = static_cast<float>(min_value + (1.0 + detail::magnitude(min_value)));
        if (!detail::is_finite(min_value) || !detail::is_finite(max_value) ||
            !detail::is_finite(max_value - min_value))
          throw_usage_error({"cannot compress a matrix with infinite values or a range beyond float's"});
        range = max_value - min_value;
      }
    }
    rows_ = rows;
    cols_ = cols;
    data_.resize(data_size() - header_size);
    unsigned char* out = data_.data();
    if (format_ != format::one_byte_with_column_headers) {
      // The fixed ranges find NaN here, in the same pass.
      if (format_ == format::two_byte ? quantize_all<std::uint16_t>(data, n, out, min_value, range)
                                      : quantize_all<std::uint8_t>(data, n, out, min_value, range)) {
        data_.clear();
        rows_ = cols_ = 0;
        throw_nan();
      }
      min_value_ = min_value;
      range_ = range;
      return;
    }
    min_value_ = min_value;
    range_ = range;
    const auto nrows = static_cast<std::size_t>(rows), ncols = static_cast<std::size_t>(cols);
    std::vector<T> column(nrows);
    unsigned char* bytes = out + 8 * ncols;
    for (std::size_t c = 0; c < ncols; ++c) {
      for (std::size_t r = 0; r < nrows; ++r) column[r] = data[r * ncols + c];
      std::uint16_t p[4];
      column_percentiles(column, p);
      for (std::size_t k = 0; k < 4; ++k) store<std::endian::little>(out + 8 * c + 2 * k, p[k]);
      float f0 = uint16_to_float(p[0]), f25 = uint16_to_float(p[1]), f75 = uint16_to_float(p[2]),
            f100 = uint16_to_float(p[3]);
      for (std::size_t r = 0; r < nrows; ++r)
        bytes[c * nrows + r] = float_to_char(f0, f25, f75, f100, static_cast<float>(data[r * ncols + c]));
    }
  }

  // Decompresses into rows x cols row-major values, as CompressedMatrix::CopyToMat does.
  template <std::floating_point T>
  void decompress(T* out) const {
    decompress_body(data_.data(), out);
  }

  // Reads a binary body (as read_binary) and decompresses it into `values`, resized to
  // rows x cols: a matrix stored compressed, read without keeping the compressed bytes. They
  // are decompressed where they lie in the reader's buffer when they are all there.
  template <std::floating_point T>
  static void read_decompressed(reader& r, std::int32_t& rows, std::int32_t& cols, std::vector<T>& values) {
    compressed_matrix header;
    std::uint64_t body = header.read_header(r);
    std::span<const char> window = r.window();
    if (window.size() >= body) {
      values.resize(static_cast<std::size_t>(header.element_count()));
      header.decompress_body(reinterpret_cast<const unsigned char*>(window.data()), values.data());
      r.advance(static_cast<std::size_t>(body));
    } else {
      header.read_body(r, body);
      values.resize(static_cast<std::size_t>(header.element_count()));
      header.decompress(values.data());
    }
    rows = header.rows_;
    cols = header.cols_;
  }

 private:
  template <std::floating_point T>
  void decompress_body(const unsigned char* in, T* out) const {
    const std::size_t rows = static_cast<std::size_t>(rows_), cols = static_cast<std::size_t>(cols_);
    if (format_ == format::one_byte_with_column_headers) {
      const unsigned char* bytes = in + 8 * cols;
      auto percentile = [&](std::size_t c, int k) {
        return uint16_to_float(load<std::endian::little, std::uint16_t>(in + 8 * c + 2 * k));
      };
      if (rows <= 128) {
        for (std::size_t c = 0; c < cols; ++c) {
          float p0 = percentile(c, 0), p25 = percentile(c, 1), p75 = percentile(c, 2),
                p100 = percentile(c, 3);
          for (std::size_t r = 0; r < rows; ++r)
            out[r * cols + c] = static_cast<T>(char_to_float(p0, p25, p75, p100, bytes[c * rows + r]));
        }
        return;
      }
      // With many rows, a byte's value depends only on its column's four percentiles: map the
      // 256 bytes of each column once, then look the rows up. Eight columns at a time, so that
      // each row's eight values are written together (column by column, every write lands in
      // another cache line); the unrolled lookups run about twice as fast.
      constexpr std::size_t block = 8;
      float tables[block][256];
      auto fill = [&](std::size_t first, std::size_t n) {
        for (std::size_t j = 0; j < n; ++j)
          fill_char_table(percentile(first + j, 0), percentile(first + j, 1), percentile(first + j, 2),
                          percentile(first + j, 3), tables[j]);
      };
      std::size_t c = 0;
      for (; c + block <= cols; c += block) {
        fill(c, block);
        const unsigned char* columns = bytes + c * rows;
        T* o = out + c;
        lookup_rows(tables, columns, rows, cols, o, std::make_index_sequence<block>());
      }
      for (; c < cols; ++c) {
        fill(c, 1);
        const unsigned char* column = bytes + c * rows;
        for (std::size_t r = 0; r < rows; ++r) out[r * cols + c] = static_cast<T>(tables[0][column[r]]);
      }
    } else if (format_ == format::two_byte) {
      const float increment = static_cast<float>(range_ * (1.0 / 65535.0));
      const std::size_t n = rows * cols;
      for (std::size_t i = 0; i < n; ++i)
        out[i] = static_cast<T>(
            min_value_ + detail::unfused(load<std::endian::little, std::uint16_t>(in + 2 * i) * increment));
    } else {
      const float increment = static_cast<float>(range_ * (1.0 / 255.0));
      const std::size_t n = rows * cols;
      for (std::size_t i = 0; i < n; ++i)
        out[i] = static_cast<T>(min_value_ + detail::unfused(in[i] * increment));
    }
  }

 public:
  // Kaldi binary object body (no "\0B"). An empty matrix is written as Kaldi writes it: "CM "
  // and 20 bytes, of which Kaldi leaves the first 4 uninitialised (written here as zeros).
  void write_binary(writer& w) const {
    if (empty()) {
      w.write("CM ", 3);
      static constexpr char zeros[20] = {};
      w.write(zeros, sizeof zeros);
      return;
    }
    w.write(format_ == format::one_byte_with_column_headers ? "CM "
            : format_ == format::two_byte                   ? "CM2 "
                                                            : "CM3 ",
            format_ == format::one_byte_with_column_headers ? 3 : 4);
    char header[16];
    store<std::endian::little>(header, min_value_);
    store<std::endian::little>(header + 4, range_);
    store<std::endian::little>(header + 8, rows_);
    store<std::endian::little>(header + 12, cols_);
    w.write(header, 16);
    w.write(reinterpret_cast<const char*>(data_.data()), data_.size());
  }

  // Reads the binary body. After an empty matrix Kaldi's own files hold 4 stray zero bytes
  // (see write_binary); they are consumed here so that the next key reads cleanly.
  void read_binary(reader& r) { read_body(r, read_header(r)); }

  // Whether both hold the same header and codes: the same bytes, not merely the same values.
  bool operator==(const compressed_matrix&) const = default;

 private:
  static constexpr std::uint64_t header_size = 16;

  // Reads the token and the 16-byte header, and returns how many bytes the body has.
  std::uint64_t read_header(reader& r) {
    std::uint64_t at = r.tell();
    std::string token;
    kaldi_io::read_token(r, token);
    if (token == "CM")
      format_ = format::one_byte_with_column_headers;
    else if (token == "CM2")
      format_ = format::two_byte;
    else if (token == "CM3")
      format_ = format::one_byte;
    else
      r.fail_at(at, {"token CM, CM2 or CM3"}, {quoted_excerpt(token)});
    char header[16];
    r.read_exact(header, 16, "bytes of compressed matrix header");
    min_value_ = load<std::endian::little, float>(header);
    range_ = load<std::endian::little, float>(header + 4);
    std::int32_t rows = load<std::endian::little, std::int32_t>(header + 8);
    std::int32_t cols = load<std::endian::little, std::int32_t>(header + 12);
    data_.clear();
    rows_ = cols_ = 0;
    if (cols == 0) {
      if (r.ensure(4) && std::memcmp(r.window().data(), "\0\0\0\0", 4) == 0) r.advance(4);
      return 0;
    }
    if (rows <= 0 || cols < 0)
      r.fail_at(at, {"compressed matrix dimensions that are positive"}, {decimal(rows), "x", decimal(cols)});
    rows_ = rows;
    cols_ = cols;
    return data_size() - header_size;
  }

  // Reads the body that read_header announced.
  void read_body(reader& r, std::uint64_t body) {
    if (body == 0) return;
    try {
      r.check_available(body, 1, "compressed matrix bytes");
      // On a stream of unknown size the bytes are kept only as they arrive.
      detail::read_sized_array(r, data_, body, [&](unsigned char* bytes, std::size_t n) {
        r.read_exact(reinterpret_cast<char*>(bytes), n, "compressed matrix bytes");
      });
    } catch (...) {
      rows_ = cols_ = 0;
      data_.clear();
      throw;
    }
  }

  std::uint64_t element_count() const noexcept {
    return static_cast<std::uint64_t>(rows_) * static_cast<std::uint64_t>(cols_);
  }

  std::uint64_t data_size() const noexcept {
    const std::uint64_t rows = static_cast<std::uint64_t>(rows_), cols = static_cast<std::uint64_t>(cols_);
    switch (format_) {
      case format::one_byte_with_column_headers:
        return header_size + cols * (8 + rows);
      case format::two_byte:
        return header_size + 2 * rows * cols;
      default:
        return header_size + rows * cols;
    }
  }

  float uint16_to_float(std::uint16_t v) const noexcept {
    return min_value_ + detail::unfused(detail::unfused(range_ * 1.52590218966964e-05F) * v);
  }
  std::uint16_t float_to_uint16(float value) const noexcept {
    int code;
    quantize(value, min_value_, range_, 65535, code);
    return static_cast<std::uint16_t>(code);
  }

  [[noreturn]] TABLIO_COLD static void throw_nan() {
    // NaN has no byte code (Kaldi's conversion of it is undefined behaviour).
    throw_usage_error({"cannot compress a matrix with NaN values"});
  }

  // Kaldi's FloatToUint16 (top 65535) and FloatToUint8 (top 255), of one float or of each float
  // in a vector (Int then a vector of as many): the float quotient clamped to [0, 1], times top
  // in float, plus 0.499 in double, truncated. The last two without double: for every float p
  // in [0, 65535], int(p + 0.499) in double is trunc(p) + 1 exactly when p - trunc(p) (exact) is
  // at least 0x1.008314p-1, the least float t with t + 0.499 >= 1 in double (checked for each of
  // the 1.2e9 floats); the conversions to double and back took more time than all the rest.
  template <class Int, class V>
  TABLIO_ALWAYS_INLINE static void quantize(const V& value, float min_value, float range, float top,
                                            Int& code) noexcept {
    V f = (value - min_value) / range;
    f = f > 1.0f ? 1.0f : f;
    f = f >= 0.0f ? f : 0.0f;  // NaN too (inf / inf)
    V p = f * top;
    detail::keep_unfused(p);  // p - trunc(p) must not be fused with the product
    constexpr float threshold = 0x1.008314p-1f;
    if constexpr (std::is_arithmetic_v<V>) {
      code = static_cast<Int>(p);
      code += p - static_cast<float>(code) >= threshold;
    }
#if defined(TABLIO_VECTOR_EXTENSIONS)
    else {
      code = __builtin_convertvector(p, Int);
      code -= p - __builtin_convertvector(code, V) >= threshold;  // a true lane is -1
    }
#endif
  }

  // out[i] = quantize(in[i]) as little-endian Code (uint16 or uint8), eight at a time; returns
  // whether any value is NaN.
  template <class Code, class T>
  static bool quantize_all(const T* in, std::size_t n, unsigned char* out, float min_value,
                           float range) noexcept {
#if defined(TABLIO_AVX_DISPATCH)
    if (has_avx()) return quantize_all_avx<Code>(in, n, out, min_value, range);
#endif
    return quantize_all_inline<Code>(in, n, out, min_value, range);
  }

#if defined(TABLIO_AVX_DISPATCH)
  template <class Code, class T>
  TABLIO_TARGET("avx")
  static bool quantize_all_avx(const T* in, std::size_t n, unsigned char* out, float min_value,
                               float range) noexcept {
    return quantize_all_inline<Code>(in, n, out, min_value, range);
  }
#endif

  template <class Code, class T>
  TABLIO_ALWAYS_INLINE static bool quantize_all_inline(const T* in, std::size_t n, unsigned char* out,
                                                       float min_value, float range) noexcept {
    constexpr float top = std::numeric_limits<Code>::max();
    std::size_t i = 0;
    bool nan = false;
#if defined(TABLIO_VECTOR_EXTENSIONS)
    if constexpr (std::is_same_v<T, float> && std::endian::native == std::endian::little) {
      using codes = std::conditional_t<sizeof(Code) == 2, detail::uint16x8, detail::uint8x8>;
      detail::int32x8 any_nan = {};
      for (; i + 8 <= n; i += 8) {
        detail::prefetch(in + i, 2048);
        detail::float8 v;
        std::memcpy(&v, in + i, sizeof v);
        any_nan |= v != v;
        detail::int32x8 code;
        quantize(v, min_value, range, top, code);
        // Through uint16 (pack instructions): straight to uint8, GCC goes lane by lane.
        codes c = __builtin_convertvector(__builtin_convertvector(code, detail::uint16x8), codes);
        std::memcpy(out + i * sizeof(Code), &c, sizeof c);
      }
      for (int k = 0; k < 8; ++k) nan |= any_nan[k] != 0;
    }
#endif
    for (; i < n; ++i) {
      float v = static_cast<float>(in[i]);
      nan |= v != v;
      int code;
      quantize(v, min_value, range, top, code);
      store<std::endian::little>(out + i * sizeof(Code), static_cast<Code>(code));
    }
    return nan;
  }

  // The least and the greatest value as Kaldi's Min() and Max() find them; returns whether
  // any value is NaN.
  template <class T>
  static bool find_range(const T* data, std::size_t n, T& lo, T& hi) noexcept {
#if defined(TABLIO_AVX_DISPATCH)
    if (has_avx()) return find_range_avx(data, n, lo, hi);
#endif
    return find_range_inline(data, n, lo, hi);
  }

#if defined(TABLIO_AVX_DISPATCH)
  template <class T>
  TABLIO_TARGET("avx")
  static bool find_range_avx(const T* data, std::size_t n, T& lo, T& hi) noexcept {
    return find_range_inline(data, n, lo, hi);
  }
#endif

  template <class T>
  TABLIO_ALWAYS_INLINE static bool find_range_inline(const T* data, std::size_t n, T& lo, T& hi) noexcept {
    lo = hi = data[0];
    bool nan = false;
    std::size_t i = 0;
#if defined(TABLIO_VECTOR_EXTENSIONS)
    if constexpr (std::is_same_v<T, float>) {
      // Two vectors of each: one min or max waits for the last, and the chains run in parallel.
      detail::float8 vlo[2], vhi[2];
      vlo[0] = vlo[1] = vhi[0] = vhi[1] = lo - detail::float8{};  // x - 0 is x, -0 too
      detail::int32x8 any_nan = {};
      for (; i + 16 <= n; i += 16) {
        detail::prefetch(data + i, 2048);
        for (int j = 0; j < 2; ++j) {
          detail::float8 v;
          std::memcpy(&v, data + i + 8 * j, sizeof v);
          any_nan |= v != v;
          vlo[j] = v < vlo[j] ? v : vlo[j];
          vhi[j] = v > vhi[j] ? v : vhi[j];
        }
      }
      for (int k = 0; k < 16; ++k) {
        if (vlo[k / 8][k % 8] < lo) lo = vlo[k / 8][k % 8];
        if (vhi[k / 8][k % 8] > hi) hi = vhi[k / 8][k % 8];
        nan |= any_nan[k % 8] != 0;
      }
    }
#endif
    for (; i < n; ++i) {
      nan |= data[i] != data[i];
      if (data[i] < lo) lo = data[i];
      if (data[i] > hi) hi = data[i];
    }
    // Of equal least values Kaldi keeps the first, and the lanes above kept their own first. Only
    // zeros differ in their bits (a -0 minimum is stored as such): take the first zero. (The
    // greatest value is only subtracted from, where its zero's sign makes no difference.)
    if (lo == 0) lo = *std::find(data, data + n, T(0));
    return nan;
  }
  // out[r * cols + J] = tables[J][columns[J * rows + r]] for every row r, J unrolled.
  template <class T, std::size_t... J>
  static void lookup_rows(const float (*tables)[256], const unsigned char* columns, std::size_t rows,
                          std::size_t cols, T* __restrict out, std::index_sequence<J...>) noexcept {
    for (std::size_t r = 0; r < rows; ++r, out += cols)
      ((out[J] = static_cast<T>(tables[J][columns[J * rows + r]])), ...);
  }

  // Kaldi's CharToFloat: float slope times the byte, then the double constant, summed in
  // double and rounded to float.
  static float char_to_float(float p0, float p25, float p75, float p100, int v) noexcept {
    double f;
    if (v <= 64)
      f = p0 + detail::unfused(detail::unfused((p25 - p0) * static_cast<float>(v)) * (1 / 64.0));
    else if (v <= 192)
      f = p25 + detail::unfused(detail::unfused((p75 - p25) * static_cast<float>(v - 64)) * (1 / 128.0));
    else
      f = p75 + detail::unfused(detail::unfused((p100 - p75) * static_cast<float>(v - 192)) * (1 / 63.0));
    return static_cast<float>(f);
  }

  // char_to_float for every byte: three runs of `base + (slope * (v - offset)) * scale`.
  static void fill_char_table(float p0, float p25, float p75, float p100, float* table) noexcept {
#if defined(TABLIO_AVX_DISPATCH)
    if (has_avx()) return fill_char_table_avx(p0, p25, p75, p100, table);
#endif
    fill_char_table_inline(p0, p25, p75, p100, table);
  }

#if defined(TABLIO_AVX_DISPATCH)
  static bool has_avx() noexcept {
    static const bool avx = [] {
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx") != 0;
    }();
    return avx;
  }

  // The same code compiled for AVX's 256-bit registers, for the CPUs that have them.
  TABLIO_TARGET("avx")
  static void fill_char_table_avx(float p0, float p25, float p75, float p100, float* table) noexcept {
    fill_char_table_inline(p0, p25, p75, p100, table);
  }
#endif

  TABLIO_ALWAYS_INLINE static void fill_char_table_inline(float p0, float p25, float p75, float p100,
                                                          float* table) noexcept {
    fill_power_of_two_run(table, 0, 64, p0, p25 - p0, 0, 0x1p-6f);
    fill_power_of_two_run(table, 65, 192, p25, p75 - p25, 64, 0x1p-7f);
    fill_run(table, 193, 255, p75, p100 - p75, 192, 1 / 63.0);
  }

  // fill_run for a scale of 2^-6 or 2^-7, in float alone where that gives the same floats.
  // Scaling by a power of two is exact unless the result leaves float's normal range, and a
  // float sum computed in double and rounded to float is the correctly rounded float sum
  // (double has more than 2 * 24 + 1 bits). So when the slope is finite and either 0 or at
  // least 2^-119 (every nonzero product slope * v is then at least that, and scaled stays
  // normal), float arithmetic yields Kaldi's values bit for bit, at twice the width. A fused
  // multiply-add would change nothing either: the scaled product is exact.
  TABLIO_ALWAYS_INLINE static void fill_power_of_two_run(float* table, int from, int to, float base,
                                                         float slope, int offset, float scale) noexcept {
    const bool exact_in_float = detail::is_finite(base) && detail::is_finite(slope) &&
                                (slope == 0 || detail::magnitude(slope) >= 0x1p-119f);
    if (!exact_in_float) return fill_run(table, from, to, base, slope, offset, scale);
    int v = from;
#if defined(TABLIO_VECTOR_EXTENSIONS)
    const float first = static_cast<float>(v - offset);  // small integers: exact in float
    detail::float8 w = {first, first + 1, first + 2, first + 3, first + 4, first + 5, first + 6, first + 7};
    for (; v + 7 <= to; v += 8, w += 8) {
      detail::float8 values = base + (slope * w) * scale;
      std::memcpy(table + v, &values, sizeof values);
    }
#endif
    for (; v <= to; ++v) table[v] = base + (slope * static_cast<float>(v - offset)) * scale;
  }

  // table[v] = float(base + double(slope * float(v - offset)) * scale) for v in [from, to]:
  // the same operations in the same precision as char_to_float, four at a time on x86 (where
  // a register barrier can hold a vector of four doubles).
  TABLIO_ALWAYS_INLINE static void fill_run(float* table, int from, int to, float base, float slope,
                                            int offset, double scale) noexcept {
    int v = from;
#if defined(TABLIO_VECTOR_EXTENSIONS) && (defined(__x86_64__) || defined(__i386__))
    const float first = static_cast<float>(v - offset);
    detail::float4 w = {first, first + 1, first + 2, first + 3};
    for (; v + 3 <= to; v += 4, w += 4) {
      detail::double4 scaled = __builtin_convertvector(slope * w, detail::double4) * scale;
#if defined(__FP_FAST_FMA) || defined(__FMA__)
      __asm__("" : "+x"(scaled));  // keep the add below from fusing with the product
#endif
      detail::float4 values = __builtin_convertvector(base + scaled, detail::float4);
      std::memcpy(table + v, &values, sizeof values);
    }
#endif
    for (; v <= to; ++v)
      table[v] = static_cast<float>(
          base + detail::unfused(detail::unfused(slope * static_cast<float>(v - offset)) * scale));
  }

  // Kaldi's int cast then clamp to [0, hi], with the clamp first: the same result wherever the
  // cast is defined, and 0 or hi (not undefined behaviour) for NaN and huge values.
  static int truncate_clamped(double v, int hi) noexcept {
    if (!(v >= 0)) return 0;
    if (v >= hi) return hi;
    return static_cast<int>(v);
  }

  static std::uint8_t float_to_char(float p0, float p25, float p75, float p100, float value) noexcept {
    int ans;
    if (value < p25) {
      float f = (value - p0) / (p25 - p0);
      ans = truncate_clamped(detail::unfused(f * 64) + 0.5, 64);
    } else if (value < p75) {
      float f = (value - p25) / (p75 - p25);
      ans = 64 + truncate_clamped(detail::unfused(f * 128) + 0.5, 128);
    } else {
      float f = (value - p75) / (p100 - p75);
      ans = 192 + truncate_clamped(detail::unfused(f * 63) + 0.5, 63);
    }
    return static_cast<std::uint8_t>(ans);
  }

  // The column header: order statistics at 0, n/4, 3n/4 and n-1 (sorted values 0..3 for
  // fewer than 5 rows), forced strictly increasing as Kaldi's ComputeColHeader does.
  template <class T>
  void column_percentiles(std::vector<T>& column, std::uint16_t p[4]) const {
    const std::size_t n = column.size();
    auto u16 = [&](T v) { return static_cast<int>(float_to_uint16(static_cast<float>(v))); };
    int q[4];
    if (n >= 5) {
      // Each order statistic in the part the one before left, as Kaldi finds them: the values,
      // and so the codes, are those of the whole column's.
      const auto quarter = static_cast<std::ptrdiff_t>(n / 4);
      const auto first = column.begin(), q1 = first + quarter, q3 = first + 3 * quarter, last = column.end();
      std::nth_element(first, q1, last);
      q[0] = u16(*std::min_element(first, q1));
      q[1] = u16(*q1);
      std::nth_element(q1 + 1, q3, last);
      q[2] = u16(*q3);
      q[3] = u16(*std::max_element(q3 + 1, last));
      p[0] = static_cast<std::uint16_t>(std::min(q[0], 65532));
      p[1] = static_cast<std::uint16_t>(std::min(std::max(q[1], p[0] + 1), 65533));
      p[2] = static_cast<std::uint16_t>(std::min(std::max(q[2], p[1] + 1), 65534));
      p[3] = static_cast<std::uint16_t>(std::max(q[3], p[2] + 1));
    } else {
      std::sort(column.begin(), column.end());
      p[0] = static_cast<std::uint16_t>(std::min(u16(column[0]), 65532));
      p[1] =
          static_cast<std::uint16_t>(n > 1 ? std::min(std::max(u16(column[1]), p[0] + 1), 65533) : p[0] + 1);
      p[2] =
          static_cast<std::uint16_t>(n > 2 ? std::min(std::max(u16(column[2]), p[1] + 1), 65534) : p[1] + 1);
      p[3] = static_cast<std::uint16_t>(n > 3 ? std::max(u16(column[3]), p[2] + 1) : p[2] + 1);
    }
  }

  format format_ = format::one_byte_with_column_headers;
  float min_value_ = 0;
  float range_ = 0;
  std::int32_t rows_ = 0;
  std::int32_t cols_ = 0;
  std::vector<unsigned char> data_;
};

TABLIO_END_NAMESPACE
