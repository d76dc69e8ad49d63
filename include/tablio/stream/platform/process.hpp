// The running process: its id, its arguments, its environment, and what happens in the child of
// a fork (POSIX only: Win32 starts processes anew and never copies one).
#pragma once

#include <tablio/core/version.hpp>

#include <stdlib.h>  // setenv (POSIX), _putenv_s (Windows)

#include <string>
#include <vector>

#if defined(_WIN32)
#include <tablio/stream/platform/win32.hpp>

#include <shellapi.h>  // CommandLineToArgvW
#else
#include <pthread.h>
#include <unistd.h>
#endif

TABLIO_BEGIN_NAMESPACE

namespace detail::os {

#if defined(_WIN32)
inline unsigned long current_process_id() noexcept { return ::GetCurrentProcessId(); }
// Sets a variable of the environment std::getenv reads (the C runtime's copy).
inline bool set_environment(const char* name, const char* value) noexcept {
  return ::_putenv_s(name, value) == 0;
}
inline void call_in_forked_children(void (*)()) noexcept {}
// The program's arguments in UTF-8: main's argv is in the ANSI code page, which changes what it
// cannot spell, while the wide command line has every name.
inline std::vector<std::string> utf8_arguments(int argc, char** argv) {
  int count = 0;
  wchar_t** wide = ::CommandLineToArgvW(::GetCommandLineW(), &count);
  std::vector<std::string> out;
  for (int i = 0; i < argc; ++i)
    out.push_back(wide && count == argc ? win32::narrow(wide[i]) : std::string(argv[i]));
  if (wide) ::LocalFree(wide);
  return out;
}
#else
inline unsigned long current_process_id() noexcept { return static_cast<unsigned long>(::getpid()); }
// Sets a variable of the environment std::getenv reads.
inline bool set_environment(const char* name, const char* value) noexcept {
  return ::setenv(name, value, 1) == 0;
}
// Has `f` called in the child of every fork from now on.
inline void call_in_forked_children(void (*f)()) noexcept { ::pthread_atfork(nullptr, nullptr, f); }
// The program's arguments in UTF-8: as given (names are bytes, UTF-8 by convention).
inline std::vector<std::string> utf8_arguments(int argc, char** argv) { return {argv, argv + argc}; }
#endif

}  // namespace detail::os

TABLIO_END_NAMESPACE
