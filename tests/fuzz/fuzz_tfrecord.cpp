// TFRecord framing, plain and compressed (the input as it is, or GZIP/ZLIB-compressed here so
// that the framing inside a compressed stream is fuzzed too), from memory and from trickling
// streams: every record read lies within the data, and a bad file ends in a tablio::error.
#include <tablio/framing/tfrecord.hpp>
#include <tablio/stream/memory.hpp>
#include <tablio/stream/zlib.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tablio;
  if (size < 1) return 0;
  std::string_view bytes = fuzz::as_chars(data + 1, size - 1);
  std::string packed;
  if (data[0] & 1) {
    writer w(zlib_sink(memory_writer(packed), data[0] & 2 ? compression::gzip : compression::zlib), "pack");
    w.write(bytes);
    w.close();
  }
  std::string_view file = data[0] & 1 ? std::string_view(packed) : bytes;
  for (bool strict : {false, true}) {
    fuzz::accepts([&] {
      reader in = fuzz::input(file, static_cast<std::uint8_t>((data[0] >> 2) % 8));
      bool inflated = tfrecord_compression(in) != compression::none;
      if (inflated) in = maybe_decompress(std::move(in));
      tfrecord_reader r(std::move(in), {.skip_corrupted = !strict, .strict_end = strict});
      std::string_view record;
      std::uint64_t total = 0;
      while (r.next(record)) total += record.size() + 16;
      // Records are never longer than the data (what was packed here, or the plain input).
      if (data[0] & 1) fuzz::require(total <= bytes.size());
      if (!inflated) fuzz::require(total <= file.size());
    });
  }
  return 0;
}
