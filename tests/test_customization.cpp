// The customization order: codec_traits beats members, members beat ADL, ADL beats the
// Kaldi-style bridge, which beats built-ins and aggregates.
#include "test_support.hpp"

using namespace tablio;
using test::bytes_of;

namespace custom {

// Has every hook; codec_traits must win for raw_little, members for raw_big.
struct everything {
  int v = 0;
  template <class C>
  void tablio_write(writer& w, C) const {
    w.write("M");
  }
  template <class C>
  void tablio_read(reader& r, C) {
    v = r.get();
  }
  void Write(std::ostream& os, bool) const { os << "K"; }
  void Read(std::istream& is, bool) { v = is.get(); }
};

// ADL and Kaldi-style: ADL wins.
struct adl_and_kaldi {
  int v = 0;
  void Write(std::ostream& os, bool) const { os << "K"; }
  void Read(std::istream& is, bool) { v = is.get(); }
};
inline void tablio_write(writer& w, kaldi_binary, const adl_and_kaldi&) { w.write("A"); }
inline void tablio_read(reader& r, kaldi_binary, adl_and_kaldi& x) { x.v = r.get(); }

// An aggregate whose field is Kaldi-style: the bridge applies inside PFR.
struct kaldi_only {
  int v = 0;
  void Write(std::ostream& os, bool binary) const { os << (binary ? "KB" : "KT"); }
  void Read(std::istream& is, bool) {
    is.get();
    v = is.get();
  }
};
struct wrapper {
  kaldi_only inner;
  std::int16_t tail;
};

}  // namespace custom

template <>
struct tablio::codec_traits<tablio::raw_little, custom::everything> {
  static void write(writer& w, const custom::everything&) { w.write("T"); }
  static void read(reader& r, custom::everything& x) { x.v = r.get(); }
};

TEST_CASE("the customization order is traits, members, ADL, Kaldi-style, built-in, aggregate",
          "[codec][custom]") {
  CHECK(bytes_of<raw_little>(custom::everything{}) == "T");
  CHECK(bytes_of<raw_big>(custom::everything{}) == "M");
  CHECK(decode<raw_little, custom::everything>("T").v == 'T');
  CHECK(bytes_of<kaldi_binary>(custom::adl_and_kaldi{}) == "A");
  CHECK(bytes_of<kaldi_text>(custom::adl_and_kaldi{}) == "K");
  CHECK(bytes_of<kaldi_binary>(custom::wrapper{{}, 1}) == std::string("KB\x02\x01\x00", 5));
  CHECK(bytes_of<kaldi_text>(custom::wrapper{{}, 1}) == "KT1 ");
  auto w = decode<kaldi_binary, custom::wrapper>(bytes_of<kaldi_binary>(custom::wrapper{{}, 513}));
  CHECK(w.inner.v == 'B');
  CHECK(w.tail == 513);
}

namespace custom {

// A codec with only what the codec concept asks for: arithmetic values and counts, as
// little-endian bytes. Strings, vectors and optionals get the library's defaults.
struct minimal_codec {
  static constexpr bool binary = true;
  template <class T>
  requires std::is_arithmetic_v<T>
  static void write(writer& w, T v) {
    char bytes[sizeof(T)];
    store<std::endian::little>(bytes, v);
    w.write(bytes, sizeof(T));
  }
  template <class T>
  requires std::is_arithmetic_v<T>
  static void read(reader& r, T& v) {
    char bytes[sizeof(T)];
    r.read_exact(bytes, sizeof(T));
    v = load<std::endian::little, T>(bytes);
  }
  static void write_size(writer& w, std::uint64_t n) { write(w, static_cast<std::uint32_t>(n)); }
  static std::uint64_t read_size(reader& r) {
    std::uint32_t n = 0;
    read(r, n);
    return n;
  }
};

struct utterance {
  std::string text;
  std::vector<float> pitch;
  std::optional<int> speaker;
  bool operator==(const utterance&) const = default;
};

}  // namespace custom

static_assert(codec<custom::minimal_codec>);

// Minimal indeed: none of the primitives the library supplies.
template <class C>
constexpr bool has_any_supplied_primitive() {
  return requires { C::template min_value_size<int>(); }
  || requires { C::min_size_prefix; }
  || requires { C::min_string_size; }
  || requires(writer & w, std::string & s) { C::write_string(w, s); }
  || requires(reader & r, std::string & s) { C::read_string(r, s); }
  || requires(writer & w, float* p) { C::write_array(w, p, 1); }
  || requires(reader & r, float* p) { C::read_array(r, p, 1); };
}
static_assert(!has_any_supplied_primitive<custom::minimal_codec>());
static_assert(has_any_supplied_primitive<raw_little>());

TEST_CASE("a codec that only meets the concept encodes strings, vectors and optionals", "[codec][custom]") {
  using custom::minimal_codec;
  custom::utterance u{"hello", {1.5f, -2.0f}, 7};
  std::string bytes = bytes_of<minimal_codec>(u);
  // The defaults: a count then the bytes, a count then each float, a bool then the value.
  CHECK(bytes == std::string("\5\0\0\0hello\2\0\0\0", 13) + bytes_of<raw_little>(1.5f) +
                     bytes_of<raw_little>(-2.0f) + std::string("\1\7\0\0\0", 5));
  CHECK(decode<minimal_codec, custom::utterance>(bytes) == u);
  custom::utterance empty{"", {}, std::nullopt};
  CHECK(decode<minimal_codec, custom::utterance>(bytes_of<minimal_codec>(empty)) == empty);
  // A count is still checked against the input before anything is allocated.
  using custom::utterance;
  CHECK_THROWS_AS((decode<minimal_codec, utterance>(std::string("\xff\xff\xff\x7f", 4))), format_error);
  // And a table of them, through holder<T, Codec>.
  test::temp_dir dir;
  using minimal_holder = holder<custom::utterance, minimal_codec, minimal_codec>;
  {
    table_writer<minimal_holder> out("ark:" + (dir / "u.ark"));
    out.write("u1", u);
    out.close();
  }
  sequential_table_reader<minimal_holder> in("ark:" + (dir / "u.ark"));
  REQUIRE(!in.done());
  CHECK(in.value() == u);
}
