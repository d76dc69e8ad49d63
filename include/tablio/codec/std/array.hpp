// std::array<T, N>: the N elements, no size (arithmetic ones as one array).
#pragma once

#include <tablio/codec/dispatch.hpp>

#include <array>

TABLIO_BEGIN_NAMESPACE

// The built-in codec of std::array<T, N> (step 4 of codec/concepts.hpp): its N elements, with
// no count, since N is in the type.
template <class T, std::size_t N>
struct builtin_codec<std::array<T, N>> {
  using is_builtin = void;
  // The fewest bytes codec C writes for one: N times an element's fewest.
  template <class C>
  static constexpr std::uint64_t min_size() {
    return N * min_encoded_size<C, T>();
  }
  // Writes the N elements (arithmetic ones with one write_array).
  template <class C>
  static void write(writer& w, const std::array<T, N>& a) {
    if constexpr (std::is_arithmetic_v<T>)
      codec_primitives<C>::write_array(w, a.data(), N);
    else
      for (const auto& e : a) encode_to<C>(w, e);
  }
  // Reads N elements into a: no count is stored, so an array of another N reads wrongly.
  template <class C>
  static void read(reader& r, std::array<T, N>& a) {
    if constexpr (std::is_arithmetic_v<T>)
      codec_primitives<C>::read_array(r, a.data(), N);
    else
      for (auto& e : a) decode_from<C>(r, e);
  }
};

TABLIO_END_NAMESPACE
