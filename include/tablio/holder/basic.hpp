// Kaldi's basic holders, byte-exact: one basic value, a vector of them, a vector of vectors,
// a vector of pairs (BasicHolder, BasicVectorHolder, BasicVectorVectorHolder,
// BasicPairVectorHolder). Binary objects start with "\0B" and put a marker before every
// value; text objects are one line.
#pragma once

#include <tablio/codec/kaldi_binary.hpp>
#include <tablio/codec/kaldi_text.hpp>
#include <tablio/holder/concepts.hpp>
#include <tablio/stream/memory.hpp>

#include <string>
#include <utility>
#include <vector>

TABLIO_BEGIN_NAMESPACE

namespace detail {

// Reads the rest of a text line (without its '\n') as Kaldi's holders do with getline().
inline std::string read_line(reader& r) {
  std::string line;
  if (!r.read_line(line)) r.fail({"a text line"}, {"end of input"});
  return line;
}

// Parses a text line with its own reader, reporting errors at the line's offset in r.
template <class Parse>
void parse_line(reader& r, Parse parse) {
  std::uint64_t at = r.tell();
  std::string line = read_line(r);
  reader line_reader = memory_reader(std::string_view(line), r.name(), r.limits());
  try {
    parse(line_reader);
  } catch (const format_error& e) {
    error_location where = e.where();
    where.offset = at + e.offset().value_or(0);
    throw format_error(std::move(where), e.expected(), e.found());
  }
}

// Text mode: skips spaces and tabs; true at the end of the line (or input).
inline bool at_line_end(reader& r) {
  r.skip_whitespace();
  return r.at_end();
}

template <class T>
void write_basic_values(writer& w, bool binary, const std::vector<T>& v) {
  if (binary)
    kaldi_binary::write_array(w, v.data(), v.size());
  else
    kaldi_text::write_array(w, v.data(), v.size());
}

// M(int32 n), checked against the input, then n items read by read_items(pointer, count).
// On a stream of unknown size the vector grows only as data arrives, so a lying count cannot
// force a large allocation.
template <class Vector, class ReadItems>
void read_binary_items(reader& r, Vector& v, std::uint64_t min_item_bytes, const char* what,
                       ReadItems read_items) {
  std::uint64_t n = kaldi_binary::read_size(r);
  r.check_available(n, min_item_bytes, what);
  read_sized_array(r, v, n, read_items);
}

// Binary vector body: M(int32 n), then n values each with its marker.
template <class T>
void read_binary_basic_vector(reader& r, std::vector<T>& v) {
  read_binary_items(r, v, kaldi_binary::min_value_size<T>(), "vector elements",
                    [&](T* values, std::size_t n) { kaldi_binary::read_array(r, values, n); });
}

}  // namespace detail

// BasicHolder<T>: binary "\0B" M(v); text "v \n".
template <class T>
requires std::is_arithmetic_v<T>
class basic_holder : public holder_storage<T> {
 public:
  // The Holder concept: writes v in the form above, the text one ending its line.
  static void write(writer& w, bool binary, const T& v) {
    if (binary) {
      kaldi_io::write_binary_header(w);
      kaldi_binary::write(w, v);
    } else {
      kaldi_text::write(w, v);
      w.put('\n');
    }
  }
  // The Holder concept: reads either form; in text, the value alone on its line, blanks aside.
  // Throws format_error on anything else (an empty line, a second value).
  void read(reader& r) {
    if (kaldi_io::read_binary_header(r)) {
      kaldi_binary::read(r, this->value_);
      return;
    }
    // A blank line before the value is an error (Kaldi catches it: `is >> v` would skip it).
    skip_blanks(r);
    if (r.peek() == '\n') r.fail({"a basic value"}, {"an empty line"});
    kaldi_text::read(r, this->value_);
    skip_blanks(r);
    int c = r.get();
    if (c != '\n')
      r.fail_at(
          r.tell() - (c >= 0), {"a newline after the value"},
          {c < 0 ? std::string("end of input") : "byte '" + std::string(1, static_cast<char>(c)) + "'"});
  }

 private:
  static void skip_blanks(reader& r) {
    for (int c = r.peek(); c >= 0 && c != '\n' && reader::is_space(static_cast<char>(c)); c = r.peek())
      r.advance(1);
  }
};

// BasicVectorHolder<T>: binary "\0B" M(n) M(v)...; text "v1 v2 \n".
template <class T>
requires std::is_arithmetic_v<T>
class basic_vector_holder : public holder_storage<std::vector<T>> {
 public:
  // The Holder concept: writes v in the form above.
  static void write(writer& w, bool binary, const std::vector<T>& v) {
    if (binary) {
      kaldi_io::write_binary_header(w);
      kaldi_binary::write_size(w, v.size());
    }
    detail::write_basic_values(w, binary, v);
    if (!binary) w.put('\n');
  }
  // The Holder concept: reads either form, the text one a line of values (none for an empty
  // line); throws format_error on bad input or a count past the input or the limits.
  void read(reader& r) {
    auto& v = this->value_;
    v.clear();
    if (kaldi_io::read_binary_header(r)) {
      detail::read_binary_basic_vector(r, v);
      return;
    }
    detail::parse_line(r, [&](reader& line) {
      while (!detail::at_line_end(line)) {
        T x;
        kaldi_text::read(line, x);
        v.push_back(x);
      }
    });
  }
};

// BasicVectorVectorHolder<T>: binary "\0B" M(n) then per inner M(m) M(v)...;
// text "1 2 ; 3 ; \n" (each inner vector ends in ';').
template <class T>
requires std::is_arithmetic_v<T>
class basic_vector_vector_holder : public holder_storage<std::vector<std::vector<T>>> {
 public:
  // The Holder concept: writes v in the form above.
  static void write(writer& w, bool binary, const std::vector<std::vector<T>>& v) {
    if (binary) {
      kaldi_io::write_binary_header(w);
      kaldi_binary::write_size(w, v.size());
      for (const auto& inner : v) {
        kaldi_binary::write_size(w, inner.size());
        detail::write_basic_values(w, true, inner);
      }
      return;
    }
    for (const auto& inner : v) {
      detail::write_basic_values(w, false, inner);
      w.write("; ", 2);
    }
    w.put('\n');
  }
  // The Holder concept: reads either form; in text, values left after the last ';' are a
  // format_error, as are bad values and counts past the input or the limits.
  void read(reader& r) {
    auto& v = this->value_;
    v.clear();
    if (kaldi_io::read_binary_header(r)) {
      detail::read_binary_items(r, v, kaldi_binary::min_size_prefix, "inner vectors",
                                [&](std::vector<T>* inner, std::size_t n) {
                                  for (std::size_t i = 0; i < n; ++i)
                                    detail::read_binary_basic_vector(r, inner[i]);
                                });
      return;
    }
    detail::parse_line(r, [&](reader& line) {
      std::vector<T> current;
      while (!detail::at_line_end(line)) {
        if (line.peek() == ';') {
          line.advance(1);
          v.push_back(std::move(current));
          current.clear();
          continue;
        }
        T x;
        kaldi_text::read(line, x);
        current.push_back(x);
      }
      if (!current.empty()) line.fail({"';' closing the last inner vector"}, {"end of line"});
    });
  }
};

// BasicPairVectorHolder<T>: binary "\0B" M(n) then M(a) M(b) per pair; text "1 2 ; 3 4 \n".
template <class T>
requires std::is_arithmetic_v<T>
class basic_pair_vector_holder : public holder_storage<std::vector<std::pair<T, T>>> {
 public:
  // The Holder concept: writes v in the form above.
  static void write(writer& w, bool binary, const std::vector<std::pair<T, T>>& v) {
    if (binary) {
      kaldi_io::write_binary_header(w);
      kaldi_binary::write_size(w, v.size());
      for (const auto& [a, b] : v) {
        kaldi_binary::write(w, a);
        kaldi_binary::write(w, b);
      }
      return;
    }
    for (std::size_t i = 0; i < v.size(); ++i) {
      kaldi_text::write(w, v[i].first);
      kaldi_text::write(w, v[i].second);
      if (i + 1 < v.size()) w.write("; ", 2);
    }
    w.put('\n');
  }
  // The Holder concept: reads either form; in text, pairs separated by ';'. Throws format_error
  // on a lone value, another separator, or a count past the input or the limits.
  void read(reader& r) {
    auto& v = this->value_;
    v.clear();
    if (kaldi_io::read_binary_header(r)) {
      detail::read_binary_items(r, v, 2 * kaldi_binary::min_value_size<T>(), "pairs",
                                [&](std::pair<T, T>* pairs, std::size_t n) {
                                  for (std::size_t i = 0; i < n; ++i) {
                                    kaldi_binary::read(r, pairs[i].first);
                                    kaldi_binary::read(r, pairs[i].second);
                                  }
                                });
      return;
    }
    detail::parse_line(r, [&](reader& line) {
      while (!detail::at_line_end(line)) {
        std::pair<T, T> p;
        kaldi_text::read(line, p.first);
        kaldi_text::read(line, p.second);
        v.push_back(p);
        if (detail::at_line_end(line)) break;
        if (line.peek() != ';') line.fail({"';' between pairs"}, {"something else"});
        line.advance(1);
      }
    });
  }
};

TABLIO_END_NAMESPACE
