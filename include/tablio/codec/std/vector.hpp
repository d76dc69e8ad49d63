// std::vector<T>: the codec's own vector form when it has one (Kaldi: Vector, integer
// vector, pair vector), otherwise a size and the elements (arithmetic ones in bulk).
#pragma once

#include <tablio/codec/dispatch.hpp>

#include <vector>

TABLIO_BEGIN_NAMESPACE

// The built-in codec of std::vector (step 4 of codec/concepts.hpp): the codec's write_vector and
// read_vector where it has them for T, else a count and the elements.
template <class T, class A>
struct builtin_codec<std::vector<T, A>> {
  using is_builtin = void;
  // The fewest bytes codec C writes for one: the count of an empty vector.
  template <class C>
  static constexpr std::uint64_t min_size() {
    return codec_primitives<C>::min_size_prefix;
  }

  // Writes v in C's own vector form, or as its size then its elements (arithmetic ones, bool
  // aside, with one write_array).
  template <class C>
  static void write(writer& w, const std::vector<T, A>& v) {
    if constexpr (requires { C::write_vector(w, v); }) {
      C::write_vector(w, v);
    } else {
      C::write_size(w, v.size());
      if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
        codec_primitives<C>::write_array(w, v.data(), v.size());
      } else {
        for (const auto& e : v) encode_to<C>(w, static_cast<const T&>(e));
      }
    }
  }

  // Replaces v's elements with those read. The count is checked against the input before v
  // grows, and on input of unknown size v grows only as the elements arrive.
  template <class C>
  static void read(reader& r, std::vector<T, A>& v) {
    if constexpr (requires { C::read_vector(r, v); }) {
      C::read_vector(r, v);
    } else {
      detail::read_elements<C>(r, v, C::read_size(r));
    }
  }
};

TABLIO_END_NAMESPACE
