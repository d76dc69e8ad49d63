// What the processor offers beyond the baseline a program was compiled for, asked at run time
// (part of the platform layer: the one place that asks the system or the compiler about it).
#pragma once

#include <tablio/core/config.hpp>

#if defined(__aarch64__) && defined(__linux__) && !defined(__ARM_FEATURE_CRC32)
#include <sys/auxv.h>
#elif defined(_MSC_VER) && defined(_M_X64)
#include <intrin.h>
#endif

TABLIO_BEGIN_NAMESPACE

namespace detail {

// x86-64's SSE4.2 (its CRC32 instruction).
inline bool cpu_has_sse42() noexcept {
#if TABLIO_GNU_EXTENSIONS && defined(__x86_64__)
  return __builtin_cpu_supports("sse4.2");
#elif defined(_MSC_VER) && defined(_M_X64)
  int registers[4];
  __cpuid(registers, 1);
  return (registers[2] >> 20) & 1;
#else
  return false;
#endif
}

// x86-64's AVX2, with the system saving its registers (asked once).
inline bool cpu_has_avx2() noexcept {
#if TABLIO_GNU_EXTENSIONS && defined(__x86_64__)
  static const bool avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return avx2;
#else
  return false;
#endif
}

// ARMv8's optional CRC32 instructions (always there from ARMv8.1, as on Apple silicon).
inline bool cpu_has_arm_crc32() noexcept {
#if defined(__ARM_FEATURE_CRC32) || (defined(__aarch64__) && defined(__APPLE__))
  return true;
#elif defined(__aarch64__) && defined(__linux__)
  return (getauxval(AT_HWCAP) & (1ul << 7)) != 0;  // HWCAP_CRC32
#else
  return false;
#endif
}

}  // namespace detail

TABLIO_END_NAMESPACE
