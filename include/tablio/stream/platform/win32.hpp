// What the Win32 side of the platform layer shares: <windows.h> without its min/max macros,
// UTF-8 names converted to and from UTF-16 for the wide calls, and Win32's error codes
// translated to errno values, so that a failure reads as it does on POSIX. Empty elsewhere.
#pragma once

#include <tablio/core/version.hpp>

#if defined(_WIN32)

#if !defined(NOMINMAX)
#define NOMINMAX
#endif
#if !defined(WIN32_LEAN_AND_MEAN)
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <cerrno>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

namespace detail::os::win32 {

// UTF-8 to UTF-16. A name that is no UTF-8 becomes one no file has (U+FFFD in its place).
inline std::wstring wide(std::string_view utf8) {
  if (utf8.empty()) return {};
  const int n = ::MultiByteToWideChar(CP_UTF8, 0, utf8.data(), static_cast<int>(utf8.size()), nullptr, 0);
  std::wstring out(static_cast<std::size_t>(n), L'\0');
  ::MultiByteToWideChar(CP_UTF8, 0, utf8.data(), static_cast<int>(utf8.size()), out.data(), n);
  return out;
}

inline std::string narrow(std::wstring_view utf16) {
  if (utf16.empty()) return {};
  const int n = ::WideCharToMultiByte(CP_UTF8, 0, utf16.data(), static_cast<int>(utf16.size()), nullptr, 0,
                                      nullptr, nullptr);
  std::string out(static_cast<std::size_t>(n), '\0');
  ::WideCharToMultiByte(CP_UTF8, 0, utf16.data(), static_cast<int>(utf16.size()), out.data(), n, nullptr,
                        nullptr);
  return out;
}

// The errno value closest to a Win32 error code.
inline int errno_of(DWORD code) noexcept {
  switch (code) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_DRIVE:
    case ERROR_INVALID_NAME:
    case ERROR_BAD_NETPATH:
    case ERROR_BAD_PATHNAME:
      return ENOENT;
    case ERROR_ACCESS_DENIED:
    case ERROR_NETWORK_ACCESS_DENIED:
      return EACCES;
    case ERROR_SHARING_VIOLATION:
    case ERROR_LOCK_VIOLATION:
      return EBUSY;
    case ERROR_INVALID_HANDLE:
      return EBADF;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY:
    case ERROR_COMMITMENT_LIMIT:
      return ENOMEM;
    case ERROR_WRITE_PROTECT:
      return EROFS;
    case ERROR_HANDLE_DISK_FULL:
    case ERROR_DISK_FULL:
      return ENOSPC;
    case ERROR_FILE_EXISTS:
    case ERROR_ALREADY_EXISTS:
      return EEXIST;
    case ERROR_BROKEN_PIPE:
    case ERROR_NO_DATA:
      return EPIPE;
    case ERROR_DIRECTORY:
      return ENOTDIR;
    case ERROR_DIR_NOT_EMPTY:
      return ENOTEMPTY;
    case ERROR_CANT_RESOLVE_FILENAME:
      return ELOOP;
    case ERROR_FILENAME_EXCED_RANGE:
      return ENAMETOOLONG;
    case ERROR_NOT_SUPPORTED:
      return ENOSYS;
    case ERROR_INVALID_PARAMETER:
    case ERROR_NEGATIVE_SEEK:
      return EINVAL;
    default:
      return EIO;
  }
}

// Sets errno from GetLastError() and returns `result`: `return failed(false);`.
template <class T>
T failed(T result) noexcept {
  errno = errno_of(::GetLastError());
  return result;
}

// A name without the "\\?\" (or "\\?\UNC\") that GetFinalPathNameByHandleW gives, with '/'
// between its parts as tablio writes names everywhere.
inline std::string without_long_prefix(std::string name) {
  if (name.starts_with("\\\\?\\UNC\\"))
    name = "\\\\" + name.substr(8);
  else if (name.starts_with("\\\\?\\"))
    name = name.substr(4);
  for (char& c : name)
    if (c == '\\') c = '/';
  return name;
}

}  // namespace detail::os::win32

TABLIO_END_NAMESPACE

#endif  // _WIN32
