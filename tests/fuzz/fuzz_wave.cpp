// RIFF/WAVE from memory and from streams of unknown size (headers with size 0 or 0xFFFFFFFF,
// as pipes write them): bad input is a tablio::error; what is read writes a file that reads
// back to the same samples.
#include <tablio/holder/wave.hpp>

#include "fuzz_holders.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tablio;
  if (size < 1) return 0;
  std::string_view bytes = fuzz::as_chars(data + 1, size - 1);
  wave_holder h;
  if (!fuzz::accepts([&] {
        reader in = fuzz::input(bytes, data[0] % 8);
        h.read(in);
      }))
    return 0;
  std::string file;
  if (!fuzz::accepts([&] { file = fuzz::written<wave_holder>(h.value(), true); })) return 0;
  wave_holder back;
  reader in = memory_reader(file, "back");
  back.read(in);
  fuzz::require(back.value().num_channels() == h.value().num_channels());
  fuzz::require(back.value().num_samples() == h.value().num_samples());
  fuzz::require(fuzz::written<wave_holder>(back.value(), true) == file);
  return 0;
}
