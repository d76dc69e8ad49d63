// Compressed streams, recognised by their first bytes. Inflating and deflating them is the
// optional zlib component's work (stream/zlib.hpp); knowing what a stream is needs no zlib.
#pragma once

#include <tablio/core/version.hpp>

#include <span>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

// A stream's compression: none, gzip (RFC 1952, as gzip and TFRecord's GZIP write it) or zlib
// (RFC 1950, TFRecord's ZLIB).
enum class compression { none, gzip, zlib };

// What the first bytes of a stream say it is: gzip (1f 8b), zlib (a valid CMF/FLG pair with
// deflate), or neither.
inline compression detect_compression(std::span<const char> head) noexcept {
  if (head.size() >= 2) {
    auto b0 = static_cast<unsigned char>(head[0]), b1 = static_cast<unsigned char>(head[1]);
    if (b0 == 0x1f && b1 == 0x8b) return compression::gzip;
    if ((b0 & 0x0f) == 8 && (b0 >> 4) <= 7 && ((b0 << 8) | b1) % 31 == 0) return compression::zlib;
  }
  return compression::none;
}

// The compression a file name's suffix asks for: ".gz" GZIP, ".zz" or ".zlib" ZLIB.
inline compression compression_for_suffix(std::string_view name) noexcept {
  if (name.ends_with(".gz")) return compression::gzip;
  if (name.ends_with(".zz") || name.ends_with(".zlib")) return compression::zlib;
  return compression::none;
}

// The compression's name, for messages: "gzip", "zlib" or "none".
inline const char* compression_name(compression c) noexcept {
  return c == compression::gzip ? "gzip" : c == compression::zlib ? "zlib" : "none";
}

TABLIO_END_NAMESPACE
