// What a framework that embeds tablio relies on: a value misread is an error, never keys or
// values silently wrong; a table stores every key it is given or refuses it; a cut file is an
// error; an absent key is told apart from a damaged file; duplicates follow Kaldi's rule; the
// standard vocabulary types are built in.
#include <tablio/table/shard.hpp>
#include <tablio/tablio.hpp>

#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <variant>
#include <vector>

using namespace tablio;

namespace {

// Two releases of a framework's record type: the second added a field.
namespace release1 {
struct utterance {
  std::string speaker;
  float snr = 0;
};
}  // namespace release1
namespace release2 {
struct utterance {
  std::string speaker;
  float snr = 0;
  std::vector<std::int32_t> labels;
};
}  // namespace release2
using kaldi1 = holder<release1::utterance>;
using kaldi2 = holder<release2::utterance>;
using raw1 = holder<release1::utterance, raw_little>;
using raw2 = holder<release2::utterance, raw_little>;

template <class Holder = bytes_holder>
std::vector<std::string> keys_of(const std::string& rspec) {
  std::vector<std::string> keys;
  for (sequential_table_reader<Holder> r(rspec); !r.done(); r.next()) keys.push_back(r.key());
  return keys;
}

using test::write_file;

// Three entries; numbered as reading gives them back in a format that keeps no keys.
template <class Holder, class Value>
void write_three(const std::string& wspec, const Value& v) {
  table_writer<Holder> out(wspec);
  const bool numbered = wspec.starts_with("tfrecord:");
  for (const char* key : {"utt1", "utt2", "utt3"}) out.write(numbered ? ordinal_key(key[3] - '1') : key, v);
  out.close();
}

// Reads every entry of rspec with Holder: the error's message, or "" when all read.
template <class Holder>
std::string read_all_error(const std::string& rspec) {
  try {
    for (sequential_table_reader<Holder> r(rspec); !r.done(); r.next()) (void)r.value();
    return "";
  } catch (const format_error& e) {
    return e.what();
  }
}

}  // namespace

TEST_CASE("a value read with another release of its struct is an error, never misread keys",
          "[contracts][evolution]") {
  test::temp_dir dir;
  const release2::utterance newer{"spk1", 2.5f, {4, 7}};
  const release1::utterance older{"spk1", 2.5f};

  SECTION("an archive's next key, read inside the misread value, is refused with its offset") {
    // Kaldi's codec: release 1 stops short of release 2's labels, which are no key: an error
    // before the value is handed out.
    write_three<kaldi2>("ark:" + dir / "new.ark", newer);
    CHECK_THROWS_MATCHES(
        sequential_table_reader<kaldi1>("ark:" + dir / "new.ark"), format_error,
        test::says("at byte 21 (key 'utt1'): expected the next entry's key or the end, after the "
                   "object, found '\\x04\\x02\\x00\\x00\\x00\\x04"));
    // Raw little-endian, the same: what follows release 1's bytes is release 2's labels.
    write_three<raw2>("ark:" + dir / "new_raw.ark", newer);
    CHECK_THAT(read_all_error<raw1>("ark:" + dir / "new_raw.ark"),
               Catch::Contains("at byte 23 (key 'utt1'): expected the next entry's key or the end, after "
                               "the object, found '\\x02\\x00\\x00\\x00\\x00\\x00\\x00\\x00"));
    // Raw little-endian: release 2 reads on past release 1's value into the next key.
    write_three<raw1>("ark:" + dir / "old.ark", older);
    CHECK_THAT(read_all_error<raw2>("ark:" + dir / "old.ark"),
               Catch::Contains("format error in '" + dir / "old.ark" + "' at byte"));
    // Read as written, the last entry is followed by the end.
    CHECK(keys_of<raw1>("ark:" + dir / "old.ark") == std::vector<std::string>{"utt1", "utt2", "utt3"});
  }

  SECTION("Kaldi's binary markers tell a field of another type") {
    write_three<kaldi1>("ark:" + dir / "old.ark", older);
    CHECK_THAT(read_all_error<kaldi2>("ark:" + dir / "old.ark"),
               Catch::Contains(
                   "at byte 21 (key 'utt1'): expected integer vector of element size 4, found size 117"));
  }

  SECTION("a record framing's entry read short or past its end is an error for every codec") {
    for (const char* format : {"tfrecord", "tar"}) {
      INFO(format);
      const std::string file = dir / (std::string("t.") + format);
      const std::string wspec = std::string(format) + ":" + file;
      write_three<kaldi2>(wspec, newer);
      CHECK_THAT(read_all_error<kaldi1>(wspec),
                 Catch::Contains("expected the end of the record after the object, found 13 more bytes"));
      write_three<raw1>(wspec, older);
      CHECK_THAT(read_all_error<raw2>(wspec),
                 Catch::Contains("expected 8 bytes, found end of input after 0"));
      write_three<raw2>(wspec, newer);
      CHECK_THAT(read_all_error<raw1>(wspec),
                 Catch::Contains("expected the end of the record after the object, found 16 more bytes"));
    }
  }

  SECTION("an object read at an offset must be followed by the next key, through scripts and lookups") {
    write_three<kaldi2>("ark,scp:" + dir / "new.ark," + dir / "new.scp", newer);
    for (std::string rspec : {"scp:" + dir / "new.scp", "ark:" + dir / "new.ark"}) {
      INFO(rspec);
      random_access_table_reader<kaldi1> by_key(rspec);
      CHECK_THROWS_AS(by_key.at("utt2"), format_error);
    }
    CHECK_THAT(read_all_error<kaldi1>("scp:" + dir / "new.scp"),
               Catch::Contains("(key 'utt1')") && Catch::Contains("the next entry's key or the end"));
    // Read as written, every entry passes, the last one followed by the end.
    random_access_table_reader<kaldi2> right("scp:" + dir / "new.scp");
    CHECK(right.at("utt3").labels == newer.labels);
  }

  SECTION("a text object ends its line, so a misread one is an error at once") {
    // Release 2 in text: "utt1 spk1 2.5 [ 4 7 ]"; release 1 stops before the labels.
    write_three<kaldi2>("ark,t:" + dir / "new.txt.ark", newer);
    CHECK_THAT(read_all_error<kaldi1>("ark:" + dir / "new.txt.ark"),
               Catch::Contains("(key 'utt1')") && Catch::Contains("the end of the text object's line"));
    // Release 1 in text, read by release 2, which would take the next line for its labels.
    write_three<kaldi1>("ark,t:" + dir / "old.txt.ark", older);
    CHECK_THAT(read_all_error<kaldi2>("ark:" + dir / "old.txt.ark"), Catch::Contains("(key 'utt1')"));
    // Numbers for keys, where the next key would pass for a number of the value.
    struct one {
      std::int32_t a = 0;
    };
    struct two {
      std::int32_t a = 0, b = 0;
    };
    {
      table_writer<holder<two>> out("ark,t:" + dir / "n.ark");
      for (std::uint64_t i = 0; i < 4; ++i)
        out.write(ordinal_key(i), two{10 + static_cast<std::int32_t>(i), 20});
    }
    CHECK_THAT(read_all_error<holder<one>>("ark:" + dir / "n.ark"), Catch::Contains("(key '00000000')"));
    {
      table_writer<holder<one>> out("ark,t:" + dir / "n1.ark");
      for (std::uint64_t i = 0; i < 3; ++i) out.write(ordinal_key(i), one{10});
    }
    CHECK_THAT(read_all_error<holder<two>>("ark:" + dir / "n1.ark"), Catch::Contains("(key '00000000')"));
    // A text archive cut inside a number is not a shorter number.
    {
      table_writer<holder<double>> out("ark,t:" + dir / "d.ark");
      out.write("k", 1e-12);
    }
    const std::string text = test::read_file(dir / "d.ark");
    for (std::size_t cut = 3; cut < text.size(); ++cut) {
      INFO(cut);
      write_file(dir / "cut.ark", text.substr(0, cut));
      CHECK_FALSE(read_all_error<holder<double>>("ark:" + dir / "cut.ark").empty());
    }
    // Text of a Kaldi object is its own: a matrix's ends with its newline, and reads back.
    table_writer<holder<matrix<float>>> m("ark,t:" + dir / "m.ark");
    m.write("a", matrix<float>(2, 2));
    m.write("b", matrix<float>(1, 3));
    m.close();
    CHECK(keys_of<holder<matrix<float>>>("ark:" + dir / "m.ark") == std::vector<std::string>{"a", "b"});
  }

  SECTION("an archive refuses keys its writer refuses") {
    write_three<holder<std::int32_t>>("ark:" + dir / "good.ark", 7);
    const std::string good = test::read_file(dir / "good.ark");
    const std::size_t at = good.find("utt2");
    for (std::string bad : {std::string("ut\x04"
                                        "2"),
                            std::string("\x01utt"), std::string("u\x7ftt")}) {
      std::string damaged = good;
      damaged.replace(at, 4, bad);
      write_file(dir / "bad.ark", damaged);
      CHECK_THROWS_MATCHES(keys_of<holder<std::int32_t>>("ark:" + dir / "bad.ark"), format_error,
                           test::says("at byte " + std::to_string(at) + ": expected a key"));
    }
  }
}

namespace {
enum class language : std::uint8_t { en, fr };
struct labelled {
  std::int32_t speaker = 0;
  std::vector<std::int32_t> labels;
  std::uint8_t age = 0;
  language lang = language::en;
  std::uint64_t hash = 0;
};
}  // namespace
template <>
struct tablio::example_field_names<labelled> {
  static constexpr std::array names{"speaker", "labels", "age", "lang", "hash"};
};

TEST_CASE("an Example's int64 that does not fit its field is an error naming the feature and value",
          "[contracts][example]") {
  test::temp_dir dir;
  const std::string rspec = "tfrecord:" + dir / "e.tfrecord";
  auto read_back = [&](const char* feature, std::vector<std::int64_t> values) {
    example ex = to_example(labelled{1, {1, 2}, 30, language::fr, ~0ull});
    ex.set(feature, std::move(values));
    table_writer<example_holder> out(rspec);
    out.write("00000000", ex);
    out.close();
    sequential_table_reader<example_struct_holder<labelled>> in(rspec);
    return in.value();
  };
  CHECK(read_back("hash", {-1}).hash == ~0ull);  // a uint64 round-trips through int64's bits
  CHECK_THROWS_MATCHES(
      read_back("speaker", {(std::int64_t{1} << 32) + 1}), format_error,
      test::says("feature 'speaker' as values in [-2147483648, 2147483647], found 4294967297"));
  CHECK_THROWS_MATCHES(read_back("labels", {-1, 3000000000}), format_error,
                       test::says("found 3000000000 (value 1)"));
  CHECK_THROWS_MATCHES(read_back("age", {300}), format_error,
                       test::says("feature 'age' as values in [0, 255], found 300"));
  CHECK_THROWS_MATCHES(read_back("lang", {-1}), format_error, test::says("feature 'lang'"));
  CHECK_THROWS_MATCHES(read_back("age", {300}), format_error, test::says("(key '00000000')"));
  // Under key=, the error names the key the record keeps.
  example ex = to_example(labelled{1, {1, 2}, 30, language::fr, 0});
  ex.set("age", std::vector<std::int64_t>{300});
  table_writer<example_holder> keyed("tfrecord,key=utt:" + dir / "k.tfrecord");
  keyed.write("first", to_example(labelled{}));
  keyed.write("second", ex);
  keyed.close();
  sequential_table_reader<example_struct_holder<labelled>> in("tfrecord,key=utt:" + dir / "k.tfrecord");
  CHECK(in.key() == "first");
  CHECK_THROWS_MATCHES(in.next(), format_error, test::says("(key 'second')"));
}

TEST_CASE("a table that cannot store keys refuses them at the first write", "[contracts][keys][tfrecord]") {
  test::temp_dir dir;
  const std::string file = dir / "f.tfrecord";
  {
    table_writer<bytes_holder> out("tfrecord:" + file);
    CHECK_THROWS_MATCHES(out.write("utt-A", "a"), key_error, test::says("tfrecord,scp:"));
    CHECK_THROWS_MATCHES(out.write("utt-A", "a"), usage_error, test::says("key=NAME"));
  }
  {  // The keys reading gives back are taken: a copy of a TFRecord table, or of its shards.
    table_writer<bytes_holder> out("tfrecord:" + file);
    out.write("00000000", "a");
    out.write("00000001", "b");
    CHECK_THROWS_MATCHES(out.write("00000001", "c"), key_error, test::says("must have key 00000002"));
    CHECK_THROWS_MATCHES(out.write("000000002", "c"), key_error, test::says("not '000000002'"));
  }
  {  // Each file numbers its records from 00000000: any other first number would be lost too.
    table_writer<bytes_holder> shard("tfrecord:" + dir / "s-00001.tfrecord");
    CHECK_THROWS_MATCHES(shard.write("00000250", "a"), key_error, test::says("must have key 00000000"));
  }
  {  // Shards of a numbered table are renumbered, and read together number on.
    table_writer<bytes_holder> whole("tfrecord:" + dir / "whole.tfrecord");
    for (std::uint64_t i = 0; i < 5; ++i) whole.write(ordinal_key(i), std::to_string(i));
    whole.close();
    shard_table<bytes_holder>("tfrecord:" + dir / "whole.tfrecord", "tfrecord:" + dir / "part.tfrecord", 2);
    CHECK(keys_of("tfrecord:" + dir / "part-*-of-00002.tfrecord") ==
          keys_of("tfrecord:" + dir / "whole.tfrecord"));
  }
  {  // Keys kept beside the records, or inside them.
    table_writer<bytes_holder> out("tfrecord,scp:" + file + "," + dir / "f.scp");
    out.write("utt-A", "a");
    out.write("utt-B", "b");
    out.close();
    CHECK(keys_of("scp:" + dir / "f.scp") == std::vector<std::string>{"utt-A", "utt-B"});
    table_writer<example_holder> keyed("tfrecord,key=utt:" + dir / "k.tfrecord");
    keyed.write("utt-A", example{});
    keyed.close();
    CHECK(keys_of<example_holder>("tfrecord,key=utt:" + dir / "k.tfrecord") ==
          std::vector<std::string>{"utt-A"});
  }
  // Copying an archive's keys to a TFRecord table is refused before anything is written.
  write_three<holder<std::string>>("ark:" + dir / "a.ark", std::string("x"));
  CHECK_THROWS_MATCHES(shard_table<bytes_holder>("ark:" + dir / "a.ark", "tfrecord:" + dir / "c.tfrecord", 2),
                       key_error, test::says("'utt1'"));
  // Keys longer than readers take back are refused, naming the table.
  table_writer<bytes_holder> ark("ark:" + dir / "long.ark");
  CHECK_THROWS_MATCHES(ark.write(std::string((1 << 20) + 1, 'k'), "x"), key_error,
                       test::says("for '" + dir / "long.ark") && test::says("at most 1048576 bytes"));
  // IDX files keep no keys either: their numbers start at 0.
  table_writer<holder<std::vector<float>>> idx("idx:" + dir / "x.idx");
  CHECK_THROWS_MATCHES(idx.write("00000001", std::vector<float>{1}), key_error, test::says("00000000"));
}

TEST_CASE("a TFRecord file cut inside a record's header is an error, unless read as TensorFlow reads it",
          "[contracts][tfrecord]") {
  test::temp_dir dir;
  const std::string file = dir / "t.tfrecord";
  write_three<bytes_holder>("tfrecord:" + file, std::string(20, 'x'));
  const std::string whole = test::read_file(file);  // three records of 12 + 20 + 4 bytes
  for (std::size_t cut : {36 + 1, 36 + 11, 72 + 6}) {
    INFO(cut);
    write_file(dir / "cut.tfrecord", whole.substr(0, cut));
    CHECK_THROWS_MATCHES(keys_of("tfrecord:" + dir / "cut.tfrecord"), format_error,
                         test::says("at byte " + std::to_string(cut / 36 * 36) + " (key '" +
                                    ordinal_key(cut / 36) + "'): expected a 12-byte record header"));
    CHECK(keys_of("tfrecord,unended:" + dir / "cut.tfrecord").size() == cut / 36);
    random_access_table_reader<bytes_holder> by_key("tfrecord:" + dir / "cut.tfrecord");
    CHECK_THROWS_AS(by_key.at("00000009"), format_error);  // not a missing key: a cut file
  }
}

TEST_CASE("a tar file cut at a member boundary is an error, unless its writer is known to omit the end",
          "[contracts][tar]") {
  test::temp_dir dir;
  const std::string file = dir / "t.tar";
  write_three<bytes_holder>("tar:" + file, std::string(100, 'x'));
  const std::string whole = test::read_file(file);
  for (std::size_t cut : {1024, 2048, 3072}) {
    INFO(cut);
    write_file(dir / "cut.tar", whole.substr(0, cut));
    CHECK_THROWS_MATCHES(
        keys_of("tar:" + dir / "cut.tar"), format_error,
        test::says("at byte " + std::to_string(cut) + ": expected a tar header, or the zero blocks"));
    CHECK(keys_of("tar,unended:" + dir / "cut.tar").size() == cut / 1024);
    // Under p the cut ends the table, as any bad input does.
    CHECK(keys_of("tar,p:" + dir / "cut.tar").size() == cut / 1024);
  }
  write_file(dir / "lone.tar", whole.substr(0, 3072 + 512));  // one end block will do, as for GNU tar
  CHECK(keys_of("tar:" + dir / "lone.tar").size() == 3);
  CHECK(keys_of("tar:" + file).size() == 3);
}

TEST_CASE("an absent key is a missing_key_error, a damaged file a format_error", "[contracts][random]") {
  test::temp_dir dir;
  write_three<holder<std::string>>("ark,scp:" + dir / "a.ark," + dir / "a.scp", std::string("x"));
  for (std::string rspec : {"ark:" + dir / "a.ark", "scp:" + dir / "a.scp", "s,ark:" + dir / "a.ark"}) {
    INFO(rspec);
    random_access_table_reader<holder<std::string>> r(rspec);
    CHECK(r.at("utt2") == "x");
    CHECK_THROWS_AS(r.at("utt9"), missing_key_error);
    try {
      r.at("nope");
    } catch (const missing_key_error& e) {
      CHECK(e.key() == "nope");
      CHECK_THAT(e.what(), Catch::Contains("no entry for key 'nope'"));
    }
    CHECK_FALSE(r.find("utt9"));
  }
  std::string bytes = test::read_file(dir / "a.ark");
  write_file(dir / "bad.ark", bytes.substr(0, bytes.size() - 3));
  random_access_table_reader<holder<std::string>> r("ark:" + dir / "bad.ark");
  CHECK_THROWS_AS(r.at("utt9"), format_error);
}

TEST_CASE("duplicate keys under random access follow Kaldi's rule for unsorted tables",
          "[contracts][random]") {
  test::temp_dir dir;
  {
    table_writer<holder<std::string>> out("ark,scp:" + dir / "d.ark," + dir / "d.scp");
    out.write("x", "first");
    out.write("y", "y");
    out.write("x", "second");
    out.write("z", "z");
  }
  {
    table_writer<bytes_holder> out("tar:" + dir / "d.tar");
    for (auto [k, v] : {std::pair{"x", "first"}, {"y", "y"}, {"x", "second"}, {"z", "z"}}) out.write(k, v);
  }
  // Archives and tar files are read ahead only as far as a lookup needs: a key found before
  // the second copy answers (with the first), and reading ahead onto the second copy is an
  // error for that lookup and every later one that has to read on (as Kaldi's
  // RandomAccessTableReader for unsorted archives).
  for (std::string rspec : {"ark:" + dir / "d.ark", "tar:" + dir / "d.tar"}) {
    INFO(rspec);
    if (rspec.starts_with("tar")) {
      random_access_table_reader<bytes_holder> r(rspec);
      CHECK(r.at("x") == "first");
      CHECK(r.at("y") == "y");
      CHECK_THROWS_MATCHES(r.at("z"), format_error, test::says("duplicate key 'x'"));
      CHECK_THROWS_MATCHES(r.at("absent"), format_error, test::says("duplicate key 'x'"));
    } else {
      random_access_table_reader<holder<std::string>> r(rspec);
      CHECK(r.at("x") == "first");
      CHECK(r.at("y") == "y");
      CHECK_THROWS_MATCHES(r.at("z"), format_error, test::says("duplicate key 'x'"));
      CHECK_THROWS_MATCHES(r.at("absent"), format_error, test::says("duplicate key 'x'"));
    }
  }
  // A script is read whole at open, as Kaldi's is: a repeated key is an error at once.
  CHECK_THROWS_MATCHES(random_access_table_reader<holder<std::string>>("scp:" + dir / "d.scp"), format_error,
                       test::says("'x' twice"));
  // Reading in order gives every entry, duplicates included, as Kaldi's sequential reader does.
  CHECK(keys_of("ark:" + dir / "d.ark") == std::vector<std::string>{"x", "y", "x", "z"});
}

namespace {
struct framework_record {
  std::int32_t id = 0;
  std::variant<std::monostate, float, std::string, std::vector<std::int32_t>> payload;
  std::optional<std::variant<std::int64_t, double>> score;
  bool operator==(const framework_record&) const = default;
};

template <class Codec>
void check_variants() {
  for (const framework_record& v : {framework_record{1, {}, {}}, framework_record{2, 2.5f, std::int64_t{7}},
                                    framework_record{3, std::string("hi there"), 0.25},
                                    framework_record{4, std::vector<std::int32_t>{1, -2}, {}}}) {
    auto bytes = encode<Codec>(v);
    CHECK(decode<Codec, framework_record>(bytes) == v);
  }
}
}  // namespace

TEST_CASE("std::variant is built into every codec", "[contracts][variant]") {
  check_variants<kaldi_binary>();
  check_variants<kaldi_text>();
  check_variants<raw_little>();
  check_variants<raw_big>();
  // An index that names no alternative is a format_error at the index.
  auto bytes = encode<raw_little>(framework_record{2, 2.5f, {}});
  std::string damaged(bytes.data(), bytes.size());
  damaged[4] = 9;
  CHECK_THROWS_MATCHES(
      (decode<raw_little, framework_record>(damaged)), format_error,
      test::says("at byte 4: expected the index of one of the variant's 4 alternatives, found index 9"));
  // And a table of them round-trips.
  test::temp_dir dir;
  table_writer<holder<framework_record>> out("ark:" + dir / "v.ark");
  out.write("a", framework_record{5, std::string("x"), 1.5});
  out.close();
  sequential_table_reader<holder<framework_record>> in("ark:" + dir / "v.ark");
  CHECK(in.value() == framework_record{5, std::string("x"), 1.5});
}
