// Nanoseconds of a clock that only goes forward, for what a table measures of its own work.
#pragma once

#include <tablio/core/version.hpp>

#include <time.h>

#include <cstdint>

TABLIO_BEGIN_NAMESPACE

namespace detail {

inline std::uint64_t monotonic_nanoseconds() noexcept {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::uint64_t>(t.tv_sec) * 1000000000u + static_cast<std::uint64_t>(t.tv_nsec);
}

}  // namespace detail

TABLIO_END_NAMESPACE
