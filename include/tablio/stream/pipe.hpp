// Pipes to and from shell commands: `cmd |` as input, `| cmd` as output.
//
// A command's exit status is judged when its output was read to the end: one that exits
// non-zero (or is killed) is then an io_error at close. A reader that stops early, by error or
// by choice, closes its end and lets the command end (of SIGPIPE, which is then no failure),
// so an endless or huge command never holds it. Writes to an output pipe whose command has
// exited fail with EPIPE instead of killing this process.
#pragma once

#include <tablio/core/error.hpp>
#include <tablio/core/minmax.hpp>
#include <tablio/stream/platform/command.hpp>
#include <tablio/stream/platform/file_io.hpp>

#include <cerrno>
#include <cstdint>
#include <string>
#include <utility>

TABLIO_BEGIN_NAMESPACE

// Standard output of `command` (run by the system's shell: /bin/sh, cmd.exe). It models the
// Source concept (closable).
class pipe_source {
 public:
  // Starts command, reading what it writes; io_error when it cannot start.
  explicit pipe_source(std::string command)
      : pipe_(std::move(command), detail::process_pipe::direction::from_command) {}

  // The Source concept: reads up to n bytes of the command's output into dst; 0 at its end.
  std::size_t read_some(char* dst, std::size_t n) {
    const std::int64_t got = detail::os::read_file(pipe_.fd(), dst, n);
    if (got < 0) throw_io_error(pipe_.command(), errno, {"cannot read from command"});
    if (got == 0) ended_ = true;
    return static_cast<std::size_t>(got);
  }
  // Waits for the command; throws if it failed and its output was read to the end. A table
  // may end before its bytes do (a tar file's padding), so a little more is read first to
  // find the end; a reader that stopped early leaves the rest unread.
  void close() {
    char rest[4096];
    for (std::size_t left = std::size_t{1} << 16; !ended_ && left > 0;) {
      const std::size_t got = read_some(rest, detail::min_of(sizeof rest, left));
      left -= got;
    }
    pipe_.finish(ended_);
  }

 private:
  detail::process_pipe pipe_;
  bool ended_ = false;
};

// Standard input of `command` (run by the system's shell). It models the Sink concept
// (closable).
class pipe_sink {
 public:
  // Starts command, writing to what it reads; io_error when it cannot start.
  explicit pipe_sink(std::string command)
      : pipe_(std::move(command), detail::process_pipe::direction::to_command) {}

  // The Sink concept: writes all n bytes at src to the command; an io_error when the command has
  // exited (its exit status explains it when it failed).
  void write(const char* src, std::size_t n) {
    if (!pipe_.is_open()) throw_io_error(pipe_.command(), EPIPE, {"cannot write to command"});
    detail::sigpipe_guard guard;
    while (n > 0) {
      const std::int64_t put = detail::os::write_file(pipe_.fd(), src, n);
      if (put < 0) {
        int e = errno;
        // The command's own failure (its exit status) explains an EPIPE better than EPIPE.
        pipe_.finish(true);
        throw_io_error(pipe_.command(), e, {"cannot write to command"});
      }
      src += put;
      n -= static_cast<std::size_t>(put);
    }
  }
  // The Sink concept: nothing to do, as nothing is buffered here.
  void flush() {}
  // Closes the command's input, waits for it, throws if it failed.
  void close() { pipe_.finish(true); }

 private:
  detail::process_pipe pipe_;
};

TABLIO_END_NAMESPACE
