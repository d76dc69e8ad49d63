// Memory streams: a source over a span (contiguous, zero-copy) and a sink that appends to a
// growing vector, handing out the vector's own storage as the writer's window.
#pragma once

#include <tablio/core/minmax.hpp>
#include <tablio/stream/reader.hpp>
#include <tablio/stream/writer.hpp>

#include <span>
#include <string>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// A growable byte array that, unlike std::vector<char>, never initialises bytes it is
// about to overwrite: encode() returns one, and a writer to it copies each byte once.
class byte_buffer {
 public:
  byte_buffer() = default;
  byte_buffer(const byte_buffer& o) : byte_buffer() { assign(o.data(), o.size()); }
  byte_buffer(byte_buffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        capacity_(std::exchange(o.capacity_, 0)) {}
  ~byte_buffer() { delete[] data_; }
  byte_buffer& operator=(const byte_buffer& o) {
    if (this != &o) assign(o.data(), o.size());
    return *this;
  }
  byte_buffer& operator=(byte_buffer&& o) noexcept {
    if (this == &o) return *this;
    delete[] data_;
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    capacity_ = std::exchange(o.capacity_, 0);
    return *this;
  }

  // The bytes; nullptr before the first allocation.
  char* data() noexcept { return data_; }
  const char* data() const noexcept { return data_; }
  // Bytes held.
  std::size_t size() const noexcept { return size_; }
  // Bytes it can hold before it reallocates.
  std::size_t capacity() const noexcept { return capacity_; }
  // Whether it holds no bytes.
  bool empty() const noexcept { return size_ == 0; }
  // The bytes as a range of char.
  char* begin() noexcept { return data(); }
  // The end of the bytes.
  char* end() noexcept { return data() + size_; }
  const char* begin() const noexcept { return data(); }
  const char* end() const noexcept { return data() + size_; }
  // Byte i, unchecked.
  char& operator[](std::size_t i) noexcept { return data_[i]; }
  char operator[](std::size_t i) const noexcept { return data_[i]; }
  // The bytes as a string_view, valid until the buffer changes.
  std::string_view view() const noexcept { return {data(), size_}; }
  // view(), implicitly.
  operator std::string_view() const noexcept { return view(); }
  // Whether both hold the same bytes.
  bool operator==(const byte_buffer& o) const noexcept { return view() == o.view(); }

  // Keeps the capacity.
  void clear() noexcept { size_ = 0; }
  // Makes room for n bytes in all, keeping the bytes held; never shrinks.
  void reserve(std::size_t n) {
    if (n <= capacity_) return;
    char* bigger = new char[n];  // default-initialised: no zero-filling
    if (size_ != 0) std::memcpy(bigger, data_, size_);
    delete[] std::exchange(data_, bigger);
    capacity_ = n;
  }
  // Sets the size; bytes past the old size are indeterminate until written.
  void resize_uninitialized(std::size_t n) {
    reserve(n);
    size_ = n;
  }
  // Holds a copy of the n bytes at src, reusing the capacity.
  void assign(const char* src, std::size_t n) {
    resize_uninitialized(n);
    if (n != 0) std::memcpy(data(), src, n);
  }

 private:
  char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

// Reads a span of memory the caller keeps alive.
// It models the Source concept, contiguous and sized: a reader over it copies nothing.
class memory_source {
 public:
  memory_source() = default;
  // A source over bytes, which must outlive it.
  explicit memory_source(std::span<const char> bytes) noexcept : bytes_(bytes) {}
  explicit memory_source(std::string_view bytes) noexcept : bytes_(bytes.data(), bytes.size()) {}

  // The Source concept: copies up to n of the bytes left to dst; 0 at the end.
  std::size_t read_some(char* dst, std::size_t n) noexcept {
    n = detail::min_of(n, bytes_.size() - pos_);
    if (n != 0) std::memcpy(dst, bytes_.data() + pos_, n);
    pos_ += n;
    return n;
  }
  // The Source concept: all the bytes, for a reader to read in place.
  std::span<const char> contiguous() const noexcept { return bytes_; }
  // The Source concept: the number of bytes.
  std::optional<std::uint64_t> size() const noexcept { return bytes_.size(); }

 private:
  std::span<const char> bytes_;
  std::size_t pos_ = 0;
};

// Appends to a container of char: byte_buffer (no initialisation), or std::vector<char> and
// std::string (which zero-fill what they grow by). The container holds unwritten bytes past
// the written ones until the writer is flushed or closed; the writer's window is the
// container's own storage. A flush after a seek back cuts the container where writing stopped.
template <class Container>
class vector_sink final : public sink_base {
 public:
  // Appends to out, after the bytes it holds; out must outlive the sink.
  explicit vector_sink(Container& out) noexcept : out_(out), filled_(out.size()) {}

  std::span<char> next_window(std::size_t used, std::size_t min_free) override {
    filled_ += used;
    std::size_t want = filled_ + detail::max_of<std::size_t>(min_free, 4096);
    if (out_.size() < want) grow(detail::max_of(want, out_.size() * 2));
    return {out_.data() + filled_, out_.size() - filled_};
  }
  void write_direct(const char* src, std::size_t n) override {
    std::span<char> w = next_window(0, n);
    std::memcpy(w.data(), src, n);
    filled_ += n;
  }
  void flush(std::size_t used) override {
    filled_ += used;
    resize(filled_);
  }
  bool seek(std::uint64_t offset) override {
    if (offset > out_.size()) return false;
    filled_ = static_cast<std::size_t>(offset);
    return true;
  }

 private:
  void grow(std::size_t n) {
    if constexpr (std::is_same_v<Container, byte_buffer>) {
      // Use all the capacity there is: the buffer may have been cleared for reuse.
      out_.resize_uninitialized(detail::max_of(n, out_.capacity()));
    } else {
      out_.resize(n);
    }
  }
  void resize(std::size_t n) {
    if constexpr (std::is_same_v<Container, byte_buffer>)
      out_.resize_uninitialized(n);
    else
      out_.resize(n);
  }

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
inline reader memory_reader(const std::string& bytes, std::string name = "<memory>",
                            const limits& lim = default_limits) {
  return memory_reader(std::string_view(bytes), std::move(name), lim);
}
// The reader would outlive a temporary string.
reader memory_reader(std::string&& bytes, std::string name = "<memory>",
                     const limits& lim = default_limits) = delete;

// A writer appending to `out`; `out` has its final size once the writer is flushed or closed.
template <class Container>
writer memory_writer(Container& out, std::string name = "<memory>") {
  return writer(make_owned<vector_sink<Container>>(out), std::move(name));
}

TABLIO_END_NAMESPACE
