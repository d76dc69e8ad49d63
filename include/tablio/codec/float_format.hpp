// Formats a float exactly as printf("%.7g") does (what Kaldi's text mode writes), several
// times faster than a general printf-style conversion: the exact binary value is scaled to
// seven digits in 128-bit integer arithmetic and rounded half to even.
#pragma once

#include <tablio/core/config.hpp>

#include <bit>
#include <charconv>
#include <cstdint>
#include <type_traits>

TABLIO_BEGIN_NAMESPACE

namespace detail {

// Writes an infinity or a NaN as glibc's printf and C++ streams write them ("inf", "-inf",
// "nan", "-nan", as Kaldi's text archives hold them), where std::to_chars differs between
// standard libraries (libc++ writes "-nan(ind)"); returns the end, or nullptr for a finite v.
template <class T>
char* format_non_finite(char* p, T v) noexcept {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  if (v - v == v - v) return nullptr;  // finite (inf - inf and NaN - NaN are NaN)
  using bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  if (std::bit_cast<bits>(v) >> (sizeof(T) * 8 - 1)) *p++ = '-';
  const char* word = v == v ? "inf" : "nan";
  for (int i = 0; i < 3; ++i) *p++ = word[i];
  return p;
}

#if TABLIO_GNU_EXTENSIONS && defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 uint128;

// 5^k for k <= 54 (5^54 < 2^126).
inline uint128 pow5(int k) noexcept {
  static constexpr auto table = [] {
    struct powers {
      uint128 v[55];
    } t{};
    t.v[0] = 1;
    for (int i = 1; i < 55; ++i) t.v[i] = t.v[i - 1] * 5;
    return t;
  }();
  return table.v[k];
}

// Rounds m * 2^q * 10^k to an integer, half to even; false if it would not fit the method.
inline bool scaled_digits(std::uint32_t m, int q, int k, std::uint64_t& n) noexcept {
  if (k >= 0 && k <= 17 && q + k < 0 && q + k > -64) {
    // The common case (values from about 1e-11 to 1e6) fits in 64 bits.
    const std::uint64_t a = m * static_cast<std::uint64_t>(pow5(k));
    const int shift = -(q + k);
    std::uint64_t quotient = a >> shift;
    const std::uint64_t remainder = a & ((std::uint64_t{1} << shift) - 1),
                        half = std::uint64_t{1} << (shift - 1);
    if (remainder > half || (remainder == half && (quotient & 1))) ++quotient;
    n = quotient;
    return true;
  }
  uint128 quotient, remainder, divisor;
  if (k >= 0) {
    if (k > 44) return false;
    uint128 a = static_cast<uint128>(m) * pow5(k);
    int s = q + k;
    if (s >= 0) {
      if (s > 40) return false;
      n = static_cast<std::uint64_t>(a << s);
      return true;
    }
    if (-s >= 127) return false;
    quotient = a >> -s;
    remainder = a & ((static_cast<uint128>(1) << -s) - 1);
    divisor = static_cast<uint128>(1) << -s;
  } else {
    int j = -k;
    if (j > 38) return false;
    if (q - j >= 0) {
      if (q - j > 100) return false;
      uint128 a = static_cast<uint128>(m) << (q - j);
      divisor = pow5(j);
      quotient = a / divisor;
      remainder = a % divisor;
    } else {
      if (j - q > 120 - 2 * j) return false;
      divisor = pow5(j) << (j - q);
      quotient = m / divisor;
      remainder = m % divisor;
    }
  }
  uint128 twice = remainder * 2;
  if (twice > divisor || (twice == divisor && (quotient & 1))) ++quotient;
  n = static_cast<std::uint64_t>(quotient);
  return true;
}

// Writes v as "%.7g" would and returns the end; the caller provides 32 bytes.
inline char* format_float_7g(char* p, float v) noexcept {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(v);
  const std::uint32_t biased = (bits >> 23) & 0xFF, fraction = bits & 0x7FFFFF;
  if (biased == 0xFF || biased == 0) {
    if (biased == 0 && fraction == 0) {
      if (bits >> 31) *p++ = '-';
      *p++ = '0';
      return p;
    }
    if (biased == 0xFF) return format_non_finite(p, v);
    // subnormals: the general conversion.
    return std::to_chars(p, p + 32, v, std::chars_format::general, 7).ptr;
  }
  const std::uint32_t m = fraction | 0x800000;
  const int q = static_cast<int>(biased) - 150;
  // floor(log10(v)) to within one: log10(2) ~ 78913 / 2^18; the loop below corrects it.
  int e = ((static_cast<int>(biased) - 127) * 78913) >> 18;
  std::uint64_t n = 0;
  for (int attempt = 0;; ++attempt) {
    if (attempt == 3 || !scaled_digits(m, q, 6 - e, n))
      return std::to_chars(p, p + 32, v, std::chars_format::general, 7).ptr;
    if (n >= 10000000) {
      if (n == 10000000) {  // rounded up to the next power of ten
        n = 1000000;
        ++e;
        break;
      }
      ++e;
    } else if (n < 1000000) {
      --e;
    } else {
      break;
    }
  }
  char digits[7];
  for (int i = 6; i >= 0; --i) {
    digits[i] = static_cast<char>('0' + n % 10);
    n /= 10;
  }
  int count = 7;
  while (count > 1 && digits[count - 1] == '0') --count;
  if (bits >> 31) *p++ = '-';
  if (e < -4 || e >= 7) {
    *p++ = digits[0];
    if (count > 1) {
      *p++ = '.';
      for (int i = 1; i < count; ++i) *p++ = digits[i];
    }
    *p++ = 'e';
    *p++ = e < 0 ? '-' : '+';
    int ae = e < 0 ? -e : e;
    if (ae >= 100) *p++ = static_cast<char>('0' + ae / 100);
    *p++ = static_cast<char>('0' + ae / 10 % 10);
    *p++ = static_cast<char>('0' + ae % 10);
  } else if (e >= 0) {
    for (int i = 0; i <= e; ++i) *p++ = digits[i];
    if (count > e + 1) {
      *p++ = '.';
      for (int i = e + 1; i < count; ++i) *p++ = digits[i];
    }
  } else {
    *p++ = '0';
    *p++ = '.';
    for (int i = 0; i < -e - 1; ++i) *p++ = '0';
    for (int i = 0; i < count; ++i) *p++ = digits[i];
  }
  return p;
}
#else
// Without a 128-bit integer type: the general conversion.
inline char* format_float_7g(char* p, float v) noexcept {
  if (char* end = format_non_finite(p, v)) return end;
  return std::to_chars(p, p + 32, v, std::chars_format::general, 7).ptr;
}
#endif

}  // namespace detail

TABLIO_END_NAMESPACE
