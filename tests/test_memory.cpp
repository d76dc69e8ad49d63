// Random access to a 200 MB archive that is a seekable file holds keys and offsets, not
// values: memory stays bounded whether the keys come shuffled (unsorted archive) or in order
// (s,cs). Kaldi keeps every value it reads ahead: 167 MB for a 160 MB archive.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "test_support.hpp"

using namespace tablio;
namespace fs = std::filesystem;

namespace {

// GCC says __SANITIZE_ADDRESS__, Clang __has_feature(address_sanitizer).
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TABLIO_TEST_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(TABLIO_TEST_UNDER_ASAN)
constexpr bool measuring = false;  // the sanitizer's shadow memory and quarantine dwarf the table's
#else
constexpr bool measuring = true;
#endif

std::string key(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "utt%05d", i);
  return buf;
}

// Runs f in a child process; returns the child's peak resident memory in MiB, or -1 if it failed.
template <class F>
double child_peak_mib(F f) {
  pid_t pid = ::fork();
  if (pid == 0) {
    int rc = 0;
    try {
      rc = f() ? 0 : 1;
    } catch (...) {
      rc = 2;
    }
    ::_exit(rc);
  }
  int status = 0;
  struct rusage usage {};
  ::wait4(pid, &status, 0, &usage);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return usage.ru_maxrss / 1024.0;
}

}  // namespace

TEST_CASE("random access to a 200 MB archive keeps memory bounded", "[fork][table][memory]") {
  const fs::path dir = fs::temp_directory_path() / ("tablio-memory-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string ark = (dir / "big.ark").string();
  constexpr int count = 1300;  // 1300 x 500 x 80 floats: 208 MB
  {
    table_writer<holder<matrix<float>>> out("ark:" + ark);
    matrix<float> m(500, 80);
    for (int i = 0; i < count; ++i) {
      m(0, 0) = static_cast<float>(i);
      out.write(key(i), m);
    }
    out.close();
  }
  REQUIRE(fs::file_size(ark) > 200'000'000u);
  std::vector<std::string> keys;
  for (int i = 0; i < count; ++i) keys.push_back(key(i));
  std::vector<std::string> shuffled = keys;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(1));

  auto look_up_all = [&](const std::string& rspec, const std::vector<std::string>& order) {
    return child_peak_mib([&] {
      random_access_table_reader<holder<matrix<float>>> r(rspec);
      for (const auto& k : order)
        if (r.at(k)(0, 0) != static_cast<float>(std::stoi(k.substr(3)))) return false;
      return true;
    });
  };
  double baseline = child_peak_mib([] { return true; });
  double unsorted = look_up_all("ark:" + ark, shuffled);
  double sorted = look_up_all("s,cs,ark:" + ark, keys);
  REQUIRE(unsorted > 0);  // every value was found and right
  REQUIRE(sorted > 0);
  if (measuring) {
    CHECK(unsorted - baseline < 30);
    CHECK(sorted - baseline < 30);
  }
  WARN("peak RSS over the test process: unsorted " << unsorted - baseline << " MiB, s,cs "
                                                   << sorted - baseline << " MiB");
  fs::remove_all(dir);
}

#if defined(TABLIO_WITH_ZLIB)
TEST_CASE("a record read from a stream of unknown size takes what it holds, not twice",
          "[fork][table][memory]") {
  test::temp_dir dir;
  const std::string file = dir / "one.tfrecord.gz";
  // One record of 64 MiB, inflated as it is read: with its CRC, 4 bytes past a power of two,
  // where a buffer that doubles would take 128 MiB for the last 4 bytes.
  constexpr std::size_t size = std::size_t{64} << 20;
  {
    table_writer<bytes_holder> out("tfrecord,gzip:" + file);
    out.write("00000000", std::string(size, 'x'));
    out.close();
  }
  double baseline = child_peak_mib([] { return true; });
  double peak = child_peak_mib([&] {
    tfrecord_reader records(open_tfrecord_input(file));
    std::string_view record;
    return records.next(record) && record.size() == size;
  });
  REQUIRE(peak > 0);
  if (measuring) CHECK(peak - baseline < 96);
  WARN("peak RSS over the test process for a 64 MiB record: " << peak - baseline << " MiB");
}
#endif
