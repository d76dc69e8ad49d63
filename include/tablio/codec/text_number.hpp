// Numbers in Kaldi's text form: written as C++ iostreams with precision 7 write them
// ("%.7g": 0.1, 1e+10, -0), read as `is >> value` reads them (optional sign, decimal digits,
// fraction and exponent; no hex, no inf/nan; overflow fails, underflow gives zero).
#pragma once

#include <tablio/codec/float_format.hpp>
#include <tablio/core/parse_float.hpp>
#include <tablio/stream/reader.hpp>
#include <tablio/stream/writer.hpp>

#include <charconv>
#include <concepts>
#include <limits>
#include <string>
#include <type_traits>

TABLIO_BEGIN_NAMESPACE

namespace detail {

// Writes `value` followed by `after` (one space, as Kaldi's text mode does).
template <class T>
requires std::is_arithmetic_v<T>
inline void write_text_number(writer& w, T value, char after = ' ') {
  char* p = w.reserve(40);
  std::to_chars_result r;
  if constexpr (std::is_same_v<T, float>) {
    r.ptr = format_float_7g(p, value);
  } else if constexpr (std::is_floating_point_v<T>) {
    r.ptr = format_non_finite(p, value);
    if (!r.ptr) r = std::to_chars(p, p + 39, value, std::chars_format::general, 7);
  } else if constexpr (sizeof(T) == 1) {
    r = std::to_chars(p, p + 39, static_cast<int>(value));  // printed as a number, not a char
  } else {
    r = std::to_chars(p, p + 39, value);
  }
  *r.ptr = after;
  w.advance(static_cast<std::size_t>(r.ptr + 1 - p));
}

// Collects the characters `is >> number` would take after skipping whitespace.
inline std::string_view scan_number_token(reader& r, std::string& scratch, bool floating) {
  r.skip_whitespace();
  scratch.clear();
  auto accept = [&](auto pred) {
    int c = r.peek();
    if (c >= 0 && pred(static_cast<char>(c))) {
      scratch.push_back(static_cast<char>(c));
      r.advance(1);
      return true;
    }
    return false;
  };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  auto sign = [](char c) { return c == '+' || c == '-'; };
  accept(sign);
  while (accept(digit)) {
  }
  if (floating) {
    if (accept([](char c) { return c == '.'; }))
      while (accept(digit)) {
      }
    if (accept([](char c) { return c == 'e' || c == 'E'; })) {
      accept(sign);
      while (accept(digit)) {
      }
    }
  }
  return scratch;
}

[[noreturn]] inline void fail_number(reader& r, std::uint64_t at, const char* type, std::string_view token) {
  std::string found = token.empty() ? std::string("no number") : quoted_excerpt(token);
  int next = r.peek();
  if (token.empty()) {
    if (next < 0)
      found = "end of input";
    else
      found += " (next byte '" + std::string(1, static_cast<char>(next)) + "')";
  }
  r.fail_at(at, {"a text ", type}, {found});
}

// The length of the token `is >> number` would take from [p, end): optional sign, digits,
// and for floating types a fraction and an exponent.
inline std::size_t number_token_length(const char* p, const char* end, bool floating) noexcept {
  const char* q = p;
  auto digits = [&] {
    while (q != end && *q >= '0' && *q <= '9') ++q;
  };
  if (q != end && (*q == '+' || *q == '-')) ++q;
  digits();
  if (floating) {
    if (q != end && *q == '.') {
      ++q;
      digits();
    }
    if (q != end && (*q == 'e' || *q == 'E')) {
      ++q;
      if (q != end && (*q == '+' || *q == '-')) ++q;
      digits();
    }
  }
  return static_cast<std::size_t>(q - p);
}

// Converts a whole token; false if it is not a number of type T as `is >> value` reads it.
template <class T>
bool convert_number_token(std::string_view tok, T& out) {
  std::string_view digits = tok;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  if (digits.empty()) return false;
  const char* first = digits.data();
  const char* last = first + digits.size();
  if constexpr (std::is_floating_point_v<T>) {
    auto res = parse_float(first, last, out);
    if (res.ptr != last) return false;
    if (res.ec == std::errc::result_out_of_range) {
      // Underflow reads as zero (as strtof does); overflow fails.
      std::size_t e = digits.find_first_of("eE");
      bool negative_exponent = e != std::string_view::npos && e + 1 < digits.size() && digits[e + 1] == '-';
      std::string_view integral = digits.substr(0, digits.find_first_of(".eE"));
      bool integral_zero = integral.find_first_not_of("-0") == std::string_view::npos;
      if (!negative_exponent && !integral_zero) return false;
      out = digits.front() == '-' ? -T(0) : T(0);
    }
    return true;
  } else {
    using wide = std::conditional_t<std::is_signed_v<T>, long long, unsigned long long>;
    wide v{};
    auto res = std::from_chars(first, last, v);
    if (res.ptr != last || res.ec != std::errc{}) return false;
    if (v < static_cast<wide>(std::numeric_limits<T>::min()) ||
        v > static_cast<wide>(std::numeric_limits<T>::max()))
      return false;
    out = static_cast<T>(v);
    return true;
  }
}

// Reads a number as Kaldi's text mode does; throws format_error naming the offending text.
template <class T>
requires std::is_arithmetic_v<T>
inline T read_text_number(reader& r, const char* type) {
  r.skip_whitespace();
  T value{};
  // Fast path: the token lies inside the current window and can be parsed in place.
  std::span<const char> w = r.window();
  std::size_t n = number_token_length(w.data(), w.data() + w.size(), std::is_floating_point_v<T>);
  if (n < w.size()) {
    if (convert_number_token(std::string_view(w.data(), n), value)) {
      r.advance(n);
      return value;
    }
  }
  std::string scratch;
  std::uint64_t at = r.tell();
  std::string_view tok = scan_number_token(r, scratch, std::is_floating_point_v<T>);
  if (!convert_number_token(tok, value)) {
    if constexpr (std::is_integral_v<T>) {
      double probe;
      if (!tok.empty() &&
          parse_float(tok.data() + (tok.front() == '+'), tok.data() + tok.size(), probe).ptr ==
              tok.data() + tok.size())
        r.fail_at(at, {"a text ", type, " in range"}, {quoted_excerpt(tok)});
    }
    fail_number(r, at, type, tok);
  }
  return value;
}

}  // namespace detail

TABLIO_END_NAMESPACE
