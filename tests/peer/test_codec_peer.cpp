// tablio::protobuf against libprotobuf on random messages of every field kind, both ways: what
// libprotobuf writes deterministically, tablio reads to the same values and writes back to the
// same bytes; what tablio writes, libprotobuf parses to the same values and serializes
// deterministically to the same bytes.
#include <tablio/codec/protobuf_schema.hpp>

#include "../test_support.hpp"

#include <google/protobuf/descriptor.pb.h>
#include <catch2/catch.hpp>

#include "peer_support.hpp"

#include <bit>
#include <random>

#include "codec_kinds.pb.h"

using namespace tablio;

namespace {

enum class color : std::int32_t { red = 0, green = 1, blue = -2 };

struct inner {
  static constexpr std::string_view tablio_message_name = "Inner";
  static constexpr std::array<std::string_view, 3> tablio_field_names{"a", "s", "zs"};
  std::int32_t a = 0;
  std::string s;
  std::vector<pb::sint<std::int64_t>> zs;
  bool operator==(const inner&) const = default;
};

struct kinds {
  static constexpr std::string_view tablio_message_name = "Kinds";
  static constexpr std::array<std::string_view, 30> tablio_field_names{
      "flag",  "i32",    "i64",   "u32",   "u64",        "f",      "d",     "s32",    "s64",    "x32",
      "x64",   "sx32",   "sx64",  "color", "text",       "blob",   "feats", "labels", "ds",     "us",
      "words", "inners", "inner", "maybe", "maybe_text", "counts", "by_id", "trio",   "answer", "choice"};
  bool flag = false;
  std::int32_t i32 = 0;
  std::int64_t i64 = 0;
  std::uint32_t u32 = 0;
  std::uint64_t u64 = 0;
  float f = 0;
  double d = 0;
  pb::sint<std::int32_t> s32;
  pb::sint<std::int64_t> s64;
  pb::fixed<std::uint32_t> x32;
  pb::fixed<std::uint64_t> x64;
  pb::fixed<std::int32_t> sx32;
  pb::fixed<std::int64_t> sx64;
  color c = color::red;
  std::string text;
  std::vector<std::uint8_t> blob;
  std::vector<float> feats;
  std::vector<std::int32_t> labels;
  std::vector<double> ds;
  std::vector<std::uint64_t> us;
  std::vector<std::string> words;
  std::vector<inner> inners;
  inner in;
  std::optional<std::int32_t> maybe;
  std::optional<std::string> maybe_text;
  std::map<std::string, std::int64_t> counts;
  std::map<std::int32_t, inner> by_id;
  std::array<pb::fixed<std::uint32_t>, 3> trio{};
  std::int64_t answer = 42;  // not 0: written always, so that a 0 comes back as 0
  std::variant<std::monostate, std::int32_t, std::string, inner> choice;  // a oneof: 30, 31, 32
};

struct few {
  static constexpr std::array<std::uint32_t, 3> tablio_field_numbers{1, 2, 0};
  bool flag = false;
  std::int32_t i32 = 0;
  pb::unknown_fields rest;
};

struct renumbered {
  static constexpr std::array<std::uint32_t, 3> tablio_field_numbers{1, 5, 3};
  std::string id;
  std::int32_t kept = 0;
  std::int64_t added = 0;
};

using peer::deterministic_bytes;
template <class T>
std::string tablio_bytes(const T& v) {
  return std::string(encode<protobuf>(v).view());
}

struct random_source {
  std::mt19937_64 rng;
  explicit random_source(std::uint64_t seed) : rng(seed) {}
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(rng() % n); }
  bool maybe() { return below(3) != 0; }
  template <class T>
  T integer() {
    switch (below(4)) {
      case 0:
        return static_cast<T>(rng());
      case 1:
        return T{};
      case 2:
        return static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(below(1000)));
      default:
        return static_cast<T>(below(300));
    }
  }
  template <class T>
  T real() {
    using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    switch (below(4)) {
      case 0:
        return std::bit_cast<T>(static_cast<U>(rng()));  // any bits: NaNs, -0.0
      case 1:
        return T{};
      default:
        return static_cast<T>(static_cast<std::int32_t>(rng())) / T(1024);
    }
  }
  std::string bytes() {
    std::string b(below(4) == 0 ? below(300) : below(6), '\0');
    for (auto& c : b) c = static_cast<char>(rng());
    return b;
  }
  std::string utf8() {
    static const char* words[] = {"", "a", "label", "x\xc3\xa9", "speaker0"};
    return words[below(5)];
  }
  template <class T, class Make>
  std::vector<T> some(Make make) {
    std::vector<T> v(below(5) == 0 ? below(100) : below(4));
    for (auto& x : v) x = make();
    return v;
  }
  inner in() {
    inner i;
    if (maybe()) i.a = integer<std::int32_t>();
    if (maybe()) i.s = bytes();
    i.zs = some<pb::sint<std::int64_t>>([&] { return integer<std::int64_t>(); });
    return i;
  }
  kinds any() {
    kinds k;
    k.flag = below(2) != 0;
    k.i32 = integer<std::int32_t>();
    k.i64 = integer<std::int64_t>();
    k.u32 = integer<std::uint32_t>();
    k.u64 = integer<std::uint64_t>();
    k.f = real<float>();
    k.d = real<double>();
    k.s32 = integer<std::int32_t>();
    k.s64 = integer<std::int64_t>();
    k.x32 = integer<std::uint32_t>();
    k.x64 = integer<std::uint64_t>();
    k.sx32 = integer<std::int32_t>();
    k.sx64 = integer<std::int64_t>();
    k.c = std::array{color::red, color::green, color::blue}[below(3)];
    k.text = bytes();
    k.blob = some<std::uint8_t>([&] { return static_cast<std::uint8_t>(rng()); });
    k.feats = some<float>([&] { return real<float>(); });
    k.labels = some<std::int32_t>([&] { return integer<std::int32_t>(); });
    k.ds = some<double>([&] { return real<double>(); });
    k.us = some<std::uint64_t>([&] { return integer<std::uint64_t>(); });
    k.words = some<std::string>([&] { return bytes(); });
    k.inners = some<inner>([&] { return in(); });
    if (maybe()) k.in = in();
    if (maybe()) k.maybe = integer<std::int32_t>();
    if (maybe()) k.maybe_text = bytes();
    for (std::size_t n = below(4); n > 0; --n) k.counts[utf8()] = integer<std::int64_t>();
    for (std::size_t n = below(3); n > 0; --n) k.by_id[integer<std::int32_t>()] = in();
    if (maybe())
      for (auto& t : k.trio) t = integer<std::uint32_t>();
    k.answer = below(3) == 0 ? 0 : integer<std::int64_t>();
    switch (below(4)) {
      case 1:
        k.choice = integer<std::int32_t>();  // 0 included: a oneof's member set is written
        break;
      case 2:
        k.choice = bytes();
        break;
      case 3:
        k.choice = in();
        break;
    }
    return k;
  }
};

void to_peer(const inner& i, crosscheck::Inner& m) {
  m.set_a(i.a);
  m.set_s(i.s);
  for (auto z : i.zs) m.add_zs(z.value);
}
crosscheck::Kinds to_peer(const kinds& k) {
  crosscheck::Kinds m;
  m.set_flag(k.flag);
  m.set_i32(k.i32);
  m.set_i64(k.i64);
  m.set_u32(k.u32);
  m.set_u64(k.u64);
  m.set_f(k.f);
  m.set_d(k.d);
  m.set_s32(k.s32.value);
  m.set_s64(k.s64.value);
  m.set_x32(k.x32.value);
  m.set_x64(k.x64.value);
  m.set_sx32(k.sx32.value);
  m.set_sx64(k.sx64.value);
  m.set_color(static_cast<std::int32_t>(k.c));
  m.set_text(k.text);
  m.set_blob(std::string(k.blob.begin(), k.blob.end()));
  for (float v : k.feats) m.add_feats(v);
  for (auto v : k.labels) m.add_labels(v);
  for (double v : k.ds) m.add_ds(v);
  for (auto v : k.us) m.add_us(v);
  for (const auto& w : k.words) m.add_words(w);
  for (const auto& i : k.inners) to_peer(i, *m.add_inners());
  if (k.in != inner{}) to_peer(k.in, *m.mutable_inner());  // an empty message is not written
  if (k.maybe) m.set_maybe(*k.maybe);
  if (k.maybe_text) m.set_maybe_text(*k.maybe_text);
  for (const auto& [key, value] : k.counts) (*m.mutable_counts())[key] = value;
  for (const auto& [key, value] : k.by_id) to_peer(value, (*m.mutable_by_id())[key]);
  for (auto t : k.trio) m.add_trio(t.value);  // a std::array always has its values
  m.set_answer(k.answer);
  if (auto* n = std::get_if<std::int32_t>(&k.choice)) m.set_choice_int32(*n);
  if (auto* b = std::get_if<std::string>(&k.choice)) m.set_choice_bytes(*b);
  if (auto* i = std::get_if<inner>(&k.choice)) to_peer(*i, *m.mutable_choice_inner());
  return m;
}

}  // namespace

TEST_CASE("tablio::protobuf writes what libprotobuf writes, and reads it back", "[protobuf][peer]") {
  random_source random(20261127);
  for (int round = 0; round < 2000; ++round) {
    kinds k = random.any();
    crosscheck::Kinds peer = to_peer(k);
    const std::string ours = tablio_bytes(k), theirs = deterministic_bytes(peer);
    REQUIRE(ours == theirs);
    // libprotobuf reads ours to the same message; we read its bytes to the same struct.
    crosscheck::Kinds parsed;
    REQUIRE(parsed.ParseFromString(ours));
    CHECK(deterministic_bytes(parsed) == theirs);
    kinds back = decode<protobuf, kinds>(std::string_view(theirs));
    CHECK(tablio_bytes(back) == theirs);
    CHECK(back.labels == k.labels);
    CHECK(back.counts == k.counts);
    CHECK(back.by_id == k.by_id);
    CHECK(back.answer == k.answer);
    CHECK(back.maybe == k.maybe);
    CHECK(back.choice == k.choice);
  }
}

TEST_CASE("pb::unknown_fields keeps what libprotobuf keeps of fields a message does not know",
          "[protobuf][peer]") {
  random_source random(11);
  for (int round = 0; round < 300; ++round) {
    const std::string newer = deterministic_bytes(to_peer(random.any()));
    crosscheck::Few peer;
    REQUIRE(peer.ParseFromString(newer));
    few older = decode<protobuf, few>(std::string_view(newer));
    CHECK(older.flag == peer.flag());
    CHECK(older.i32 == peer.i32());
    CHECK(tablio_bytes(older) == deterministic_bytes(peer));
    CHECK(tablio_bytes(older) == newer);  // nothing lost: the same message back
  }
}

TEST_CASE("tablio::protobuf reads what libprotobuf writes in any order and unpacked", "[protobuf][peer]") {
  random_source random(7);
  for (int round = 0; round < 300; ++round) {
    kinds k = random.any();
    crosscheck::Kinds peer = to_peer(k);
    std::string plain = peer.SerializeAsString();  // maps in hash order
    CHECK(tablio_bytes(decode<protobuf, kinds>(std::string_view(plain))) == deterministic_bytes(peer));
  }
}

TEST_CASE("the schema tablio emits is the one libprotobuf was built from", "[protobuf][peer]") {
  test::temp_dir dir;
  { std::ofstream(dir / "kinds.proto") << proto_schema<kinds>("crosscheck"); }
  const std::string command = std::string(TABLIO_PROTOC) + " --proto_path=" + dir.path.string() +
                              " --descriptor_set_out=" + (dir / "kinds.desc") + " kinds.proto";
  REQUIRE(std::system(command.c_str()) == 0);
  google::protobuf::FileDescriptorSet set;
  REQUIRE(set.ParseFromString(test::read_file(dir / "kinds.desc")));
  REQUIRE(set.file_size() == 1);
  const google::protobuf::FileDescriptorProto& file = set.file(0);
  for (const google::protobuf::Descriptor* peer :
       {crosscheck::Kinds::descriptor(), crosscheck::Inner::descriptor()}) {
    const google::protobuf::DescriptorProto* ours = nullptr;
    for (const auto& m : file.message_type())
      if (m.name() == peer->name()) ours = &m;
    REQUIRE(ours);
    REQUIRE(ours->field_size() == peer->field_count());
    for (int i = 0; i < peer->field_count(); ++i) {
      google::protobuf::FieldDescriptorProto theirs;
      peer->field(i)->CopyTo(&theirs);
      INFO(theirs.name());
      CHECK(ours->field(i).name() == theirs.name());
      CHECK(ours->field(i).number() == theirs.number());
      CHECK(ours->field(i).type() == theirs.type());
      CHECK(ours->field(i).label() == theirs.label());
      CHECK(ours->field(i).proto3_optional() == theirs.proto3_optional());
      CHECK(ours->field(i).type_name() == theirs.type_name());
      REQUIRE(ours->field(i).has_oneof_index() == theirs.has_oneof_index());
      if (theirs.has_oneof_index())
        CHECK(ours->oneof_decl(ours->field(i).oneof_index()).name() ==
              peer->oneof_decl(theirs.oneof_index())->name());
    }
  }
}

TEST_CASE("a struct's own field numbers are the message's", "[protobuf][peer]") {
  renumbered r{"utt-7", 5, -9};
  crosscheck::Renumbered m;
  REQUIRE(m.ParseFromString(tablio_bytes(r)));
  CHECK(m.id() == "utt-7");
  CHECK(m.kept() == 5);
  CHECK(m.added() == -9);
  CHECK(tablio_bytes(r) == deterministic_bytes(m));
}
