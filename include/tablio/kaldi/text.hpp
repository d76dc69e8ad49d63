// Kaldi's util/text-utils.h over tablio: splitting and joining strings, numbers from text
// (checked: no trailing junk, nothing out of range), Trim, IsToken and IsLine, a string hasher,
// and PrintableRxfilename / PrintableWxfilename with the shell quoting they use.
//
// Numbers are read with std::from_chars, which ignores the locale (Kaldi's strtod and
// istreams follow it) and needs no errno.
#pragma once

#include <tablio/core/config.hpp>
#include <tablio/core/parse_float.hpp>
#include <tablio/kaldi/base.hpp>

#include <charconv>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

TABLIO_BEGIN_NAMESPACE

namespace kaldi {

// Splits full at every character of delim: n delimiters give n + 1 fields (so "" gives one
// empty field), or, with omit_empty_strings, only the non-empty ones.
TABLIO_IMPL void SplitStringToVector(const std::string& full, const char* delim, bool omit_empty_strings,
                                     std::vector<std::string>* out);

// Joins the strings with delim between them; with omit_empty_strings, empty ones are left out
// (delimiters included), so only non-empty strings are joined.
TABLIO_IMPL void JoinVectorToString(const std::vector<std::string>& vec_in, const char* delim,
                                    bool omit_empty_strings, std::string* str_out);

// Removes the whitespace (" \t\n\r\f\v") at both ends of *str.
TABLIO_IMPL void Trim(std::string* str);

// Splits the trimmed line at its first run of whitespace: *first is what precedes it, *rest
// what follows it (empty when the line is one word).
TABLIO_IMPL void SplitStringOnFirstSpace(const std::string& line, std::string* first, std::string* rest);

// Whether token is non-empty and has no whitespace or ASCII control characters. Bytes past
// ASCII (UTF-8) are accepted, except 0xFF, Latin-1's no-break space, as Kaldi's.
TABLIO_IMPL bool IsToken(const std::string& token);

// Whether line has no newline and no ASCII control character, and neither begins nor ends with
// whitespace; the empty line is one. Bytes past ASCII (UTF-8) are accepted.
TABLIO_IMPL bool IsLine(const std::string& line);

// Whether a and b are the same text, where numbers may differ in their decimals from the
// (decimal_places_check + 1)-th on: "x 0.1234" and "x 0.1299" agree to 2 places.
TABLIO_IMPL bool StringsApproxEqual(const std::string& a, const std::string& b,
                                    int32 decimal_places_check = 2);

// A hash of std::string for std::unordered_map and std::unordered_set, as Kaldi's.
struct StringHasher {
  // The string's hash.
  std::size_t operator()(const std::string& str) const noexcept { return std::hash<std::string_view>{}(str); }
};

// std::unordered_map, which Kaldi's programs name unqualified (util/stl-utils.h brings it in).
using std::unordered_map;
// std::unordered_set, named unqualified as unordered_map is: unordered_set<std::string,
// StringHasher> is how Kaldi's programs keep a set of keys.
using std::unordered_set;

// How an rxfilename reads in a message: "standard input" for "" and "-", else the name,
// quoted for a shell when it needs to be.
TABLIO_IMPL std::string PrintableRxfilename(const std::string& rxfilename);
// How a wxfilename reads in a message: "standard output" for "" and "-", else the name,
// quoted for a shell when it needs to be.
TABLIO_IMPL std::string PrintableWxfilename(const std::string& wxfilename);

namespace detail {

// str as one word in a POSIX shell: unchanged when every character is safe there (letters,
// digits and -_.,/:=+@%^), else quoted so that pasting it gives the program the same bytes.
// ParseOptions::Escape and --print-args use it.
TABLIO_IMPL std::string EscapeForShell(const std::string& str);

// Whether c is whitespace as Kaldi's Trim takes it (the "C" locale's isspace).
constexpr bool IsSpace(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// s without the whitespace at its start and, when trailing, at its end.
constexpr std::string_view TrimmedView(std::string_view s, bool trailing = true) noexcept {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (trailing && !s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// An integer type of Kaldi's text: not bool, not a character type.
template <class I>
concept TextInteger = std::integral<I> && !std::same_as<I, bool>;

// Reads text (leading whitespace and a sign allowed, in decimal) into *out when all of it is
// a number *out can hold; with trailing_space, whitespace after the number is allowed too.
template <TextInteger I>
bool ParseInteger(std::string_view text, bool trailing_space, I* out) {
  std::string_view s = TrimmedView(text, trailing_space);
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  // The magnitude in an unsigned type, which takes no sign: "+-1" and "--1" fail here.
  std::uint64_t magnitude = 0;
  const char* end = s.data() + s.size();
  auto [stop, ec] = std::from_chars(s.data(), end, magnitude);
  if (s.empty() || ec != std::errc{} || stop != end) return false;
  if (!negative) {
    if (magnitude > static_cast<std::uint64_t>(std::numeric_limits<I>::max())) return false;
    *out = static_cast<I>(magnitude);
  } else if (magnitude == 0) {
    *out = 0;
  } else {
    if constexpr (std::is_unsigned_v<I>) {
      return false;
    } else {
      // -min fits in uint64 for every signed type; the value is built without overflowing.
      const std::uint64_t limit = static_cast<std::uint64_t>(-(std::numeric_limits<I>::min() + 1)) + 1;
      if (magnitude > limit) return false;
      *out = static_cast<I>(-static_cast<std::int64_t>(magnitude - 1) - 1);
    }
  }
  return true;
}

// Reads text into *out when, but for whitespace at either end, it is one float or double:
// decimal or scientific notation with an optional sign, "inf", "infinity" or "nan" in any
// case. A number out of the type's range (overflow, or underflow to zero) fails.
template <std::floating_point T>
bool ParseReal(std::string_view text, T* out) {
  std::string_view s = TrimmedView(text);
  // std::from_chars takes '-' but not '+', which strtod takes.
  if (s.size() > 1 && s.front() == '+' && s[1] != '-' && s[1] != '+') s.remove_prefix(1);
  T value{};
  const char* end = s.data() + s.size();
  auto [stop, ec] = ::tablio::detail::parse_float(s.data(), end, value);
  if (s.empty() || ec != std::errc{} || stop != end) return false;
  *out = value;
  return true;
}

}  // namespace detail

// Reads str (whitespace at either end allowed, an optional sign, decimal) into *out; false,
// *out untouched, when it is empty, has anything else, or does not fit Int.
template <class Int>
bool ConvertStringToInteger(const std::string& str, Int* out) {
  static_assert(detail::TextInteger<Int>, "ConvertStringToInteger needs an integer type");
  return detail::ParseInteger(str, true, out);
}

// Reads str into *out (a float or a double), whitespace at either end allowed; "inf", "-inf",
// "nan" in any case are taken. False, *out untouched, on anything else after the number, an
// empty string, or a value out of range ("1e400"; "1e40" for a float).
template <class T>
bool ConvertStringToReal(const std::string& str, T* out) {
  static_assert(std::same_as<T, float> || std::same_as<T, double>,
                "ConvertStringToReal needs float or double");
  return detail::ParseReal(str, out);
}

namespace detail {

// Splits full as SplitStringToVector does and reads each field with parse(field, &value);
// false, *out emptied, at the first field it refuses. An empty string gives no values.
template <class T, class Parse>
bool SplitStringAndParse(const std::string& full, const char* delim, bool omit_empty_strings,
                         std::vector<T>* out, Parse parse) {
  out->clear();
  if (full.empty()) return true;
  std::vector<std::string> fields;
  SplitStringToVector(full, delim, omit_empty_strings, &fields);
  out->resize(fields.size());
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (!parse(fields[i], &(*out)[i])) {
      out->clear();
      return false;
    }
  }
  return true;
}

}  // namespace detail

// Splits full as SplitStringToVector does and reads each field as an integer ("1:2:3"); false,
// *out emptied, when a field is not one (an empty field, or whitespace after the number).
// An empty string gives no integers.
template <class I>
bool SplitStringToIntegers(const std::string& full, const char* delim, bool omit_empty_strings,
                           std::vector<I>* out) {
  static_assert(detail::TextInteger<I>, "SplitStringToIntegers needs an integer type");
  // As Kaldi's strtoll: whitespace before the number is allowed, after it is not.
  return detail::SplitStringAndParse(full, delim, omit_empty_strings, out, [](const std::string& f, I* v) {
    return detail::ParseInteger(f, false, v);
  });
}

// Splits full as SplitStringToVector does and reads each field with ConvertStringToReal;
// false, *out emptied, when a field is not a number. An empty string gives no numbers.
template <class F>
bool SplitStringToFloats(const std::string& full, const char* delim, bool omit_empty_strings,
                         std::vector<F>* out) {
  static_assert(std::same_as<F, float> || std::same_as<F, double>,
                "SplitStringToFloats needs float or double");
  return detail::SplitStringAndParse(full, delim, omit_empty_strings, out,
                                     [](const std::string& f, F* v) { return detail::ParseReal(f, v); });
}

}  // namespace kaldi

TABLIO_END_NAMESPACE

#if TABLIO_HEADER_IMPLEMENTATION
TABLIO_BEGIN_NAMESPACE

namespace kaldi {

TABLIO_IMPL void SplitStringToVector(const std::string& full, const char* delim, bool omit_empty_strings,
                                     std::vector<std::string>* out) {
  out->clear();
  std::size_t start = 0;
  for (;;) {
    const std::size_t found = full.find_first_of(delim, start);
    const std::size_t stop = found == std::string::npos ? full.size() : found;
    if (!omit_empty_strings || stop != start) out->push_back(full.substr(start, stop - start));
    if (found == std::string::npos) return;
    start = found + 1;
  }
}

TABLIO_IMPL void JoinVectorToString(const std::vector<std::string>& vec_in, const char* delim,
                                    bool omit_empty_strings, std::string* str_out) {
  str_out->clear();
  bool first = true;
  for (const std::string& s : vec_in) {
    if (omit_empty_strings && s.empty()) continue;
    if (!first) str_out->append(delim);
    str_out->append(s);
    first = false;
  }
}

TABLIO_IMPL void Trim(std::string* str) {
  const std::string_view kept = detail::TrimmedView(*str);
  if (kept.size() == str->size()) return;
  *str = std::string(kept);
}

TABLIO_IMPL void SplitStringOnFirstSpace(const std::string& line, std::string* first, std::string* rest) {
  const std::string_view s = detail::TrimmedView(line);
  std::size_t word_end = 0;
  while (word_end < s.size() && !detail::IsSpace(s[word_end])) ++word_end;
  *first = std::string(s.substr(0, word_end));
  *rest = std::string(detail::TrimmedView(s.substr(word_end)));
}

TABLIO_IMPL bool IsToken(const std::string& token) {
  if (token.empty()) return false;
  for (char c : token) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x80 ? (byte <= 0x20 || byte == 0x7f) : byte == 0xff) return false;
  }
  return true;
}

TABLIO_IMPL bool IsLine(const std::string& line) {
  if (line.empty()) return true;
  if (detail::IsSpace(line.front()) || detail::IsSpace(line.back())) return false;
  for (char c : line) {
    const auto byte = static_cast<unsigned char>(c);
    // Tabs and newlines are control characters: a line is printable text, spaces inside.
    if (byte < 0x20 || byte == 0x7f) return false;
  }
  return true;
}

TABLIO_IMPL bool StringsApproxEqual(const std::string& a, const std::string& b, int32 decimal_places_check) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  // Decimals of the number being read that both strings share; -1 outside a fraction.
  int32 decimals = -1;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size() && a[i] == b[j]) {
    const char c = a[i];
    ++i, ++j;
    if (decimals >= 0 && digit(c))
      ++decimals;
    else
      decimals = c == '.' ? 0 : -1;
    if (i < a.size() && j < b.size() && a[i] != b[j] && decimals >= decimal_places_check && digit(a[i]) &&
        digit(b[j])) {
      // Past the decimals checked: the rest of both numbers may differ.
      while (i < a.size() && digit(a[i])) ++i;
      while (j < b.size() && digit(b[j])) ++j;
      decimals = -1;
    }
  }
  return i == a.size() && j == b.size();
}

TABLIO_IMPL std::string PrintableRxfilename(const std::string& rxfilename) {
  if (rxfilename.empty() || rxfilename == "-") return "standard input";
  return detail::EscapeForShell(rxfilename);
}

TABLIO_IMPL std::string PrintableWxfilename(const std::string& wxfilename) {
  if (wxfilename.empty() || wxfilename == "-") return "standard output";
  return detail::EscapeForShell(wxfilename);
}

namespace detail {

TABLIO_IMPL std::string EscapeForShell(const std::string& str) {
  // Characters no POSIX shell gives a meaning to inside a word. Kaldi also leaves []~# bare,
  // which a shell may expand (a glob, a home directory) or take as a comment at a word's start.
  auto safe = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("-_.,/:=+@%^").find(c) != std::string_view::npos;
  };
  bool all_safe = !str.empty();  // "" must be quoted to stay an argument
  for (char c : str) all_safe = all_safe && safe(c);
  if (all_safe) return str;

  const bool has_single_quote = str.find('\'') != std::string::npos;
  // Inside double quotes, an interactive bash expands '!' whatever precedes it, so a string
  // with both quotes and a '!' keeps single quotes, a single quote written as '\''.
  if (!has_single_quote || str.find('!') != std::string::npos) {
    std::string quoted = "'";
    for (char c : str) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
  }
  std::string quoted = "\"";
  for (char c : str) {
    if (c == '"' || c == '\\' || c == '$' || c == '`') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace detail

}  // namespace kaldi

TABLIO_END_NAMESPACE
#endif  // TABLIO_HEADER_IMPLEMENTATION
