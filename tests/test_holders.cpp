// Kaldi's named holders against archives written by real Kaldi: every value read bit-exactly
// and every archive written back byte for byte, in binary and text mode.
#include "test_support.hpp"

using namespace tablio;

namespace {

template <class H>
void check_golden(const std::string& type, const std::string& expect_type, bool with_text = true) {
  const std::string base = test::data_path("kaldi/holders/" + type);
  for (bool binary : {true, false}) {
    if (!binary && !with_text) continue;
    const std::string ark = base + (binary ? ".bin.ark" : ".txt.ark");
    DYNAMIC_SECTION(type << (binary ? " binary" : " text")) {
      auto entries = test::read_archive_file<H>(ark);
      auto expected = test::expect_entries(ark + ".expect");
      REQUIRE(entries.size() == expected.size());
      for (std::size_t i = 0; i < entries.size(); ++i)
        CHECK(test::expect_line(entries[i].first, expect_type, entries[i].second) == expected[i]);
      // Writing the values back gives Kaldi's bytes exactly.
      CHECK(test::write_archive<H>(entries, binary) == test::read_file(ark));
    }
  }
}

}  // namespace

TEST_CASE("basic holders match Kaldi's archives bit for bit", "[holders][golden]") {
  check_golden<basic_holder<std::int32_t>>("int32", "int32");
  check_golden<basic_holder<float>>("float", "float");
  check_golden<basic_holder<double>>("double", "double");
  check_golden<basic_holder<bool>>("bool", "bool");
}

TEST_CASE("vector holders match Kaldi's archives bit for bit", "[holders][golden]") {
  check_golden<basic_vector_holder<std::int32_t>>("int32-vector", "int32-vector");
  check_golden<basic_vector_vector_holder<std::int32_t>>("int32-vector-vector", "int32-vector-vector");
  check_golden<basic_pair_vector_holder<std::int32_t>>("int32-pair-vector", "int32-pair-vector");
  check_golden<basic_pair_vector_holder<float>>("float-pair-vector", "float-pair-vector");
}

TEST_CASE("token holders match Kaldi's archives", "[holders][golden]") {
  check_golden<token_holder>("token", "token");
  check_golden<token_vector_holder>("token-vector", "token-vector");
}

TEST_CASE("std::vector<float|double> in holder<> is Kaldi's Vector object", "[holders][golden]") {
  check_golden<holder<std::vector<float>>>("float-vector", "float-vector");
  check_golden<holder<std::vector<double>>>("double-vector", "double-vector");
}

TEST_CASE("binary values are read at the other precision as Kaldi converts them", "[holders][golden]") {
  auto check = [](auto holder_tag, const std::string& file, const std::string& expect,
                  const std::string& type) {
    using H = decltype(holder_tag);
    auto entries = test::read_archive_file<H>(test::data_path("kaldi/holders/" + file));
    auto expected = test::expect_entries(test::data_path("kaldi/holders/" + expect));
    REQUIRE(entries.size() == expected.size());
    for (std::size_t i = 0; i < entries.size(); ++i)
      CHECK(test::expect_line(entries[i].first, type, entries[i].second) == expected[i]);
  };
  check(basic_holder<double>{}, "float.bin.ark", "float.bin.ark.as-double.expect", "double");
  check(basic_holder<float>{}, "double.bin.ark", "double.bin.ark.as-float.expect", "float");
  check(holder<std::vector<double>>{}, "float-vector.bin.ark", "float-vector.bin.ark.as-double-vector.expect",
        "double-vector");
  check(holder<std::vector<float>>{}, "double-vector.bin.ark", "double-vector.bin.ark.as-float-vector.expect",
        "float-vector");
}

TEST_CASE("a wrong integer marker is an error naming both sizes", "[holders][bad]") {
  const std::string path = test::data_path("kaldi/bad/int32-marker08.ark");
  reader r(file_source(path), path);
  std::vector<std::string> keys;
  try {
    for (;;) {
      r.skip_whitespace();
      if (r.at_end()) break;
      std::string key;
      r.read_until_space(key);
      r.advance(1);
      keys.push_back(key);
      basic_holder<std::int32_t> h;
      h.read(r);
    }
    FAIL("no error");
  } catch (const format_error& e) {
    CHECK(keys == std::vector<std::string>{"a_zero", "b_neg", "c_max"});
    CHECK(e.path() == path);
    CHECK(e.offset() == 35u);  // the marker byte of c_max's value
    CHECK_THAT(e.what(), Catch::Contains("did not get expected integer type, 8 vs. 4"));
  }
}

TEST_CASE("truncated binary objects are errors with the offset", "[holders][bad]") {
  const std::string full = test::read_file(test::data_path("kaldi/holders/int32-vector.bin.ark"));
  // Cut inside d_seq's elements.
  const std::string cut = full.substr(0, full.size() - 3);
  reader r = memory_reader(std::string_view(cut), "cut.ark");
  try {
    test::read_archive<basic_vector_holder<std::int32_t>>(r);
    FAIL("no error");
  } catch (const format_error& e) {
    // The count is checked against the bytes left before anything is read or allocated.
    CHECK(e.path() == "cut.ark");
    CHECK(e.offset() == 86u);
    CHECK_THAT(e.what(), Catch::Contains("12 vector elements") && Catch::Contains("only 57 bytes left"));
  }
}

TEST_CASE("text holders reject what Kaldi rejects", "[holders][bad]") {
  auto read_text = [](auto holder_tag, std::string_view text) {
    decltype(holder_tag) h;
    reader r = memory_reader(text, "t.ark");
    h.read(r);
    return h.value();
  };
  SECTION("BasicHolder<float> does not take inf or nan") {
    CHECK_THROWS_WITH(read_text(basic_holder<float>{}, "inf\n"),
                      Catch::Contains("expected a text float") && Catch::Contains("byte 'i'"));
    CHECK_THROWS_AS(read_text(basic_holder<float>{}, "nan\n"), format_error);
  }
  SECTION("BasicHolder needs the value, spaces, then a newline") {
    CHECK(read_text(basic_holder<std::int32_t>{}, "5 \n") == 5);
    CHECK_THROWS_WITH(read_text(basic_holder<std::int32_t>{}, "\n5 \n"), Catch::Contains("empty line"));
    CHECK_THROWS_WITH(read_text(basic_holder<std::int32_t>{}, "5 6\n"),
                      Catch::Contains("newline after the value"));
    CHECK_THROWS_AS(read_text(basic_holder<std::int32_t>{}, "99999999999\n"), format_error);
  }
  SECTION("a vector of vectors needs ';' before the end of the line") {
    CHECK_THROWS_WITH(read_text(basic_vector_vector_holder<std::int32_t>{}, "1 2 ; 3\n"),
                      Catch::Contains("';'"));
  }
  SECTION("pairs are separated by ';'") {
    CHECK_THROWS_AS(read_text(basic_pair_vector_holder<std::int32_t>{}, "1 2 3 4\n"), format_error);
  }
  SECTION("a token must be followed by a newline") {
    CHECK_THROWS_WITH(read_text(token_holder{}, "a b\n"), Catch::Contains("newline after token 'a'"));
  }
  SECTION("Kaldi vectors accept inf and nan, and the -inf their writers write (Kaldi's readers do not)") {
    auto v = read_text(holder<std::vector<float>>{}, " [ 1 inf NaN -2 -inf ]\n");
    REQUIRE(v.size() == 5);
    CHECK(std::isinf(v[1]));
    CHECK(std::isnan(v[2]));
    CHECK((std::isinf(v[4]) && v[4] < 0));
    CHECK_THROWS_AS(read_text(holder<std::vector<float>>{}, " [ 1 -x ]\n"), format_error);
    CHECK_THROWS_WITH(read_text(holder<std::vector<float>>{}, " [ 1 \n 2 ]\n"), Catch::Contains("newline"));
  }
}

TEST_CASE("tokens with whitespace cannot be written", "[holders][bad]") {
  std::string out;
  writer w = memory_writer(out);
  CHECK_THROWS_AS(token_holder::write(w, true, "two words"), usage_error);
  CHECK_THROWS_AS(token_holder::write(w, true, ""), usage_error);
  CHECK_THROWS_AS(token_vector_holder::write(w, true, {"ok", "not ok"}), usage_error);
}

TEST_CASE("a Kaldi-style class works unchanged through holder<>", "[holders]") {
  struct gain {
    float value = 0;
    void Write(std::ostream& os, bool binary) const {
      os << (binary ? "<Gain> " : "<Gain> ");
      if (binary) {
        os.put(4);
        os.write(reinterpret_cast<const char*>(&value), 4);
      } else {
        os << value << ' ';
      }
    }
    void Read(std::istream& is, bool binary) {
      std::string tok;
      is >> tok;
      if (tok != "<Gain>") is.setstate(std::ios::failbit);
      is.get();
      if (binary) {
        if (is.get() != 4) is.setstate(std::ios::failbit);
        is.read(reinterpret_cast<char*>(&value), 4);
      } else {
        is >> value;
      }
    }
  };
  for (bool binary : {true, false}) {
    std::string bytes;
    {
      writer w = memory_writer(bytes);
      holder<gain>::write(w, binary, gain{2.5f});
      w.close();
    }
    CHECK(bytes.substr(0, binary ? 9 : 7) ==
          (binary ? std::string("\0B<Gain> \4", 10).substr(0, 9) : "<Gain> "));
    reader r = memory_reader(std::string_view(bytes));
    holder<gain> h;
    h.read(r);
    CHECK(h.value().value == 2.5f);
  }
  std::string bad = "<Loss> 1 ";
  reader r = memory_reader(std::string_view(bad), "bad.ark");
  holder<gain> h;
  CHECK_THROWS_WITH(h.read(r), Catch::Contains("bad.ark") && Catch::Contains("its Read() accepts"));
}
