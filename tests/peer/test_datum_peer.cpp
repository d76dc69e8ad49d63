// Caffe's Datum against libprotobuf, both ways, on thousands of random messages: with the
// same fields set, tablio writes libprotobuf's bytes, and each reads what the other writes.
#include <tablio/types/datum.hpp>

#include <catch2/catch.hpp>

#include <bit>
#include <random>

#include "caffe_datum.pb.h"

using namespace tablio;

TEST_CASE("random Datums: tablio and libprotobuf agree", "[peer][datum]") {
  std::mt19937_64 rng(4);
  auto pick = [&](std::uint64_t n) { return rng() % n; };
  for (int i = 0; i < 5000; ++i) {
    datum d;
    crosscheck::Datum peer;
    d.present = {pick(4) != 0, pick(4) != 0, pick(4) != 0, pick(3) == 0, pick(4) != 0, pick(4) == 0};
    auto int32 = [&] {
      return pick(3) == 0 ? -static_cast<std::int32_t>(pick(1000)) : static_cast<std::int32_t>(pick(100000));
    };
    if (d.present.channels) peer.set_channels(d.channels = int32());
    if (d.present.height) peer.set_height(d.height = int32());
    if (d.present.width) peer.set_width(d.width = int32());
    d.data = std::string(pick(3) == 0 ? pick(2000) : 0, '\0');
    for (auto& c : d.data) c = static_cast<char>(rng());
    d.present.data = d.present.data || !d.data.empty();
    if (d.present.data) peer.set_data(d.data);
    if (d.present.label) peer.set_label(d.label = int32());
    for (std::uint64_t n = pick(3) == 0 ? pick(50) : 0; n > 0; --n) {
      float f = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
      d.float_data.push_back(f);
      peer.add_float_data(f);
    }
    if (d.present.encoded) peer.set_encoded(d.encoded = pick(2) == 0);
    std::string ours = encode_datum(d), theirs = peer.SerializeAsString();
    REQUIRE(ours == theirs);
    crosscheck::Datum parsed;
    REQUIRE(parsed.ParseFromString(ours));
    REQUIRE(parsed.SerializeAsString() == ours);
    datum back = decode_datum(theirs);
    REQUIRE(encode_datum(back) == theirs);
    REQUIRE(back.present == d.present);
  }
}
