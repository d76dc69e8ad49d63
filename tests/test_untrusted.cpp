// Untrusted input: what a table opened from uploads may reach (commands, standard input,
// devices, files outside its folder), what its messages may quote, how much it may take, and
// which keys it may hand on. The process-wide policy (TABLIO_UNTRUSTED) is tested through the
// tool and Python, in processes of their own: here each open asks for it in its options.
#include "test_support.hpp"

#include <tablio/stream/policy.hpp>
#include <tablio/stream/shards.hpp>
#include <tablio/table/segments.hpp>
#include <tablio/types/matrix.hpp>
#include <tablio/types/wave.hpp>
#if defined(TABLIO_WITH_ZLIB)
#include <tablio/stream/zlib.hpp>
#endif
#if defined(TABLIO_WITH_CURL)
#include <tablio/stream/remote/cache.hpp>
#endif
#if defined(TABLIO_WITH_LMDB)
#include <tablio/framing/lmdb.hpp>
#endif

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

using namespace tablio;
using test::says;
namespace fs = std::filesystem;

namespace {

using matrix_reader = sequential_table_reader<holder<matrix<float>>>;

// Options with one thing changed (designated initializers would leave the others unnamed).
template <class T>
open_options with(T open_options::*field, T value) {
  open_options o;
  o.*field = std::move(value);
  return o;
}

void write_text(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  REQUIRE(out.good());
}

// A folder of uploads: a good archive and its script, and a secret beside (not inside) it.
struct uploads {
  test::temp_dir root;
  std::string dir = root / "up", secret = root / "secret.txt";
  uploads() {
    fs::create_directory(dir);
    write_text(secret, "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n");
    table_writer<holder<matrix<float>>> out("ark,scp:" + dir + "/a.ark," + dir + "/a.scp");
    out.write("utt1", matrix<float>(2, 3));
    out.close();
  }
  // A script of one line "utt0 TARGET".
  std::string script(std::string_view target) const {
    std::string path = dir + "/upload.scp";
    write_text(path, "utt0 " + std::string(target) + "\n");
    return "scp:" + path;
  }
  open_options confined() const { return with(&open_options::confine, dir); }
};

void read_all(const std::string& rspec, const open_options& options) {
  for (matrix_reader r(rspec, options); !r.done(); r.next()) (void)r.value();
}

}  // namespace

TEST_CASE("a confined table reads regular files inside its folder, and nothing else", "[untrusted]") {
  uploads up;
  CHECK_NOTHROW(read_all("scp:" + up.dir + "/a.scp", up.confined()));
  CHECK_NOTHROW(read_all("ark:" + up.dir + "/a.ark", up.confined()));

  // Names a script may hold that reach out of the folder, or are not regular files.
  fs::create_directory(up.dir + "/sub");
  std::vector<std::string> targets{up.secret,     up.secret + ":10",         "/proc/self/environ",
                                   "/etc/passwd", up.dir + "/../secret.txt", "/dev/zero",
                                   "-",           up.dir + "/sub",           "id > PWNED; echo |"};
  if (test::made_link(up.secret, up.dir + "/link.ark")) targets.push_back(up.dir + "/link.ark");
  for (const std::string& target : targets) {
    INFO(target);
    CHECK_THROWS_AS(read_all(up.script(target), up.confined()), access_error);
  }
  // Whatever allow_pipes says: a command cannot be confined.
  open_options pipes = up.confined();
  pipes.allow_pipes = true;
  CHECK_THROWS_MATCHES(read_all(up.script("echo |"), pipes), access_error, says("confined to a folder"));
  // The specifier's own names are confined too, and the shards of a pattern before any is read.
  CHECK_THROWS_AS(read_all("ark:" + up.secret, up.confined()), access_error);
  CHECK_THROWS_AS(read_all("ark:-", up.confined()), access_error);
  CHECK_THROWS_AS(expand_shards(up.root / "*.txt", up.confined()), access_error);
  CHECK_THROWS_AS(expand_shards(up.dir + "/../{secret,x}.txt", up.confined()), access_error);
  CHECK_THROWS_AS(expand_shards(up.dir + "/../secret-%06d.txt", up.confined()), access_error);
  CHECK(expand_shards(up.dir + "/a.{ark,scp}", up.confined()).size() == 2);
}

TEST_CASE("untrusted input is confined to its table's folder, with no commands, devices or caches",
          "[untrusted]") {
  uploads up;
  const open_options untrusted = with(&open_options::untrusted, true);
  CHECK_NOTHROW(read_all("scp:" + up.dir + "/a.scp", untrusted));
  CHECK_THROWS_AS(read_all(up.script(up.secret), untrusted), access_error);
  CHECK_THROWS_AS(read_all(up.script("/dev/zero"), untrusted), access_error);
  std::string pwned = up.root / "PWNED";
  CHECK_THROWS_AS(read_all(up.script("touch " + pwned + " |"), untrusted), access_error);
  CHECK_FALSE(fs::exists(pwned));
  CHECK_THROWS_MATCHES(read_all("ark,cache=" + (up.root / "c") + ":" + up.dir + "/a.ark", untrusted),
                       access_error, says("cannot name a cache"));
  CHECK_FALSE(fs::exists(up.root / "c"));
  // The files a script being written to lists are confined to its folder.
  write_text(up.dir + "/targets.scp", "utt1 " + (up.root / "escaped.ark") + "\n");
  {
    table_writer<holder<matrix<float>>> out("scp:" + up.dir + "/targets.scp", untrusted);
    CHECK_THROWS_AS(out.write("utt1", matrix<float>(1, 1)), access_error);
  }
  CHECK_FALSE(fs::exists(up.root / "escaped.ark"));
  // Pipes off is pipes off, wherever the command is.
  CHECK_THROWS_MATCHES(read_all(up.script("echo |"), with(&open_options::allow_pipes, false)), access_error,
                       says("pipes are disabled"));
}

TEST_CASE("messages quote at most 16 bytes of the input, escaped", "[untrusted]") {
  // What reorders or breaks a line is escaped: bidirectional marks, and the line separators.
  CHECK(detail::printable("a\u202Eb\u061Cc\u2028d\u2029e") ==
        "a\\xe2\\x80\\xaeb\\xd8\\x9cc\\xe2\\x80\\xa8d\\xe2\\x80\\xa9e");
  uploads up;
  // Trusted, the script reads the secret as a matrix: the message may quote what it found, not
  // the secret.
  try {
    read_all(up.script(up.secret), {});
    FAIL("read a secret as a matrix");
  } catch (const format_error& e) {
    std::string what = e.what();
    CHECK(what.find("AWS_SECRET_ACCES") != std::string::npos);  // 16 bytes of it, no more
    CHECK(what.find("AWS_SECRET_ACCESS") == std::string::npos);
    CHECK(what.find("wJalr") == std::string::npos);
  }
  // A key read at an offset into the secret: the message shows 16 bytes; the error keeps it whole.
  write_text(up.dir + "/keys.ark", "0123456789abcdefSECRET\x1b[2J \x01");
  try {
    read_all("ark:" + up.dir + "/keys.ark", {});
    FAIL("read a bad archive");
  } catch (const format_error& e) {
    std::string what = e.what();
    CHECK(what.find("SECRET") == std::string::npos);
    CHECK(what.find('\x1b') == std::string::npos);
    CHECK(e.key().empty());  // refused before it was ever a key
  }
  // A writer's refusal of a key escapes it too.
  table_writer<holder<matrix<float>>> out("ark:" + up.dir + "/out.ark");
  CHECK_THROWS_MATCHES(out.write("bad\x07key", matrix<float>(1, 1)), usage_error, says("bad\\x07key"));
  CHECK(excerpt(std::string(40, 'x')) == std::string(16, 'x') + "...");
  CHECK(detail::printable("a\x1b[2Jb\xc2\x9b\xff") == "a\\x1b[2Jb\\xc2\\x9b\\xff");
}

TEST_CASE("keys read are keys as writers take them, in every framing", "[untrusted]") {
  test::temp_dir dir;
  // A key with ESC in an archive: an error at the key, never an entry.
  write_text(dir / "esc.ark", std::string("utt\x1b]0;pwned\x07 \0B", 7 + 9) + "FM ");
  CHECK_THROWS_MATCHES(read_all("ark:" + (dir / "esc.ark"), {}), format_error, says("at byte 0"));
  // A TFRecord record that keeps its key in a feature: the key is checked where it is taken out.
  {
    example e;
    e.features["key"] = std::vector<std::string>{"a\x07"};
    table_writer<example_holder> out("tfrecord:" + (dir / "k.tfrecord"));
    out.write("00000000", e);
    out.close();
  }
  auto read_keyed = [&] {
    for (sequential_table_reader<example_holder> r("tfrecord,key=key:" + (dir / "k.tfrecord")); !r.done();
         r.next())
      (void)r.value();
  };
  CHECK_THROWS_MATCHES(read_keyed(), format_error,
                       says("a key (non-empty, no whitespace or unprintable bytes"));
}

TEST_CASE("reading takes what arrives, within limits, whatever a header claims", "[untrusted]") {
  test::temp_dir dir;
  // A device read as an object: read as it comes, not to an end it does not have.
  write_text(dir / "zero.scp", "utt0 /dev/zero\n");
  CHECK_THROWS_MATCHES(read_all("scp:" + (dir / "zero.scp"), {}), format_error,
                       says("'/dev/zero' at byte 0"));
  // A run of bytes with no whitespace ends at the token limit.
  write_text(dir / "long.ark", std::string(2 << 20, 'k'));
  CHECK_THROWS_MATCHES(read_all("ark:" + (dir / "long.ark"), {}), format_error,
                       says("limits::max_token_bytes"));
  // All one input gives.
  open_options small{};
  small.parse_limits.max_total_bytes = 1000;
  write_text(dir / "big.ark", "");
  {
    table_writer<holder<matrix<float>>> out("ark:" + (dir / "big.ark"));
    for (int i = 0; i < 10; ++i) out.write("utt" + std::to_string(i), matrix<float>(10, 10));
    out.close();
  }
  CHECK_THROWS_MATCHES(read_all("ark:" + (dir / "big.ark"), small), format_error,
                       says("limits::max_total_bytes"));
  CHECK_NOTHROW(read_all("ark:" + (dir / "big.ark"), {}));
#if defined(TABLIO_WITH_ZLIB)
  // A gzip IDX file that claims 3 GiB: compressed zeros, which inflate a thousand times.
  {
    writer out(zlib_sink(open_output(dir / "bomb-idx3-ubyte.gz"), compression::gzip));
    const unsigned char head[] = {0, 0, 8, 3, 0, 0, 0x30, 0,
                                  0, 0, 1, 0, 0, 0, 1,    0};  // 12288 x 256 x 256 bytes
    out.write(reinterpret_cast<const char*>(head), sizeof head);
    std::string zeros(1 << 20, '\0');
    for (int i = 0; i < 64; ++i) out.write(zeros.data(), zeros.size());  // 64 MiB of the 768 MiB claimed
    out.close();
  }
  open_options bounded{};
  bounded.parse_limits.max_expansion = 100;
  CHECK_THROWS_MATCHES(idx_file(dir / "bomb-idx3-ubyte.gz", {}, bounded), format_error,
                       says("limits::max_expansion"));
  CHECK_THROWS_MATCHES(idx_file(dir / "bomb-idx3-ubyte.gz", {}, with(&open_options::untrusted, true)),
                       format_error, says("limits::max_expansion"));
  CHECK_THROWS_MATCHES(idx_file(dir / "bomb-idx3-ubyte.gz"), format_error, says("truncated"));
#endif
}

TEST_CASE("what a pattern matches is a file, whatever its name says", "[untrusted][unix-names]") {
  test::temp_dir dir;
  {
    table_writer<bytes_holder> out("tfrecord:" + (dir / "part-0.tfrecord"));
    out.write("00000000", "record");
    out.close();
  }
  test::in_folder here(dir.path);  // where the command would leave PWNED
  const std::string pwned = dir / "PWNED";
  write_text(dir / "part-1;touch PWNED;: |", "");
  auto read = [&](const std::string& rspec) {
    for (sequential_table_reader<bytes_holder> r(rspec); !r.done(); r.next()) (void)r.value();
  };
  CHECK_THROWS_MATCHES(read("tfrecord:" + (dir / "part-*")), access_error, says("reads as a command"));
  CHECK_FALSE(fs::exists(pwned));
  write_text(dir / "part-2.tfrecord:12", "");  // not an offset into part-2.tfrecord
  CHECK_THROWS_AS(expand_shards(dir / "part-2*"), access_error);
}

TEST_CASE("URLs in messages keep no credentials, and names from scripts are quoted short", "[untrusted]") {
  CHECK_THROWS_MATCHES(require_rspecifier("tfrecord,bogus:https://user:SECRETPW@host/x?X-Amz-Signature=SIG"),
                       usage_error, !says("SECRETPW") && !says("SIG") && says("https://host/x"));
  CHECK(detail::without_credentials("a s3://k@b/o?x#y, b") == "a s3://b/o, b");
  CHECK(detail::printable("key\xe2\x80\xae"
                          "evil") ==
        "key\\xe2\\x80\\xae"
        "evil");  // U+202E
  test::temp_dir dir;
  write_text(dir / "creds.scp", "aws_secret_access_key = wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY\n");
  CHECK_THROWS_MATCHES(read_all("scp:" + (dir / "creds.scp"), {}), io_error,
                       says("'= wJalrXUtnFEMIK...'") && !says("EXAMPLEKEY") && says("creds.scp"));
  // A file a script line names is input too: under the untrusted policy a message quotes 16 bytes of
  // its name, whether its bytes are an object's or a record's.
  uploads up;
  const std::string deep = std::string(40, 'a') + "/" + std::string(40, 'b') + "/" + std::string(40, 'c');
  fs::create_directories(up.dir + "/" + deep);
  write_text(up.dir + "/" + deep + "/m.ark", "u1 x\n");
  write_text(up.dir + "/" + deep + "/r.tfrecord", std::string("\x05\0\0\0\0\0\0\0", 8) + "????hello????");
  for (const char* target : {"/m.ark:3", "/r.tfrecord:0"}) {
    INFO(target);
    CHECK_THROWS_MATCHES(
        read_all(up.script(up.dir + "/" + deep + target), with(&open_options::untrusted, true)), format_error,
        says("key 'utt0'") && !says(std::string(20, 'a')) && !says("bbbb"));
  }
  CHECK_THROWS_MATCHES(read_all(up.script(up.dir + "/" + deep + "/m.ark:3"), {}), format_error,
                       says(deep + "/m.ark"));  // the caller's own script: named whole
  // A name with a byte to escape is cut as any other.
  try {
    read_all(up.script("\x1b" + std::string(3000, 'B')), with(&open_options::untrusted, true));
    FAIL("read a missing file");
  } catch (const tablio::error& e) {
    CHECK(std::string_view(e.what()).size() < 400);
    CHECK(std::string_view(e.what()).find('\x1b') == std::string_view::npos);
  }
}

TEST_CASE("a list of shards that names one twice is refused", "[untrusted]") {
  test::temp_dir dir;
  write_text(dir / "a.tar", "");
  write_text(dir / "b.tar", "");
  std::string braces = dir / "a{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}.tar";
  CHECK_THROWS_MATCHES(expand_shards(braces), usage_error, says("twice"));
  CHECK_THROWS_MATCHES(expand_shard_list((dir / "a.tar") + "," + (dir / "b.tar") + "," + (dir / "a.tar")),
                       usage_error, says("twice"));
  CHECK(expand_shard_list(dir / "{a,b}.tar").size() == 2);
}

#if defined(TABLIO_WITH_CURL)
TEST_CASE("a cache removes only what it put in its folder", "[untrusted][links]") {
  test::temp_dir dir;
  std::string folder = dir / "cache";
  fs::create_directory(folder);
  for (const char* name : {"a.txt", "b.py", ".hidden"}) write_text(folder + "/" + name, "keep me");
  fs::create_symlink(dir / "elsewhere", folder + "/link");
  CHECK_THROWS_MATCHES(remote::object_cache(folder, 1), usage_error, says("is not a tablio cache"));
  for (const char* name : {"a.txt", "b.py", ".hidden"}) CHECK(fs::exists(folder + "/" + name));
  CHECK(fs::is_symlink(folder + "/link"));

  // A new folder is tagged, and eviction leaves whatever is put there by others.
  std::string mine = dir / "mine";
  remote::object_cache cache(mine, 1);
  CHECK(test::read_file(mine + "/CACHEDIR.TAG").starts_with("Signature: 8a477f597d28d172789f06886806bc55"));
  std::string copy = cache.path_of("s3://bucket/object.tar");
  write_text(copy, "cached bytes");
  write_text(mine + "/notes.txt", "mine, not the cache's");
  cache.evict();
  CHECK_FALSE(fs::exists(copy));
  CHECK(fs::exists(mine + "/notes.txt"));
  // Opened again, the tag says it is a cache, whatever else was put in it since.
  CHECK_NOTHROW(remote::object_cache(mine, 1));
  // A tag another process has created but not yet written is no foreign file.
  std::string racing = dir / "racing";
  fs::create_directory(racing);
  write_text(racing + "/CACHEDIR.TAG", "");
  CHECK_NOTHROW(remote::object_cache(racing, 1));
  CHECK(test::read_file(racing + "/CACHEDIR.TAG").starts_with("Signature: 8a477f597d28d172789f06886806bc55"));
}
#endif

#if defined(TABLIO_WITH_LMDB)
TEST_CASE("reading an LMDB database never writes through a link in its folder", "[untrusted][links]") {
  test::temp_dir dir;
  const std::string db = dir / "db";
  {
    lmdb_writer out(db);
    out.put("00000000", "value");
    out.close();
  }
  fs::remove(db + "/lock.mdb");
  write_text(dir / "victim", "keep me");
  fs::create_symlink(dir / "victim", db + "/lock.mdb");
  for (sequential_table_reader<bytes_holder> r("lmdb:" + db); !r.done(); r.next())
    CHECK(r.value() == "value");
  CHECK(test::read_file(dir / "victim") == "keep me");
  // Untrusted, the lock file is not looked at at all; trusted beside a real one, the reader
  // holds its snapshot there, as liblmdb's readers do.
  for (sequential_table_reader<bytes_holder> r("lmdb:" + db, with(&open_options::untrusted, true)); !r.done();
       r.next())
    CHECK(r.value() == "value");
  CHECK(test::read_file(dir / "victim") == "keep me");
}
#endif

TEST_CASE("a remote table's untrusted entries reach no local file", "[untrusted]") {
  uploads up;
  // What a remote script or index is read with under untrusted options: no local name at all.
  open_options from_remote = table_open_options(with(&open_options::untrusted, true), "https://host/a.scp");
  CHECK_FALSE(from_remote.allow_local);
  CHECK(from_remote.confine.empty());
  for (const std::string& name : {up.dir + "/a.ark", up.secret, std::string("/etc/passwd")})
    CHECK_THROWS_MATCHES(read_all("ark:" + name, from_remote), access_error, says("name no local file"));
  // A local table stays confined to its folder; a list, to its first name's.
  CHECK(table_open_options(with(&open_options::untrusted, true), up.dir + "/a.scp").allow_local);
  CHECK(fs::path(
            table_open_options(with(&open_options::untrusted, true), up.dir + "/a.tar," + up.dir + "/b.tar")
                .confine) == fs::path(up.dir));
}

TEST_CASE("untrusted output never writes through a link planted beside it", "[untrusted][links]") {
  uploads up;
  const open_options untrusted = with(&open_options::untrusted, true);
  // A hard link to a file elsewhere, where the output goes: refused before it is truncated.
  fs::create_hard_link(up.secret, up.dir + "/out.ark");
  CHECK_THROWS_MATCHES(table_writer<holder<matrix<float>>>("ark:" + up.dir + "/out.ark", untrusted),
                       access_error, says("a link to a file with another name"));
  CHECK(test::read_file(up.secret).starts_with("AWS_SECRET"));
  // A device the caller names is an output still; a fresh name is written.
  CHECK_NOTHROW(table_writer<holder<matrix<float>>>("ark:/dev/null", untrusted).close());
  CHECK_NOTHROW(table_writer<holder<matrix<float>>>("ark:" + up.dir + "/fresh.ark", untrusted).close());
#if defined(TABLIO_WITH_LMDB)
  // An LMDB folder liblmdb would write through: a linked lock.mdb or data.mdb, a linked folder.
  auto write_db = [&](const std::string& db) {
    table_writer<bytes_holder> out("lmdb:" + db, untrusted);
    out.write("00000000", "value");
    out.close();
  };
  CHECK_NOTHROW(write_db(up.dir + "/good"));
  for (const char* file : {"lock.mdb", "data.mdb"})
    for (bool hard : {false, true}) {
      INFO(file << (hard ? " hard" : " symbolic"));
      std::string db = up.dir + "/db-" + file + (hard ? "-hard" : "-soft");
      fs::create_directory(db);
      if (hard)
        fs::create_hard_link(up.secret, db + "/" + file);
      else
        fs::create_symlink(up.secret, db + "/" + file);
      CHECK_THROWS_AS(write_db(db), access_error);
      CHECK(test::read_file(up.secret).starts_with("AWS_SECRET"));
    }
  fs::create_directory(up.root / "elsewhere");
  fs::create_directory_symlink(up.root / "elsewhere", up.dir + "/linked-db");
  CHECK_THROWS_MATCHES(write_db(up.dir + "/linked-db"), access_error, says("is not a folder"));
  CHECK(fs::is_empty(up.root / "elsewhere"));
#endif
}

TEST_CASE("what a script line names that no input has is the script's format error", "[untrusted]") {
  uploads up;
  for (const std::string& target : {std::string("a.ark:99999999999999999999"), std::string("a.ark\0x", 7)}) {
    INFO(detail::printable(target));
    CHECK_THROWS_MATCHES(read_all(up.script(target), {}), format_error, says("upload.scp") && says("utt0"));
  }
  // A key an output cannot hold, from an input being copied, is a key_error.
  table_writer<bytes_holder> out("tar:" + up.dir + "/out.tar");
  CHECK_THROWS_AS(out.write("../escape", "x"), key_error);
}

TEST_CASE("keys longer than the token limit are refused in every framing", "[untrusted]") {
  test::temp_dir dir;
  const std::string key(70000, 'k');
  {
    example e;
    e.features["key"] = std::vector<std::string>{key};
    table_writer<example_holder> out("tfrecord:" + (dir / "k.tfrecord"));
    out.write("00000000", e);
    out.close();
  }
  for (sequential_table_reader<example_holder> r("tfrecord,key=key:" + (dir / "k.tfrecord")); !r.done();
       r.next())
    CHECK(r.key() == key);  // trusted: within the default 1 MiB
  // The same key through a tar file and a script: written, read trusted, refused untrusted.
  auto read_all_bytes = [&](const std::string& wspec, const std::string& rspec, const open_options& o) {
    {
      table_writer<bytes_holder> out(wspec);
      out.write(key, "value");
      out.close();
    }
    for (sequential_table_reader<bytes_holder> r(rspec, o); !r.done(); r.next()) (void)r.value();
  };
  const std::string tar = "tar:" + (dir / "k.tar");
  const std::string scripted = "ark,scp:" + (dir / "k.ark") + "," + (dir / "k.scp");
  CHECK_NOTHROW(read_all_bytes(tar, tar, {}));
  CHECK_THROWS_MATCHES(read_all_bytes(tar, tar, with(&open_options::untrusted, true)), format_error,
                       says("70000 bytes from") && says("max_token_bytes"));
  CHECK_NOTHROW(read_all_bytes(scripted, "scp:" + (dir / "k.scp"), {}));
  CHECK_THROWS_MATCHES(
      read_all_bytes(scripted, "scp:" + (dir / "k.scp"), with(&open_options::untrusted, true)), format_error,
      says("a key of at most 65536 bytes"));
  CHECK_THROWS_MATCHES((random_access_table_reader<bytes_holder>("scp:" + (dir / "k.scp"),
                                                                 with(&open_options::untrusted, true))
                            .contains("x")),
                       format_error, says("a key of at most 65536 bytes"));
}

TEST_CASE("an IDX file of items of no values is refused, not billions of entries", "[untrusted]") {
  test::temp_dir dir;
  const unsigned char head[] = {0, 0, 8, 2, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};  // 2^32-1 items of 0 bytes
  write_text(dir / "empty-idx2-ubyte", std::string_view(reinterpret_cast<const char*>(head), sizeof head));
  CHECK_THROWS_MATCHES(idx_file(dir / "empty-idx2-ubyte"), format_error, says("items of 0 values"));
  CHECK_THROWS_MATCHES(read_all("idx:" + (dir / "empty-idx2-ubyte"), {}), format_error,
                       says("items of 0 values"));
  idx_writer out(open_output(dir / "w-idx2-ubyte"), idx_type::u8, {0});
  CHECK_THROWS_MATCHES(out.write_item(std::span<const float>()), usage_error, says("holds no values"));
}

TEST_CASE("a URL cut short in a message keeps no credentials", "[untrusted]") {
  CHECK(excerpt("https://user:SECRETPW@host/x?sig=SIG") == "https://host/x");
  CHECK(quoted_excerpt("ark:https://user:SECRETPW@host/a/long/path/x.ark |").find("SEC") ==
        std::string::npos);
}

TEST_CASE("a table that is a folder is confined to itself, and what lies outside is outside, found or not",
          "[untrusted][links]") {
  uploads up;
  const open_options untrusted = with(&open_options::untrusted, true);
#if defined(TABLIO_WITH_LMDB)
  // One upload's database links another's data: refused, whether or not the name ends in '/'.
  for (const char* tenant : {"tenantA", "tenantB"}) fs::create_directory(up.dir + "/" + tenant);
  {
    table_writer<bytes_holder> out("lmdb:" + up.dir + "/tenantA");
    out.write("00000000", "A's record");
    out.close();
  }
  fs::create_symlink("../tenantA/data.mdb", up.dir + "/tenantB/data.mdb");
  auto read_db = [&](const std::string& name) {
    for (sequential_table_reader<bytes_holder> r("lmdb:" + name, untrusted); !r.done(); r.next())
      (void)r.value();
  };
  CHECK_NOTHROW(read_db(up.dir + "/tenantA"));
  CHECK_THROWS_MATCHES(read_db(up.dir + "/tenantB"), access_error, says("outside the confining folder"));
  CHECK_THROWS_MATCHES(read_db(up.dir + "/tenantB/"), access_error, says("outside the confining folder"));
#endif
  // A name outside that does not exist is refused as one that does.
  for (const std::string& target : {std::string("/etc/passwd"), std::string("/etc/no-such-file-here"),
                                    up.dir + "/../no-such-file", std::string("/no-such-folder/x")}) {
    INFO(target);
    CHECK_THROWS_MATCHES(read_all(up.script(target), untrusted), access_error,
                         says("outside the confining folder"));
  }
  CHECK_THROWS_AS(read_all(up.script(up.dir + "/missing.ark"), up.confined()), io_error);  // inside: missing
  // A name is judged where its links lead: through a link to the root, ".." climbs from there, and
  // a file out there is outside whether or not it exists (no oracle of what exists).
  fs::create_directory_symlink("/", up.dir + "/root");
  for (const char* target : {"/root/../etc/passwd", "/root/../etc/no-such-file-here", "/root/../no-such/x",
                             "/root/etc/no-such-file-here"}) {
    INFO(target);
    CHECK_THROWS_MATCHES(read_all(up.script(up.dir + target), untrusted), access_error,
                         says("outside the confining folder"));
  }
  // A link to a folder that does not exist tells nothing either: what lies through it is outside.
  fs::create_directory_symlink("/no-such-folder-here", up.dir + "/nowhere");
  CHECK_THROWS_MATCHES(read_all(up.script(up.dir + "/nowhere/x"), untrusted), access_error, says("outside"));
  CHECK_THROWS_AS(read_all(up.script(up.dir + "/no-such/missing.ark"), untrusted), io_error);  // inside
  // ".." past a part that does not exist cannot be followed: outside, as the system cannot open it.
  CHECK_THROWS_MATCHES(read_all(up.script(up.dir + "/no-such/../a.ark"), untrusted), access_error,
                       says("outside"));
}

TEST_CASE("a script written to that names no output is the script's format error", "[untrusted]") {
  uploads up;
  write_text(up.dir + "/w.scp", "utt0 o.ark:5\n");
  table_writer<holder<matrix<float>>> out("scp,p:" + up.dir + "/w.scp");
  CHECK_THROWS_MATCHES(out.write("utt0", matrix<float>(1, 1)), format_error, says("w.scp") && says("utt0"));
}

TEST_CASE("a TFRecord key= key obeys the open's token limit", "[untrusted]") {
  test::temp_dir dir;
  {
    example e;
    e.features["key"] = std::vector<std::string>{std::string(70000, 'k')};
    table_writer<example_holder> out("tfrecord:" + (dir / "k.tfrecord"));
    out.write("00000000", e);
    out.close();
  }
  auto read_keyed = [&](const open_options& o) {
    for (sequential_table_reader<example_holder> r("tfrecord,key=key:" + (dir / "k.tfrecord"), o); !r.done();
         r.next())
      (void)r.value();
  };
  CHECK_NOTHROW(read_keyed({}));
  CHECK_THROWS_MATCHES(read_keyed(with(&open_options::untrusted, true)), format_error,
                       says("at most 65536 bytes") && says("70000 bytes from"));
}

TEST_CASE("a link planted in an upload's folder does not carry its confinement elsewhere",
          "[untrusted][links]") {
  uploads up;
  const open_options untrusted = with(&open_options::untrusted, true);
  // Another tenant's folder, and links to it planted in this upload's.
  const std::string other = up.root / "other";
  fs::create_directory(other);
  fs::copy_file(up.dir + "/a.ark", other + "/a.ark");
  fs::create_directory_symlink(other, up.dir + "/linked");
  CHECK_THROWS_MATCHES(read_all("ark:" + up.dir + "/linked/a.ark", untrusted), access_error, says("outside"));
  {
    test::in_folder here(up.root.path);
    CHECK_THROWS_MATCHES(read_all("ark:up/linked/a.ark", untrusted), access_error, says("outside"));
  }
#if defined(TABLIO_WITH_LMDB)
  {
    table_writer<bytes_holder> out("lmdb:" + other + "/db");
    out.write("00000000", "the other's record");
    out.close();
  }
  fs::create_directory_symlink(other + "/db", up.dir + "/db");
  for (const std::string& name : {up.dir + "/db", up.dir + "/db/"}) {
    INFO(name);
    CHECK_THROWS_MATCHES(
        [&] {
          for (sequential_table_reader<bytes_holder> r("lmdb:" + name, untrusted); !r.done(); r.next())
            (void)r.value();
        }(),
        access_error, says("outside"));
  }
#endif
  // A link to a missing file elsewhere is refused as a link to an existing one is.
  fs::create_symlink(up.root / "no-such-file.ark", up.dir + "/dangling.ark");
  CHECK_THROWS_MATCHES(read_all(up.script(up.dir + "/dangling.ark"), up.confined()), access_error,
                       says("outside"));
  CHECK_THROWS_MATCHES(read_all(up.script(up.dir + "/linked/no-such-file.ark"), up.confined()), access_error,
                       says("outside"));
}

TEST_CASE("script lines read or written that name no file are the script's errors", "[untrusted]") {
  uploads up;
  CHECK_THROWS_MATCHES(read_all(up.script(":5"), {}), format_error, says("utt0"));
  write_text(up.dir + "/w.scp", "other " + up.dir + "/o.ark\n");
  table_writer<holder<matrix<float>>> out("scp:" + up.dir + "/w.scp");
  CHECK_THROWS_AS(out.write("utt0", matrix<float>(1, 1)), key_error);
}

TEST_CASE("what one table reads in all is bounded by the bytes of what it names", "[untrusted]") {
  uploads up;
  const open_options untrusted = with(&open_options::untrusted, true);
  {
    table_writer<holder<matrix<float>>> out("ark,scp:" + up.dir + "/m.ark," + up.dir + "/m.scp");
    for (int i = 0; i < 8; ++i) out.write("m" + std::to_string(i), matrix<float>(64, 64));
    out.close();
  }
  // Each line its own matrix: the file's bytes, once.
  CHECK_NOTHROW(read_all("scp:" + up.dir + "/m.scp", untrusted));
  // Many lines pointing at the same matrix: refused once they read 4 times what the script names.
  std::string again;
  for (int i = 0; i < 200; ++i) again += "u" + std::to_string(i) + " " + up.dir + "/m.ark:3\n";
  write_text(up.dir + "/again.scp", again);
  CHECK_THROWS_MATCHES(read_all("scp:" + up.dir + "/again.scp", untrusted), format_error,
                       says("limits::max_table_expansion") && says("again.scp"));
  CHECK_NOTHROW(read_all("scp:" + up.dir + "/again.scp", {}));  // trusted: no bound unless asked
  open_options bounded;
  bounded.parse_limits.max_table_expansion = 2;
  CHECK_THROWS_MATCHES(read_all("scp:" + up.dir + "/again.scp", bounded), format_error,
                       says("2 times the bytes"));
  // Under p the refusal leaves entries out, and every later one: the budget stays spent.
  std::size_t read = 0;
  for (matrix_reader r("scp,p:" + up.dir + "/again.scp", untrusted); !r.done(); r.next()) ++read;
  CHECK(read < 40);  // 4 times the 8 matrices the file holds, and no more, of 200 lines
  // A line looked up again (a dataset's next epoch) is the caller's reading, not counted again.
  {
    random_access_table_reader<holder<matrix<float>>> r("scp:" + up.dir + "/m.scp", untrusted);
    for (int epoch = 0; epoch < 10; ++epoch)
      for (int i = 0; i < 8; ++i) CHECK(r.at("m" + std::to_string(i)).num_rows() == 64);
  }
  // Lookups count as reading in order does.
  CHECK_THROWS_MATCHES(
      [&] {
        random_access_table_reader<holder<matrix<float>>> r("scp:" + up.dir + "/again.scp", untrusted);
        for (int i = 0; i < 200; ++i) (void)r.at("u" + std::to_string(i));
      }(),
      format_error, says("limits::max_table_expansion"));
  // Segments that cut one recording again and again: bounded in samples.
  {
    table_writer<wave_holder> out("ark:" + up.dir + "/wav.ark");
    out.write("rec", wave_data(16000, matrix<float>(1, 16000)));
    out.close();
  }
  std::string segments;
  for (int i = 0; i < 20; ++i) segments += "s" + std::to_string(100 + i) + " rec 0 1\n";
  write_text(up.dir + "/segments", segments);
  auto cut_all = [&](const open_options& o) {
    int n = 0;
    for (sequential_table_reader<wave_holder> r("ark,segments=" + up.dir + "/segments:" + up.dir + "/wav.ark",
                                                o);
         !r.done(); r.next())
      ++n;
    return n;
  };
  CHECK_THROWS_MATCHES(cut_all(untrusted), format_error, says("limits::max_table_expansion") && says("s104"));
  CHECK(cut_all({}) == 20);
  CHECK(tightest(untrusted_limits, default_limits).max_table_expansion == 4);
}

#if defined(TABLIO_WITH_LMDB)
TEST_CASE("LMDB records that share one overflow run are bounded as a script's lines are",
          "[untrusted][lmdb]") {
  uploads up;
  const std::string db = up.dir + "/db";
  fs::create_directory(db);
  {
    table_writer<bytes_holder> out("lmdb:" + db);
    out.write("00000000", std::string(1 << 20, 'v'));  // a run of 257 pages
    for (int i = 1; i < 200; ++i) {
      const std::string n = std::to_string(i);
      out.write(std::string(8 - n.size(), '0') + n, std::string(2100, 'w'));  // a page each
    }
    out.close();
  }
  // Every record after the first made to point at the first one's run, with its size.
  std::string bytes = test::read_file(db + "/data.mdb");
  auto u16 = [&](std::size_t at) {
    return std::uint16_t(std::uint8_t(bytes[at]) | std::uint8_t(bytes[at + 1]) << 8);
  };
  std::optional<std::string> first_run;
  int patched = 0;
  for (std::size_t page = 2 * 4096; page + 4096 <= bytes.size(); page += 4096) {
    std::uint64_t number = 0;  // a page's header starts with its number: none inside a run
    std::memcpy(&number, bytes.data() + page, 8);
    if (number != page / 4096 || u16(page + 10) != 0x02) continue;  // not a leaf page
    for (std::size_t i = 0; 16 + 2 * i < u16(page + 12); ++i) {
      const std::size_t node = page + u16(page + 16 + 2 * i);
      if ((u16(node + 4) & 0x01) == 0) continue;  // its value is in the page
      const std::size_t run = node + 8 + u16(node + 6);
      if (!first_run) {
        first_run = bytes.substr(run, 8);
        continue;
      }
      bytes.replace(run, 8, *first_run);
      bytes.replace(node, 4, std::string("\0\0\x10\0", 4));  // 1 MiB
      ++patched;
    }
  }
  REQUIRE(patched == 199);
  std::ofstream(db + "/data.mdb", std::ios::binary | std::ios::trunc)
      .write(bytes.data(), std::streamsize(bytes.size()));
  auto read_db = [&](const open_options& o) {
    std::uint64_t total = 0;
    for (sequential_table_reader<bytes_holder> r("lmdb:" + db, o); !r.done(); r.next())
      total += r.value().size();
    return total;
  };
  CHECK(read_db({}) == 200u << 20);  // trusted: what the file says
  CHECK_THROWS_MATCHES(read_db(with(&open_options::untrusted, true)), format_error,
                       says("limits::max_table_expansion") && says("data.mdb"));
}
#endif

TEST_CASE("a file is one file to the table budget by whatever name a line gives it", "[untrusted][links]") {
  uploads up;
  {
    table_writer<holder<matrix<float>>> out("ark:" + up.dir + "/m.ark");
    out.write("m", matrix<float>(64, 64));
    out.close();
  }
  fs::create_symlink("m.ark", up.dir + "/linked.ark");
  fs::create_hard_link(up.dir + "/m.ark", up.dir + "/hard.ark");
  const char* names[] = {"/./m.ark:2", "//m.ark:2", "/linked.ark:2", "/hard.ark:2"};
  std::string renamed;
  for (int i = 0; i < 200; ++i) renamed += "u" + std::to_string(i) + " " + up.dir + names[i % 4] + "\n";
  write_text(up.dir + "/renamed.scp", renamed);
  CHECK_THROWS_MATCHES(read_all("scp:" + up.dir + "/renamed.scp", with(&open_options::untrusted, true)),
                       format_error, says("limits::max_table_expansion"));
}
