// The tablio::error hierarchy. Every failure tablio reports is one of these, and each says
// where it happened: the file (or stream name), the byte offset, the table key when known.
#pragma once

#include <tablio/core/version.hpp>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

// Out of line and cold: what throw sites call, so that building a message costs each site a
// call rather than inlined string code (which every includer would compile again).
#if defined(__GNUC__) || defined(__clang__)
#define TABLIO_COLD __attribute__((cold, noinline))
#else
#define TABLIO_COLD
#endif

// The pieces of an error message, joined only when the error is thrown:
//   throw_usage_error({"key '", key, "' is not in the script '", script, "'"});
using message = std::initializer_list<std::string_view>;

namespace detail {

TABLIO_COLD inline std::string join(message pieces) {
  std::size_t size = 0;
  for (std::string_view p : pieces) size += p.size();
  std::string out;
  out.reserve(size);
  for (std::string_view p : pieces) out += p;
  return out;
}

}  // namespace detail

// A number as a message piece: {"item ", decimal(i), " of ", decimal(n)}.
class decimal {
 public:
  explicit decimal(std::uint64_t v) noexcept {
    size_ = static_cast<unsigned char>(
        std::snprintf(text_, sizeof text_, "%llu", static_cast<unsigned long long>(v)));
  }
  explicit decimal(std::int64_t v) noexcept {
    size_ = static_cast<unsigned char>(std::snprintf(text_, sizeof text_, "%lld", static_cast<long long>(v)));
  }
  explicit decimal(int v) noexcept : decimal(static_cast<std::int64_t>(v)) {}
  explicit decimal(unsigned v) noexcept : decimal(static_cast<std::uint64_t>(v)) {}
  operator std::string_view() const noexcept { return {text_, size_}; }

 private:
  char text_[24];
  unsigned char size_;
};

// Base of every exception tablio throws.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A request that can never succeed: an invalid filename or specifier, a disabled feature.
class usage_error : public error {
 public:
  using error::error;
};

// The operating system refused: open, read, write, close, a pipe command that failed.
class io_error : public error {
 public:
  io_error(std::string path, int errnum, std::string_view what)
      : error(compose(path, errnum, what)), path_(std::move(path)), errno_(errnum) {}

  const std::string& path() const noexcept { return path_; }
  // 0 when the failure has no errno (e.g. a pipe command's non-zero exit status).
  int error_number() const noexcept { return errno_; }

 private:
  TABLIO_COLD static std::string compose(const std::string& path, int errnum, std::string_view what) {
    return detail::join(
        {what, " '", path, "'", errnum != 0 ? ": " : "", errnum != 0 ? std::strerror(errnum) : ""});
  }
  std::string path_;
  int errno_;
};

// Where a format error happened. Offsets are in bytes from the start of the stream.
struct error_location {
  std::string path;
  std::optional<std::uint64_t> offset;
  std::string key;
};

// Bytes that do not follow the format: wrong marker, truncated data, a count that exceeds
// the input or the configured limits.
class format_error : public error {
 public:
  format_error(error_location where, std::string expected, std::string found)
      : error(compose(where, expected, found)),
        where_(std::move(where)),
        expected_(std::move(expected)),
        found_(std::move(found)) {}

  const std::string& path() const noexcept { return where_.path; }
  std::optional<std::uint64_t> offset() const noexcept { return where_.offset; }
  const std::string& key() const noexcept { return where_.key; }
  const std::string& expected() const noexcept { return expected_; }
  const std::string& found() const noexcept { return found_; }
  const error_location& where() const noexcept { return where_; }

  // The same error, now naming the table key it happened under.
  format_error with_key(std::string key) const {
    error_location w = where_;
    w.key = std::move(key);
    return format_error(std::move(w), expected_, found_);
  }

 private:
  TABLIO_COLD static std::string compose(const error_location& w, const std::string& expected,
                                         const std::string& found) {
    decimal offset(w.offset.value_or(0));
    bool key = !w.key.empty();
    return printable(detail::join({"format error in '", w.path, "'", w.offset ? " at byte " : "",
                                   w.offset ? std::string_view(offset) : "", key ? " (key '" : "", w.key,
                                   key ? "')" : "", ": expected ", expected, ", found ", found}));
  }
  // Control bytes as \xNN: a message quotes bytes of the input (a member's name, a token),
  // which must not move a terminal's cursor or break a log line. Other bytes are kept (UTF-8).
  TABLIO_COLD static std::string printable(std::string_view text) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (char ch : text) {
      auto c = static_cast<unsigned char>(ch);
      if (c < 0x20 || c == 0x7f)
        out += {'\\', 'x', hex[c >> 4], hex[c & 15]};
      else
        out += ch;
    }
    return out;
  }
  error_location where_;
  std::string expected_;
  std::string found_;
};

[[noreturn]] TABLIO_COLD inline void throw_usage_error(message what) {
  throw usage_error(detail::join(what));
}
[[noreturn]] TABLIO_COLD inline void throw_io_error(std::string_view path, int errnum, message what) {
  throw io_error(std::string(path), errnum, detail::join(what));
}
[[noreturn]] TABLIO_COLD inline void throw_format_error(std::string_view path,
                                                        std::optional<std::uint64_t> offset,
                                                        std::string_view key, message expected,
                                                        message found) {
  throw format_error({std::string(path), offset, std::string(key)}, detail::join(expected),
                     detail::join(found));
}

// Failures that cannot be thrown (a writer closed by its destructor) are reported here.
// The default prints one line to standard error; install your own to route it to a log.
using error_reporter = void (*)(const char* message) noexcept;

namespace detail {
inline void print_error(const char* message) noexcept {
  std::fputs("tablio: ", stderr);
  std::fputs(message, stderr);
  std::fputc('\n', stderr);
}
// Accessed with atomic builtins (not <atomic>, which would cost every includer compile time).
inline error_reporter current_reporter = &print_error;
}  // namespace detail

// Installs a reporter (nullptr restores the default) and returns the previous one.
inline error_reporter set_error_reporter(error_reporter r) noexcept {
  return __atomic_exchange_n(&detail::current_reporter, r ? r : &detail::print_error, __ATOMIC_ACQ_REL);
}
inline void report_error(const char* message) noexcept {
  __atomic_load_n(&detail::current_reporter, __ATOMIC_ACQUIRE)(message);
}

TABLIO_END_NAMESPACE
