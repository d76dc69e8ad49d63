// What the fuzz targets share: running a parser on the input, where a tablio::error is the
// expected outcome of bad input and anything else (a crash, a sanitizer report, another
// exception) is a finding.
#pragma once

#include <tablio/core/error.hpp>
#include <tablio/stream/memory.hpp>
#include <tablio/stream/reader.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

namespace fuzz {

inline std::string_view as_chars(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Runs f; true if it completed, false if it rejected the input with a tablio::error.
template <class F>
bool accepts(F f) {
  try {
    f();
    return true;
  } catch (const tablio::error&) {
    return false;
  }
}

// Float vectors compared bit for bit: NaN payloads are values too.
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// A source that hides its size and gives at most `chunk` bytes per read, as a pipe may.
struct trickle_source {
  std::string_view bytes;
  std::size_t chunk;
  std::size_t read_some(char* dst, std::size_t n) {
    n = std::min({n, chunk, bytes.size()});
    std::memcpy(dst, bytes.data(), n);
    bytes.remove_prefix(n);
    return n;
  }
};

// The input as a reader: `mode` 0 reads memory (size known), otherwise a trickle of `mode`
// bytes at a time, so that parsers meet both seekable and stream input.
inline tablio::reader input(std::string_view bytes, std::uint8_t mode, const std::string& name = "fuzz") {
  if (mode == 0) return tablio::memory_reader(bytes, name);
  return tablio::reader(trickle_source{bytes, mode}, name);
}

// A property that must hold for every input.
inline void require(bool ok) {
  if (!ok) std::abort();
}

}  // namespace fuzz
