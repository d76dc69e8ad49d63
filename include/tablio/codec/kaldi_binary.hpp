// kaldi_binary: Kaldi's binary encoding, byte for byte, as a codec (it meets the Codec concept).
//
// Integers carry a size/sign marker byte (int32: 04, uint32: FC) and raw little-endian bytes;
// a wrong marker is an error naming both sizes. float and double carry 04/08 and either is
// accepted for the other. bool is 'T'/'F'. Container sizes are int32 values with markers.
// std::vector of float/double is written as a Kaldi Vector ("FV "/"DV ", dim, raw data), of
// integers as Kaldi's object-internal integer vector (size byte, raw int32 count, raw data),
// of integer pairs as an integer pair vector: what a Kaldi class writes for such members.
#pragma once

#include <tablio/codec/concepts.hpp>
#include <tablio/codec/kaldi_token.hpp>
#include <tablio/core/config.hpp>
#include <tablio/core/endian.hpp>

#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

TABLIO_BEGIN_NAMESPACE

namespace kaldi_io {

// The marker byte Kaldi writes before an integer of type T: sizeof(T), negated if unsigned.
template <std::integral T>
constexpr char integer_marker() noexcept {
  return std::is_signed_v<T> ? static_cast<char>(sizeof(T)) : static_cast<char>(-static_cast<int>(sizeof(T)));
}

// Throws format_error at `at` for an integer whose marker byte is `found` where `expected` was
// due, in the words of Kaldi's own message ("did not get expected integer type").
[[noreturn]] inline void fail_marker(reader& r, std::uint64_t at, int expected, int found) {
  r.fail_at(at, {"an integer with size marker ", decimal(expected)},
            {"marker ", decimal(found), " (did not get expected integer type, ", decimal(found), " vs. ",
             decimal(expected), ")"});
}

// Throws format_error at `at` when a count read from the input is negative.
template <class T>
requires std::is_integral_v<T> &&
    (!std::is_same_v<T, bool>)void check_integer_count(reader& r, std::uint64_t at, T count) {
  if constexpr (std::is_signed_v<T>)
    if (count < 0) r.fail_at(at, {"a non-negative count"}, {decimal(count)});
}

}  // namespace kaldi_io

struct kaldi_binary : detail::codec_defaults<kaldi_binary> {
  static constexpr bool binary = true;

  // The fewest bytes of a T: its marker and value (a bool's one letter).
  template <class T>
  requires std::is_arithmetic_v<T>
  static constexpr std::uint64_t min_value_size() noexcept {
    return std::is_same_v<T, bool> ? 1 : 1 + sizeof(T);
  }
  static constexpr std::uint64_t min_size_prefix = 5;

  // The Codec concept: WriteBasicType in binary mode, a marker then the value little-endian (a
  // bool as 'T' or 'F').
  template <class T>
  requires std::is_arithmetic_v<T> TABLIO_ALWAYS_INLINE static void write(writer& w, T v) {
    if constexpr (std::is_same_v<T, bool>) {
      w.put(v ? 'T' : 'F');
    } else {
      char* p = w.reserve(1 + sizeof(T));
      if constexpr (std::is_integral_v<T>)
        p[0] = kaldi_io::integer_marker<T>();
      else
        p[0] = static_cast<char>(sizeof(T));
      store<std::endian::little>(p + 1, v);
      w.advance(1 + sizeof(T));
    }
  }

  // The Codec concept: ReadBasicType in binary mode. A float reads a double's marker and value
  // too, and the reverse; an integer marker of another size or sign throws format_error.
  template <class T>
  requires std::is_arithmetic_v<T> TABLIO_ALWAYS_INLINE static void read(reader& r, T& v) {
    if constexpr (std::is_same_v<T, bool>) {
      // Kaldi skips whitespace before a bool even in binary mode.
      r.skip_whitespace();
      int c = r.get();
      if (c == 'T' || c == 'F') {
        v = c == 'T';
        return;
      }
      r.fail_at(r.tell() - (c >= 0), {"a bool ('T' or 'F')"},
                {c < 0 ? std::string("end of input") : "byte " + std::to_string(c)});
    } else {
      if (r.ensure(1 + sizeof(T))) [[likely]] {
        const char* p = r.window().data();
        if (p[0] == value_marker<T>()) [[likely]] {
          v = load<std::endian::little, T>(p + 1);
          r.advance(1 + sizeof(T));
          return;
        }
      }
      read_unusual(r, v);
    }
  }

  // The Codec concept: a count as an int32 with its marker; throws usage_error past 2^31 - 1.
  TABLIO_ALWAYS_INLINE static void write_size(writer& w, std::uint64_t n) {
    if (n > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max()))
      throw_usage_error({"Kaldi binary sizes are int32; cannot write ", decimal(n), " elements"});
    write(w, static_cast<std::int32_t>(n));
  }
  // The Codec concept: a count written by write_size; a negative one throws format_error.
  TABLIO_ALWAYS_INLINE static std::uint64_t read_size(reader& r) {
    std::uint64_t at = r.tell();
    std::int32_t n;
    read(r, n);
    kaldi_io::check_integer_count(r, at, n);
    return static_cast<std::uint64_t>(n);
  }

  // Arrays are written value by value, each with its marker (as BasicVectorHolder writes
  // them); strings (Kaldi has no string type) as an int32 length, then the bytes.
  static constexpr std::uint64_t min_string_size = 5;

  // std::vector<float|double>: a Kaldi Vector ("FV "/"DV ", M(dim), raw data).
  template <std::floating_point T, class A>
  static void write_vector(writer& w, const std::vector<T, A>& v) {
    w.write(sizeof(T) == 4 ? "FV " : "DV ", 3);  // the token and its space
    write_size(w, v.size());
    w.write(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  // Reads a Kaldi Vector into v, either precision ("DV" into floats converts each value).
  template <std::floating_point T, class A>
  static void read_vector(reader& r, std::vector<T, A>& v) {
    std::uint64_t at = r.tell();
    const char* own = sizeof(T) == 4 ? "FV " : "DV ";
    bool same, other;
    if (r.ensure(3) && std::memcmp(r.window().data(), own, 3) == 0) {
      r.advance(3);  // the common case, without building a token string
      same = true;
      other = false;
    } else {
      std::string token;
      kaldi_io::read_token(r, token);
      same = token == std::string_view(own, 2);
      other = token == (sizeof(T) == 4 ? "DV" : "FV");
      if (!same && !other)
        r.fail_at(at, {sizeof(T) == 4 ? "token 'FV'" : "token 'DV'"}, {quoted_excerpt(token)});
    }
    std::uint64_t n = read_size(r);
    if (same) {
      r.check_available(n, sizeof(T), "vector elements");
      read_bulk(r, v, n);
    } else {
      // The other precision, converted a block at a time (no second vector).
      using U = std::conditional_t<sizeof(T) == 4, double, float>;
      r.check_available(n, sizeof(U), "vector elements");
      detail::read_sized_array(r, v, n, [&](T* p, std::size_t k) {
        char block[4096];
        for (std::size_t done = 0; done < k;) {
          std::size_t m = detail::min_of(k - done, sizeof block / sizeof(U));
          r.read_exact(block, m * sizeof(U), "vector bytes");
          for (std::size_t i = 0; i < m; ++i)
            p[done + i] = static_cast<T>(load<std::endian::little, U>(block + i * sizeof(U)));
          done += m;
        }
      });
    }
  }

  // std::vector of integers: Kaldi's WriteIntegerVector (sizeof byte, raw int32 count, data).
  template <class T, class A>
  requires std::is_integral_v<T> &&
      (!std::is_same_v<T, bool>)static void write_vector(writer& w, const std::vector<T, A>& v) {
    write_integer_header<T>(w, v.size());
    w.write(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  // Kaldi's ReadIntegerVector into v: a size byte other than sizeof(T) throws format_error.
  template <class T, class A>
  requires std::is_integral_v<T> &&
      (!std::is_same_v<T, bool>)static void read_vector(reader& r, std::vector<T, A>& v) {
    std::uint64_t n = read_integer_header<T>(r, 1);
    read_bulk(r, v, n);
  }

  // std::vector of integer pairs: Kaldi's WriteIntegerPairVector.
  template <class T, class A>
  requires std::is_integral_v<T> &&
      (!std::is_same_v<T, bool>)static void write_vector(writer& w,
                                                         const std::vector<std::pair<T, T>, A>& v) {
    write_integer_header<T>(w, v.size());
    for (const auto& [a, b] : v) {
      char* p = w.reserve(2 * sizeof(T));
      store<std::endian::little>(p, a);
      store<std::endian::little>(p + sizeof(T), b);
      w.advance(2 * sizeof(T));
    }
  }
  // Kaldi's ReadIntegerPairVector into v, checked as the integer vector is.
  template <class T, class A>
  requires std::is_integral_v<T> &&
      (!std::is_same_v<T, bool>)static void read_vector(reader& r, std::vector<std::pair<T, T>, A>& v) {
    std::uint64_t n = read_integer_header<T>(r, 2);
    std::vector<T> flat;
    read_bulk(r, flat, 2 * n);
    v.resize(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = {flat[2 * i], flat[2 * i + 1]};
  }

  // Reads n raw little-endian values into v (n already checked against the input).
  template <class T, class A>
  static void read_bulk(reader& r, std::vector<T, A>& v, std::uint64_t n) {
    detail::read_sized_array(r, v, n, [&](T* p, std::size_t k) {
      r.read_exact(reinterpret_cast<char*>(p), k * sizeof(T), "vector bytes");
    });
  }

 private:
  template <class T>
  static constexpr char value_marker() noexcept {
    if constexpr (std::is_integral_v<T>)
      return kaldi_io::integer_marker<T>();
    else
      return static_cast<char>(sizeof(T));
  }

  // read()'s slow path: a float or double in the other precision, a wrong marker, or input
  // that ends early (a wrong marker explains that better than the missing bytes do).
  template <class T>
  static void read_unusual(reader& r, T& v) {
    std::uint64_t at = r.tell();
    r.ensure(1 + sizeof(T));
    std::span<const char> w = r.window();
    if (!w.empty()) {
      if constexpr (std::is_integral_v<T>) {
        check_marker<T>(r, at, w[0]);
      } else if (w[0] != value_marker<T>()) {
        read_other_precision(r, at, v);
        return;
      }
    }
    r.fail_at(at, {decimal(1 + sizeof(T)), " bytes (marker and value)"},
              {"end of input after ", decimal(w.size())});
  }

  template <class T>
  static void check_marker(reader& r, std::uint64_t at, char marker) {
    constexpr char expected = kaldi_io::integer_marker<T>();
    // Both printed as signed, as Kaldi on x86 prints them, whether char is signed here or not (ARM).
    if (marker != expected)
      kaldi_io::fail_marker(r, at, static_cast<signed char>(expected), static_cast<signed char>(marker));
  }

  template <class T>
  static void read_other_precision(reader& r, std::uint64_t at, T& v) {
    char marker = r.window()[0];
    using other = std::conditional_t<sizeof(T) == 4, double, float>;
    if (marker != static_cast<char>(sizeof(other)))
      r.fail_at(at, {sizeof(T) == 4 ? "a float (marker 4 or 8)" : "a double (marker 8 or 4)"},
                {"marker ", decimal(static_cast<signed char>(marker))});
    if (!r.ensure(1 + sizeof(other))) r.fail_at(at, {decimal(1 + sizeof(other)), " bytes"}, {"end of input"});
    v = static_cast<T>(load<std::endian::little, other>(r.window().data() + 1));
    r.advance(1 + sizeof(other));
  }

  template <class T>
  static void write_integer_header(writer& w, std::size_t n) {
    if (n > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
      throw_usage_error({"Kaldi integer vectors hold at most 2^31-1 elements"});
    char* p = w.reserve(5);
    p[0] = static_cast<char>(sizeof(T));
    store<std::endian::little>(p + 1, static_cast<std::int32_t>(n));
    w.advance(5);
  }

  // Reads the size byte and count of an integer (pair) vector and checks them.
  template <class T>
  static std::uint64_t read_integer_header(reader& r, std::uint64_t per_entry) {
    std::uint64_t at = r.tell();
    if (!r.ensure(5)) r.fail_at(at, {"an integer vector header (5 bytes)"}, {"end of input"});
    const char* p = r.window().data();
    if (p[0] != static_cast<char>(sizeof(T)))
      r.fail_at(at, {"integer vector of element size ", decimal(sizeof(T))},
                {"size ", decimal(static_cast<signed char>(p[0]))});
    std::int32_t n = load<std::endian::little, std::int32_t>(p + 1);
    r.advance(5);
    kaldi_io::check_integer_count(r, at + 1, n);
    r.check_available(static_cast<std::uint64_t>(n), per_entry * sizeof(T), "vector elements");
    return static_cast<std::uint64_t>(n);
  }
};

TABLIO_END_NAMESPACE
