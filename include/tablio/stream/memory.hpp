// Memory streams: a source over a span (contiguous, zero-copy) and a sink that appends to a
// growing vector, handing out the vector's own storage as the writer's window.
#pragma once

#include <tablio/stream/reader.hpp>
#include <tablio/stream/writer.hpp>

#include <memory>
#include <span>
#include <string>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// An allocator whose resize() leaves new chars uninitialised: the writer overwrites them.
template <class T>
struct default_init_allocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = default_init_allocator<U>;
  };
  using std::allocator<T>::allocator;
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

// The byte container encode() returns: a std::vector<char> that grows without zero-filling.
using byte_vector = std::vector<char, default_init_allocator<char>>;

// Reads a span of memory the caller keeps alive.
class memory_source {
 public:
  memory_source() = default;
  explicit memory_source(std::span<const char> bytes) noexcept : bytes_(bytes) {}
  explicit memory_source(std::string_view bytes) noexcept : bytes_(bytes.data(), bytes.size()) {}

  std::size_t read_some(char* dst, std::size_t n) noexcept {
    n = std::min(n, bytes_.size() - pos_);
    if (n != 0) std::memcpy(dst, bytes_.data() + pos_, n);
    pos_ += n;
    return n;
  }
  std::span<const char> contiguous() const noexcept { return bytes_; }
  std::optional<std::uint64_t> size() const noexcept { return bytes_.size(); }

 private:
  std::span<const char> bytes_;
  std::size_t pos_ = 0;
};

// Appends to a vector-like container of char (std::vector<char>, byte_vector, std::string).
// The container holds garbage past the written bytes until the writer is flushed or closed.
template <class Container>
class vector_sink final : public sink_base {
 public:
  explicit vector_sink(Container& out) noexcept : out_(out), filled_(out.size()) {}

  std::span<char> next_window(std::size_t used, std::size_t min_free) override {
    filled_ += used;
    std::size_t want = filled_ + std::max<std::size_t>(min_free, 4096);
    if (out_.size() < want) out_.resize(std::max(want, out_.size() * 2));
    return {out_.data() + filled_, out_.size() - filled_};
  }
  void write_direct(const char* src, std::size_t n) override {
    std::span<char> w = next_window(0, n);
    std::memcpy(w.data(), src, n);
    filled_ += n;
  }
  void flush(std::size_t used) override {
    filled_ += used;
    out_.resize(filled_);
  }
  bool seek(std::uint64_t offset) override {
    if (offset > out_.size()) return false;
    filled_ = static_cast<std::size_t>(offset);
    return true;
  }

 private:
  Container& out_;
  std::size_t filled_;
};

// A reader over bytes the caller keeps alive.
inline reader memory_reader(std::span<const char> bytes, std::string name = "<memory>",
                            const limits& lim = default_limits) {
  return reader(memory_source(bytes), std::move(name), lim);
}
inline reader memory_reader(std::string_view bytes, std::string name = "<memory>",
                            const limits& lim = default_limits) {
  return reader(memory_source(bytes), std::move(name), lim);
}

// A writer appending to `out`; `out` has its final size once the writer is flushed or closed.
template <class Container>
writer memory_writer(Container& out, std::string name = "<memory>") {
  return writer(std::make_unique<vector_sink<Container>>(out), std::move(name));
}

TABLIO_END_NAMESPACE
