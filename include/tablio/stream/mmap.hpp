// A read-only memory map of a file: a contiguous source, so readers view it without copying.
#pragma once

#include <tablio/core/error.hpp>
#include <tablio/core/minmax.hpp>
#include <tablio/stream/concepts.hpp>
#include <tablio/stream/file.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <utility>

TABLIO_BEGIN_NAMESPACE

class mmap_source {
 public:
  explicit mmap_source(const std::string& path, access_pattern hint = access_pattern::normal)
      : mmap_source(detail::file_descriptor::open(path, O_RDONLY, "cannot open for reading"), hint) {}
  // Maps a file opened for it (the descriptor is closed once the map is made).
  mmap_source(detail::file_descriptor file, access_pattern hint) : path_(file.path()) {
    struct stat st;
    if (::fstat(file.get(), &st) != 0) throw_io_error(path_, errno, {"cannot stat"});
    if (!S_ISREG(st.st_mode))
      throw_io_error(path_, 0, {"cannot memory-map a file that is not a regular file:"});
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ == 0) return;
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, file.get(), 0);
    if (p == MAP_FAILED) throw_io_error(path_, errno, {"cannot memory-map"});
    data_ = static_cast<const char*>(p);
    int advice = hint == access_pattern::sequential ? MADV_SEQUENTIAL
                 : hint == access_pattern::random   ? MADV_RANDOM
                                                    : MADV_NORMAL;
    ::madvise(const_cast<char*>(data_), size_, advice);  // a hint: failure is harmless
  }
  mmap_source(mmap_source&& o) noexcept
      : path_(std::move(o.path_)),
        data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        pos_(o.pos_) {}
  mmap_source& operator=(mmap_source&& o) noexcept {
    if (this != &o) {
      unmap();
      path_ = std::move(o.path_);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      pos_ = o.pos_;
    }
    return *this;
  }
  ~mmap_source() { unmap(); }

  std::size_t read_some(char* dst, std::size_t n) noexcept {
    n = detail::min_of(n, size_ - pos_);
    if (n != 0) std::memcpy(dst, data_ + pos_, n);
    pos_ += n;
    return n;
  }
  std::span<const char> contiguous() const noexcept { return {data_, size_}; }
  std::optional<std::uint64_t> size() const noexcept { return size_; }
  const std::string& path() const noexcept { return path_; }

 private:
  void unmap() noexcept {
    if (data_) ::munmap(const_cast<char*>(data_), size_);
    data_ = nullptr;
  }
  std::string path_;
  const char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t pos_ = 0;
};

TABLIO_END_NAMESPACE
