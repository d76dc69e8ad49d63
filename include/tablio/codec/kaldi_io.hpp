// Kaldi's I/O functions with the mode chosen at run time, as Kaldi code calls them:
// write_basic_type(w, binary, v) is WriteBasicType(os, binary, v), and so on. They pick
// the kaldi_binary or kaldi_text codec.
#pragma once

#include <tablio/codec/kaldi_binary.hpp>
#include <tablio/codec/kaldi_text.hpp>
#include <tablio/codec/std/vector.hpp>

#include <utility>
#include <vector>

TABLIO_BEGIN_NAMESPACE

namespace kaldi_io {

// Calls f with the codec for the mode: kaldi_binary{} or kaldi_text{}.
template <class F>
decltype(auto) with_codec(bool binary, F&& f) {
  if (binary) return f(kaldi_binary{});
  return f(kaldi_text{});
}

// WriteBasicType: bool, integers, float, double.
template <class T>
requires std::is_arithmetic_v<T>
void write_basic_type(writer& w, bool binary, T v) {
  with_codec(binary, [&](auto c) { decltype(c)::write(w, v); });
}

// ReadBasicType; with `add`, the value read is added to `v` (Kaldi's add=true form).
template <class T>
requires std::is_arithmetic_v<T>
void read_basic_type(reader& r, bool binary, T& v, bool add = false) {
  T read_value{};
  with_codec(binary, [&](auto c) { decltype(c)::read(r, read_value); });
  if constexpr (std::is_same_v<T, bool>)
    v = add ? (v || read_value) : read_value;
  else
    v = add ? static_cast<T>(v + read_value) : read_value;
}

template <class T>
concept kaldi_integer = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// WriteIntegerVector: binary "size byte, raw int32 count, raw data", text "[ 1 2 3 ]\n".
template <kaldi_integer T>
void write_integer_vector(writer& w, bool binary, const std::vector<T>& v) {
  with_codec(binary, [&](auto c) { decltype(c)::write_vector(w, v); });
}
// ReadIntegerVector: the same forms into v. As in Kaldi, a size byte other than sizeof(T) is an
// error (a format_error here), and so is a count the input cannot hold.
template <kaldi_integer T>
void read_integer_vector(reader& r, bool binary, std::vector<T>& v) {
  with_codec(binary, [&](auto c) { decltype(c)::read_vector(r, v); });
}

// WriteIntegerPairVector: binary "size byte, raw int32 count of pairs, raw pairs", text
// "[ 1,2 3,4 ]\n".
template <kaldi_integer T>
void write_integer_pair_vector(writer& w, bool binary, const std::vector<std::pair<T, T>>& v) {
  with_codec(binary, [&](auto c) { decltype(c)::write_vector(w, v); });
}
// ReadIntegerPairVector: the same forms into v, checked as read_integer_vector checks them.
template <kaldi_integer T>
void read_integer_pair_vector(reader& r, bool binary, std::vector<std::pair<T, T>>& v) {
  with_codec(binary, [&](auto c) { decltype(c)::read_vector(r, v); });
}

}  // namespace kaldi_io

TABLIO_END_NAMESPACE
