// Kaldi tables against the physical limit measured in the same run: 1000 float matrices of
// 500x80 (a 160 MB archive) written and read as a binary archive, read through its scp,
// compressed with method 1, 100 of them as text, and looked up in shuffled order.
// The limits are read() of the archive's bytes into a buffer and write() of them. Apart, the
// compression of 115 MB of 40-dimensional features with each method, against one pass that
// reads every float and writes every uint16: kaldiio's numpy code cannot beat it.
#include "ratio_reporter.hpp"

#include <tablio/tablio.hpp>

#include <fcntl.h>
#include <unistd.h>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <random>

namespace {

namespace fs = std::filesystem;
using matrix_holder = tablio::holder<tablio::matrix<float>>;

const fs::path& work_dir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("tablio-bench-" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}
std::string path(const char* name) { return (work_dir() / name).string(); }

// count rows x cols matrices of normal values (sd), plus each column's index times `slope`.
std::vector<tablio::matrix<float>> random_matrices(unsigned seed, int count, std::int32_t rows,
                                                   std::int32_t cols, float sd, float slope) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0, sd);
  std::vector<tablio::matrix<float>> out;
  for (int i = 0; i < count; ++i) {
    tablio::matrix<float> m(rows, cols);
    for (std::size_t k = 0; k < m.size(); ++k)
      m.data()[k] = normal(rng) + slope * static_cast<float>(k % static_cast<std::size_t>(cols));
    out.push_back(std::move(m));
  }
  return out;
}

const std::vector<tablio::matrix<float>>& matrices() {
  static const std::vector<tablio::matrix<float>> all = random_matrices(7, 1000, 500, 80, 3, 0);
  return all;
}
// 115 MB of float32 features: 720 utterances of 1000 frames of 40 dimensions.
const std::vector<tablio::matrix<float>>& features() {
  static const std::vector<tablio::matrix<float>> all = random_matrices(11, 720, 1000, 40, 4, 1);
  return all;
}

std::string key(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "utt%05d", i);
  return buf;
}

// The test archives, written once.
void prepare() {
  static bool done = [] {
    tablio::table_writer<matrix_holder> out("ark,scp:" + path("feats.ark") + "," + path("feats.scp"));
    tablio::table_writer<tablio::holder<tablio::compressed_matrix>> compressed("ark:" + path("cm1.ark"));
    tablio::table_writer<matrix_holder> text("ark,t:" + path("text.ark"));
    for (int i = 0; i < 1000; ++i) {
      out.write(key(i), matrices()[i]);
      compressed.write(key(i), tablio::compressed_matrix(matrices()[i].data(), 500, 80));
      if (i < 100) text.write(key(i), matrices()[i]);
    }
    return true;
  }();
  (void)done;
}

std::size_t read_file_bytes(const std::string& p, std::vector<char>& buf) {
  int fd = ::open(p.c_str(), O_RDONLY);
  std::size_t total = 0;
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n <= 0) break;
    total += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return total;
}

void limit_read(benchmark::State& state, const char* file) {
  prepare();
  std::vector<char> buf(1 << 20);
  std::size_t bytes = 0;
  for (auto _ : state) bytes = read_file_bytes(path(file), buf);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

void limit_write(benchmark::State& state, const char* file) {
  prepare();
  std::vector<char> all(fs::file_size(path(file)));
  int fd = ::open(path(file).c_str(), O_RDONLY);
  for (std::size_t got = 0; got < all.size();)
    got += static_cast<std::size_t>(::read(fd, all.data() + got, all.size() - got));
  ::close(fd);
  for (auto _ : state) {
    int out = ::open(path("limit.out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    // Written in the same 256 KiB pieces tablio's writer uses.
    for (std::size_t done = 0; done < all.size(); done += 1 << 18)
      (void)!::write(out, all.data() + done, std::min<std::size_t>(1 << 18, all.size() - done));
    ::close(out);
  }
}

void sequential_read(benchmark::State& state, std::string rspec) {
  prepare();
  std::size_t count = 0;
  for (auto _ : state) {
    count = 0;
    for (auto [k, v] : tablio::sequential_table_reader<matrix_holder>(rspec)) {
      benchmark::DoNotOptimize(v);
      ++count;
    }
  }
  state.counters["entries"] = static_cast<double>(count);
}

void write_binary(benchmark::State& state) {
  prepare();
  for (auto _ : state) {
    tablio::table_writer<matrix_holder> out("ark:" + path("out.ark"));
    for (int i = 0; i < 1000; ++i) out.write(key(i), matrices()[i]);
    out.close();
  }
}

void write_text(benchmark::State& state) {
  prepare();
  for (auto _ : state) {
    tablio::table_writer<matrix_holder> out("ark,t:" + path("out.txt.ark"));
    for (int i = 0; i < 100; ++i) out.write(key(i), matrices()[i]);
    out.close();
  }
}

void random_access(benchmark::State& state, const char* options) {
  prepare();
  std::vector<std::string> keys;
  for (int i = 0; i < 1000; ++i) keys.push_back(key(i));
  bool sorted_requests = std::string(options).find("cs") != std::string::npos;
  if (!sorted_requests) std::shuffle(keys.begin(), keys.end(), std::mt19937(3));
  for (auto _ : state) {
    tablio::random_access_table_reader<matrix_holder> r(std::string(options) + path("feats.ark"));
    for (const auto& k : keys) benchmark::DoNotOptimize(r.at(k).data());
  }
}

// The floor: each float to a uint16 by one multiply-add and a truncation, eight at a time, in
// one pass with the next 2 KiB prefetched (numpy's vectorised expression does no less).
void limit_float_to_uint16(benchmark::State& state) {
  using float8 = float __attribute__((vector_size(32)));
  using int32x8 = std::int32_t __attribute__((vector_size(32)));
  using uint16x8 = std::uint16_t __attribute__((vector_size(16)));
  std::vector<std::uint16_t> out;
  for (auto _ : state)
    for (const auto& m : features()) {
      const float* in = m.data();
      const std::size_t n = m.size();
      out.resize(n);
      const float scale = 65535 / 200.0f, offset = 100 * scale + 0.499f;
      std::size_t i = 0;
      for (; i + 8 <= n; i += 8) {
        __builtin_prefetch(in + std::min(i + 512, n - 1));  // as tablio does
        float8 x;
        std::memcpy(&x, in + i, sizeof x);
        uint16x8 v = __builtin_convertvector(__builtin_convertvector(x * scale + offset, int32x8), uint16x8);
        std::memcpy(out.data() + i, &v, sizeof v);
      }
      for (; i < n; ++i) out[i] = static_cast<std::uint16_t>(static_cast<int>(in[i] * scale + offset));
      benchmark::DoNotOptimize(out.data());
    }
}

void compress(benchmark::State& state, tablio::compression_method method) {
  for (auto _ : state)
    for (const auto& m : features()) {
      tablio::compressed_matrix cm(m.data(), m.num_rows(), m.num_cols(), method);
      benchmark::DoNotOptimize(cm.bytes().data());
    }
}

}  // namespace

#define TABLIO_BENCH(fn, name, ...) \
  BENCHMARK_CAPTURE(fn, x, __VA_ARGS__)->Name(name)->Apply(bench::fastest_of_repetitions)

TABLIO_BENCH(limit_read, "read/limit_read", "feats.ark");
TABLIO_BENCH(sequential_read, "read/binary_ark", "ark:" + path("feats.ark"));
TABLIO_BENCH(sequential_read, "read/ark_via_scp", "scp:" + path("feats.scp"));
TABLIO_BENCH(sequential_read, "read/compressed_method1", "ark:" + path("cm1.ark"));
TABLIO_BENCH(limit_write, "write/limit_write", "feats.ark");
BENCHMARK(write_binary)->Name("write/binary_ark")->Apply(bench::fastest_of_repetitions);
TABLIO_BENCH(limit_read, "text/limit_read", "text.ark");
TABLIO_BENCH(sequential_read, "text/read_100", "ark:" + path("text.ark"));
BENCHMARK(write_text)->Name("text/write_100")->Apply(bench::fastest_of_repetitions);
TABLIO_BENCH(limit_read, "random/limit_read", "feats.ark");
TABLIO_BENCH(random_access, "random/unsorted_ark_shuffled", "ark:");
TABLIO_BENCH(random_access, "random/s_cs_ark_in_order", "s,cs,ark:");
BENCHMARK(limit_float_to_uint16)
    ->Name("compress/limit_float_to_uint16")
    ->Apply(bench::fastest_of_repetitions);
TABLIO_BENCH(compress, "compress/method2_speech_feature", tablio::compression_method::speech_feature);
TABLIO_BENCH(compress, "compress/method3_two_byte_auto", tablio::compression_method::two_byte_auto);
TABLIO_BENCH(compress, "compress/method4_two_byte_signed_integer",
             tablio::compression_method::two_byte_signed_integer);
TABLIO_BENCH(compress, "compress/method5_one_byte_auto", tablio::compression_method::one_byte_auto);
TABLIO_BENCH(compress, "compress/method6_one_byte_unsigned_integer",
             tablio::compression_method::one_byte_unsigned_integer);
TABLIO_BENCH(compress, "compress/method7_one_byte_zero_one", tablio::compression_method::one_byte_zero_one);

int main(int argc, char** argv) {
  int rc = bench::run(argc, argv, "limit");
  std::error_code ec;
  fs::remove_all(work_dir(), ec);
  return rc;
}
