// Caffe LMDB and IDX speed, each group against its limit or peer ("peer_*"), on Fashion-MNIST's
// 60,000 training images (Debian's dataset-fashion-mnist):
//
//   lmdb_scan     every Datum in key order through tablio's own checked reader, decoded into a
//                 datum_view, against liblmdb's bare cursor scan (the limit) and against the
//                 cursor plus libprotobuf's generated Datum parser
//   lmdb_get      100,000 random lookups through tablio's reader, against bare mdb_get
//   idx_random    10^6 random images copied out of the mapped IDX file, against a bare mmap
//                 copy of the same bytes
#include <tablio/framing/idx.hpp>
#include <tablio/framing/lmdb.hpp>
#include <tablio/types/datum.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "caffe_datum.pb.h"
#include "ratio_reporter.hpp"
#include "scratch_folder.hpp"

using namespace tablio;

namespace {

const std::string images_gz = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz";
const std::string labels_gz = "/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz";

std::string key_of(std::uint64_t i) {
  char k[16];
  std::snprintf(k, sizeof k, "%08llu", static_cast<unsigned long long>(i));
  return k;
}

// The Caffe LMDB of the training set, and the raw IDX images file, made once.
const std::string& database() {
  static const std::string path = [] {
    std::string db = bench::scratch_folder() + "/train_lmdb";
    idx_file images(images_gz), labels(labels_gz);
    lmdb_writer out(db);
    datum d;
    d.channels = 1;
    d.height = d.width = 28;
    std::string bytes;
    for (std::uint64_t i = 0; i < images.size(); ++i) {
      auto pixels = images.item_bytes(i);
      d.data.assign(pixels.data(), pixels.size());
      d.label = static_cast<unsigned char>(labels.item_bytes(i)[0]);
      encode_datum(d, bytes);
      out.put(key_of(i), bytes);
    }
    out.close();
    return db;
  }();
  return path;
}

const std::string& raw_images() {
  static const std::string path = [] {
    std::string p = bench::scratch_folder() + "/train-images-idx3-ubyte";
    idx_file in(images_gz);
    idx_writer out(open_output(p), idx_type::u8, {28, 28}, static_cast<std::uint32_t>(in.size()));
    for (std::uint64_t i = 0; i < in.size(); ++i) out.write_item<std::uint8_t>(in.item<std::uint8_t>(i));
    out.close();
    return p;
  }();
  return path;
}

// A bare environment, as a program using liblmdb directly would open it.
struct bare_lmdb {
  MDB_env* env = nullptr;
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  explicit bare_lmdb(const std::string& path) {
    mdb_env_create(&env);
    if (mdb_env_open(env, path.c_str(), MDB_RDONLY | MDB_NOTLS | MDB_NOLOCK, 0664) != 0) std::abort();
    mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn);
    mdb_dbi_open(txn, nullptr, 0, &dbi);
  }
  ~bare_lmdb() {
    mdb_txn_abort(txn);
    mdb_env_close(env);
  }
};

// Every value of the database in key order, through a bare cursor.
template <class F>
void for_each_bare_value(const std::string& db, F f) {
  bare_lmdb lmdb(db);
  MDB_cursor* cursor;
  mdb_cursor_open(lmdb.txn, lmdb.dbi, &cursor);
  MDB_val k, v;
  for (int rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == 0;
       rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT))
    f(static_cast<const char*>(v.mv_data), v.mv_size);
  mdb_cursor_close(cursor);
}

void scan_bare_cursor(benchmark::State& state) {
  const std::string& db = database();
  for (auto _ : state) {
    std::size_t bytes = 0;
    // Touches each record once, at its end.
    for_each_bare_value(db, [&](const char* data, std::size_t size) {
      bytes += size + static_cast<unsigned char>(data[size - 1]);
    });
    benchmark::DoNotOptimize(bytes);
  }
}

void scan_libprotobuf(benchmark::State& state) {
  const std::string& db = database();
  crosscheck::Datum d;
  for (auto _ : state) {
    std::int64_t labels = 0;
    for_each_bare_value(db, [&](const char* data, std::size_t size) {
      if (!d.ParseFromArray(data, static_cast<int>(size))) state.SkipWithError("parse failed");
      labels += d.label() + static_cast<unsigned char>(d.data().back());
    });
    benchmark::DoNotOptimize(labels);
  }
}

void scan_tablio(benchmark::State& state) {
  const std::string& db = database();
  datum_view d;
  for (auto _ : state) {
    lmdb_reader r(db);
    std::string_view key, value;
    std::int64_t labels = 0;
    while (r.next(key, value)) {
      decode_datum(value, d, db);
      labels += d.label + static_cast<unsigned char>(d.data.back());
    }
    benchmark::DoNotOptimize(labels);
  }
}

std::vector<std::string> random_keys() {
  std::mt19937 rng(5);
  std::vector<std::string> keys;
  for (int i = 0; i < 100000; ++i) keys.push_back(key_of(rng() % 60000));
  return keys;
}

void get_bare(benchmark::State& state) {
  const std::string& db = database();
  auto keys = random_keys();
  bare_lmdb lmdb(db);
  for (auto _ : state) {
    std::size_t bytes = 0;
    for (const auto& key : keys) {
      MDB_val k{key.size(), const_cast<char*>(key.data())}, v;
      if (mdb_get(lmdb.txn, lmdb.dbi, &k, &v) == 0) bytes += v.mv_size;
    }
    benchmark::DoNotOptimize(bytes);
  }
}

void get_tablio(benchmark::State& state) {
  const std::string& db = database();
  auto keys = random_keys();
  lmdb_reader r(db);
  for (auto _ : state) {
    std::size_t bytes = 0;
    for (const auto& key : keys)
      if (auto v = r.get(key)) bytes += v->size();
    benchmark::DoNotOptimize(bytes);
  }
}

std::vector<std::uint32_t> random_items() {
  std::mt19937 rng(6);
  std::vector<std::uint32_t> items(1000000);
  for (auto& i : items) i = rng() % 60000;
  return items;
}

void idx_bare_mmap(benchmark::State& state) {
  const std::string& path = raw_images();
  auto items = random_items();
  int fd = ::open(path.c_str(), O_RDONLY);
  std::size_t size = std::filesystem::file_size(path);
  auto* base = static_cast<const unsigned char*>(::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0));
  ::close(fd);
  unsigned char image[784];
  for (auto _ : state) {
    for (auto i : items) {
      std::memcpy(image, base + 16 + std::size_t{i} * 784, 784);
      benchmark::DoNotOptimize(image);
    }
  }
  ::munmap(const_cast<unsigned char*>(base), size);
}

void idx_tablio(benchmark::State& state) {
  const std::string& path = raw_images();
  auto items = random_items();
  idx_file file(path);
  std::uint8_t image[784];
  for (auto _ : state) {
    for (auto i : items) {
      file.read_item<std::uint8_t>(i, image);
      benchmark::DoNotOptimize(image);
    }
  }
}

}  // namespace

BENCHMARK(scan_bare_cursor)->Name("lmdb_scan/peer_bare_cursor")->Apply(bench::fastest_of_repetitions);
BENCHMARK(scan_tablio)->Name("lmdb_scan/tablio_datum_view")->Apply(bench::fastest_of_repetitions);
BENCHMARK(scan_libprotobuf)->Name("lmdb_scan/cursor_and_libprotobuf")->Apply(bench::fastest_of_repetitions);
BENCHMARK(get_bare)->Name("lmdb_get/peer_mdb_get")->Apply(bench::fastest_of_repetitions);
BENCHMARK(get_tablio)->Name("lmdb_get/tablio")->Apply(bench::fastest_of_repetitions);
BENCHMARK(idx_bare_mmap)->Name("idx_random/peer_mmap_copy")->Apply(bench::fastest_of_repetitions);
BENCHMARK(idx_tablio)->Name("idx_random/tablio")->Apply(bench::fastest_of_repetitions);

int main(int argc, char** argv) {
  if (!std::filesystem::exists(images_gz)) {
    std::fprintf(stderr, "bench_caffe_idx needs Debian's dataset-fashion-mnist (%s)\n", images_gz.c_str());
    return 1;
  }
  return bench::run(argc, argv, "peer");
}
