// Protocol buffers' wire format, the parts tf.Example and Caffe's Datum need: varints,
// field sizes, and a bounded cursor whose errors name the record and the offset in it.
#pragma once

#include <tablio/core/config.hpp>
#include <tablio/core/error.hpp>

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

namespace protobuf_wire {

// The wire types of a field's tag (its low three bits); groups (3, 4) are refused.
enum wire_type : std::uint32_t { varint = 0, fixed64 = 1, length_delimited = 2, fixed32 = 5 };

// Appends v to out as a varint: 7 bits a byte, low first, 1 to 10 bytes.
inline void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
// The bytes put_varint takes for v: 1 to 10.
inline std::size_t varint_size(std::uint64_t v) noexcept {
  // ceil(significant bits / 7), with 0 taking one byte.
  return static_cast<std::size_t>((9 * (64 - std::countl_zero(v | 1)) + 64) / 64);
}
// Writes v as a varint at p, which has room for varint_size(v) bytes; returns the end.
inline char* put_varint(char* p, std::uint64_t v) noexcept {
  while (v >= 0x80) {
    *p++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}
// The bytes a length-delimited field of a one-byte tag and an n-byte body takes.
inline std::size_t field_size(std::size_t n) noexcept { return 1 + varint_size(n) + n; }

// A bounded view being parsed; errors name the record and the offset in it.
struct cursor {
  const char* p;
  const char* end;
  const char* begin;
  const std::string* name;

  // Throws format_error naming the record and the cursor's offset in it.
  [[noreturn]] TABLIO_COLD void fail(message expected, message found) const {
    throw_format_error(*name, static_cast<std::uint64_t>(p - begin), {}, expected, found);
  }
  // Whether every byte of the view has been parsed.
  bool done() const noexcept { return p == end; }
  // Tags and lengths are nearly always one or two bytes: those stay inline.
  TABLIO_ALWAYS_INLINE std::uint64_t get_varint() {
    if (p != end) [[likely]] {
      auto b0 = static_cast<unsigned char>(p[0]);
      if (b0 < 0x80) {  // also a message's last byte, often a small field at its end
        ++p;
        return b0;
      }
      if (end - p >= 2) {
        auto b1 = static_cast<unsigned char>(p[1]);
        if (b1 < 0x80) {
          p += 2;
          return (b0 & 0x7Fu) | (std::uint64_t{b1} << 7);
        }
      }
    }
    return get_long_varint();
  }
  // get_varint's general case: a varint of any length up to 10 bytes. One cut short, longer, or
  // beyond 64 bits throws format_error.
  std::uint64_t get_long_varint() {
    if (end - p >= 10) [[likely]] {  // all ten bytes there: no check of the end per byte
      const auto* q = reinterpret_cast<const unsigned char*>(p);
      std::uint64_t v = 0;
      for (int i = 0; i < 9; ++i) {
        v |= std::uint64_t{q[i] & 0x7Fu} << (7 * i);
        if (q[i] < 0x80) {
          p += i + 1;
          return v;
        }
      }
      if (q[9] > 1) fail({"a varint of at most 64 bits"}, {"more"});
      p += 10;
      return v | std::uint64_t{q[9]} << 63;
    }
    std::uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (p == end) fail({"a varint"}, {"end of data"});
      auto b = static_cast<unsigned char>(*p++);
      if (shift == 63 && b > 1) fail({"a varint of at most 64 bits"}, {"more"});
      v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return v;
    }
    fail({"a varint of at most 10 bytes"}, {"more"});
  }
  // Inline, for a message's every field; what reports a bad length stays out of line.
  TABLIO_ALWAYS_INLINE std::string_view get_bytes() {
    std::uint64_t n = get_varint();
    if (n > static_cast<std::uint64_t>(end - p)) [[unlikely]]
      fail_length(n);
    std::string_view v(p, static_cast<std::size_t>(n));
    p += n;
    return v;
  }
  // Throws format_error for a length of n bytes that the view does not hold.
  [[noreturn]] TABLIO_COLD void fail_length(std::uint64_t n) const {
    fail({decimal(n), " bytes"}, {"only ", decimal(end - p)});
  }
  // A record none of whose fields is one of the message type's: protobuf would parse it as an
  // empty message, but it is another type's record (an Example read as a Datum), and an
  // empty message from it would be silently wrong data.
  [[noreturn]] TABLIO_COLD void fail_foreign(std::string_view type) const {
    throw_format_error(
        *name, 0, {}, {"a ", type, " (a record with at least one of its fields)"},
        {"a record of ", decimal(end - begin), " bytes with none of them: another message type"});
  }
  // A cursor over bytes, a part of this one's record (a nested message): its errors give
  // offsets in the whole record.
  cursor sub(std::string_view bytes) const {
    return {bytes.data(), bytes.data() + bytes.size(), begin, name};
  }
  // Skips the field whose tag started at tag_start and keeps its bytes in `kept`.
  void keep_unknown(const char* tag_start, std::uint32_t type, std::string& kept) {
    skip(type);
    kept.append(tag_start, p);
  }
  // Skips the value of a field of wire type `type` (after its tag). A group's or an unknown wire
  // type, or a value cut short, throws format_error.
  void skip(std::uint32_t type) {
    switch (type) {
      case varint:
        get_varint();
        return;
      case fixed64:
        need(8);
        p += 8;
        return;
      case length_delimited:
        get_bytes();
        return;
      case fixed32:
        need(4);
        p += 4;
        return;
      default:
        fail({"a known wire type"}, {"wire type ", decimal(type)});
    }
  }
  // Throws format_error unless n more bytes remain.
  void need(std::size_t n) const {
    if (static_cast<std::size_t>(end - p) < n)
      fail({decimal(n), n == 1 ? " byte" : " bytes"}, {"end of data"});
  }
};

// How many varints the bytes hold (their last bytes have the top bit clear): a reserve hint.
inline std::size_t count_varints(const cursor& c) noexcept {
  std::size_t n = 0;
  for (const char* q = c.p; q != c.end; ++q) n += (static_cast<unsigned char>(*q) & 0x80) == 0;
  return n;
}

}  // namespace protobuf_wire

TABLIO_END_NAMESPACE
