// Kaldi's matrix and vector object formats on plain row-major storage, shared by
// tablio::matrix, tablio::vector and the compressed matrix's text form.
//
// Binary matrix: "FM " (float) or "DM " (double), M(int32 rows), M(int32 cols), the rows
// raw. Binary vector: "FV "/"DV ", M(int32 dim), the data. Text matrix: " [\n  a b \n  c d ]\n"
// (" [ ]\n" when empty); text vector " [ a b ]\n". Reading accepts the other precision.
#pragma once

#include <tablio/codec/kaldi_binary.hpp>
#include <tablio/codec/kaldi_text.hpp>

#include <cstring>
#include <limits>
#include <span>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

TABLIO_BEGIN_NAMESPACE

namespace kaldi_io {

// The token of a binary matrix of T: "FM" for float, "DM" for double.
template <std::floating_point T>
constexpr const char* matrix_token() noexcept {
  return sizeof(T) == 4 ? "FM" : "DM";
}

// Writes a binary matrix object body (no "\0B").
template <std::floating_point T>
void write_matrix_binary(writer& w, std::int32_t rows, std::int32_t cols, const T* data) {
  w.write(sizeof(T) == 4 ? "FM " : "DM ", 3);
  kaldi_binary::write(w, rows);
  kaldi_binary::write(w, cols);
  w.write(reinterpret_cast<const char*>(data),
          static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * sizeof(T));
}

// Writes a text matrix exactly as Kaldi's Matrix::Write(os, false).
template <std::floating_point T>
void write_matrix_text(writer& w, std::int32_t rows, std::int32_t cols, const T* data) {
  if (cols == 0) {
    w.write(" [ ]\n", 5);
    return;
  }
  w.write(" [", 2);
  for (std::int32_t r = 0; r < rows; ++r) {
    w.write("\n  ", 3);
    const T* row = data + static_cast<std::size_t>(r) * static_cast<std::size_t>(cols);
    for (std::int32_t c = 0; c < cols; ++c) detail::write_text_number(w, row[c]);
  }
  w.write("]\n", 2);
}

// Kaldi's matrices have rows and columns, or neither: a 0x5 matrix cannot be written, whether
// plain or compressed, since Kaldi would read it back as 0x0.
inline void check_matrix_shape(std::int64_t rows, std::int64_t cols) {
  if (rows < 0 || cols < 0 || (rows == 0) != (cols == 0))
    throw_usage_error(
        {"a matrix is rows x cols with both positive or both zero, not ", decimal(rows), "x", decimal(cols)});
}

// The dimensions of a binary matrix, checked: non-negative, both zero or both non-zero, and
// rows*cols elements of `element_size` bytes present in the input.
inline std::pair<std::int32_t, std::int32_t> read_matrix_dims(reader& r, std::size_t element_size) {
  std::uint64_t at = r.tell();
  std::int32_t rows, cols;
  kaldi_binary::read(r, rows);
  kaldi_binary::read(r, cols);
  if (rows < 0 || cols < 0 || ((rows == 0) != (cols == 0)))
    r.fail_at(at, {"matrix dimensions that are both positive or both zero"},
              {decimal(rows), "x", decimal(cols)});
  r.check_available(static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(cols), element_size,
                    "matrix elements");
  return {rows, cols};
}

// Reads the body of a binary "FM"/"DM" matrix (after its token) of element type U into out,
// converting to T.
template <std::floating_point U, std::floating_point T, class A>
void read_matrix_binary_body(reader& r, std::int32_t& rows, std::int32_t& cols, std::vector<T, A>& out) {
  std::tie(rows, cols) = read_matrix_dims(r, sizeof(U));
  std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  if constexpr (std::is_same_v<T, U>) {
    kaldi_binary::read_bulk(r, out, n);
  } else {
    std::vector<U> tmp;
    kaldi_binary::read_bulk(r, tmp, n);
    out.assign(tmp.begin(), tmp.end());
  }
}

// Reads a text matrix as Kaldi's Matrix::Read(is, false): "[" (or "[]"), numbers, rows ended
// by '\n' or ';' (empty rows ignored), inf/infinity/nan words (any case, "-inf" and "-nan"
// too), then "]".
template <std::floating_point T, class A>
void read_matrix_text(reader& r, std::int32_t& rows, std::int32_t& cols, std::vector<T, A>& out) {
  r.skip_whitespace();
  std::uint64_t at = r.tell();
  std::string open;
  r.read_until_space(open);
  out.clear();
  rows = cols = 0;
  if (open == "[]") return;
  if (open != "[")
    r.fail_at(at, {"\"[\" opening a matrix"},
              {open.empty() ? std::string("end of input") : quoted_excerpt(open)});
  std::size_t row_length = 0;  // elements in the current row
  std::int64_t first_cols = -1;
  auto end_row = [&] {
    if (row_length == 0) return;  // empty rows are ignored
    if (first_cols < 0)
      first_cols = static_cast<std::int64_t>(row_length);
    else if (static_cast<std::int64_t>(row_length) != first_cols)
      r.fail({"rows of ", decimal(first_cols), " columns (inconsistent #cols)"},
             {"a row of ", decimal(row_length), " in row ", decimal(rows)});
    ++rows;
    row_length = 0;
  };
  for (;;) {
    int c = r.peek();
    if (c < 0) r.fail({"']' closing the matrix"}, {"end of input"});
    if (c == ']') {
      consume_closing_bracket(r);
      end_row();
      cols = rows == 0 ? 0 : static_cast<std::int32_t>(first_cols);
      return;
    }
    if (c == '\n' || c == ';') {
      r.advance(1);
      end_row();
    } else if (starts_text_number(r, c)) {
      out.push_back(detail::read_text_number<T>(r, sizeof(T) == 4 ? "float" : "double"));
      ++row_length;
    } else if (reader::is_space(static_cast<char>(c))) {
      r.advance(1);
    } else {
      out.push_back(read_special_float<T>(r));
      ++row_length;
    }
    if (out.size() > r.limits().max_element_count)
      r.fail({"at most ", decimal(r.limits().max_element_count), " matrix elements"}, {"more"});
  }
}

// Whether the ']' ending `text` (a text matrix's bytes from its '[') closes it, as
// read_matrix_text would see it: it does where a token starts, after whitespace, a row's ';' or a
// number; inside a word ("nan]", "x]y") it is part of that word.
inline bool bracket_closes_matrix(std::string_view text) noexcept {
  std::size_t start = text.size() - 1;
  while (start > 0 && !reader::is_space(text[start - 1])) --start;
  const char* p = text.data() + start;
  const char* end = text.data() + text.size() - 1;
  while (p != end) {
    if (*p == ';') {
      ++p;
    } else if ((*p >= '0' && *p <= '9') || *p == '-') {
      p += detail::number_token_length(p, end, true);
    } else {
      return false;  // a word, read up to whitespace
    }
  }
  return true;
}

// The text matrix at r ("[" and whitespace, or "[]" alone) taken whole into out, its end found
// as read_matrix_text finds it, with the line end it consumes after ']'; false, having consumed
// nothing (a stream that goes on as binary after blanks is read as text where it starts), for
// an opening read_matrix_text refuses (it says why, on the stream) or blanks past the window.
inline bool skim_text_matrix(reader& r, skimmed_object& out) {
  std::span<const char> first = r.window();
  std::size_t open = 0;
  while (open < first.size() && reader::is_space(first[open])) ++open;
  if (open == first.size() || first[open] != '[' || !r.ensure(open + 2)) return false;
  const char second = r.window()[open + 1];
  if (second == ']') {  // "[]": empty, its line end left unread
    if (r.ensure(open + 3) && !reader::is_space(r.window()[open + 2])) return false;
    out.copy.assign("[]");
    r.advance(open + 2);
    out.bytes = out.copy;
    return true;
  }
  if (!reader::is_space(second)) return false;
  r.advance(open);
  auto take_until = [&](auto find) {  // appends up to and including the first byte found
    while (r.fill()) {
      std::span<const char> w = r.window();
      const std::size_t n = find(w);
      const bool hit = n < w.size();
      out.copy.append(w.data(), n + hit);
      r.advance(n + hit);
      if (hit) return true;
    }
    return false;  // cut short: decoding says so, at the same offset
  };
  auto bracket = [](std::span<const char> w) {  // no number holds a ']'
    const void* at = std::memchr(w.data(), ']', w.size());
    return at ? static_cast<std::size_t>(static_cast<const char*>(at) - w.data()) : w.size();
  };
  auto space = [](std::span<const char> w) {
    std::size_t n = 0;
    while (n < w.size() && !reader::is_space(w[n])) ++n;
    return n;
  };
  auto newline = [](std::span<const char> w) {
    const void* at = std::memchr(w.data(), '\n', w.size());
    return at ? static_cast<std::size_t>(static_cast<const char*>(at) - w.data()) : w.size();
  };
  while (take_until(bracket)) {
    if (bracket_closes_matrix(out.copy)) {
      if (int next = r.peek(); next == '\n' || next == '\r') {  // as consume_closing_bracket
        out.copy += static_cast<char>(next);
        r.advance(1);
        if (next == '\r' && r.peek() >= 0) {
          const char taken = static_cast<char>(r.peek());
          out.copy += taken;
          r.advance(1);
          // what its holder then reads of the line (kaldi_token.hpp's read_text_line_end)
          if (taken != '\n') take_until(newline);
        }
      }
      break;
    }
    if (!take_until(space)) break;
  }
  out.bytes = out.copy;
  return true;
}

// Takes one matrix object whose decoding costs more than copying its bytes, compressed (\0B then
// CM, CM2 or CM3) or text ("[ ... ]"), off r into out undecoded (a view of r's window where it
// can be kept), its end read off its header (or its closing ']'), so that a table's threads can
// decode it apart from the stream (table/read_ahead.hpp), from the same bytes and with the same
// errors. False, having consumed nothing, for what is better read from the stream, as without
// threads: a float or double matrix (its decoding is a copy), and what a header does not end
// plainly (an empty compressed matrix, a malformed header, a binary object cut short).
inline bool skim_matrix_object(reader& r, skimmed_object& out) {
  out.clear();
  if (r.peek() != 0) return skim_text_matrix(r, out);
  // Binary: "\0B", a token, then a 16-byte header (CM) or 17 (CM2, CM3).
  if (!r.ensure(7)) return false;
  const char* h = r.window().data();
  if (h[1] != 'B' || h[2] != 'C' || h[3] != 'M') return false;
  const char kind = h[4];  // ' ', '2' or '3' (a copy: ensure() below may replace the window)
  const std::size_t header = kind == ' ' ? 21 : 22;
  if ((kind != ' ' && ((kind != '2' && kind != '3') || h[5] != ' ')) || !r.ensure(header)) return false;
  h = r.window().data();
  std::int32_t rows = load<std::endian::little, std::int32_t>(h + header - 8);
  std::int32_t cols = load<std::endian::little, std::int32_t>(h + header - 4);
  if (rows <= 0 || cols <= 0) return false;
  auto values = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  std::size_t size = kind == ' '   ? 8 * static_cast<std::size_t>(cols) + values
                     : kind == '2' ? 2 * values
                                   : values;
  std::size_t total = header + size;
  if (total > r.limits().max_record_bytes) return false;  // decoding says what is wrong
  if (auto left = r.remaining(); left ? *left < total : !r.ensure(total)) return false;
  out.take(r, total, "matrix bytes");
  return true;
}

}  // namespace kaldi_io

TABLIO_END_NAMESPACE
