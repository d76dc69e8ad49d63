// Kaldi's tokens and binary header, shared by its binary and text codecs.
//
// A token is a non-empty run of non-whitespace bytes, written followed by one space in both
// modes. Binary objects begin with the two bytes "\0B"; text objects have no header.
#pragma once

#include <tablio/stream/reader.hpp>
#include <tablio/stream/writer.hpp>

#include <cctype>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

namespace kaldi_io {

// Kaldi's IsToken: non-empty, printable, no whitespace (bytes >= 0x80 allowed except 0xFF).
inline bool is_token(std::string_view s) noexcept {
  if (s.empty()) return false;
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if ((!std::isprint(c) && c < 0x80) || c == 0xFF || reader::is_space(ch)) return false;
  }
  return true;
}

// Kaldi's WriteToken: the token, then one space. An empty token or one with whitespace throws
// usage_error, as it could not be read back.
inline void write_token(writer& w, std::string_view token) {
  if (token.empty() || token.find_first_of(" \t\n\v\f\r") != std::string_view::npos)
    throw_usage_error({"invalid token '", token, "': a token is non-empty and has no whitespace"});
  w.write(token);
  w.put(' ');
}

// Reads a token and the one whitespace byte that must follow it.
inline void read_token(reader& r, std::string& token) {
  r.skip_whitespace();
  std::uint64_t at = r.tell();
  token.clear();
  r.read_until_space(token);
  if (token.empty()) r.fail_at(at, {"a token"}, {"end of input"});
  int c = r.get();
  if (c < 0) r.fail({"whitespace after token ", quoted_excerpt(token)}, {"end of input"});
}

// The same, returning the token.
inline std::string read_token(reader& r) {
  std::string t;
  read_token(r, t);
  return t;
}

// Reads a token and checks it; "<Foo>" also accepts "Foo>" as Kaldi does.
inline void expect_token(reader& r, std::string_view expected) {
  r.skip_whitespace();
  std::uint64_t at = r.tell();
  std::string got;
  read_token(r, got);
  if (got == expected) return;
  if (expected.size() > 1 && expected.front() == '<' && got == expected.substr(1)) return;
  r.fail_at(at, {"token '", expected, "'"}, {quoted_excerpt(got)});
}

// The first character of the next token (after whitespace and an optional '<'), or -1.
inline int peek_token(reader& r) {
  r.skip_whitespace();
  int c = r.peek();
  if (c != '<') return c;
  if (!r.ensure(2)) return -1;
  return static_cast<unsigned char>(r.window()[1]);
}

// The next byte (after whitespace in text mode), or -1 at end of input.
inline int peek(reader& r, bool binary) {
  if (!binary) r.skip_whitespace();
  return r.peek();
}

// Writes "\0B" before a binary object.
inline void write_binary_header(writer& w) { w.write("\0B", 2); }

// The end of a text object's line: what is left of it after the object must be blanks and the
// newline, so that a value read as another type than the one that wrote it (another release of
// a struct), or cut inside a number, is an error here, rather than the rest of its line taken
// for the next key or a shorter number taken for the value. A decoder may have read the
// newline, and an object that ends in ']' is whole without it.
inline void read_text_line_end(reader& r) {
  // What ends in ']' (Kaldi's matrices and vectors) ends itself, as Kaldi reads it.
  if (const int last = r.previous_byte(); last == '\n' || last == ']') return;
  std::uint64_t at = r.tell();
  int c = r.peek();
  while (c == ' ' || c == '\t' || c == '\r') {
    r.advance(1);
    c = r.peek();
  }
  if (c == '\n')
    r.advance(1);
  else if (c < 0)  // every text object is written with its newline: the input was cut inside it
    r.fail_at(at, {"the end of the text object's line"}, {"the end of input (the object is cut short)"});
  else
    r.fail_at(at, {"the end of the text object's line"},
              {"more on the line: byte ", std::to_string(c),
               c > 32 && c < 127 ? std::string(" '") + char(c) + "'" : ""});
}

// Kaldi's InitKaldiInputStream: "\0B" means binary (consumed, true); anything else is text and
// nothing is consumed (false). A NUL byte not followed by 'B' throws format_error.
inline bool read_binary_header(reader& r) {
  if (r.peek() != 0) return false;
  std::uint64_t at = r.tell();
  r.advance(1);
  int c = r.get();
  if (c != 'B')
    r.fail_at(at, {"binary header \"\\0B\""},
              {c < 0 ? std::string("\"\\0\" then end of input") : "\"\\0\" then byte " + std::to_string(c)});
  return true;
}

}  // namespace kaldi_io

TABLIO_END_NAMESPACE
