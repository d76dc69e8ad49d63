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

#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <string>
#include <utility>

#if defined(__APPLE__)
#include <crt_externs.h>  // a shared library (the Python module) has no `environ` of its own there
#else
extern char** environ;  // POSIX defines it; not every <unistd.h> declares it
#endif

// pipe2 opens both ends closed-on-exec at once where it exists; elsewhere (macOS) the flag is set
// after, under a lock that every command tablio starts takes too. TABLIO_POSIX_ONLY takes that
// path on any system (the pipe and fault tests pass so).
#if (defined(__linux__) || defined(__FreeBSD__) || defined(__NetBSD__) || defined(__OpenBSD__)) && \
    !defined(TABLIO_POSIX_ONLY)
#define TABLIO_HAVE_PIPE2 1
#else
#include <tablio/core/mutex.hpp>
#endif

TABLIO_BEGIN_NAMESPACE

namespace detail {

inline char** process_environment() noexcept {
#if defined(__APPLE__)
  return *_NSGetEnviron();
#else
  return environ;
#endif
}

#if !defined(TABLIO_HAVE_PIPE2)
inline mutex& spawn_mutex() noexcept {
  static mutex m;
  return m;
}
#endif

// A pipe whose two ends a command started later does not inherit.
inline int open_cloexec_pipe(int ends[2]) noexcept {
#if defined(TABLIO_HAVE_PIPE2)
  return ::pipe2(ends, O_CLOEXEC);
#else
  if (::pipe(ends) != 0) return -1;
  for (int i = 0; i < 2; ++i) {
    if (::fcntl(ends[i], F_SETFD, FD_CLOEXEC) != 0) {
      const int e = errno;
      ::close(ends[0]);
      ::close(ends[1]);
      errno = e;
      return -1;
    }
  }
  return 0;
#endif
}

// The command belongs to the process that started it: one that inherited the pipe by fork()
// only closes its copy, never reads the rest of the output (the parent's) or waits.
class process_pipe {
 public:
  enum class direction { from_command, to_command };

  // Runs `command` under /bin/sh with its standard output (or input) joined to this end. The
  // command starts with SIGPIPE at its default and unblocked, whatever this process does with
  // it (Python ignores it): a command whose reader has gone ends, as in a shell.
  process_pipe(std::string command, direction d)
      : command_(std::move(command)), owner_(::getpid()), direction_(d) {
    std::fflush(nullptr);  // the child must not inherit and re-flush our stdio buffers
#if !defined(TABLIO_HAVE_PIPE2)
    lock hold(spawn_mutex());  // no other command of ours starts between pipe() and fcntl()
#endif
    int ends[2];
    if (open_cloexec_pipe(ends) != 0) throw_io_error(command_, errno, {"cannot start command"});
    const bool from = d == direction::from_command;
    const int ours = ends[from ? 0 : 1], theirs = ends[from ? 1 : 0];
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawnattr_init(&attributes);
    ::posix_spawn_file_actions_adddup2(&actions, theirs, from ? STDOUT_FILENO : STDIN_FILENO);
    sigset_t none, pipe_signal;
    sigemptyset(&none);
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    ::posix_spawnattr_setsigmask(&attributes, &none);
    ::posix_spawnattr_setsigdefault(&attributes, &pipe_signal);
    ::posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    char shell[] = "sh", dash_c[] = "-c";
    char* argv[] = {shell, dash_c, command_.data(), nullptr};
    const int failed = ::posix_spawn(&pid_, "/bin/sh", &actions, &attributes, argv, process_environment());
    ::posix_spawn_file_actions_destroy(&actions);
    ::posix_spawnattr_destroy(&attributes);
    ::close(theirs);
    if (failed != 0) {
      ::close(ours);
      throw_io_error(command_, failed, {"cannot start command"});
    }
    fd_ = ours;
  }
  process_pipe(process_pipe&& o) noexcept
      : command_(std::move(o.command_)),
        fd_(std::exchange(o.fd_, -1)),
        pid_(o.pid_),
        owner_(o.owner_),
        direction_(o.direction_) {}
  process_pipe& operator=(process_pipe&&) = delete;
  // Waits for a command not closed: an output's failure is reported (nothing can throw here),
  // an input's was not asked for.
  ~process_pipe() {
    if (fd_ >= 0) {
      try {
        finish(direction_ == direction::to_command);
      } catch (const std::exception& e) {
        report_error(e.what());
      }
    }
  }

  int fd() const noexcept { return fd_; }
  const std::string& command() const noexcept { return command_; }
  bool is_open() const noexcept { return fd_ >= 0; }

  // Closes this end, waits for the command and, when `judge`, throws if it failed.
  void finish(bool judge) {
    if (fd_ < 0) return;
    ::close(std::exchange(fd_, -1));
    if (::getpid() != owner_) return;
    int status = 0;
    pid_t waited;
    while ((waited = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
    }
    if (!judge) return;
    if (waited < 0) throw_io_error(command_, errno, {"cannot wait for command"});
    if (WIFSIGNALED(status))
      throw_io_error(command_, 0, {"command killed by signal ", decimal(WTERMSIG(status)), ":"});
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
      throw_io_error(command_, 0, {"command exited with status ", decimal(WEXITSTATUS(status)), ":"});
  }

 private:
  std::string command_;
  int fd_ = -1;
  pid_t pid_ = -1;
  pid_t owner_;
  direction direction_;
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
    sigset_t pending;
    int taken;
    // sigwait returns at once for a pending signal (POSIX has no sigtimedwait on macOS).
    if (!was_pending_ && sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1)
      sigwait(&pipe_, &taken);
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
  explicit pipe_source(std::string command)
      : pipe_(std::move(command), detail::process_pipe::direction::from_command) {}

  std::size_t read_some(char* dst, std::size_t n) {
    for (;;) {
      ssize_t got = ::read(pipe_.fd(), dst, n);
      if (got == 0) ended_ = true;
      if (got >= 0) return static_cast<std::size_t>(got);
      if (errno != EINTR) throw_io_error(pipe_.command(), errno, {"cannot read from command"});
    }
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

// Standard input of `command` (run by /bin/sh).
class pipe_sink {
 public:
  explicit pipe_sink(std::string command)
      : pipe_(std::move(command), detail::process_pipe::direction::to_command) {}

  void write(const char* src, std::size_t n) {
    if (!pipe_.is_open()) throw_io_error(pipe_.command(), EPIPE, {"cannot write to command"});
    detail::sigpipe_guard guard;
    while (n > 0) {
      ssize_t put = ::write(pipe_.fd(), src, n);
      if (put < 0) {
        if (errno == EINTR) continue;
        int e = errno;
        // The command's own failure (its exit status) explains an EPIPE better than EPIPE.
        pipe_.finish(true);
        throw_io_error(pipe_.command(), e, {"cannot write to command"});
      }
      src += put;
      n -= static_cast<std::size_t>(put);
    }
  }
  void flush() {}
  // Closes the command's input, waits for it, throws if it failed.
  void close() { pipe_.finish(true); }

 private:
  detail::process_pipe pipe_;
};

TABLIO_END_NAMESPACE
