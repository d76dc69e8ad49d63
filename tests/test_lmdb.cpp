// LMDB against the real thing. Reading is tablio's own (framing/lmdb_file.hpp): it gives what
// liblmdb's cursor gives on databases liblmdb wrote (Caffe's, and python3-lmdb's with overflow
// values, deep trees, deleted keys, empty databases and extreme keys), writes nothing into the
// database's folder, refuses what Caffe never writes, and survives hundreds of damaged files.
// Writing is liblmdb's: a database written with Caffe's settings is byte-identical to Caffe's;
// maps grow by themselves; LMDB's process rules are enforced; mdb_dump agrees.
#include <tablio/framing/lmdb.hpp>
#include <tablio/types/datum.hpp>

#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <random>
#include <thread>

#include "crc_support.hpp"
#include "test_support.hpp"

using namespace tablio;

namespace {

using test::crc_hex;

// A copy of a reference database, so that no test can touch the original.
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

// What a folder holds: each entry's name, size and modification time.
std::vector<std::string> listing(const std::string& folder) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    struct stat st;
    REQUIRE(::stat(entry.path().c_str(), &st) == 0);
    out.push_back(entry.path().filename().string() + " " + std::to_string(st.st_size) + " " +
                  std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec));
  }
  std::sort(out.begin(), out.end());
  return out;
}

using records = std::vector<std::pair<std::string, std::string>>;

// A database as liblmdb reads it, without a lock file: the oracle tablio's reader must match.
struct liblmdb_view {
  MDB_env* env = nullptr;
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  explicit liblmdb_view(const std::string& path, bool no_subdir = false) {
    REQUIRE(mdb_env_create(&env) == 0);
    REQUIRE(mdb_env_open(env, path.c_str(), MDB_RDONLY | MDB_NOLOCK | (no_subdir ? MDB_NOSUBDIR : 0), 0) ==
            0);
    REQUIRE(mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn) == 0);
    REQUIRE(mdb_dbi_open(txn, nullptr, 0, &dbi) == 0);
  }
  ~liblmdb_view() {
    mdb_txn_abort(txn);
    mdb_env_close(env);
  }
  records cursor_records() const {
    records out;
    MDB_cursor* cursor;
    REQUIRE(mdb_cursor_open(txn, dbi, &cursor) == 0);
    MDB_val k, v;
    for (int rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT))
      out.emplace_back(std::string(static_cast<const char*>(k.mv_data), k.mv_size),
                       std::string(static_cast<const char*>(v.mv_data), v.mv_size));
    mdb_cursor_close(cursor);
    return out;
  }
  static constexpr MDB_dbi free_pages = 0;  // liblmdb's database of free pages
  MDB_stat main_stat() const { return stat(dbi); }
  MDB_stat stat(MDB_dbi which) const {
    MDB_stat st;
    REQUIRE(mdb_stat(txn, which, &st) == 0);
    return st;
  }
};

records tablio_records(lmdb_reader& r) {
  records out;
  std::string_view key, value;
  while (r.next(key, value)) out.emplace_back(key, value);
  return out;
}

// Databases python3-lmdb writes (liblmdb 0.9.24 underneath), made once per run.
const char* const make_databases_py = R"(
import lmdb, random, sys
out = sys.argv[1]
rng = random.Random(7)
def env(name, **kw):
    return lmdb.open(out + "/" + name, map_size=1 << 30, **kw)
def key(i):
    return b"%08d" % i
# Values from none to 75 pages: overflow runs, and values that just fit a page or just do not.
with env("overflow") as e, e.begin(write=True) as t:
    sizes = [0, 1, 2000, 4060, 4079, 4080, 4081, 4084, 4096, 8192, 12000, 65536, 300000]
    for i, n in enumerate(sizes + [rng.randrange(20000) for _ in range(40)]):
        t.put(key(i), rng.randbytes(n))
# 30,000 records put in random order over six transactions: a tree of depth 3 at least.
with env("deep") as e:
    order = list(range(30000))
    rng.shuffle(order)
    for start in range(0, 30000, 5000):
        with e.begin(write=True) as t:
            for i in order[start:start + 5000]:
                t.put(b"k%07d-" % i + b"x" * (i % 30), rng.randbytes(i % 200))
# Deleted keys and replaced values: pages merged and freed, and the freed pages reused.
with env("deleted") as e:
    with e.begin(write=True) as t:
        for i in range(6000):
            t.put(key(i), rng.randbytes(i % 300 if i % 100 else 5000))
    with e.begin(write=True) as t:
        for i in range(0, 6000, 3):
            t.delete(key(i))
    with e.begin(write=True) as t:
        for i in range(2000, 3500):
            t.delete(key(i))
        for i in range(4001, 6000, 7):
            t.put(key(i), rng.randbytes(9000 if i % 2 else 3))
# Never written, and emptied.
env("empty").close()
with env("emptied") as e:
    with e.begin(write=True) as t:
        for i in range(500):
            t.put(key(i), b"v" * i)
    with e.begin(write=True) as t:
        for i in range(500):
            t.delete(key(i))
# Keys of 1 byte (every byte) and of 511 (the most liblmdb allows), empty values.
with env("keys") as e, e.begin(write=True) as t:
    for b in range(256):
        t.put(bytes([b]), bytes([b]) * (b % 5))
    for b in range(20):
        t.put(b"\xff" * 510 + bytes([b]), b"long key %d" % b)
    t.put(b"\x00" * 511, b"")
# One file, not a folder.
with env("single.mdb", subdir=False) as e, e.begin(write=True) as t:
    for i in range(100):
        t.put(key(i), b"single")
# What Caffe never writes: named databases.
with env("named", max_dbs=2) as e:
    sub = e.open_db(b"sub")
    with e.begin(write=True) as t:
        t.put(b"a", b"main")
        t.put(b"x", b"1", db=sub)
# Small and deep, for damaging: 200-byte keys make a tree of depth 3 of 1,500 records, with
# overflow values and deleted keys.
with env("robust") as e:
    with e.begin(write=True) as t:
        for i in range(1500):
            t.put(b"%05d" % i + b"k" * 195, rng.randbytes(5000 if i % 100 == 0 else i % 40))
    with e.begin(write=True) as t:
        for i in range(0, 1500, 7):
            t.delete(b"%05d" % i + b"k" * 195)
)";

const std::string& python_databases() {
  static test::temp_dir dir;
  static const std::string folder = [] {
    std::string script = dir / "make_databases.py";
    std::ofstream(script) << make_databases_py;
    REQUIRE(run("/usr/bin/python3 " + script + " " + dir.path.string() + " && echo done") == "done\n");
    return dir.path.string();
  }();
  return folder;
}

// A database written by liblmdb with flags Caffe never uses (python3-lmdb sets none on the
// main database): duplicate keys, keys in another order.
void write_flagged_database(const std::string& path, unsigned flags, const records& data) {
  std::filesystem::create_directories(path);
  MDB_env* env;
  MDB_txn* txn;
  MDB_dbi dbi;
  REQUIRE(mdb_env_create(&env) == 0);
  REQUIRE(mdb_env_open(env, path.c_str(), 0, 0664) == 0);
  REQUIRE(mdb_txn_begin(env, nullptr, 0, &txn) == 0);
  REQUIRE(mdb_dbi_open(txn, nullptr, flags, &dbi) == 0);
  for (const auto& [key, value] : data) {
    MDB_val k{key.size(), const_cast<char*>(key.data())}, v{value.size(), const_cast<char*>(value.data())};
    REQUIRE(mdb_put(txn, dbi, &k, &v, 0) == 0);
  }
  REQUIRE(mdb_txn_commit(txn) == 0);
  mdb_env_close(env);
}

// Reads all of a database, then looks each record up again; true if it did, false if it was
// refused with a tablio::error. Whatever a file holds, tablio reads it consistently or refuses
// it: records in increasing key order, as many as size() says, and each found again by key.
bool reads_consistently(const std::string& file) {
  try {
    lmdb_reader r(file, {.no_subdir = true});
    records all = tablio_records(r);
    for (std::size_t i = 1; i < all.size(); ++i) REQUIRE(all[i - 1].first < all[i].first);
    REQUIRE(all.size() == r.size());
    for (const auto& [key, value] : all) REQUIRE(r.get(key) == std::optional<std::string_view>(value));
    REQUIRE_FALSE(r.get("not a key"));
    REQUIRE_FALSE(r.get(""));
    return true;
  } catch (const tablio::error&) {
    return false;
  }
}

}  // namespace

TEST_CASE("the LMDBs Caffe and python3-lmdb wrote, in cursor order and by key", "[lmdb]") {
  test::temp_dir dir;
  for (const char* name : {"fashion_t10k_1000_lmdb", "float_encoded_lmdb"}) {
    INFO(name);
    std::string db = copy_database(dir, name);
    auto expected = expected_records(name == std::string("float_encoded_lmdb") ? "caffe/float_encoded.expect"
                                                                               : "caffe/datum.expect");
    auto before = listing(db);
    lmdb_reader r(db);
    CHECK(r.size() == expected.size());
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
      auto again = r.get(key);
      REQUIRE(again);
      CHECK(again->data() == value.data());
      ++i;
    }
    CHECK(i == expected.size());
    CHECK_FALSE(r.next(key, value));  // and stays at the end
    CHECK_FALSE(r.get("99999999"));
    CHECK(listing(db) == before);  // no lock file, nothing written
  }
}

TEST_CASE("reading gives what liblmdb's cursor gives, on every kind of tree", "[lmdb]") {
  const std::string& folder = python_databases();
  for (const char* name :
       {"overflow", "deep", "deleted", "empty", "emptied", "keys", "single.mdb", "robust"}) {
    INFO(name);
    std::string db = folder + "/" + name;
    bool single = name == std::string("single.mdb");
    liblmdb_view oracle(db, single);
    records expected = oracle.cursor_records();
    lmdb_reader r(db, {.no_subdir = single});
    CHECK(r.size() == oracle.main_stat().ms_entries);
    records got = tablio_records(r);
    CHECK(got.size() == expected.size());
    CHECK(got == expected);  // byte for byte, in the same order
    for (const auto& [key, value] : expected) {
      auto found = r.get(key);
      REQUIRE(found);
      CHECK(*found == value);
      CHECK_FALSE(r.get(key + '\0'));
      CHECK_FALSE(r.get(std::string_view(key).substr(0, key.size() - 1)));
    }
    CHECK_FALSE(r.get("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"));
  }
  // The trees are what the names say.
  CHECK(liblmdb_view(folder + "/deep").main_stat().ms_depth >= 3);
  CHECK(liblmdb_view(folder + "/robust").main_stat().ms_depth >= 3);
  CHECK(liblmdb_view(folder + "/overflow").main_stat().ms_overflow_pages > 100);
  CHECK(liblmdb_view(folder + "/deleted").stat(liblmdb_view::free_pages).ms_entries > 0);
  CHECK(liblmdb_view(folder + "/emptied").stat(liblmdb_view::free_pages).ms_entries > 0);
  CHECK(liblmdb_view(folder + "/keys").cursor_records()[1].first == std::string(511, '\0'));
  // Wrapping around, and shards, over a deep tree.
  lmdb_reader all(folder + "/deep");
  lmdb_reader shard(folder + "/deep", {}, {.wrap_around = true, .shard_index = 2, .shard_count = 7});
  records every = tablio_records(all);
  const std::size_t per_pass = (every.size() - 2 + 6) / 7;  // records 2, 9, 16...
  std::string_view key, value;
  for (std::size_t i = 0; i < 2 * per_pass + 5; ++i) {
    REQUIRE(shard.next(key, value));
    CHECK(key == every[2 + 7 * (i % per_pass)].first);
  }
}

TEST_CASE("what Caffe never writes is refused, clearly", "[lmdb][bad]") {
  test::temp_dir dir;
  write_flagged_database(dir / "dupsort", MDB_DUPSORT, {{"a", "1"}, {"a", "2"}, {"b", "3"}});
  CHECK_THROWS_MATCHES(lmdb_reader(dir / "dupsort"), format_error,
                       test::says("duplicate keys (MDB_DUPSORT)"));
  write_flagged_database(dir / "integerkey", MDB_INTEGERKEY, {{std::string("\5\0\0\0\0\0\0\0", 8), "five"}});
  CHECK_THROWS_MATCHES(lmdb_reader(dir / "integerkey"), format_error, test::says("keys in another order"));
  const std::string& folder = python_databases();
  lmdb_reader named(folder + "/named");
  CHECK(named.get("a") == std::optional<std::string_view>("main"));
  std::string_view key, value;
  REQUIRE(named.next(key, value));
  CHECK(key == "a");
  CHECK_THROWS_MATCHES(
      named.next(key, value), format_error,
      test::says("a named database") && test::says("(key 'sub')") && test::says("/named/data.mdb"));
  CHECK_THROWS_MATCHES(named.get("sub"), format_error, test::says("a named database"));
  // Not a database at all; an empty file; a folder.
  std::filesystem::create_directories(dir / "db");
  std::ofstream(dir / "db/data.mdb") << std::string(10000, 'x');
  CHECK_THROWS_MATCHES(lmdb_reader(dir / "db"), format_error, test::says("not an LMDB data file"));
  std::ofstream(dir / "db/data.mdb", std::ios::trunc).flush();
  CHECK_THROWS_MATCHES(lmdb_reader(dir / "db"), format_error,
                       test::says("at byte 0") && test::says("0 bytes"));
  CHECK_THROWS_MATCHES(lmdb_reader(dir / "db", {.no_subdir = true}), io_error, test::says("regular file"));
}

TEST_CASE("reading writes nothing: no lock file, read-only folders, after fork()",
          "[fork][lmdb][permissions]") {
  test::temp_dir dir;
  std::string db = copy_database(dir, "fashion_t10k_1000_lmdb");
  std::filesystem::remove(db + "/data.mdb-lock");
  const auto before = listing(db);
  {
    lmdb_reader r(db, {}, {.shard_index = 2, .shard_count = 3});
    std::string_view key, value;
    std::vector<std::string> keys;
    while (r.next(key, value)) keys.emplace_back(key);
    CHECK(keys.size() == 333);
    CHECK(keys.front() == "00000002");
    CHECK(keys.back() == "00000998");
    std::size_t n = 0;
    for (auto& [k, d] : sequential_table_reader<datum_view_holder>("lmdb:" + db)) n += d.data.size() == 784;
    CHECK(n == 1000);
    CHECK(random_access_table_reader<datum_holder>("lmdb:" + db).at("00000500").height == 28);
    // A reader works in a child process too: its map is the child's.
    pid_t child = ::fork();
    if (child == 0) _exit(r.get("00000007") && lmdb_reader(db).size() == 1000 ? 0 : 1);
    int status = 0;
    ::waitpid(child, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  CHECK(listing(db) == before);
  CHECK_FALSE(std::filesystem::exists(db + "/lock.mdb"));
  // A dataset of someone else's, in a folder nobody may write: as another user (root writes
  // anywhere), or with the folder read-only otherwise.
  std::filesystem::permissions(dir.path, std::filesystem::perms::all);
  ::chmod(db.c_str(), 0555);
  pid_t child = ::fork();
  if (child == 0) {
    if (::geteuid() == 0 && ::setuid(65534) != 0) _exit(3);
    try {
      lmdb_reader r(db);
      _exit(r.size() == 1000 && r.get("00000999") ? 0 : 1);
    } catch (...) {
      _exit(2);
    }
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ::chmod(db.c_str(), 0755);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(listing(db) == before);
  // A single file, with no_subdir.
  lmdb_reader file(db + "/data.mdb", {.no_subdir = true});
  CHECK(file.size() == 1000);
  CHECK(listing(db) == before);
  CHECK_THROWS_WITH(lmdb_reader(dir / "missing"),
                    Catch::Contains("No such file or directory") && Catch::Contains("missing"));
  CHECK_THROWS_WITH(lmdb_reader(db + "/data.mdb"), Catch::Contains("Not a directory"));
  CHECK_THROWS_AS(lmdb_reader(db, {}, {.shard_index = 3, .shard_count = 3}), usage_error);
}

TEST_CASE("damaged databases read consistently or are refused, never crash", "[lmdb][bad]") {
  // Bytes set at random (in page headers and node offsets most often, in the meta pages, and
  // anywhere), and files cut short. liblmdb crashes on about one in six of these.
  const std::string robust = test::read_file(python_databases() + "/robust/data.mdb");
  const std::string caffe = test::read_file(test::data_path("caffe/fashion_t10k_1000_lmdb/data.mdb"));
  test::temp_dir dir;
  const std::string file = dir / "data.mdb";
  auto reads = [&](const std::string& bytes) {
    std::ofstream(file, std::ios::binary | std::ios::trunc)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return reads_consistently(file);
  };
  std::mt19937 rng(2024);
  int read = 0, refused = 0;
  for (const auto& [original, damaged] : {std::pair{&robust, 400}, std::pair{&caffe, 200}}) {
    REQUIRE(reads(*original));
    const std::size_t pages = original->size() / 4096;
    for (int n = 0; n < damaged; ++n) {
      std::string bytes = *original;
      for (int changes = 1 + static_cast<int>(rng() % 3); changes > 0; --changes) {
        std::size_t at;
        switch (rng() % 4) {
          case 0:
            at = rng() % 2 * 4096 + rng() % 152;
            break;  // a meta page
          case 1:
            at = rng() % pages * 4096 + rng() % 16;
            break;  // a page header
          case 2:
            at = rng() % pages * 4096 + 16 + rng() % 64;
            break;  // node offsets
          default:
            at = rng() % bytes.size();
            break;  // anywhere
        }
        std::uint32_t r = rng();
        char& byte = bytes[at];
        switch (r % 3) {
          case 0:
            byte = static_cast<char>(byte ^ (1 << (r >> 8) % 8));
            break;  // a bit flipped
          case 1:
            byte = static_cast<char>((r >> 8) % 4 - 1);
            break;  // -1 to 2
          default:
            byte = static_cast<char>(r >> 8);
            break;
        }
      }
      (reads(bytes) ? read : refused)++;
    }
    for (int n = 0; n < 50; ++n) {
      std::size_t size = n < 10 ? n * 4096 + rng() % 2 * (rng() % 4096) : rng() % original->size();
      (reads(original->substr(0, size)) ? read : refused)++;
    }
  }
  INFO(read << " damaged files read, " << refused << " refused");
  CHECK(read + refused == 700);
  CHECK(refused > 100);
}

TEST_CASE("a damaged newer meta page is refused, with or without a lock file, before liblmdb maps it",
          "[lmdb][bad]") {
  // liblmdb takes the newer meta page's page size as it is, and maps the file by it (a bus
  // error for a wrong one); falling back to the older page would lose the newer snapshot.
  test::temp_dir dir;
  const std::string db = dir / "db";
  {
    table_writer<bytes_holder> out("lmdb:" + db);
    for (const char* key : {"a", "b", "c"}) out.write(key, "value");
  }
  const std::string good = test::read_file(db + "/data.mdb");
  auto transaction = [&](std::size_t page) {
    std::uint64_t t;
    std::memcpy(&t, good.data() + page * 4096 + 144, 8);
    return t;
  };
  const std::size_t newer = transaction(1) > transaction(0) ? 1 : 0;
  for (std::size_t at : {newer * 4096 + 41, newer * 4096 + 40, newer * 4096 + 16}) {  // page size, magic
    INFO(at);
    std::string bytes = good;
    bytes[at] = static_cast<char>(bytes[at] ^ 0x5a);
    std::ofstream(db + "/data.mdb", std::ios::binary | std::ios::trunc) << bytes;
    REQUIRE(std::filesystem::exists(db + "/lock.mdb"));
    CHECK_THROWS_MATCHES(sequential_table_reader<bytes_holder>("lmdb:" + db), format_error,
                         test::says("at byte " + std::to_string(at - at % 4)));
    std::filesystem::remove(db + "/lock.mdb");
    CHECK_THROWS_AS(sequential_table_reader<bytes_holder>("lmdb:" + db), format_error);
    std::ofstream(db + "/lock.mdb");
  }
}

TEST_CASE("written with Caffe's settings, the database is Caffe's, byte for byte",
          "[lmdb][write][unix-tools]") {
  test::temp_dir dir;
  std::string caffe = copy_database(dir, "fashion_t10k_1000_lmdb");
  {
    lmdb_reader in(caffe);
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

TEST_CASE("the map grows as needed, and batches survive it", "[lmdb][write][unix-tools]") {
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

TEST_CASE("LMDB's rules for writers: one environment per database, none after fork, clear errors",
          "[fork][lmdb][bad]") {
  test::temp_dir dir;
  std::string db = dir / "db";
  lmdb_writer first(db);
  first.put("a", "1");
  first.commit();
  pid_t child = ::fork();
  if (child == 0) {
    try {
      first.put("b", "2");
    } catch (const usage_error& e) {
      if (std::string(e.what()).find("fork()") == std::string::npos) _exit(1);
      // The child reads the database, with no environment at all.
      try {
        lmdb_reader own(db);
        _exit(own.size() == 1 && own.get("a") ? 0 : 3);
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
  // The parent's writer still works.
  first.put("b", "2");
  first.close();
  CHECK(lmdb_reader(db).size() == 2);
  CHECK(std::filesystem::exists(db + "/lock.mdb"));
  // Without a lock file.
  lmdb_writer unlocked(dir / "unlocked", {.no_lock = true});
  CHECK(unlocked.environment().without_lock());
  unlocked.put("k", "v");
  unlocked.close();
  CHECK_FALSE(std::filesystem::exists(dir / "unlocked/lock.mdb"));
  CHECK(*lmdb_reader(dir / "unlocked").get("k") == "v");
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
  lmdb_reader shared(db);  // get() of one reader, from every thread
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      lmdb_reader r(db, {}, {.shard_index = static_cast<std::uint64_t>(t % 2), .shard_count = 2});
      std::string_view key, value;
      std::size_t i = static_cast<std::size_t>(t % 2);
      while (r.next(key, value)) {
        if (key == expected[i].key && crc_hex(value) == expected[i].value_crc32) ++good[t];
        i += 2;
      }
      for (int n = 0; n < 200; ++n) {
        std::size_t k = static_cast<std::size_t>((n * 37 + t) % 1000);
        auto v = (n % 2 ? r : shared).get(expected[k].key);
        if (v && crc_hex(*v) == expected[k].value_crc32) ++good[t];
      }
    });
  for (auto& t : threads) t.join();
  for (int g : good) CHECK(g == 700);
}

TEST_CASE("reading a database another process is writing", "[fork][lmdb][process]") {
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
  // A reader takes no lock, so the writer may reuse the pages of its snapshot: each reading,
  // until the writer is done, either sees whole batches or is refused, and never crashes.
  int status = 0, whole = 0, refused = 0;
  for (bool written = false; !written;) {
    written = ::waitpid(child, &status, WNOHANG) == child;
    try {
      lmdb_reader r(db);
      std::string_view key, value;
      std::uint64_t seen = 0;
      bool in_order = true;
      while (r.next(key, value)) in_order = in_order && key == key_of(static_cast<int>(seen++));
      CHECK(in_order);
      CHECK(seen % 100 == 0);
      CHECK(seen == r.size());
      ++whole;
    } catch (const tablio::error&) {
      ++refused;
    }
  }
  INFO(whole << " readings whole, " << refused << " refused");
  CHECK(whole > 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  lmdb_reader done(db);
  CHECK(done.size() == 3000);
  CHECK(tablio_records(done).size() == 3000);
}

TEST_CASE("LMDB keys are any bytes, as Caffe makes them from file names with spaces", "[lmdb][table]") {
  test::temp_dir dir;
  const std::string spaced = "00000001_my photo.jpg", high = std::string("\xff\x01 x", 4);
  write_flagged_database(dir / "db", 0, {{spaced, "one"}, {high, "two"}, {"00000000_a.jpg", "zero"}});
  std::vector<std::string> keys;
  for (auto& [key, value] : sequential_table_reader<bytes_holder>("lmdb:" + dir / "db")) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"00000000_a.jpg", spaced, high});
  random_access_table_reader<bytes_holder> by_key("lmdb:" + dir / "db");
  CHECK(by_key.find(spaced) == std::optional<std::string>("one"));
  CHECK(by_key.find(high) == std::optional<std::string>("two"));
  CHECK_FALSE(by_key.find("00000001_my"));
  // Tables whose keys are tokens still refuse them, naming the key.
  table_writer<bytes_holder> ark("ark:" + dir / "a.ark");
  CHECK_THROWS_MATCHES(ark.write(spaced, "one"), key_error, test::says("invalid key '00000001_my"));
  // What is read from LMDB is written to LMDB: a copy keeps every key and value.
  const std::string tab = "tab\there", del = "k\x7f";
  {
    table_writer<bytes_holder> copy("lmdb:" + dir / "copy");
    for (auto& [key, value] : sequential_table_reader<bytes_holder>("lmdb:" + dir / "db"))
      copy.write(key, value);
    copy.write(tab, "three");
    copy.write(del, "four");
    CHECK_THROWS_AS(copy.write("", "empty"), key_error);
    CHECK_THROWS_MATCHES(copy.write(std::string(512, 'k'), "long"), usage_error,
                         test::says("LMDB keys are 1 to 511"));
  }
  std::vector<std::pair<std::string, std::string>> copied;
  for (auto& [key, value] : sequential_table_reader<bytes_holder>("lmdb:" + dir / "copy"))
    copied.emplace_back(key, value);
  CHECK(copied ==
        std::vector<std::pair<std::string, std::string>>{
            {"00000000_a.jpg", "zero"}, {spaced, "one"}, {del, "four"}, {tab, "three"}, {high, "two"}});
}
