// Tar tables: archives GNU tar and Python's tarfile wrote, read as tables; archives tablio
// writes, read back by GNU tar; shards, scripts, random access; and bad headers.
#if !defined(_WIN32)
#include <sys/wait.h>
#endif

#include <cstdlib>
#include <fstream>

#include <tablio/holder/sample.hpp>
#include <tablio/table/shard.hpp>

#include "test_support.hpp"

using namespace tablio;

namespace {

std::vector<std::string> member_lines(const std::string& rspec) {
  std::vector<std::string> lines;
  for (auto& [key, bytes] : sequential_table_reader<bytes_holder>(rspec))
    lines.push_back(key + "\t" + std::to_string(bytes.size()) + "\t" + bytes.substr(0, 1));
  return lines;
}

// Runs a shell command; its exit status.
int run(const std::string& command) {
  int status = std::system(command.c_str());
#if defined(_WIN32)
  return status;
#else
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
#endif
}

matrix<float> numbered_matrix(int i) {
  return matrix<float>(2, 3, std::vector<float>(6, 0.5f * static_cast<float>(i)));
}

}  // namespace

TEST_CASE("a header's checksum is its bytes' sum, unsigned or signed, the field as spaces", "[tar]") {
  std::uint32_t state = 12345;  // the same blocks every run
  std::string block(detail::tar_block, '\0');
  for (int round = 0; round < 200; ++round) {
    for (char& c : block) c = static_cast<char>((state = state * 1103515245u + 12345u) >> 24);
    if (round % 4 == 0) std::memset(block.data(), 'a', 148);  // mostly ASCII, as most headers
    std::uint64_t sum = 0;
    std::int64_t signed_sum = 0;
    for (std::size_t i = 0; i < block.size(); ++i) {
      char c = i >= 148 && i < 156 ? ' ' : block[i];
      sum += static_cast<unsigned char>(c);
      signed_sum += static_cast<signed char>(c);
    }
    CHECK(detail::tar_checksum_matches(block.data(), sum));
    CHECK(detail::tar_checksum_matches(block.data(), static_cast<std::uint64_t>(signed_sum)));
    CHECK_FALSE(detail::tar_checksum_matches(block.data(), sum + 1));
    CHECK_FALSE(detail::tar_checksum_matches(block.data(), sum - 256));
  }
  // All bytes 0xFF: the largest sums.
  std::string ff(detail::tar_block, '\xff');
  CHECK(detail::tar_checksum_matches(ff.data(), 504 * 255 + 8 * 32));
  CHECK(detail::tar_checksum_matches(ff.data(), static_cast<std::uint64_t>(-504 + 8 * 32)));
}

TEST_CASE("archives GNU tar and Python's tarfile wrote read as tables", "[tar][golden]") {
  auto expected = test::expect_entries(test::data_path("tar/members.expect"));
  for (const char* archive : {"gnu-ustar.tar", "gnu-gnu.tar", "gnu-posix.tar", "python-pax.tar"}) {
    INFO(archive);
    // Members of other extensions (".cls"), without one, and directories are not entries.
    CHECK(member_lines("tar:" + test::data_path(std::string("tar/") + archive)) == expected);
    std::vector<std::string> labels;
    for (auto& [key, bytes] : sequential_table_reader<bytes_holder>(
             "tar,ext=cls:" + test::data_path(std::string("tar/") + archive)))
      labels.push_back(key + "=" + bytes);
    CHECK(labels == std::vector<std::string>{"samples/s1=seven\n"});
  }
  random_access_table_reader<bytes_holder> by_key("tar:" + test::data_path("tar/gnu-posix.tar"));
  CHECK(by_key.at("samples/s3") == std::string(700, 'x'));
  CHECK(by_key.at("samples/s1") == "alpha");
  CHECK_FALSE(by_key.contains("README"));
}

TEST_CASE("archives tablio writes are what GNU tar reads", "[tar][peer][unix-tools]") {
  test::temp_dir dir;
  test::in_folder here(dir.path);
  std::string long_key = "utterances/" + std::string(120, 'u');
  {
    table_writer<holder<matrix<float>>> out("tar:feats.tar");
    out.write("a", numbered_matrix(1));
    out.write("speaker2/b", numbered_matrix(2));
    out.write(long_key, numbered_matrix(3));  // a pax header holds the long name
    out.close();
  }
  std::string archive = test::read_file("feats.tar");
  CHECK(archive.size() % 10240 == 0);  // ended as GNU tar ends archives: a whole record
  CHECK(archive.substr(archive.size() - 1024) == std::string(1024, '\0'));
  // Each member is an entry's binary object, as an archive holds it after the key.
  REQUIRE(run("tar -tf feats.tar > listing.txt") == 0);
  CHECK(test::read_file("listing.txt") == "a.bin\nspeaker2/b.bin\n" + long_key + ".bin\n");
  REQUIRE(run("tar -xf feats.tar") == 0);
  std::string object;
  encode_record<holder<matrix<float>>>(object, numbered_matrix(2));
  CHECK(test::read_file("speaker2/b.bin") == object);
  encode_record<holder<matrix<float>>>(object, numbered_matrix(3));
  CHECK(test::read_file(long_key + ".bin") == object);
  // GNU tar finds nothing to warn about.
  CHECK(run("tar -tvf feats.tar > /dev/null 2> warnings.txt") == 0);
  CHECK(test::read_file("warnings.txt").empty());
  // Python's tarfile (which WebDataset reads shards with) reads the same members.
  REQUIRE(run("/usr/bin/python3 -c \"import tarfile; t = tarfile.open('feats.tar'); "
              "print(' '.join(f'{m.name}={m.size}' for m in t))\" > python.txt") == 0);
  CHECK(test::read_file("python.txt") == "a.bin=" + std::to_string(object.size()) +
                                             " speaker2/b.bin=" + std::to_string(object.size()) + " " +
                                             long_key + ".bin=" + std::to_string(object.size()) + "\n");
  // And the table reads back.
  std::vector<std::string> keys;
  for (auto& [key, m] : sequential_table_reader<holder<matrix<float>>>("tar:feats.tar")) {
    keys.push_back(key);
    CHECK(m == numbered_matrix(static_cast<int>(keys.size())));
  }
  CHECK(keys == std::vector<std::string>{"a", "speaker2/b", long_key});
}

TEST_CASE("ark -> tar -> ark gives the archive back byte for byte", "[tar][table]") {
  test::temp_dir dir;
  const std::string feats = test::data_path("kaldi/scp/feats.ark");
  using H = holder<matrix<float>>;
  {
    table_writer<H> out("tar:" + (dir / "feats.tar"));
    for (auto& [key, m] : sequential_table_reader<H>("ark:" + feats)) out.write(key, m);
  }
  {
    table_writer<H> out("ark:" + (dir / "back.ark"));
    for (auto& [key, m] : sequential_table_reader<H>("tar:" + (dir / "feats.tar"))) out.write(key, m);
  }
  CHECK(test::read_file(dir / "back.ark") == test::read_file(feats));
  // Other holders name their members by their records' kind.
  {
    table_writer<example_holder> out("tar:" + (dir / "examples.tar"));
    example ex;
    ex.set("label", std::vector<std::int64_t>{3});
    out.write("e1", ex);
  }
  CHECK(member_lines("tar,ext=example:" + (dir / "examples.tar")).size() == 1);
}

TEST_CASE("tar shards, scripts and random access", "[tar][shard]") {
  test::temp_dir dir;
  test::in_folder here(dir.path);
  {
    table_writer<basic_holder<std::int32_t>> out("tar,scp,maxcount=2:shard-%06d.tar,all.scp");
    for (int i = 0; i < 5; ++i) out.write("k" + std::to_string(i), i * 10);
  }
  CHECK(std::filesystem::exists("shard-000000.tar"));
  CHECK(std::filesystem::exists("shard-000002.tar"));
  CHECK_FALSE(std::filesystem::exists("shard-000003.tar"));
  std::string script = test::read_file("all.scp");
  CHECK(script.starts_with("k0 shard-000000.tar:0\nk1 shard-000000.tar:1024\nk2 shard-000001.tar:0\n"));
  std::vector<std::string> all;
  for (auto& [key, v] : sequential_table_reader<basic_holder<std::int32_t>>("tar:shard-%06d.tar"))
    all.push_back(key + "=" + std::to_string(v));
  CHECK(all == std::vector<std::string>{"k0=0", "k1=10", "k2=20", "k3=30", "k4=40"});
  std::vector<std::string> odd;
  for (auto& [key, v] : sequential_table_reader<basic_holder<std::int32_t>>("tar,shard=1/2:shard-%06d.tar"))
    odd.push_back(key);
  CHECK(odd == std::vector<std::string>{"k1", "k3"});
  random_access_table_reader<basic_holder<std::int32_t>> by_script("scp:all.scp");
  CHECK(by_script.at("k3") == 30);
  random_access_table_reader<basic_holder<std::int32_t>> by_tar("tar:shard-%06d.tar");
  CHECK(by_tar.at("k4") == 40);
  CHECK(by_tar.at("k0") == 0);
  CHECK_FALSE(by_tar.contains("k9"));
  // From a pipe the values read ahead are kept.
  random_access_table_reader<basic_holder<std::int32_t>> piped(
      "tar:" + test::command("file shard-000001.tar") + " |");
  CHECK(piped.at("k3") == 30);
  CHECK(piped.at("k2") == 20);
  by_script.close();  // (Windows renames no file that is open)
  by_tar.close();
  piped.close();
  // A lost shard is no end of the dataset: shards numbered after it are an error, not cut off.
  std::filesystem::rename("shard-000001.tar", "shard-1.tar");  // not a name of the pattern's
  CHECK_THROWS_WITH(expand_shards("shard-%06d.tar"),
                    Catch::Contains("shards are numbered on past a missing one ('shard-000002.tar' exists): "
                                    "cannot find shard 1 of 'shard-%06d.tar'") &&
                        Catch::Contains("shard-000001.tar"));
  CHECK_THROWS_AS(sequential_table_reader<basic_holder<std::int32_t>>("tar:shard-%06d.tar"), io_error);
  std::filesystem::rename("shard-000002.tar", "shard-2.tar");
  CHECK(expand_shards("shard-%06d.tar") == std::vector<std::string>{"shard-000000.tar"});
}

TEST_CASE("shards are indexed beside them once all are complete, as wids reads an index",
          "[tar][shard][index]") {
  test::temp_dir dir;
  test::in_folder here(dir.path);
  {
    table_writer<basic_holder<std::int32_t>> out("tar,maxcount=2:train-%06d.tar");
    for (int i = 0; i < 5; ++i) {
      out.write("k" + std::to_string(i), i);
      CHECK_FALSE(std::filesystem::exists("train.shardindex.json"));  // not before the last shard
    }
  }
  auto size = [](const char* f) { return std::to_string(std::filesystem::file_size(f)); };
  CHECK(test::read_file("train.shardindex.json") ==
        "{\n  \"__kind__\": \"wids-shard-index-v1\",\n  \"wids_version\": 1,\n  \"name\": \"train\",\n"
        "  \"format\": \"tar\",\n  \"value_type\": \"bin\",\n  \"shardlist\": [\n"
        "    {\"url\": \"train-000000.tar\", \"nsamples\": 2, \"filesize\": " +
            size("train-000000.tar") +
            ", \"first_key\": \"k0\", \"last_key\": \"k1\", \"sorted\": true},\n"
            "    {\"url\": \"train-000001.tar\", \"nsamples\": 2, \"filesize\": " +
            size("train-000001.tar") +
            ", \"first_key\": \"k2\", \"last_key\": \"k3\", \"sorted\": true},\n"
            "    {\"url\": \"train-000002.tar\", \"nsamples\": 1, \"filesize\": " +
            size("train-000002.tar") +
            ", \"first_key\": \"k4\", \"last_key\": \"k4\", \"sorted\": true}\n  ]\n}\n");
  // A shard whose keys do not increase is not marked sorted: its first and last keys bound nothing.
  {
    table_writer<basic_holder<std::int32_t>> out("tar,maxcount=2:u-%06d.tar");
    for (const char* key : {"b", "a", "c"}) out.write(key, 0);
  }
  std::string unsorted = test::read_file("u.shardindex.json");
  CHECK(unsorted.find("\"first_key\": \"b\", \"last_key\": \"a\"}") != std::string::npos);
  CHECK(unsorted.find("\"first_key\": \"c\", \"last_key\": \"c\", \"sorted\": true}") != std::string::npos);
  // shard_table indexes the TFRecord and tar shards it writes; a writer given up writes none.
  std::filesystem::create_directory("out");
  shard_table<bytes_holder>("tar:train-%06d.tar", "tar:out/all.tar", 2);
  std::string index = test::read_file("out/all.shardindex.json");
  CHECK(index.find("\"url\": \"all-00000-of-00002.tar\", \"nsamples\": 3, \"filesize\": " +
                   std::to_string(std::filesystem::file_size("out/all-00000-of-00002.tar"))) !=
        std::string::npos);
  CHECK(index.find("\"first_key\": \"k3\", \"last_key\": \"k4\"") != std::string::npos);
  // TFRecord files keep no keys: the tar shards' own are refused, record numbers taken.
  CHECK_THROWS_AS(shard_table<bytes_holder>("tar:train-%06d.tar", "tfrecord:out/t.tfrecord", 2), key_error);
  {
    table_writer<bytes_holder> numbered("tfrecord:numbered.tfrecord");
    for (int i = 0; i < 5; ++i) numbered.write(ordinal_key(static_cast<std::uint64_t>(i)), "x");
  }
  shard_table<bytes_holder>("tfrecord:numbered.tfrecord", "tfrecord:out/t.tfrecord", 2);
  CHECK(test::read_file("out/t.shardindex.json").find("\"format\": \"tfrecord\"") != std::string::npos);
  // A name numbered already is refused before anything is read or written.
  CHECK_THROWS_MATCHES(
      shard_table<bytes_holder>("tar:train-%06d.tar", "tar:out/n-%06d.tar", 3), usage_error,
      test::says("'out/n-%06d.tar' is a numbered name") && test::says("train.tar: train-00000-of-00003.tar"));
  for (const auto& file : std::filesystem::directory_iterator("out"))
    CHECK_FALSE(file.path().filename().string().starts_with("n-"));
  try {
    table_writer<basic_holder<std::int32_t>> out("tar,maxcount=1:given-up-%03d.tar");
    out.write("a", 1);
    out.write("b", 2);
    throw std::runtime_error("the job failed");
  } catch (const std::runtime_error&) {
  }
  CHECK(std::filesystem::exists("given-up-001.tar"));
  CHECK_FALSE(std::filesystem::exists("given-up.shardindex.json"));
  CHECK(shard_index_name("s3://b/train/shard-{000000..000099}.tar") == "s3://b/train/shard.shardindex.json");
  CHECK(shard_index_name("train@16") == "train.shardindex.json");
}

TEST_CASE("brace patterns name shards as WebDataset writes them", "[tar][shard]") {
  test::temp_dir dir;
  test::in_folder here(dir.path);
  {
    table_writer<basic_holder<std::int32_t>> out("tar,maxcount=2:s-%06d.tar");
    for (int i = 0; i < 6; ++i) out.write("k" + std::to_string(i), i);
  }
  auto keys = [](const std::string& rspec) {
    std::string all;
    for (auto& [key, v] : sequential_table_reader<basic_holder<std::int32_t>>(rspec)) all += key;
    return all;
  };
  CHECK(keys("tar:s-{000000..000002}.tar") == "k0k1k2k3k4k5");
  CHECK(keys("tar:s-{000002..000001}.tar") == "k4k5k2k3");             // descending, as braceexpand gives
  CHECK(keys("tar:s-00000{0,2}.tar,s-000001.tar") == "k0k1k4k5k2k3");  // a list's commas vs the braces'
  CHECK(keys("tar:s-{00000{1,2},000000}.tar") == "k2k3k4k5k0k1");      // nested
  CHECK_THROWS_WITH(expand_shards("s-{000000..000003}.tar"),
                    Catch::Contains("cannot find shard 3 of 4 of 's-{000000..000003}.tar'"));
  // Refused before any name is made, and a product of braces once it passes the bound.
  CHECK_THROWS_MATCHES(expand_shards("s-{0..99999999}.tar"), usage_error,
                       Catch::Message("'{0..99999999}' names more than 1000000 shards"));
  CHECK_THROWS_MATCHES(expand_shards("s-{0..999}-{0..9999}.tar"), usage_error,
                       Catch::Message("'s-{0..999}-{0..9999}.tar' names more than 1000000 shards"));
  CHECK(expand_shards("plain{x}.tar") ==
        std::vector<std::string>{"plain{x}.tar"});  // "{x}" stands for itself
}

TEST_CASE("numbered shards of any width keep every entry, written and read", "[tar][shard]") {
  test::temp_dir dir;
  test::in_folder here(dir.path);
  {
    table_writer<bytes_holder> out("tar,maxcount=1,ext=txt:s-%040d.tar");
    for (int i = 0; i < 3; ++i)
      out.write("k" + std::to_string(i), std::string(1, static_cast<char>('a' + i)));
  }
  for (int i = 0; i < 3; ++i)  // distinct names; one name for all made reading loop forever
    REQUIRE(std::filesystem::exists("s-" + std::string(39, '0') + std::to_string(i) + ".tar"));
  CHECK(member_lines("tar,ext=txt:s-%040d.tar") ==
        std::vector<std::string>{"k0\t1\ta", "k1\t1\tb", "k2\t1\tc"});
  // A width of 100 digits or more is refused, not taken as a plain name.
  CHECK_THROWS_WITH(table_writer<bytes_holder>("tar,maxcount=1:s-%0100d.tar"),
                    Catch::Contains("more than 99 digits"));
  CHECK_THROWS_WITH(member_lines("tar:s-%0100d.tar"), Catch::Contains("more than 99 digits"));
}

TEST_CASE("keys a tar member cannot carry are refused", "[tar][bad]") {
  test::temp_dir dir;
  table_writer<bytes_holder> out("tar:" + (dir / "x.tar"));
  CHECK_THROWS_WITH(out.write("a.b", "x"), Catch::Contains("cannot name a tar member"));
  CHECK_THROWS_WITH(out.write("/abs", "x"), Catch::Contains("cannot name a tar member"));
  CHECK_THROWS_WITH(out.write("up/../x", "x"), Catch::Contains("cannot name a tar member"));
  CHECK_NOTHROW(out.write("dir.d/name", "x"));
  CHECK_THROWS_AS(table_writer<bytes_holder>("tar,maxcount=3:" + (dir / "plain.tar")), usage_error);
  for (const char* bad : {"tar,ext=:x", "tar,maxcount=0:x", "tar,shard=0/2:x", "tar,key=k:x"})
    CHECK_FALSE(parse_wspecifier(bad));
  CHECK_FALSE(parse_rspecifier("tar,maxcount=2:x"));
}

TEST_CASE("members whose keys leave the archive's folder are refused unless asked for", "[tar][bad]") {
  test::temp_dir dir;
  const std::string path = dir / "crafted.tar";
  for (const std::string name : {"../evil.bin", "/abs/x.bin", "a/../../up.bin", "a/b/../../../c.bin"}) {
    INFO(name);
    {
      writer w = open_output(path);
      for (const std::string& member : {std::string("ok.bin"), name}) {
        detail::put_tar_header(w, member, 1, '0');
        w.write("x", 1);
        detail::put_tar_padding(w, 1);
      }
      w.write(std::string(1024, '\0'));  // the end blocks
      w.close();
    }
    std::vector<std::string> keys;
    try {
      for (auto& [key, bytes] : sequential_table_reader<bytes_holder>("tar:" + path)) keys.push_back(key);
      FAIL("no error");
    } catch (const format_error& e) {
      CHECK(keys == std::vector<std::string>{"ok"});
      CHECK(e.path() == path);
      CHECK(e.offset() == 1024);
      CHECK_THAT(e.what(), Catch::Contains(quoted_excerpt(name)) && Catch::Contains("unsafekeys"));
    }
    random_access_table_reader<bytes_holder> by_key("tar:" + path);
    CHECK_THROWS_AS(by_key.contains("x"), format_error);
    // A caller that checks keys itself gets them as the member names give them.
    keys.clear();
    for (auto& [key, bytes] : sequential_table_reader<bytes_holder>("tar,unsafekeys:" + path))
      keys.push_back(key);
    CHECK(keys == std::vector<std::string>{"ok", std::string(detail::tar_key_and_extension(name).first)});
  }
  CHECK_FALSE(parse_rspecifier("ark,unsafekeys:x"));
  CHECK_FALSE(parse_wspecifier("tar,unsafekeys:x"));
}

TEST_CASE("a member whose key has whitespace or control bytes is an error that quotes them printably",
          "[tar][bad]") {
  test::temp_dir dir;
  const std::string path = dir / "names.tar";
  for (const std::string& name : {std::string("my img.bin"), std::string("a\x1b[2J\rb.bin")}) {
    INFO(name);
    {
      writer w = open_output(path);
      detail::put_tar_header(w, name, 1, '0');
      w.write("x", 1);
      detail::put_tar_padding(w, 1);
      w.close();
    }
    try {
      for (auto& entry : sequential_table_reader<bytes_holder>("tar:" + path)) (void)entry;
      FAIL("no error");
    } catch (const format_error& e) {
      CHECK(e.offset() == 0);
      CHECK_THAT(e.what(), Catch::Contains("no whitespace or unprintable bytes"));
      if (name.starts_with("my"))
        CHECK_THAT(e.what(), Catch::Contains("'my img.bin'"));
      else  // the bytes as \xNN in the message; found() keeps them as they are
        CHECK_THAT(e.what(), Catch::Contains("'a\\x1b[2J\\x0db.bin'") && !Catch::Contains("\x1b"));
      CHECK(e.found().find(name) != std::string::npos);
    }
  }
}

TEST_CASE("a tar file none of whose members has the extension read is an error, not an empty table",
          "[tar][bad][unix-tools]") {
  test::temp_dir dir;
  {
    table_writer<basic_holder<std::int32_t>> out("tar,ext=cls:" + (dir / "s.tar"));
    out.write("a", 1);
    out.write("b", 2);
  }
  CHECK_THROWS_WITH(member_lines("tar:" + (dir / "s.tar")),
                    Catch::Contains("members named KEY.bin") && Catch::Contains("none among its 2 files") &&
                        Catch::Contains("'a.cls'") && Catch::Contains(dir / "s.tar"));
  CHECK(member_lines("tar,ext=cls:" + (dir / "s.tar")).size() == 2);
  CHECK(member_lines("tar,p:" + (dir / "s.tar")).empty());  // under p, it ends the table
  // The member shown is one named KEY.EXT, not metadata or a name with no extension.
  REQUIRE(std::system(
              ("cd '" + dir.path.string() +
               "' && mkdir -p __meta__ && printf m >__meta__/v.json && printf r >README" +
               " && printf j >k.jpg && tar -cf vendor.tar __meta__/v.json README k.jpg && tar -cf meta.tar " +
               "__meta__/v.json README")
                  .c_str()) == 0);
  CHECK_THROWS_MATCHES(member_lines("tar:" + (dir / "vendor.tar")), format_error,
                       test::says("such as 'k.jpg'") && test::says("ext=*, or the sample type"));
  CHECK_THROWS_MATCHES(sequential_table_reader<webdataset_sample_holder>("tar:" + (dir / "meta.tar")),
                       format_error,
                       test::says("grouped as samples") && test::says("none among its 2 files") &&
                           test::says("metadata __NAME__/ are skipped"));
  { table_writer<bytes_holder> out("tar:" + (dir / "empty.tar")); }
  CHECK(member_lines("tar:" + (dir / "empty.tar")).empty());  // no member at all: nothing to read
  // A file of no bytes is no archive (an empty one has its end blocks), as GNU tar says too.
  std::ofstream(dir / "none.tar");
  CHECK(std::system(("tar -tf '" + (dir / "none.tar") + "' 2>/dev/null").c_str()) != 0);
  CHECK_THROWS_WITH(member_lines("tar:" + (dir / "empty.tar") + "," + (dir / "none.tar")),
                    Catch::Contains("format error in '" + (dir / "none.tar") + "' at byte 0") &&
                        Catch::Contains("found an empty file"));
}

TEST_CASE("truncated, misaligned and corrupt tar headers are errors naming file and offset", "[tar][bad]") {
  std::string good = test::read_file(test::data_path("tar/gnu-ustar.tar"));
  test::temp_dir dir;
  auto read_all = [&](const std::string& bytes) {
    std::string path = dir / "bad.tar";
    std::ofstream(path, std::ios::binary) << bytes;
    member_lines("tar:" + path);
  };
  auto expect_error = [&](const std::string& bytes, std::uint64_t offset, const char* what) {
    INFO(what);
    try {
      read_all(bytes);
      FAIL("no error");
    } catch (const format_error& e) {
      CHECK(e.path().ends_with("bad.tar"));
      CHECK(e.offset() == offset);
      CHECK_THAT(e.what(), Catch::Contains(what));
    }
  };
  // The second header (offset 512) cut short.
  expect_error(good.substr(0, 812), 512, "a 512-byte tar header");
  // A checksum that does not match.
  std::string corrupt = good;
  corrupt[512 + 10] ^= 0x20;
  expect_error(corrupt, 512, "checksum");
  // Data that ends before the size its header gives (1024 + 512 padded bytes of s1.bin).
  expect_error(good.substr(0, 1024 + 100), 512, "the archive is truncated");
  // Through a pipe, whose size is not known ahead, found inside the data: said the same way.
  try {
    member_lines("tar:" + test::command("file \"" + (dir / "bad.tar") + "\"") + " |");
    FAIL("no error");
  } catch (const format_error& e) {
    CHECK(e.offset() == 512);
    CHECK(e.key() == "samples/s1");
    CHECK_THAT(e.what(), Catch::Contains("512 bytes of member data (5)") &&
                             Catch::Contains("the end of input inside them (the archive is truncated)"));
  }
  // A size field that is no number.
  std::string bad_size = good;
  std::memcpy(&bad_size[512 + 124], "12x45678901", 11);
  std::uint32_t sum = 0;
  std::memset(&bad_size[512 + 148], ' ', 8);
  for (int i = 0; i < 512; ++i) sum += static_cast<unsigned char>(bad_size[512 + i]);
  std::snprintf(&bad_size[512 + 148], 8, "%06o", sum);
  expect_error(bad_size, 512 + 124, "(key 'samples/s1'): expected a tar size field");  // the name is read
  // A header zeroed inside the archive: the members after it are not lost quietly.
  std::string zeroed = good;
  std::memset(&zeroed[512], 0, 512);
  expect_error(zeroed, 512, "a lone zero block followed by more data");
  // A lone zero block is the end, as GNU tar and tarfile read it; an end on a block boundary
  // without one was cut (GNU tar and tarfile read it as a shorter archive), unless `unended`
  // says the writer leaves the end blocks out.
  CHECK(member_lines("tar:" + test::data_path("tar/gnu-ustar.tar")).size() == 4);
  std::string two_members = good.substr(0, 512 * 4);  // samples/, s1.bin header and data, s1.cls header
  expect_error(good.substr(0, 512 * 3), 512 * 3,
               "expected a tar header, or the zero blocks that end an archive");
  CHECK(member_lines("tar,unended:" + dir / "bad.tar").size() == 1);  // samples/s1.bin
  read_all(good.substr(0, 512 * 3) + std::string(512, '\0'));         // one end block
  read_all(good.substr(0, 512 * 3) + std::string(700, '\0'));         // and zeros short of a second
  CHECK_THROWS_MATCHES(read_all(two_members), format_error,           // s1.cls's data is missing
                       test::says("the archive is truncated"));
}

TEST_CASE("a compressed archive is read with zlib, or is an error that names its compression",
          "[tar][bad][unix-tools]") {
  test::temp_dir dir;
  std::string plain = test::data_path("tar/gnu-ustar.tar"), packed = dir / "shard.tar.gz";
  REQUIRE(std::system(("gzip -c '" + plain + "' > '" + packed + "'").c_str()) == 0);
#if defined(TABLIO_WITH_ZLIB)  // inflated as it is read (test_zlib has more)
  CHECK(member_lines("tar:" + packed) == member_lines("tar:" + plain));
  std::ofstream(dir / "c.tar", std::ios::binary)
      << std::string("\x1f\x8b\x08", 3) << std::string(600, '\x01');
  CHECK_THROWS_WITH(member_lines("tar:" + (dir / "c.tar")), Catch::Contains("c.tar"));
  const std::vector<std::string> others = {"BZh91AY&SY", std::string("\xfd\x37\x7a\x58\x5a\x00", 6),
                                           "\x28\xb5\x2f\xfd"};
#else
  CHECK_THROWS_WITH(member_lines("tar:" + packed),
                    Catch::Contains("format error in '" + packed + "' at byte 0") &&
                        Catch::Contains("found gzip-compressed data") &&
                        Catch::Contains("'gzip -dc FILE |'"));
  const std::vector<std::string> others = {std::string("\x1f\x8b\x08", 3), "BZh91AY&SY",
                                           std::string("\xfd\x37\x7a\x58\x5a\x00", 6), "\x28\xb5\x2f\xfd"};
#endif
  CHECK(member_lines("tar:gzip -dc '" + packed + "' |") == member_lines("tar:" + plain));
  // Shorter than a block, and the other compressions' magic bytes.
  for (const std::string& head : others) {
    std::ofstream(dir / "c.tar", std::ios::binary) << head << std::string(600, '\x01');
    CHECK_THROWS_WITH(member_lines("tar:" + (dir / "c.tar")), Catch::Contains("-compressed data"));
    std::ofstream(dir / "c.tar", std::ios::binary) << head;
    CHECK_THROWS_WITH(member_lines("tar:" + (dir / "c.tar")), Catch::Contains("-compressed data"));
  }
}

TEST_CASE("a tar header claiming 2^60 bytes is refused before anything is read or allocated", "[tar][bad]") {
  std::string archive;
  {
    writer w = memory_writer(archive);
    detail::put_tar_header(w, "huge.bin", std::uint64_t{1} << 60, '0');
    w.close();
  }
  reader r = memory_reader(std::string_view(archive), "huge.tar");
  detail::tar_member m;
  std::string scratch;
  CHECK_THROWS_WITH(
      detail::read_tar_member(r, m, scratch),
      Catch::Contains("1152921504606846976 bytes of member data") && Catch::Contains("truncated"));
  CHECK(scratch.capacity() < 4096);
}

TEST_CASE("a pax header's size comes from its size record alone, bounded and whole", "[tar][bad]") {
  // A pax header with these records, then a member "a.bin" of 3 bytes as its own header says.
  auto archive = [](std::string_view records) {
    std::string out;
    writer w = memory_writer(out);
    detail::put_tar_header(w, "././@PaxHeader", records.size(), 'x');
    w.write(records);
    detail::put_tar_padding(w, records.size());
    detail::put_tar_header(w, "a.bin", 3, '0');
    w.write("abc", 3);
    detail::put_tar_padding(w, 3);
    w.close();
    return out;
  };
  auto first_member = [](const std::string& bytes) {
    reader r = memory_reader(std::string_view(bytes), "pax.tar");
    detail::tar_member m;
    std::string scratch;
    if (!detail::read_tar_member(r, m, scratch)) m.name = "(the end)";
    return m;
  };
  std::string records;
  detail::append_pax_record(records, "path", "notes/a size=9/a.bin");  // " size=" inside a value
  detail::tar_member m = first_member(archive(records));
  CHECK(m.name == "notes/a size=9/a.bin");
  CHECK(m.size == 3);
  records.clear();
  detail::append_pax_record(records, "size", "2");
  CHECK(first_member(archive(records)).size == 2);
  records.clear();
  detail::append_pax_record(records, "size", "1152921504606846976000");  // 22 digits
  CHECK_THROWS_WITH(first_member(archive(records)),
                    Catch::Contains("format error in 'pax.tar' at byte 0") &&
                        Catch::Contains("a pax size of at most 18 decimal digits"));
  CHECK_THROWS_WITH(
      first_member(archive("30 path=cut")),
      Catch::Contains("pax records \"LENGTH key=value\\n\"") && Catch::Contains("'30 path=cut'"));
}
