// Caffe's Datum: decode -> encode -> decode gives the same value; views agree with owned values.
#include <tablio/types/datum.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tablio;
  std::string_view bytes = fuzz::as_chars(data, size);
  datum d;
  bool owned = fuzz::accepts([&] { d = decode_datum(bytes); });
  datum_view v;
  bool viewed = fuzz::accepts([&] { decode_datum(bytes, v); });
  fuzz::require(owned == viewed);
  if (owned) {
    std::string again = encode_datum(d);
    datum back = decode_datum(again);
    fuzz::require(encode_datum(back) == again);
    fuzz::require(v.label == d.label && v.data == d.data && fuzz::same_bits(v.float_data, d.float_data) &&
                  v.present.data == d.present.data && v.present.encoded == d.present.encoded);
  }
  return 0;
}
