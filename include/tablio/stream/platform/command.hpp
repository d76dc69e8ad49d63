// Commands run by the system's shell with a pipe to their standard output or input: /bin/sh
// through posix_spawn on POSIX; cmd.exe through CreateProcessW on Win32, in a job object so that
// a command abandoned by its reader ends with everything it started.
#pragma once

#include <tablio/core/error.hpp>
#include <tablio/stream/platform/file_io.hpp>

#include <cerrno>
#include <cstdio>
#include <string>
#include <utility>

#if !defined(_WIN32)
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>

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
#endif

TABLIO_BEGIN_NAMESPACE

namespace detail {

#if defined(_WIN32)

// A command run by cmd.exe (%ComSpec%), in a job object that ends it and all it starts when the
// job is closed. It belongs to the process that started it (Win32 has no fork() to copy it).
class started_command {
 public:
  started_command() noexcept = default;
  started_command(started_command&& o) noexcept
      : process_(std::exchange(o.process_, nullptr)), job_(std::exchange(o.job_, nullptr)) {}
  started_command& operator=(started_command&&) = delete;
  ~started_command() {
    if (job_) ::CloseHandle(job_);  // kills what is left of an abandoned command
    if (process_) ::CloseHandle(process_);
  }

  // Starts `command` with its standard output (`from`) or input joined to a new pipe, whose
  // other end it returns; the command inherits that end and the standard handles, nothing else.
  os::native_file start(const std::string& command, bool from) {
    SECURITY_ATTRIBUTES inheritable{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
    HANDLE read_end, write_end;
    if (!::CreatePipe(&read_end, &write_end, &inheritable, 0)) fail_to_start(command);
    HANDLE ours = from ? read_end : write_end, theirs = from ? write_end : read_end;
    ::SetHandleInformation(ours, HANDLE_FLAG_INHERIT, 0);
    const bool started = run(command, theirs, from);
    const DWORD error = ::GetLastError();
    ::CloseHandle(theirs);
    if (!started) {
      ::CloseHandle(ours);
      ::SetLastError(error);
      fail_to_start(command);
    }
    return ours;
  }

  // Once its pipe is closed: waits for the command and, when `judge`, throws if it failed. A
  // command not judged (its reader stopped early) is ended, as a POSIX one ends of SIGPIPE.
  void end(const std::string& command, bool judge) {
    if (!judge) job_ ? ::TerminateJobObject(job_, 1) : ::TerminateProcess(process_, 1);
    DWORD status = 0;
    const bool waited =
        ::WaitForSingleObject(process_, INFINITE) == WAIT_OBJECT_0 && ::GetExitCodeProcess(process_, &status);
    const int error = waited ? 0 : os::win32::errno_of(::GetLastError());
    ::CloseHandle(std::exchange(process_, nullptr));
    if (!judge) return;
    if (!waited) throw_io_error(command, error, {"cannot wait for command"});
    if (status != 0)
      throw_command_error(command, {"command exited with status ", decimal(std::uint64_t{status}), ":"});
  }

 private:
  [[noreturn]] static void fail_to_start(const std::string& command) {
    throw_io_error(command, os::win32::errno_of(::GetLastError()), {"cannot start command"});
  }

  // Starts the command suspended, puts it in its job, then lets it run. Only `theirs` and the
  // standard handles are inherited (listed: a pipe another thread makes meanwhile stays out).
  bool run(const std::string& command, HANDLE theirs, bool from) {
    STARTUPINFOEXW info{};
    info.StartupInfo.cb = sizeof info;
    info.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
    info.StartupInfo.hStdInput = from ? ::GetStdHandle(STD_INPUT_HANDLE) : theirs;
    info.StartupInfo.hStdOutput = from ? theirs : ::GetStdHandle(STD_OUTPUT_HANDLE);
    info.StartupInfo.hStdError = ::GetStdHandle(STD_ERROR_HANDLE);
    HANDLE inherited[3];
    DWORD count = 0;
    for (HANDLE h : {info.StartupInfo.hStdInput, info.StartupInfo.hStdOutput, info.StartupInfo.hStdError}) {
      DWORD flags = 0;
      bool listed = false;
      for (DWORD i = 0; i < count; ++i) listed = listed || inherited[i] == h;
      if (h && h != INVALID_HANDLE_VALUE && !listed && ::GetHandleInformation(h, &flags) &&
          (flags & HANDLE_FLAG_INHERIT))
        inherited[count++] = h;
    }
    SIZE_T size = 0;
    ::InitializeProcThreadAttributeList(nullptr, 1, 0, &size);
    std::string attributes(size, '\0');
    auto* list = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(attributes.data());
    if (!::InitializeProcThreadAttributeList(list, 1, 0, &size)) return false;
    info.lpAttributeList = list;
    bool started = ::UpdateProcThreadAttribute(list, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherited,
                                               count * sizeof(HANDLE), nullptr, nullptr);
    std::wstring shell(MAX_PATH, L'\0');
    DWORD n = ::GetEnvironmentVariableW(L"ComSpec", shell.data(), MAX_PATH);
    shell = n > 0 && n < MAX_PATH ? shell.substr(0, n) : std::wstring(L"cmd.exe");
    // /s: the quotes around the command are cmd's own, whatever the command quotes itself.
    std::wstring line = L"\"" + shell + L"\" /d /s /c \"" + os::win32::wide(command) + L"\"";
    PROCESS_INFORMATION process{};
    started = started && ::CreateProcessW(shell.c_str(), line.data(), nullptr, nullptr, TRUE,
                                          EXTENDED_STARTUPINFO_PRESENT | CREATE_SUSPENDED, nullptr, nullptr,
                                          &info.StartupInfo, &process);
    ::DeleteProcThreadAttributeList(list);
    if (!started) return false;
    process_ = process.hProcess;
    job_ = ::CreateJobObjectW(nullptr, nullptr);
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
    limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    if (job_ &&
        (!::SetInformationJobObject(job_, JobObjectExtendedLimitInformation, &limits, sizeof limits) ||
         !::AssignProcessToJobObject(job_, process.hProcess))) {
      ::CloseHandle(job_);  // the command runs all the same, ended by its own means alone
      job_ = nullptr;
    }
    ::ResumeThread(process.hThread);
    ::CloseHandle(process.hThread);
    return true;
  }

  HANDLE process_ = nullptr;
  HANDLE job_ = nullptr;
};

// Win32 has no SIGPIPE: a write to a command that has gone fails with ERROR_NO_DATA (EPIPE).
struct sigpipe_guard {
  sigpipe_guard() noexcept {}  // (not trivial: a guard is never an unused variable)
};

#else

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

// A command run by /bin/sh through posix_spawn. It belongs to the process that started it: one
// that inherited its pipe by fork() only closes its copy, never reads the rest of the output
// (the parent's) or waits.
class started_command {
 public:
  started_command() noexcept = default;
  started_command(started_command&& o) noexcept : pid_(std::exchange(o.pid_, -1)), owner_(o.owner_) {}
  started_command& operator=(started_command&&) = delete;

  // Starts `command` with its standard output (`from`) or input joined to a new pipe, whose
  // other end it returns. The command starts with SIGPIPE at its default and unblocked,
  // whatever this process does with it (Python ignores it): a command whose reader has gone
  // ends, as in a shell.
  os::native_file start(std::string& command, bool from) {
#if !defined(TABLIO_HAVE_PIPE2)
    lock hold(spawn_mutex());  // no other command of ours starts between pipe() and fcntl()
#endif
    int ends[2];
    if (open_cloexec_pipe(ends) != 0) throw_io_error(command, errno, {"cannot start command"});
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
    char* argv[] = {shell, dash_c, command.data(), nullptr};
    const int failed = ::posix_spawn(&pid_, "/bin/sh", &actions, &attributes, argv, process_environment());
    ::posix_spawn_file_actions_destroy(&actions);
    ::posix_spawnattr_destroy(&attributes);
    ::close(theirs);
    if (failed != 0) {
      ::close(ours);
      throw_io_error(command, failed, {"cannot start command"});
    }
    return ours;
  }

  // Once its pipe is closed: waits for the command and, when `judge`, throws if it failed.
  void end(const std::string& command, bool judge) {
    if (::getpid() != owner_) return;
    int status = 0;
    pid_t waited;
    while ((waited = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
    }
    if (!judge) return;
    if (waited < 0) throw_io_error(command, errno, {"cannot wait for command"});
    if (WIFSIGNALED(status))
      throw_command_error(command, {"command killed by signal ", decimal(WTERMSIG(status)), ":"});
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
      throw_command_error(command, {"command exited with status ", decimal(WEXITSTATUS(status)), ":"});
  }

 private:
  pid_t pid_ = -1;
  pid_t owner_ = ::getpid();
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

#endif

// A command with a pipe to its standard output (from_command) or input (to_command).
class process_pipe {
 public:
  enum class direction { from_command, to_command };

  // (Cold, as the other calls made once per command: out of line, not in each opener.)
  TABLIO_COLD process_pipe(std::string command, direction d) : command_(std::move(command)), direction_(d) {
    std::fflush(nullptr);  // the command must not inherit and write again our stdio buffers
    fd_ = command_run_.start(command_, d == direction::from_command);
  }
  process_pipe(process_pipe&& o) noexcept
      : command_(std::move(o.command_)),
        fd_(std::exchange(o.fd_, os::no_file())),
        command_run_(std::move(o.command_run_)),
        direction_(o.direction_) {}
  process_pipe& operator=(process_pipe&&) = delete;
  // Waits for a command not closed: an output's failure is reported (nothing can throw here),
  // an input's was not asked for.
  TABLIO_COLD ~process_pipe() {
    if (is_open()) {
      try {
        finish(direction_ == direction::to_command);
      } catch (const std::exception& e) {
        report_error(e.what());
      }
    }
  }

  os::native_file fd() const noexcept { return fd_; }
  const std::string& command() const noexcept { return command_; }
  bool is_open() const noexcept { return fd_ != os::no_file(); }

  // Closes this end, waits for the command and, when `judge`, throws if it failed.
  TABLIO_COLD void finish(bool judge) {
    if (!is_open()) return;
    os::close_quietly(std::exchange(fd_, os::no_file()));
    command_run_.end(command_, judge);
  }

 private:
  std::string command_;
  os::native_file fd_ = os::no_file();
  started_command command_run_;
  direction direction_;
};

}  // namespace detail

TABLIO_END_NAMESPACE
