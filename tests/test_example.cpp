// tf.Example against libprotobuf's output: the tutorial records re-encode byte-identically,
// and for every record of the reference files, re-encoding equals the payload exactly when
// libprotobuf's own deterministic re-serialization does (the expectations' "deterministic").
#include <tablio/framing/tfrecord.hpp>
#include <tablio/stream/zlib.hpp>
#include <tablio/types/example.hpp>
#include <tablio/types/example_view.hpp>

#include <random>

#include "test_support.hpp"

using namespace tablio;

namespace {

// Per record: whether libprotobuf's deterministic re-serialization equals the payload.
std::vector<bool> deterministic_flags(const std::string& expect) {
  std::vector<bool> out;
  std::istringstream in(test::read_file(expect));
  for (std::string line; std::getline(in, line);)
    if (line.rfind("{\"offset\"", 0) == 0)
      out.push_back(line.find("\"deterministic\":true") != std::string::npos);
  return out;
}

std::string hex(std::string_view s) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

// Every record of the reference files, in order.
std::vector<std::string> all_records() {
  std::vector<std::string> out;
  for (const char* file :
       {"tfrecord/generated/tutorial10.tfrecord", "tfrecord/generated/edge_cases.tfrecord",
        "tfrecord/tfx/mnist.tfrecord", "tfrecord/tfx/penguin-train.tfrecord.gz",
        "tfrecord/tfx/penguin-eval.tfrecord.gz", "tfrecord/tfx/tfjs-next-page.tfrecord.gz"}) {
    const std::string path = test::data_path(file);
    tfrecord_reader r(maybe_decompress(reader(file_source(path), path)));
    std::string_view rec;
    while (r.next(rec)) out.emplace_back(rec);
  }
  return out;
}

// Whether decoding throws, as a view and as an owned example; they must agree.
void check_same_verdict(std::string_view bytes) {
  bool owned_ok = true, view_ok = true;
  example owned;
  example_view view;
  try {
    owned = decode_example(bytes);
  } catch (const format_error&) {
    owned_ok = false;
  }
  try {
    view.parse(bytes);
  } catch (const format_error&) {
    view_ok = false;
  }
  REQUIRE(owned_ok == view_ok);
  if (owned_ok) CHECK(view.to_example().features == owned.features);
}

}  // namespace

TEST_CASE("Examples decode and re-encode as libprotobuf does", "[example][golden]") {
  for (const char* file :
       {"tfrecord/generated/tutorial10.tfrecord", "tfrecord/generated/edge_cases.tfrecord",
        "tfrecord/tfx/mnist.tfrecord", "tfrecord/tfx/penguin-train.tfrecord.gz",
        "tfrecord/tfx/penguin-eval.tfrecord.gz", "tfrecord/tfx/tfjs-next-page.tfrecord.gz"}) {
    DYNAMIC_SECTION(file) {
      const std::string path = test::data_path(file);
      auto flags = deterministic_flags(path + ".expect");
      tfrecord_reader r(maybe_decompress(reader(file_source(path), path)));
      std::string_view rec;
      std::size_t i = 0;
      while (r.next(rec)) {
        REQUIRE(i < flags.size());
        example ex = decode_example(rec, path);
        INFO("record " << i);
        CHECK((encode_example(ex) == rec) == flags[i]);
        ++i;
      }
      CHECK(i == flags.size());
    }
  }
  std::istringstream hexes(
      test::read_file(test::data_path("tfrecord/generated/tutorial10.deterministic.hex")));
  const std::string path = test::data_path("tfrecord/generated/tutorial10.tfrecord");
  tfrecord_reader r(reader(file_source(path), path));
  std::string_view rec;
  for (std::string line; std::getline(hexes, line);) {
    REQUIRE(r.next(rec));
    CHECK(hex(encode_example(decode_example(rec))) == line);
  }
}

TEST_CASE("the tutorial record's values", "[example]") {
  const std::string path = test::data_path("tfrecord/generated/tutorial10.tfrecord");
  tfrecord_reader r(reader(file_source(path), path));
  std::string_view rec;
  REQUIRE(r.next(rec));
  example ex = decode_example(rec);
  REQUIRE(ex.get<std::int64_t>("feature0"));
  CHECK(*ex.get<std::int64_t>("feature1") == std::vector<std::int64_t>{2});
  CHECK(*ex.get<std::string>("feature2") == std::vector<std::string>{"chicken"});
  CHECK(std::bit_cast<std::uint32_t>((*ex.get<float>("feature3"))[0]) == 1055080971u);
  CHECK(ex.get<float>("feature0") == nullptr);
}

TEST_CASE("malformed Examples are format errors", "[example][bad]") {
  example ex;
  ex.set("a", std::vector<std::int64_t>{-1, 300});
  ex.set("b", std::vector<float>{1.5f});
  ex.set("c", std::vector<std::string>{"x", ""});
  std::string good = encode_example(ex);
  CHECK(decode_example(good) == ex);
  for (std::size_t cut = 1; cut < good.size(); ++cut)
    CHECK_THROWS_WITH(decode_example(std::string_view(good).substr(0, cut), "cut"),
                      Catch::Contains("format error in 'cut' at byte") &&
                          (Catch::Contains("end of data") || Catch::Contains("found only")));
  CHECK_THROWS_WITH(decode_example(std::string("\x0a\xff\xff\xff\xff\x0f", 6), "r"),
                    Catch::Contains("bytes"));
  CHECK_THROWS_WITH(decode_example(std::string("\x0b", 1), "r"), Catch::Contains("group"));
  CHECK_THROWS_AS(decode_example(std::string("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12)),
                  format_error);
}

TEST_CASE("SequenceExamples decode and re-encode as libprotobuf does", "[example][golden]") {
  const std::string path = test::data_path("tfrecord/generated/seq10.tfrecord");
  auto flags = deterministic_flags(path + ".expect");
  std::istringstream hexes(test::read_file(test::data_path("tfrecord/generated/seq10.deterministic.hex")));
  tfrecord_reader r(reader(file_source(path), path));
  std::string_view rec;
  std::size_t i = 0;
  for (std::string line; std::getline(hexes, line); ++i) {
    REQUIRE(r.next(rec));
    sequence_example seq = decode_sequence_example(rec, path);
    CHECK((encode_sequence_example(seq) == rec) == flags[i]);
    CHECK(hex(encode_sequence_example(seq)) == line);
    CHECK(seq.context.get<std::int64_t>("id"));
    CHECK(seq.context.get<std::string>("animal"));
    REQUIRE(seq.feature_lists.count("tokens") == 1);
    for (const feature& f : seq.feature_lists["tokens"].features)
      CHECK(std::get<std::vector<std::int64_t>>(f).size() == 2u);
  }
  CHECK(i == flags.size());
  // A cut inside a field is an error; a cut between top-level fields is a shorter, valid
  // message (protobuf has no end marker), which must then differ from the whole.
  const sequence_example whole = decode_sequence_example(rec);
  std::string good = encode_sequence_example(whole);
  for (std::size_t cut = 1; cut < good.size(); ++cut) {
    sequence_example part;
    bool rejected = false;
    try {
      part = decode_sequence_example(std::string_view(good).substr(0, cut));
    } catch (const format_error&) {
      rejected = true;
    }
    if (!rejected) CHECK_FALSE(part == whole);
  }
}

TEST_CASE("example_view sees the values decode_example sees", "[example][view]") {
  auto records = all_records();
  REQUIRE(records.size() > 1000);
  example_view view;
  for (const auto& rec : records) {
    example owned = decode_example(rec);
    view.parse(rec);
    REQUIRE(view.to_example().features == owned.features);
    REQUIRE(view.size() == owned.features.size());
  }
  // The tutorial record through the accessors: views into the record, no copies.
  const std::string& first = records[0];
  view.parse(first);
  CHECK(view.int64s("feature1").size() == 1);
  CHECK(view.int64s("feature1").front() == 2);
  CHECK(view.bytes("feature2").front() == "chicken");
  CHECK(view.bytes("feature2").front().data() >= first.data());
  CHECK(view.bytes("feature2").front().data() < first.data() + first.size());
  CHECK(std::bit_cast<std::uint32_t>(view.floats("feature3")[0]) == 1055080971u);
  CHECK(view.floats("feature0").empty());  // another kind: an empty list
  CHECK(view.find("nope") == nullptr);
  float out[1] = {};
  view.floats("feature3").copy_to(out);
  CHECK(std::bit_cast<std::uint32_t>(out[0]) == 1055080971u);
}

TEST_CASE("example_view accepts and rejects what decode_example does", "[example][view][bad]") {
  example ex;
  ex.set("a", std::vector<std::int64_t>{-1, 300});
  ex.set("b", std::vector<float>{1.5f, 2});
  ex.set("c", std::vector<std::string>{"x", ""});
  std::string good = encode_example(ex);
  for (std::size_t cut = 0; cut <= good.size(); ++cut)
    check_same_verdict(std::string_view(good).substr(0, cut));
  // The rare forms: an unpacked list, a repeated key, an entry with value before key,
  // an unknown field in a list.
  std::string unpacked("\x0a\x0f\x0a\x0d\x0a\x01k\x12\x08\x12\x06\x0d\x00\x00\x80\x3f\x00", 17);
  check_same_verdict(unpacked);
  std::string twice = good + good;
  check_same_verdict(twice);
  std::string swapped("\x0a\x0b\x0a\x09\x12\x04\x1a\x02\x0a\x00\x0a\x01k", 13);
  check_same_verdict(swapped);
  example_view v(swapped);
  REQUIRE(v.find("k"));
  CHECK(v.find("k")->kind == feature_kind::int64s);
  // Random corruption of real records.
  std::mt19937 rng(7);
  auto records = all_records();
  for (int trial = 0; trial < 3000; ++trial) {
    std::string rec = records[rng() % records.size()];
    if (rec.empty()) continue;
    for (int flips = 1 + static_cast<int>(rng() % 3); flips > 0; --flips)
      rec[rng() % rec.size()] = static_cast<char>(rng());
    check_same_verdict(rec);
  }
}

TEST_CASE("a oneof member replaced drops its list's unknown fields (fuzz finding)", "[example][regression]") {
  // Feature 'a' holds a float list with an unknown field, then a bytes list: the bytes list
  // replaces the float list, unknown field included, as libprotobuf does. Before the fix the
  // unknown field moved into the bytes list and re-encoding did not reach a fixed point.
  auto unhex = [](std::string_view h) {
    std::string out;
    for (std::size_t i = 0; i + 1 < h.size(); i += 2)
      out += static_cast<char>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16));
    return out;
  };
  std::string input = unhex(
      "30306135000000861bc34b0a290a110a0161120c08001202000a0a00000000000a000100620a080a000100d022000000000000"
      "000"
      "03d002000000000");
  example ex = decode_example(input);
  REQUIRE(ex.get<std::string>("a"));
  CHECK(ex.get<std::string>("a")->empty());
  CHECK(ex.unknown.in_feature.at("a").second.empty());
  std::string once = encode_example(ex);
  CHECK(encode_example(decode_example(once)) == once);
  // Unknown fields inside a bytes list are kept, as in the other lists.
  // Example{features{"b": Feature{bytes_list{value: "x", field 2: 1}}}}
  const std::string bytes_with_unknown = unhex("0a0e0a0c0a016212070a050a01781001");
  example with_unknown = decode_example(bytes_with_unknown);
  CHECK(*with_unknown.get<std::string>("b") == std::vector<std::string>{"x"});
  CHECK(encode_example(with_unknown) == bytes_with_unknown);
}

TEST_CASE("another message type's record is no Example, though protobuf would parse it as an empty one",
          "[example][bad]") {
  datum d;
  d.channels = 1;
  d.height = d.width = 2;
  d.data = "abcd";
  d.label = 7;
  std::string record = encode_datum(d);
  CHECK_THROWS_WITH(decode_example(record, "db"), Catch::Contains("'db' at byte 0") &&
                                                      Catch::Contains("a tf.Example") &&
                                                      Catch::Contains("none of them"));
  CHECK_THROWS_WITH(example_view(record, "db"), Catch::Contains("a tf.Example"));
  CHECK_THROWS_WITH(decode_sequence_example(record, "db"), Catch::Contains("a tf.SequenceExample"));
  // An empty record is an empty Example; one whose Features are empty is one too.
  CHECK(decode_example(std::string()).features.empty());
  CHECK(decode_example(std::string("\x0a\x00", 2)).features.empty());
  CHECK(example_view(std::string_view()).size() == 0);
  CHECK(decode_sequence_example(std::string()).context.features.empty());
}

TEST_CASE("a copy of an example_view of a rare form views its own copies", "[example][view]") {
  // One feature whose map entry has its value before its key: a form the view decodes fully.
  std::string value = "\x1a\x04\x0a\x02\x05\x06";  // int64_list [5, 6]
  std::string entry = "\x12\x06" + value +
                      std::string(
                          "\x0a\x01"
                          "a");  // value, then key "a"
  std::string features = "\x0a" + std::string(1, char(entry.size())) + entry;
  std::string record = "\x0a" + std::string(1, char(features.size())) + features;
  example_view copy, assigned;
  {
    example_view original(record);
    REQUIRE(original.int64s("a").size() == 2);
    copy = example_view(original);  // a copy, moved into place
    assigned = original;
  }  // the original's strings are gone
  for (const example_view* v : {&copy, &assigned}) {
    auto values = v->int64s("a");
    REQUIRE(values.size() == 2);
    CHECK(std::vector<std::int64_t>(values.begin(), values.end()) == std::vector<std::int64_t>{5, 6});
    CHECK(v->features()[0].key == "a");
  }
}
