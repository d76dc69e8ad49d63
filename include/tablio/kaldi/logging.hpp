// Kaldi's base/kaldi-error.h over tablio: KaldiFatalError, the program name and verbose level,
// the KALDI_LOG / KALDI_WARN / KALDI_VLOG / KALDI_ERR / KALDI_ASSERT macros with Kaldi's
// message format on std::cerr, and SetLogHandler to send the messages elsewhere.
//
// A message is collected with operator<< into a MessageLogger, and handed on by an operator&
// whose precedence is lower than <<'s: the whole macro is one expression, so that
//   if (c) KALDI_WARN << x; else ...
// keeps its else, and KALDI_ERR throws only once every << of the statement has run.
#pragma once

#include <tablio/core/atomics.hpp>
#include <tablio/core/config.hpp>
#include <tablio/core/version.hpp>
#include <tablio/kaldi/base.hpp>

#include <cstdlib>
#include <iostream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

TABLIO_BEGIN_NAMESPACE

namespace kaldi {

// What KALDI_ERR throws: what() is "kaldi::KaldiFatalError", as Kaldi's; the message is
// KaldiMessage() (it was logged already, as an ERROR line, when the exception was thrown).
class KaldiFatalError : public std::runtime_error {
 public:
  // An error carrying message as its KaldiMessage().
  explicit KaldiFatalError(const std::string& message)
      : std::runtime_error("kaldi::KaldiFatalError"), message_(message) {}
  // An error carrying message as its KaldiMessage().
  explicit KaldiFatalError(const char* message)
      : std::runtime_error("kaldi::KaldiFatalError"), message_(message) {}
  // The message KALDI_ERR was given.
  const char* KaldiMessage() const noexcept { return message_.what(); }

 private:
  // A runtime_error holds the text because copying one cannot throw (its string is shared),
  // as an exception's copy must not.
  std::runtime_error message_;
};

// Where a message comes from and how severe it is: what a LogHandler receives with the text.
struct LogMessageEnvelope {
  // The severities; a KALDI_VLOG(v) message has severity v (positive).
  enum Severity { kAssertFailed = -3, kError = -2, kWarning = -1, kInfo = 0 };
  int severity;      // a Severity, or the verbose level of a KALDI_VLOG message
  const char* func;  // the function the macro was in (__func__)
  const char* file;  // the source file's name, without its directories
  int32 line;        // the line of the macro
};

// A function that receives every message instead of std::cerr; the message has no trailing
// newline.
using LogHandler = void (*)(const LogMessageEnvelope& envelope, const char* message);

// Installs handler (nullptr: back to std::cerr) and returns the one it replaces. KALDI_ERR
// still throws, and a failed KALDI_ASSERT still aborts, after the handler returns.
TABLIO_IMPL LogHandler SetLogHandler(LogHandler handler) noexcept;

// Sets the program's name (without its directory; ParseOptions::Read sets it from argv[0]),
// which every message then shows. Not for use while other threads log: it is set once, early.
TABLIO_IMPL void SetProgramName(const char* basename);
// The program's name as SetProgramName set it; empty when it was never set.
TABLIO_IMPL std::string GetProgramName();

namespace detail {
// The verbose level, read and written atomically (threads log while a caller changes it).
// ParseOptions registers it as --verbose, and sets it with SetVerboseLevel.
inline int32 verbose_level = 0;
// The installed LogHandler; nullptr for std::cerr.
inline LogHandler log_handler = nullptr;
}  // namespace detail

// The verbose level: KALDI_VLOG(v) messages show when v <= this (--verbose sets it).
inline int32 GetVerboseLevel() noexcept {
  return ::tablio::detail::atomic_load<::tablio::detail::order::relaxed>(detail::verbose_level);
}
// Sets the verbose level; command-line programs get it from --verbose instead.
inline void SetVerboseLevel(int32 level) noexcept {
  ::tablio::detail::atomic_store<::tablio::detail::order::relaxed>(detail::verbose_level, level);
}

namespace detail {

// One message being written: the macros create it, collect the text with <<, and pass it to
// one of the three finishers below.
class MessageLogger {
 public:
  // A message of the given severity from func in file (a path: only its last part is kept).
  MessageLogger(int severity, const char* func, const char* file, int32 line);
  MessageLogger(const MessageLogger&) = delete;
  MessageLogger& operator=(const MessageLogger&) = delete;
  ~MessageLogger();
  // Appends value as an ostream prints it.
  template <class T>
  MessageLogger& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }
  // Applies std::endl, std::flush or std::ends: function templates, which the template above
  // cannot take.
  MessageLogger& operator<<(std::ostream& (*manipulator)(std::ostream&)) {
    stream_ << manipulator;
    return *this;
  }
  // Where the message comes from.
  const LogMessageEnvelope& Envelope() const noexcept { return envelope_; }
  // The text so far, trailing newlines removed as Kaldi removes them.
  std::string Text() const;

 private:
  LogMessageEnvelope envelope_;
  std::ostringstream stream_;
};

// Finishes KALDI_LOG, KALDI_WARN and KALDI_VLOG: sends the message to the handler or std::cerr.
struct MessageSender {
  void operator&(const MessageLogger& message) const;
};
// Finishes KALDI_ERR: sends the message, then throws KaldiFatalError with it.
struct ErrorThrower {
  [[noreturn]] TABLIO_RARELY_USED void operator&(const MessageLogger& message) const;
};

// Sends an envelope and its text to the installed handler, or to std::cerr in Kaldi's format.
TABLIO_IMPL void SendToLog(const LogMessageEnvelope& envelope, const char* message);
// What a failed KALDI_ASSERT calls: logs "Assertion failed: (cond)", then aborts.
[[noreturn]] TABLIO_RARELY_USED TABLIO_IMPL void AssertFailed(const char* func, const char* file, int32 line,
                                                              const char* condition);

// Compares two strings ignoring ASCII case, as strcasecmp does in the "C" locale: <0, 0, >0.
inline int StrCaseCmp(const char* a, const char* b) noexcept {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : static_cast<unsigned char>(c); };
  for (;; ++a, ++b) {
    int ca = lower(*a), cb = lower(*b);
    if (ca != cb || ca == 0) return ca - cb;
  }
}

}  // namespace detail

}  // namespace kaldi

TABLIO_END_NAMESPACE

// Logs a message: KALDI_LOG << "Copied " << n << " matrices.";
#define KALDI_LOG                                                                                            \
  ::tablio::kaldi::detail::MessageSender() &                                                                 \
      ::tablio::kaldi::detail::MessageLogger(::tablio::kaldi::LogMessageEnvelope::kInfo, __func__, __FILE__, \
                                             __LINE__)
// Logs a warning: KALDI_WARN << "No such key " << key;
#define KALDI_WARN                                                                                    \
  ::tablio::kaldi::detail::MessageSender() &                                                          \
      ::tablio::kaldi::detail::MessageLogger(::tablio::kaldi::LogMessageEnvelope::kWarning, __func__, \
                                             __FILE__, __LINE__)
// Logs an error and throws KaldiFatalError with it, once the statement's << have run.
#define KALDI_ERR                                                                                   \
  ::tablio::kaldi::detail::ErrorThrower() &                                                         \
      ::tablio::kaldi::detail::MessageLogger(::tablio::kaldi::LogMessageEnvelope::kError, __func__, \
                                             __FILE__, __LINE__)
// Logs a message when v <= GetVerboseLevel(); otherwise neither the message nor its << run.
#define KALDI_VLOG(v)                                                         \
  static_cast<::tablio::kaldi::int32>(v) > ::tablio::kaldi::GetVerboseLevel() \
      ? static_cast<void>(0)                                                  \
      : ::tablio::kaldi::detail::MessageSender() &                            \
            ::tablio::kaldi::detail::MessageLogger(static_cast<int>(v), __func__, __FILE__, __LINE__)
// Logs "Assertion failed: (cond)" and aborts when cond is false, in every build (as Kaldi's).
#define KALDI_ASSERT(cond) \
  ((cond) ? static_cast<void>(0) : ::tablio::kaldi::detail::AssertFailed(__func__, __FILE__, __LINE__, #cond))
// KALDI_ASSERT when KALDI_PARANOID is defined; otherwise cond is not evaluated.
#if defined(KALDI_PARANOID)
#define KALDI_PARANOID_ASSERT(cond) KALDI_ASSERT(cond)
#else
#define KALDI_PARANOID_ASSERT(cond) static_cast<void>(0)
#endif
// A condition checked at compile time.
#define KALDI_COMPILE_TIME_ASSERT(b) static_assert(b, "KALDI_COMPILE_TIME_ASSERT(" #b ")")
// Fails to compile unless T is an integer type.
#define KALDI_ASSERT_IS_INTEGER_TYPE(T)                                                       \
  static_assert(std::numeric_limits<T>::is_specialized && std::numeric_limits<T>::is_integer, \
                #T " is not an integer type")
// Fails to compile unless T is a floating-point type.
#define KALDI_ASSERT_IS_FLOATING_TYPE(T)                                                       \
  static_assert(std::numeric_limits<T>::is_specialized && !std::numeric_limits<T>::is_integer, \
                #T " is not a floating-point type")
// Deletes a class's copy constructor and copy assignment (write it in the class, with a ';').
#define KALDI_DISALLOW_COPY_AND_ASSIGN(type) \
  type(const type&) = delete;                \
  type& operator=(const type&) = delete
// strcasecmp, portably: ASCII letters compared without case.
#define KALDI_STRCASECMP ::tablio::kaldi::detail::StrCaseCmp

#if TABLIO_HEADER_IMPLEMENTATION
TABLIO_BEGIN_NAMESPACE

namespace kaldi {

namespace detail {

// The program name's storage, made on first use (messages may come from static initializers).
TABLIO_IMPL std::string& ProgramName() {
  static std::string name;
  return name;
}

// The version every message shows after the program name, "tablio-1.2.3".
#define TABLIO_KALDI_STRINGIFY_(x) #x
#define TABLIO_KALDI_STRINGIFY(x) TABLIO_KALDI_STRINGIFY_(x)
inline constexpr char kVersionTag[] =
    "tablio-" TABLIO_KALDI_STRINGIFY(TABLIO_VERSION_MAJOR) "." TABLIO_KALDI_STRINGIFY(
        TABLIO_VERSION_MINOR) "." TABLIO_KALDI_STRINGIFY(TABLIO_VERSION_PATCH);
#undef TABLIO_KALDI_STRINGIFY
#undef TABLIO_KALDI_STRINGIFY_

// The last part of a path, after its last '/' or '\\' (MSVC's __FILE__ has backslashes).
TABLIO_IMPL const char* BaseName(const char* path) noexcept {
  const char* base = path;
  for (const char* p = path; *p; ++p)
    if (*p == '/' || *p == '\\') base = p + 1;
  return base;
}

TABLIO_IMPL MessageLogger::MessageLogger(int severity, const char* func, const char* file, int32 line)
    : envelope_{severity, func, BaseName(file), line} {}
TABLIO_IMPL MessageLogger::~MessageLogger() = default;
TABLIO_IMPL std::string MessageLogger::Text() const {
  std::string text = stream_.str();
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

TABLIO_IMPL void MessageSender::operator&(const MessageLogger& message) const {
  SendToLog(message.Envelope(), message.Text().c_str());
}
TABLIO_IMPL void ErrorThrower::operator&(const MessageLogger& message) const {
  std::string text = message.Text();
  SendToLog(message.Envelope(), text.c_str());
  throw KaldiFatalError(text);
}

TABLIO_IMPL void SendToLog(const LogMessageEnvelope& envelope, const char* message) {
  if (LogHandler handler = ::tablio::detail::atomic_load<::tablio::detail::order::acquire>(log_handler)) {
    handler(envelope, message);
    return;
  }
  std::ostringstream line;
  switch (envelope.severity) {
    case LogMessageEnvelope::kInfo:
      line << "LOG (";
      break;
    case LogMessageEnvelope::kWarning:
      line << "WARNING (";
      break;
    case LogMessageEnvelope::kError:
      line << "ERROR (";
      break;
    case LogMessageEnvelope::kAssertFailed:
      line << "ASSERTION_FAILED (";
      break;
    default:
      if (envelope.severity > 0)
        line << "VLOG[" << envelope.severity << "] (";
      else
        line << "ERROR (";
  }
  const std::string& program = ProgramName();
  if (!program.empty()) line << program << '[' << kVersionTag << "]:";
  line << envelope.func << "():" << envelope.file << ':' << envelope.line << ") " << message << '\n';
  // Kaldi follows an error with a stack trace; a blank line stands where it would be.
  if (envelope.severity == LogMessageEnvelope::kError) line << '\n';
  // One write, so that messages from several threads do not interleave within a line.
  const std::string text = line.str();
  std::cerr.write(text.data(), static_cast<std::streamsize>(text.size()));
  std::cerr.flush();
}

TABLIO_IMPL void AssertFailed(const char* func, const char* file, int32 line, const char* condition) {
  {
    MessageLogger message(LogMessageEnvelope::kAssertFailed, func, file, line);
    message << "Assertion failed: (" << condition << ")";
    SendToLog(message.Envelope(), message.Text().c_str());
  }
  std::abort();
}

}  // namespace detail

TABLIO_IMPL LogHandler SetLogHandler(LogHandler handler) noexcept {
  return ::tablio::detail::atomic_exchange<::tablio::detail::order::acq_rel>(detail::log_handler, handler);
}

TABLIO_IMPL void SetProgramName(const char* basename) { detail::ProgramName() = basename ? basename : ""; }
TABLIO_IMPL std::string GetProgramName() { return detail::ProgramName(); }

}  // namespace kaldi

TABLIO_END_NAMESPACE
#endif  // TABLIO_HEADER_IMPLEMENTATION
