// tablio::protobuf: any bytes decode to a struct of every field kind or are a format_error;
// what decodes encodes to bytes that decode to the same struct, and re-encode to themselves.
#include <tablio/codec/protobuf.hpp>

#include "fuzz_support.hpp"

#include <array>
#include <map>
#include <optional>
#include <variant>

namespace {
using namespace tablio;

struct part {
  std::int32_t a = 0;
  std::string s;
  std::vector<pb::sint<std::int64_t>> zs;
  std::vector<part> kids;  // recursion, for the depth bound
};
struct every_kind {
  bool flag = false;
  std::int32_t i32 = 0;
  std::int64_t i64 = 7;
  std::uint32_t u32 = 0;
  std::uint64_t u64 = 0;
  float f = 0;
  double d = 0;
  pb::sint<std::int32_t> s32;
  pb::fixed<std::uint64_t> x64;
  pb::fixed<std::int32_t> sx32;
  std::int8_t small = 0;
  std::string text;
  std::vector<std::uint8_t> blob;
  std::vector<float> feats;
  std::vector<std::int32_t> labels;
  std::vector<std::string> words;
  std::vector<part> parts;
  part one;
  std::optional<std::int32_t> maybe;
  std::map<std::string, std::int64_t> counts;
  std::map<std::int32_t, part> by_id;
  std::array<std::uint32_t, 3> trio{};
  std::variant<std::monostate, std::int32_t, std::string, part> choice;
  pb::unknown_fields rest;  // kept and written back
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes = fuzz::as_chars(data, size);
  every_kind v;
  if (fuzz::accepts([&] { v = decode<protobuf, every_kind>(bytes); })) {
    byte_buffer again = encode<protobuf>(v);
    every_kind back = decode<protobuf, every_kind>(again.view());
    fuzz::require(encode<protobuf>(back).view() == again.view());
  }
  return 0;
}
