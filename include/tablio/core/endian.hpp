// Byte-order helpers: load and store fixed-width values in a given order without UB.
#pragma once

#include <tablio/core/config.hpp>

#include <bit>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <type_traits>

TABLIO_BEGIN_NAMESPACE

static_assert(std::endian::native == std::endian::little || std::endian::native == std::endian::big,
              "tablio needs a little- or big-endian platform");

// v with its bytes in reverse order (std::byteswap, which C++20 lacks).
template <std::unsigned_integral U>
constexpr U byteswap(U v) noexcept {
  if constexpr (sizeof(U) == 1) {
    return v;
#if TABLIO_GNU_EXTENSIONS
  } else if constexpr (sizeof(U) == 2) {
    return static_cast<U>(__builtin_bswap16(v));
  } else if constexpr (sizeof(U) == 4) {
    return static_cast<U>(__builtin_bswap32(v));
  } else {
    static_assert(sizeof(U) == 8);
    return static_cast<U>(__builtin_bswap64(v));
  }
#else
  } else {  // compilers recognise the pattern as their byte-swap instruction
    U r = 0;
    for (std::size_t i = 0; i < sizeof(U); ++i) r = static_cast<U>(r << 8 | ((v >> (8 * i)) & 0xFF));
    return r;
  }
#endif
}

// The unsigned integer with the same size as T (T arithmetic).
template <class T>
using same_size_uint =
    std::conditional_t<sizeof(T) == 1, std::uint8_t,
                       std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                          std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>;

// Reads a T stored in byte order E at p.
template <std::endian E, class T>
requires std::is_arithmetic_v<T>
inline T load(const void* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof(T));
  if constexpr (E != std::endian::native && sizeof(T) > 1) {
    v = std::bit_cast<T>(byteswap(std::bit_cast<same_size_uint<T>>(v)));
  }
  return v;
}

// Stores v in byte order E at p.
template <std::endian E, class T>
requires std::is_arithmetic_v<T>
inline void store(void* p, T v) noexcept {
  if constexpr (E != std::endian::native && sizeof(T) > 1) {
    v = std::bit_cast<T>(byteswap(std::bit_cast<same_size_uint<T>>(v)));
  }
  std::memcpy(p, &v, sizeof(T));
}

// Swaps every element of an array of arithmetic values in place (used after a bulk copy).
template <class T>
requires std::is_arithmetic_v<T>
inline void byteswap_in_place(T* data, std::size_t count) noexcept {
  if constexpr (sizeof(T) > 1) {
    for (std::size_t i = 0; i < count; ++i)
      data[i] = std::bit_cast<T>(byteswap(std::bit_cast<same_size_uint<T>>(data[i])));
  }
}

// Copies count values stored in byte order E at src into dst (a memcpy on a matching host).
template <std::endian E, class T>
requires std::is_arithmetic_v<T>
inline void load_array(T* dst, const void* src, std::size_t count) noexcept {
  if (count == 0) return;
  std::memcpy(dst, src, count * sizeof(T));
  if constexpr (E != std::endian::native) byteswap_in_place(dst, count);
}

// Stores count values from src at dst in byte order E.
template <std::endian E, class T>
requires std::is_arithmetic_v<T>
inline void store_array(void* dst, const T* src, std::size_t count) noexcept {
  if constexpr (E == std::endian::native) {
    if (count) std::memcpy(dst, src, count * sizeof(T));
  } else {
    for (std::size_t i = 0; i < count; ++i) store<E>(static_cast<char*>(dst) + i * sizeof(T), src[i]);
  }
}

TABLIO_END_NAMESPACE
