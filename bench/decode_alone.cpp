// The decoding of an archive's matrices alone, from memory, by one thread and by two: what two
// threads can save of a table's time, and nothing else can (bench/threads_bench.py's floor).
//   decode_alone ARCHIVE     prints the fastest of 5 passes with one thread, then with two, in
//                            seconds
// The objects (compressed or text matrices) are read undecoded first, as a table's threads get
// them; each thread then decodes every other one into float matrices of its own.
#include <tablio/tablio.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace {

using matrix_holder = tablio::holder<tablio::matrix<float>>;

std::vector<std::string> objects_of(const std::string& path) {
  std::vector<std::string> objects;
  tablio::archive_reader archive(path);
  std::string key;
  while (archive.next_key(key)) {
    tablio::skimmed_object object;
    if (!tablio::kaldi_io::skim_matrix_object(archive.in(), object)) {
      std::fprintf(stderr, "decode_alone: '%s' holds an object no thread decodes alone\n", key.c_str());
      std::exit(1);
    }
    objects.emplace_back(object.bytes);
  }
  return objects;
}

double decode(const std::vector<std::string>& objects, unsigned threads) {
  auto share = [&](unsigned first) {
    matrix_holder h;
    for (std::size_t i = first; i < objects.size(); i += threads) {
      tablio::reader in = tablio::memory_reader(objects[i], "object");
      h.read(in);
    }
  };
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> others;
  for (unsigned t = 1; t < threads; ++t) others.emplace_back(share, t);
  share(0);
  for (std::thread& t : others) t.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fputs("usage: decode_alone ARCHIVE\n", stderr);
    return 2;
  }
  try {
    std::vector<std::string> objects = objects_of(argv[1]);
    double one = 1e30, two = 1e30;
    for (int pass = 0; pass < 5; ++pass) {
      one = std::min(one, decode(objects, 1));
      two = std::min(two, decode(objects, 2));
    }
    std::printf("%.6f %.6f\n", one, two);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "decode_alone: %s\n", e.what());
    return 1;
  }
}
