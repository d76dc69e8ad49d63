// CRC32C and the TFRecord framing, against the published check values and TensorFlow's
// files (tutorial records written by the TFRecord peer, corrupted copies of them).
#include <tablio/framing/tfrecord.hpp>

#include <random>
#include <regex>

#include "test_support.hpp"

using namespace tablio;

TEST_CASE("CRC32C check values, hardware and portable alike", "[crc32c]") {
  CHECK(crc32c("123456789", 9) == 0xE3069283u);
  unsigned char zeros[32] = {}, ones[32], counting[32];
  for (int i = 0; i < 32; ++i) {
    ones[i] = 0xFF;
    counting[i] = static_cast<unsigned char>(i);
  }
  CHECK(crc32c(zeros, 32) == 0x8A9136AAu);
  CHECK(crc32c(ones, 32) == 0x62A8AB43u);
  CHECK(crc32c(counting, 32) == 0x46DD794Eu);
  CHECK(crc32c_extend(crc32c("12345", 5), "6789", 4) == 0xE3069283u);
  std::mt19937 rng(3);
  std::vector<unsigned char> buf(120000);
  for (auto& b : buf) b = static_cast<unsigned char>(rng());
  // Lengths about each stripe size (64, 256 and 8192 bytes, three at a time).
  for (std::size_t len :
       {0, 1, 7, 8, 9, 191, 192, 193, 250, 767, 768, 769, 959, 1000, 24575, 24576, 24577, 49153, 100000})
    for (std::size_t off : {0, 1, 5})
      CHECK(crc32c(buf.data() + off, len) == ~detail::crc32c_portable(~0u, buf.data() + off, len));
  for (std::uint32_t c : {0u, 1u, 0xFFFFFFFFu, 0xE3069283u}) CHECK(unmask_crc(mask_crc(c)) == c);
  // Where the build says the processor has the instructions, they must be the ones used.
  if (const char* expected = std::getenv("TABLIO_EXPECT_CRC32C_HARDWARE"))
    CHECK(detail::crc32c_in_hardware() == (std::string(expected) == "1"));
}

TEST_CASE("TFRecord framing vectors", "[tfrecord]") {
  std::string out;
  {
    tfrecord_writer w(memory_writer(out));
    w.write("");
    w.write("hello");
    w.close();
  }
  CHECK(out == std::string("\0\0\0\0\0\0\0\0\x29\x03\x98\x07\xd8\xea\x82\xa2", 16) +
                   std::string("\x05\0\0\0\0\0\0\0\xea\xb2\x04\x3e"
                               "hello"
                               "\xbb\x1f\x1c\x19",
                               21));
  tfrecord_reader r(memory_reader(std::string_view(out)));
  std::string_view rec;
  REQUIRE(r.next(rec));
  CHECK(rec.empty());
  REQUIRE(r.next(rec));
  CHECK(rec == "hello");
  CHECK(r.offset() == 16u);
  CHECK_FALSE(r.next(rec));
  CHECK(r.truncated_header() == 0u);
}

namespace {

struct expected_record {
  std::uint64_t offset, length, length_crc, crc;
};

std::vector<expected_record> expected_records(const std::string& path, std::string* error_line = nullptr) {
  std::vector<expected_record> out;
  std::regex fields(R"re("offset":(\d+),"length":(\d+),"length_crc":(\d+),"crc":(\d+))re");
  std::istringstream in(test::read_file(path));
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, fields) && line.rfind("{\"offset\"", 0) == 0)
      out.push_back({std::stoull(m[1]), std::stoull(m[2]), std::stoull(m[3]), std::stoull(m[4])});
    else if (error_line && line.rfind("{\"error\"", 0) == 0)
      *error_line = line;
  }
  return out;
}

}  // namespace

TEST_CASE("TFRecord files read to their expectations, corrupt ones fail as TensorFlow does",
          "[tfrecord][golden]") {
  auto read_all = [](const std::string& file, std::vector<expected_record>& got,
                     tfrecord_read_options o = {}) {
    const std::string path = test::data_path(file);
    tfrecord_reader r(reader(file_source(path), path), o);
    std::string_view rec;
    while (r.next(rec)) got.push_back({r.offset(), r.length(), r.masked_length_crc(), r.masked_crc()});
    return r.truncated_header();
  };
  auto same = [](const std::vector<expected_record>& a, const std::vector<expected_record>& b) {
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      CHECK(a[i].offset == b[i].offset);
      CHECK(a[i].length == b[i].length);
      CHECK(a[i].length_crc == b[i].length_crc);
      CHECK(a[i].crc == b[i].crc);
    }
  };
  for (const char* file : {"tfrecord/generated/tutorial10.tfrecord", "tfrecord/generated/seq10.tfrecord",
                           "tfrecord/generated/edge_cases.tfrecord", "tfrecord/tfx/mnist.tfrecord"}) {
    std::vector<expected_record> got;
    read_all(file, got);
    same(got, expected_records(test::data_path(std::string(file) + ".expect")));
  }
  struct corrupt_case {
    const char* file;
    const char* message;
    std::uint64_t offset;
  };
  for (corrupt_case c : {corrupt_case{"bad_lencrc", "corrupted record at 103", 103},
                         corrupt_case{"bad_datacrc", "corrupted record at 115", 115},
                         corrupt_case{"bad_trunc_data", "truncated record at 901", 901}}) {
    DYNAMIC_SECTION(c.file) {
      const std::string file = std::string("tfrecord/corrupt/") + c.file + ".tfrecord";
      std::string error_line;
      auto expected = expected_records(test::data_path(file + ".expect"), &error_line);
      CHECK_THAT(error_line, Catch::Contains(c.message));
      std::vector<expected_record> got;
      try {
        read_all(file, got);
        FAIL("no error");
      } catch (const data_loss_error& e) {
        CHECK_THAT(e.what(), Catch::Contains(c.message));
        CHECK(e.offset() == c.offset);
        CHECK_THAT(e.path(), Catch::Contains(c.file));
      }
      same(got, expected);
    }
  }
  SECTION("a partial header ends the file as in TensorFlow, or is an error when strict") {
    std::vector<expected_record> got;
    CHECK(read_all("tfrecord/corrupt/bad_trunc_hdr.tfrecord", got) == 5u);
    CHECK(got.size() == 10u);
    tfrecord_read_options strict;
    strict.strict_end = true;
    got.clear();
    CHECK_THROWS_WITH(read_all("tfrecord/corrupt/bad_trunc_hdr.tfrecord", got, strict),
                      Catch::Contains("5 bytes of a 12-byte header"));
  }
  SECTION("skipping corrupted records counts them") {
    tfrecord_read_options skip;
    skip.skip_corrupted = true;
    const std::string path = test::data_path("tfrecord/corrupt/bad_datacrc.tfrecord");
    tfrecord_reader r(reader(file_source(path), path), skip);
    std::string_view rec;
    int count = 0;
    while (r.next(rec)) ++count;
    CHECK(count == 9);
    CHECK(r.skipped() == 1u);
  }
}

TEST_CASE("a TFRecord length is never trusted beyond the input", "[tfrecord][bad]") {
  // A header claiming 2^40 bytes, with a valid length CRC: truncated, not a huge allocation.
  char header[12];
  store<std::endian::little>(header, std::uint64_t{1} << 40);
  store<std::endian::little>(header + 8, mask_crc(crc32c(header, 8)));
  std::string bomb(header, 12);
  bomb += "abcd";
  tfrecord_reader r(memory_reader(std::string_view(bomb), "bomb.tfrecord"));
  std::string_view rec;
  CHECK_THROWS_WITH(r.next(rec), Catch::Contains("truncated record at 0"));
  // Without a known size the limit applies: a record beyond it is refused, not lost data.
  std::istringstream unsized(bomb);
  limits small;
  small.max_record_bytes = 1 << 20;
  tfrecord_reader piped(reader(istream_source(unsized), "pipe", small));
  CHECK_THROWS_MATCHES(piped.next(rec), format_error, test::says("limits::max_record_bytes"));
}

TEST_CASE("records that end exactly where a read buffer ends stay intact", "[tfrecord]") {
  // Regression: the data CRC was read after the data, which could refill the buffer under a
  // view of data that ended at its end. Every record boundary lands somewhere: sizes vary.
  test::temp_dir dir;
  const std::string path = dir / "many.tfrecord";
  auto make = [](std::mt19937& rng) {
    std::string r(rng() % 300, '\0');
    for (auto& c : r) c = static_cast<char>(rng());
    return r;
  };
  {
    std::mt19937 rng(5);
    tfrecord_writer w(open_output(path));
    for (int i = 0; i < 40000; ++i) w.write(make(rng));
    w.close();
  }
  std::vector<std::pair<std::string, reader>> inputs;
  inputs.emplace_back("file", reader(file_source(path), path));
  inputs.emplace_back("mmap", reader(mmap_source(path), path));
  inputs.emplace_back("pipe", open_input(test::command("file \"" + path + "\"") + " |"));
  inputs.emplace_back("small buffer", reader(file_source(path), path, default_limits, 4096));
  for (auto& [name, in] : inputs) {
    INFO(name);
    std::mt19937 rng(5);
    tfrecord_reader r(std::move(in));
    std::string_view rec;
    int n = 0;
    while (r.next(rec)) {
      REQUIRE(rec == make(rng));
      ++n;
    }
    CHECK(n == 40000);
  }
}
