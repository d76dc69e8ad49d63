// What docs/reliability.md says may be shared between threads, used by many threads at once.
// scripts/run-tests.sh also runs this under ThreadSanitizer.
#include <tablio/framing/idx.hpp>
#if defined(TABLIO_WITH_LMDB)  // LMDB writers need liblmdb (not on every system)
#include <tablio/framing/lmdb.hpp>
#endif
#include <tablio/types/datum.hpp>
#include <tablio/types/example.hpp>

#include <atomic>
#include <thread>

#include "test_support.hpp"

using namespace tablio;

namespace {

constexpr int thread_count = 8;

template <class F>
void in_threads(F f) {
  test::in_threads(thread_count, f);
}

}  // namespace

TEST_CASE("one IDX file, read by many threads", "[threads][idx]") {
  const idx_file images(test::data_path("idx/fashion/t10k-images-100-idx3-ubyte"));
  const std::vector<int> all = images.values<int>();
  std::vector<int> good(thread_count, 0);
  in_threads([&](int t) {
    std::vector<int> item(784);
    for (int n = 0; n < 2000; ++n) {
      std::uint64_t i = static_cast<std::uint64_t>(n * 31 + t) % images.size();
      images.read_item<int>(i, item);
      if (std::equal(item.begin(), item.end(), all.begin() + static_cast<std::ptrdiff_t>(i * 784))) ++good[t];
    }
  });
  for (int g : good) CHECK(g == 2000);
}

TEST_CASE("first uses of the codecs' shared tables, from many threads at once", "[threads]") {
  example ex;
  ex.features["image"] = std::vector<std::string>{std::string(784, 'x')};
  ex.features["label"] = std::vector<std::int64_t>{7};
  ex.features["scores"] = std::vector<float>{0.25f, 0.5f};
  const std::string encoded = encode_example(ex);
  datum d;
  d.channels = 1;
  d.height = d.width = 28;
  d.data = std::string(784, '\3');
  d.label = 4;
  const std::string datum_bytes = encode_datum(d);
  const std::uint32_t crc = crc32c(encoded.data(), encoded.size());
  std::vector<int> good(thread_count, 0);
  in_threads([&](int t) {
    for (int n = 0; n < 200; ++n) {
      bool ok = crc32c(encoded.data(), encoded.size()) == crc &&
                encode_example(decode_example(encoded)) == encoded &&
                encode_datum(decode_datum(datum_bytes)) == datum_bytes;
      if (ok) ++good[t];
    }
  });
  for (int g : good) CHECK(g == 200);
}

TEST_CASE("tables of the same files, one per thread", "[threads][table]") {
  test::in_folder here(test::data_path("kaldi/scp"));
  std::vector<std::pair<std::string, matrix<float>>> expected;
  for (auto& [key, m] : sequential_table_reader<holder<matrix<float>>>("ark:feats.ark"))
    expected.emplace_back(key, m);
  std::vector<int> good(thread_count, 0);
  in_threads([&](int t) {
    for (int pass = 0; pass < 5; ++pass) {
      std::size_t i = 0;
      for (auto& [key, m] :
           sequential_table_reader<holder<matrix<float>>>(t % 2 ? "ark:feats.ark" : "scp:feats.scp"))
        if (i < expected.size() && key == expected[i].first && m == expected[i++].second) ++good[t];
      random_access_table_reader<holder<matrix<float>>> by_key("scp:feats.scp");
      for (const auto& [key, m] : expected)
        if (by_key.at(key) == m) ++good[t];
    }
  });
  for (int g : good) CHECK(g == static_cast<int>(10 * expected.size()));
}

#if defined(TABLIO_WITH_LMDB)
TEST_CASE("LMDB readers in many threads, each holding its snapshot while a writer commits",
          "[threads][lmdb]") {
  test::temp_dir dir;
  const std::string db = dir / "live";
  auto value_of = [](int i) { return std::string(200 + i % 50, static_cast<char>('a' + i % 26)); };
  // Opened first for writing, with room for everything: the readers hold their snapshots in its
  // environment's lock table, and the map never has to move under them.
  lmdb_writer writer(db, {.initial_map_size = 64 << 20, .batch_size = 100});
  writer.put(ordinal_key(0), value_of(0));
  writer.commit();
  std::atomic<bool> writing{true};
  std::thread write_thread([&] {
    for (int i = 1; i < 5000; ++i) writer.put(ordinal_key(static_cast<std::uint64_t>(i)), value_of(i));
    writer.close();
    writing = false;
  });
  std::vector<int> bad(thread_count, 0), snapshots(thread_count, 0);
  in_threads([&](int t) {
    do {
      owned<lmdb_reader> held =
          open_lmdb_reader(db, {}, {.shard_index = static_cast<std::uint64_t>(t % 2), .shard_count = 2});
      lmdb_reader& r = *held;
      std::string_view key, value;
      int i = t % 2;
      while (r.next(key, value)) {
        if (key != ordinal_key(static_cast<std::uint64_t>(i)) || value != value_of(i)) ++bad[t];
        i += 2;
      }
      if (auto v = r.get(ordinal_key(0)); !v || *v != value_of(0)) ++bad[t];
      ++snapshots[t];
    } while (writing);
  });
  write_thread.join();
  for (int t = 0; t < thread_count; ++t) {
    CHECK(bad[t] == 0);
    CHECK(snapshots[t] >= 1);
  }
  lmdb_reader done(db);
  CHECK(done.size() == 5000);
}

TEST_CASE("an LMDB reader opened after the writer has committed twice since its snapshot was held",
          "[threads][lmdb]") {
  // What the readers above meet when two commits come between a reader's hold and its opening:
  // both meta pages rewritten, the held snapshot's gone. The reader reads the current snapshot,
  // whose pages the hold keeps as well, however many commits follow.
  test::temp_dir dir;
  const std::string db = dir / "twice";
  lmdb_writer writer(db, {.initial_map_size = 64 << 20, .batch_size = 1});  // a map that never moves
  writer.put(ordinal_key(0), "first");
  lmdb_snapshot held = hold_lmdb_snapshot(db);
  REQUIRE(held.hold);
  for (std::uint64_t i : {1, 2}) writer.put(ordinal_key(i), "later");
  lmdb_reader reader(db, {}, {}, {}, std::move(held));
  for (std::uint64_t i = 3; i < 300; ++i) writer.put(ordinal_key(i), std::string(500, 'x'));
  std::string_view key, value;
  std::uint64_t i = 0;
  while (reader.next(key, value)) {
    CHECK(key == ordinal_key(i));
    CHECK(value == (i++ == 0 ? "first" : "later"));
  }
  CHECK(i == 3);
  CHECK(reader.size() == 3);
}

TEST_CASE("a writer does not grow the map under the open readers of its process", "[threads][lmdb]") {
  test::temp_dir dir;
  const std::string db = dir / "small";
  lmdb_writer writer(db, {.initial_map_size = 64 * 1024, .batch_size = 10});
  writer.put("a", "first");
  writer.commit();
  owned<lmdb_reader> reader = open_lmdb_reader(db);  // its snapshot held beside the writer
  auto fill = [&] {
    for (int i = 0; i < 2000; ++i)
      writer.put(ordinal_key(static_cast<std::uint64_t>(i)), std::string(1000, 'v'));
  };
  CHECK_THROWS_WITH(fill(), Catch::Contains("while 1 other transactions of this process are open") &&
                                Catch::Contains("initial_map_size"));
  CHECK(reader->get("a") == std::optional<std::string_view>("first"));  // its pages did not move
}
#endif
