// The codecs: exact bytes of Kaldi's basic types, round trips of every supported type in
// every codec, and bad input.
#include "test_support.hpp"

#include <tablio/core/parse_float.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <unordered_map>

using namespace tablio;

namespace {

using test::bytes_of;

template <class C, class T>
T round_trip(const T& v) {
  return decode<C, T>(bytes_of<C>(v));
}

struct plain_record {
  std::uint32_t id;
  std::string name;
  std::vector<float> v;
  std::vector<std::int32_t> ids;
  double score;
  bool operator==(const plain_record&) const = default;
};

struct nested {
  std::int8_t small;
  std::uint64_t big;
  std::optional<std::string> note;
  std::map<std::string, std::vector<double>> table;
  std::unordered_map<int, bool> flags;
  std::pair<short, std::string> pair;
  std::tuple<int, float, std::string> tuple;
  std::array<std::uint16_t, 3> array;
  std::vector<plain_record> records;
  std::vector<std::pair<std::int32_t, std::int32_t>> alignment;
  std::vector<bool> bits;
  enum class colour : std::uint8_t { red, green };
  colour shade;
  bool operator==(const nested&) const = default;
};

nested sample() {
  return nested{-7,
                std::numeric_limits<std::uint64_t>::max(),
                "a note with spaces",
                {{"x", {1.5, -2.25}}, {"y", {}}},
                {{3, true}, {4, false}},
                {-2, "two words"},
                {1, 0.5f, "three"},
                {1, 2, 65535},
                {{1, "one", {0.125f}, {1, 2}, 0.5}, {2, "", {}, {}, -1}},
                {{1, 2}, {-3, 4}},
                {true, false, true},
                nested::colour::green};
}

}  // namespace

TEST_CASE("Kaldi binary basic types are byte-exact", "[codec][kaldi]") {
  CHECK(bytes_of<kaldi_binary>(std::int32_t{123456}) == std::string("\x04\x40\xe2\x01\x00", 5));
  CHECK(bytes_of<kaldi_binary>(std::int8_t{-1}) == std::string("\x01\xff", 2));
  CHECK(bytes_of<kaldi_binary>(std::int16_t{2}) == std::string("\x02\x02\x00", 3));
  CHECK(bytes_of<kaldi_binary>(std::int64_t{1}) == std::string("\x08\x01\0\0\0\0\0\0\0", 9));
  CHECK(bytes_of<kaldi_binary>(std::uint8_t{1}) == std::string("\xff\x01", 2));
  CHECK(bytes_of<kaldi_binary>(std::uint16_t{1}) == std::string("\xfe\x01\x00", 3));
  CHECK(bytes_of<kaldi_binary>(std::uint32_t{1}) == std::string("\xfc\x01\0\0\0", 5));
  CHECK(bytes_of<kaldi_binary>(std::uint64_t{1}) == std::string("\xf8\x01\0\0\0\0\0\0\0", 9));
  CHECK(bytes_of<kaldi_binary>(-1.5f) == std::string("\x04\x00\x00\xc0\xbf", 5));
  CHECK(bytes_of<kaldi_binary>(-2.5) == std::string("\x08\0\0\0\0\0\0\x04\xc0", 9));
  CHECK(bytes_of<kaldi_binary>(true) == "T");
  CHECK(bytes_of<kaldi_binary>(false) == "F");
}

TEST_CASE("Kaldi text basic types are byte-exact", "[codec][kaldi]") {
  CHECK(bytes_of<kaldi_text>(std::int32_t{-2147483647 - 1}) == "-2147483648 ");
  CHECK(bytes_of<kaldi_text>(std::int8_t{-5}) == "-5 ");  // a number, not a character
  CHECK(bytes_of<kaldi_text>(std::uint8_t{200}) == "200 ");
  CHECK(bytes_of<kaldi_text>(0.1f) == "0.1 ");
  CHECK(bytes_of<kaldi_text>(3.4028235e38f) == "3.402823e+38 ");
  CHECK(bytes_of<kaldi_text>(1.0 / 3) == "0.3333333 ");  // double keeps 7 digits too
  CHECK(bytes_of<kaldi_text>(1e300) == "1e+300 ");
  CHECK(bytes_of<kaldi_text>(-0.0f) == "-0 ");
  CHECK(bytes_of<kaldi_text>(1e10f) == "1e+10 ");
  CHECK(bytes_of<kaldi_text>(true) == "T ");
}

TEST_CASE("Kaldi's object-internal vectors", "[codec][kaldi]") {
  std::vector<std::int32_t> ints{1, -2};
  CHECK(bytes_of<kaldi_binary>(ints) == std::string("\x04\x02\0\0\0\x01\0\0\0\xfe\xff\xff\xff", 13));
  CHECK(bytes_of<kaldi_text>(ints) == "[ 1 -2 ]\n");
  std::vector<std::pair<std::int32_t, std::int32_t>> pairs{{1, 2}, {3, 4}};
  CHECK(bytes_of<kaldi_binary>(pairs) ==
        std::string("\x04\x02\0\0\0\x01\0\0\0\x02\0\0\0\x03\0\0\0\x04\0\0\0", 21));
  CHECK(bytes_of<kaldi_text>(pairs) == "[ 1,2 3,4 ]\n");
  CHECK(round_trip<kaldi_text>(pairs) == pairs);
  std::vector<float> floats{1.5f};
  CHECK(bytes_of<kaldi_binary>(floats) == std::string("FV \x04\x01\0\0\0\0\0\xc0\x3f", 12));
  CHECK(bytes_of<kaldi_text>(floats) == " [ 1.5 ]\n");
  CHECK(bytes_of<kaldi_text>(std::vector<double>{}) == " [ ]\n");
  SECTION("an integer vector with the wrong element size is an error") {
    std::string wrong("\x08\x01\0\0\0\x01\0\0\0\0\0\0\0", 13);
    CHECK_THROWS_WITH((decode<kaldi_binary, std::vector<std::int32_t>>(wrong)),
                      Catch::Contains("element size 4") && Catch::Contains("size 8"));
  }
  SECTION("a negative count is an error") {
    std::string negative("\x04\xff\xff\xff\xff", 5);
    CHECK_THROWS_WITH((decode<kaldi_binary, std::vector<std::int32_t>>(negative)), Catch::Contains("-1"));
  }
}

TEST_CASE("tokens and the binary header", "[codec][kaldi]") {
  std::string text = "  <Foo> Bar> <Baz>\tx";
  reader r = memory_reader(std::string_view(text), "tok");
  CHECK(kaldi_io::peek_token(r) == 'F');
  kaldi_io::expect_token(r, "<Foo>");
  kaldi_io::expect_token(r, "<Bar>");  // Kaldi accepts "Bar>" for "<Bar>"
  CHECK(kaldi_io::read_token(r) == "<Baz>");
  CHECK_THROWS_WITH(kaldi_io::read_token(r), Catch::Contains("whitespace after token 'x'"));
  reader r2 = memory_reader(std::string_view("<A> "), "tok");
  CHECK_THROWS_WITH(kaldi_io::expect_token(r2, "<B>"),
                    Catch::Contains("token '<B>'") && Catch::Contains("'<A>'"));

  std::string bin("\0Bxyz", 5);
  reader r3 = memory_reader(std::string_view(bin));
  CHECK(kaldi_io::read_binary_header(r3));
  CHECK(r3.tell() == 2);
  reader r4 = memory_reader(std::string_view("xyz"));
  CHECK_FALSE(kaldi_io::read_binary_header(r4));
  CHECK(r4.tell() == 0);
  std::string bad("\0C", 2);
  reader r5 = memory_reader(std::string_view(bad));
  CHECK_THROWS_WITH(kaldi_io::read_binary_header(r5), Catch::Contains("binary header"));
}

TEST_CASE("float and double are read across precisions", "[codec][kaldi]") {
  CHECK(decode<kaldi_binary, float>(bytes_of<kaldi_binary>(0.1)) == 0.1f);
  CHECK(decode<kaldi_binary, double>(bytes_of<kaldi_binary>(0.1f)) == static_cast<double>(0.1f));
  CHECK_THROWS_WITH((decode<kaldi_binary, float>(std::string("\x02\0\0", 3))),
                    Catch::Contains("a float (marker 4 or 8)") && Catch::Contains("marker 2"));
}

TEST_CASE("a wrong integer marker names both sizes", "[codec][kaldi][bad]") {
  std::string wrong("\x08\x01\0\0\0\0\0\0\0", 9);
  try {
    decode<kaldi_binary, std::int32_t>(wrong);
    FAIL("no error");
  } catch (const format_error& e) {
    CHECK(e.offset() == 0u);
    CHECK_THAT(e.what(), Catch::Contains("did not get expected integer type, 8 vs. 4"));
  }
  CHECK_THROWS_WITH((decode<kaldi_binary, std::uint32_t>(bytes_of<kaldi_binary>(std::int32_t{1}))),
                    Catch::Contains("4 vs. -4"));
}

TEMPLATE_TEST_CASE("every supported type round-trips", "[codec]", raw_little, raw_big, kaldi_binary,
                   kaldi_text) {
  nested n = sample();
  CHECK(round_trip<TestType>(n) == n);
  plain_record rec{42, "name", {1.f, -0.f, 3.25e-20f}, {7, -7}, 2.5};
  CHECK(round_trip<TestType>(rec) == rec);
  CHECK(round_trip<TestType>(std::numeric_limits<std::int64_t>::min()) ==
        std::numeric_limits<std::int64_t>::min());
  CHECK(round_trip<TestType>(std::string()) == std::string());
}

TEST_CASE("floats round-trip exactly in binary codecs, to 7 digits in text", "[codec]") {
  for (float f : {0.1f, 3.4028235e38f, 1.17549435e-38f, 1e-45f, -0.0f}) {
    CHECK(std::bit_cast<std::uint32_t>(round_trip<kaldi_binary>(f)) == std::bit_cast<std::uint32_t>(f));
    CHECK(std::bit_cast<std::uint32_t>(round_trip<raw_big>(f)) == std::bit_cast<std::uint32_t>(f));
  }
  CHECK(round_trip<kaldi_text>(1.0 / 3) == 0.3333333);
}

TEST_CASE("raw codecs write fixed-width values in their byte order", "[codec][raw]") {
  CHECK(bytes_of<raw_big>(std::uint32_t{0x01020304}) == "\x01\x02\x03\x04");
  CHECK(bytes_of<raw_little>(std::uint32_t{0x01020304}) == "\x04\x03\x02\x01");
  CHECK(bytes_of<raw_big>(std::vector<std::uint16_t>{0x0102}) ==
        std::string("\0\0\0\0\0\0\0\x01\x01\x02", 10));
  CHECK(bytes_of<raw_little>(std::string("ab")) == std::string("\x02\0\0\0\0\0\0\0ab", 10));
  CHECK_THROWS_WITH((decode<raw_little, bool>(std::string("\x02", 1))), Catch::Contains("a bool (0 or 1)"));
}

TEST_CASE("text numbers are read as `is >> value` reads them", "[codec][text]") {
  CHECK(decode<kaldi_text, float>("+5") == 5.0f);
  CHECK(decode<kaldi_text, float>("1e-50") == 0.0f);  // underflow reads as zero
  CHECK_THROWS_AS((decode<kaldi_text, float>("1e39")), format_error);
  CHECK_THROWS_AS((decode<kaldi_text, float>("0x10")), format_error);
  CHECK_THROWS_AS((decode<kaldi_text, std::int32_t>("2147483648")), format_error);
  CHECK_THROWS_AS((decode<kaldi_text, std::int8_t>("128")), format_error);
  CHECK(decode<kaldi_text, std::int8_t>("-128") == -128);
  CHECK_THROWS_WITH((decode<kaldi_text, int>("")), Catch::Contains("end of input"));
}

TEST_CASE("truncated and lying input gives format errors, never a crash", "[codec][bad]") {
  std::string full = bytes_of<kaldi_binary>(sample());
  for (std::size_t cut = 0; cut < full.size(); ++cut)
    CHECK_THROWS_AS((decode<kaldi_binary, nested>(std::string_view(full).substr(0, cut))), format_error);
  std::string raw = bytes_of<raw_little>(sample());
  for (std::size_t cut = 0; cut < raw.size(); ++cut)
    CHECK_THROWS_AS((decode<raw_little, nested>(std::string_view(raw).substr(0, cut))), format_error);
  std::string text = bytes_of<kaldi_text>(sample());
  for (std::size_t cut = 0; cut + 1 < text.size(); ++cut)
    CHECK_THROWS_AS((decode<kaldi_text, nested>(std::string_view(text).substr(0, cut))), format_error);
  SECTION("a count larger than the input is rejected before allocating") {
    std::string lying("\xff\xff\xff\xff\xff\xff\xff\x7f", 8);
    CHECK_THROWS_WITH((decode<raw_little, std::vector<std::string>>(lying)),
                      Catch::Contains("limits::max_element_count"));
    std::string lying32("\x04\xff\xff\xff\x0f", 5);
    CHECK_THROWS_WITH((decode<kaldi_binary, std::vector<std::string>>(lying32)),
                      Catch::Contains("only 0 bytes left"));
  }
  SECTION("a repeated map key is an error") {
    std::string twice = bytes_of<raw_little>(std::vector<std::pair<int, int>>{{1, 2}, {1, 3}});
    CHECK_THROWS_WITH((decode<raw_little, std::map<int, int>>(twice)), Catch::Contains("repeated key"));
  }
  SECTION("trailing bytes after a value are an error") {
    CHECK_THROWS_WITH((decode<raw_little, std::uint8_t>(std::string("ab"))), Catch::Contains("1 more bytes"));
  }
}

TEST_CASE("Kaldi's run-time-mode functions pick the codec", "[codec][kaldi]") {
  for (bool binary : {true, false}) {
    std::string bytes;
    {
      writer w = memory_writer(bytes);
      kaldi_io::write_basic_type(w, binary, std::int32_t{5});
      kaldi_io::write_integer_vector(w, binary, std::vector<std::int32_t>{1, 2});
      kaldi_io::write_integer_pair_vector(w, binary,
                                          std::vector<std::pair<std::int16_t, std::int16_t>>{{3, 4}});
      kaldi_io::write_basic_type(w, binary, 0.5f);
      w.close();
    }
    CHECK(bytes.substr(0, binary ? 5 : 2) == (binary ? std::string("\x04\x05\0\0\0", 5) : "5 "));
    reader r = memory_reader(std::string_view(bytes));
    std::int32_t i = 10;
    kaldi_io::read_basic_type(r, binary, i, /*add=*/true);
    CHECK(i == 15);
    std::vector<std::int32_t> v;
    kaldi_io::read_integer_vector(r, binary, v);
    CHECK(v == std::vector<std::int32_t>{1, 2});
    std::vector<std::pair<std::int16_t, std::int16_t>> p;
    kaldi_io::read_integer_pair_vector(r, binary, p);
    CHECK(p.size() == 1);
    CHECK(p[0].second == 4);
    float f = 0;
    kaldi_io::read_basic_type(r, binary, f);
    CHECK(f == 0.5f);
  }
}

TEST_CASE("floats are formatted exactly as printf(\"%.7g\")", "[codec][text]") {
  std::mt19937 rng(11);
  int mismatches = 0;
  auto check = [&](float f) {
    char ours[64], theirs[64];
    *detail::format_float_7g(ours, f) = 0;
    std::snprintf(theirs, sizeof theirs, "%.7g", static_cast<double>(f));
    if (std::strcmp(ours, theirs) != 0 && mismatches++ < 5) FAIL_CHECK(ours << " vs " << theirs);
  };
  for (int i = 0; i < 200000; ++i) {
    float f = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
    if (!std::isnan(f)) check(f);
  }
  for (float f : {0.f, -0.f, 1.f, 9999999.f, 9999999.5f, 1048576.5f, 3.4028235e38f, 1.17549435e-38f, 1e-45f,
                  0.0001f, 0.00001f, 99999.995f, std::numeric_limits<float>::infinity()})
    check(f);
  CHECK(mismatches == 0);
}

// Numbers are read by std::from_chars, or by fast_float where the standard library lacks it
// (libc++ before 20): both must give the bits strtod/strtof give (as Kaldi's `is >> value`
// does), and fast_float what std::from_chars gives, overflow and underflow included.
TEST_CASE("floating-point text reads bit for bit as the C library and std::from_chars", "[codec][numbers]") {
  std::mt19937_64 random(7);
  char text[64];
  auto same_bits = [](auto a, auto b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  auto check = [&](std::string_view token) {
    float f = 0;
    double d = 0;
    const char* end = token.data() + token.size();
    auto rf = tablio::detail::parse_float(token.data(), end, f);
    auto rd = tablio::detail::parse_float(token.data(), end, d);
    const std::string copy(token);
    if (rd.ec == std::errc{}) CHECK(same_bits(d, std::strtod(copy.c_str(), nullptr)));
    if (rf.ec == std::errc{}) CHECK(same_bits(f, std::strtof(copy.c_str(), nullptr)));
#if defined(TABLIO_HAS_FAST_FLOAT) && defined(__cpp_lib_to_chars)
    float ff = 12345;
    double fd = 12345;
    auto rff = tablio::detail::from_chars_fast_float(token.data(), end, ff);
    auto rfd = tablio::detail::from_chars_fast_float(token.data(), end, fd);
    CHECK((rff.ptr == rf.ptr && rff.ec == rf.ec && rfd.ptr == rd.ptr && rfd.ec == rd.ec));
    if (rf.ec == std::errc{}) CHECK(same_bits(ff, f));
    if (rd.ec == std::errc{}) CHECK(same_bits(fd, d));
#endif
  };
  for (const char* edge : {"1e-40",        "1e-46",
                           "1.4e-45",      "7e-46",
                           "3.4028235e38", "3.4028236e38",
                           "-1e39",        "0e999",
                           "1e-400",       "5e-324",
                           "2e-324",       "1.7976931348623159e308",
                           "inf",          "-inf",
                           "nan",          "infinity",
                           "1e",           "1.",
                           "-.5",          ".5e-3",
                           "00001",        "1e100000000000000000000"})
    check(edge);
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t bits = random();
    double d;
    float f;
    const auto low = static_cast<std::uint32_t>(bits);
    std::memcpy(&d, &bits, sizeof d);
    std::memcpy(&f, &low, sizeof f);
    const int precision = 1 + static_cast<int>(random() % 20);
    std::snprintf(text, sizeof text, "%.*g", precision, d);
    check(text);
    std::snprintf(text, sizeof text, "%.*g", precision, static_cast<double>(f));
    check(text);
  }
}
