// The CRC-32 of bytes as the .expect files write it (8 hex digits), by zlib, for the tests of
// formats whose expectations name their values' checksums.
#pragma once

#include <zlib.h>

#include <cstdio>
#include <string>
#include <string_view>

namespace test {

inline std::string crc_hex(std::string_view bytes) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08lx",
                crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
  return buf;
}

}  // namespace test
