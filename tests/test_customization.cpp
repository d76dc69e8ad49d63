// The customization order: codec_traits beats members, members beat ADL, ADL beats the
// Kaldi-style bridge, which beats built-ins and aggregates.
#include "test_support.hpp"

using namespace tablio;

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

namespace {
template <class C, class T>
std::string bytes_of(const T& v) {
  auto b = encode<C>(v);
  return std::string(b.data(), b.size());
}
}  // namespace

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
