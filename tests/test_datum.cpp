// Caffe's Datum: the records Caffe's convert_mnist_data and python3-protobuf wrote decode to
// the expected fields and re-encode to the same bytes; packed float_data, unknown fields and
// malformed input; Caffe's LMDB as a table, read by tablio's own reader (no liblmdb needed).
#include <tablio/tablio.hpp>
#include <tablio/types/datum.hpp>

#include "crc_support.hpp"
#include "test_support.hpp"

using namespace tablio;

namespace {

using test::crc_hex;

std::string unhex(std::string_view h) {
  std::string out;
  for (std::size_t i = 0; i + 1 < h.size(); i += 2)
    out += static_cast<char>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16));
  return out;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> cols;
  std::size_t start = 0;
  for (std::size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1)
    cols.push_back(line.substr(start, tab - start));
  cols.push_back(line.substr(start));
  return cols;
}

// Checks a decoded Datum against one line of a datum expectation file.
template <class Bytes>
void check_columns(const basic_datum<Bytes>& d, const std::vector<std::string>& cols) {
  CHECK(std::to_string(d.label) == cols[1]);
  CHECK(std::to_string(d.channels) == cols[2]);
  CHECK(std::to_string(d.height) == cols[3]);
  CHECK(std::to_string(d.width) == cols[4]);
  CHECK(std::to_string(d.data.size()) == cols[5]);
  CHECK(crc_hex(d.data) == cols[6]);
  std::string bits;
  for (float value : d.float_data) {
    if (!bits.empty()) bits += ',';
    bits += std::to_string(std::bit_cast<std::uint32_t>(value));
  }
  CHECK((bits.empty() ? "-" : bits) == cols[7]);
  CHECK((d.present.encoded ? (d.encoded ? "true" : "false") : "-") == cols[8]);
}

}  // namespace

TEST_CASE("Datums written by Caffe and by libprotobuf", "[datum]") {
  int checked = 0;
  for (const char* expect : {"caffe/datum.expect", "caffe/float_encoded.expect"}) {
    std::istringstream in(test::read_file(test::data_path(expect)));
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      auto cols = split_tabs(line);
      REQUIRE(cols.size() == 12);
      if (cols[11] == "-") continue;
      INFO(expect << " " << cols[0]);
      std::string value = unhex(cols[11]);
      REQUIRE(std::to_string(value.size()) == cols[9]);
      datum d = decode_datum(value);
      check_columns(d, cols);
      CHECK(encode_datum(d) == value);
      datum_view v = decode_datum<std::string_view>(value);
      check_columns(v, cols);
      CHECK(
          (v.data.empty() || (v.data.data() >= value.data() && v.data.data() < value.data() + value.size())));
      ++checked;
    }
  }
  CHECK(checked == 5);
}

TEST_CASE("a Datum as Caffe's convert_mnist_data makes it", "[datum]") {
  datum d;
  d.channels = 1;
  d.height = 28;
  d.width = 28;
  d.data = std::string(784, '\x07');
  d.label = 0;  // proto2: written although 0
  std::string bytes = encode_datum(d);
  CHECK(bytes.size() == 795);
  CHECK(bytes.substr(0, 9) == std::string("\x08\x01\x10\x1c\x18\x1c\x22\x90\x06", 9));
  CHECK(bytes.substr(793) == std::string("\x28\x00", 2));
  d.label = -1;
  CHECK(encode_datum(d).size() == 804);  // a 10-byte varint
  CHECK(decode_datum(encode_datum(d)).label == -1);
}

TEST_CASE("packed float_data, unknown fields, bad input", "[datum][bad]") {
  // Packed float_data (tag 32) is read; it is written back unpacked, as Caffe writes it.
  std::string packed("\x08\x01\x32\x08\x00\x00\x80\x3f\x00\x00\x00\x40", 12);
  datum d = decode_datum(packed);
  CHECK(d.float_data == std::vector<float>{1.0f, 2.0f});
  CHECK(encode_datum(d) == std::string("\x08\x01\x35\x00\x00\x80\x3f\x35\x00\x00\x00\x40", 12));
  // Unknown fields are kept and written after the known ones.
  std::string unknown("\x08\x03\x50\x05\x28\x02", 6);
  d = decode_datum(unknown);
  CHECK(d.unknown == std::string("\x50\x05", 2));
  CHECK(encode_datum(d) == std::string("\x08\x03\x28\x02\x50\x05", 6));
  // Every cut of a real record fails cleanly or decodes a shorter, valid message.
  datum full;
  full.data = "abcdef";
  full.label = 300;
  full.float_data = {1.5f};
  std::string good = encode_datum(full);
  for (std::size_t cut = 0; cut < good.size(); ++cut) {
    try {
      decode_datum(std::string_view(good).substr(0, cut), "cut");
    } catch (const format_error& e) {
      CHECK_THAT(e.what(), Catch::Contains("'cut' at byte"));
    }
  }
  CHECK_THROWS_WITH(decode_datum(std::string("\x22\x10xx", 4), "r"), Catch::Contains("16 bytes"));
  CHECK_THROWS_WITH(decode_datum(std::string("\x32\x03xyz", 5), "r"), Catch::Contains("multiple of 4"));
  CHECK_THROWS_WITH(decode_datum(std::string("\x0b", 1), "r"), Catch::Contains("group"));
}

TEST_CASE("another message type's record is no Datum, though protobuf would parse it as an empty one",
          "[datum][bad]") {
  example ex;
  ex.set("label", std::vector<std::int64_t>{3});
  std::string record = encode_example(ex);  // field 1 is a message: a Datum's field 1 is a varint
  CHECK_THROWS_WITH(decode_datum(record, "train.tfrecord"), Catch::Contains("'train.tfrecord' at byte 0") &&
                                                                Catch::Contains("a Caffe Datum") &&
                                                                Catch::Contains("none of them"));
  CHECK_THROWS_AS(decode_datum<std::string_view>(record, "r"), format_error);
  CHECK_THROWS_AS(decode_datum(std::string("\x50\x05\x58\x01", 4), "r"), format_error);  // unknown alone
  // An empty record is an empty Datum, and one known field among unknown ones a Datum.
  CHECK(decode_datum(std::string()).channels == 0);
  CHECK(decode_datum(std::string("\x50\x05\x28\x02", 4)).label == 2);
  // An empty packed float list is nothing a Datum would write again: with unknown fields, the
  // record is as foreign as the unknown fields alone (else it would not survive a round trip).
  CHECK_THROWS_WITH(decode_datum(std::string("\x50\x05\x32\x00", 4), "r"),
                    Catch::Contains("'r' at byte 0") && Catch::Contains("a Caffe Datum") &&
                        Catch::Contains("a record of 4 bytes with none of them"));
  CHECK(decode_datum(std::string("\x50\x05\x32\x04\0\0\0\0", 8)).float_data.size() == 1);
}

TEST_CASE("Caffe's LMDB as a table of Datums, with or without liblmdb", "[datum][lmdb]") {
  std::map<std::string, std::vector<std::string>> expected;
  std::istringstream in(test::read_file(test::data_path("caffe/datum.expect")));
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') expected.emplace(line.substr(0, 8), split_tabs(line));
  REQUIRE(expected.size() == 1000);
  test::temp_dir dir;
  std::filesystem::copy(test::data_path("caffe/fashion_t10k_1000_lmdb"), dir / "caffe");
  std::size_t seen = 0;
  auto row = expected.begin();
  for (auto& [key, d] : sequential_table_reader<datum_holder>("lmdb:" + dir / "caffe")) {
    REQUIRE(row != expected.end());
    CHECK(key == row->first);
    check_columns(d, row->second);
    ++row, ++seen;
  }
  CHECK(seen == 1000);
  random_access_table_reader<datum_holder> by_key("lmdb:" + dir / "caffe");
  for (const char* key : {"00000999", "00000000", "00000500"}) check_columns(by_key.at(key), expected[key]);
  CHECK_FALSE(by_key.contains("00001000"));
#if !defined(TABLIO_WITH_LMDB)
  CHECK_THROWS_WITH(table_writer<datum_holder>("lmdb:" + dir / "out"),
                    Catch::Contains("writing an LMDB database needs liblmdb"));
#endif
}
