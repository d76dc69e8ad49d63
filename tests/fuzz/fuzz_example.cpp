// tf.Example and tf.SequenceExample decoding: decode -> encode -> decode gives the same value,
// and example_view accepts exactly what decode_example accepts, with the same features.
#include <tablio/types/example.hpp>
#include <tablio/types/example_view.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tablio;
  std::string_view bytes = fuzz::as_chars(data, size);
  example ex;
  bool owned = fuzz::accepts([&] { ex = decode_example(bytes); });
  example_view view;
  bool viewed = fuzz::accepts([&] { view.parse(bytes); });
  fuzz::require(owned == viewed);
  if (owned) {
    // Values compared through their encodings, which keep float bits (NaN != NaN otherwise).
    example from_view = view.to_example(), plain = ex;
    plain.unknown = {};
    plain.features_present = true;
    fuzz::require(encode_example(from_view) == encode_example(plain));
    std::string again = encode_example(ex);
    fuzz::require(encode_example(decode_example(again)) == again);
  }
  sequence_example seq;
  if (fuzz::accepts([&] { seq = decode_sequence_example(bytes); })) {
    std::string again = encode_sequence_example(seq);
    fuzz::require(encode_sequence_example(decode_sequence_example(again)) == again);
  }
  return 0;
}
