// tablio::protobuf on hand-made messages: protobuf's reading rules (unknown fields of every wire
// type skipped, absent fields at their defaults, the last of a singular field, lists packed or not,
// nested messages merged) and the errors of bad input, each naming the field and the offset.
// Byte-for-byte agreement with libprotobuf is tests/peer/test_codec_peer.cpp's.
#include "test_support.hpp"

#include <tablio/codec/protobuf_schema.hpp>
#include <tablio/holder/bytes.hpp>

using namespace tablio;

namespace {

struct point {
  static constexpr std::array<std::string_view, 2> tablio_field_names{"x", "y"};
  std::int32_t x = 0;
  std::int32_t y = 0;
  bool operator==(const point&) const = default;
};
struct record {
  std::string id;               // 1
  std::int32_t n = 0;           // 2
  std::vector<std::int32_t> v;  // 3
  point p;                      // 4
  std::int64_t extra = 42;      // 5
  std::int8_t small = 0;        // 6
  std::array<float, 2> pair{};  // 7
};
struct nest {
  std::int32_t n = 0;  // 1
  std::int32_t m = 0;  // 2
  std::int32_t o = 0;  // 3
  record inner;        // 4
};
struct node {
  std::vector<node> kids;
};

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s.push_back(static_cast<char>(c));
  return s;
}
record read(const std::string& b) { return decode<protobuf, record>(std::string_view(b)); }

}  // namespace

TEST_CASE("protobuf's reading rules", "[codec][protobuf]") {
  SECTION("absent fields keep their defaults, a zero of a non-zero default is written") {
    record r = read("");
    CHECK(r.extra == 42);
    CHECK(r.n == 0);
    r.extra = 0;
    const std::string pair = bytes({0x3a, 8, 0, 0, 0, 0, 0, 0, 0, 0});  // a std::array: always its values
    CHECK(std::string(encode<protobuf>(r).view()) == bytes({0x28, 0}) + pair);
    CHECK(read(bytes({0x28, 0})).extra == 0);
    CHECK(std::string(encode<protobuf>(record{}).view()) == bytes({0x28, 42}) + pair);
  }
  SECTION("unknown fields of every wire type are skipped") {
    std::string b = bytes({0x10, 7,                               // n = 7
                           0x48, 0x96, 0x01,                      // 9: varint
                           0x51, 1,    2,    3,   4, 5, 6, 7, 8,  // 10: fixed64
                           0x5a, 2,    'h',  'i',                 // 11: bytes
                           0x65, 1,    2,    3,   4,              // 12: fixed32
                           0x0a, 1,    'a'});
    record r = read(b);
    CHECK(r.n == 7);
    CHECK(r.id == "a");
  }
  SECTION("the last value of a singular field wins; nested messages merge; repeated ones add") {
    std::string b = bytes({0x10, 1, 0x10, 2, 0x22, 2, 0x08, 5, 0x22, 2, 0x10, 6, 0x18, 1, 0x1a, 2, 2, 3});
    record r = read(b);
    CHECK(r.n == 2);
    CHECK(r.p == point{5, 6});
    CHECK(r.v == std::vector<std::int32_t>{1, 2, 3});  // unpacked, then packed
  }
  SECTION("a message that comes twice is merged: its vectors appended to, its fields kept") {
    // 4 {3: [1, 2] packed} 2: 7, 4 {2: 9}, 4 {3: 3 unpacked}
    const std::string b = bytes({0x22, 4, 0x1a, 2, 1, 2, 0x10, 7, 0x22, 2, 0x10, 9, 0x22, 2, 0x18, 3});
    auto n = decode<protobuf, nest>(std::string_view(b));
    CHECK(n.m == 7);
    CHECK(n.inner.v == std::vector<std::int32_t>{1, 2, 3});
    CHECK(n.inner.n == 9);
  }
  SECTION("a value read again holds the second message alone") {
    record r;
    protobuf::parse(encode<protobuf>(record{"a", 1, {1, 2, 3}, {4, 5}}).view(), r, "first");
    protobuf::parse(bytes({0x1a, 1, 9}), r, "second");
    CHECK(r.v == std::vector<std::int32_t>{9});
    CHECK(r.id.empty());
    CHECK(r.p == point{});
    protobuf::parse(bytes({0x18, 8}), r, "third");
    CHECK(r.v == std::vector<std::int32_t>{8});
    protobuf::parse(bytes({}), r, "fourth");
    CHECK(r.v.empty());
  }
  SECTION("a std::array holds its count of values") {
    CHECK(read(bytes({0x3a, 8, 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40})).pair == std::array<float, 2>{1, 2});
    CHECK_THROWS_MATCHES(read(bytes({0x3a, 4, 0, 0, 0x80, 0x3f})), format_error,
                         test::says("expected field 7: 2 values (a std::array), found 1"));
    CHECK_THROWS_MATCHES(read(bytes({0x3d, 0, 0, 0, 0, 0x3d, 0, 0, 0, 0, 0x3d, 0, 0, 0, 0})), format_error,
                         test::says("at byte 10: expected field 7: 2 values (a std::array), found more"));
  }
  SECTION("bare numbers") {
    CHECK(std::string(encode<protobuf>(std::int32_t{-1}).view()).size() == 10);
    CHECK(decode<protobuf, std::int32_t>(encode<protobuf>(std::int32_t{-1}).view()) == -1);
  }
}

TEST_CASE("bad protobuf messages are errors naming the field and the offset",
          "[codec][protobuf][untrusted]") {
  auto fails = [](const std::string& b, const std::string& says) {
    CHECK_THROWS_MATCHES(read(b), format_error, test::says(says));
  };
  fails(bytes({0x0a, 1, 'a', 0x15, 1, 2, 3, 4}),
        "at byte 3: expected field 2 (int32) in its wire type, found wire type 5 (fixed32)");
  fails(bytes({0x25, 1, 2, 3, 4}),
        "at byte 0: expected field 4 (message) in its wire type, found wire type 5 "
        "(fixed32)");
  fails(bytes({0x10}), "expected a varint, found end of data");
  fails(bytes({0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}),
        "a varint of at most 64 bits");
  fails(bytes({0x0a, 5, 'a'}), "at byte 2: expected 5 bytes, found only 1");
  fails(bytes({0x4b, 0x4c}),
        "at byte 0: expected field 9 (not the struct's) in a wire type to skip, found wire type 3 (group)");
  fails(
      bytes({0x10, 1, 0x7f}),
      "at byte 2: expected field 15 (not the struct's) in a wire type to skip, found wire type 7 (unknown)");
  fails(bytes({0x0b, 0x0c}), "expected field 1 (bytes) in its wire type, found wire type 3 (group)");
  fails(bytes({0x00, 1}), "expected a field number from 1 to 2^29-1, found 0");
  fails(bytes({0x30, 0x80, 0x01}), "at byte 1: expected field 6: a number its C++ type (int32) holds");
  fails(bytes({0x3a, 3, 0, 0, 0}), "expected packed field 7 of whole 4-byte values, found 3 bytes");
  // Packed values (or any bytes) where the field is a singular number: "x" is not the id 120.
  fails(bytes({0x12, 1, 'x'}),
        "at byte 0: expected field 2 (int32) in its wire type, found wire type 2 (length-delimited)");
  std::string deep;  // 101 nodes, each inside the one before
  for (int i = 0; i < 101; ++i) {
    std::string tag = "\x0a";
    protobuf_wire::put_varint(tag, deep.size());
    deep = tag + deep;
  }
  auto decode_node = [](std::string_view b) { return decode<protobuf, node>(b); };
  CHECK_THROWS_MATCHES(decode_node(deep), format_error, test::says("messages nested at most 100 deep"));
  node n = decode_node(bytes({0x0a, 2, 0x0a, 0}));
  REQUIRE(n.kids.size() == 1);
  CHECK(n.kids[0].kids.size() == 1);
}

TEST_CASE("protobuf records in every framing, and length-prefixed objects in archives",
          "[codec][protobuf][table]") {
  using H = holder<record, protobuf>;
  test::temp_dir dir;
  record a{"utt1", 3, {1, 2}, {4, 5}, 0, -1, {0.5f, 1.5f}}, b{"utt2", -7, {}, {}, 7, 2, {}};
  for (const std::string& spec :
       {"ark:" + (dir / "r.ark"), "tfrecord:" + (dir / "r.tfrecord"), "tar:" + (dir / "r.tar"),
        "ark,scp:" + (dir / "s.ark") + "," + (dir / "s.scp")}) {
    {
      table_writer<H> w(spec);
      w.write("00000000", a);  // keys a TFRecord file keeps: its records' numbers
      w.write("00000001", b);
    }
    std::string rspec = spec.starts_with("ark,scp") ? "scp:" + (dir / "s.scp") : spec;
    sequential_table_reader<H> r(rspec);
    REQUIRE(r.key() == "00000000");
    CHECK(std::string(encode<protobuf>(r.value()).view()) == std::string(encode<protobuf>(a).view()));
    r.next();
    CHECK(r.value().extra == 7);
    CHECK(r.value().id == "utt2");
  }
  // A record is the message alone, as libprotobuf and Python's protobuf read it.
  std::string record_bytes;
  H::encode_record(record_bytes, a);
  CHECK(record_bytes == std::string(encode<protobuf>(a).view()));
  // In an archive, the message as bytes_holder's bytes: "\0B", Kaldi's int32 size, the message.
  const std::string ark = test::read_file(dir / "r.ark");
  CHECK(ark.substr(0, 12) == std::string("00000000 \0B\4", 12));
  CHECK(static_cast<std::size_t>(ark[12]) == record_bytes.size());
  CHECK(ark.substr(16, record_bytes.size()) == record_bytes);
  sequential_table_reader<bytes_holder> as_bytes("ark:" + (dir / "r.ark"));
  CHECK(as_bytes.value() == record_bytes);
  // In a text archive too: field numbers kept, readable as bytes.
  {
    table_writer<H> w("ark,t:" + (dir / "t.ark"));
    w.write("a", a);
    w.write("b", b);
  }
  sequential_table_reader<H> text("ark:" + (dir / "t.ark"));
  CHECK(text.value().n == 3);
  text.next();
  CHECK(text.value().n == -7);
  CHECK(sequential_table_reader<bytes_holder>("ark:" + (dir / "t.ark")).value() == record_bytes);
}

TEST_CASE("an archive's bad message is an error at its offset in the file", "[codec][protobuf][table]") {
  using H = holder<record, protobuf>;
  test::temp_dir dir;
  {
    table_writer<bytes_holder> w("ark:" + (dir / "bad.ark"));
    record good;
    good.id = "x";
    w.write("good", std::string(encode<protobuf>(good).view()));
    w.write("bad", bytes({0x0a, 0x05, 'a'}));  // a length past the end
  }
  // "good \0B\4", 4 bytes of size, 15 of message; "bad \0B\4", 4 of size: the message at 38,
  // its length (5) past the end at its byte 2
  auto read_both = [&] {
    sequential_table_reader<H> r("ark:" + (dir / "bad.ark"));
    r.next();
    return r.value();
  };
  CHECK_THROWS_MATCHES(read_both(), format_error,
                       test::says("at byte 40 (key 'bad'): expected 5 bytes, found only 1"));
}

namespace {
struct take {
  static constexpr std::array<std::string_view, 2> tablio_field_names{"start", "end"};
  float start = 0, end = 0;
};
struct session {
  static constexpr std::string_view tablio_message_name = "Session";
  static constexpr std::array<std::string_view, 7> tablio_field_names{
      "id", "speaker", "feats", "takes", "counts", "transcript", "retries"};
  static constexpr std::array<std::uint32_t, 7> tablio_field_numbers{1, 2, 3, 4, 5, 7, 8};
  std::string id;
  pb::sint<std::int32_t> speaker;
  std::vector<float> feats;
  std::vector<take> takes;
  std::map<std::string, take> counts;
  std::optional<std::string> transcript;
  std::int32_t retries = 3;
};
}  // namespace

TEST_CASE("the schema of what tablio::protobuf writes", "[codec][protobuf]") {
  CHECK(proto_schema<session>("speech") ==
        "syntax = \"proto3\";\n\npackage speech;\n\n"
        "message Session {\n"
        "  bytes id = 1;\n"
        "  sint32 speaker = 2;\n"
        "  repeated float feats = 3;\n"
        "  repeated take takes = 4;\n"
        "  map<string, take> counts = 5;\n"
        "  optional bytes transcript = 7;\n"
        "  optional int32 retries = 8;\n"
        "}\n\n"
        "message take {\n"
        "  float start = 1;\n"
        "  float end = 2;\n"
        "}\n");
}

TEST_CASE("a schema's message names read from each compiler's spelling of a signature", "[codec][protobuf]") {
  using tablio::detail::proto::type_in_signature;
  CHECK(type_in_signature("std::string tablio::detail::type_name() [with T = speech::take; std::string = "
                          "std::__cxx11::basic_string<char>]") == "speech::take");  // GCC
  CHECK(type_in_signature("std::string tablio::detail::type_name() [T = speech::take]") == "speech::take");
  CHECK(type_in_signature(
            "class std::basic_string<char,struct std::char_traits<char>,class std::allocator<char> > "
            "__cdecl tablio::detail::type_name<struct speech::take>(void)") == "speech::take");  // MSVC
  CHECK(type_in_signature("class std::basic_string<char> __cdecl tablio::detail::type_name<class "
                          "speech::pair<int,float> >(void)") == "speech::pair<int,float>");
}

namespace {
namespace v1 {
struct clip {
  std::string id;      // 1
  std::int32_t n = 0;  // 2
  float score = 0;     // 3: removed in v2, its number reserved
  std::int32_t t = 0;  // 4: repeated in v2
};
}  // namespace v1
namespace v2 {
struct clip {
  static constexpr std::array<std::uint32_t, 4> tablio_field_numbers{1, 5, 2, 4};
  std::string id;
  std::string added = "none";  // new, declared in the middle, numbered after v1's
  std::int64_t n = 0;          // widened from int32
  std::vector<std::int32_t> t;
};
}  // namespace v2
}  // namespace

TEST_CASE("two releases of a struct read each other's records as protobuf's rules say", "[codec][protobuf]") {
  auto old_bytes = encode<protobuf>(v1::clip{"c1", -7, 0.5f, 9});
  auto now = decode<protobuf, v2::clip>(old_bytes.view());
  CHECK(now.id == "c1");
  CHECK(now.added == "none");  // absent: its default
  CHECK(now.n == -7);          // an int32 read as an int64
  CHECK(now.t == std::vector<std::int32_t>{9});
  auto new_bytes = encode<protobuf>(v2::clip{"c2", "x", 5'000'000'000, {}});
  auto then = decode<protobuf, v1::clip>(new_bytes.view());
  CHECK(then.id == "c2");
  CHECK(then.n ==
        static_cast<std::int32_t>(5'000'000'000 % 4'294'967'296));  // int32's truncation, as protobuf's
  CHECK(then.score == 0);
  // What became repeated is packed in the newer records: no singular number of the older
  // release (libprotobuf keeps it as an unknown field, and the number as 0).
  auto repeated = encode<protobuf>(v2::clip{"c3", "x", 1, {1, 2, 3}});
  CHECK_THROWS_MATCHES((decode<protobuf, v1::clip>(repeated.view())), format_error,
                       test::says("expected field 4 (int32) in its wire type, found wire type 2"));
  // Written back, what v1 did not know is gone: v2 reads its default.
  CHECK(decode<protobuf, v2::clip>(encode<protobuf>(then).view()).added == "none");
}

namespace {
struct defaults_kept {
  std::string name = "anon";
  point where{1, 2};
  std::vector<std::int32_t> ids{7};
};
}  // namespace

TEST_CASE("fields with defaults other than empty round-trip their empty values", "[codec][protobuf]") {
  defaults_kept blank{"", {0, 0}, {}};
  auto b = encode<protobuf>(blank);
  CHECK(std::string(b.view()) == bytes({0x0a, 0, 0x12, 0}));  // written, though empty
  defaults_kept back = decode<protobuf, defaults_kept>(b.view());
  CHECK(back.name.empty());
  CHECK(back.where == point{0, 0});
  CHECK(back.ids.empty());  // a repeated field absent is empty: protobuf's have no default
  defaults_kept absent = decode<protobuf, defaults_kept>(std::string_view());
  CHECK(absent.name == "anon");
  CHECK(absent.where == point{1, 2});
  CHECK(absent.ids.empty());
}

namespace {
struct labelled {
  static constexpr std::array<std::string_view, 3> tablio_field_names{"id", "label", "done"};
  std::string id;                                                        // 1
  std::variant<std::monostate, std::int32_t, std::string, point> label;  // 2, 3, 4: a oneof
  bool done = false;                                                     // 5
};
struct renumbered_choice {
  static constexpr std::array<std::uint32_t, 2> tablio_field_numbers{10, 1};
  std::variant<float, std::string> value;  // 10, 11: no monostate, so one is always set
  std::int32_t n = 0;                      // 1
};
}  // namespace

TEST_CASE("a std::variant is a oneof: the alternative set is written, the last read wins",
          "[codec][protobuf]") {
  CHECK(std::string(encode<protobuf>(labelled{}).view()).empty());  // none set: nothing written
  labelled l{"a", std::int32_t{0}, true};
  CHECK(std::string(encode<protobuf>(l).view()) ==
        bytes({0x0a, 1, 'a', 0x10, 0, 0x28, 1}));  // a 0 set is written
  CHECK(decode<protobuf, labelled>(encode<protobuf>(l).view()).label.index() == 1);
  l.label = std::string("x");
  CHECK(std::string(encode<protobuf>(l).view()) == bytes({0x0a, 1, 'a', 0x1a, 1, 'x', 0x28, 1}));
  l.label = point{0, 0};
  CHECK(std::string(encode<protobuf>(l).view()) == bytes({0x0a, 1, 'a', 0x22, 0, 0x28, 1}));

  SECTION("reading") {
    CHECK(decode<protobuf, labelled>(std::string_view()).label.index() == 0);
    auto last = decode<protobuf, labelled>(bytes({0x10, 5, 0x1a, 1, 'x'}));
    CHECK(std::get<std::string>(last.label) == "x");
    auto merged = decode<protobuf, labelled>(bytes({0x22, 2, 0x08, 5, 0x22, 2, 0x10, 6}));
    CHECK(std::get<point>(merged.label) == point{5, 6});  // the same message twice: merged
    auto replaced = decode<protobuf, labelled>(bytes({0x22, 2, 0x08, 5, 0x10, 3, 0x22, 2, 0x10, 6}));
    CHECK(std::get<point>(replaced.label) == point{0, 6});  // another alternative between: anew
    CHECK_THROWS_MATCHES((decode<protobuf, labelled>(bytes({0x19, 0, 0, 0, 0, 0, 0, 0, 0}))), format_error,
                         test::says("at byte 0: expected field 3 (bytes) in its wire type, found wire type 1 "
                                    "(fixed64)"));
  }
  SECTION("schema") {
    CHECK(proto_schema<labelled>() ==
          "syntax = \"proto3\";\n\n"
          "message labelled {\n"
          "  bytes id = 1;\n"
          "  oneof label {\n"
          "    int32 label_int32 = 2;\n"
          "    bytes label_bytes = 3;\n"
          "    point label_point = 4;\n"
          "  }\n"
          "  bool done = 5;\n"
          "}\n\n"
          "message point {\n"
          "  int32 x = 1;\n"
          "  int32 y = 2;\n"
          "}\n");
  }
  SECTION("its numbers follow the type's own") {
    renumbered_choice r{std::string("s"), 2};
    CHECK(std::string(encode<protobuf>(r).view()) == bytes({0x08, 2, 0x5a, 1, 's'}));
    CHECK(std::get<float>(decode<protobuf, renumbered_choice>(bytes({0x55, 0, 0, 0x80, 0x3f})).value) ==
          1.0f);
    CHECK(std::get<float>(decode<protobuf, renumbered_choice>(std::string_view()).value) == 0.0f);
  }
}

namespace {
struct point_v1 {
  static constexpr std::array<std::uint32_t, 2> tablio_field_numbers{1, 0};
  static constexpr std::array<std::string_view, 2> tablio_field_names{"x", "rest"};
  std::int32_t x = 0;
  pb::unknown_fields rest;  // what a later release added
};
struct point_v2 {
  std::int32_t x = 0;
  std::int32_t y = 0;
  std::string name;
};
}  // namespace

TEST_CASE("pb::unknown_fields keeps what a struct does not know and writes it back", "[codec][protobuf]") {
  const auto v2_bytes = encode<protobuf>(point_v2{1, -2, "p"});
  point_v1 old = decode<protobuf, point_v1>(v2_bytes.view());
  CHECK(old.x == 1);
  CHECK(old.rest.bytes.size() == v2_bytes.size() - 2);
  old.x = 7;
  point_v2 back = decode<protobuf, point_v2>(encode<protobuf>(old).view());
  CHECK(back.x == 7);
  CHECK(back.y == -2);
  CHECK(back.name == "p");
  // Read again into the same value, what it kept is replaced, not appended.
  protobuf::parse(encode<protobuf>(point_v2{1, 0, "q"}).view(), old, "again");
  CHECK(old.rest.bytes == bytes({0x1a, 1, 'q'}));
  CHECK(proto_schema<point_v1>() == "syntax = \"proto3\";\n\nmessage point_v1 {\n  int32 x = 1;\n}\n");
}

TEST_CASE("varints of every length read back, with the end near or far", "[codec][protobuf]") {
  const std::string name = "varints";
  for (int bits = 0; bits <= 64; ++bits) {
    const std::uint64_t v = bits == 0 ? 0 : (bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1);
    char b[10 + 10]{};
    const std::size_t n = static_cast<std::size_t>(protobuf_wire::put_varint(b, v) - b);
    for (std::size_t padding : {std::size_t{0}, std::size_t{10}}) {  // checked byte by byte, or not
      protobuf_wire::cursor in{b, b + n + padding, b, &name};
      CHECK(in.get_varint() == v);
      CHECK(in.p == b + n);
    }
  }
  const std::string eleven(10, '\xff');  // an 11th byte due
  protobuf_wire::cursor over{eleven.data(), eleven.data() + eleven.size(), eleven.data(), &name};
  CHECK_THROWS_MATCHES(over.get_varint(), format_error, test::says("expected a varint of at most 64 bits"));
}

namespace {
struct degrees_message {
  double value = 0;
};
// A class with its own encoding (as every codec takes one): its message is degrees_message's.
class celsius {
 public:
  celsius() = default;
  explicit celsius(double d) : degrees_(d) {}
  double degrees() const { return degrees_; }
  template <class Codec>
  void tablio_write(writer& w, Codec) const {
    encode_to<Codec>(w, degrees_message{degrees_});
  }
  template <class Codec>
  void tablio_read(reader& r, Codec) {
    degrees_message m;
    decode_from<Codec>(r, m);
    degrees_ = m.value;
  }

 private:
  double degrees_ = 0;
};
struct weather {
  celsius now;
  std::vector<celsius> history;
  std::optional<celsius> forecast;
};
struct weather_plain {
  degrees_message now;
  std::vector<degrees_message> history;
  std::optional<degrees_message> forecast;
};
}  // namespace

TEST_CASE("a type with its own encoding is a message field as its encoding says", "[codec][protobuf]") {
  const weather w{celsius(21.5), {celsius(-3), celsius(0)}, celsius(30)};
  const weather_plain plain{{21.5}, {{-3}, {0}}, degrees_message{30}};
  const auto b = encode<protobuf>(w);
  CHECK(b.view() == encode<protobuf>(plain).view());
  const weather back = decode<protobuf, weather>(b.view());
  CHECK(back.now.degrees() == 21.5);
  REQUIRE(back.history.size() == 2);
  CHECK(back.history[0].degrees() == -3);
  CHECK(back.history[1].degrees() == 0);
  REQUIRE(back.forecast);
  CHECK(back.forecast->degrees() == 30);
}
