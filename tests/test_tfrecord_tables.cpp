// Tables over TFRecord files: specifiers, ordinal and feature keys, scripts pointing at
// records, indexes, shards, compression, and the errors a table reports for bad records.
#include <tablio/holder/example_form.hpp>
#include <tablio/table/record_form.hpp>
#include <tablio/table/shard.hpp>
#include <tablio/tablio.hpp>

#include "test_support.hpp"

using namespace tablio;

namespace {

example make_example(int i) {
  example ex;
  ex.set("label", std::vector<std::int64_t>{i});
  ex.set("pixels", std::vector<float>{0.5f * i, -1.0f, 3.25f});
  ex.set("name", std::vector<std::string>{"item" + std::to_string(i)});
  return ex;
}

std::string key_of(int i) { return "utt" + std::to_string(100 + i); }

// Writes n Examples under keys utt100... to a wspecifier that keeps keys (key=, a script beside
// it), or under record numbers, the keys reading gives, to one that keeps none.
void write_examples(const std::string& wspec, int n) {
  table_writer<example_holder> out(wspec);
  const bool keeps_keys = !wspec.starts_with("tfrecord") || wspec.find("key=") != std::string::npos ||
                          wspec.find("scp") != std::string::npos;
  for (int i = 0; i < n; ++i)
    out.write(keeps_keys ? key_of(i) : ordinal_key(static_cast<std::uint64_t>(i)), make_example(i));
  out.close();
}

std::vector<std::pair<std::string, example>> read_all(const std::string& rspec) {
  std::vector<std::pair<std::string, example>> got;
  for (auto& [key, value] : sequential_table_reader<example_holder>(rspec)) got.emplace_back(key, value);
  return got;
}

}  // namespace

TEST_CASE("tfrecord specifiers", "[tfrecord][specifier]") {
  auto w = parse_wspecifier("tfrecord,scp,key=utt,gzip:a.tfrecord,a.scp");
  REQUIRE(w);
  CHECK(w->kind == wspecifier_kind::tfrecord_and_script);
  CHECK(w->archive == "a.tfrecord");
  CHECK(w->script == "a.scp");
  CHECK(w->records.key_feature == "utt");
  CHECK(w->compression == output_compression::gzip);
  CHECK(parse_wspecifier("tfrecord:-")->kind == wspecifier_kind::tfrecord);
  auto r = parse_rspecifier("tfrecord,key=k,shard=2/8:train@16");
  REQUIRE(r);
  CHECK(r->kind == rspecifier_kind::tfrecord);
  CHECK(r->shard_index == 2);
  CHECK(r->shard_count == 8);
  CHECK(parse_rspecifier("scp,key=k:a.scp")->records.key_feature == "k");
  for (const char* bad : {"ark,key=k:a.ark", "ark,gzip:a.ark", "tfrecord,ark:a", "ark,tfrecord:a",
                          "tfrecord,key=:a", "tfrecord,shard=3/3:a"})
    CHECK_FALSE(parse_wspecifier(bad));
  for (const char* bad : {"ark,key=k:a", "scp,shard=0/2:a", "tfrecord,shard=2/2:a", "tfrecord,shard=1:a",
                          "tfrecord,shard=a/2:a", "tfrecord,gzip:a", "tfrecord,scp:a"})
    CHECK_FALSE(parse_rspecifier(bad));
}

TEST_CASE("a tfrecord table is a TFRecord file of the holder's records", "[tfrecord][table]") {
  test::temp_dir dir;
  write_examples("tfrecord:" + (dir / "a.tfrecord"), 3);
  // The file is exactly what the framing writes for the encoded Examples.
  std::string expected;
  {
    tfrecord_writer w(memory_writer(expected));
    for (int i = 0; i < 3; ++i) w.write(encode_example(make_example(i)));
    w.close();
  }
  CHECK(test::read_file(dir / "a.tfrecord") == expected);
  auto got = read_all("tfrecord:" + (dir / "a.tfrecord"));
  REQUIRE(got.size() == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(got[i].first == ordinal_key(i));
    CHECK(got[i].second == make_example(i));
  }
  CHECK(ordinal_key(0) == "00000000");
  CHECK(ordinal_key(123456789012) == "123456789012");
}

TEST_CASE("keys kept in a bytes feature survive ark -> tfrecord -> ark", "[tfrecord][table]") {
  test::temp_dir dir;
  write_examples("ark:" + (dir / "in.ark"), 5);
  {
    table_writer<example_holder> out("tfrecord,key=utt:" + (dir / "mid.tfrecord"));
    for (auto& [key, value] : sequential_table_reader<example_holder>("ark:" + (dir / "in.ark")))
      out.write(key, value);
  }
  // The key is a feature of each record...
  {
    tfrecord_reader r(open_tfrecord_input(dir / "mid.tfrecord"));
    std::string_view rec;
    REQUIRE(r.next(rec));
    example first = decode_example(rec);
    REQUIRE(first.get<std::string>("utt"));
    CHECK(first.get<std::string>("utt")->at(0) == key_of(0));
  }
  // ...and is taken out again on reading.
  {
    table_writer<example_holder> out("ark:" + (dir / "out.ark"));
    for (auto& [key, value] :
         sequential_table_reader<example_holder>("tfrecord,key=utt:" + (dir / "mid.tfrecord")))
      out.write(key, value);
  }
  CHECK(test::read_file(dir / "out.ark") == test::read_file(dir / "in.ark"));
  // Views of the records give the same keys and leave the key feature out too.
  {
    auto owned = sequential_table_reader<example_holder>("tfrecord,key=utt:" + (dir / "mid.tfrecord"));
    for (auto& [key, view] :
         sequential_table_reader<example_view_holder>("tfrecord,key=utt:" + (dir / "mid.tfrecord"))) {
      REQUIRE(!owned.done());
      CHECK(key == owned.key());
      CHECK(view.find("utt") == nullptr);
      CHECK(view.to_example().features == owned.value().features);
      owned.next();
    }
    CHECK(owned.done());
  }
  // A record without the key feature is a format_error naming the feature, for views too.
  {
    std::string spec = "tfrecord,key=nope:" + (dir / "mid.tfrecord");
    using views = sequential_table_reader<example_view_holder>;
    CHECK_THROWS_AS(views(spec), format_error);
    CHECK_THROWS_WITH(views(spec), Catch::Contains("at byte 12") &&
                                       Catch::Contains("a bytes feature 'nope' holding the key") &&
                                       Catch::Contains("no such feature"));
  }
  // Without key=, the records keep the feature and keys are ordinals.
  auto plain = read_all("tfrecord:" + (dir / "mid.tfrecord"));
  CHECK(plain[1].first == "00000001");
  CHECK(plain[1].second.get<std::string>("utt")->at(0) == key_of(1));
}

TEST_CASE("SequenceExamples keep their key in the context", "[tfrecord][table]") {
  test::temp_dir dir;
  sequence_example seq;
  seq.context.set("length", std::vector<std::int64_t>{2});
  seq.feature_lists["frames"].features = {std::vector<float>{1, 2}, std::vector<float>{3, 4}};
  {
    table_writer<sequence_example_holder> out("tfrecord,key=id:" + (dir / "s.tfrecord"));
    out.write("first", seq);
  }
  sequential_table_reader<sequence_example_holder> in("tfrecord,key=id:" + (dir / "s.tfrecord"));
  REQUIRE(!in.done());
  CHECK(in.key() == "first");
  CHECK(in.value().context.features == seq.context.features);
  CHECK(in.value().feature_lists == seq.feature_lists);
}

TEST_CASE("a value with a feature of the key's name is refused, not overwritten", "[tfrecord][table][bad]") {
  test::temp_dir dir;
  example own = make_example(1);
  own.set("utt", std::vector<std::string>{"the user's"});
  table_writer<example_holder> out("tfrecord,key=utt:" + (dir / "k.tfrecord"));
  CHECK_THROWS_AS(out.write("a", own), usage_error);
  CHECK_THROWS_WITH(out.write("a", own), Catch::Contains("key 'a'") && Catch::Contains("feature 'utt'"));
  own.set("utt", std::vector<std::string>{"a"});  // even one holding the key: reading would take it out
  CHECK_THROWS_AS(out.write("a", own), usage_error);
  out.write("b", make_example(2));
  sequence_example seq;
  seq.context.set("utt", std::vector<std::int64_t>{7});
  CHECK_THROWS_WITH(
      table_writer<sequence_example_holder>("tfrecord,key=utt:" + (dir / "s.tfrecord")).write("a", seq),
      Catch::Contains("feature 'utt'"));
  out.close();
  // Nothing was lost or replaced: the table holds the one value written.
  auto back = read_all("tfrecord,key=utt:" + (dir / "k.tfrecord"));
  REQUIRE(back.size() == 1);
  CHECK(back[0].first == "b");
  CHECK(back[0].second == make_example(2));
}

TEST_CASE("tfrecord,scp writes a script of record offsets for random access", "[tfrecord][table][scp]") {
  test::temp_dir dir;
  test::in_folder here(dir.path);
  write_examples("tfrecord,scp,key=utt:d.tfrecord,d.scp", 4);
  std::string script = test::read_file("d.scp");
  CHECK(script.starts_with("utt100 d.tfrecord:0\nutt101 d.tfrecord:"));
  // The built index is the same script.
  std::string rebuilt;
  {
    script_writer w(memory_writer(rebuilt));
    for (const auto& e : index_tfrecord("tfrecord,key=utt:d.tfrecord")) w.write(e.key, e.rxfilename);
    w.close();
  }
  CHECK(rebuilt == script);
  write_tfrecord_index("tfrecord,key=utt:d.tfrecord", "again.scp");
  CHECK(test::read_file("again.scp") == script);

  random_access_table_reader<example_holder> by_script("scp,key=utt:d.scp");
  CHECK(by_script.at("utt102") == make_example(2));
  CHECK(by_script.at("utt100") == make_example(0));
  CHECK_FALSE(by_script.contains("utt999"));
  // Without key=, the key feature stays in the value.
  random_access_table_reader<example_holder> raw("scp:d.scp");
  CHECK(raw.at("utt103").get<std::string>("utt")->at(0) == "utt103");
  // A tfrecord: specifier is indexed at open.
  random_access_table_reader<example_holder> direct("tfrecord,key=utt:d.tfrecord");
  CHECK(direct.at("utt101") == make_example(1));
  random_access_table_reader<example_holder> ordinals("tfrecord:d.tfrecord");
  CHECK(ordinals.at("00000003").get<std::int64_t>("label")->at(0) == 3);
  // Sequential reading of the script gives the same values.
  int n = 0;
  for (auto& [key, value] : sequential_table_reader<example_holder>("scp,key=utt:d.scp")) {
    CHECK(key == key_of(n));
    CHECK(value == make_example(n));
    ++n;
  }
  CHECK(n == 4);
}

TEST_CASE("a script whose record holds another key is an error", "[tfrecord][table][bad]") {
  test::temp_dir dir;
  test::in_folder here(dir.path);
  write_examples("tfrecord,scp,key=utt:d.tfrecord,d.scp", 2);
  std::string script = test::read_file("d.scp");
  { std::ofstream("swapped.scp") << "utt100 " << script.substr(script.find('\n') + 8); }
  random_access_table_reader<example_holder> in("scp,key=utt:swapped.scp");
  CHECK_THROWS_WITH(in.at("utt100"), Catch::Contains("the record of key 'utt101'"));
}

TEST_CASE("holders without a record form store their binary object", "[tfrecord][table]") {
  test::temp_dir dir;
  {
    table_writer<holder<matrix<float>>> out("tfrecord,scp:" + (dir / "m.tfrecord") + "," + (dir / "m.scp"));
    out.write("a", matrix<float>(2, 3, std::vector<float>(6, 1.5f)));
  }
  tfrecord_reader r(open_tfrecord_input(dir / "m.tfrecord"));
  std::string_view rec;
  REQUIRE(r.next(rec));
  CHECK(rec.substr(0, 5) == std::string_view("\0BFM ", 5));
  sequential_table_reader<holder<matrix<float>>> in("tfrecord:" + (dir / "m.tfrecord"));
  CHECK(in.value() == matrix<float>(2, 3, std::vector<float>(6, 1.5f)));
  CHECK_THROWS_WITH(table_writer<holder<matrix<float>>>("tfrecord,key=k:" + (dir / "x.tfrecord")),
                    Catch::Contains("key=NAME"));
  // A record with bytes after the object is an error naming the record's offset.
  {
    tfrecord_writer w(open_output(dir / "extra.tfrecord"));
    w.write(std::string(rec) + "junk");
    w.close();
  }
  CHECK_THROWS_WITH(
      sequential_table_reader<holder<matrix<float>>>("tfrecord:" + (dir / "extra.tfrecord")).value(),
      Catch::Contains("extra.tfrecord' at byte 51 (key '00000000')") && Catch::Contains("4 more bytes"));
}

TEST_CASE("bytes_holder stores records unchanged", "[tfrecord][table]") {
  test::temp_dir dir;
  const std::string path = test::data_path("tfrecord/generated/tutorial10.tfrecord");
  table_writer<bytes_holder> out("tfrecord:" + (dir / "copy.tfrecord"));
  for (auto& [key, value] : sequential_table_reader<bytes_holder>("tfrecord:" + path)) out.write(key, value);
  out.close();
  CHECK(test::read_file(dir / "copy.tfrecord") == test::read_file(path));
}

TEST_CASE("shards: lists, patterns, name@N and shard=I/N", "[tfrecord][table][shard]") {
  test::temp_dir dir;
  test::in_folder here(dir.path);
  CHECK(shard_name("train", 3, 128) == "train-00003-of-00128");
  int next = 0;
  for (int s = 0; s < 3; ++s) {
    table_writer<example_holder> out("tfrecord,key=utt:" + shard_name("train", s, 3));
    for (int i = 0; i < 4; ++i, ++next) out.write(key_of(next), make_example(next));
  }
  auto keys = [](const std::string& rspec) {
    std::vector<std::string> k;
    for (auto& [key, value] : sequential_table_reader<example_holder>(rspec)) k.push_back(key);
    return k;
  };
  std::vector<std::string> all;
  for (int i = 0; i < 12; ++i) all.push_back(key_of(i));
  CHECK(keys("tfrecord,key=utt:train@3") == all);
  CHECK(keys("tfrecord,key=utt:train-*-of-00003") == all);
  CHECK(keys("tfrecord,key=utt:train-00000-of-00003,train-00002-of-00003").size() == 8);
  std::vector<std::string> odd;
  for (int i = 1; i < 12; i += 2) odd.push_back(key_of(i));
  CHECK(keys("tfrecord,key=utt,shard=1/2:train@3") == odd);
  // Ordinals count over all files.
  CHECK(keys("tfrecord,shard=2/5:train@3") == std::vector<std::string>{"00000002", "00000007"});
  CHECK_THROWS_WITH(keys("tfrecord:nothing-*"), Catch::Contains("no file matches"));
  random_access_table_reader<example_holder> any("tfrecord,key=utt:train@3");
  CHECK(any.at(key_of(9)) == make_example(9));
  // Work split by shard: one rspecifier per file, with the table's options.
  std::vector<std::string> files{"tfrecord,key=utt:train-00000-of-00003",
                                 "tfrecord,key=utt:train-00001-of-00003",
                                 "tfrecord,key=utt:train-00002-of-00003"};
  CHECK(table_files("tfrecord,key=utt:train@3") == files);
  CHECK(table_files("tfrecord,key=utt:train-*-of-00003") == files);
  CHECK(table_files("ark:a.ark") == std::vector<std::string>{"ark:a.ark"});
  CHECK(table_files("tfrecord:cat train@3 |") == std::vector<std::string>{"tfrecord:cat train@3 |"});
  CHECK_THROWS_WITH(table_files("tfrecord:nothing-*"), Catch::Contains("no file matches"));
  // name@N: an absurd N is a usage error at once; a missing shard is named before any is read.
  CHECK_THROWS_AS(keys("tfrecord:train@999999999"), usage_error);
  CHECK_THROWS_AS(table_files("tfrecord:train@99999999"), usage_error);
  CHECK_THROWS_WITH(keys("tfrecord:train@4"), Catch::Contains("cannot find shard 0 of 4"));
}

TEST_CASE("compressed tfrecord tables", "[tfrecord][table][zlib]") {
  test::temp_dir dir;
  write_examples("tfrecord:" + (dir / "plain.tfrecord"), 3);
#if defined(TABLIO_WITH_ZLIB)
  write_examples("tfrecord,key=utt:" + (dir / "a.tfrecord.gz"), 3);
  write_examples("tfrecord,zlib:" + (dir / "b.tfrecord"), 3);
  CHECK(detect_compression(test::read_file(dir / "a.tfrecord.gz")) == compression::gzip);
  CHECK(detect_compression(test::read_file(dir / "b.tfrecord")) == compression::zlib);
  CHECK(read_all("tfrecord,key=utt:" + (dir / "a.tfrecord.gz"))[2].first == key_of(2));
  CHECK(read_all("tfrecord:" + (dir / "b.tfrecord")) == read_all("tfrecord:" + (dir / "plain.tfrecord")));
  write_examples("tfrecord,nz:" + (dir / "c.tfrecord.gz"), 3);
  CHECK(test::read_file(dir / "c.tfrecord.gz") == test::read_file(dir / "plain.tfrecord"));
  CHECK_THROWS_WITH(write_examples("tfrecord,scp,gzip:" + (dir / "d") + "," + (dir / "d.scp"), 1),
                    Catch::Contains("compressed"));
  CHECK_THROWS_WITH(index_tfrecord("tfrecord:" + (dir / "a.tfrecord.gz")),
                    Catch::Contains("gzip-compressed"));
#else
  CHECK_THROWS_WITH(write_examples("tfrecord:" + (dir / "a.tfrecord.gz"), 1),
                    Catch::Contains("tablio::zlib"));
#endif
}

TEST_CASE("bad records in a tfrecord table", "[tfrecord][table][bad]") {
  const std::string bad = test::data_path("tfrecord/corrupt/bad_datacrc.tfrecord");
  // Record 1's data fails its CRC (TensorFlow's "corrupted record at 115", where its reading
  // stops): the error of that record's value, naming its offset and key. Its length holds, so
  // the records after it are read on.
  std::size_t records = 0;
  {
    tfrecord_read_options count_all;
    count_all.verify_crc = false;
    tfrecord_reader all(reader(file_source(bad), bad), count_all);
    for (std::string_view r; all.next(r);) ++records;
  }
  REQUIRE(records > 2);
  std::vector<std::string> keys;
  sequential_table_reader<example_holder> table("tfrecord:" + bad);
  for (; !table.done(); table.next()) {
    try {
      table.value();
      keys.push_back(table.key());
    } catch (const data_loss_error& e) {
      CHECK((e.path() == bad && e.offset() == 115u && e.key() == "00000001" && table.key() == "00000001"));
      CHECK(e.cause() == data_loss_error::cause::corrupted_data);
      CHECK_THAT(e.what(), Catch::Contains("corrupted record at 115"));
    }
  }
  CHECK(keys.size() == records - 1);
  CHECK((keys[0] == "00000000" && keys[1] == "00000002"));
  // A loop that does not catch it stops there, as TensorFlow's does.
  CHECK_THROWS_AS(read_all("tfrecord:" + bad), data_loss_error);
  // Under p the bad record is left out, and error() says which.
  sequential_table_reader<example_holder> p("tfrecord,p:" + bad);
  std::size_t n = 0;
  for (; !p.done(); p.next()) ++n;
  CHECK((n == keys.size() && p.left_out() == 1));
  CHECK_THAT(p.error(), Catch::Contains("corrupted record") && Catch::Contains("00000001"));
  // Where the keys are in the records (key=), a bad record ends a plain table, claiming no key
  // (its key is lost with it), and under p is left out as well, in one thread or several.
  test::temp_dir dir;
  write_examples("tfrecord,key=utt:" + dir / "keyed.tfrecord", 3);
  std::string keyed = test::read_file(dir / "keyed.tfrecord");
  keyed[keyed.size() / 2] ^= 0x40;  // inside the second record's data
  test::write_file(dir / "keyed.tfrecord", keyed);
  CHECK_THROWS_MATCHES(
      read_all("tfrecord,key=utt:" + dir / "keyed.tfrecord"), data_loss_error,
      Catch::Predicate<data_loss_error>([](const data_loss_error& e) { return e.key().empty(); }));
  for (const char* threads : {"", "threads=3,"}) {
    std::vector<std::string> kept;
    sequential_table_reader<example_holder> keyed_p("tfrecord,p," + std::string(threads) +
                                                    "key=utt:" + dir / "keyed.tfrecord");
    for (; !keyed_p.done(); keyed_p.next()) kept.push_back(keyed_p.key());
    CHECK(kept == std::vector<std::string>{key_of(0), key_of(2)});
    CHECK(keyed_p.left_out() == 1);
    CHECK_THAT(keyed_p.error(), Catch::Contains("corrupted record"));
  }
  // Found by its offset, from a script, it is named by its key too.
  test::write_file(dir / "bad.scp", "first " + bad + ":0\nsecond " + bad + ":103\n");
  random_access_table_reader<example_holder> by_key("scp:" + dir / "bad.scp");
  CHECK_NOTHROW(by_key.at("first"));
  CHECK_THROWS_MATCHES(by_key.at("second"), data_loss_error, test::says("(key 'second')"));
  // A missing key feature names it.
  CHECK_THROWS_WITH(read_all("tfrecord,key=utt:" + test::data_path("tfrecord/generated/tutorial10.tfrecord")),
                    Catch::Contains("bytes feature 'utt'") && Catch::Contains("no such feature") &&
                        Catch::Contains("at byte 12 (key '00000000')"));
}

namespace {
enum class split : std::uint8_t { train, test };
struct digit {
  std::int64_t label;
  std::vector<float> image;
  std::string source;
  split part;
  double weight;
  std::array<std::int32_t, 2> shape;
  std::optional<std::string> note;
};
}  // namespace

template <>
struct tablio::example_field_names<digit> {
  static constexpr std::array names{"label", "image", "source", "split", "weight", "shape", "note"};
};

TEST_CASE("a user's aggregate as an Example, with explicit feature names", "[example][mapping]") {
  digit d{7, {0.5f, 1.0f}, "mnist", split::test, 0.25, {28, 28}, std::nullopt};
  example ex = to_example(d);
  CHECK(*ex.get<std::int64_t>("label") == std::vector<std::int64_t>{7});
  CHECK(*ex.get<float>("image") == std::vector<float>{0.5f, 1.0f});
  CHECK(*ex.get<std::string>("source") == std::vector<std::string>{"mnist"});
  CHECK(*ex.get<std::int64_t>("split") == std::vector<std::int64_t>{1});
  CHECK(*ex.get<float>("weight") == std::vector<float>{0.25f});
  CHECK(*ex.get<std::int64_t>("shape") == std::vector<std::int64_t>{28, 28});
  CHECK(ex.features.count("note") == 0);
  digit back = from_example<digit>(ex);
  CHECK(back.label == 7);
  CHECK(back.image == d.image);
  CHECK(back.part == split::test);
  CHECK(back.shape == d.shape);
  CHECK_FALSE(back.note);
  ex.set("note", std::vector<std::string>{"hi"});
  CHECK(from_example<digit>(ex).note == "hi");

  example bad = to_example(d);
  bad.features.erase("label");
  CHECK_THROWS_WITH(from_example<digit>(bad, "r"),
                    Catch::Contains("feature 'label'") && Catch::Contains("no such feature"));
  bad = to_example(d);
  bad.set("label", std::vector<float>{1});
  CHECK_THROWS_WITH(from_example<digit>(bad),
                    Catch::Contains("an int64 list") && Catch::Contains("a float list"));
  bad.set("label", std::vector<std::int64_t>{1, 2});
  CHECK_THROWS_WITH(from_example<digit>(bad), Catch::Contains("one value") && Catch::Contains("2 values"));
  bad = to_example(d);
  bad.set("shape", std::vector<std::int64_t>{28});
  CHECK_THROWS_WITH(from_example<digit>(bad), Catch::Contains("2 values") && Catch::Contains("1 values"));

  // Through a keyed TFRecord table and back.
  test::temp_dir dir;
  {
    table_writer<example_struct_holder<digit>> out("tfrecord,key=id:" + (dir / "d.tfrecord"));
    out.write("seven", d);
  }
  sequential_table_reader<example_struct_holder<digit>> in("tfrecord,key=id:" + (dir / "d.tfrecord"));
  CHECK(in.key() == "seven");
  CHECK(in.value().image == d.image);
  // The records are plain Examples for any reader.
  sequential_table_reader<example_holder> plain("tfrecord:" + (dir / "d.tfrecord"));
  CHECK(plain.value().get<std::string>("id")->at(0) == "seven");
}

TEST_CASE("values that are not Examples stored as Examples of shape and data", "[tfrecord][example_form]") {
  using form_holder = example_record_holder<holder<matrix<float>>>;
  matrix<float> m(2, 3, {1, 2, 3, 4, 5, 6});
  std::string record;
  form_holder::encode_record(record, m, "key", "utt1");
  example ex = decode_example(record);
  CHECK(std::get<std::vector<std::int64_t>>(ex.features.at("shape")) == std::vector<std::int64_t>{2, 3});
  CHECK(std::get<std::vector<float>>(ex.features.at("data")) == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(std::get<std::vector<std::string>>(ex.features.at("key")) == std::vector<std::string>{"utt1"});
  form_holder h;
  h.decode_record(record, "r");
  CHECK(h.take_record_key("key", "r") == "utt1");
  CHECK(h.value() == m);
  // The shape and the data must agree.
  ex.features["shape"] = std::vector<std::int64_t>{3, 3};
  CHECK_THROWS_WITH(h.decode_record(encode_example(ex), "r"),
                    Catch::Contains("feature 'data'") && Catch::Contains("9 values"));
  ex.features["shape"] = std::vector<std::int64_t>{-1, 3};
  CHECK_THROWS_WITH(h.decode_record(encode_example(ex), "r"), Catch::Contains("feature 'shape'"));
  ex.features.erase("shape");
  CHECK_THROWS_WITH(h.decode_record(encode_example(ex), "r"), Catch::Contains("no such feature"));
  // Records of the holder's own form (a Kaldi binary object, as holder<matrix<float>> writes to
  // TFRecord) are read too, files of both forms being about; they keep no key.
  test::temp_dir dir;
  {
    table_writer<holder<matrix<float>>> own("tfrecord:" + dir / "own.tfrecord");
    own.write("00000000", m);
  }
  sequential_table_reader<form_holder> both("tfrecord:" + dir / "own.tfrecord");
  CHECK(both.value() == m);
  CHECK_THROWS_WITH(sequential_table_reader<form_holder>("tfrecord,key=key:" + dir / "own.tfrecord"),
                    Catch::Contains("feature 'key'"));
  // Ragged vectors keep their row lengths; a Datum keeps its label.
  using ragged = example_record_holder<basic_vector_vector_holder<std::int32_t>>;
  std::vector<std::vector<std::int32_t>> rows{{1, 2}, {}, {3}};
  ragged::encode_record(record, rows);
  ragged r;
  r.decode_record(record, "r");
  CHECK(r.value() == rows);
  datum d;
  d.channels = 1;
  d.height = d.width = 2;
  d.data = "abcd";
  d.present.data = true;
  d.label = 7;
  example_record_holder<datum_holder>::encode_record(record, d);
  example_record_holder<datum_holder> back;
  back.decode_record(record, "r");
  CHECK(encode_datum(back.value()) == encode_datum(d));
  // An encoded image as convert_imageset writes it: data, label and encoded alone. Through an
  // Example and back it gains no channels, height or width; nor, without a label, a label.
  datum jpeg;
  jpeg.present = {false, false, false, true, true, true};
  jpeg.data = "\xff\xd8 a JPEG";
  jpeg.label = 3;
  jpeg.encoded = true;
  for (bool labelled : {true, false}) {
    jpeg.present.label = labelled;
    example_record_holder<datum_holder>::encode_record(record, jpeg);
    CHECK(decode_example(record).features.count("shape") == 0);
    back.decode_record(record, "r");
    CHECK(encode_datum(back.value()) == encode_datum(jpeg));
  }
  // An image's bytes and float_data both (Caffe allows it): both come back.
  jpeg.float_data = {1.0f, -2.5f};
  example_record_holder<datum_holder>::encode_record(record, jpeg);
  back.decode_record(record, "r");
  CHECK(encode_datum(back.value()) == encode_datum(jpeg));
  CHECK(back.value().float_data == jpeg.float_data);
}

TEST_CASE("every entry point keeps the keys of values stored as Examples in one place",
          "[tfrecord][example_form]") {
  using H = holder<matrix<float>>;
  test::temp_dir dir;
  const std::string file = dir / "m.tfrecord", plain = "tfrecord:" + file, keyed = "tfrecord,key=key:" + file;
  // Written plainly, keys go in a "key" feature, unless the first is the first record's number.
  with_writing_holder<H>("tfrecord,scp:" + file + "," + dir / "m.scp", [&]<class W>() {
    table_writer<W> out("tfrecord,scp:" + file + "," + dir / "m.scp");
    out.write("utt1", matrix<float>(1, 2, {1, 2}));
    out.write("utt2", matrix<float>(2, 1, {3, 4}));
    out.close();
  });
  CHECK(decode_example(sequential_table_reader<bytes_holder>(plain).value()).features.count("key") == 1);
  {  // with threads encoding the values, the same records
    table_writer<example_record_holder<H>> out("tfrecord,threads=3:" + dir / "t.tfrecord");
    out.write("utt1", matrix<float>(1, 2, {1, 2}));
    out.write("utt2", matrix<float>(2, 1, {3, 4}));
  }
  CHECK(test::read_file(dir / "t.tfrecord") == test::read_file(file));
  const std::string numbered = "tfrecord:" + dir / "n.tfrecord";
  {
    table_writer<example_record_holder<H>> out(numbered);
    out.write("00000000", matrix<float>(1, 1, {5}));
    out.write("00000001", matrix<float>(1, 1, {6}));
    CHECK_THROWS_WITH(out.write("utt3", matrix<float>()), Catch::Contains("must have key 00000002"));
  }
  CHECK(decode_example(sequential_table_reader<bytes_holder>(numbered).value()).features.count("key") == 0);
  // writing_wspec names the feature outright, for a writer that must know before its first value.
  CHECK(writing_wspec<H>(plain) == keyed);
  CHECK(writing_wspec<H>("tfrecord,scp:a.tfrecord,a.scp") == "tfrecord,scp,key=key:a.tfrecord,a.scp");
  CHECK(writing_wspec<H>("tfrecord,key=utt:" + file) == "tfrecord,key=utt:" + file);
  CHECK(writing_wspec<H>("ark:feats.ark") == "ark:feats.ark");
  CHECK(writing_wspec<example_holder>(plain) == plain);
  CHECK(writing_wspec<bytes_holder>(plain) == plain);
  // Read plainly, where the first record keeps a key. A script's keys are its own, as Kaldi's
  // scripts that rename entries (utils/copy_data_dir.sh --utt-prefix) need.
  CHECK(reading_rspec<H>(plain) == keyed);
  CHECK(reading_rspec<H>("scp:" + dir / "m.scp") == "scp:" + dir / "m.scp");
  test::write_file(dir / "renamed.scp", "sp1.1-" + test::read_file(dir / "m.scp"));
  CHECK(sequential_table_reader<reading_holder_t<H>>(reading_rspec<H>("scp:" + dir / "renamed.scp")).key() ==
        "sp1.1-utt1");
  CHECK(reading_rspec<H>("tfrecord,key=utt:" + file) == "tfrecord,key=utt:" + file);
  CHECK(reading_rspec<example_holder>(plain) == plain);  // an Example's features are its own
  CHECK(reading_rspec<bytes_holder>(plain) == plain);
  for (const std::string& rspec : {reading_rspec<H>(plain), reading_rspec<H>("scp:" + dir / "m.scp")}) {
    sequential_table_reader<reading_holder_t<H>> in(rspec);
    CHECK(in.key() == "utt1");
    in.next();
    CHECK((in.key() == "utt2" && in.value()(1, 0) == 4));
  }
  // Records of the form with no key feature (as a TensorFlow program writes them) are numbered.
  CHECK(reading_rspec<H>(numbered) == numbered);
  CHECK(sequential_table_reader<reading_holder_t<H>>(reading_rspec<H>(numbered)).key() == "00000000");
  // Nothing to look at: an empty file, or a command, is taken to keep keys.
  { table_writer<example_record_holder<H>> out("tfrecord:" + dir / "e.tfrecord"); }
  CHECK(reading_rspec<H>("tfrecord:" + dir / "e.tfrecord") == "tfrecord,key=key:" + dir / "e.tfrecord");
  CHECK(reading_rspec<H>("tfrecord:cat " + file + " |") == "tfrecord,key=key:cat " + file + " |");
  CHECK(reading_rspec<H>("ark:feats.ark") == "ark:feats.ark");
}

namespace {

// H's value through its Example form and back.
template <class H>
typename H::value_type through_example(const typename H::value_type& v) {
  std::string record;
  example_record_holder<H>::encode_record(record, v);
  example_record_holder<H> back;
  back.decode_record(record, "r");
  return back.value();
}

}  // namespace

TEST_CASE("every Kaldi type has an Example form that keeps its values", "[tfrecord][example_form]") {
  // Doubles keep every bit, as little-endian float64 bytes; read as float they are rounded,
  // as Kaldi reads a double matrix as float.
  matrix<double> m(2, 2, {0.1, -2, 1e300, std::numeric_limits<double>::quiet_NaN()});
  std::string record;
  example_record_holder<holder<matrix<double>>>::encode_record(record, m);
  example ex = decode_example(record);
  const auto& bytes = std::get<std::vector<std::string>>(ex.features.at("data"));
  REQUIRE(bytes.size() == 1);
  CHECK(bytes[0].size() == 32);
  CHECK(bytes[0].substr(0, 8) == std::string("\x9a\x99\x99\x99\x99\x99\xb9\x3f", 8));  // 0.1
  example_record_holder<holder<matrix<double>>> doubles;
  doubles.decode_record(record, "r");
  CHECK(doubles.value()(0, 0) == 0.1);
  CHECK(doubles.value()(1, 0) == 1e300);
  CHECK(doubles.value()(1, 1) != doubles.value()(1, 1));
  example_record_holder<holder<matrix<float>>> floats;
  floats.decode_record(record, "r");
  CHECK(floats.value()(0, 0) == 0.1f);
  CHECK(floats.value()(1, 0) == std::numeric_limits<float>::infinity());
  vector<double> v{1.5, std::numeric_limits<double>::infinity()};
  CHECK(through_example<holder<vector<double>>>(v) == v);
  CHECK(through_example<holder<vector<double>>>(vector<double>{}).size() == 0);
  // float32 data read as double is exact.
  example_record_holder<holder<vector<float>>>::encode_record(record, vector<float>{0.1f});
  example_record_holder<holder<vector<double>>> widened;
  widened.decode_record(record, "r");
  CHECK(widened.value()(0) == static_cast<double>(0.1f));
  // float64 bytes must be as many as the shape says.
  ex = decode_example(record);
  ex.features["data"] = std::vector<std::string>{std::string(12, '\0')};
  CHECK_THROWS_WITH(widened.decode_record(encode_example(ex), "r"),
                    Catch::Contains("1 float64 values") && Catch::Contains("12 bytes"));
  // Compressed where it is written: the stored object is a compressed matrix's.
  matrix_to_compress packed{matrix<float>(2, 3, {1, 2, 3, 4, 5, 6}), compression_method::two_byte_auto};
  example_record_holder<holder<matrix_to_compress>>::encode_record(record, packed);
  example_record_holder<holder<compressed_matrix>> as_compressed;
  as_compressed.decode_record(record, "r");
  std::string object, expected;
  encode_record<holder<compressed_matrix>>(object, as_compressed.value());
  encode_record<holder<compressed_matrix>>(expected, packed.compressed());
  CHECK(object == expected);
  // A matrix holder reads it decompressed, as it reads a compressed matrix in an archive.
  matrix<float> decompressed(2, 3);
  packed.compressed().decompress(decompressed.data());
  example_record_holder<holder<matrix<float>>> as_matrix;
  as_matrix.decode_record(record, "r");
  CHECK(as_matrix.value() == decompressed);
  example_record_holder<holder<matrix<double>>> as_doubles;
  as_doubles.decode_record(record, "r");
  CHECK(as_doubles.value()(1, 2) == static_cast<double>(decompressed(1, 2)));
  // Bytes that are neither float64 values of the shape's count nor a compressed matrix; a
  // compressed matrix cut short.
  ex = decode_example(record);
  const std::string stored = std::get<std::vector<std::string>>(ex.features.at("data")).front();
  ex.features["data"] = std::vector<std::string>{std::string(20, 'x')};
  CHECK_THROWS_MATCHES(as_matrix.decode_record(encode_example(ex), "r"), format_error,
                       test::says("6 float64 values, as the shape says, found 20 bytes"));
  ex.features["data"] = std::vector<std::string>{stored.substr(0, stored.size() - 3)};
  CHECK_THROWS_MATCHES(as_matrix.decode_record(encode_example(ex), "r"), format_error,
                       test::says("format error in 'r'"));
  std::vector<std::pair<std::int32_t, std::int32_t>> pairs{{1, -2}, {INT32_MAX, INT32_MIN}};
  CHECK(through_example<basic_pair_vector_holder<std::int32_t>>(pairs) == pairs);
  std::vector<std::string> tokens{"a", "b\xc3\xa9"};
  CHECK(through_example<token_vector_holder>(tokens) == tokens);
  CHECK_THROWS_AS(example_record_holder<token_vector_holder>::encode_record(record, {"two words"}),
                  usage_error);
  CHECK(through_example<basic_holder<std::int32_t>>(-7) == -7);
  CHECK(through_example<basic_holder<bool>>(true));
  CHECK(through_example<basic_holder<float>>(2.5f) == 2.5f);
  CHECK(through_example<basic_holder<double>>(0.1) == 0.1);
  // Each reads what it wrote and refuses what does not fit its type.
  ex = example{};
  ex.features["shape"] = std::vector<std::int64_t>{};
  ex.features["data"] = std::vector<std::int64_t>{2};
  example_record_holder<basic_holder<bool>> flag;
  CHECK_THROWS_WITH(flag.decode_record(encode_example(ex), "r"), Catch::Contains("0 or 1"));
  ex.features["shape"] = std::vector<std::int64_t>{1, 3};
  example_record_holder<basic_pair_vector_holder<std::int32_t>> pair_holder;
  CHECK_THROWS_WITH(pair_holder.decode_record(encode_example(ex), "r"), Catch::Contains("(pairs, 2)"));
  ex.features["shape"] = std::vector<std::int64_t>{1};
  ex.features["data"] = std::vector<std::string>{"two words"};
  example_record_holder<token_vector_holder> token_holder_of;
  CHECK_THROWS_WITH(token_holder_of.decode_record(encode_example(ex), "r"), Catch::Contains("tokens"));
}

TEST_CASE("ordinal keys are zero-padded to eight digits and sort as entries do", "[table]") {
  CHECK(ordinal_key(0) == "00000000");
  CHECK(ordinal_key(42) == "00000042");
  CHECK(ordinal_key(99999999) == "99999999");
  CHECK(ordinal_key(123456789) == "123456789");
  CHECK(ordinal_key(UINT64_MAX) == "18446744073709551615");
}

namespace {
// bytes_holder that counts the records it decodes.
struct counting_holder : bytes_holder {
  static inline int decoded = 0;
  void decode_record(std::string_view bytes, const std::string& name) {
    ++decoded;
    bytes_holder::decode_record(bytes, name);
  }
  void take_record(std::string& record, const std::string& name) {
    ++decoded;
    bytes_holder::take_record(record, name);
  }
};
// Float matrices, counting the objects decoded (a skim decodes none).
struct counting_matrix_holder : holder<matrix<float>> {
  static inline int decoded = 0;
  void read(reader& r) {
    ++decoded;
    holder<matrix<float>>::read(r);
  }
};
}  // namespace

TEST_CASE("records are decoded where their values are used: a count or a skip decodes none",
          "[tfrecord][table][shard]") {
  test::temp_dir dir;
  {
    table_writer<bytes_holder> out("tfrecord:" + dir / "whole.tfrecord");
    for (std::uint64_t i = 0; i < 10; ++i) out.write(ordinal_key(i), std::to_string(i));
  }
  counting_holder::decoded = 0;
  sequential_table_reader<counting_holder> keys_only("tfrecord:" + dir / "whole.tfrecord");
  std::size_t n = 0;
  for (; !keys_only.done(); keys_only.next()) ++n;
  CHECK((n == 10 && counting_holder::decoded == 0));
  // A shard split counts its records, then copies them: each is decoded once.
  shard_table<counting_holder>("tfrecord:" + dir / "whole.tfrecord", "tfrecord:" + dir / "part.tfrecord", 3);
  CHECK(counting_holder::decoded == 10);
  std::size_t copied = 0;
  for (sequential_table_reader<bytes_holder> parts("tfrecord:" + dir / "part-*-of-00003.tfrecord");
       !parts.done(); parts.next())
    ++copied;
  CHECK(copied == 10);
  // An archive's compressed or text matrices are skimmed past by the count, not decompressed or
  // parsed: each is decoded once, by the copy.
  for (const char* form : {"ark:", "ark,t:"}) {
    {
      table_writer<holder<matrix_to_compress>> out(form + dir / "cm.ark");
      for (int i = 0; i < 10; ++i)
        out.write("utt" + std::to_string(i),
                  {matrix<float>(3, 2, {1, 2, 3, 4, 5, float(i)}), compression_method::two_byte_auto});
    }
    counting_matrix_holder::decoded = 0;
    shard_table<counting_matrix_holder>("ark:" + dir / "cm.ark", "ark:" + dir / "cm-part.ark", 3);
    CHECK(counting_matrix_holder::decoded == 10);
    // Under p, where an entry that does not decode would be left out, the count decodes too.
    counting_matrix_holder::decoded = 0;
    shard_table<counting_matrix_holder>("ark,p:" + dir / "cm.ark", "ark:" + dir / "cm-part.ark", 3);
    CHECK(counting_matrix_holder::decoded == 20);
  }
}

TEST_CASE("an Example form's counts and labels that do not fit are format errors, not reads past the data",
          "[tfrecord][example_form]") {
  using ragged = basic_vector_vector_holder<std::int32_t>;
  std::string record;
  example_record_holder<ragged>::encode_record(record, {{1, 2}, {3}});
  example ex = decode_example(record);
  // Three lengths that wrap around 2^64 to 0, over no values: a sum that matched would let
  // the copy run past the data.
  ex.features["shape"] = std::vector<std::int64_t>{3};
  ex.features["row_lengths"] = std::vector<std::int64_t>{INT64_MAX, INT64_MAX, 2};
  ex.features["data"] = std::vector<std::int64_t>{};
  example_record_holder<ragged> back;
  CHECK_THROWS_MATCHES(back.decode_record(encode_example(ex), "r"), format_error,
                       test::says("lengths whose sum fits 64 bits"));

  datum d;
  d.channels = d.height = d.width = 1;
  d.data = "x";
  d.label = 7;
  example_record_holder<datum_holder>::encode_record(record, d);
  ex = decode_example(record);
  for (std::int64_t label : {std::int64_t(INT32_MAX) + 1, std::int64_t(INT32_MIN) - 1}) {
    ex.features["label"] = std::vector<std::int64_t>{label};
    example_record_holder<datum_holder> datum_back;
    CHECK_THROWS_MATCHES(datum_back.decode_record(encode_example(ex), "r"), format_error,
                         test::says("a label that fits an int32"));
  }
  ex.features["label"] = std::vector<std::int64_t>{INT32_MIN};
  example_record_holder<datum_holder> datum_back;
  datum_back.decode_record(encode_example(ex), "r");
  CHECK(datum_back.value().label == INT32_MIN);
}
