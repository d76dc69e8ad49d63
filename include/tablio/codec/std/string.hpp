// std::string: the codec's string form (raw: u64 length + bytes; Kaldi binary: int32 length
// with marker + bytes; Kaldi text: "length bytes ").
#pragma once

#include <tablio/codec/dispatch.hpp>

#include <string>

TABLIO_BEGIN_NAMESPACE

// The built-in codec of std::string (step 4 of codec/concepts.hpp): the codec's own string form.
template <>
struct builtin_codec<std::string> {
  using is_builtin = void;
  // The fewest bytes codec C writes for one: C's min_string_size (an empty string).
  template <class C>
  static constexpr std::uint64_t min_size() {
    return codec_primitives<C>::min_string_size;
  }
  // Writes s with codec_primitives<C>::write_string.
  template <class C>
  static void write(writer& w, const std::string& s) {
    codec_primitives<C>::write_string(w, s);
  }
  // Reads s with codec_primitives<C>::read_string: its length is checked against the input
  // before s grows.
  template <class C>
  static void read(reader& r, std::string& s) {
    codec_primitives<C>::read_string(r, s);
  }
};

TABLIO_END_NAMESPACE
