// POSIX file streams: large unbuffered read()/write() calls (the reader and writer do the
// buffering), EINTR and short transfers handled, every failure an io_error naming the file.
#pragma once

#include <tablio/core/error.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

TABLIO_BEGIN_NAMESPACE

namespace detail {

// Owns (or borrows) a file descriptor and remembers the name it was opened under.
class file_descriptor {
 public:
  file_descriptor() = default;
  file_descriptor(int fd, std::string path, bool owned) noexcept
      : fd_(fd), path_(std::move(path)), owned_(owned) {}
  file_descriptor(file_descriptor&& o) noexcept
      : fd_(std::exchange(o.fd_, -1)), path_(std::move(o.path_)), owned_(o.owned_) {}
  file_descriptor& operator=(file_descriptor&& o) noexcept {
    if (this != &o) {
      release_quietly();
      fd_ = std::exchange(o.fd_, -1);
      path_ = std::move(o.path_);
      owned_ = o.owned_;
    }
    return *this;
  }
  ~file_descriptor() { release_quietly(); }

  int get() const noexcept { return fd_; }
  const std::string& path() const noexcept { return path_; }

  // Closes an owned descriptor; a failing close() (e.g. a deferred write error) is reported.
  void close() {
    int fd = std::exchange(fd_, -1);
    if (fd >= 0 && owned_ && ::close(fd) != 0 && errno != EINTR)
      throw_io_error(path_, errno, {"cannot close"});
  }

  static file_descriptor open(const std::string& path, int flags, const char* action) {
    int fd;
    do {
      fd = ::open(path.c_str(), flags | O_CLOEXEC, 0666);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) throw_io_error(path, errno, {action});
    return file_descriptor(fd, path, true);
  }

  std::size_t read_some(char* dst, std::size_t n) {
    for (;;) {
      ssize_t got = ::read(fd_, dst, n);
      if (got >= 0) return static_cast<std::size_t>(got);
      if (errno != EINTR) throw_io_error(path_, errno, {"cannot read"});
    }
  }

  void write_all(const char* src, std::size_t n) {
    while (n > 0) {
      ssize_t put = ::write(fd_, src, n);
      if (put < 0) {
        if (errno == EINTR) continue;
        throw_io_error(path_, errno, {"cannot write"});
      }
      src += put;
      n -= static_cast<std::size_t>(put);
    }
  }

  void seek(std::uint64_t offset) {
    if (::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0)
      throw_io_error(path_, errno, {"cannot seek in"});
  }

  // The size of a regular file; nullopt for pipes, terminals and devices.
  std::optional<std::uint64_t> regular_file_size() const {
    struct stat st;
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    return static_cast<std::uint64_t>(st.st_size);
  }

 private:
  void release_quietly() noexcept {
    if (fd_ >= 0 && owned_) ::close(fd_);
    fd_ = -1;
  }
  int fd_ = -1;
  std::string path_;
  bool owned_ = false;
};

}  // namespace detail

// Reads a file (or a borrowed descriptor such as standard input) with read(2).
class file_source {
 public:
  // Opens `path` for reading, positioned at byte `offset`.
  explicit file_source(const std::string& path, std::uint64_t offset = 0)
      : file_source(detail::file_descriptor::open(path, O_RDONLY, "cannot open for reading"), offset) {}
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
  file_source(int fd, std::string name) : fd_(fd, std::move(name), false) { size_ = fd_.regular_file_size(); }

  std::size_t read_some(char* dst, std::size_t n) {
    std::size_t got = fd_.read_some(dst, n);
    position_ += got;
    return got;
  }
  void seek(std::uint64_t offset) {
    fd_.seek(offset);
    position_ = offset;
  }
  std::uint64_t tell() const noexcept { return position_; }
  std::optional<std::uint64_t> size() const noexcept { return size_; }
  void close() { fd_.close(); }
  const std::string& path() const noexcept { return fd_.path(); }

 private:
  detail::file_descriptor fd_;
  std::optional<std::uint64_t> size_;
  std::uint64_t position_ = 0;
};

// Writes a file (created or truncated) or a borrowed descriptor such as standard output.
class file_sink {
 public:
  explicit file_sink(const std::string& path)
      : fd_(detail::file_descriptor::open(path, O_WRONLY | O_CREAT | O_TRUNC, "cannot open for writing")) {}
  // Writes a descriptor opened for it, which it closes.
  explicit file_sink(detail::file_descriptor fd) : fd_(std::move(fd)) {}
  file_sink(int fd, std::string name) : fd_(fd, std::move(name), false) {}

  void write(const char* src, std::size_t n) {
    fd_.write_all(src, n);
    position_ += n;
  }
  void flush() {}  // write(2) leaves nothing buffered in this process
  void seek(std::uint64_t offset) {
    fd_.seek(offset);
    position_ = offset;
  }
  std::uint64_t tell() const noexcept { return position_; }
  void close() { fd_.close(); }

 private:
  detail::file_descriptor fd_;
  std::uint64_t position_ = 0;
};

inline file_source stdin_source() { return file_source(STDIN_FILENO, "<stdin>"); }
inline file_sink stdout_sink() { return file_sink(STDOUT_FILENO, "<stdout>"); }

TABLIO_END_NAMESPACE
