// Kaldi archives of every kind of holder read with threads and with one: the same keys, values
// and errors, with 'p' and without, through windows of any size (so that objects and their
// headers straddle the reader's windows anywhere). Input: a holder choice, a window size, the
// options, then the archive's bytes (written to a file: tables with threads read named files).
#include <tablio/tablio.hpp>

#include "fuzz_holders.hpp"
#include "fuzz_support.hpp"

#include <unistd.h>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

// Every entry as text to compare: its key and its value as the holder writes it; then how the
// reading ended.
template <class H>
std::vector<std::string> entries(const std::string& rspec, unsigned threads) {
  std::vector<std::string> out;
  tablio::open_options options;
  options.threads = threads;
  try {
    tablio::sequential_table_reader<H> table(rspec, options);
    for (auto& [key, value] : table) out.push_back(key + " " + fuzz::written<H>(value, true));
    out.push_back("error(): " + table.error());
  } catch (const tablio::error& e) {
    out.push_back(std::string("thrown: ") + e.what());
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tablio;
  if (size < 3) return 0;
  static const std::string path = "/tmp/tablio-fuzz-threads-" + std::to_string(getpid()) + ".ark";
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data + 3), static_cast<std::streamsize>(size - 3));
  const std::size_t was = detail::default_read_buffer;
  detail::default_read_buffer = 1 + data[1] % 64 + (data[1] >= 192 ? 4096 : 0);
  const std::string rspec = std::string(data[2] & 1 ? "ark,p:" : "ark:") + path;
  const unsigned threads = 2 + (data[2] >> 1) % 3;
  fuzz::with_holder(data[0], [&]<class H>() {
    auto one = entries<H>(rspec, 1);
    detail::forced_thread_use = detail::thread_use::always;
    auto many = entries<H>(rspec, threads);
    detail::forced_thread_use = detail::thread_use::measured;
    fuzz::require(one == many);
  });
  detail::default_read_buffer = was;
  return 0;
}
