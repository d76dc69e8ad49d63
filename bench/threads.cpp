// Tables with threads (threads=N) against one thread and against the limit each is bound by,
// in one run: compressing features as copy-feats --compress does (1000 float matrices of
// 500x80, 160 MB, the shape of Kaldi's reference figures in the specs, CompressionMethod 2);
// reading a compressed-matrix archive, a text archive, and a gzip TFRecord file of Examples.
// The limits: read() of the file's bytes, and for the gzip file zlib's inflate of it alone,
// which no number of threads can split (a gzip stream inflates in order). For the compressed
// matrices, also their decompression alone, from memory, split between one and two threads
// with no table and no order: what two cores can give for that work on this machine.
#include "ratio_reporter.hpp"
#include "scratch_folder.hpp"

#include <tablio/tablio.hpp>

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>
#include <random>
#include <thread>

namespace {

using matrix_holder = tablio::holder<tablio::matrix<float>>;

std::string path(const char* name) { return bench::scratch_folder() + "/" + name; }

std::string key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08d", i);
  return buf;
}

tablio::open_options threads(unsigned n) {
  tablio::open_options o;
  o.threads = n;
  return o;
}

// The tables, written once: features (160 MB), the same compressed (method 1), 100 of them as
// text, and 20,000 Examples (256 floats, a label, an id) in a gzip TFRecord file.
void prepare() {
  static bool done = false;
  if (done) return;
  done = true;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0, 4);
  {
    tablio::table_writer<matrix_holder> feats("ark:" + path("feats.ark"));
    tablio::table_writer<matrix_holder> text("ark,t:" + path("text.ark"));
    tablio::table_writer<tablio::holder<tablio::compressed_matrix>> cm("ark:" + path("cm.ark"));
    for (int i = 0; i < 1000; ++i) {
      tablio::matrix<float> m(500, 80);
      for (std::size_t k = 0; k < m.size(); ++k) m.data()[k] = normal(rng) + static_cast<float>(k % 80) / 8;
      feats.write(key(i), m);
      cm.write(key(i), tablio::compressed_matrix(m.data(), m.num_rows(), m.num_cols()));
      if (i < 100) text.write(key(i), m);
    }
  }
  tablio::table_writer<tablio::example_holder> examples("tfrecord,gzip:" + path("examples.tfrecord.gz"));
  for (int i = 0; i < 20000; ++i) {
    tablio::example e;
    std::vector<float> values(256);
    for (float& v : values) v = normal(rng);
    e.set("feats", values);
    e.set("label", std::vector<std::int64_t>{i % 1000});
    e.set("id", std::vector<std::string>{key(i)});
    examples.write(key(i), e);
  }
}

std::size_t read_file_bytes(const std::string& name, std::vector<char>& buf) {
  int fd = ::open(name.c_str(), O_RDONLY);
  std::size_t total = 0;
  for (ssize_t n; (n = ::read(fd, buf.data(), buf.size())) > 0;) total += static_cast<std::size_t>(n);
  ::close(fd);
  return total;
}

void limit_read(benchmark::State& state, const char* file) {
  prepare();
  std::vector<char> buf(1 << 20);
  for (auto _ : state) benchmark::DoNotOptimize(read_file_bytes(path(file), buf));
}

void limit_inflate(benchmark::State& state, const char* file) {
  prepare();
  std::vector<char> buf(1 << 20);
  for (auto _ : state) {
    gzFile in = gzopen(path(file).c_str(), "rb");
    gzbuffer(in, 1 << 18);
    std::size_t total = 0;
    for (int n; (n = gzread(in, buf.data(), static_cast<unsigned>(buf.size()))) > 0;)
      total += static_cast<std::size_t>(n);
    gzclose(in);
    benchmark::DoNotOptimize(total);
  }
}

// The archive's compressed matrices decompressed from memory by `n` threads, each taking every
// n-th into a matrix of its own, as a table's threads decode into their jobs' holders.
void limit_decompress(benchmark::State& state, unsigned n) {
  prepare();
  std::vector<tablio::compressed_matrix> all;
  for (auto& [k, m] :
       tablio::sequential_table_reader<tablio::holder<tablio::compressed_matrix>>("ark:" + path("cm.ark")))
    all.push_back(m);
  auto decompress_share = [&](unsigned first) {
    std::vector<float> out;
    for (std::size_t i = first; i < all.size(); i += n) {
      out.resize(std::size_t(all[i].num_rows()) * std::size_t(all[i].num_cols()));
      all[i].decompress(out.data());
      benchmark::DoNotOptimize(out.data());
    }
  };
  for (auto _ : state) {
    std::vector<std::thread> others;
    for (unsigned t = 1; t < n; ++t) others.emplace_back(decompress_share, t);
    decompress_share(0);
    for (std::thread& t : others) t.join();
  }
}

template <class H>
void read_table(benchmark::State& state, std::string rspec, unsigned n) {
  prepare();
  for (auto _ : state) {
    std::size_t count = 0;
    for (auto& [k, v] : tablio::sequential_table_reader<H>(rspec, threads(n))) {
      benchmark::DoNotOptimize(v);
      ++count;
    }
    benchmark::DoNotOptimize(count);
  }
}
void read_matrices(benchmark::State& state, std::string rspec, unsigned n) {
  read_table<matrix_holder>(state, std::move(rspec), n);
}
void read_examples(benchmark::State& state, std::string rspec, unsigned n) {
  read_table<tablio::example_holder>(state, std::move(rspec), n);
}

// What `tablio copy --compress --compression-method=2 --threads=N` does.
void copy_compress(benchmark::State& state, unsigned n) {
  prepare();
  for (auto _ : state) {
    tablio::sequential_table_reader<matrix_holder> in("ark:" + path("feats.ark"), threads(n));
    tablio::table_writer<tablio::holder<tablio::matrix_to_compress>> out("ark:" + path("out.ark"),
                                                                         threads(n));
    for (auto& [k, m] : in)
      out.write(k, tablio::matrix_to_compress{std::move(m), tablio::compression_method::speech_feature});
    out.close();
  }
}

}  // namespace

#define TABLIO_BENCH(fn, name, ...) \
  BENCHMARK_CAPTURE(fn, x, __VA_ARGS__)->Name(name)->Apply(bench::fastest_of_repetitions)->UseRealTime()

TABLIO_BENCH(copy_compress, "copy_compress/one_thread", 1);
TABLIO_BENCH(copy_compress, "copy_compress/two_threads", 2);
TABLIO_BENCH(limit_read, "read_compressed/limit_read", "cm.ark");
TABLIO_BENCH(limit_decompress, "read_compressed/limit_decompress_one_thread", 1);
TABLIO_BENCH(limit_decompress, "read_compressed/limit_decompress_two_threads", 2);
TABLIO_BENCH(read_matrices, "read_compressed/one_thread", "ark:" + path("cm.ark"), 1);
TABLIO_BENCH(read_matrices, "read_compressed/two_threads", "ark:" + path("cm.ark"), 2);
TABLIO_BENCH(limit_read, "read_text/limit_read", "text.ark");
TABLIO_BENCH(read_matrices, "read_text/one_thread", "ark:" + path("text.ark"), 1);
TABLIO_BENCH(read_matrices, "read_text/two_threads", "ark:" + path("text.ark"), 2);
TABLIO_BENCH(limit_inflate, "read_gzip_tfrecord/limit_inflate", "examples.tfrecord.gz");
TABLIO_BENCH(read_examples, "read_gzip_tfrecord/one_thread", "tfrecord:" + path("examples.tfrecord.gz"), 1);
TABLIO_BENCH(read_examples, "read_gzip_tfrecord/two_threads", "tfrecord:" + path("examples.tfrecord.gz"), 2);

int main(int argc, char** argv) { return bench::run(argc, argv, "one_thread"); }
