// IDX files, in memory and from streams, strict or recovering what a killed writer left: a
// header is accepted only when the data it announces is there, and then every item is
// readable.
#include <tablio/framing/idx.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tablio;
  std::span<const char> bytes(reinterpret_cast<const char*>(data), size);
  // From a stream: the same checks, and data read only as it arrives.
  for (bool recover : {false, true}) {
    fuzz::accepts([&] {
      idx_file f(fuzz::input(fuzz::as_chars(data, size), 7), {.recover_unfinished = recover});
      fuzz::require(f.header().size_bytes() + f.header().data_bytes() <= size);
      if (f.size() != 0) (void)f.item<float>(f.size() - 1);
    });
  }
  for (bool trailing : {false, true}) {
    fuzz::accepts([&] {
      idx_file f(bytes, "fuzz", {.allow_trailing_bytes = trailing});
      fuzz::require(f.header().size_bytes() + f.header().data_bytes() <= size);
      if (f.size() == 0) return;  // no item: its size (maybe huge) is never allocated
      std::vector<double> item(static_cast<std::size_t>(f.header().item_values()));
      for (std::uint64_t i = 0; i < f.size() && i < 64; ++i) f.read_item<double>(i, item);
    });
  }
  return 0;
}
