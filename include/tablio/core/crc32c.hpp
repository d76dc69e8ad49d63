// CRC32C (Castagnoli), as TFRecord frames its records, with TFRecord's mask.
//
// On x86-64 with SSE4.2 (checked at run time) the CRC32 instruction does the work, over
// three interleaved streams (stripes of 8 KB, 256 or 64 bytes) so that its latency is hidden;
// 64-bit ARM uses its CRC32C instructions (always when compiled for them, as with
// -march=armv8-a+crc, else when the processor has them); elsewhere a portable slice-by-8 table
// method serves. All give the same values.
#pragma once

#include <tablio/core/config.hpp>
#include <tablio/core/endian.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <tablio/core/cpu_features.hpp>

#if TABLIO_GNU_EXTENSIONS && defined(__x86_64__)
#include <nmmintrin.h>  // SSE4.2 only: <immintrin.h> is far costlier to compile
#define TABLIO_CRC32C_X86 1
#elif TABLIO_GNU_EXTENSIONS && defined(__aarch64__)
#include <arm_acle.h>
#define TABLIO_CRC32C_ARM 1
#endif

TABLIO_BEGIN_NAMESPACE

namespace detail {

inline constexpr std::uint32_t crc32c_polynomial = 0x82F63B78;  // reflected

// t[k][b]: the register after byte b followed by k zero bytes (slice-by-8).
struct crc32c_slices {
  std::uint32_t t[8][256];
};
// Not constexpr, and so not a constant initializer: a compiler would otherwise try to run it
// for every includer (about 0.2 s a translation unit), rather than once at the first use.
inline crc32c_slices crc32c_make_slices() noexcept {
  crc32c_slices s{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t r = b;
    for (int i = 0; i < 8; ++i) r = (r >> 1) ^ ((r & 1) ? crc32c_polynomial : 0);
    s.t[0][b] = r;
  }
  for (int k = 1; k < 8; ++k)
    for (int b = 0; b < 256; ++b) s.t[k][b] = (s.t[k - 1][b] >> 8) ^ s.t[0][s.t[k - 1][b] & 0xFF];
  return s;
}
inline const crc32c_slices& crc32c_tables() {
  static const crc32c_slices slices = crc32c_make_slices();
  return slices;
}

// Advances the raw register (no pre/post inversion) over n bytes, portably.
inline std::uint32_t crc32c_portable(std::uint32_t r, const unsigned char* p, std::size_t n) noexcept {
  const auto& t = crc32c_tables().t;
  for (; n >= 8; n -= 8, p += 8) {
    std::uint32_t lo = load<std::endian::little, std::uint32_t>(p) ^ r;
    std::uint32_t hi = load<std::endian::little, std::uint32_t>(p + 4);
    r = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
        t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
  }
  for (; n > 0; --n) r = (r >> 8) ^ t[0][(r ^ *p++) & 0xFF];
  return r;
}

// a * b modulo the polynomial, in the reflected representation.
constexpr std::uint32_t crc32c_multiply(std::uint32_t a, std::uint32_t b) noexcept {
  std::uint32_t product = 0;
  for (std::uint32_t m = 1u << 31; m != 0; m >>= 1) {
    if (a & m) product ^= b;
    b = (b & 1) ? (b >> 1) ^ crc32c_polynomial : b >> 1;
  }
  return product;
}

// x^(8n) modulo the polynomial: the operator that moves a register past n zero bytes.
constexpr std::uint32_t crc32c_zeros_operator(std::uint64_t n) noexcept {
  std::uint32_t result = 1u << 31;  // x^0
  std::uint32_t square = 1u << 23;  // x^8: one byte
  for (; n != 0; n >>= 1) {
    if (n & 1) result = crc32c_multiply(square, result);
    square = crc32c_multiply(square, square);
  }
  return result;
}

#if defined(TABLIO_CRC32C_X86)
// shift_tables[k][b]: byte b at position k of a register, moved past Stripe zero bytes.
struct crc32c_shift_tables {
  std::uint32_t t[4][256];
};
// Not constexpr, for the reason crc32c_make_slices is not.
template <std::size_t Stripe>
crc32c_shift_tables crc32c_make_stripe_shift() noexcept {
  crc32c_shift_tables s{};
  const std::uint32_t op = crc32c_zeros_operator(Stripe);
  for (int k = 0; k < 4; ++k)
    for (std::uint32_t b = 0; b < 256; ++b) s.t[k][b] = crc32c_multiply(op, b << (8 * k));
  return s;
}
template <std::size_t Stripe>
const crc32c_shift_tables& crc32c_stripe_shift() {
  static const crc32c_shift_tables tables = crc32c_make_stripe_shift<Stripe>();
  return tables;
}

// The register r moved past Stripe zero bytes.
template <std::size_t Stripe>
std::uint32_t crc32c_shift_stripe(std::uint32_t r) {
  const auto& t = crc32c_stripe_shift<Stripe>().t;
  return t[0][r & 0xFF] ^ t[1][(r >> 8) & 0xFF] ^ t[2][(r >> 16) & 0xFF] ^ t[3][r >> 24];
}

// Advances r over whole runs of three stripes, each stripe in its own register: the
// instruction's latency is three times its throughput, so three chains run in the time of one.
template <std::size_t Stripe>
TABLIO_TARGET("sse4.2")
std::uint64_t crc32c_sse42_stripes(std::uint64_t r0, const unsigned char*& p, std::size_t& n) {
  for (; n >= 3 * Stripe; p += 3 * Stripe, n -= 3 * Stripe) {
    std::uint64_t r1 = 0, r2 = 0;
    for (std::size_t i = 0; i < Stripe; i += 8) {
      r0 = _mm_crc32_u64(r0, load<std::endian::little, std::uint64_t>(p + i));
      r1 = _mm_crc32_u64(r1, load<std::endian::little, std::uint64_t>(p + Stripe + i));
      r2 = _mm_crc32_u64(r2, load<std::endian::little, std::uint64_t>(p + 2 * Stripe + i));
    }
    std::uint32_t combined =
        crc32c_shift_stripe<Stripe>(static_cast<std::uint32_t>(r0)) ^ static_cast<std::uint32_t>(r1);
    r0 = crc32c_shift_stripe<Stripe>(combined) ^ static_cast<std::uint32_t>(r2);
  }
  return r0;
}

TABLIO_TARGET("sse4.2")
inline std::uint32_t crc32c_sse42(std::uint32_t r, const unsigned char* p, std::size_t n) {
  // Long stripes for large buffers; short ones so that a record of a few hundred bytes (most
  // TFRecord records) is not one chain either.
  std::uint64_t r0 = crc32c_sse42_stripes<8192>(r, p, n);
  r0 = crc32c_sse42_stripes<256>(r0, p, n);
  r0 = crc32c_sse42_stripes<64>(r0, p, n);
  for (; n >= 8; n -= 8, p += 8) r0 = _mm_crc32_u64(r0, load<std::endian::little, std::uint64_t>(p));
  std::uint32_t r32 = static_cast<std::uint32_t>(r0);
  for (; n > 0; --n) r32 = _mm_crc32_u8(r32, *p++);
  return r32;
}
#elif defined(TABLIO_CRC32C_ARM)
#if defined(__ARM_FEATURE_CRC32)
#define TABLIO_CRC32C_ARM_TARGET
#else
#define TABLIO_CRC32C_ARM_TARGET TABLIO_TARGET("+crc")
#endif
TABLIO_CRC32C_ARM_TARGET inline std::uint32_t crc32c_arm(std::uint32_t r, const unsigned char* p,
                                                         std::size_t n) noexcept {
  for (; n >= 8; n -= 8, p += 8) r = __crc32cd(r, load<std::endian::little, std::uint64_t>(p));
  for (; n > 0; --n) r = __crc32cb(r, *p++);
  return r;
}
#endif

// Whether this processor computes CRC32C with its own instructions here.
inline bool crc32c_in_hardware() noexcept {
#if defined(TABLIO_CRC32C_X86)
  static const bool hardware = cpu_has_sse42();
#elif defined(TABLIO_CRC32C_ARM)
  static const bool hardware = cpu_has_arm_crc32();
#else
  constexpr bool hardware = false;
#endif
  return hardware;
}

}  // namespace detail

// Extends a CRC32C value over more bytes: crc32c(ab) == crc32c_extend(crc32c(a), b).
inline std::uint32_t crc32c_extend(std::uint32_t crc, const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t r = ~crc;
#if defined(TABLIO_CRC32C_X86)
  r = detail::crc32c_in_hardware() ? detail::crc32c_sse42(r, p, n) : detail::crc32c_portable(r, p, n);
#elif defined(TABLIO_CRC32C_ARM)
  r = detail::crc32c_in_hardware() ? detail::crc32c_arm(r, p, n) : detail::crc32c_portable(r, p, n);
#else
  r = detail::crc32c_portable(r, p, n);
#endif
  return ~r;
}

// The CRC32C (Castagnoli) of n bytes, unmasked; SSE4.2 or ARM's CRC32C instructions do the
// work when the processor has them.
inline std::uint32_t crc32c(const void* data, std::size_t n) { return crc32c_extend(0, data, n); }

// TFRecord stores CRCs masked, so that a CRC of data holding CRCs stays well distributed.
constexpr std::uint32_t mask_crc(std::uint32_t crc) noexcept {
  return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;
}
// The CRC mask_crc() masked: unmask_crc(mask_crc(c)) == c.
constexpr std::uint32_t unmask_crc(std::uint32_t masked) noexcept {
  std::uint32_t r = masked - 0xA282EAD8u;
  return (r >> 17) | (r << 15);
}

TABLIO_END_NAMESPACE
