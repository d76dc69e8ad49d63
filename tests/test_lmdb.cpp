// LMDB against the real thing: the database Caffe's convert_mnist_data wrote is read record
// by record and by key; a database written here with Caffe's settings is byte-identical to
// Caffe's; maps grow by themselves; LMDB's process rules are enforced; mdb_dump agrees.
#include <tablio/framing/lmdb.hpp>
#include <tablio/types/datum.hpp>

#include <sys/wait.h>
#include <zlib.h>

#include <thread>

#include "test_support.hpp"

using namespace tablio;

namespace {

// A copy of a reference database (reading with locks writes lock.mdb into its folder).
std::string copy_database(const test::temp_dir& dir, const std::string& name) {
  std::string to = dir / name;
  std::filesystem::copy(test::data_path("caffe/" + name), to);
  return to;
}

struct expected_record {
  std::string key, label, value_len, value_crc32;
};

std::vector<expected_record> expected_records(const std::string& expect) {
  std::vector<expected_record> out;
  std::istringstream in(test::read_file(test::data_path(expect)));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cols;
    std::size_t start = 0;
    for (std::size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1)
      cols.push_back(line.substr(start, tab - start));
    out.push_back({cols[0], cols[1], cols[9], cols[10]});
  }
  return out;
}

std::string crc_hex(std::string_view bytes) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08lx",
                crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
  return buf;
}

std::string key_of(int i) {
  char k[16];
  std::snprintf(k, sizeof k, "%08d", i);
  return k;
}

std::string run(const std::string& command) {
  std::string out;
  reader r = open_input(command + " |");
  for (int c; (c = r.get()) >= 0;) out += static_cast<char>(c);
  r.close();
  return out;
}

}  // namespace

TEST_CASE("the LMDB Caffe wrote, in cursor order and by key", "[lmdb]") {
  test::temp_dir dir;
  std::string db = copy_database(dir, "fashion_t10k_1000_lmdb");
  auto expected = expected_records("caffe/datum.expect");
  REQUIRE(expected.size() == 1000);
  lmdb_reader r(db);
  CHECK(r.size() == 1000);
  std::string_view key, value;
  std::size_t i = 0;
  datum_view d;
  while (r.next(key, value)) {
    REQUIRE(i < expected.size());
    CHECK(key == expected[i].key);
    CHECK(std::to_string(value.size()) == expected[i].value_len);
    CHECK(crc_hex(value) == expected[i].value_crc32);
    decode_datum(value, d);
    CHECK(std::to_string(d.label) == expected[i].label);
    ++i;
  }
  CHECK(i == 1000);
  auto v = r.get("00000500");
  REQUIRE(v);
  CHECK(crc_hex(*v) == expected[500].value_crc32);
  CHECK_FALSE(r.get("99999999"));
  CHECK(std::filesystem::exists(dir / "fashion_t10k_1000_lmdb/lock.mdb"));
}

TEST_CASE("reading without a lock file, shards and wrap-around", "[lmdb]") {
  test::temp_dir dir;
  std::string db = copy_database(dir, "fashion_t10k_1000_lmdb");
  {
    lmdb_reader r(db, {.no_lock = true}, {.shard_index = 2, .shard_count = 3});
    CHECK(r.without_lock());
    std::string_view key, value;
    std::vector<std::string> keys;
    while (r.next(key, value)) keys.emplace_back(key);
    CHECK(keys.size() == 333);
    CHECK(keys.front() == "00000002");
    CHECK(keys.back() == "00000998");
  }
  CHECK_FALSE(std::filesystem::exists(dir / "fashion_t10k_1000_lmdb/lock.mdb"));
  lmdb_reader r(db, {.no_lock = true}, {.wrap_around = true});
  std::string_view key, value;
  for (int n = 0; n < 1001; ++n) REQUIRE(r.next(key, value));
  CHECK(key == "00000000");  // the 1001st record is the first again
  // A single file, with no_subdir.
  lmdb_reader file(db + "/data.mdb", {.no_subdir = true, .no_lock = true});
  CHECK(file.size() == 1000);
}

TEST_CASE("written with Caffe's settings, the database is Caffe's, byte for byte", "[lmdb][write]") {
  test::temp_dir dir;
  std::string caffe = copy_database(dir, "fashion_t10k_1000_lmdb");
  {
    lmdb_reader in(caffe, {.no_lock = true});
    // Caffe: liblmdb's 1 MiB map to start with, doubled when full; 1000 puts per transaction.
    lmdb_writer out(dir / "ours", {.initial_map_size = 1 << 20, .batch_size = 1000});
    std::string_view key, value;
    while (in.next(key, value)) out.put(key, value);
    out.close();
  }
  CHECK(test::read_file(dir / "ours/data.mdb") == test::read_file(caffe + "/data.mdb"));
  // The LMDB tools read it as they read Caffe's.
  CHECK(run("mdb_dump -n " + (dir / "ours/data.mdb")) == run("mdb_dump -n " + caffe + "/data.mdb"));
}

TEST_CASE("the map grows as needed, and batches survive it", "[lmdb][write]") {
  test::temp_dir dir;
  std::string big(100000, 'x');
  {
    lmdb_writer out(dir / "db", {.initial_map_size = 64 * 1024, .batch_size = 7});
    for (int i = 0; i < 300; ++i) out.put(key_of(i), big + std::to_string(i));
    out.close();
    CHECK(out.map_size() >= 300u * 100000u);
  }
  lmdb_reader in(dir / "db");
  CHECK(in.size() == 300);
  CHECK(*in.get(key_of(299)) == big + "299");
  CHECK(run("mdb_stat " + (dir / "db")).find("Entries: 300") != std::string::npos);
}

TEST_CASE("a writer replaces the database it opens, unless it appends, and writes each key once",
          "[lmdb][write]") {
  test::temp_dir dir;
  std::string db = dir / "db";
  auto keys_of = [&] {
    std::vector<std::string> keys;
    lmdb_reader in(db);
    std::string_view key, value;
    while (in.next(key, value)) keys.emplace_back(key);
    return keys;
  };
  {
    lmdb_writer out(db);
    for (const char* key : {"a", "b", "c"}) out.put(key, "old");
    out.close();
  }
  {
    // As a file writer truncates its file: the old records are gone, none mixes with the new.
    lmdb_writer out(db);
    out.put("x", "new");
    out.close();
  }
  CHECK(keys_of() == std::vector<std::string>{"x"});
  {
    table_writer<bytes_holder> out("lmdb:" + db);  // the table writer too
    out.write("y", "new");
    out.close();
  }
  CHECK(keys_of() == std::vector<std::string>{"y"});
  {
    lmdb_writer out(db, {.append = true});  // goes on where another writer stopped
    out.put("z", "more");
    out.close();
  }
  CHECK(keys_of() == std::vector<std::string>{"y", "z"});
  {
    // LMDB holds one value per key: a second write of a key would lose the first record.
    lmdb_writer out(db, {.batch_size = 2});
    out.put("b", "1");
    out.put("a", "2");
    CHECK_THROWS_WITH(out.put("b", "3"), Catch::Contains("key 'b' written twice") && Catch::Contains(db));
    out.put("c", "4");  // the writer goes on, with its batch intact
    out.close();
  }
  CHECK(keys_of() == std::vector<std::string>{"a", "b", "c"});
  CHECK(*lmdb_reader(db).get("b") == "1");
  {
    lmdb_writer out(db, {.append = true});
    CHECK_THROWS_WITH(out.put("a", "again"), Catch::Contains("written twice"));
  }
}

TEST_CASE("LMDB's rules: one environment per database, none after fork, clear errors", "[lmdb][bad]") {
  test::temp_dir dir;
  std::string db = copy_database(dir, "fashion_t10k_1000_lmdb");
  lmdb_reader first(db);
  {
    // A second reader shares the environment; a writer cannot take it over.
    lmdb_reader second(db);
    CHECK(second.size() == 1000);
    CHECK_THROWS_WITH(lmdb_writer(db), Catch::Contains("is open for reading in this process"));
  }
  pid_t child = ::fork();
  if (child == 0) {
    std::string_view key, value;
    try {
      first.next(key, value);
    } catch (const usage_error& e) {
      if (std::string(e.what()).find("fork()") == std::string::npos) _exit(1);
      // The child opens the database again, with an environment of its own (as a DataLoader
      // worker does), while the parent's is still open.
      try {
        lmdb_reader own(db);
        _exit(own.size() == 1000 && own.next(key, value) ? 0 : 3);
      } catch (const std::exception&) {
        _exit(4);
      }
    }
    _exit(2);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  // The parent's reader still works.
  std::string_view key, value;
  CHECK(first.next(key, value));
  CHECK_THROWS_WITH(lmdb_reader(dir / "missing"),
                    Catch::Contains("No such file or directory") && Catch::Contains("missing"));
  CHECK_THROWS_WITH(lmdb_reader(db + "/data.mdb"), Catch::Contains("Not a directory"));
  lmdb_writer w(dir / "keys");
  CHECK_THROWS_AS(w.put("", "value"), usage_error);
  CHECK_THROWS_AS(w.put(std::string(600, 'k'), "value"), usage_error);
}

TEST_CASE("LMDB tables: Caffe's database through the table classes", "[lmdb][table]") {
  test::temp_dir dir;
  std::string caffe = copy_database(dir, "fashion_t10k_1000_lmdb");
  auto expected = expected_records("caffe/datum.expect");
  {
    // Copied through a table: the same database, byte for byte.
    table_writer<datum_holder> out("lmdb:" + (dir / "copy"));
    std::size_t i = 0;
    for (auto& [key, d] : sequential_table_reader<datum_holder>("lmdb:" + caffe)) {
      CHECK(key == expected[i].key);
      CHECK(std::to_string(d.label) == expected[i].label);
      out.write(key, d);
      ++i;
    }
    CHECK(i == 1000);
    out.close();
  }
  CHECK(test::read_file(dir / "copy/data.mdb") == test::read_file(caffe + "/data.mdb"));
  // Random access by key, and a shard.
  random_access_table_reader<datum_view_holder> by_key("lmdb:" + (dir / "copy"));
  CHECK(std::to_string(by_key.at("00000007").label) == expected[7].label);
  CHECK(by_key.at("00000007").data.size() == 784);
  CHECK_FALSE(by_key.contains("nope"));
  std::size_t n = 0;
  for (auto& [key, d] : sequential_table_reader<datum_view_holder>("lmdb,shard=1/4:" + (dir / "copy"))) {
    CHECK(d.width == 28);
    ++n;
  }
  CHECK(n == 250);
  // LMDB to a Kaldi archive and back: the same Datums.
  {
    table_writer<datum_holder> ark("ark:" + (dir / "d.ark"));
    for (auto& [key, d] : sequential_table_reader<datum_holder>("lmdb:" + (dir / "copy"))) ark.write(key, d);
  }
  {
    table_writer<datum_holder> back("lmdb:" + (dir / "back"));
    for (auto& [key, d] : sequential_table_reader<datum_holder>("ark:" + (dir / "d.ark"))) back.write(key, d);
  }
  CHECK(test::read_file(dir / "back/data.mdb") == test::read_file(caffe + "/data.mdb"));
}

TEST_CASE("readers in many threads", "[lmdb][threads]") {
  test::temp_dir dir;
  std::string db = copy_database(dir, "fashion_t10k_1000_lmdb");
  auto expected = expected_records("caffe/datum.expect");
  std::vector<std::thread> threads;
  std::vector<int> good(8, 0);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      // Each thread has its own reader (its own transaction); they share the environment.
      lmdb_reader r(db, {}, {.shard_index = static_cast<std::uint64_t>(t % 2), .shard_count = 2});
      std::string_view key, value;
      std::size_t i = static_cast<std::size_t>(t % 2);
      while (r.next(key, value)) {
        if (key == expected[i].key && crc_hex(value) == expected[i].value_crc32) ++good[t];
        i += 2;
      }
      for (int n = 0; n < 200; ++n) {
        std::size_t k = static_cast<std::size_t>((n * 37 + t) % 1000);
        auto v = r.get(expected[k].key);
        if (v && crc_hex(*v) == expected[k].value_crc32) ++good[t];
      }
    });
  for (auto& t : threads) t.join();
  for (int g : good) CHECK(g == 700);
}

TEST_CASE("reading a database another process is writing", "[lmdb][process]") {
  test::temp_dir dir;
  const std::string db = dir / "live";
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  pid_t child = ::fork();
  if (child == 0) {
    ::close(ready[0]);
    int status = 0;
    try {
      // A small map, so that it grows while the parent reads.
      lmdb_writer w(db, {.initial_map_size = 32 * 1024, .batch_size = 100});
      std::string value(2000, 'v');
      for (int i = 0; i < 3000; ++i) {
        w.put(key_of(i), value);
        if (i == 99) (void)!::write(ready[1], "x", 1);  // the first batch is committed
      }
      w.close();
    } catch (...) {
      status = 1;
    }
    _exit(status);
  }
  ::close(ready[1]);
  char c;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  ::close(ready[0]);
  // While the child writes: every snapshot holds whole batches.
  for (int n = 0; n < 20; ++n) {
    lmdb_reader r(db);
    std::uint64_t size = r.size();
    CHECK(size % 100 == 0);
    std::string_view key, value;
    std::uint64_t seen = 0;
    while (r.next(key, value)) ++seen;
    CHECK(seen == size);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  lmdb_reader done(db);
  CHECK(done.size() == 3000);
}

TEST_CASE("a read-only database of someone else's opens without a lock file", "[lmdb][permissions]") {
  test::temp_dir dir;
  std::string db = copy_database(dir, "fashion_t10k_1000_lmdb");
  std::filesystem::permissions(db, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                       std::filesystem::perms::group_exec |
                                       std::filesystem::perms::others_read |
                                       std::filesystem::perms::others_exec);
  std::filesystem::permissions(dir.path, std::filesystem::perms::all);
  pid_t child = ::fork();
  if (child == 0) {
    // As another user (root can write anywhere), or with the folder read-only otherwise.
    if (::geteuid() == 0 ? ::setuid(65534) != 0 : ::chmod(db.c_str(), 0555) != 0) _exit(3);
    try {
      lmdb_reader r(db);
      _exit(r.without_lock() && r.size() == 1000 ? 0 : 1);
    } catch (...) {
      _exit(2);
    }
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK_FALSE(std::filesystem::exists(db + "/lock.mdb"));
}
