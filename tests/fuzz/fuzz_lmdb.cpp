// LMDB data files: opening, a full scan and lookups either throw a tablio::error or read
// consistently: keys in increasing order, as many records as the meta page counts, each found
// again by key with the same value, no key found that the scan did not give, and a shard that
// wraps around gives its records again.
#include <tablio/framing/lmdb_reader.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "fuzz_support.hpp"

namespace {

// The input as a file, in memory: the reader maps a file it opens by name.
const std::string& as_file(const std::uint8_t* data, std::size_t size) {
  static const int fd = ::memfd_create("fuzz_lmdb", MFD_CLOEXEC);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0 || ::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size))
    std::abort();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tablio;
  const std::string& file = as_file(data, size);
  std::vector<std::pair<std::string_view, std::string_view>> records;
  std::optional<lmdb_reader> reader;
  bool scanned = fuzz::accepts([&] {
    reader.emplace(file, lmdb_options{.no_subdir = true});
    std::string_view key, value;
    while (reader->next(key, value)) {
      fuzz::require(records.empty() || records.back().first < key);
      fuzz::require(value.size() <= size);
      records.emplace_back(key, value);
    }
    fuzz::require(records.size() == reader->size());
  });
  if (!reader) return 0;
  const std::string_view probes[] = {"", "\xff\xff\xff\xff", "00000000", "00000500"};
  if (!scanned) {  // a damaged tree: lookups are refused or find something, never crash
    for (std::string_view key : probes) fuzz::accepts([&] { (void)reader->get(key); });
    return 0;
  }
  // A lookup meets only pages the scan checked: it finds every record the scan gave, and
  // nothing else.
  for (const auto& [key, value] : records) {
    auto found = reader->get(key);
    fuzz::require(found && found->data() == value.data() && found->size() == value.size());
  }
  for (std::string_view key : probes)
    if (auto found = reader->get(key))
      fuzz::require(
          std::any_of(records.begin(), records.end(), [&](const auto& r) { return r.first == key; }));
  // A shard wrapping around: the odd records, twice over; none when there are none.
  lmdb_reader odd(file, {.no_subdir = true}, {.wrap_around = true, .shard_index = 1, .shard_count = 2});
  const std::size_t count = records.size() / 2;
  std::string_view key, value;
  for (std::size_t i = 0; i < 2 * count; ++i)
    fuzz::require(odd.next(key, value) && key == records[2 * (i % count) + 1].first);
  fuzz::require(count != 0 || !odd.next(key, value));
  return 0;
}
