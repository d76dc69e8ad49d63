// Pipes to and from shell commands: `cmd |` as input, `| cmd` as output (popen).
//
// An input pipe is read to its end before it is closed, so the command never dies of
// SIGPIPE; a command that exits non-zero (or is killed) is an io_error at close. Writes to an
// output pipe whose command has exited fail with EPIPE instead of killing this process.
#pragma once

#include <tablio/core/error.hpp>

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <string>
#include <utility>

TABLIO_BEGIN_NAMESPACE

namespace detail {

// The command belongs to the process that started it: one that inherited the pipe by fork()
// only closes its copy, never reads the rest of the output (the parent's) or waits.
class process_pipe {
 public:
  process_pipe(std::string command, const char* mode) : command_(std::move(command)), owner_(::getpid()) {
    std::fflush(nullptr);  // the child must not inherit and re-flush our stdio buffers
    file_ = ::popen(command_.c_str(), mode);
    if (!file_) throw_io_error(command_, errno, {"cannot start command"});
  }
  process_pipe(process_pipe&& o) noexcept
      : command_(std::move(o.command_)), file_(std::exchange(o.file_, nullptr)), owner_(o.owner_) {}
  process_pipe& operator=(process_pipe&&) = delete;
  ~process_pipe() {
    if (file_) {
      try {
        finish(true);
      } catch (const std::exception& e) {
        report_error(e.what());
      }
    }
  }

  int fd() const noexcept { return ::fileno(file_); }
  const std::string& command() const noexcept { return command_; }
  bool is_open() const noexcept { return file_ != nullptr; }

  // Waits for the command and throws if it failed.
  void finish(bool drain) {
    if (!file_) return;
    if (::getpid() != owner_) {
      ::close(::fileno(std::exchange(file_, nullptr)));  // the FILE itself is the parent's to free
      return;
    }
    if (drain) {
      char buf[65536];
      while (true) {
        ssize_t got = ::read(fd(), buf, sizeof buf);
        if (got == 0 || (got < 0 && errno != EINTR)) break;
      }
    }
    int status = ::pclose(std::exchange(file_, nullptr));
    if (status == -1) throw_io_error(command_, errno, {"cannot wait for command"});
    if (WIFSIGNALED(status))
      throw_io_error(command_, 0, {"command killed by signal ", decimal(WTERMSIG(status)), ":"});
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
      throw_io_error(command_, 0, {"command exited with status ", decimal(WEXITSTATUS(status)), ":"});
  }

 private:
  std::string command_;
  FILE* file_ = nullptr;
  pid_t owner_;
};

// Blocks SIGPIPE in this thread for its lifetime and discards one raised meanwhile, so that a
// write to a dead pipe reports EPIPE instead of terminating the process.
class sigpipe_guard {
 public:
  sigpipe_guard() noexcept {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~sigpipe_guard() {
    if (!was_pending_) {
      timespec zero{0, 0};
      while (sigtimedwait(&pipe_, nullptr, &zero) > 0) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  sigpipe_guard(const sigpipe_guard&) = delete;
  sigpipe_guard& operator=(const sigpipe_guard&) = delete;

 private:
  sigset_t pipe_, old_;
  bool was_pending_ = false;
};

}  // namespace detail

// Standard output of `command` (run by /bin/sh).
class pipe_source {
 public:
  explicit pipe_source(std::string command) : pipe_(std::move(command), "re") {}

  std::size_t read_some(char* dst, std::size_t n) {
    for (;;) {
      ssize_t got = ::read(pipe_.fd(), dst, n);
      if (got >= 0) return static_cast<std::size_t>(got);
      if (errno != EINTR) throw_io_error(pipe_.command(), errno, {"cannot read from command"});
    }
  }
  // Reads the rest of the output, waits for the command, throws if it failed.
  void close() { pipe_.finish(true); }

 private:
  detail::process_pipe pipe_;
};

// Standard input of `command` (run by /bin/sh).
class pipe_sink {
 public:
  explicit pipe_sink(std::string command) : pipe_(std::move(command), "we") {}

  void write(const char* src, std::size_t n) {
    if (!pipe_.is_open()) throw_io_error(pipe_.command(), EPIPE, {"cannot write to command"});
    detail::sigpipe_guard guard;
    while (n > 0) {
      ssize_t put = ::write(pipe_.fd(), src, n);
      if (put < 0) {
        if (errno == EINTR) continue;
        int e = errno;
        // The command's own failure (its exit status) explains an EPIPE better than EPIPE.
        pipe_.finish(false);
        throw_io_error(pipe_.command(), e, {"cannot write to command"});
      }
      src += put;
      n -= static_cast<std::size_t>(put);
    }
  }
  void flush() {}
  // Closes the command's input, waits for it, throws if it failed.
  void close() { pipe_.finish(false); }

 private:
  detail::process_pipe pipe_;
};

TABLIO_END_NAMESPACE
