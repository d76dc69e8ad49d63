// Configurable bounds on what a parser may allocate for a single record or container.
//
// Length and count fields read from the wire are never trusted: when the number of bytes
// that remain is known, a count whose minimum encoded size exceeds them is rejected before
// any allocation; when it is not (pipes, stdin), these limits apply and containers grow in
// bounded steps as their elements actually arrive.
#pragma once

#include <tablio/core/version.hpp>

#include <cstddef>
#include <cstdint>

TABLIO_BEGIN_NAMESPACE

struct limits {
  // Largest single record or object, in bytes.
  std::uint64_t max_record_bytes = std::uint64_t{1} << 32;
  // Largest element count of one container.
  std::uint64_t max_element_count = std::uint64_t{1} << 31;
  // Bytes a container may reserve ahead of the elements that actually arrived.
  std::size_t max_reserve_bytes = std::size_t{1} << 20;
};

inline constexpr limits default_limits{};

TABLIO_END_NAMESPACE
