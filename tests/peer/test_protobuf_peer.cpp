// tf.Example and tf.SequenceExample against libprotobuf itself, on thousands of random
// messages both ways: what libprotobuf writes (deterministically or not) tablio decodes to the
// same values, and re-encodes to libprotobuf's deterministic bytes; what tablio writes
// libprotobuf parses to the same values, and serializes deterministically to the same bytes.
#include <tablio/holder/example_form.hpp>
#include <tablio/types/example.hpp>
#include <tablio/types/example_view.hpp>

#include <catch2/catch.hpp>

#include "peer_support.hpp"

#include <bit>
#include <random>

#include "tf_example.pb.h"

using namespace tablio;

namespace {

using peer::deterministic_bytes;

// ----- random values
struct random_source {
  std::mt19937_64 rng;
  explicit random_source(std::uint64_t seed) : rng(seed) {}
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(rng() % n); }
  std::string key() {
    static const char* fixed[] = {"", "a", "label", "image/encoded", "x\xc3\xa9", "feature0"};
    if (below(3) == 0) return fixed[below(6)];
    std::string k;
    for (std::size_t n = below(12); n > 0; --n) k += static_cast<char>('!' + below(94));
    return k;
  }
  std::string bytes() {
    std::string b(below(4) == 0 ? below(300) : below(8), '\0');
    for (auto& c : b) c = static_cast<char>(rng());
    return b;
  }
  float real() {
    switch (below(4)) {
      case 0:
        return std::bit_cast<float>(static_cast<std::uint32_t>(rng()));  // any bits, NaNs too
      case 1:
        return 0.0f;
      default:
        return static_cast<float>(static_cast<std::int32_t>(rng())) / 1024.0f;
    }
  }
  std::int64_t integer() {
    switch (below(4)) {
      case 0:
        return static_cast<std::int64_t>(rng());
      case 1:
        return -static_cast<std::int64_t>(below(1000));
      default:
        return static_cast<std::int64_t>(below(300));
    }
  }
  feature value() {
    std::size_t n = below(5) == 0 ? below(200) : below(4);
    switch (below(4)) {
      case 0: {
        std::vector<std::string> v(n);
        for (auto& x : v) x = bytes();
        return v;
      }
      case 1: {
        std::vector<float> v(n);
        for (auto& x : v) x = real();
        return v;
      }
      case 2: {
        std::vector<std::int64_t> v(n);
        for (auto& x : v) x = integer();
        return v;
      }
      default:
        return std::monostate{};
    }
  }
  example features() {
    example ex;
    ex.features_present = below(8) != 0;
    if (ex.features_present)
      for (std::size_t n = below(7); n > 0; --n) ex.features[key()] = value();
    return ex;
  }
  sequence_example sequence() {
    sequence_example seq;
    seq.context = features();
    seq.context_present = seq.context.features_present;
    seq.feature_lists_present = below(6) != 0;
    if (seq.feature_lists_present)
      for (std::size_t n = below(4); n > 0; --n) {
        feature_list& list = seq.feature_lists[key()];
        for (std::size_t i = below(6); i > 0; --i) list.features.push_back(value());
      }
    return seq;
  }
};

// ----- tablio values <-> libprotobuf messages
void to_peer(const feature& f, crosscheck::Feature& out) {
  if (auto* b = std::get_if<std::vector<std::string>>(&f)) {
    auto* list = out.mutable_bytes_list();
    for (const auto& v : *b) list->add_value(v);
  } else if (auto* fl = std::get_if<std::vector<float>>(&f)) {
    auto* list = out.mutable_float_list();
    for (float v : *fl) list->add_value(v);
  } else if (auto* in = std::get_if<std::vector<std::int64_t>>(&f)) {
    auto* list = out.mutable_int64_list();
    for (auto v : *in) list->add_value(v);
  }
}
void to_peer(const example& ex, crosscheck::Features& out) {
  for (const auto& [key, value] : ex.features) to_peer(value, (*out.mutable_feature())[key]);
}
crosscheck::Example to_peer(const example& ex) {
  crosscheck::Example m;
  if (ex.features_present || !ex.features.empty()) to_peer(ex, *m.mutable_features());
  return m;
}
crosscheck::SequenceExample to_peer(const sequence_example& seq) {
  crosscheck::SequenceExample m;
  if (seq.context_present || !seq.context.features.empty()) to_peer(seq.context, *m.mutable_context());
  if (seq.feature_lists_present || !seq.feature_lists.empty()) {
    auto& lists = *m.mutable_feature_lists()->mutable_feature_list();
    for (const auto& [key, list] : seq.feature_lists) {
      auto& peer_list = lists[key];
      for (const auto& f : list.features) to_peer(f, *peer_list.add_feature());
    }
  }
  return m;
}

feature from_peer(const crosscheck::Feature& f) {
  switch (f.kind_case()) {
    case crosscheck::Feature::kBytesList:
      return std::vector<std::string>(f.bytes_list().value().begin(), f.bytes_list().value().end());
    case crosscheck::Feature::kFloatList:
      return std::vector<float>(f.float_list().value().begin(), f.float_list().value().end());
    case crosscheck::Feature::kInt64List:
      return std::vector<std::int64_t>(f.int64_list().value().begin(), f.int64_list().value().end());
    default:
      return std::monostate{};
  }
}
std::map<std::string, feature> from_peer(const crosscheck::Features& f) {
  std::map<std::string, feature> out;
  for (const auto& [key, value] : f.feature()) out[key] = from_peer(value);
  return out;
}

// Features compared bit for bit (NaN payloads included).
bool same_bits(const feature& a, const feature& b) {
  auto* fa = std::get_if<std::vector<float>>(&a);
  auto* fb = std::get_if<std::vector<float>>(&b);
  if (!fa || !fb) return a == b;
  if (fa->size() != fb->size()) return false;
  for (std::size_t i = 0; i < fa->size(); ++i)
    if (std::bit_cast<std::uint32_t>((*fa)[i]) != std::bit_cast<std::uint32_t>((*fb)[i])) return false;
  return true;
}
bool same_bits(const std::map<std::string, feature>& a, const std::map<std::string, feature>& b) {
  if (a.size() != b.size()) return false;
  for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j)
    if (i->first != j->first || !same_bits(i->second, j->second)) return false;
  return true;
}

}  // namespace

TEST_CASE("random Examples: libprotobuf -> tablio -> libprotobuf", "[peer][example]") {
  random_source random(1);
  example_view view;
  for (int i = 0; i < 4000; ++i) {
    crosscheck::Example peer = to_peer(random.features());
    std::string sorted = deterministic_bytes(peer);
    std::string unsorted = peer.SerializeAsString();  // hash-map order
    example ex = decode_example(unsorted);
    REQUIRE(same_bits(ex.features, from_peer(peer.features())));
    REQUIRE(encode_example(ex) == sorted);
    view.parse(unsorted);
    REQUIRE(same_bits(view.to_example().features, ex.features));
  }
}

TEST_CASE("random Examples: tablio -> libprotobuf", "[peer][example]") {
  random_source random(2);
  for (int i = 0; i < 4000; ++i) {
    example ex = random.features();
    std::string bytes = encode_example(ex);
    crosscheck::Example peer;
    REQUIRE(peer.ParseFromString(bytes));
    REQUIRE(same_bits(from_peer(peer.features()), ex.features));
    REQUIRE(deterministic_bytes(peer) == bytes);
  }
}

TEST_CASE("random SequenceExamples both ways", "[peer][sequence]") {
  random_source random(3);
  for (int i = 0; i < 3000; ++i) {
    sequence_example seq = random.sequence();
    std::string bytes = encode_sequence_example(seq);
    crosscheck::SequenceExample peer;
    REQUIRE(peer.ParseFromString(bytes));
    REQUIRE(deterministic_bytes(peer) == bytes);
    REQUIRE(deterministic_bytes(to_peer(seq)) == bytes);
    REQUIRE(same_bits(from_peer(peer.context()), seq.context.features));
    // And back: libprotobuf's unsorted bytes decode to the same message.
    sequence_example back = decode_sequence_example(peer.SerializeAsString());
    REQUIRE(encode_sequence_example(back) == bytes);
    REQUIRE(back.feature_lists.size() == seq.feature_lists.size());
    for (const auto& [key, list] : seq.feature_lists) {
      const auto& got = back.feature_lists.at(key).features;
      REQUIRE(got.size() == list.features.size());
      for (std::size_t f = 0; f < got.size(); ++f) REQUIRE(same_bits(got[f], list.features[f]));
    }
  }
}

// What `tablio copy` writes into TFRecord for values that are not Examples: libprotobuf (and so
// TensorFlow's parse_single_example) sees the key, shape and data features with their types.
TEST_CASE("values stored as Examples of key, shape and data, parsed by libprotobuf", "[peer][example_form]") {
  auto parse = [](const std::string& record) {
    crosscheck::Example peer;
    REQUIRE(peer.ParseFromString(record));
    return peer.features().feature();
  };
  std::string record;
  example_record_holder<holder<matrix<float>>>::encode_record(record, matrix<float>(2, 3, {1, 2, 3, 4, 5, 6}),
                                                              "key", "utt1");
  auto features = parse(record);
  CHECK(features.at("key").bytes_list().value(0) == "utt1");
  CHECK(std::vector<std::int64_t>(features.at("shape").int64_list().value().begin(),
                                  features.at("shape").int64_list().value().end()) ==
        std::vector<std::int64_t>{2, 3});
  CHECK(std::vector<float>(features.at("data").float_list().value().begin(),
                           features.at("data").float_list().value().end()) ==
        std::vector<float>{1, 2, 3, 4, 5, 6});

  record.clear();
  example_record_holder<basic_vector_holder<std::int32_t>>::encode_record(record, {7, -8, 9}, "key", "utt2");
  features = parse(record);
  CHECK(features.at("shape").int64_list().value(0) == 3);
  CHECK(std::vector<std::int64_t>(features.at("data").int64_list().value().begin(),
                                  features.at("data").int64_list().value().end()) ==
        std::vector<std::int64_t>{7, -8, 9});

  record.clear();
  example_record_holder<token_holder>::encode_record(record, "hello", "key", "utt3");
  features = parse(record);
  CHECK(features.at("data").bytes_list().value(0) == "hello");
  CHECK(features.at("key").bytes_list().value(0) == "utt3");
}
