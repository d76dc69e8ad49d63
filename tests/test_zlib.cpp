// GZIP and ZLIB streams: TFRecord files compressed as TensorFlow writes them, real TFX files
// with other gzip headers, concatenated members, files written by gzip, and bad input.
#include <tablio/framing/tfrecord.hpp>
#include <tablio/stream/zlib.hpp>
#include <tablio/tablio.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>

#include "test_support.hpp"

using namespace tablio;

namespace {

reader open_file(const std::string& path) { return reader(file_source(path), path); }

// offset, length, masked CRCs of each record, as the .expect files list them
std::vector<std::string> record_fields(reader in) {
  std::vector<std::string> out;
  tfrecord_reader r(std::move(in));
  std::string_view rec;
  while (r.next(rec))
    out.push_back(std::to_string(r.offset()) + "," + std::to_string(r.length()) + "," +
                  std::to_string(r.masked_length_crc()) + "," + std::to_string(r.masked_crc()));
  return out;
}

std::vector<std::string> expected_fields(const std::string& path) {
  std::vector<std::string> out;
  std::regex fields(R"re(^\{"offset":(\d+),"length":(\d+),"length_crc":(\d+),"crc":(\d+))re");
  std::istringstream in(test::read_file(path));
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, fields))
      out.push_back(std::string(m[1]) + "," + std::string(m[2]) + "," + std::string(m[3]) + "," +
                    std::string(m[4]));
  }
  return out;
}

}  // namespace

TEST_CASE("compressed TFRecord files read to their expectations", "[zlib][golden]") {
  for (const char* file :
       {"tfrecord/generated/tutorial10.gz.tfrecord", "tfrecord/generated/tutorial10.zlib.tfrecord",
        "tfrecord/tfx/penguin-train.tfrecord.gz", "tfrecord/tfx/penguin-eval.tfrecord.gz",
        "tfrecord/tfx/tfjs-next-page.tfrecord.gz"}) {
    DYNAMIC_SECTION(file) {
      auto expected = expected_fields(test::data_path(std::string(file) + ".expect"));
      REQUIRE(!expected.empty());
      CHECK(record_fields(maybe_decompress(open_file(test::data_path(file)))) == expected);
    }
  }
}

TEST_CASE("compressing as TensorFlow does gives the same bytes", "[zlib][golden]") {
  const std::string plain = test::read_file(test::data_path("tfrecord/generated/tutorial10.tfrecord"));
  for (auto [kind, file] : {std::pair{compression::gzip, "tfrecord/generated/tutorial10.gz.tfrecord"},
                            std::pair{compression::zlib, "tfrecord/generated/tutorial10.zlib.tfrecord"}}) {
    std::string out;
    {
      writer w(zlib_sink(memory_writer(out), kind), "out");
      // Fed in pieces, as records are appended: the stream does not depend on them.
      for (std::size_t i = 0; i < plain.size(); i += 37)
        w.write(plain.data() + i, std::min<std::size_t>(37, plain.size() - i));
      w.close();
    }
    CHECK(out == test::read_file(test::data_path(file)));
    CHECK(detect_compression(std::span<const char>(out.data(), out.size())) == kind);
  }
}

TEST_CASE("concatenated members, gzip's own output, and bad input", "[zlib][unix-tools]") {
  const std::string gz = test::read_file(test::data_path("tfrecord/generated/tutorial10.gz.tfrecord"));
  SECTION("two members read as one stream") {
    std::string twice = gz + gz;
    auto fields = record_fields(maybe_decompress(memory_reader(std::string_view(twice))));
    CHECK(fields.size() == 20u);
  }
  SECTION("a file written by gzip, through a pipe and through the zlib reader") {
    std::string plain = test::read_file(test::data_path("kaldi/holders/int32.bin.ark"));
    reader piped = open_input("gzip -c " + test::data_path("kaldi/holders/int32.bin.ark") + " |");
    reader r = maybe_decompress(std::move(piped));
    std::string back(plain.size(), '\0');
    r.read_exact(back.data(), back.size());
    CHECK(back == plain);
    CHECK(r.at_end());
    r.close();
  }
  SECTION("plain input passes through untouched") {
    reader r = maybe_decompress(memory_reader(std::string_view("plain text")));
    std::string back(10, '\0');
    r.read_exact(back.data(), 10);
    CHECK(back == "plain text");
  }
  SECTION("truncated and corrupted streams are format errors") {
    std::string cut = gz.substr(0, gz.size() / 2);
    CHECK_THROWS_WITH(record_fields(maybe_decompress(memory_reader(std::string_view(cut), "cut.gz"))),
                      Catch::Contains("truncated gzip/zlib data") || Catch::Contains("truncated record"));
    std::string bad = gz;
    bad[gz.size() / 2] ^= 0x55;
    bad[gz.size() / 2 + 1] ^= 0x55;
    CHECK_THROWS_WITH(record_fields(maybe_decompress(memory_reader(std::string_view(bad), "bad.gz"))),
                      Catch::Contains("bad.gz") &&
                          (Catch::Contains("inflate() failed") || Catch::Contains("corrupted record")));
  }
}

TEST_CASE("gzip-compressed tar shards read as WebDataset reads them", "[zlib][tar][unix-tools]") {
  test::temp_dir dir;
  const std::string plain = test::data_path("tar/gnu-ustar.tar");
  // gzip's own output, under both names WebDataset takes; a list mixes them with a plain file.
  for (const char* name : {"a.tar.gz", "b.tgz"})
    REQUIRE(std::system(("gzip -c " + plain + " > " + (dir / name)).c_str()) == 0);
  std::vector<std::pair<std::string, std::string>> expected, got;
  for (auto& [key, bytes] : sequential_table_reader<bytes_holder>("tar,ext=*:" + plain))
    expected.emplace_back(key, bytes);
  REQUIRE(!expected.empty());
  for (auto& [key, bytes] : sequential_table_reader<bytes_holder>("tar,ext=*:" + (dir / "a.tar.gz") + "," +
                                                                  plain + "," + (dir / "b.tgz")))
    got.emplace_back(key, bytes);
  REQUIRE(got.size() == 3 * expected.size());
  CHECK(std::equal(expected.begin(), expected.end(), got.begin()));
  CHECK(std::equal(expected.begin(), expected.end(),
                   got.begin() + 2 * static_cast<std::ptrdiff_t>(expected.size())));
  // Random access reads a compressed file in order and keeps what it found.
  random_access_table_reader<bytes_holder> by_key("tar,ext=*:" + (dir / "a.tar.gz"));
  CHECK(by_key.at(expected.back().first) == expected.back().second);
  // A cut compressed file is an error naming it, not a shorter table.
  std::string whole = test::read_file(dir / "a.tar.gz");
  std::ofstream(dir / "cut.tar.gz", std::ios::binary) << whole.substr(0, whole.size() / 2);
  CHECK_THROWS_MATCHES(
      [&] {
        for (auto& entry : sequential_table_reader<bytes_holder>("tar,ext=*:" + (dir / "cut.tar.gz")))
          (void)entry;
      }(),
      format_error, test::says("format error in '" + (dir / "cut.tar.gz") + "'"));
}

TEST_CASE("a cut compressed file names the entry it broke in; IDX under p keeps the whole items",
          "[zlib][bad]") {
  test::temp_dir dir;
  // Where only the compressed offset is known, the error names the entry by its number too: it
  // is the number of entries read before it.
  auto cut_copy = [&](const std::string& from, const std::string& name) {
    std::string whole = test::read_file(test::data_path(from));
    test::write_file(dir / name, whole.substr(0, whole.size() / 2));
    return dir / name;
  };
  auto entries_before_error = [](const std::string& rspec, std::string& key) {
    std::size_t n = 0;
    try {
      sequential_table_reader<bytes_holder> in(rspec);
      for (; !in.done(); in.next()) ++n;
    } catch (const format_error& e) {
      key = e.key();
      CHECK_THAT(e.what(), Catch::Contains("truncated gzip/zlib data"));
    }
    return n;
  };
  std::string key;
  const std::string records = cut_copy("tfrecord/tfx/penguin-train.tfrecord.gz", "cut.tfrecord.gz");
  std::size_t read = entries_before_error("tfrecord:" + records, key);
  CHECK((read > 0 && key == ordinal_key(read)));
  const std::string images = cut_copy("idx/fashion/t10k-images-100-idx3-ubyte.gz", "cut-images.gz");
  CHECK(entries_before_error("idx:" + images, key) == 0);  // an IDX file is read whole, at open
  std::uint64_t whole_items = std::stoull(key);
  CHECK((whole_items > 0 && whole_items < 100));
  // Under p, as for a plain file, the whole items before the cut are read; the header counted
  // more (a killed writer leaves 0), so the table says it was cut.
  for (const std::string& file : {images, cut_copy("idx/fashion/t10k-images-100-idx3-ubyte", "cut-images")}) {
    sequential_table_reader<holder<matrix<float>>> p("idx,p:" + file);
    std::uint64_t n = 0;
    for (; !p.done(); p.next()) ++n;
    CHECK((n > 0 && n < 100));
    if (file == images) CHECK(n == whole_items);
    CHECK_THAT(p.error(), Catch::Contains("100 items, as the header says") && Catch::Contains("truncated") &&
                              Catch::Contains("(key '" + ordinal_key(n) + "')"));
  }
}
