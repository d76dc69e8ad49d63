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

template <std::endian Endian>
struct raw : detail::codec_defaults<raw<Endian>> {
  static constexpr bool binary = true;
  static constexpr std::endian byte_order = Endian;

  template <class T>
  requires std::is_arithmetic_v<T>
  static constexpr std::uint64_t min_value_size() noexcept { return sizeof(T); }
  static constexpr std::uint64_t min_size_prefix = 8;

  template <class T>
  requires std::is_arithmetic_v<T> TABLIO_ALWAYS_INLINE static void write(writer& w, T v) {
    char* p = w.reserve(sizeof(T));
    if constexpr (std::is_same_v<T, bool>)
      *p = v ? 1 : 0;
    else
      store<Endian>(p, v);
    w.advance(sizeof(T));
  }

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

  static void write_size(writer& w, std::uint64_t n) { write(w, n); }
  static std::uint64_t read_size(reader& r) {
    std::uint64_t n;
    read(r, n);
    return n;
  }

  template <class T>
  requires std::is_arithmetic_v<T>
  static void write_array(writer& w, const T* data, std::size_t n) {
    if constexpr (Endian == std::endian::native && !std::is_same_v<T, bool>) {
      w.write(reinterpret_cast<const char*>(data), n * sizeof(T));
    } else {
      for (std::size_t i = 0; i < n; ++i) write(w, data[i]);
    }
  }

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

using raw_little = raw<std::endian::little>;
using raw_big = raw<std::endian::big>;

TABLIO_END_NAMESPACE
