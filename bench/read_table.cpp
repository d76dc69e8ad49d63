// C++ tablio's own time for what bench/python_bench.py measures in Python, so that the two
// are compared in one run on the same files:
//   read_table TYPE RSPEC              reads every entry (values decoded), in order
//   read_table TYPE RSPEC KEYS_FILE    looks up each key listed in KEYS_FILE, one per line
// TYPE is matrix, compressed-matrix, datum or example. Prints the fastest of 5 passes, in
// seconds.
#include <tablio/tablio.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

template <class H>
double one_pass(const std::string& rspec, const std::vector<std::string>& keys) {
  auto start = std::chrono::steady_clock::now();
  std::size_t touched = 0;
  if (keys.empty()) {
    for (auto& [key, value] : tablio::sequential_table_reader<H>(rspec))
      touched += sizeof(value) + key.size();
  } else {
    tablio::random_access_table_reader<H> table(rspec);
    for (const std::string& key : keys) touched += &table.at(key) != nullptr;
  }
  if (touched == 0) std::fputs("read_table: nothing read\n", stderr);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <class H>
double fastest(const std::string& rspec, const std::vector<std::string>& keys) {
  double best = 1e30;
  for (int i = 0; i < 5; ++i) best = std::min(best, one_pass<H>(rspec, keys));
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::fputs("usage: read_table TYPE RSPEC [KEYS_FILE]\n", stderr);
    return 2;
  }
  std::string type = argv[1], rspec = argv[2];
  std::vector<std::string> keys;
  if (argc == 4) {
    std::ifstream in(argv[3]);
    for (std::string line; std::getline(in, line);) keys.push_back(line);
  }
  try {
    double seconds;
    if (type == "matrix")
      seconds = fastest<tablio::holder<tablio::matrix<float>>>(rspec, keys);
    else if (type == "compressed-matrix")
      seconds = fastest<tablio::holder<tablio::compressed_matrix>>(rspec, keys);
    else if (type == "datum")
      seconds = fastest<tablio::datum_holder>(rspec, keys);
    else if (type == "example")
      seconds = fastest<tablio::example_holder>(rspec, keys);
    else {
      std::fprintf(stderr, "read_table: unknown type '%s'\n", type.c_str());
      return 2;
    }
    std::printf("%.6f\n", seconds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "read_table: %s\n", e.what());
    return 1;
  }
}
