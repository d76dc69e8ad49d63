// A user's struct in a positional codec (raw, kaldi_binary) read by another release of it:
// where the bytes can tell (an entry's record has bytes left or too few, an archive's next key
// is not where the struct ended), a format_error naming the file, the offset and the key,
// before the value is handed out; never fields shifted in silence.
#include "test_support.hpp"

using namespace tablio;

namespace {
namespace v1 {
struct clip {
  std::string id;
  std::int32_t n = 0;
};
}  // namespace v1
namespace v2 {
struct clip {
  std::string id;
  std::int32_t n = 0;
  float score = 0;  // added
};
}  // namespace v2

template <class Codec, class Written, class Read>
void read_other_release(const std::string& wspec, const std::string& rspec, const std::string& error) {
  {
    table_writer<holder<Written, Codec, Codec>> w(wspec);
    w.write("00000000", Written{"x", 1});
    w.write("00000001", Written{"y", 2});
  }
  auto first_value = [&] { return sequential_table_reader<holder<Read, Codec, Codec>>(rspec).value(); };
  CHECK_THROWS_MATCHES(first_value(), format_error, test::says(error));
}
}  // namespace

TEST_CASE("a struct's positional records read by another release of it are errors", "[tables][releases]") {
  test::temp_dir dir;
  const std::string d = dir.path.string() + "/";
  SECTION("a record with bytes left, or too few") {
    read_other_release<raw_little, v2::clip, v1::clip>(
        "tfrecord:" + d + "a.tfrecord", "tfrecord:" + d + "a.tfrecord",
        "at byte 27 (key '00000000'): expected the end of the record after the object, found 4 more bytes");
    read_other_release<raw_little, v1::clip, v2::clip>(
        "tar:" + d + "b.tar", "tar:" + d + "b.tar",
        "at byte 527 (key '00000000'): expected 4 bytes, found end of input after 0");
  }
  SECTION("an archive's next key not where the struct ended") {
    read_other_release<raw_little, v2::clip, v1::clip>(
        "ark:" + d + "c.ark", "ark:" + d + "c.ark",
        "at byte 24 (key '00000000'): expected the next entry's key or the end, after the object, found "
        "'\\x00\\x00\\x00\\x0000000001'");
    read_other_release<kaldi_binary, v2::clip, v1::clip>(
        "ark:" + d + "d.ark", "ark:" + d + "d.ark",
        "at byte 22 (key '00000000'): expected the next entry's key or the end, after the object, found "
        "'\\x04\\x00\\x00\\x00\\x0000000001'");
    read_other_release<kaldi_binary, v2::clip, v1::clip>(
        "ark,scp:" + d + "e.ark," + d + "e.scp", "scp:" + d + "e.scp",
        "at byte 22 (key '00000000'): expected the next entry's key or the end, after the object");
  }
  SECTION("Kaldi's binary markers") {
    read_other_release<kaldi_binary, v1::clip, v2::clip>(
        "ark:" + d + "f.ark", "ark:" + d + "f.ark",
        "at byte 22 (key '00000000'): expected a float (marker 4 or 8), found marker 48");
  }
  SECTION("the last entry of an archive: the end follows it") {
    {
      table_writer<holder<v1::clip, raw_little, raw_little>> w("ark:" + d + "g.ark");
      w.write("only", v1::clip{"z", 3});
    }
    sequential_table_reader<holder<v1::clip, raw_little, raw_little>> r("ark:" + d + "g.ark");
    CHECK(r.value().n == 3);
    r.next();
    CHECK(r.done());
  }
}
