// File streams: large unbuffered reads and writes of the system's (the reader and writer do the
// buffering), short transfers handled, every failure an io_error naming the file.
#pragma once

#include <tablio/core/error.hpp>
#include <tablio/stream/platform/file_io.hpp>

#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

TABLIO_BEGIN_NAMESPACE

namespace detail {

// Owns (or borrows) an open file and remembers the name it was opened under.
class file_descriptor {
 public:
  file_descriptor() = default;
  file_descriptor(os::native_file fd, std::string path, bool owned) noexcept
      : fd_(fd), path_(std::move(path)), owned_(owned) {}
  file_descriptor(file_descriptor&& o) noexcept
      : fd_(std::exchange(o.fd_, os::no_file())), path_(std::move(o.path_)), owned_(o.owned_) {}
  file_descriptor& operator=(file_descriptor&& o) noexcept {
    if (this != &o) {
      release_quietly();
      fd_ = std::exchange(o.fd_, os::no_file());
      path_ = std::move(o.path_);
      owned_ = o.owned_;
    }
    return *this;
  }
  ~file_descriptor() { release_quietly(); }

  os::native_file get() const noexcept { return fd_; }
  bool is_open() const noexcept { return fd_ != os::no_file(); }
  const std::string& path() const noexcept { return path_; }

  // Closes an owned file; a failing close (e.g. a deferred write error) is reported.
  void close() {
    os::native_file fd = std::exchange(fd_, os::no_file());
    if (fd != os::no_file() && owned_ && !os::close_file(fd)) throw_io_error(path_, errno, {"cannot close"});
  }

  static file_descriptor open(const std::string& path, os::file_use use, const char* action,
                              os::open_rules rules = {}) {
    os::native_file fd = os::open_file(path, use, rules);
    if (fd == os::no_file()) throw_io_error(path, errno, {action});
    return file_descriptor(fd, path, true);
  }

  std::size_t read_some(char* dst, std::size_t n) {
    std::int64_t got = os::read_file(fd_, dst, n);
    if (got < 0) throw_io_error(path_, errno, {"cannot read"});
    return static_cast<std::size_t>(got);
  }

  void write_all(const char* src, std::size_t n) {
    while (n > 0) {
      std::int64_t put = os::write_file(fd_, src, n);
      if (put < 0) throw_io_error(path_, errno, {"cannot write"});
      src += put;
      n -= static_cast<std::size_t>(put);
    }
  }

  void seek(std::uint64_t offset) {
    if (!os::seek_file(fd_, offset)) throw_io_error(path_, errno, {"cannot seek in"});
  }

  // The size of a regular file; nullopt for pipes, terminals and devices.
  std::optional<std::uint64_t> regular_file_size() const {
    os::file_status st;
    if (!os::status_of(fd_, st) || st.kind != os::file_kind::regular) return std::nullopt;
    return st.size;
  }

 private:
  void release_quietly() noexcept {
    if (fd_ != os::no_file() && owned_) os::close_quietly(fd_);
    fd_ = os::no_file();
  }
  os::native_file fd_ = os::no_file();
  std::string path_;
  bool owned_ = false;
};

}  // namespace detail

// Reads a file (or a borrowed descriptor such as standard input) with read(2).
// It models the Source concept: seekable, closable, and sized when it is a regular file.
class file_source {
 public:
  // Opens `path` for reading, positioned at byte `offset`.
  explicit file_source(const std::string& path, std::uint64_t offset = 0)
      : file_source(
            detail::file_descriptor::open(path, detail::os::file_use::read, "cannot open for reading"),
            offset) {}
  // Reads a descriptor opened for it (which it closes), from byte `offset`.
  file_source(detail::file_descriptor fd, std::uint64_t offset) : fd_(std::move(fd)) {
    size_ = fd_.regular_file_size();
    if (offset != 0) {
      if (size_ && offset > *size_)
        throw_io_error(fd_.path(), 0, {"offset ", decimal(offset), " is past the end of"});
      seek(offset);
    }
  }
  // Reads a descriptor it does not own (closing the source leaves it open).
  file_source(detail::os::native_file fd, std::string name) : fd_(fd, std::move(name), false) {
    size_ = fd_.regular_file_size();
  }

  // The Source concept: reads up to n bytes into dst; 0 at the end; io_error when reading fails.
  std::size_t read_some(char* dst, std::size_t n) {
    std::size_t got = fd_.read_some(dst, n);
    position_ += got;
    return got;
  }
  // Moves to byte offset; io_error when the file cannot seek (a pipe).
  void seek(std::uint64_t offset) {
    fd_.seek(offset);
    position_ = offset;
  }
  // The offset of the next byte read.
  std::uint64_t tell() const noexcept { return position_; }
  // The file's size; nullopt when it is no regular file (a pipe, a terminal).
  std::optional<std::uint64_t> size() const noexcept { return size_; }
  // Closes a descriptor it owns; io_error when closing fails.
  void close() { fd_.close(); }
  // The name it was opened under, as errors give it.
  const std::string& path() const noexcept { return fd_.path(); }

 private:
  detail::file_descriptor fd_;
  std::optional<std::uint64_t> size_;
  std::uint64_t position_ = 0;
};

// Writes a file (created or truncated) or a borrowed descriptor such as standard output.
// It models the Sink concept: seekable and closable.
class file_sink {
 public:
  // Creates or truncates the file at path; io_error when it cannot.
  explicit file_sink(const std::string& path)
      : fd_(detail::file_descriptor::open(path, detail::os::file_use::write, "cannot open for writing")) {}
  // Writes a descriptor opened for it, which it closes.
  explicit file_sink(detail::file_descriptor fd) : fd_(std::move(fd)) {}
  file_sink(detail::os::native_file fd, std::string name) : fd_(fd, std::move(name), false) {}

  // The Sink concept: writes all n bytes at src, io_error when the system fails to.
  void write(const char* src, std::size_t n) {
    fd_.write_all(src, n);
    position_ += n;
  }
  // The Sink concept: nothing to do.
  void flush() {}  // the system's write leaves nothing buffered in this process
  // Moves to byte offset, where the next write goes; io_error when the file cannot seek.
  void seek(std::uint64_t offset) {
    fd_.seek(offset);
    position_ = offset;
  }
  // The offset the next write goes to.
  std::uint64_t tell() const noexcept { return position_; }
  // Closes a descriptor it owns; io_error when closing fails (a write error the system deferred).
  void close() { fd_.close(); }

 private:
  detail::file_descriptor fd_;
  std::uint64_t position_ = 0;
};

// Standard input as a source, which closing leaves open.
inline file_source stdin_source() { return file_source(detail::os::standard_input(), "<stdin>"); }
// Standard output as a sink, which closing leaves open.
inline file_sink stdout_sink() { return file_sink(detail::os::standard_output(), "<stdout>"); }

TABLIO_END_NAMESPACE
