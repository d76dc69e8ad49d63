// kaldi_text: Kaldi's text encoding, byte for byte, as a codec (it meets the Codec concept).
//
// Every basic value is followed by one space: integers in decimal (1-byte types as numbers),
// float and double with 7 significant digits, bool as "T"/"F". Reading follows
// `is >> value`. Container sizes are decimal counts. std::vector of float/double is written
// as a Kaldi Vector (" [ 1 2.5 ]\n"), of integers as an integer vector ("[ 1 2 ]\n"), of
// integer pairs as a pair vector ("[ 1,2 3,4 ]\n"). Strings are "length bytes ".
#pragma once

#include <tablio/codec/concepts.hpp>
#include <tablio/codec/kaldi_token.hpp>
#include <tablio/codec/text_number.hpp>

#include <limits>
#include <string>
#include <utility>
#include <vector>

TABLIO_BEGIN_NAMESPACE

namespace kaldi_io {

// Whether a and b are equal but for ASCII case ("INF" and "inf").
inline bool equals_ignoring_case(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

// Consumes the ']' that closes a Kaldi vector or matrix and the line end after it ("\n" or
// "\r\n"), as Kaldi's readers do.
inline void consume_closing_bracket(reader& r) {
  r.advance(1);
  int next = r.peek();
  if (next == '\r') {
    r.advance(1);
    if (r.peek() >= 0) r.advance(1);
  } else if (next == '\n') {
    r.advance(1);
  }
}

// A word where a number was expected: Kaldi's vector and matrix readers take inf, infinity
// and nan (any case). A negative one ("-inf", "-nan": what C++ streams, and so Kaldi's writers,
// write for a negative infinity or NaN) is taken too, which Kaldi's own readers refuse, so that
// every value written reads back; anything else is an error.
template <std::floating_point T>
T read_special_float(reader& r) {
  std::uint64_t at = r.tell();
  std::string word;
  r.read_until_space(word);
  std::string_view name = word;
  const bool negative = name.starts_with('-');
  if (negative) name.remove_prefix(1);
  T value;
  if (equals_ignoring_case(name, "inf") || equals_ignoring_case(name, "infinity"))
    value = std::numeric_limits<T>::infinity();
  else if (equals_ignoring_case(name, "nan"))
    value = std::numeric_limits<T>::quiet_NaN();
  else
    r.fail_at(at, {"numeric vector data"}, {quoted_excerpt(word)});
  return negative ? -value : value;
}

// Whether c is an ASCII letter, either case.
inline bool is_ascii_letter(char c) noexcept { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
// Whether the '-' at r starts a word ("-inf"), when the byte after it is in the next window.
TABLIO_COLD inline bool minus_starts_word_past_window(reader& r) {
  return r.ensure(2) && is_ascii_letter(r.window()[1]);
}
// Whether the text at r, where a number may start, starts a number rather than a word: a digit,
// or a '-' that no letter follows ("-inf" is a word).
// c is r.peek().
inline bool starts_text_number(reader& r, int c) {
  if (c >= '0' && c <= '9') return true;
  if (c != '-') return false;
  std::span<const char> w = r.window();
  return !(w.size() >= 2 ? is_ascii_letter(w[1]) : minus_starts_word_past_window(r));
}

// Reads Kaldi's text Vector form "[ a b c ]" (or "[]") as Vector<Real>::Read does.
template <std::floating_point T, class A>
void read_text_float_vector(reader& r, std::vector<T, A>& out) {
  r.skip_whitespace();
  std::uint64_t at = r.tell();
  std::string open;
  r.read_until_space(open);
  out.clear();
  if (open == "[]") return;
  if (open != "[") r.fail_at(at, {"\"[\" opening a vector"}, {quoted_excerpt(open)});
  for (;;) {
    int c = r.peek();
    if (starts_text_number(r, c)) {
      T v = detail::read_text_number<T>(r, sizeof(T) == 4 ? "float" : "double");
      int next = r.peek();
      if (next != ']' && (next < 0 || !reader::is_space(static_cast<char>(next))))
        r.fail({"whitespace or ']' after a vector element"},
               {next < 0 ? std::string("end of input")
                         : "byte '" + std::string(1, static_cast<char>(next)) + "'"});
      out.push_back(v);
    } else if (c == ' ' || c == '\t') {
      r.advance(1);
    } else if (c == ']') {
      consume_closing_bracket(r);
      return;
    } else if (c == '\n' || c == '\r') {
      r.fail({"']' closing the vector"}, {"a newline (is it a matrix?)"});
    } else if (c < 0) {
      r.fail({"']' closing the vector"}, {"end of input"});
    } else {
      out.push_back(read_special_float<T>(r));
    }
  }
}

// Reads "[ 1 2 3 ]" (integer vectors) or "[ 1,2 3,4 ]" (pair vectors), as Kaldi's
// ReadIntegerVector / ReadIntegerPairVector do; `each` reads one entry.
template <class ReadEntry>
void read_bracketed(reader& r, ReadEntry each) {
  r.skip_whitespace();
  if (r.peek() != '[')
    r.fail({"'[' opening an integer vector"},
           {r.peek() < 0 ? std::string("end of input")
                         : "byte '" + std::string(1, static_cast<char>(r.peek())) + "'"});
  r.advance(1);
  r.skip_whitespace();
  while (r.peek() != ']') {
    if (r.peek() < 0) r.fail({"']' closing an integer vector"}, {"end of input"});
    each();
    r.skip_whitespace();
  }
  r.advance(1);
}

// Reads an integer of type T as Kaldi's text mode does (1-byte types as numbers, not
// characters); a number out of T's range throws format_error.
template <class T>
T read_text_integer(reader& r) {
  if constexpr (sizeof(T) == 1) {
    // Kaldi reads 1-byte integers through int16 so that they are numbers, not characters.
    std::uint64_t at = r.tell();
    auto wide = detail::read_text_number<std::int16_t>(r, "integer");
    if (wide < std::numeric_limits<T>::min() || wide > std::numeric_limits<T>::max())
      r.fail_at(at, {"an integer in range"}, {decimal(wide)});
    return static_cast<T>(wide);
  } else {
    return detail::read_text_number<T>(r, "integer");
  }
}

}  // namespace kaldi_io

struct kaldi_text : detail::codec_defaults<kaldi_text> {
  static constexpr bool binary = false;

  // The fewest bytes of a value: a digit or letter and its space.
  template <class T>
  requires std::is_arithmetic_v<T>
  static constexpr std::uint64_t min_value_size() noexcept {
    return 2;  // one character and its space
  }
  static constexpr std::uint64_t min_size_prefix = 2;

  // The Codec concept: WriteBasicType in text mode, the value and one space.
  template <class T>
  requires std::is_arithmetic_v<T>
  static void write(writer& w, T v) {
    if constexpr (std::is_same_v<T, bool>)
      w.write(v ? "T " : "F ", 2);
    else
      detail::write_text_number(w, v);
  }

  // The Codec concept: ReadBasicType in text mode, after any whitespace; text that is not a
  // number of type T (or 'T'/'F' for a bool) throws format_error.
  template <class T>
  requires std::is_arithmetic_v<T>
  static void read(reader& r, T& v) {
    if constexpr (std::is_same_v<T, bool>) {
      r.skip_whitespace();
      int c = r.peek();
      if (c != 'T' && c != 'F')
        r.fail({"a bool ('T' or 'F')"},
               {c < 0 ? std::string("end of input") : "byte '" + std::string(1, static_cast<char>(c)) + "'"});
      r.advance(1);
      v = c == 'T';
    } else if constexpr (std::is_floating_point_v<T>) {
      v = detail::read_text_number<T>(r, sizeof(T) == 4 ? "float" : "double");
    } else {
      v = kaldi_io::read_text_integer<T>(r);
    }
  }

  // The Codec concept: a count in decimal and a space.
  static void write_size(writer& w, std::uint64_t n) { write(w, n); }
  // The Codec concept: a decimal count.
  static std::uint64_t read_size(reader& r) { return detail::read_text_number<std::uint64_t>(r, "count"); }

  // A string as "length bytes ": its bytes may hold anything, spaces and newlines too.
  static void write_string(writer& w, std::string_view s) {
    write_size(w, s.size());
    w.write(s.data(), s.size());
    w.put(' ');
  }
  // Reads what write_string writes; the length is checked against the input before s grows.
  static void read_string(reader& r, std::string& s) {
    std::uint64_t n = read_size(r);
    if (r.get() != ' ') r.fail({"one space between a string's length and its bytes"}, {"something else"});
    r.check_available(n, 1, "string bytes");
    s.resize(static_cast<std::size_t>(n));
    r.read_exact(s.data(), s.size(), "string bytes");
  }
  static constexpr std::uint64_t min_string_size = 2;

  // A Kaldi Vector, as Vector::Write(os, false): " [ 1 2.5 ]\n".
  template <std::floating_point T, class A>
  static void write_vector(writer& w, const std::vector<T, A>& v) {
    w.write(" [ ", 3);
    for (T x : v) write(w, x);
    w.write("]\n", 2);
  }
  // A Kaldi Vector, as Vector::Read(is, false) reads it ("[]" too, and inf and nan words).
  template <std::floating_point T, class A>
  static void read_vector(reader& r, std::vector<T, A>& v) {
    kaldi_io::read_text_float_vector(r, v);
  }

  // Kaldi's WriteIntegerVector in text mode: "[ 1 2 ]\n".
  template <class T, class A>
  requires std::is_integral_v<T> &&
      (!std::is_same_v<T, bool>)static void write_vector(writer& w, const std::vector<T, A>& v) {
    w.write("[ ", 2);
    for (T x : v) write(w, x);
    w.write("]\n", 2);
  }
  // Kaldi's ReadIntegerVector in text mode: "[", integers, "]".
  template <class T, class A>
  requires std::is_integral_v<T> &&
      (!std::is_same_v<T, bool>)static void read_vector(reader& r, std::vector<T, A>& v) {
    v.clear();
    kaldi_io::read_bracketed(r, [&] { v.push_back(kaldi_io::read_text_integer<T>(r)); });
  }

  // Kaldi's WriteIntegerPairVector in text mode: "[ 1,2 3,4 ]\n".
  template <class T, class A>
  requires std::is_integral_v<T> &&
      (!std::is_same_v<T, bool>)static void write_vector(writer& w,
                                                         const std::vector<std::pair<T, T>, A>& v) {
    w.write("[ ", 2);
    for (const auto& [a, b] : v) {
      detail::write_text_number(w, a, ',');
      detail::write_text_number(w, b);
    }
    w.write("]\n", 2);
  }
  // Kaldi's ReadIntegerPairVector in text mode: "[", pairs "a,b", "]".
  template <class T, class A>
  requires std::is_integral_v<T> &&
      (!std::is_same_v<T, bool>)static void read_vector(reader& r, std::vector<std::pair<T, T>, A>& v) {
    v.clear();
    kaldi_io::read_bracketed(r, [&] {
      T a = kaldi_io::read_text_integer<T>(r);
      if (r.peek() != ',') r.fail({"',' between the two integers of a pair"}, {"something else"});
      r.advance(1);
      T b = kaldi_io::read_text_integer<T>(r);
      v.emplace_back(a, b);
    });
  }
};

TABLIO_END_NAMESPACE
