// The operating system's file calls, for the rest of tablio: a POSIX side (open(2), read(2),
// lstat(2)...) and a Win32 side (CreateFileW, ReadFile...). Names are UTF-8 on both; the Win32
// side converts them to UTF-16 and calls the wide functions, so any name opens. Failures leave
// an errno value in errno on both sides (Win32's codes are translated), so every message says
// "No such file or directory" alike. Files are opened binary (no CR/LF translation anywhere) and
// are never inherited by a command tablio starts.
#pragma once

#include <tablio/core/error.hpp>  // TABLIO_COLD

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#if defined(_WIN32)
#include <tablio/stream/platform/win32.hpp>

#include <fcntl.h>
#include <io.h>
#include <cstdio>
#else
#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cstdlib>
#endif

TABLIO_BEGIN_NAMESPACE

namespace detail::os {

#if defined(_WIN32)
using native_file = void*;  // a HANDLE
inline native_file no_file() noexcept { return INVALID_HANDLE_VALUE; }
#else
using native_file = int;  // a file descriptor
inline native_file no_file() noexcept { return -1; }
#endif

// What a file is opened for: reading (it must exist); writing (created, or emptied); update
// (read and write, created when missing, its bytes kept: a lock file).
enum class file_use { read, write, update };

// Extra rules for names from untrusted input: a symbolic link as the last part of the name is
// refused (errno ELOOP), and a FIFO or device does not block the open.
struct open_rules {
  bool no_links = false;
  bool no_blocking = false;
  bool keep_bytes = false;  // write without emptying: truncate_file() after checking the file
};

enum class file_kind { regular, directory, link, other };
struct file_status {
  file_kind kind = file_kind::other;
  std::uint64_t size = 0;
  std::uint64_t links = 1;     // names of the file (hard links); 0 once it is removed
  std::int64_t modified = 0;   // seconds since 1970
  std::uint64_t identity = 0;  // the file itself, whatever its name: its inode and device mixed
};

// Advisory locks on a whole file, between processes (flock(2), LockFileEx).
enum class file_lock { shared, exclusive };

#if defined(_WIN32)

TABLIO_COLD inline native_file open_file(const std::string& path, file_use use,
                                         open_rules rules = {}) noexcept {
  const DWORD access = use == file_use::read    ? GENERIC_READ
                       : use == file_use::write ? GENERIC_WRITE
                                                : GENERIC_READ | GENERIC_WRITE;
  const DWORD disposition = use == file_use::read                         ? OPEN_EXISTING
                            : use == file_use::write && !rules.keep_bytes ? CREATE_ALWAYS
                                                                          : OPEN_ALWAYS;
  const DWORD flags = FILE_ATTRIBUTE_NORMAL | (rules.no_links ? FILE_FLAG_OPEN_REPARSE_POINT : 0);
  HANDLE h =
      ::CreateFileW(win32::wide(path).c_str(), access, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                    nullptr, disposition, flags, nullptr);
  if (h == INVALID_HANDLE_VALUE) return win32::failed(h);
  if (rules.no_links) {  // opened the link (or junction, or any reparse point) itself: refuse it
    FILE_ATTRIBUTE_TAG_INFO tag{};
    if (::GetFileInformationByHandleEx(h, FileAttributeTagInfo, &tag, sizeof tag) &&
        (tag.FileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)) {
      ::CloseHandle(h);
      errno = ELOOP;
      return INVALID_HANDLE_VALUE;
    }
  }
  return h;
}

inline void close_quietly(native_file f) noexcept { ::CloseHandle(f); }
TABLIO_COLD inline bool close_file(native_file f) noexcept {
  return ::CloseHandle(f) ? true : win32::failed(false);
}

// Bytes read (0 at the end; a pipe whose writer has gone ends so), or -1.
inline std::int64_t read_file(native_file f, char* dst, std::size_t n) noexcept {
  DWORD got = 0;
  const DWORD ask = n > (DWORD{1} << 30) ? (DWORD{1} << 30) : static_cast<DWORD>(n);
  if (::ReadFile(f, dst, ask, &got, nullptr)) return got;
  const DWORD e = ::GetLastError();
  if (e == ERROR_BROKEN_PIPE || e == ERROR_HANDLE_EOF) return 0;
  return win32::failed(std::int64_t{-1});
}

// Bytes written (some, at least one), or -1.
inline std::int64_t write_file(native_file f, const char* src, std::size_t n) noexcept {
  DWORD put = 0;
  const DWORD ask = n > (DWORD{1} << 30) ? (DWORD{1} << 30) : static_cast<DWORD>(n);
  if (::WriteFile(f, src, ask, &put, nullptr)) return put;
  return win32::failed(std::int64_t{-1});
}

inline bool seek_file(native_file f, std::uint64_t offset) noexcept {
  LARGE_INTEGER to;
  to.QuadPart = static_cast<LONGLONG>(offset);
  return ::SetFilePointerEx(f, to, nullptr, FILE_BEGIN) ? true : win32::failed(false);
}

TABLIO_COLD inline bool truncate_file(native_file f) noexcept {
  return seek_file(f, 0) && (::SetEndOfFile(f) ? true : win32::failed(false));
}

TABLIO_COLD inline bool status_of(native_file f, file_status& out) noexcept {
  if (::GetFileType(f) != FILE_TYPE_DISK) {
    out = {file_kind::other, 0, 1};
    return true;
  }
  BY_HANDLE_FILE_INFORMATION info;
  if (!::GetFileInformationByHandle(f, &info)) return win32::failed(false);
  out.kind = (info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) ? file_kind::link
             : (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)   ? file_kind::directory
                                                                    : file_kind::regular;
  out.size = (std::uint64_t{info.nFileSizeHigh} << 32) | info.nFileSizeLow;
  out.links = info.nNumberOfLinks;
  out.identity = ((std::uint64_t{info.nFileIndexHigh} << 32) | info.nFileIndexLow) ^
                 std::uint64_t{info.dwVolumeSerialNumber} << 48;
  FILE_STANDARD_INFO standard{};  // a file removed while open is pending deletion: no name left
  if (::GetFileInformationByHandleEx(f, FileStandardInfo, &standard, sizeof standard) &&
      standard.DeletePending)
    out.links = 0;
  const std::uint64_t ticks = (std::uint64_t{info.ftLastWriteTime.dwHighDateTime} << 32) |
                              info.ftLastWriteTime.dwLowDateTime;  // 100 ns since 1601
  out.modified = static_cast<std::int64_t>(ticks / 10000000) - 11644473600;
  return true;
}

// Takes a lock on the whole file; without `wait`, fails at once (errno EWOULDBLOCK) when
// another holds one that excludes it.
TABLIO_COLD inline bool lock_file(native_file f, file_lock kind, bool wait) noexcept {
  OVERLAPPED whole{};
  const DWORD flags =
      (kind == file_lock::exclusive ? LOCKFILE_EXCLUSIVE_LOCK : 0) | (wait ? 0 : LOCKFILE_FAIL_IMMEDIATELY);
  if (::LockFileEx(f, flags, 0, MAXDWORD, MAXDWORD, &whole)) return true;
  if (::GetLastError() == ERROR_LOCK_VIOLATION) {
    errno = EWOULDBLOCK;
    return false;
  }
  return win32::failed(false);
}

// Marks the file as modified now.
TABLIO_COLD inline bool touch_file(native_file f) noexcept {
  FILETIME now;
  ::GetSystemTimeAsFileTime(&now);
  return ::SetFileTime(f, nullptr, nullptr, &now) ? true : win32::failed(false);
}

// The status of a name; of a symbolic link itself unless `follow_links` (lstat and stat).
TABLIO_COLD inline bool status_of(const std::string& path, bool follow_links, file_status& out) noexcept {
  HANDLE h =
      ::CreateFileW(win32::wide(path).c_str(), FILE_READ_ATTRIBUTES,
                    FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
                    FILE_FLAG_BACKUP_SEMANTICS | (follow_links ? 0 : FILE_FLAG_OPEN_REPARSE_POINT), nullptr);
  if (h == INVALID_HANDLE_VALUE) return win32::failed(false);
  const bool ok = status_of(h, out);
  ::CloseHandle(h);
  return ok;
}

// The name with no '.', '..' or link left, with '/' between its parts ("C:/data/a.ark"), or
// empty (errno set).
TABLIO_COLD inline std::string resolved_path(const std::string& path) {
  HANDLE h = ::CreateFileW(win32::wide(path).c_str(), FILE_READ_ATTRIBUTES,
                           FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
                           FILE_FLAG_BACKUP_SEMANTICS, nullptr);
  if (h == INVALID_HANDLE_VALUE) return win32::failed(std::string());
  std::wstring name(MAX_PATH, L'\0');
  for (;;) {
    DWORD n =
        ::GetFinalPathNameByHandleW(h, name.data(), static_cast<DWORD>(name.size()), FILE_NAME_NORMALIZED);
    if (n == 0) {
      ::CloseHandle(h);
      return win32::failed(std::string());
    }
    const bool fits = n < name.size();
    name.resize(n);
    if (fits) break;
  }
  ::CloseHandle(h);
  return win32::without_long_prefix(win32::narrow(name));
}

TABLIO_COLD inline bool make_folder(const std::string& path) noexcept {
  return ::CreateDirectoryW(win32::wide(path).c_str(), nullptr) ? true : win32::failed(false);
}
// Renames `from` to `to`, replacing a file there in one step.
TABLIO_COLD inline bool replace_file(const std::string& from, const std::string& to) noexcept {
  return ::MoveFileExW(win32::wide(from).c_str(), win32::wide(to).c_str(),
                       MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)
             ? true
             : win32::failed(false);
}
TABLIO_COLD inline bool remove_file(const std::string& path) noexcept {
  return ::DeleteFileW(win32::wide(path).c_str()) ? true : win32::failed(false);
}

inline native_file standard_input() noexcept { return ::GetStdHandle(STD_INPUT_HANDLE); }
inline native_file standard_output() noexcept { return ::GetStdHandle(STD_OUTPUT_HANDLE); }
inline native_file standard_error() noexcept { return ::GetStdHandle(STD_ERROR_HANDLE); }
inline bool is_terminal(native_file f) noexcept {
  DWORD mode;
  return ::GetFileType(f) == FILE_TYPE_CHAR && ::GetConsoleMode(f, &mode);
}
// The C library's standard streams in binary mode, as everywhere else: what a program prints
// with printf is the same bytes on every system ("\n", not "\r\n").
inline void binary_standard_streams() noexcept {
  ::_setmode(::_fileno(stdin), _O_BINARY);
  ::_setmode(::_fileno(stdout), _O_BINARY);
  ::_setmode(::_fileno(stderr), _O_BINARY);
}

#else  // POSIX

TABLIO_COLD inline native_file open_file(const std::string& path, file_use use,
                                         open_rules rules = {}) noexcept {
  int flags = use == file_use::read    ? O_RDONLY
              : use == file_use::write ? O_WRONLY | O_CREAT | (rules.keep_bytes ? 0 : O_TRUNC)
                                       : O_RDWR | O_CREAT;
  if (rules.no_links) flags |= O_NOFOLLOW;
  if (rules.no_blocking) flags |= O_NONBLOCK | O_NOCTTY;
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC, 0666);
  } while (fd < 0 && errno == EINTR);
  if (fd >= 0 && rules.no_blocking) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

inline void close_quietly(native_file f) noexcept { ::close(f); }
// A failing close() reports a deferred write error; EINTR leaves the descriptor closed.
TABLIO_COLD inline bool close_file(native_file f) noexcept { return ::close(f) == 0 || errno == EINTR; }

// Bytes read (0 at the end), or -1.
inline std::int64_t read_file(native_file f, char* dst, std::size_t n) noexcept {
  for (;;) {
    ssize_t got = ::read(f, dst, n);
    if (got >= 0 || errno != EINTR) return got;
  }
}

// Bytes written (some, at least one), or -1.
inline std::int64_t write_file(native_file f, const char* src, std::size_t n) noexcept {
  for (;;) {
    ssize_t put = ::write(f, src, n);
    if (put >= 0 || errno != EINTR) return put;
  }
}

inline bool seek_file(native_file f, std::uint64_t offset) noexcept {
  return ::lseek(f, static_cast<off_t>(offset), SEEK_SET) >= 0;
}

TABLIO_COLD inline bool truncate_file(native_file f) noexcept { return ::ftruncate(f, 0) == 0; }

inline void status_from(const struct stat& st, file_status& out) noexcept {
  out.kind = S_ISREG(st.st_mode)   ? file_kind::regular
             : S_ISDIR(st.st_mode) ? file_kind::directory
             : S_ISLNK(st.st_mode) ? file_kind::link
                                   : file_kind::other;
  out.size = static_cast<std::uint64_t>(st.st_size);
  out.links = static_cast<std::uint64_t>(st.st_nlink);
  out.modified = static_cast<std::int64_t>(st.st_mtime);
  out.identity = static_cast<std::uint64_t>(st.st_ino) ^ static_cast<std::uint64_t>(st.st_dev) << 48;
}
TABLIO_COLD inline bool status_of(native_file f, file_status& out) noexcept {
  struct stat st;
  if (::fstat(f, &st) != 0) return false;
  status_from(st, out);
  return true;
}
// The status of a name; of a symbolic link itself unless `follow_links` (lstat and stat).
TABLIO_COLD inline bool status_of(const std::string& path, bool follow_links, file_status& out) noexcept {
  struct stat st;
  if ((follow_links ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st)) != 0) return false;
  status_from(st, out);
  return true;
}

// Takes a lock on the whole file; without `wait`, fails at once (errno EWOULDBLOCK) when
// another holds one that excludes it.
TABLIO_COLD inline bool lock_file(native_file f, file_lock kind, bool wait) noexcept {
  const int how = (kind == file_lock::exclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB);
  for (;;) {
    if (::flock(f, how) == 0) return true;
    if (errno != EINTR) return false;
  }
}

// Marks the file as modified now.
TABLIO_COLD inline bool touch_file(native_file f) noexcept { return ::futimens(f, nullptr) == 0; }

// The name with no '.', '..' or link left, or empty (errno set).
TABLIO_COLD inline std::string resolved_path(const std::string& path) {
  char out[PATH_MAX];
  return ::realpath(path.c_str(), out) ? std::string(out) : std::string();
}

TABLIO_COLD inline bool make_folder(const std::string& path) noexcept {
  return ::mkdir(path.c_str(), 0775) == 0;
}
// Renames `from` to `to`, replacing a file there in one step.
TABLIO_COLD inline bool replace_file(const std::string& from, const std::string& to) noexcept {
  return ::rename(from.c_str(), to.c_str()) == 0;
}
TABLIO_COLD inline bool remove_file(const std::string& path) noexcept { return ::unlink(path.c_str()) == 0; }

inline native_file standard_input() noexcept { return STDIN_FILENO; }
inline native_file standard_output() noexcept { return STDOUT_FILENO; }
inline native_file standard_error() noexcept { return STDERR_FILENO; }
inline bool is_terminal(native_file f) noexcept { return ::isatty(f) == 1; }
inline void binary_standard_streams() noexcept {}  // (they are)

#endif

}  // namespace detail::os

TABLIO_END_NAMESPACE
