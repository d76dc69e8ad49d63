// What the fuzz targets share: running a parser on the input, where a tablio::error is the
// expected outcome of bad input and anything else (a crash, a sanitizer report, another
// exception) is a finding.
#pragma once

#include <tablio/core/error.hpp>

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

// A property that must hold for every input.
inline void require(bool ok) {
  if (!ok) std::abort();
}

}  // namespace fuzz
