// Configurable bounds on what a parser may allocate for a single record or container, and on
// what one input may deliver.
//
// Length and count fields read from the wire are never trusted: when the number of bytes
// that remain is known, a count whose minimum encoded size exceeds them is rejected before
// any allocation; when it is not (pipes, stdin, compressed input), these limits apply and
// containers grow in bounded steps as their elements actually arrive.
#pragma once

#include <tablio/core/version.hpp>

#include <cstddef>
#include <cstdint>

TABLIO_BEGIN_NAMESPACE

// The bounds one input applies (open_options::parse_limits): the first four always bind, the
// last three are none when 0. A value past a bound is a format_error naming the limit.
struct limits {
  // Largest single record or object, in bytes.
  std::uint64_t max_record_bytes = std::uint64_t{1} << 32;
  // Largest element count of one container.
  std::uint64_t max_element_count = std::uint64_t{1} << 31;
  // Bytes a container may reserve ahead of the elements that actually arrived.
  std::size_t max_reserve_bytes = std::size_t{1} << 20;
  // Longest token (a key, a word of a text object): what a run of bytes with no whitespace may
  // grow to before it is an error rather than a token.
  std::size_t max_token_bytes = std::size_t{1} << 20;
  // Bytes one input (a file, a command's output, a remote object, after decompression) may
  // deliver in all; 0: no bound.
  std::uint64_t max_total_bytes = 0;
  // How many times its compressed size a compressed input may inflate to (past its first MiB);
  // 0: no bound. A zip bomb inflates about a thousand times; real data rarely ten.
  std::uint64_t max_expansion = 0;
  // How many times the bytes of the files a table names (its script or segments file, and each
  // file or recording its lines point into, counted once) its entries may read in all; 0: no
  // bound. Lines that point again and again at the same bytes read them again each time.
  std::uint64_t max_table_expansion = 0;
};

// The limits every reader applies unless given others: bounds that no real file reaches.
inline constexpr limits default_limits{};

// No bound at all: what a process's policy (stream/policy.hpp) adds to each open's own limits
// until it is told otherwise.
inline constexpr limits unbounded_limits{UINT64_MAX, UINT64_MAX, SIZE_MAX, SIZE_MAX, 0, 0, 0};

// The limits under the untrusted policy (stream/policy.hpp), where each is tighter than the
// caller's: records of 256 MiB, 2^26 elements, 64 KiB tokens, 64 GiB per input, inputs that
// inflate at most 100 times, and tables that read at most 4 times the bytes of what they name.
inline constexpr limits untrusted_limits{.max_record_bytes = std::uint64_t{1} << 28,
                                         .max_element_count = std::uint64_t{1} << 26,
                                         .max_reserve_bytes = std::size_t{1} << 20,
                                         .max_token_bytes = std::size_t{1} << 16,
                                         .max_total_bytes = std::uint64_t{1} << 36,
                                         .max_expansion = 100,
                                         .max_table_expansion = 4};

// The tighter of two limits, each bound on its own (0 meaning none for the last two).
constexpr limits tightest(const limits& a, const limits& b) noexcept {
  auto least = [](auto x, auto y) { return x < y ? x : y; };
  auto least_bound = [](std::uint64_t x, std::uint64_t y) { return x == 0 ? y : y == 0 ? x : x < y ? x : y; };
  return {least(a.max_record_bytes, b.max_record_bytes),
          least(a.max_element_count, b.max_element_count),
          least(a.max_reserve_bytes, b.max_reserve_bytes),
          least(a.max_token_bytes, b.max_token_bytes),
          least_bound(a.max_total_bytes, b.max_total_bytes),
          least_bound(a.max_expansion, b.max_expansion),
          least_bound(a.max_table_expansion, b.max_table_expansion)};
}

TABLIO_END_NAMESPACE
