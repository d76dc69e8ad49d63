// The Source and Sink concepts: where bytes come from and where they go.
//
// A source needs only read_some(); a sink needs write() and flush(). The optional members
// (seek/tell, size, contiguous view, close) are detected and used when present: a contiguous
// source (memory, mmap) is read with no copy at all, a seekable one supports random access.
#pragma once

#include <tablio/core/version.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

TABLIO_BEGIN_NAMESPACE

// How an input will be read, which a source may use: a memory map advises the kernel, a remote
// object streams ahead (sequential) or fetches ranges (random).
enum class access_pattern { normal, sequential, random };

// Reads up to n bytes into dst; returns 0 only at end of input; throws io_error on failure.
template <class S>
concept source = requires(S& s, char* dst, std::size_t n) {
  { s.read_some(dst, n) } -> std::same_as<std::size_t>;
};

// Writes all n bytes or throws io_error; flush() pushes buffered bytes to the OS.
template <class S>
concept sink = requires(S& s, const char* src, std::size_t n) {
  s.write(src, n);
  s.flush();
};

// A source whose whole content is addressable memory.
template <class S>
concept contiguous_source = source<S> && requires(const S& s) {
  { s.contiguous() } -> std::convertible_to<std::span<const char>>;
};

// A stream that can move to an absolute byte offset.
template <class S>
concept seekable = requires(S& s, std::uint64_t offset) {
  s.seek(offset);
  { s.tell() } -> std::convertible_to<std::uint64_t>;
};

// A source that may know its total size in bytes (std::nullopt when it does not).
template <class S>
concept sized_source = source<S> && requires(const S& s) {
  { s.size() } -> std::convertible_to<std::optional<std::uint64_t>>;
};

// A stream with a close() that reports failure (pipe exit status, a full disk).
template <class S>
concept closable = requires(S& s) {
  s.close();
};

TABLIO_END_NAMESPACE
