// Tar archives, from memory and from trickling streams: bad input is a tablio::error; the
// entries of an archive that reads are no larger than it, and written again to an archive
// they read back the same.
#include <tablio/framing/tar.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tablio;
  if (size < 1) return 0;
  std::string_view bytes = fuzz::as_chars(data + 1, size - 1);
  const tar_input_options bin{.extension = "bin"};
  std::vector<std::pair<std::string, std::string>> entries;
  bool read = fuzz::accepts([&] {
    tar_input in(fuzz::input(bytes, data[0] % 8), bin);
    for (entry e; in.next(e);) {
      fuzz::require(e.bytes.size() <= bytes.size() && kaldi_io::is_token(e.key));
      entries.emplace_back(e.key, std::string(e.bytes));
    }
    in.close();
  });
  if (!read || entries.empty()) return 0;
  std::string out;
  // Keys a member cannot carry back (an absolute or parent path) end the round trip.
  bool written = fuzz::accepts([&] {
    tar_output w(memory_writer(out), {.extension = "bin"});
    for (const auto& [key, value] : entries) w.put(key, value);
    w.close();
  });
  if (!written) return 0;
  fuzz::require(out.size() % 10240 == 0);
  tar_input again(memory_reader(out, "again"), bin);
  entry e;
  for (const auto& [key, value] : entries) fuzz::require(again.next(e) && e.key == key && e.bytes == value);
  fuzz::require(!again.next(e));
  return 0;
}
