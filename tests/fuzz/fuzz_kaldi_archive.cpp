// Kaldi archives of every kind of holder, binary and text: bad input is a tablio::error, and
// what is read writes back to an archive that reads as the same values.
#include <tablio/framing/ark.hpp>

#include "fuzz_holders.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tablio;
  if (size < 2) return 0;
  std::string_view bytes = fuzz::as_chars(data + 2, size - 2);
  fuzz::with_holder(data[0], [&]<class H>() {
    std::vector<std::pair<std::string, typename H::value_type>> entries;
    bool ok = fuzz::accepts([&] {
      archive_reader archive(fuzz::input(bytes, data[1] % 8));
      std::string key;
      while (archive.next_key(key)) {
        H h;
        h.read(archive.in());
        entries.emplace_back(key, std::move(h.value()));
      }
    });
    if (!ok || entries.empty()) return;
    std::string out;
    // Kaldi's readers also accept tokens its writers refuse (a token with a control byte): the
    // writer's usage_error ends the round trip there.
    bool written = fuzz::accepts([&] {
      archive_writer w(memory_writer(out));
      for (const auto& [key, value] : entries) {
        w.begin_entry(key);
        H::write(w.out(), true, value);
        w.end_entry();
      }
      w.close();
    });
    if (!written) return;
    // Read back, each value writes the same bytes again (float bits included).
    archive_reader again(memory_reader(out, "again"));
    std::string key;
    for (const auto& [k, value] : entries) {
      fuzz::require(again.next_key(key) && key == k);
      H h;
      h.read(again.in());
      fuzz::require(fuzz::written<H>(value, true) == fuzz::written<H>(h.value(), true));
    }
  });
  return 0;
}
