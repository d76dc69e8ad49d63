// How names are spelt on each system, for the checks that reason about them as text (a
// confining folder): '/' between parts on POSIX; '/' or '\' on Win32, whose absolute names
// start with a drive ("C:/") or a server ("//host/share/").
#pragma once

#include <tablio/core/version.hpp>

#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

namespace detail::os {

#if defined(_WIN32)
inline constexpr std::string_view separators = "/\\";
#else
inline constexpr std::string_view separators = "/";
#endif

inline bool is_separator(char c) noexcept { return separators.find(c) != std::string_view::npos; }

// The name with '/' between its parts.
inline std::string generic_name(std::string name) {
  for (char& c : name)
    if (is_separator(c)) c = '/';
  return name;
}

// Whether a name starts with a drive ("C:\\", "C:/"): never on POSIX.
inline bool starts_with_drive(std::string_view name) noexcept {
#if defined(_WIN32)
  const char letter = name.empty() ? '\0' : name[0];
  return name.size() >= 3 && ((letter >= 'A' && letter <= 'Z') || (letter >= 'a' && letter <= 'z')) &&
         name[1] == ':' && is_separator(name[2]);
#else
  (void)name;
  return false;
#endif
}

// The length of the root a generic name starts with ("/"; on Win32 also "C:/" and
// "//host/share/"); 0 for a relative name.
inline std::size_t root_length(std::string_view name) noexcept {
#if defined(_WIN32)
  if (name.size() >= 3 && name[1] == ':' && name[2] == '/') return 3;
  if (name.starts_with("//")) {
    std::size_t host_end = name.find('/', 2);
    if (host_end == std::string_view::npos) return name.size();
    std::size_t share_end = name.find('/', host_end + 1);
    return share_end == std::string_view::npos ? name.size() : share_end + 1;
  }
#endif
  return name.starts_with('/') ? 1 : 0;
}

}  // namespace detail::os

TABLIO_END_NAMESPACE
