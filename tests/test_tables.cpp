// Tables over Kaldi archives and scripts, against files real Kaldi wrote and read.
#include <tablio/table/object.hpp>

#include <filesystem>
#include <limits>

#include "test_support.hpp"

using namespace tablio;
namespace fs = std::filesystem;

namespace {

using test::in_folder;
using test::temp_dir;

template <class T>
std::string matrix_line(const std::string& key, const matrix<T>& m) {
  std::vector<T> values(m.data(), m.data() + m.size());
  return key + "\tfloat-matrix\t" + std::to_string(m.num_rows()) + "x" + std::to_string(m.num_cols()) + "\t" +
         test::join(values);
}

using float_matrix_reader = sequential_table_reader<holder<matrix<float>>>;

std::vector<std::string> dump_matrices(const std::string& rspec) {
  std::vector<std::string> lines;
  for (auto [key, value] : float_matrix_reader(rspec)) lines.push_back(matrix_line(key, value));
  return lines;
}

}  // namespace

TEST_CASE("archives and scripts written by Kaldi read to their expectations", "[table][golden]") {
  in_folder here(test::data_path("kaldi/scp"));
  CHECK(dump_matrices("ark:feats.ark") == test::expect_entries("feats.ark.expect"));
  CHECK(dump_matrices("scp:feats.scp") == test::expect_entries("feats.scp.expect"));
  CHECK(dump_matrices("scp:ranges.scp") == test::expect_entries("ranges.scp.expect"));
  CHECK(dump_matrices("scp:files.scp") == test::expect_entries("files.scp.expect"));
  std::vector<std::string> ali;
  for (auto [key, value] : sequential_table_reader<basic_vector_holder<std::int32_t>>("scp:ali.scp"))
    ali.push_back(test::expect_line(key, "int32-vector", value));
  CHECK(ali == test::expect_entries("ali.scp.expect"));
}

TEST_CASE("the ark,scp writer reproduces Kaldi's archive and script byte for byte", "[table][golden]") {
  std::vector<std::pair<std::string, matrix<float>>> entries;
  {
    in_folder here(test::data_path("kaldi/scp"));
    for (auto [key, value] : float_matrix_reader("ark:feats.ark")) entries.emplace_back(key, value);
  }
  temp_dir dir;
  in_folder there(dir.path);
  {
    table_writer<holder<matrix<float>>> out("ark,scp:feats.ark,feats.scp");
    for (const auto& [key, value] : entries) out.write(key, value);
    out.close();
  }
  CHECK(test::read_file("feats.ark") == test::read_file(test::data_path("kaldi/scp/feats.ark")));
  CHECK(test::read_file("feats.scp") == test::read_file(test::data_path("kaldi/scp/feats.scp")));
  {
    table_writer<basic_vector_holder<std::int32_t>> out("ark,scp,t:ali.txt.ark,ali.scp");
    for (auto [key, value] : sequential_table_reader<basic_vector_holder<std::int32_t>>(
             "ark:" + test::data_path("kaldi/scp/ali.txt.ark")))
      out.write(key, value);
  }
  CHECK(test::read_file("ali.txt.ark") == test::read_file(test::data_path("kaldi/scp/ali.txt.ark")));
  CHECK(test::read_file("ali.scp") == test::read_file(test::data_path("kaldi/scp/ali.scp")));
}

TEST_CASE("a script beside what it cannot point into is refused, naming why", "[table][bad]") {
  temp_dir dir;
  in_folder here(dir.path);
  CHECK_THROWS_WITH(
      table_writer<bytes_holder>("tfrecord,scp:r.tfrecord.gz,r.scp"),
      Catch::Contains("'r.tfrecord.gz': a script cannot point into a compressed TFRecord file"));
}

TEST_CASE("the scp writer writes each object to the file its script names", "[table]") {
  temp_dir dir;
  in_folder there(dir.path);
  {
    writer targets = open_output("targets.scp");
    targets.write("b b.mat\na a.mat\n");
    targets.close();
  }
  table_writer<holder<matrix<float>>> out("scp:targets.scp");
  out.write("a", matrix<float>(1, 1, {1.5f}));
  out.write("b", matrix<float>(1, 2, {2, 3}));
  CHECK_THROWS_WITH(out.write("c", matrix<float>()), Catch::Contains("not in the script"));
  out.close();
  CHECK(test::read_file("a.mat") == std::string("\0BFM \4\1\0\0\0\4\1\0\0\0\0\0\xc0\x3f", 19));
  table_writer<holder<matrix<float>>> lenient("scp,p:targets.scp");
  CHECK_NOTHROW(lenient.write("c", matrix<float>()));
  random_access_table_reader<holder<matrix<float>>> back("scp:targets.scp");
  CHECK(back.at("b")(0, 1) == 3.0f);
}

TEST_CASE("truncated and corrupt archives: errors where Kaldi fails, entries before kept under p",
          "[table][bad]") {
  in_folder here(test::data_path("kaldi/bad"));
  SECTION("cut inside a key: a clean end after two entries, as in Kaldi") {
    CHECK(dump_matrices("ark:trunc-in-key.ark").size() == 2);
  }
  SECTION("cut inside an object: an error naming file, offset and key") {
    float_matrix_reader r("ark:trunc-in-object.ark");
    std::vector<std::string> keys;
    try {
      for (auto [key, value] : r) keys.push_back(key);
      FAIL("no error");
    } catch (const format_error& e) {
      CHECK(keys == std::vector<std::string>{"a_0x0", "b_1x1"});
      CHECK(e.path() == "trunc-in-object.ark");
      CHECK(e.key() == "c_3x4");
      CHECK(e.offset().has_value());
    }
  }
  SECTION("the same under p: the entries before it, and the error kept") {
    float_matrix_reader r("p,ark:trunc-in-object.ark");
    int count = 0;
    for ([[maybe_unused]] const auto& entry : r) ++count;
    CHECK(count == 2);
    CHECK_THAT(r.error(), Catch::Contains("c_3x4"));
  }
  SECTION("a wrong marker: Kaldi's 8 vs. 4 with the key") {
    sequential_table_reader<basic_holder<std::int32_t>> r("ark:int32-marker08.ark");
    CHECK(r.key() == "a_zero");
    r.next();
    CHECK(r.value() == -1);
    CHECK_THROWS_WITH(r.next(), Catch::Contains("8 vs. 4") && Catch::Contains("c_max"));
    random_access_table_reader<basic_holder<std::int32_t>> random("ark:int32-marker08.ark");
    CHECK(random.at("b_neg") == -1);
    CHECK_THROWS_WITH(random.contains("e_mid"), Catch::Contains("8 vs. 4"));
    random_access_table_reader<basic_holder<std::int32_t>> lenient("p,ark:int32-marker08.ark");
    CHECK_FALSE(lenient.contains("e_mid"));
    CHECK(lenient.contains("a_zero"));
  }
  SECTION("bad-range.scp: Kaldi's 'Invalid range specifier' naming the key") {
    float_matrix_reader r("scp:bad-range.scp");
    CHECK(r.value().num_rows() == 5);
    r.next();
    CHECK_THROWS_WITH(r.value(), Catch::Contains("Invalid range specifier for matrix: ,2:3") &&
                                     Catch::Contains("utt2_bad"));
  }
}

TEST_CASE("sorted and unsorted archives behave as in Kaldi", "[table][options]") {
  in_folder here(test::data_path("kaldi/bad"));
  using reader_t = random_access_table_reader<basic_holder<std::int32_t>>;
  SECTION("s,ark asking for a key before the first: absent, no error") {
    reader_t r("s,ark:unsorted.ark");
    CHECK_FALSE(r.contains("k_a"));
  }
  SECTION("s,ark asking for k_c meets the disorder") {
    reader_t r("s,ark:unsorted.ark");
    CHECK_THROWS_WITH(r.contains("k_c"), Catch::Contains("not in sorted order: 'k_b' is followed by 'k_a'"));
  }
  SECTION("s,ark k_b, k_a, k_c") {
    reader_t r("s,ark:unsorted.ark");
    CHECK(r.at("k_b") == 2);
    CHECK_FALSE(r.contains("k_a"));
    CHECK_THROWS_AS(r.contains("k_c"), format_error);
  }
  SECTION("ark without s finds everything") {
    reader_t r("ark:unsorted.ark");
    CHECK(r.at("k_c") == 3);
    CHECK(r.at("k_a") == 1);
    CHECK(!r.find("k_z"));
    CHECK_THROWS_WITH(r.at("k_z"), Catch::Contains("k_z"));
  }
  SECTION("s,scp on an unsorted script fails to open; scp sorts it") {
    CHECK_THROWS_WITH(reader_t("s,scp:unsorted.scp"), Catch::Contains("sorted script"));
    reader_t r("scp:unsorted.scp");
    CHECK(r.at("k_a") == 1);
    CHECK(r.at("k_c") == 3);
  }
  SECTION("duplicate keys: random access fails, sequential reads all 4, scp fails to open") {
    reader_t r("ark:duplicate.ark");
    CHECK_THROWS_WITH(r.contains("k_zz"), Catch::Contains("duplicate key 'k_b'"));
    int count = 0;
    for ([[maybe_unused]] const auto& entry :
         sequential_table_reader<basic_holder<std::int32_t>>("ark:duplicate.ark"))
      ++count;
    CHECK(count == 4);
    CHECK_THROWS_WITH(reader_t("scp:duplicate.scp"), Catch::Contains("twice"));
  }
}

TEST_CASE("o, cs and non-seekable archives", "[table][options]") {
  const std::string ark = test::data_path("kaldi/holders/int32.bin.ark");
  using reader_t = random_access_table_reader<basic_holder<std::int32_t>>;
  SECTION("o: each key once; asking again is an error") {
    reader_t r("o,ark:" + ark);
    CHECK(r.at("c_max") == 2147483647);
    CHECK(r.at("a_zero") == 0);
    CHECK_THROWS_WITH(r.at("c_max"), Catch::Contains("once"));
  }
  SECTION("s,cs: keys in order; going back is an error") {
    reader_t r("s,cs,ark:" + ark);
    CHECK(r.at("b_neg") == -1);
    CHECK(r.at("d_min") == -2147483647 - 1);
    CHECK_THROWS_WITH(r.at("a_zero"), Catch::Contains("sorted order"));
  }
  SECTION("an archive from a pipe keeps what it read ahead") {
    reader_t r("ark:" + test::command("file \"" + ark + "\"") + " |");
    CHECK(r.at("e_mid") == 123456);
    CHECK(r.at("a_zero") == 0);
    CHECK(r.at("d_min") == -2147483647 - 1);
  }
  SECTION("the mapped reader looks up through utt2spk") {
    temp_dir dir;
    in_folder there(dir.path);
    {
      table_writer<token_holder> map("ark,t:utt2spk");
      map.write("utt1", "a_zero");
      map.write("utt2", "e_mid");
      map.write("utt3", "nobody");
    }
    random_access_table_reader_mapped<basic_holder<std::int32_t>> by_utt("ark:" + ark, "ark:utt2spk");
    CHECK(by_utt.at("utt2") == 123456);
    CHECK_FALSE(by_utt.contains("utt3"));
    CHECK_THROWS_AS(by_utt.contains("utt9"), missing_key_error);  // not in the map: Kaldi's error too
  }
}

TEST_CASE("with o, a key handed out once is an error the next time, however it was found",
          "[table][options]") {
  const std::string ark = test::data_path("kaldi/holders/int32.bin.ark");
  random_access_table_reader<basic_holder<std::int32_t>> r("o,ark:" + ark);
  // Kaldi's HasKey then Value: the value is freed at the next call, and asking again is an error.
  CHECK(r.contains("c_max"));
  CHECK(r.borrow_at("c_max") == 2147483647);
  CHECK_THROWS_WITH(r.contains("c_max"), Catch::Contains("once"));
  CHECK(r.contains("a_zero"));
  CHECK(r.find("a_zero") == 0);
  CHECK_THROWS_WITH(r.find("a_zero"), Catch::Contains("once"));
}

TEST_CASE("cs without s means nothing, as in Kaldi: an unsorted archive answers in any order",
          "[table][options]") {
  in_folder here(test::data_path("kaldi/bad"));
  random_access_table_reader<basic_holder<std::int32_t>> r("cs,ark:unsorted.ark");
  CHECK(r.at("k_c") == 3);
  CHECK(r.at("k_a") == 1);
  CHECK(r.at("k_b") == 2);
}

namespace {
// ra.ark: keys k0 to k9, each value a vector {i, i}; the size of an entry.
std::uintmax_t write_ra_archive() {
  table_writer<basic_vector_holder<std::int32_t>> out("ark:ra.ark");
  for (int i = 0; i < 10; ++i) out.write(std::string{'k', static_cast<char>('0' + i)}, {i, i});
  out.close();
  return fs::file_size("ra.ark") / 10;
}
}  // namespace

TEST_CASE("values from at() and find() are the caller's own; borrow() is valid until the next call",
          "[table][lifetime]") {
  temp_dir dir;
  in_folder there(dir.path);
  write_ra_archive();
  {
    table_writer<basic_vector_holder<std::int32_t>> out("ark,scp:copy.ark,copy.scp");
    for (auto& [key, value] : sequential_table_reader<basic_vector_holder<std::int32_t>>("ark:ra.ark"))
      out.write(key, value);
  }
  using ints = std::vector<std::int32_t>;
  const std::string piped = test::command("file ra.ark") + " |";
  for (const std::string& rspec : std::vector<std::string>{"ark:ra.ark", "ark:" + piped, "scp:copy.scp",
                                                           "s,cs,ark:" + piped, "o,ark:ra.ark"}) {
    INFO(rspec);
    random_access_table_reader<basic_vector_holder<std::int32_t>> r(rspec);
    const ints& a = r.at("k1");  // the caller's: no later lookup changes it
    const ints& b = r.at("k2");
    std::optional<ints> c = r.find("k3");
    if (rspec[0] != 'o') CHECK(r.at("k3") == ints{3, 3});  // handed over, and found again
    CHECK(r.contains("k4"));
    CHECK(a == ints{1, 1});
    CHECK(b == ints{2, 2});
    CHECK(c == ints{3, 3});
    const ints* borrowed = r.borrow("k5");
    REQUIRE(borrowed);
    CHECK(*borrowed == ints{5, 5});
    CHECK(r.borrow_at("k6") == ints{6, 6});
    if (rspec[0] != 'o') CHECK(r.at("k6") == ints{6, 6});  // the value borrowed, now the caller's
    CHECK(!r.find("k99"));
  }
  // The mapped reader too.
  {
    table_writer<token_holder> map("ark,t:utt2spk");
    map.write("u1", "k1");
    map.write("u2", "k2");
  }
  random_access_table_reader_mapped<basic_vector_holder<std::int32_t>> by_utt("ark:" + piped, "ark:utt2spk");
  const ints& a = by_utt.at("u1");
  const ints& b = by_utt.at("u2");
  CHECK(a == ints{1, 1});
  CHECK(b == ints{2, 2});
  CHECK(*by_utt.find("u1") == ints{1, 1});
  CHECK(*by_utt.borrow("u2") == ints{2, 2});
}

TEST_CASE("random access over a failed command or truncated input throws at every lookup it cannot answer",
          "[table][pipe][faults]") {
  temp_dir dir;
  in_folder there(dir.path);
  std::uintmax_t entry = write_ra_archive();
  const std::string three_entries = test::command("part ra.ark 0 " + std::to_string(3 * entry));
  using reader_t = random_access_table_reader<basic_vector_holder<std::int32_t>>;
  SECTION("a command that exits non-zero after part of the archive") {
    reader_t r("ark:" + three_entries + " exit 1 |");  // k0, k1 and k2 arrive whole
    CHECK_THROWS_WITH(r.contains("k5"), Catch::Contains("exited with status 1"));
    CHECK_THROWS_AS(r.find("k6"), io_error);  // not an absent key: the same failure again
    CHECK_THROWS_AS(r.contains("k9"), io_error);
    CHECK_THROWS_AS(r.at("k7"), io_error);
    CHECK(r.at("k1") == std::vector<std::int32_t>{1, 1});  // what arrived whole still answers
    std::vector<std::string> keys;
    CHECK_THROWS_AS(r.for_each_key([&](std::string_view k) { keys.emplace_back(k); }), io_error);
  }
  SECTION("a command that fails at once") {
    reader_t r("ark:" + test::command("exit 1") + " |");
    CHECK_THROWS_AS(r.contains("k0"), io_error);
    CHECK_THROWS_AS(r.find("k0"), io_error);
  }
  SECTION("a truncated archive file") {
    test::write_file("cut.ark", test::read_file("ra.ark").substr(0, 3 * entry + 5));
    reader_t r("ark:cut.ark");
    CHECK_THROWS_AS(r.contains("k9"), format_error);
    CHECK_THROWS_AS(r.contains("k8"), format_error);
    CHECK(r.contains("k0"));
  }
  SECTION("under p, the failure ends the table instead") {
    reader_t r("p,ark:" + three_entries + " exit 1 |");
    CHECK_FALSE(r.contains("k5"));
    CHECK_FALSE(r.find("k6"));
    CHECK(r.at("k2") == std::vector<std::int32_t>{2, 2});
  }
  SECTION("the whole command is read: every key answers") {
    reader_t r("ark:" + test::command("file ra.ark") + " |");
    CHECK_FALSE(r.contains("k99"));
    std::vector<std::string> keys;
    CHECK(r.for_each_key([&](std::string_view k) { keys.emplace_back(k); }));
    REQUIRE(keys.size() == 10);
    CHECK(keys.front() == "k0");
  }
}

TEST_CASE("random access over gunzip of a truncated file throws", "[table][pipe][faults][unix-tools]") {
  temp_dir dir;
  in_folder there(dir.path);
  write_ra_archive();
  REQUIRE(std::system("gzip -c ra.ark | head -c 60 > truncated.gz") == 0);
  random_access_table_reader<basic_vector_holder<std::int32_t>> r("ark:gunzip -c truncated.gz 2>/dev/null |");
  CHECK_THROWS_AS(r.contains("k9"), tablio::error);
  CHECK_THROWS_AS(r.contains("k8"), tablio::error);
}

TEST_CASE("listing the keys reads ahead to the end, where a repeated key is an error", "[table][keys]") {
  in_folder here(test::data_path("kaldi/bad"));
  random_access_table_reader<basic_holder<std::int32_t>> r("ark:duplicate.ark");
  CHECK_THROWS_WITH(r.for_each_key([](std::string_view) {}), Catch::Contains("duplicate key 'k_b'"));
  random_access_table_reader<basic_holder<std::int32_t>> unsorted("ark:unsorted.ark");
  std::vector<std::string> keys;
  CHECK(unsorted.for_each_key([&](std::string_view k) { keys.emplace_back(k); }));
  CHECK(keys == std::vector<std::string>{"k_b", "k_a", "k_c"});
  // A script lists its lines in its order, reading no value, under p too.
  for (const char* rspec : {"scp:unsorted.scp", "scp,p:unsorted.scp"}) {
    random_access_table_reader<basic_holder<std::int32_t>> script(rspec);
    keys.clear();
    CHECK(script.for_each_key([&](std::string_view k) { keys.emplace_back(k); }));
    CHECK(keys == std::vector<std::string>{"k_b", "k_a", "k_c"});
  }
  // Under 's' a lookup stops past its key; listing still reads to the end, and finds disorder.
  random_access_table_reader<basic_holder<std::int32_t>> claimed_sorted("s,ark:unsorted.ark");
  CHECK_FALSE(claimed_sorted.contains("k_a"));  // stops at k_b, as Kaldi's sorted tables do
  CHECK_THROWS_WITH(claimed_sorted.for_each_key([](std::string_view) {}), Catch::Contains("k_a"));
}

TEST_CASE("under 's', listing the keys after a lookup lists them all", "[table][keys]") {
  temp_dir dir;
  in_folder there(dir.path);
  {
    table_writer<basic_holder<std::int32_t>> out("ark:sorted.ark");
    for (int i = 0; i < 5; ++i) out.write(std::string("k").append(std::to_string(i)), i);
  }
  random_access_table_reader<basic_holder<std::int32_t>> r("s,ark:sorted.ark");
  CHECK(r.at("k1") == 1);
  CHECK_FALSE(r.contains("k0a"));
  std::vector<std::string> keys;
  CHECK(r.for_each_key([&](std::string_view k) { keys.emplace_back(k); }));
  CHECK(keys == std::vector<std::string>{"k0", "k1", "k2", "k3", "k4"});
  CHECK(r.at("k4") == 4);
}

TEST_CASE("archives through pipes, both ways", "[table][pipe]") {
  temp_dir dir;
  in_folder there(dir.path);
  {
    table_writer<basic_vector_holder<std::int32_t>> out("ark:| " + test::command("upper") + " > ali.ark");
    out.write("u1", {1, 2, 3});
    out.write("u2", {});
    out.close();
  }
  std::vector<std::string> keys;
  for (auto [key, value] : sequential_table_reader<basic_vector_holder<std::int32_t>>(
           "ark:" + test::command("file ali.ark") + " |"))
    keys.push_back(key + ":" + std::to_string(value.size()));
  CHECK(keys == std::vector<std::string>{"U1:3", "U2:0"});  // the keys went through upper
  CHECK_THROWS_WITH((sequential_table_reader<basic_vector_holder<std::int32_t>>(
                         "ark:" + test::command("file missing.ark") + " |")
                         .close()),
                    Catch::Contains("exited with status 2"));
}

TEST_CASE("specifiers that Kaldi rejects are rejected", "[table][options]") {
  CHECK_THROWS_AS(table_writer<token_holder>("scp,ark:a,b"), usage_error);
  CHECK_THROWS_AS(sequential_table_reader<token_holder>("ark,scp:a,b"), usage_error);
  CHECK_THROWS_AS(sequential_table_reader<token_holder>("o, s, ark:x"), usage_error);
  CHECK_THROWS_AS(table_writer<token_holder>("ark:bad key|"), usage_error);
  {  // A script beside a table on standard output or into a command is of no use (Kaldi warns).
    temp_dir dir;
    in_folder there(dir.path);
    CHECK_THROWS_WITH(table_writer<token_holder>("ark,scp:-,x.scp"),
                      Catch::Contains("'-': a script beside a table") && Catch::Contains("standard output"));
    CHECK_THROWS_WITH(table_writer<token_holder>("ark,scp:| gzip -c > a.gz,x.scp"),
                      Catch::Contains("a command's input"));
    CHECK_FALSE(std::filesystem::exists("x.scp"));
  }
  table_writer<token_holder> w("ark:/dev/null");
  CHECK_THROWS_WITH(w.write("two words", "x"), Catch::Contains("invalid key"));
}

TEST_CASE("an invalid specifier's error says what is wrong with it", "[table][options]") {
  auto reading = [](const char* spec, const std::string& why) {
    CHECK_THROWS_MATCHES(require_rspecifier(spec), usage_error,
                         test::says("invalid rspecifier '" + std::string(spec) + "': " + why));
  };
  reading("feats/raw.scp", "no ':': a specifier is FORMAT[,OPTIONS]:NAME, such as 'ark:feats.ark'");
  reading("scp:x ", "whitespace at its end");
  reading("scp, p:x", "an empty option");
  reading("bogus,ark:x", "'bogus' is no format and no option");
  reading("tfrecord,gzip:x.tfrecord.gz",
          "'gzip' says how a writer compresses: a reader finds gzip or zlib input");
  reading("tar,threads=0:x", "'threads=0': threads=N is a number of threads, 1 to 256");
  reading("ark,threads=x:x", "'threads=x': threads=N is a number of threads, 1 to 256");
  reading("p:x", "no format (ark, scp, tfrecord, lmdb, idx, tar...)");
  reading("ark,scp:a.ark,a.scp", "two formats: a table is read from one ('ark:NAME' or 'scp:NAME')");
  reading("ark,shard=0/2:x", "an option its format does not take");
  CHECK_THROWS_MATCHES(require_wspecifier("ark,scp,t:a.ark"), usage_error,
                       test::says("FORMAT,scp:TABLE,SCRIPT names two files, with a ',' between them"));
}

namespace {
std::string wave_line(const std::string& key, const wave_data& w) {
  std::string values;
  for (std::int32_t c = 0; c < w.num_channels(); ++c)
    for (std::int32_t s = 0; s < w.num_samples(); ++s) {
      if (!values.empty()) values += ' ';
      values += std::to_string(static_cast<int>(w.data()(c, s)));
    }
  return key + "\twav\t" + std::to_string(w.num_channels()) + "x" + std::to_string(w.num_samples()) + "@" +
         std::to_string(static_cast<int>(w.sample_frequency())) + "\t" + values;
}
}  // namespace

TEST_CASE("waves: Kaldi's archive and wav.scp, written back byte for byte", "[table][wave][golden]") {
  std::vector<std::string> lines;
  std::vector<std::pair<std::string, wave_data>> entries;
  for (auto [key, value] :
       sequential_table_reader<wave_holder>("ark:" + test::data_path("kaldi/holders/wav.bin.ark"))) {
    lines.push_back(wave_line(key, value));
    entries.emplace_back(key, value);
  }
  CHECK(lines == test::expect_entries(test::data_path("kaldi/holders/wav.bin.ark.expect")));
  CHECK(test::write_archive<wave_holder>(entries, true) ==
        test::read_file(test::data_path("kaldi/holders/wav.bin.ark")));
  {
    in_folder here(test::data_path("kaldi/scp"));
    lines.clear();
    for (auto [key, value] : sequential_table_reader<wave_holder>("scp:wav.scp"))
      lines.push_back(wave_line(key, value));
    CHECK(lines == test::expect_entries("wav.scp.expect"));
  }
  SECTION("a streamed header (size 0xFFFFFFFF, as from a pipe) reads to the end") {
    std::string wav = test::read_file(test::data_path("kaldi/scp/wav/w1.wav"));
    wav.replace(4, 4, "\xff\xff\xff\xff");
    wav.replace(40, 4, "\xff\xff\xff\xff");
    reader r = memory_reader(std::string_view(wav), "streamed.wav");
    wave_holder h;
    h.read(r);
    CHECK(h.value().num_samples() == 5);
  }
  SECTION("bad waves are errors") {
    std::string wav = test::read_file(test::data_path("kaldi/scp/wav/w1.wav"));
    std::string eight_bit = wav;
    eight_bit[34] = 8;
    reader r = memory_reader(std::string_view(eight_bit), "8bit.wav");
    wave_holder h;
    CHECK_THROWS_WITH(h.read(r), Catch::Contains("16 bits per sample"));
    reader cut = memory_reader(std::string_view(wav).substr(0, 30), "cut.wav");
    CHECK_THROWS_WITH(h.read(cut), Catch::Contains("end of input"));
    // One byte of a two-byte sample: a format error, not a channels x 0 matrix.
    reader half = memory_reader(std::string_view(wav).substr(0, 45), "half.wav");
    CHECK_THROWS_AS(h.read(half), format_error);
    reader half_again = memory_reader(std::string_view(wav).substr(0, 45), "half.wav");
    CHECK_THROWS_WITH(h.read(half_again), Catch::Contains("half.wav") && Catch::Contains("a truncated file"));
    // Fewer bytes than the header announces: an error, where Kaldi warns and keeps them.
    reader short_of = memory_reader(std::string_view(wav).substr(0, wav.size() - 2), "short.wav");
    CHECK_THROWS_WITH(h.read(short_of), Catch::Contains("bytes of wave data, as its header says"));
    std::string out;
    writer w = memory_writer(out);
    CHECK_THROWS_AS(wave_holder::write(w, false, entries[0].second), usage_error);
  }
}

TEST_CASE("a file a script line names that cannot be opened is named by the line's key, quoted in 16 bytes",
          "[table][bad]") {
  temp_dir dir;
  in_folder there(dir.path);
  const std::string missing = "export/data/mfcc/raw_mfcc_train.7.ark";
  test::write_file("feats.scp", "utt1 " + missing + ":85\nutt2 also/" + missing + "\n");
  for (const char* rspec : {"scp:feats.scp", "scp,p:feats.scp"}) {
    random_access_table_reader<holder<matrix<float>>> r(rspec);
    for (const auto& [key, name] : {std::pair{"utt1", missing}, std::pair{"utt2", "also/" + missing}}) {
      INFO(rspec << " " << key);
      try {
        r.at(key);
        FAIL("no error");
      } catch (const io_error& e) {
        CHECK(e.path() == excerpt(name));  // Python shows it in OSError's message
        CHECK_THAT(e.what(),
                   Catch::Contains("named by the line of key '" + std::string(key) + "' in 'feats.scp'") &&
                       !Catch::Contains(name));
      } catch (const missing_key_error&) {
        CHECK(std::string_view(rspec) == "scp,p:feats.scp");  // p: a line that cannot be read is no entry
      }
    }
  }
}

TEST_CASE("bad script lines and key separators are errors naming where", "[table][bad]") {
  SECTION("a line with a key and no value names its line number") {
    std::string scp = "a feats.ark:5\nonly_a_key\n";
    script_reader in(memory_reader(std::string_view(scp), "bad.scp"));
    script_entry e;
    REQUIRE(in.next(e));
    CHECK(e.rxfilename == "feats.ark:5");
    try {
      in.next(e);
      FAIL("no error");
    } catch (const format_error& err) {
      CHECK(err.path() == "bad.scp");
      CHECK(err.offset() == 14u);
      CHECK_THAT(err.what(), Catch::Contains("line 2") && Catch::Contains("'only_a_key'"));
    }
  }
  SECTION("malformed ranges make the line invalid, as in Kaldi") {
    CHECK_FALSE(parse_script_line("k f.ark:5[]"));
    CHECK_FALSE(parse_script_line("k f.ark:5[0:1][2:3]"));
    CHECK(parse_script_line("  k   gunzip -c a.gz |  \r")->rxfilename == "gunzip -c a.gz |");
  }
  SECTION("a script line longer than the limit is rejected") {
    limits small;
    small.max_record_bytes = 64;
    std::string scp = "k " + std::string(1000, 'x') + "\n";
    script_reader in(memory_reader(std::string_view(scp), "long.scp", small));
    script_entry e;
    CHECK_THROWS_WITH(in.next(e), Catch::Contains("longer line"));
  }
  SECTION("a key followed by a carriage return is not an archive") {
    std::string ark = std::string("k1\r\0B\4\1\0\0\0", 10);
    archive_reader a(memory_reader(std::string_view(ark), "cr.ark"));
    std::string key;
    CHECK_THROWS_WITH(a.next_key(key), Catch::Contains("then a space or a newline") &&
                                           Catch::Contains("'k1' followed by byte 13"));
  }
}

TEST_CASE("single objects are read and written as Kaldi's ReadKaldiObject and WriteKaldiObject do",
          "[table][object]") {
  in_folder here(test::data_path("kaldi/scp"));
  using matrix_holder = holder<matrix<float>>;
  random_access_table_reader<matrix_holder> table("scp:feats.scp");
  const matrix<float>& utt1 = table.at("utt1");
  CHECK(read_object<matrix_holder>("feats.ark:5") == utt1);
  CHECK(read_object<matrix_holder>(test::command("part feats.ark 5 rest") + " |") ==
        utt1);  // a command, read to its end
  matrix<float> part = read_object<matrix_holder>("feats.ark:5[1:2,0:1]");
  REQUIRE((part.num_rows() == 2 && part.num_cols() == 2));
  CHECK(part(1, 1) == utt1(2, 1));
  CHECK_THROWS_WITH(read_object<matrix_holder>("feats.ark:5[0:1,5:6]"),
                    Catch::Contains("feats.ark:5[0:1,5:6]"));
  CHECK_THROWS_MATCHES(read_object<token_holder>("feats.ark:5[0:1]"), usage_error,
                       test::says("'feats.ark:5[0:1]': this type of object takes no range"));
  CHECK_THROWS_WITH(read_object<matrix_holder>("exit 2 |"), Catch::Contains("status 2"));
  CHECK_THROWS_WITH(read_object<matrix_holder>(test::command("part feats.ark 5 rest exit 3") + " |"),
                    Catch::Contains("status 3"));
  // What follows the object is not held: an endless command after it is left to end.
  CHECK(read_object<matrix_holder>(test::command("part feats.ark 5 rest endless") + " |") == utt1);
  temp_dir dir;
  // The object as the archive holds it after its key: utt1's ends where " utt2 " begins.
  write_object<matrix_holder>(dir / "utt1.mat", utt1);
  std::string archive = test::read_file("feats.ark");
  CHECK(test::read_file(dir / "utt1.mat") == archive.substr(5, 85 - 5 - std::string("utt2 ").size()));
  write_object<matrix_holder>(dir / "utt1.txt", utt1, false);
  CHECK(read_object<matrix_holder>(dir / "utt1.txt") == utt1);
}

namespace {

// A value whose write fails after `written` bytes of its object: a matrix to compress with a
// NaN fails before any, a holder of its own may fail later.
struct failing_value {
  std::size_t written = 0;
  bool fails = true;
};
struct failing_holder : holder_storage<failing_value> {
  static constexpr std::string_view extension = "bin";
  static void write(writer& w, bool, const failing_value& v) {
    w.write(std::string(v.written, 'x'));
    if (v.fails) throw usage_error("this value cannot be written");
    w.put('\n');
  }
  void read(reader&) {}
};

}  // namespace

TEST_CASE("a value that fails to be written leaves nothing of its entry, in the archive or its script",
          "[table][bad]") {
  temp_dir dir;
  matrix<float> fine(2, 3), nan(2, 3);
  for (std::size_t k = 0; k < fine.size(); ++k) fine.data()[k] = nan.data()[k] = static_cast<float>(k);
  nan.data()[4] = std::numeric_limits<float>::quiet_NaN();
  for (std::string options : {"ark,scp:", "ark,scp,f:"}) {
    INFO(options);
    {
      table_writer<holder<matrix_to_compress>> out(options + dir / "c.ark," + dir / "c.scp");
      out.write("a", matrix_to_compress{fine});
      CHECK_THROWS_WITH(out.write("b", matrix_to_compress{nan}), Catch::Contains("NaN"));
      out.write("c", matrix_to_compress{fine});
      out.close();
    }
    std::vector<std::string> keys, script_keys;
    for (auto [key, value] : sequential_table_reader<holder<matrix<float>>>("ark:" + dir / "c.ark"))
      keys.push_back(key);
    for (auto [key, value] : sequential_table_reader<holder<matrix<float>>>("scp:" + dir / "c.scp"))
      script_keys.push_back(key);
    CHECK(keys == std::vector<std::string>{"a", "c"});
    CHECK(script_keys == keys);
  }
}

TEST_CASE("a value that fails after part of it reached the file ends the archive with an error",
          "[table][bad]") {
  temp_dir dir;
  table_writer<failing_holder> out("ark:" + dir / "f.ark");
  out.write("a", failing_value{10, false});
  CHECK_THROWS_WITH(out.write("b", failing_value{100, true}),  // taken back
                    Catch::Contains("the value of key 'b' for '") && Catch::Contains("cannot be written"));
  out.write("c", failing_value{10, false});
  CHECK_THROWS_WITH(out.write("d", failing_value{4 << 20, true}), Catch::Contains("cannot be written"));
  CHECK_THROWS_WITH(
      out.write("e", failing_value{10, false}),
      Catch::Contains("ends in the object of key 'd'") && Catch::Contains("no entry can follow"));
  out.close();
  std::string written = test::read_file(dir / "f.ark");
  CHECK(written.starts_with("a xxxxxxxxxx\nc xxxxxxxxxx\nd xxxx"));
}

TEST_CASE("a script read for lookups still gives its entries in its own order", "[table]") {
  test::temp_dir dir;
  {
    table_writer<holder<std::int32_t>> out("ark,scp:" + dir / "n.ark," + dir / "n.scp");
    for (int i : {3, 1, 2}) out.write("k" + std::to_string(i), i);
  }
  script_input in(dir / "n.scp");
  entry e;
  REQUIRE(in.find("k2", e));  // reads the whole script and sorts it for lookups
  std::vector<std::string> keys;
  while (in.next(e)) keys.push_back(e.key);
  CHECK(keys == std::vector<std::string>{"k3", "k1", "k2"});
}
