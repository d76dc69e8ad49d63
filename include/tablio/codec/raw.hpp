// raw<Endian>: fixed-width values in the given byte order, containers prefixed by a uint64
// element count, no markers. Contiguous arrays of arithmetic values move with one memcpy
// (plus a byte swap when the order differs from the machine's). IDX files and the fastest
// native storage use it.
#pragma once

#include <tablio/codec/concepts.hpp>
#include <tablio/core/config.hpp>
#include <tablio/core/endian.hpp>

#include <bit>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

// A codec (it meets the Codec concept) of fixed-width values: each arithmetic value in
// sizeof(T) bytes of byte order Endian, a bool as one byte 0 or 1, sizes as uint64. Nothing
// marks a value's type: reading takes the bytes as whatever type is asked for.
template <std::endian Endian>
struct raw : detail::codec_defaults<raw<Endian>> {
  static constexpr bool binary = true;
  static constexpr std::endian byte_order = Endian;

  // The fewest bytes of a T: exactly sizeof(T), as it has no marker.
  template <class T>
  requires std::is_arithmetic_v<T>
  static constexpr std::uint64_t min_value_size() noexcept { return sizeof(T); }
  static constexpr std::uint64_t min_size_prefix = 8;

  // The Codec concept: writes v's sizeof(T) bytes in byte order Endian (a bool as 0 or 1).
  template <class T>
  requires std::is_arithmetic_v<T> TABLIO_ALWAYS_INLINE static void write(writer& w, T v) {
    char* p = w.reserve(sizeof(T));
    if constexpr (std::is_same_v<T, bool>)
      *p = v ? 1 : 0;
    else
      store<Endian>(p, v);
    w.advance(sizeof(T));
  }

  // The Codec concept: reads sizeof(T) bytes into v; throws format_error when the input ends
  // first, or for a bool byte other than 0 or 1.
  template <class T>
  requires std::is_arithmetic_v<T> TABLIO_ALWAYS_INLINE static void read(reader& r, T& v) {
    if (r.ensure(sizeof(T))) [[likely]] {
      const char* p = r.window().data();
      if constexpr (std::is_same_v<T, bool>) {
        if (static_cast<unsigned char>(*p) > 1)
          r.fail({"a bool (0 or 1)"}, {"byte ", decimal(static_cast<unsigned char>(*p))});
        v = *p != 0;
      } else {
        v = load<Endian, T>(p);
      }
      r.advance(sizeof(T));
      return;
    }
    r.fail({decimal(sizeof(T)), " bytes"}, {"end of input after ", decimal(r.window().size())});
  }

  // The Codec concept: writes a count n as a uint64.
  static void write_size(writer& w, std::uint64_t n) { write(w, n); }
  // The Codec concept: a count, as a uint64 (the caller checks it against the input).
  static std::uint64_t read_size(reader& r) {
    std::uint64_t n;
    read(r, n);
    return n;
  }

  // Writes n values, with one copy when Endian is the machine's order (bools one by one).
  template <class T>
  requires std::is_arithmetic_v<T>
  static void write_array(writer& w, const T* data, std::size_t n) {
    if constexpr (Endian == std::endian::native && !std::is_same_v<T, bool>) {
      w.write(reinterpret_cast<const char*>(data), n * sizeof(T));
    } else {
      for (std::size_t i = 0; i < n; ++i) write(w, data[i]);
    }
  }

  // Reads n values with one copy, then swaps their bytes when Endian is not the machine's
  // order; bools are read and checked one by one.
  template <class T>
  requires std::is_arithmetic_v<T>
  static void read_array(reader& r, T* data, std::size_t n) {
    if constexpr (std::is_same_v<T, bool>) {
      for (std::size_t i = 0; i < n; ++i) read(r, data[i]);
    } else {
      r.read_exact(reinterpret_cast<char*>(data), n * sizeof(T));
      if constexpr (Endian != std::endian::native) byteswap_in_place(data, n);
    }
  }

  static constexpr std::uint64_t min_string_size = 8;
};

using raw_little = raw<std::endian::little>;  // The raw codec, little-endian (x86's and ARM's order).
using raw_big = raw<std::endian::big>;        // The raw codec, big-endian (network order, IDX's).

TABLIO_END_NAMESPACE
