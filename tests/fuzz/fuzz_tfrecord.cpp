// TFRecord framing, plain and compressed: every record read is within the input, and a bad
// file ends in a tablio::error.
#include <tablio/framing/tfrecord.hpp>
#include <tablio/stream/memory.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tablio;
  std::string_view bytes = fuzz::as_chars(data, size);
  for (bool strict : {false, true}) {
    fuzz::accepts([&] {
      reader in = memory_reader(bytes, "fuzz");
      bool compressed = tfrecord_compression(in) != compression::none;
      if (compressed) in = maybe_decompress(std::move(in));
      tfrecord_reader r(std::move(in), {.skip_corrupted = !strict, .strict_end = strict});
      std::string_view record;
      std::uint64_t total = 0;
      while (r.next(record)) total += record.size() + 16;
      if (!compressed) fuzz::require(total <= size);  // records are never longer than the input
    });
  }
  return 0;
}
