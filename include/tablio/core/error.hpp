// The tablio::error hierarchy. Every failure tablio reports is one of these, and each says
// where it happened: the file (or stream name), the byte offset, the table key when known.
#pragma once

#include <tablio/core/atomics.hpp>
#include <tablio/core/config.hpp>

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

// The length of the UTF-8 sequence at s[i], or 0 when it is not one (a lone byte of another
// encoding, an overlong form, a surrogate).
inline std::size_t utf8_sequence_length(std::string_view s, std::size_t i) noexcept {
  auto byte = [&](std::size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  unsigned lead = byte(0);
  std::size_t n = lead < 0x80                    ? 1
                  : lead >= 0xC2 && lead <= 0xDF ? 2
                  : lead >= 0xE0 && lead <= 0xEF ? 3
                  : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                 : 0;
  unsigned low = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
  unsigned high = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
  for (std::size_t k = 1; k < n; ++k) {
    unsigned c = byte(k);
    if (c < (k == 1 ? low : 0x80) || c > (k == 1 ? high : 0xBF)) return 0;
  }
  return n;
}

// The text with every URL in it ("scheme://user:password@host/path?query#fragment") shown
// without its user, password, query and fragment: a presigned URL's signature or a password
// never reaches a message, wherever the URL sits in it (a specifier, a script line, a command).
TABLIO_COLD inline std::string without_credentials(std::string_view text) {
  auto ends_url = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\'' || c == '"' || c == ',';
  };
  std::string out;
  std::size_t done = 0;
  for (std::size_t at = text.find("://"); at != std::string_view::npos; at = text.find("://", done)) {
    const std::size_t authority = at + 3;
    std::size_t end = authority, host_end = authority;
    while (end < text.size() && !ends_url(text[end])) ++end;
    while (host_end < end && text[host_end] != '/' && text[host_end] != '?' && text[host_end] != '#')
      ++host_end;
    const std::size_t user = text.substr(authority, host_end - authority).rfind('@');
    const std::size_t from = user == std::string_view::npos ? authority : authority + user + 1;
    const std::size_t query = text.substr(host_end, end - host_end).find_first_of("?#");
    const std::size_t to = query == std::string_view::npos ? end : host_end + query;
    out.append(text, done, authority - done);
    out.append(text, from, to - from);
    done = end;
  }
  out.append(text, done, std::string_view::npos);
  return out;
}

// Control characters (C0, DEL, C1, and the bidirectional marks that reorder what a terminal
// shows) and bytes that are not UTF-8 as \xNN, and URLs without_credentials(): messages quote
// bytes of the input (a member's name, a token, a key), which must not move a terminal's
// cursor, break a log line or leak a secret. Other characters are kept. `keep` names control
// bytes to keep ("\n" for text of several lines).
TABLIO_COLD inline std::string printable(std::string_view given, std::string_view keep = {}) {
  static constexpr char hex[] = "0123456789abcdef";
  const std::string cleaned = without_credentials(given);
  const std::string_view text = cleaned;
  std::string out;
  out.reserve(text.size());
  auto escape = [&](unsigned char c) { out += {'\\', 'x', hex[c >> 4], hex[c & 15]}; };
  for (std::size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    std::size_t n = utf8_sequence_length(text, i);
    auto next = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
    bool direction_mark =  // U+200E, U+200F, U+2028..U+202E (line and paragraph separators too),
                           // U+2066..U+2069, and U+061C
        (c == 0xE2 && n == 3 &&
         ((next(1) == 0x80 && (next(2) == 0x8E || next(2) == 0x8F || (next(2) >= 0xA8 && next(2) <= 0xAE))) ||
          (next(1) == 0x81 && next(2) >= 0xA6 && next(2) <= 0xA9))) ||
        (c == 0xD8 && n == 2 && next(1) == 0x9C);
    bool control = c < 0x20 || c == 0x7f || (c == 0xC2 && n == 2 && next(1) < 0xA0) || direction_mark;
    if (n == 0 || (control && keep.find(text[i]) == std::string_view::npos)) {
      for (std::size_t k = 0; k < (n ? n : 1); ++k) escape(static_cast<unsigned char>(text[i + k]));
      i += n ? n : 1;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

}  // namespace detail

// How much of the input a message may quote: a token, a key, a line found where something
// else was expected. An error must not carry a file's contents (the secret a script pointed
// at) into a log; the exception's fields keep what it needs whole (format_error::key()).
inline constexpr std::size_t max_quoted_bytes = 16;

// A table key that names an entry is input like any other: under the untrusted policy no
// message may carry more than max_quoted_bytes of it (format_error::key() keeps it whole).
inline constexpr std::size_t max_quoted_key_bytes = max_quoted_bytes;

// The first `most` bytes of `input`, and "..." when there is more: a message piece. A URL's
// credentials go before the cut, which would leave too little of the URL to find them after.
TABLIO_COLD inline std::string excerpt(std::string_view given, std::size_t most = max_quoted_bytes) {
  const std::string cleaned = detail::without_credentials(given);
  const std::string_view input = cleaned;
  if (input.size() <= most) return std::string(input);
  std::size_t cut = most;  // not inside a UTF-8 sequence
  while (cut > most - 3 && (static_cast<unsigned char>(input[cut]) & 0xC0) == 0x80) --cut;
  return std::string(input.substr(0, cut)) + "...";
}
// The same in single quotes: {"a token"}, {quoted_excerpt(token)} says "found 'xyz'".
TABLIO_COLD inline std::string quoted_excerpt(std::string_view input) { return "'" + excerpt(input) + "'"; }
// A key that names an entry, in single quotes.
TABLIO_COLD inline std::string quoted_key(std::string_view key) {
  return "'" + excerpt(key, max_quoted_key_bytes) + "'";
}

// A number as a message piece: {"item ", decimal(i), " of ", decimal(n)}.
class decimal {
 public:
  // The number in decimal digits, held in the object itself (no allocation), signed or not.
  explicit decimal(std::uint64_t v) noexcept {
    size_ = static_cast<unsigned char>(
        std::snprintf(text_, sizeof text_, "%llu", static_cast<unsigned long long>(v)));
  }
  explicit decimal(std::int64_t v) noexcept {
    size_ = static_cast<unsigned char>(std::snprintf(text_, sizeof text_, "%lld", static_cast<long long>(v)));
  }
  explicit decimal(int v) noexcept : decimal(static_cast<std::int64_t>(v)) {}
  explicit decimal(unsigned v) noexcept : decimal(static_cast<std::uint64_t>(v)) {}
  // The digits, valid as long as this decimal lives.
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

// A key an output cannot hold (whitespace in an archive's key, a '.' in a tar member's, a key
// written twice to an LMDB database): the caller's error, or, where keys come from an input
// being copied, that input's.
class key_error : public usage_error {
 public:
  using usage_error::usage_error;
};

// A name the options or the process's policy refuse to open (stream/policy.hpp): a command,
// standard input, the network, a path outside the confining folder, a device.
class access_error : public usage_error {
 public:
  using usage_error::usage_error;
};

// The operating system refused: open, read, write, close, a pipe command that failed.
class io_error : public error {
 public:
  io_error(std::string path, int errnum, std::string_view what)
      : error(compose(path, errnum, what)), path_(std::move(path)), errno_(errnum) {}
  // The same failure told in another message, naming `path` (a name shown otherwise).
  io_error(const io_error& e, std::string path, const std::string& told)
      : error(told), path_(std::move(path)), errno_(e.errno_) {}

  // The file, stream or command that failed, as the caller named it.
  const std::string& path() const noexcept { return path_; }
  // 0 when the failure has no errno (e.g. a pipe command's non-zero exit status).
  int error_number() const noexcept { return errno_; }

 private:
  TABLIO_COLD static std::string compose(const std::string& path, int errnum, std::string_view what) {
    return detail::printable(detail::join(
        {what, " '", path, "'", errnum != 0 ? ": " : "", errnum != 0 ? std::strerror(errnum) : ""}));
  }
  std::string path_;
  int errno_;
};

// A command run through a pipe that exited with a non-zero status or was killed. Every byte
// was handed to it (or read from it); what it did with them is in doubt.
class command_error : public io_error {
 public:
  // The failure of `command`, told by `what` ("command exited with status 3:").
  command_error(std::string command, std::string_view what) : io_error(std::move(command), 0, what) {}
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
  // The message reads "format error in 'path' at byte N (key 'k'): expected X, found Y", each
  // part shown only when known, the key cut to max_quoted_key_bytes.
  format_error(error_location where, std::string expected, std::string found)
      : error(compose(where, expected, found)),
        where_(std::move(where)),
        expected_(std::move(expected)),
        found_(std::move(found)) {}

  // The file or stream name the bad bytes came from.
  const std::string& path() const noexcept { return where_.path; }
  // Byte offset of the bad bytes from the start of the stream; empty when it is not known.
  std::optional<std::uint64_t> offset() const noexcept { return where_.offset; }
  // The table key the bad bytes were read under, whole (the message quotes only its start);
  // empty when none is known.
  const std::string& key() const noexcept { return where_.key; }
  // What the format called for at that point ("a binary marker", "record data whose CRC
  // matches").
  const std::string& expected() const noexcept { return expected_; }
  // What was there instead, as the message shows it (an excerpt, not the input whole).
  const std::string& found() const noexcept { return found_; }
  // Path, offset and key together, to rethrow the error elsewhere or with another key.
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
    return detail::printable(detail::join({"format error in '", w.path, "'", w.offset ? " at byte " : "",
                                           w.offset ? std::string_view(offset) : "", key ? " (key '" : "",
                                           key ? excerpt(w.key, max_quoted_key_bytes) : std::string(),
                                           key ? "')" : "", ": expected ", expected, ", found ", found}));
  }
  error_location where_;
  std::string expected_;
  std::string found_;
};

// A TensorFlow DATA_LOSS condition in a TFRecord file. found() is TensorFlow's message
// ("corrupted record at 115", "truncated record at 901"). A corrupted header or truncated data
// end the file's records; a record whose data fails its CRC is that record's error alone.
class data_loss_error : public format_error {
 public:
  // Which check failed: the length header's CRC, the data's length (the file ends inside the
  // record), or the data's CRC.
  enum class cause { corrupted_header, truncated_data, corrupted_data };
  // A format_error whose message names expected and found, and which says why it happened.
  data_loss_error(error_location where, std::string expected, std::string found, enum cause c)
      : format_error(std::move(where), std::move(expected), std::move(found)), cause_(c) {}
  // Which check failed: only corrupted_data leaves the records after this one readable.
  enum cause cause() const noexcept { return cause_; }

 private:
  enum cause cause_;
};

// The record whose data starts at `offset` of `path` fails its CRC. (Compiled once in the
// compiled mode: every table of records may throw it.)
#if TABLIO_HEADER_IMPLEMENTATION
[[noreturn]] TABLIO_COLD TABLIO_IMPL void throw_corrupted_record(std::string_view path, std::uint64_t offset,
                                                                 std::string_view key) {
  throw data_loss_error({std::string(path), offset, std::string(key)}, "record data whose CRC matches",
                        detail::join({"corrupted record at ", decimal(offset)}),
                        data_loss_error::cause::corrupted_data);
}
#else
// Throws that data_loss_error (cause corrupted_data), naming `key` when it is not empty.
[[noreturn]] TABLIO_COLD void throw_corrupted_record(std::string_view path, std::uint64_t offset,
                                                     std::string_view key);
#endif

// A key the table has no entry for, asked of random_access_table_reader::at(): the table may
// be perfectly sound (a damaged one is a format_error). find() and borrow() return nothing
// instead of throwing it.
class missing_key_error : public error {
 public:
  // The message names the key (cut to max_quoted_key_bytes) and the table, and `why` in
  // parentheses when given.
  missing_key_error(std::string table, std::string key, std::string_view why = {})
      : error(detail::printable(
            detail::join({"no entry for key '", excerpt(key, max_quoted_key_bytes), "' in '", table, "'",
                          why.empty() ? "" : " (", why, why.empty() ? "" : ")"}))),
        table_(std::move(table)),
        key_(std::move(key)) {}
  // The table's name (its specifier) as the reader was opened with it.
  const std::string& table() const noexcept { return table_; }
  // The key asked for, whole.
  const std::string& key() const noexcept { return key_; }

 private:
  std::string table_;
  std::string key_;
};

// Throws a usage_error whose message joins the pieces of `what`, control characters escaped and
// URL credentials removed. Cold, so that a check costs its caller one branch and a call.
[[noreturn]] TABLIO_COLD inline void throw_usage_error(message what) {
  throw usage_error(detail::printable(detail::join(what)));
}
// Throws a key_error whose message joins the pieces of `what`, escaped as throw_usage_error's.
[[noreturn]] TABLIO_COLD inline void throw_key_error(message what) {
  throw key_error(detail::printable(detail::join(what)));
}
// Throws an io_error: "what 'path': strerror(errnum)", the strerror part left out when errnum
// is 0.
[[noreturn]] TABLIO_COLD inline void throw_io_error(std::string_view path, int errnum, message what) {
  throw io_error(std::string(path), errnum, detail::join(what));
}
// Throws a command_error: "what 'command'".
[[noreturn]] TABLIO_COLD inline void throw_command_error(std::string_view command, message what) {
  throw command_error(std::string(command), detail::join(what));
}
// Throws a format_error at `offset` of `path` (key empty when none is known), the pieces of
// `expected` and `found` joined.
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
  return detail::atomic_exchange<detail::order::acq_rel>(detail::current_reporter,
                                                         r ? r : &detail::print_error);
}
// Passes text to the installed reporter: how a failure that cannot be thrown is told.
inline void report_error(const char* text) noexcept {
  detail::atomic_load<detail::order::acquire>(detail::current_reporter)(text);
}

TABLIO_END_NAMESPACE
