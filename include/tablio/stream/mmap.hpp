// A read-only memory map of a file: a contiguous source, so readers view it without copying.
#pragma once

#include <tablio/core/error.hpp>
#include <tablio/core/minmax.hpp>
#include <tablio/stream/concepts.hpp>
#include <tablio/stream/file.hpp>
#include <tablio/stream/platform/memory_map.hpp>

#include <cerrno>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <utility>

TABLIO_BEGIN_NAMESPACE

// Reads a regular file through a read-only memory map: it models the Source concept,
// contiguous and sized, so a reader over it copies nothing. The file must not shrink while mapped.
class mmap_source {
 public:
  // Maps the file at path, advising the system of the access pattern; io_error when it cannot be
  // opened or mapped, or is no regular file.
  explicit mmap_source(const std::string& path, access_pattern hint = access_pattern::normal)
      : mmap_source(
            detail::file_descriptor::open(path, detail::os::file_use::read, "cannot open for reading"),
            hint) {}
  // Maps a file opened for it (the file is closed once the map is made).
  mmap_source(detail::file_descriptor file, access_pattern hint) : path_(file.path()) {
    detail::os::file_status st;
    if (!detail::os::status_of(file.get(), st)) throw_io_error(path_, errno, {"cannot stat"});
    if (st.kind != detail::os::file_kind::regular)
      throw_io_error(path_, 0, {"cannot memory-map a file that is not a regular file:"});
    size_ = static_cast<std::size_t>(st.size);
    if (size_ == 0) return;
    using detail::os::map_advice;
    data_ = detail::os::map_file(file.get(), size_,
                                 hint == access_pattern::sequential ? map_advice::sequential
                                 : hint == access_pattern::random   ? map_advice::random
                                                                    : map_advice::normal);
    if (!data_) throw_io_error(path_, errno, {"cannot memory-map"});
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

  // The Source concept: copies up to n of the bytes left to dst; 0 at the end.
  std::size_t read_some(char* dst, std::size_t n) noexcept {
    n = detail::min_of(n, size_ - pos_);
    if (n != 0) std::memcpy(dst, data_ + pos_, n);
    pos_ += n;
    return n;
  }
  // The Source concept: the whole file, for a reader to read in place.
  std::span<const char> contiguous() const noexcept { return {data_, size_}; }
  // The Source concept: the file's size when mapped.
  std::optional<std::uint64_t> size() const noexcept { return size_; }
  // The name it was opened under, as errors give it.
  const std::string& path() const noexcept { return path_; }

 private:
  void unmap() noexcept {
    if (data_) detail::os::unmap_file(data_, size_);
    data_ = nullptr;
  }
  std::string path_;
  const char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t pos_ = 0;
};

TABLIO_END_NAMESPACE
