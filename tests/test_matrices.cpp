// Matrices, vectors and compressed matrices against archives written by real Kaldi: values
// bit-exact, bytes re-written identically, compression and decompression bit-exact.
#include <tablio/types/matrix.hpp>

#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <random>

#include "fuzz/fuzz_support.hpp"
#include "test_support.hpp"

using namespace tablio;

namespace {

template <class T>
std::string matrix_line(const std::string& key, const std::string& type, const matrix<T>& m) {
  std::vector<T> values(m.data(), m.data() + m.size());
  return key + "\t" + type + "\t" + std::to_string(m.num_rows()) + "x" + std::to_string(m.num_cols()) + "\t" +
         test::join(values);
}

std::string compressed_line(const std::string& key, const compressed_matrix& cm) {
  static const char* names[] = {"", "CM", "CM2", "CM3"};
  matrix<float> m(cm.num_rows(), cm.num_cols());
  if (!cm.empty()) cm.decompress(m.data());
  return matrix_line(key, std::string("compressed-matrix:") + names[static_cast<int>(cm.storage_format())],
                     m);
}

template <class H, class Format>
void check_entries(const std::string& path, const std::string& expect, Format format) {
  auto entries = test::read_archive_file<H>(test::data_path(path));
  auto expected = test::expect_entries(test::data_path(expect));
  REQUIRE(entries.size() == expected.size());
  for (std::size_t i = 0; i < entries.size(); ++i)
    CHECK(format(entries[i].first, entries[i].second) == expected[i]);
}

// Each operation rounded on its own, as in Kaldi's default build, even where the compiler
// could fuse a multiply and an add.
template <class F>
F no_fma(F x) {
  volatile F rounded = x;
  return rounded;
}

// How many values of out differ, bit for bit (any NaN matching any NaN), from Kaldi's
// CharToFloat written out in Kaldi's precision, for a method-1 compressed matrix's header and
// body (each column's four percentiles, then the columns' bytes).
int mismatches_with_kaldi_formula(float min_value, float range, int rows, int cols, const unsigned char* body,
                                  const matrix<float>& out) {
  auto percentile = [&](int c, int k) {
    auto v = static_cast<std::uint16_t>(body[8 * c + 2 * k] | (body[8 * c + 2 * k + 1] << 8));
    return min_value + no_fma(no_fma(range * 1.52590218966964e-05F) * v);
  };
  int mismatches = 0;
  for (int c = 0; c < cols; ++c) {
    float p0 = percentile(c, 0), p25 = percentile(c, 1), p75 = percentile(c, 2), p100 = percentile(c, 3);
    for (int r = 0; r < rows; ++r) {
      int v = body[8 * cols + c * rows + r];
      float expected;
      if (v <= 64)
        expected = static_cast<float>(p0 + no_fma(no_fma((p25 - p0) * v) * (1 / 64.0)));
      else if (v <= 192)
        expected = static_cast<float>(p25 + no_fma(no_fma((p75 - p25) * (v - 64)) * (1 / 128.0)));
      else
        expected = static_cast<float>(p75 + no_fma(no_fma((p100 - p75) * (v - 192)) * (1 / 63.0)));
      float got = out(r, c);
      bool same = std::isnan(expected)
                      ? std::isnan(got)
                      : std::bit_cast<std::uint32_t>(expected) == std::bit_cast<std::uint32_t>(got);
      mismatches += !same;
    }
  }
  return mismatches;
}

}  // namespace

TEMPLATE_TEST_CASE("Kaldi matrices are read bit-exactly and written byte for byte", "[matrix][golden]", float,
                   double) {
  const std::string type = sizeof(TestType) == 4 ? "float-matrix" : "double-matrix";
  for (const char* mode : {".bin.ark", ".txt.ark"}) {
    const std::string ark = "kaldi/holders/" + type + mode;
    auto entries = test::read_archive_file<holder<matrix<TestType>>>(test::data_path(ark));
    auto expected = test::expect_entries(test::data_path(ark + ".expect"));
    REQUIRE(entries.size() == expected.size());
    for (std::size_t i = 0; i < entries.size(); ++i)
      CHECK(matrix_line(entries[i].first, type, entries[i].second) == expected[i]);
    bool binary = std::string(mode) == ".bin.ark";
    CHECK(test::write_archive<holder<matrix<TestType>>>(entries, binary) ==
          test::read_file(test::data_path(ark)));
  }
}

TEST_CASE("matrices and vectors are read at the other precision", "[matrix][golden]") {
  check_entries<holder<matrix<double>>>("kaldi/holders/float-matrix.bin.ark",
                                        "kaldi/holders/float-matrix.bin.ark.as-double-matrix.expect",
                                        [](auto& k, auto& m) { return matrix_line(k, "double-matrix", m); });
  check_entries<holder<matrix<float>>>("kaldi/holders/double-matrix.bin.ark",
                                       "kaldi/holders/double-matrix.bin.ark.as-float-matrix.expect",
                                       [](auto& k, auto& m) { return matrix_line(k, "float-matrix", m); });
  check_entries<holder<vector<double>>>(
      "kaldi/holders/float-vector.bin.ark", "kaldi/holders/float-vector.bin.ark.as-double-vector.expect",
      [](auto& k, auto& v) { return test::expect_line(k, "double-vector", v.storage()); });
}

TEST_CASE("compressed matrices of every method decompress bit-exactly", "[compressed][golden]") {
  for (int method = 1; method <= 7; ++method) {
    DYNAMIC_SECTION("method " << method) {
      const std::string ark = "kaldi/compressed/cm-method" + std::to_string(method) + ".bin.ark";
      check_entries<holder<compressed_matrix>>(ark, ark + ".expect", compressed_line);
      // Reading the same archive as a plain matrix gives identical bits.
      auto expected = test::expect_entries(test::data_path(ark + ".expect"));
      auto as_matrix = test::read_archive_file<holder<matrix<float>>>(test::data_path(ark));
      REQUIRE(as_matrix.size() == expected.size());
      for (std::size_t i = 0; i < as_matrix.size(); ++i) {
        std::string line = matrix_line(as_matrix[i].first, "x", as_matrix[i].second);
        CHECK(line.substr(line.find('\t', line.find('\t') + 1)) ==
              expected[i].substr(expected[i].find('\t', expected[i].find('\t') + 1)));
      }
    }
  }
}

TEST_CASE("compression gives Kaldi's bytes for every method", "[compressed][golden]") {
  auto sources =
      test::read_archive_file<holder<matrix<float>>>(test::data_path("kaldi/compressed/cm-source.bin.ark"));
  std::map<std::string, matrix<float>> by_key(sources.begin(), sources.end());
  for (int method = 1; method <= 7; ++method) {
    DYNAMIC_SECTION("method " << method) {
      const std::string ark = "kaldi/compressed/cm-method" + std::to_string(method) + ".bin.ark";
      auto stored = test::read_archive_file<holder<compressed_matrix>>(test::data_path(ark));
      std::vector<std::pair<std::string, compressed_matrix>> ours;
      for (const auto& [key, cm] : stored) {
        REQUIRE(by_key.count(key) == 1);
        const matrix<float>& source = by_key[key];
        ours.emplace_back(key, compressed_matrix(source.data(), source.num_rows(), source.num_cols(),
                                                 static_cast<compression_method>(method)));
        CHECK(ours.back().second == cm);
      }
      CHECK(test::write_archive<holder<compressed_matrix>>(ours, true) ==
            test::read_file(test::data_path(ark)));
    }
  }
}

TEST_CASE("compressed matrices in text mode are Kaldi's text matrices", "[compressed][golden]") {
  auto stored = test::read_archive_file<holder<compressed_matrix>>(
      test::data_path("kaldi/compressed/cm-method1.bin.ark"));
  CHECK(test::write_archive<holder<compressed_matrix>>(stored, false) ==
        test::read_file(test::data_path("kaldi/compressed/cm-method1.txt.ark")));
  check_entries<holder<matrix<float>>>("kaldi/compressed/cm-method1.txt.ark",
                                       "kaldi/compressed/cm-method1.txt.ark.expect",
                                       [](auto& k, auto& m) { return matrix_line(k, "float-matrix", m); });
}

TEST_CASE("an empty compressed matrix is written as Kaldi writes it and read cleanly", "[compressed]") {
  std::vector<std::pair<std::string, compressed_matrix>> entries{{"a", {}}, {"b", {}}};
  std::string bytes = test::write_archive<holder<compressed_matrix>>(entries, true);
  CHECK(bytes == std::string("a \0BCM ", 7) + std::string(20, '\0') + std::string("b \0BCM ", 7) +
                     std::string(20, '\0'));
  reader r = memory_reader(std::string_view(bytes));
  auto back = test::read_archive<holder<compressed_matrix>>(r);
  REQUIRE(back.size() == 2);
  CHECK(back[1].first == "b");  // not "\0\0\0\0b", as Kaldi itself would read it
  // One rule with plain matrices: rows without columns (or the reverse) cannot be written.
  const float none[1] = {};
  for (auto [rows, cols] : {std::pair{0, 5}, std::pair{5, 0}}) {
    CHECK_THROWS_WITH(compressed_matrix(none, rows, cols, compression_method::two_byte_auto),
                      Catch::Contains("both positive or both zero"));
    CHECK_THROWS_WITH(matrix<float>(rows, cols), Catch::Contains("both positive or both zero"));
  }
  CHECK(compressed_matrix(none, 0, 0).empty());
}

TEST_CASE("a matrix stored compressed reads the same from the buffer and across refills",
          "[compressed][bad]") {
  // A matrix decompresses its bytes where they lie in the read buffer when they are all there,
  // and through a bounded copy when the input arrives a few bytes at a time; both give the
  // compressed matrix's own values, and both name the missing bytes when the input ends early.
  std::mt19937 rng(4);
  std::normal_distribution<float> normal(0, 2);
  for (auto method : {compression_method::speech_feature, compression_method::two_byte_auto,
                      compression_method::one_byte_auto}) {
    INFO("method " << static_cast<int>(method));
    matrix<float> m(200, 13);
    for (std::size_t i = 0; i < m.size(); ++i) m.data()[i] = normal(rng);
    compressed_matrix cm(m.data(), 200, 13, method);
    matrix<float> expected(200, 13);
    cm.decompress(expected.data());
    const auto bytes = encode<kaldi_binary>(cm);
    const std::string_view whole(bytes.data(), bytes.size());
    for (std::uint8_t mode : {0, 7}) {  // memory, then 7 bytes per read from a source of unknown size
      INFO("mode " << int(mode));
      matrix<float> out;
      reader r = fuzz::input(whole, mode, "cm.bin");
      out.read_kaldi(r, true);
      CHECK(out == expected);
      matrix<float> truncated;
      reader short_input = fuzz::input(whole.substr(0, whole.size() - 5), mode, "cm.bin");
      CHECK_THROWS_MATCHES(truncated.read_kaldi(short_input, true), format_error,
                           Catch::Matchers::Predicate<format_error>([](const format_error& e) {
                             return e.path() == "cm.bin" &&
                                    std::string(e.what()).find("compressed matrix bytes") !=
                                        std::string::npos;
                           }));
      CHECK(truncated.num_rows() == 0);
    }
  }
}

TEST_CASE("text matrices and vectors keep infinities and NaNs of either sign", "[matrix][text]") {
  // "-inf" and "-nan" are what C++ streams, and so Kaldi's writers, write; Kaldi's readers take
  // only the unsigned words, tablio's all four, so that what is written reads back.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  matrix<float> m(1, 5);
  for (int c = 0; c < 5; ++c)
    m(0, c) = std::array<float, 5>{inf, -inf, nan, -nan, -1.5f}[static_cast<std::size_t>(c)];
  using pairs = std::vector<std::pair<std::string, matrix<float>>>;
  const std::string text = test::write_archive<holder<matrix<float>>>(pairs{{"a", m}}, false);
  CHECK(text == "a  [\n  inf -inf nan -nan -1.5 ]\n");
  reader r = memory_reader(text, "m.ark");
  auto back = test::read_archive<holder<matrix<float>>>(r);
  REQUIRE(back.size() == 1);
  CHECK(test::write_archive<holder<matrix<float>>>(back, false) == text);
  const matrix<float>& v = back[0].second;
  CHECK((v(0, 1) == -inf && std::isnan(v(0, 3)) && std::signbit(v(0, 3)) && !std::signbit(v(0, 2))));
  // Words in any case, as Kaldi takes them; and in a vector.
  holder<std::vector<float>> h;
  reader words = memory_reader(std::string_view(" [ -INF -Infinity -NaN 2 ]\n"), "v.ark");
  h.read(words);
  REQUIRE(h.value().size() == 4);
  CHECK((h.value()[0] == -inf && h.value()[1] == -inf && std::isnan(h.value()[2]) && h.value()[3] == 2));
}

TEST_CASE("bad matrices are errors", "[matrix][bad]") {
  auto read_text = [](std::string_view text) {
    holder<matrix<float>> h;
    reader r = memory_reader(text, "m.ark");
    h.read(r);
    return h.value();
  };
  CHECK(read_text(" [ 1 2\n 3 4 ]\n").num_rows() == 2);
  CHECK(std::isinf(read_text(" [ inf 1 ]\n")(0, 0)));
  CHECK(std::isnan(read_text(" [ NaN 1 ]\n")(0, 0)));
  CHECK(read_text(" [ 1 2 ; ; 3 4 ]").num_rows() == 2);  // empty rows are ignored
  CHECK(read_text("[]").num_rows() == 0);
  CHECK_THROWS_WITH(read_text(" [ -x 1 ]\n"), Catch::Contains("'-x'"));
  CHECK_THROWS_WITH(read_text(" [ - 1 ]\n"), Catch::Contains("text float"));
  CHECK_THROWS_WITH(read_text(" [ 1 2\n 3 ]\n"), Catch::Contains("inconsistent #cols"));
  CHECK_THROWS_WITH(read_text(" [ 1 x ]\n"), Catch::Contains("'x'"));
  CHECK_THROWS_WITH(read_text(" [ 1 2 "), Catch::Contains("end of input"));
  CHECK_THROWS_WITH(read_text(" ( 1 ]"), Catch::Contains("\"[\" opening a matrix"));

  SECTION("a binary row-count marker of 08 is Kaldi's 8 vs. 4 error") {
    const std::string path = test::data_path("kaldi/bad/matrix-rows-marker08.ark");
    reader r(file_source(path), path);
    CHECK_THROWS_WITH(test::read_archive<holder<matrix<float>>>(r), Catch::Contains("8 vs. 4"));
  }
  SECTION("a truncated matrix names its offset") {
    const std::string path = test::data_path("kaldi/bad/trunc-in-object.ark");
    reader r(file_source(path), path);
    try {
      test::read_archive<holder<matrix<float>>>(r);
      FAIL("no error");
    } catch (const format_error& e) {
      CHECK(e.path() == path);
      CHECK(e.offset().has_value());
      CHECK_THAT(e.what(), Catch::Contains("matrix elements"));
    }
  }
  SECTION("dimensions that lie are rejected before allocating") {
    std::string bomb("\0BFM \x04\xff\xff\xff\x7f\x04\xff\xff\xff\x7f", 15);
    reader r = memory_reader(std::string_view(bomb));
    holder<matrix<float>> h;
    CHECK_THROWS_WITH(h.read(r), Catch::Contains("matrix elements"));
    std::string negative("\0BFM \x04\xff\xff\xff\xff\x04\x01\0\0\0", 15);
    reader r2 = memory_reader(std::string_view(negative));
    CHECK_THROWS_WITH(h.read(r2), Catch::Contains("-1x1"));
    std::string bad_cm("\0BCM2 \0\0\0\0\0\0\x80\x3f\x05\0\0\0\x05\0\0\0\x01\x02", 24);
    reader r3 = memory_reader(std::string_view(bad_cm));
    holder<compressed_matrix> c;
    CHECK_THROWS_WITH(c.read(r3), Catch::Contains("compressed matrix bytes"));
  }
}

TEST_CASE("ranges: rows may end 2 past the last, columns must be within the matrix", "[matrix][range]") {
  // A 5x3 matrix, as in Kaldi's ExtractObjectRange (length_tolerance 3 for rows only).
  auto ranged = [](std::string_view range) {
    matrix<float> m(5, 3, std::vector<float>(15, 1.0f));
    apply_range(m, range);
    return std::to_string(m.num_rows()) + "x" + std::to_string(m.num_cols());
  };
  CHECK(ranged("0:0,0:2") == "1x3");
  CHECK(ranged("3:7") == "2x3");  // clipped to the last row
  CHECK_THROWS_WITH(ranged("3:8"), Catch::Contains("for a matrix of size 5x3"));
  CHECK_THROWS_WITH(ranged("0:0,0:3"), Catch::Contains("'0:0,0:3' for a matrix of size 5x3"));
  CHECK_THROWS_WITH(ranged(":,2:3"), Catch::Contains("for a matrix of size 5x3"));
  // Through a script, as copy-feats reads it: utt1 of feats.ark is 5x3.
  test::temp_dir dir;
  const std::string ark = test::data_path("kaldi/scp/feats.ark");
  std::ofstream(dir / "ranges.scp") << "in " << ark << ":5[0:0,0:2]\nout " << ark << ":5[0:0,0:3]\n";
  sequential_table_reader<holder<matrix<float>>> script("scp:" + (dir / "ranges.scp"));
  CHECK(script.value().num_cols() == 3);
  script.next();
  CHECK_THROWS_WITH(script.value(), Catch::Contains("for a matrix of size 5x3") && Catch::Contains("out"));
  auto ranged_vector = [](std::string_view range) {
    vector<float> v(std::vector<float>(5, 1.0f));
    apply_range(v, range);
    return v.dim();
  };
  CHECK(ranged_vector("2:7") == 3);
  CHECK_THROWS_WITH(ranged_vector("2:8"), Catch::Contains("for a vector of size 5"));
}

TEST_CASE("matrices round-trip through every codec", "[matrix]") {
  matrix<double> m(2, 3, {1, 2, 3, 4, 5, 6.5});
  auto raw = encode<raw_little>(m);
  CHECK(decode<raw_little, matrix<double>>(raw) == m);
  auto text = encode<kaldi_text>(m);
  CHECK(std::string_view(text.data(), text.size()) == " [\n  1 2 3 \n  4 5 6.5 ]\n");
  CHECK(decode<kaldi_text, matrix<double>>(text) == m);
  CHECK(decode<kaldi_binary, matrix<double>>(encode<kaldi_binary>(m)) == m);
  CHECK_THROWS_AS(matrix<float>(0, 3), usage_error);
}

TEST_CASE("large compressed matrices decompress exactly as Kaldi's formula says", "[compressed]") {
  // The golden files are small; large matrices take the table-driven path, checked here
  // against Kaldi's per-value formula written out independently.
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0, 4);
  // 80 columns are whole blocks of the decompressor; 37 leave a partial block.
  const int cols = GENERATE(80, 37);
  const int rows = cols == 80 ? 500 : 300;
  matrix<float> m(rows, cols);
  for (std::size_t i = 0; i < m.size(); ++i) m.data()[i] = normal(rng);
  compressed_matrix cm(m.data(), rows, cols, compression_method::speech_feature);
  matrix<float> out(rows, cols);
  cm.decompress(out.data());
  CHECK(mismatches_with_kaldi_formula(cm.min_value(), cm.range(), rows, cols, cm.bytes().data(), out) == 0);
  compressed_matrix one_byte(m.data(), rows, cols, compression_method::one_byte_auto);
  one_byte.decompress(out.data());
  float inc = static_cast<float>(one_byte.range() * (1.0 / 255.0));
  for (std::size_t i = 0; i < out.size(); i += 97)
    CHECK(out.data()[i] == one_byte.min_value() + no_fma(one_byte.bytes()[i] * inc));
}

TEST_CASE("compressed headers at float's extremes decompress exactly as Kaldi's formula says",
          "[compressed]") {
  // Stored headers are arbitrary: tiny ranges give products near or below float's normal range,
  // huge ones overflow, percentiles need not be in order. The table-driven path computes the
  // power-of-two segments in float only where that is exact; every header here is checked
  // against the formula in Kaldi's precision, every byte value in every column.
  std::mt19937 rng(11);
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<std::pair<float, float>> headers{
      {-3.5f, 9.25f}, {0.0f, 1e-36f},    {1e-38f, 1e-37f},      {0.0f, 1e-40f},  {-1e-44f, 3e-45f},
      {0.0f, 0.0f},   {-1.5e38f, 3e38f}, {-3e38f, 3.4e38f},     {1e30f, -2e30f}, {0.5f, inf},
      {-inf, 1.0f},   {2.0f, 0x1p-110f}, {0x1p-100f, 0x1p-120f}};
  const int rows = 300, cols = 9;
  for (auto [min_value, range] : headers) {
    INFO("min " << min_value << " range " << range);
    std::string bytes = "CM ";
    auto append = [&](auto v) { bytes.append(reinterpret_cast<const char*>(&v), sizeof v); };
    append(min_value);
    append(range);
    append(std::int32_t{rows});
    append(std::int32_t{cols});
    std::string body;
    for (int c = 0; c < cols; ++c)
      for (int k = 0; k < 4; ++k) {
        // Ordered, equal, reversed and random percentiles.
        std::uint16_t v = c == 0   ? static_cast<std::uint16_t>(k * 20000)
                          : c == 1 ? std::uint16_t{777}
                          : c == 2 ? static_cast<std::uint16_t>(65535 - k * 9000)
                          : c == 3 ? static_cast<std::uint16_t>(k)
                                   : static_cast<std::uint16_t>(rng());
        body += static_cast<char>(v & 0xFF);
        body += static_cast<char>(v >> 8);
      }
    for (int i = 0; i < rows * cols; ++i)
      body += static_cast<char>(i % rows < 256 ? i % rows : static_cast<int>(rng() & 0xFF));
    bytes += body;
    auto m = decode<kaldi_binary, matrix<float>>(bytes);
    REQUIRE(m.num_rows() == rows);
    CHECK(mismatches_with_kaldi_formula(min_value, range, rows, cols,
                                        reinterpret_cast<const unsigned char*>(body.data()), m) == 0);
  }
}

TEST_CASE("values without a compressed form are refused, not undefined behaviour", "[compressed][bad]") {
  using namespace std::string_literals;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (int method = 1; method <= 7; ++method) {
    INFO("method " << method);
    auto m = static_cast<compression_method>(method);
    std::vector<float> with_nan(12, 1.0f), huge_range(12, 3e38f);
    with_nan[5] = nan;
    huge_range[3] = -3e38f;
    CHECK_THROWS_WITH(compressed_matrix(with_nan.data(), 3, 4, m), Catch::Contains("NaN"));
    if (m == compression_method::two_byte_signed_integer ||
        m == compression_method::one_byte_unsigned_integer || m == compression_method::one_byte_zero_one) {
      // A fixed range: infinities clamp to its ends, as in Kaldi.
      std::vector<float> infinite{inf, -inf, 0.5f, 1.0f};
      compressed_matrix cm(infinite.data(), 1, 4, m);
      std::vector<float> out(4);
      cm.decompress(out.data());
      CHECK(out[0] == cm.min_value() + cm.range());
      CHECK(out[1] == cm.min_value());
      CHECK(compressed_matrix(huge_range.data(), 3, 4, m).num_rows() == 3);
    } else {
      CHECK_THROWS_WITH(compressed_matrix(huge_range.data(), 3, 4, m), Catch::Contains("range"));
    }
  }
  // A stored header of NaN decompresses to NaN, whatever the bytes.
  std::string bytes = "\0BCM2 "s;
  for (float v : {nan, nan}) bytes.append(reinterpret_cast<const char*>(&v), 4);
  for (std::int32_t v : {1, 2}) bytes.append(reinterpret_cast<const char*>(&v), 4);
  bytes.append("\1\2\3\4", 4);
  holder<compressed_matrix> h;
  reader r = memory_reader(std::string_view(bytes));
  h.read(r);
  std::vector<float> out(2);
  h.value().decompress(out.data());
  CHECK(std::isnan(out[0]));
  CHECK(std::isnan(out[1]));
}
