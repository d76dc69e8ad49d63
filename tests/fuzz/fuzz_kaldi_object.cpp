// One Kaldi object of any holder, binary or text, from memory or from a trickling stream:
// bad input is a tablio::error; what is read writes binary bytes that read back to the same
// bytes, and its text form reads back (unless it holds NaN or infinities, or is a compressed
// matrix that cannot be compressed again: see has_non_finite and recompressible).
#include "fuzz_holders.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  std::string_view bytes = fuzz::as_chars(data + 2, size - 2);
  fuzz::with_holder(data[0], [&]<class H>() {
    H h;
    if (!fuzz::accepts([&] {
          tablio::reader in = fuzz::input(bytes, data[1] % 8);
          h.read(in);
        }))
      return;
    // Kaldi reads values its writers refuse (a token with a control byte): a usage_error.
    std::string binary;
    if (!fuzz::accepts([&] { binary = fuzz::written<H>(h.value(), true); })) return;
    H again;
    tablio::reader in = tablio::memory_reader(binary, "binary");
    again.read(in);
    fuzz::require(fuzz::written<H>(again.value(), true) == binary);
    std::string text;
    if (!fuzz::accepts([&] { text = fuzz::written<H>(h.value(), false); })) return;  // no text form
    H from_text;
    tablio::reader text_in = tablio::memory_reader(text, "text");
    bool read_back = fuzz::accepts([&] { from_text.read(text_in); });
    fuzz::require(read_back || fuzz::has_non_finite(h.value()) || !fuzz::recompressible(h.value()));
  });
  return 0;
}
