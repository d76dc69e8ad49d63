// IDX: every type file and the Fashion-MNIST samples read to exactly their expectations
// (values, bit patterns, per-image CRCs), GZIP input, the bad files rejected with what is
// wrong, and writing byte-identical files (count up front, or patched at close).
#include <tablio/framing/idx.hpp>

#include <zlib.h>

#include <cinttypes>
#include <cmath>

#include "test_support.hpp"

using namespace tablio;

namespace {

std::string join_dims(const idx_header& h) {
  std::string s;
  for (std::size_t i = 0; i < h.dims.size(); ++i) s += (i ? " " : "") + std::to_string(h.dims[i]);
  return s;
}

template <class T>
std::string format_values(const std::vector<T>& v) {
  std::string s;
  char buf[64];
  for (std::size_t i = 0; i < v.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>)
      std::snprintf(buf, sizeof buf, "%a", static_cast<double>(v[i]));
    else
      std::snprintf(buf, sizeof buf, "%" PRId64, static_cast<std::int64_t>(v[i]));
    s += (i ? " " : "") + std::string(buf);
  }
  return s;
}

template <class T, class U>
std::string format_bits(const std::vector<T>& v) {
  std::string s;
  char buf[32];
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, sizeof(U) == 4 ? "%08" PRIx64 : "%016" PRIx64,
                  static_cast<std::uint64_t>(std::bit_cast<U>(v[i])));
    s += (i ? " " : "") + std::string(buf);
  }
  return s;
}

// The expectation lines tablio can produce for a file (payload hashes left out).
std::vector<std::string> describe(const idx_file& f) {
  const idx_header& h = f.header();
  char magic[32], type[32];
  std::snprintf(magic, sizeof magic, "magic 0x%08x", h.magic());
  std::snprintf(type, sizeof type, "type 0x%02x %s", static_cast<unsigned>(h.type), idx_type_name(h.type));
  std::vector<std::string> lines{magic, type, "ndims " + std::to_string(h.dims.size()),
                                 "dims " + join_dims(h),
                                 "count " + std::to_string(h.items() * h.item_values())};
  if (h.item_values() == 784) {  // Fashion-MNIST images: per-image CRCs and the first image
    std::string crcs = "item_crc32";
    for (std::uint64_t i = 0; i < f.size(); ++i) {
      auto bytes = f.item_bytes(i);
      char crc[16];
      std::snprintf(crc, sizeof crc, " %08lx",
                    crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
      crcs += crc;
    }
    lines.push_back(crcs);
    lines.push_back("item0_values " + format_values(f.item<int>(0)));
    return lines;
  }
  switch (h.type) {
    case idx_type::f32: {
      auto v = f.values<float>();
      lines.push_back("values " + format_values(v));
      lines.push_back("bits " + format_bits<float, std::uint32_t>(v));
      break;
    }
    case idx_type::f64: {
      auto v = f.values<double>();
      lines.push_back("values " + format_values(v));
      lines.push_back("bits " + format_bits<double, std::uint64_t>(v));
      break;
    }
    default:
      lines.push_back("values " + format_values(f.values<std::int64_t>()));
  }
  return lines;
}

std::vector<std::string> expected_lines(const std::string& expect) {
  std::istringstream in(test::read_file(expect));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.starts_with("gzip yes") && !line.starts_with("payload_sha256")) lines.push_back(line);
  return lines;
}

const char* type_files[] = {"u8-1d",  "u8-2d",  "u8-3d",  "u8-1d-empty", "i8-1d",  "i8-2d",  "i8-3d",
                            "i16-1d", "i16-2d", "i16-3d", "i32-1d",      "i32-2d", "i32-3d", "f32-1d",
                            "f32-2d", "f32-3d", "f64-1d", "f64-2d",      "f64-3d"};

}  // namespace

TEST_CASE("IDX files of every type read exactly", "[idx]") {
  for (const char* name : type_files) {
    DYNAMIC_SECTION(name) {
      std::string path = test::data_path(std::string("idx/types/") + name + ".idx");
      CHECK(describe(idx_file(path)) == expected_lines(path + ".expect"));
    }
  }
}

TEST_CASE("Fashion-MNIST samples, plain and gzip", "[idx]") {
  for (const char* name : {"t10k-images-100-idx3-ubyte", "t10k-labels-100-idx1-ubyte",
                           "t10k-images-100-idx3-ubyte.gz", "t10k-labels-100-idx1-ubyte.gz"}) {
    DYNAMIC_SECTION(name) {
      std::string path = test::data_path(std::string("idx/fashion/") + name);
      idx_file f(path);
      CHECK(describe(f) == expected_lines(path + ".expect"));
    }
  }
  // Random access: item i is where arithmetic says, in memory or through a pipe.
  std::string images = test::data_path("idx/fashion/t10k-images-100-idx3-ubyte");
  idx_file mapped(images);
  idx_file piped(test::command("file \"" + images + "\"") + " |");
  CHECK(mapped.header() == piped.header());
  for (std::uint64_t i : {0, 1, 57, 99}) CHECK(mapped.item<float>(i) == piped.item<float>(i));
  CHECK(mapped.header().item_bytes() == 784);
  CHECK_THROWS_AS(mapped.item_bytes(100), usage_error);
}

TEST_CASE("bad IDX files are errors that say what is wrong", "[idx][bad]") {
  auto error_of = [](const std::string& name, idx_read_options options = {}) -> std::string {
    try {
      idx_file f(test::data_path("idx/bad/" + name), options);
      return "no error";
    } catch (const format_error& e) {
      return e.what();
    }
  };
  CHECK_THAT(error_of("bad-magic-byte0-idx1-ubyte"),
             Catch::Contains("at byte 0") && Catch::Contains("bytes 01 00"));
  CHECK_THAT(error_of("bad-type-0x0a-idx1-ubyte"), Catch::Contains("type code 0x0a"));
  // Gzip data given as raw IDX bytes is named as such; opened as a file, it is inflated.
  std::string gz = test::read_file(test::data_path("idx/bad/gzip-magic-idx1-ubyte"));
  CHECK_THROWS_WITH(idx_file(std::span<const char>(gz), "gz"), Catch::Contains("gzip data"));
  CHECK(idx_file(test::data_path("idx/bad/gzip-magic-idx1-ubyte")).size() == 100);
  CHECK_THAT(error_of("dims-overflow-u8.idx"), Catch::Contains("product of 2^64 or more"));
  CHECK_THAT(error_of("bytes-overflow-f64.idx"), Catch::Contains("2^64 bytes or more"));
  CHECK_THAT(error_of("truncated-data-idx3-ubyte"), Catch::Contains("78400 data bytes") &&
                                                        Catch::Contains("only 78300") &&
                                                        Catch::Contains("truncated"));
  CHECK_THAT(error_of("trailing-bytes-idx1-ubyte"), Catch::Contains("4 more bytes"));
  CHECK(error_of("trailing-bytes-idx1-ubyte", {.allow_trailing_bytes = true}) == "no error");
  // Every cut of a real file is an error, never a crash or a short read.
  std::string labels = test::read_file(test::data_path("idx/fashion/t10k-labels-100-idx1-ubyte"));
  for (std::size_t cut = 0; cut < labels.size(); ++cut)
    CHECK_THROWS_AS(idx_file(std::span<const char>(labels.data(), cut), "cut"), format_error);
  // Through a stream, a header announcing 2^32 items allocates only what arrives.
  test::temp_dir dir;
  std::string huge("\0\0\x08\x01\xff\xff\xff\xff\x01\x02", 10);
  std::ofstream(dir / "huge.idx") << huge;
  CHECK_THROWS_WITH(idx_file(test::command("file \"" + (dir / "huge.idx") + "\"") + " |"),
                    Catch::Contains("only 2"));
}

TEST_CASE("IDX writing is byte-identical", "[idx][write]") {
  test::temp_dir dir;
  for (const char* name : type_files) {
    DYNAMIC_SECTION(name) {
      std::string path = test::data_path(std::string("idx/types/") + name + ".idx");
      idx_file in(path);
      std::vector<std::uint32_t> item_dims(in.header().item_dims().begin(), in.header().item_dims().end());
      auto copy = [&](std::optional<std::uint32_t> count, const std::string& out) {
        idx_writer w(open_output(out), in.header().type, item_dims, count);
        for (std::uint64_t i = 0; i < in.size(); ++i) w.write_item<double>(in.item<double>(i));
        w.close();
      };
      copy(static_cast<std::uint32_t>(in.size()), dir / "known.idx");
      CHECK(test::read_file(dir / "known.idx") == test::read_file(path));
      copy(std::nullopt, dir / "patched.idx");
      CHECK(test::read_file(dir / "patched.idx") == test::read_file(path));
      copy(static_cast<std::uint32_t>(in.size()), "| " + test::command("copy") + " > " + (dir / "piped.idx"));
      CHECK(test::read_file(dir / "piped.idx") == test::read_file(path));
    }
  }
  // A pipe cannot be patched; a wrong count up front is an error.
  {
    idx_writer w(open_output("| " + test::command("drain")), idx_type::u8, {2});
    w.write_item<int>(std::vector<int>{1, 2});
    CHECK_THROWS_WITH(w.close(), Catch::Contains("give it up front"));
  }
  {
    idx_writer w(open_output(dir / "short.idx"), idx_type::u8, {2}, 3);
    w.write_item<int>(std::vector<int>{1, 2});
    CHECK_THROWS_WITH(w.close(), Catch::Contains("3 items") && Catch::Contains("1 written"));
    CHECK_THROWS_AS(w.write_item<int>(std::vector<int>{1}), usage_error);
  }
}

TEST_CASE("IDX tables: items keyed by index, read and written like any table", "[idx][table]") {
  const std::string fashion = test::data_path("idx/fashion/");
  const std::string images = fashion + "t10k-images-100-idx3-ubyte",
                    labels = fashion + "t10k-labels-100-idx1-ubyte";
  idx_file label_file(labels), image_file(images);
  int n = 0;
  for (auto& [key, label] : sequential_table_reader<basic_holder<std::int32_t>>("idx:" + labels)) {
    CHECK(key == ordinal_key(static_cast<std::uint64_t>(n)));
    CHECK(label == label_file.item<std::int32_t>(static_cast<std::uint64_t>(n))[0]);
    ++n;
  }
  CHECK(n == 100);
  n = 0;
  for (auto& [key, image] :
       sequential_table_reader<holder<matrix<float>>>("idx,shard=1/4:" + images + ".gz")) {
    CHECK(image.num_rows() == 28);
    CHECK(image.num_cols() == 28);
    CHECK(image(27, 27) ==
          static_cast<float>(image_file.item<int>(static_cast<std::uint64_t>(1 + 4 * n))[783]));
    ++n;
  }
  CHECK(n == 25);
  random_access_table_reader<basic_vector_holder<std::int32_t>> by_key("idx:" + images);
  CHECK(by_key.at("00000042") == image_file.item<std::int32_t>(42));
  CHECK_FALSE(by_key.contains("00000100"));
  CHECK_FALSE(by_key.contains("42"));
  // A matrix needs items of two dimensions.
  CHECK_THROWS_WITH(sequential_table_reader<holder<matrix<float>>>("idx:" + labels),
                    Catch::Contains("two dimensions") && Catch::Contains("key '00000000'"));

  // IDX -> Kaldi archive -> IDX gives the file back, byte for byte.
  test::temp_dir dir;
  using bytes_vector = holder<std::vector<std::uint8_t>>;
  {
    table_writer<bytes_vector> ark("ark:" + (dir / "images.ark"));
    for (auto& [key, image] : sequential_table_reader<bytes_vector>("idx:" + images)) ark.write(key, image);
  }
  {
    table_writer<bytes_vector> out("idx:" + (dir / "copy-idx1-ubyte"));
    for (auto& [key, image] : sequential_table_reader<bytes_vector>("ark:" + (dir / "images.ark")))
      out.write(key, image);
  }
  idx_file copy(dir / "copy-idx1-ubyte");
  CHECK(copy.header().dims == std::vector<std::uint32_t>{100, 784});  // items keep their values, not 28x28
  CHECK(copy.values<int>() == image_file.values<int>());
  {
    table_writer<holder<matrix<float>>> out("idx:" + (dir / "floats"));
    for (auto& [key, image] : sequential_table_reader<holder<matrix<float>>>("idx:" + images))
      out.write(key, image);
  }
  idx_file floats(dir / "floats");
  CHECK(floats.header().type == idx_type::f32);
  CHECK(floats.header().dims == std::vector<std::uint32_t>{100, 28, 28});
  CHECK(floats.values<int>() == image_file.values<int>());

  table_writer<basic_holder<std::int32_t>> keyed("idx:" + (dir / "labels"));
  CHECK_THROWS_WITH(keyed.write("utt1", 3), Catch::Contains("must have key 00000000, not 'utt1'"));
  table_writer<basic_vector_holder<std::int32_t>> shaped("idx:" + (dir / "shaped"));
  shaped.write("00000000", {1, 2});
  CHECK_THROWS_WITH(shaped.write("00000001", {1, 2, 3}), Catch::Contains("first item's shape"));
}

TEST_CASE("a value the asked type cannot hold is a format_error naming the item, never a wrapped number",
          "[idx][convert]") {
  test::temp_dir dir;
  std::string floats = dir / "floats-idx2", shorts = dir / "shorts-idx1";
  {
    idx_writer out(open_output(floats), idx_type::f32, {2}, 4);
    for (std::vector<float> item : {std::vector<float>{1.0f, -2.0f},
                                    {3e10f, 1.0f},
                                    {2.5f, 0.0f},
                                    {std::numeric_limits<float>::quiet_NaN(), 0.0f}})
      out.write_item<float>(item);
    out.close();
    idx_writer small(open_output(shorts), idx_type::i16, {}, 2);
    small.write_item<std::int16_t>(std::vector<std::int16_t>{7});
    small.write_item<std::int16_t>(std::vector<std::int16_t>{300});
    small.close();
  }
  // As int32 vectors: the whole item 0 converts; 3e10, 2.5 and NaN do not fit an int.
  sequential_table_reader<basic_vector_holder<std::int32_t>> ints("idx:" + floats);
  CHECK(ints.value() == std::vector<std::int32_t>{1, -2});
  CHECK_THROWS_WITH(ints.next(), Catch::Contains("key '00000001'") && Catch::Contains("at byte 20") &&
                                     Catch::Contains("32-bit signed integers") &&
                                     Catch::Contains("3.0000001e+10"));
  random_access_table_reader<basic_vector_holder<std::int32_t>> by_key("idx:" + floats);
  CHECK_THROWS_WITH(by_key.at("00000002"), Catch::Contains("2.5") && Catch::Contains("key '00000002'"));
  CHECK_THROWS_WITH(by_key.at("00000003"), Catch::Contains("nan"));
  // 300 is no uint8, and no 8-bit signed integer; -2 no unsigned one.
  CHECK_THROWS_WITH(sequential_table_reader<basic_holder<std::uint8_t>>("idx:" + shorts).next(),
                    Catch::Contains("8-bit unsigned integers") && Catch::Contains("300"));
  CHECK_THROWS_WITH(sequential_table_reader<basic_vector_holder<std::uint32_t>>("idx:" + floats),
                    Catch::Contains("-2"));
  // idx_file's own conversions are checked the same way.
  idx_file file(floats);
  CHECK(file.item<std::int64_t>(0) == std::vector<std::int64_t>{1, -2});
  CHECK_THROWS_WITH(file.item<std::int32_t>(1), Catch::Contains(floats) && Catch::Contains("at byte 20"));
  CHECK_THROWS_AS(file.values<int>(), format_error);
  CHECK(file.values<double>()[2] == 3e10f);
  // Floats read as Kaldi vectors and matrices.
  sequential_table_reader<holder<vector<float>>> vectors("idx:" + floats);
  CHECK(vectors.value() == vector<float>{1.0f, -2.0f});
  vectors.next();
  CHECK(vectors.value()[0] == 3e10f);
  // Doubles too large for a float are no floats either.
  std::string doubles = dir / "doubles-idx1";
  idx_writer big(open_output(doubles), idx_type::f64, {}, 1);
  big.write_item<double>(std::vector<double>{1e300});
  big.close();
  CHECK_THROWS_WITH(sequential_table_reader<basic_holder<float>>("idx:" + doubles).value(),
                    Catch::Contains("32-bit floats"));
  CHECK(sequential_table_reader<basic_holder<double>>("idx:" + doubles).value() == 1e300);
  // Integers a float would round are no floats: 2^24 + 1 and 2^31 - 1 are no 32-bit floats,
  // though 64-bit ones hold them.
  std::string ints32 = dir / "ints-idx1";
  idx_writer whole(open_output(ints32), idx_type::i32, {}, 3);
  for (std::int32_t v : {16777216, 16777217, 2147483647})
    whole.write_item<std::int32_t>(std::vector<std::int32_t>{v});
  whole.close();
  sequential_table_reader<basic_holder<float>> rounded("idx:" + ints32);
  CHECK(rounded.value() == 16777216.0f);
  CHECK_THROWS_WITH(rounded.next(), Catch::Contains("32-bit floats") && Catch::Contains("16777217") &&
                                        Catch::Contains("key '00000001'"));
  CHECK_THROWS_WITH(idx_file(ints32).item<float>(2), Catch::Contains("2147483647"));
  CHECK(idx_file(ints32).values<double>() == std::vector<double>{16777216, 16777217, 2147483647});
}

TEST_CASE("an IDX writer refuses a value its file's type cannot hold, rather than wrapping it",
          "[idx][bad]") {
  test::temp_dir dir;
  idx_writer bytes(open_output(dir / "u8.idx"), idx_type::u8, {2});
  CHECK_THROWS_MATCHES(bytes.write_item<int>(std::vector<int>{1, 256}), usage_error,
                       test::says("value 1 of item 0") && test::says("does not fit the file's type"));
  CHECK_THROWS_AS(bytes.write_item<int>(std::vector<int>{-1, 0}), usage_error);
  CHECK_THROWS_AS(bytes.write_item<double>(std::vector<double>{0.5, 0}), usage_error);
  CHECK_THROWS_AS(bytes.write_item<double>(std::vector<double>{std::nan(""), 0}), usage_error);
  CHECK_THROWS_AS(bytes.write_item<std::uint64_t>(std::vector<std::uint64_t>{UINT64_MAX, 0}), usage_error);
  bytes.write_item<double>(std::vector<double>{255, 0});
  idx_writer ints(open_output(dir / "i32.idx"), idx_type::i32, {1});
  CHECK_THROWS_AS(ints.write_item<double>(std::vector<double>{1e10}), usage_error);
  CHECK_THROWS_AS(ints.write_item<std::uint64_t>(std::vector<std::uint64_t>{UINT64_MAX}), usage_error);
  ints.write_item<std::int64_t>(std::vector<std::int64_t>{-5});
  idx_writer floats(open_output(dir / "f32.idx"), idx_type::f32, {1});
  CHECK_THROWS_AS(floats.write_item<double>(std::vector<double>{1e300}), usage_error);
  floats.write_item<double>(std::vector<double>{0.1});
  bytes.close();
  ints.close();
  floats.close();
  CHECK(test::read_file(dir / "u8.idx").substr(12) == std::string("\xff\x00", 2));
}
