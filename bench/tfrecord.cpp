// TFRecord and tf.Example speed, each group against its limit or peer ("peer_*"):
//
//   records_100B, records_1MiB   iterating records with both CRCs checked, against read() of
//                                the same file plus the hardware CRC32C of its bytes
//   gzip_read                    a GZIP TFRecord file read record by record, against zlib's own
//                                inflate of the same file into a scratch buffer
//   parse_*, serialize_*         tf.Example against libprotobuf's generated C++ code, on the
//                                TensorFlow tutorial records and on MNIST-like Examples (784
//                                floats and an int64 label)
#include <tablio/framing/tfrecord.hpp>
#include <tablio/stream/file.hpp>
#include <tablio/stream/memory.hpp>
#include <tablio/stream/mmap.hpp>
#include <tablio/stream/zlib.hpp>
#include <tablio/types/example.hpp>
#include <tablio/types/example_view.hpp>

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <random>

#include "ratio_reporter.hpp"
#include "scratch_folder.hpp"
#include "tf_example.pb.h"

using namespace tablio;

namespace {

// A TFRecord file of `count` random records of `size` bytes (written once per run).
std::string record_file(std::size_t count, std::size_t size, compression c = compression::none) {
  std::string path = bench::scratch_folder() + "/records-" + std::to_string(count) + "x" +
                     std::to_string(size) + (c == compression::gzip ? ".gz" : "");
  if (std::filesystem::exists(path)) return path;
  std::mt19937_64 rng(count);
  std::string record(size, '\0');
  tfrecord_writer w(open_tfrecord_output(path, c));
  for (std::size_t i = 0; i < count; ++i) {
    // Compressible but not trivial: text-like bytes.
    for (std::size_t j = 0; j < size; j += 8) {
      std::uint64_t r = rng();
      for (std::size_t k = 0; k < 8 && j + k < size; ++k)
        record[j + k] = static_cast<char>('a' + (r >> (8 * k)) % 16);
    }
    w.write(record);
  }
  w.close();
  return path;
}

// ----- record iteration
void read_crc_limit(benchmark::State& state, std::size_t count, std::size_t size) {
  std::string path = record_file(count, size);
  std::vector<char> buffer(1 << 20);
  for (auto _ : state) {
    int fd = ::open(path.c_str(), O_RDONLY);
    std::uint32_t crc = 0;
    for (ssize_t n; (n = ::read(fd, buffer.data(), buffer.size())) > 0;)
      crc ^= crc32c(buffer.data(), static_cast<std::size_t>(n));
    ::close(fd);
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * std::filesystem::file_size(path)));
}

template <class Open>
void read_records(benchmark::State& state, std::size_t count, std::size_t size, Open open) {
  std::string path = record_file(count, size);
  for (auto _ : state) {
    tfrecord_reader r(open(path));
    std::string_view record;
    std::size_t n = 0, bytes = 0;
    while (r.next(record)) {
      ++n;
      bytes += record.size();
    }
    if (n != count) state.SkipWithError("wrong record count");
    benchmark::DoNotOptimize(bytes);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * std::filesystem::file_size(path)));
  state.counters["records/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * count), benchmark::Counter::kIsRate);
}

reader open_file(const std::string& path) { return reader(file_source(path), path); }
reader open_mapped(const std::string& path) { return reader(mmap_source(path), path); }

// ----- GZIP
void inflate_limit(benchmark::State& state) {
  std::string path = record_file(100000, 100, compression::gzip);
  std::string compressed(std::filesystem::file_size(path), '\0');
  std::vector<char> out(1 << 18);
  for (auto _ : state) {
    int fd = ::open(path.c_str(), O_RDONLY);
    if (::read(fd, compressed.data(), compressed.size()) != static_cast<ssize_t>(compressed.size()))
      std::abort();
    ::close(fd);
    z_stream z{};
    inflateInit2(&z, 15 + 32);
    z.next_in = reinterpret_cast<Bytef*>(compressed.data());
    z.avail_in = static_cast<uInt>(compressed.size());
    int rc = Z_OK;
    while (rc == Z_OK) {
      z.next_out = reinterpret_cast<Bytef*>(out.data());
      z.avail_out = static_cast<uInt>(out.size());
      rc = inflate(&z, Z_NO_FLUSH);
    }
    inflateEnd(&z);
    if (rc != Z_STREAM_END) state.SkipWithError("inflate failed");
  }
}

void gzip_records(benchmark::State& state) {
  std::string path = record_file(100000, 100, compression::gzip);
  for (auto _ : state) {
    tfrecord_reader r(open_tfrecord_input(path));
    std::string_view record;
    std::size_t n = 0;
    while (r.next(record)) ++n;
    if (n != 100000) state.SkipWithError("wrong record count");
  }
}

// ----- tf.Example
std::vector<std::string> tutorial_records() {
  // The TensorFlow tutorial's Examples: four features of one value each.
  static const char* animals[] = {"cat", "dog", "chicken", "horse", "goat"};
  std::mt19937 rng(1);
  std::vector<std::string> out;
  for (int i = 0; i < 1000; ++i) {
    example ex;
    ex.set("feature0", std::vector<std::int64_t>{static_cast<std::int64_t>(rng() % 2)});
    ex.set("feature1", std::vector<std::int64_t>{static_cast<std::int64_t>(rng() % 5)});
    ex.set("feature2", std::vector<std::string>{animals[rng() % 5]});
    ex.set("feature3", std::vector<float>{static_cast<float>(rng() % 1000) / 333.0f});
    out.push_back(encode_example(ex));
  }
  return out;
}

std::vector<std::string> mnist_records() {
  std::mt19937 rng(2);
  std::vector<std::string> out;
  for (int i = 0; i < 1000; ++i) {
    example ex;
    std::vector<float> pixels(784);
    for (auto& p : pixels) p = static_cast<float>(rng() % 256) / 255.0f;
    ex.set("image", std::move(pixels));
    ex.set("label", std::vector<std::int64_t>{static_cast<std::int64_t>(rng() % 10)});
    out.push_back(encode_example(ex));
  }
  return out;
}

const std::vector<std::string>& records_of(int which) {
  static const auto tutorial = tutorial_records();
  static const auto mnist = mnist_records();
  return which == 0 ? tutorial : mnist;
}

std::int64_t total_bytes(const std::vector<std::string>& records) {
  std::int64_t n = 0;
  for (const auto& r : records) n += static_cast<std::int64_t>(r.size());
  return n;
}

void parse_libprotobuf(benchmark::State& state, int which) {
  const auto& records = records_of(which);
  crosscheck::Example m;
  for (auto _ : state)
    for (const auto& r : records) {
      if (!m.ParseFromArray(r.data(), static_cast<int>(r.size()))) state.SkipWithError("parse failed");
      benchmark::DoNotOptimize(m);
    }
  state.SetBytesProcessed(state.iterations() * total_bytes(records));
}

void parse_owned(benchmark::State& state, int which) {
  const auto& records = records_of(which);
  for (auto _ : state)
    for (const auto& r : records) {
      example ex = decode_example(r);
      benchmark::DoNotOptimize(ex);
    }
  state.SetBytesProcessed(state.iterations() * total_bytes(records));
}

void parse_view(benchmark::State& state, int which) {
  const auto& records = records_of(which);
  example_view view;
  for (auto _ : state)
    for (const auto& r : records) {
      view.parse(r);
      benchmark::DoNotOptimize(view);
    }
  state.SetBytesProcessed(state.iterations() * total_bytes(records));
}

void serialize_libprotobuf(benchmark::State& state, int which) {
  const auto& records = records_of(which);
  std::vector<crosscheck::Example> messages(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) messages[i].ParseFromString(records[i]);
  std::string out;
  for (auto _ : state)
    for (const auto& m : messages) {
      m.SerializeToString(&out);
      benchmark::DoNotOptimize(out);
    }
  state.SetBytesProcessed(state.iterations() * total_bytes(records));
}

void serialize_tablio(benchmark::State& state, int which) {
  const auto& records = records_of(which);
  std::vector<example> examples;
  for (const auto& r : records) examples.push_back(decode_example(r));
  std::string out;
  for (auto _ : state)
    for (const auto& ex : examples) {
      encode_example(ex, out);
      benchmark::DoNotOptimize(out);
    }
  state.SetBytesProcessed(state.iterations() * total_bytes(records));
}

}  // namespace

#define TABLIO_BENCH(name, fn, ...) \
  BENCHMARK_CAPTURE(fn, x, __VA_ARGS__)->Name(name)->Apply(bench::fastest_of_repetitions)

TABLIO_BENCH("records_100B/peer_read_crc", read_crc_limit, 100000, 100);
TABLIO_BENCH("records_100B/tablio_file", read_records, 100000, 100, open_file);
TABLIO_BENCH("records_100B/tablio_mmap", read_records, 100000, 100, open_mapped);
TABLIO_BENCH("records_1MiB/peer_read_crc", read_crc_limit, 1000, 1 << 20);
TABLIO_BENCH("records_1MiB/tablio_file", read_records, 1000, 1 << 20, open_file);
TABLIO_BENCH("records_1MiB/tablio_mmap", read_records, 1000, 1 << 20, open_mapped);
BENCHMARK(inflate_limit)->Name("gzip_read/peer_inflate")->Apply(bench::fastest_of_repetitions);
BENCHMARK(gzip_records)->Name("gzip_read/tablio")->Apply(bench::fastest_of_repetitions);
TABLIO_BENCH("parse_tutorial/peer_libprotobuf", parse_libprotobuf, 0);
TABLIO_BENCH("parse_tutorial/tablio_owned", parse_owned, 0);
TABLIO_BENCH("parse_tutorial/tablio_view", parse_view, 0);
TABLIO_BENCH("parse_mnist/peer_libprotobuf", parse_libprotobuf, 1);
TABLIO_BENCH("parse_mnist/tablio_owned", parse_owned, 1);
TABLIO_BENCH("parse_mnist/tablio_view", parse_view, 1);
TABLIO_BENCH("serialize_tutorial/peer_libprotobuf", serialize_libprotobuf, 0);
TABLIO_BENCH("serialize_tutorial/tablio", serialize_tablio, 0);
TABLIO_BENCH("serialize_mnist/peer_libprotobuf", serialize_libprotobuf, 1);
TABLIO_BENCH("serialize_mnist/tablio", serialize_tablio, 1);

int main(int argc, char** argv) { return bench::run(argc, argv, "peer"); }
