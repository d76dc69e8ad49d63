// Kaldi's compressed matrices: any floats compress with every method, or are refused (NaN,
// infinities), without undefined behaviour; the result decompresses to its shape, and its bytes read
// back to the same bytes and the same decompressed floats.
#include <tablio/types/compressed_matrix.hpp>

#include "fuzz_holders.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tablio;
  if (size < 2) return 0;
  auto method = static_cast<compression_method>(1 + data[0] % 7);
  std::size_t count = (size - 2) / sizeof(float);
  std::int32_t rows = count == 0 ? 0 : static_cast<std::int32_t>(1 + data[1] % count);
  std::int32_t cols = rows == 0 ? 0 : static_cast<std::int32_t>(count / static_cast<std::size_t>(rows));
  std::vector<float> values(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols));
  if (!values.empty()) std::memcpy(values.data(), data + 2, values.size() * sizeof(float));
  compressed_matrix cm;
  // NaN and infinities have no compressed form: refused with a usage_error.
  if (!fuzz::accepts([&] { cm = compressed_matrix(values.data(), rows, cols, method); })) return 0;
  fuzz::require(values.empty() || (cm.num_rows() == rows && cm.num_cols() == cols));
  std::vector<float> out(values.size());
  if (!cm.empty()) cm.decompress(out.data());
  using cm_holder = holder<compressed_matrix>;
  std::string bytes = fuzz::written<cm_holder>(cm, true);
  cm_holder back;
  reader in = memory_reader(bytes, "back");
  back.read(in);
  fuzz::require(fuzz::written<cm_holder>(back.value(), true) == bytes);
  std::vector<float> again(values.size());
  if (!back.value().empty()) back.value().decompress(again.data());
  fuzz::require(fuzz::same_bits(out, again));
  return 0;
}
