// Script lines and their ranges: a line parses or is refused; a range accepted for a matrix
// or vector of the given size selects exactly the rows and columns it names, within bounds.
#include <tablio/framing/scp.hpp>
#include <tablio/types/range.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tablio;
  if (size < 2) return 0;
  const std::int32_t rows = data[0] % 50, cols = data[1] % 50;
  std::string_view text = fuzz::as_chars(data + 2, size - 2);
  auto entry = parse_script_line(text);
  std::string_view range = entry && !entry->range.empty() ? std::string_view(entry->range) : text;
  fuzz::accepts([&] {
    auto [r, c] = parse_matrix_range(range, rows, cols);
    fuzz::require(0 <= r.first && r.first <= r.last && r.last < rows);
    fuzz::require(0 <= c.first && c.first <= c.last && c.last < cols);
    std::vector<int> m(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols));
    for (std::size_t i = 0; i < m.size(); ++i) m[i] = static_cast<int>(i);
    std::int32_t kept_rows = rows, kept_cols = cols;
    keep_submatrix(m, kept_rows, kept_cols, r, c);
    fuzz::require(kept_rows == r.size() && kept_cols == c.size());
    fuzz::require(m.size() == static_cast<std::size_t>(kept_rows) * static_cast<std::size_t>(kept_cols));
    fuzz::require(m.front() == r.first * cols + c.first && m.back() == r.last * cols + c.last);
  });
  fuzz::accepts([&] {
    index_range r = parse_vector_range(range, rows);
    fuzz::require(0 <= r.first && r.first <= r.last && r.last < rows);
  });
  return 0;
}
