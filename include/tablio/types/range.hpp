// Kaldi's object ranges from script files: "feats.ark:42[0:9]" keeps rows 0..9 of a matrix,
// "[0:9,2:5]" rows and columns, "[:,2:5]" columns only; "vec.ark:7[3:10]" elements of a vector.
// Bounds are inclusive and 0-based. Rows (and vector elements) may end as far as index size + 2
// and are clipped, because segment boundaries are rounded; columns must be within the matrix
// (c2 < columns), as in Kaldi.
#pragma once

#include <tablio/core/error.hpp>
#include <tablio/core/minmax.hpp>

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// A value split by split_range_specifier: the name before '[' and the range inside the
// brackets, both views of the value.
struct ranged_name {
  std::string_view rxfilename, range;
};
// Splits "name[range]" as Kaldi's ExtractRangeSpecifier does: splitting on '[' (empty pieces
// dropped) must give exactly two pieces, the second ending in ']' after a range. Nothing for
// a value not ending in ']' or a malformed range such as "a[", "a[]" or "a[1][2]".
inline std::optional<ranged_name> split_range_specifier(std::string_view value) {
  if (value.empty() || value.back() != ']') return std::nullopt;
  std::vector<std::string_view> pieces;
  for (std::size_t start = 0; start <= value.size();) {
    std::size_t bracket = value.find('[', start);
    std::size_t end = bracket == std::string_view::npos ? value.size() : bracket;
    if (end > start) pieces.push_back(value.substr(start, end - start));
    if (bracket == std::string_view::npos) break;
    start = bracket + 1;
  }
  if (pieces.size() != 2 || pieces[1].size() < 2) return std::nullopt;
  return ranged_name{pieces[0], pieces[1].substr(0, pieces[1].size() - 1)};
}

// An inclusive index range [first, last] after checking, with last clipped to the size.
struct index_range {
  std::int32_t first = 0;
  std::int32_t last = -1;
  // The indexes selected: last - first + 1.
  std::int32_t size() const noexcept { return last - first + 1; }
};

namespace detail {

// Parses "a:b" (both numbers, each after optional whitespace) or ":" (everything) as Kaldi's
// SplitStringToIntegers does: "[ 1:2]" and "[1: 2]" are ranges, "[1 :2]" is not; b must
// be below size + tolerance (Kaldi's length_tolerance: 3 for rows and vectors, 0 for columns).
inline bool parse_range_part(std::string_view part, std::int32_t size, std::int32_t tolerance,
                             index_range& out) {
  std::int32_t a = 0, b = size - 1;
  if (part != ":") {
    std::size_t colon = part.find(':');
    if (colon == std::string_view::npos || part.find(':', colon + 1) != std::string_view::npos) return false;
    auto parse = [](std::string_view s, std::int32_t& v) {  // as strtoll: leading space, a sign
      s.remove_prefix(detail::min_of(s.find_first_not_of(" \t\n\v\f\r"), s.size()));
      if (s.empty()) return false;
      if (s.front() == '+') s.remove_prefix(1);
      auto r = std::from_chars(s.data(), s.data() + s.size(), v);
      return r.ec == std::errc{} && r.ptr == s.data() + s.size();
    };
    if (!parse(part.substr(0, colon), a) || !parse(part.substr(colon + 1), b)) return false;
  }
  if (!(a >= 0 && a <= b && static_cast<std::int64_t>(b) < static_cast<std::int64_t>(size) + tolerance))
    return false;
  out.first = a;
  out.last = b < size ? b : size - 1;
  return out.last >= out.first;  // a range starting past the end selects nothing: invalid
}

}  // namespace detail

// The rows and columns a matrix range selects; throws format_error (Kaldi's message) if bad.
inline std::pair<index_range, index_range> parse_matrix_range(std::string_view range, std::int32_t rows,
                                                              std::int32_t cols) {
  std::size_t comma = range.find(',');
  std::string_view row_part = range.substr(0, comma);
  std::string_view col_part =
      comma == std::string_view::npos ? std::string_view(":") : range.substr(comma + 1);
  bool shape_ok = !row_part.empty() && !col_part.empty() &&
                  (comma == std::string_view::npos || range.find(',', comma + 1) == std::string_view::npos);
  if (!shape_ok)
    throw format_error(
        {}, "a range 'r1:r2', 'r1:r2,c1:c2' or ':,c1:c2'",
        quoted_excerpt(range) + " (Invalid range specifier for matrix: " + excerpt(range) + ")");
  index_range r, c;
  if (!detail::parse_range_part(row_part, rows, 3, r) || !detail::parse_range_part(col_part, cols, 0, c))
    throw format_error(
        {}, "a range within the matrix",
        quoted_excerpt(range) + " for a matrix of size " + std::to_string(rows) + "x" + std::to_string(cols));
  return {r, c};
}

// The elements a vector range "a:b" selects; throws format_error (Kaldi's message) if bad.
inline index_range parse_vector_range(std::string_view range, std::int32_t dim) {
  index_range r;
  if (range.empty() || range.find(',') != std::string_view::npos)
    throw format_error({}, "a range 'a:b'", quoted_excerpt(range) + " (Invalid range specifier for vector)");
  if (!detail::parse_range_part(range, dim, 3, r))
    throw format_error({}, "a range within the vector",
                       quoted_excerpt(range) + " for a vector of size " + std::to_string(dim));
  return r;
}

// Keeps the selected part of row-major rows x cols data, in place.
template <class T>
void keep_submatrix(std::vector<T>& data, std::int32_t& rows, std::int32_t& cols, index_range r,
                    index_range c) {
  std::vector<T> out;
  out.reserve(static_cast<std::size_t>(r.size()) * static_cast<std::size_t>(c.size()));
  for (std::int32_t i = r.first; i <= r.last; ++i) {
    const T* row = data.data() + static_cast<std::size_t>(i) * static_cast<std::size_t>(cols);
    out.insert(out.end(), row + c.first, row + c.last + 1);
  }
  data = std::move(out);
  rows = r.size();
  cols = c.size();
}

TABLIO_END_NAMESPACE
