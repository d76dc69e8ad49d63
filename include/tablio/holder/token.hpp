// Kaldi's TokenHolder ("tok\n") and TokenVectorHolder ("a b c \n"): no "\0B", the same
// bytes in binary and text mode.
#pragma once

#include <tablio/codec/kaldi_token.hpp>
#include <tablio/holder/basic.hpp>

#include <string>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// Kaldi's TokenHolder, a Holder of one token: a non-empty word of printable bytes and no
// whitespace, written as the token and a newline.
class token_holder : public holder_storage<std::string> {
 public:
  // The Holder concept: writes the token and a newline in either mode; throws usage_error for a
  // string that is not a token.
  static void write(writer& w, bool /*binary*/, const std::string& token) {
    check_token(token);
    w.write(token);
    w.put('\n');
  }
  // The Holder concept: reads a token after any whitespace, then blanks to the newline; throws
  // format_error for no token, unprintable bytes, or more on the line.
  void read(reader& r) {
    r.skip_whitespace();
    std::uint64_t at = r.tell();
    value_.clear();
    r.read_until_space(value_);
    if (value_.empty()) r.fail_at(at, {"a token"}, {"end of input"});
    check_token_read(r, at, value_);
    for (int c = r.peek(); c != '\n'; c = r.peek()) {
      if (c < 0 || !reader::is_space(static_cast<char>(c)))
        r.fail({"a newline after token ", quoted_excerpt(value_)},
               {c < 0 ? std::string("end of input") : "byte '" + std::string(1, static_cast<char>(c)) + "'"});
      r.advance(1);
    }
    r.advance(1);
  }
  // Throws usage_error unless token is one a writer takes (non-empty, printable, no whitespace).
  static void check_token(std::string_view token) {
    if (!kaldi_io::is_token(token))
      throw_usage_error({"invalid token ", quoted_excerpt(token), " (empty, whitespace or unprintable)"});
  }
  // A token read is one a writer takes (Kaldi's writers assert IsToken): unprintable bytes are
  // damage, not a value to hand on or print.
  static void check_token_read(const reader& r, std::uint64_t at, std::string_view token) {
    if (!kaldi_io::is_token(token)) r.fail_at(at, {"a token of printable bytes"}, {quoted_excerpt(token)});
  }
};

// Kaldi's TokenVectorHolder, a Holder of a line of tokens: each followed by a space, then a
// newline.
class token_vector_holder : public holder_storage<std::vector<std::string>> {
 public:
  // The Holder concept: writes "a b c " and a newline in either mode; throws usage_error for a string that
  // is not a token. An empty vector is a newline alone.
  static void write(writer& w, bool /*binary*/, const std::vector<std::string>& tokens) {
    for (const auto& t : tokens) {
      token_holder::check_token(t);
      w.write(t);
      w.put(' ');
    }
    w.put('\n');
  }
  // The Holder concept: reads the tokens of one line (none for an empty line); throws
  // format_error for unprintable bytes or a missing newline.
  void read(reader& r) {
    value_.clear();
    detail::parse_line(r, [&](reader& line) {
      while (!detail::at_line_end(line)) {
        value_.emplace_back();
        std::uint64_t at = line.tell();
        line.read_until_space(value_.back());
        token_holder::check_token_read(line, at, value_.back());
      }
    });
  }
};

TABLIO_END_NAMESPACE
