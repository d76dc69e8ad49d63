// Folders: the names in one, and the files a glob pattern matches. POSIX has opendir(3),
// fnmatch(3) and glob(3); the Win32 side lists with FindFirstFileExW and matches as fnmatch with
// FNM_PATHNAME does ('*' and '?' never match '/', "[a-z]" and "[!a-z]" classes), where '\' is a
// separator, not an escape: a character is escaped by a class of its own ("[*]").
#pragma once

#include <tablio/stream/platform/file_io.hpp>
#include <tablio/stream/platform/paths.hpp>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#if !defined(_WIN32)
#include <dirent.h>
#include <fnmatch.h>
#include <glob.h>
#endif

TABLIO_BEGIN_NAMESPACE

namespace detail::os {

enum class glob_outcome { matched, no_match, failed };  // failed: errno set

#if defined(_WIN32)

// The names in a folder, "." and ".." left out; false (errno set) when it cannot be listed.
inline bool list_folder(const std::string& folder, std::vector<std::string>& names) {
  WIN32_FIND_DATAW entry;
  HANDLE find = ::FindFirstFileExW(win32::wide(folder + "/*").c_str(), FindExInfoBasic, &entry,
                                   FindExSearchNameMatch, nullptr, FIND_FIRST_EX_LARGE_FETCH);
  if (find == INVALID_HANDLE_VALUE) return win32::failed(false);
  do {
    std::string name = win32::narrow(entry.cFileName);
    if (name != "." && name != "..") names.push_back(std::move(name));
  } while (::FindNextFileW(find, &entry));
  const DWORD error = ::GetLastError();
  ::FindClose(find);
  if (error != ERROR_NO_MORE_FILES) {
    errno = win32::errno_of(error);
    return false;
  }
  return true;
}

// Whether `name` matches the glob `pattern` (one part of a name, or a whole one: '*', '?' and
// classes never match '/').
inline bool matches_glob(std::string_view pattern, std::string_view name) {
  std::size_t p = 0, n = 0, star = std::string_view::npos, resume = 0;
  auto class_matches = [&](std::size_t& at, char c, bool& valid) {
    std::size_t i = at + 1;
    const bool negated = i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^');
    if (negated) ++i;
    bool found = false;
    for (std::size_t first = i; i < pattern.size() && (pattern[i] != ']' || i == first); ++i) {
      if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
        found = found || (pattern[i] <= c && c <= pattern[i + 2]);
        i += 2;
      } else {
        found = found || pattern[i] == c;
      }
    }
    valid = i < pattern.size();  // an unclosed '[' is a plain character
    if (valid) at = i;
    return found != negated && c != '/';
  };
  while (n < name.size()) {
    bool advanced = false;
    if (p < pattern.size()) {
      const char c = pattern[p];
      if (c == '*') {
        star = p++;
        resume = n;
        continue;
      }
      if (c == '?' && name[n] != '/') {
        advanced = true;
      } else if (c == '[') {
        std::size_t at = p;
        bool valid = false;
        const bool match = class_matches(at, name[n], valid);
        if (valid ? match : name[n] == '[') {
          p = valid ? at : p;
          advanced = true;
        }
      } else if (c == name[n]) {
        advanced = true;
      }
    }
    if (advanced) {
      ++p;
      ++n;
    } else if (star != std::string_view::npos && name[resume] != '/') {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

inline std::string glob_escaped(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[')
      out.append("[").append(1, c).append("]");
    else
      out += c;
  }
  return out;
}

// The files (and folders) matching a glob pattern, in name order. Names starting with '.' are
// matched only by a part starting with '.', as glob(3) does.
inline std::vector<std::string> glob_files(const std::string& pattern, glob_outcome& outcome) {
  const std::string whole = generic_name(pattern);
  const std::size_t root = root_length(whole);
  std::vector<std::string> found{whole.substr(0, root)};
  outcome = glob_outcome::matched;
  for (std::size_t at = root; at <= whole.size() && !found.empty();) {
    std::size_t end = whole.find('/', at);
    if (end == std::string::npos) end = whole.size();
    const std::string part = whole.substr(at, end - at);
    const bool last = end == whole.size();
    at = end + 1;
    if (part.empty()) continue;
    std::vector<std::string> next;
    for (const std::string& folder : found) {
      const std::string prefix = folder.empty() || folder.ends_with('/') ? folder : folder + "/";
      if (part.find_first_of("*?[") == std::string::npos) {
        std::string name = prefix + part;
        file_status st;
        if (status_of(name, true, st) && (last || st.kind == file_kind::directory)) next.push_back(name);
        continue;
      }
      std::vector<std::string> names;
      if (!list_folder(folder.empty() ? "." : folder, names)) {
        if (errno == ENOENT || errno == ENOTDIR) continue;
        outcome = glob_outcome::failed;
        return {};
      }
      for (const std::string& name : names)
        if ((name[0] != '.' || part[0] == '.') && matches_glob(part, name)) next.push_back(prefix + name);
    }
    found = std::move(next);
  }
  std::sort(found.begin(), found.end());
  if (found.empty()) outcome = glob_outcome::no_match;
  return found;
}

#else

// The names in a folder, "." and ".." left out; false (errno set) when it cannot be listed.
inline bool list_folder(const std::string& folder, std::vector<std::string>& names) {
  DIR* dir = ::opendir(folder.c_str());
  if (!dir) return false;
  while (dirent* d = ::readdir(dir)) {
    std::string_view name = d->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  ::closedir(dir);
  return true;
}

// Whether `name` matches the glob `pattern` ('*', '?' and classes never match '/').
inline bool matches_glob(const std::string& pattern, const std::string& name) {
  return ::fnmatch(pattern.c_str(), name.c_str(), FNM_PATHNAME) == 0;
}

inline std::string glob_escaped(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// The files (and folders) matching a glob pattern, in name order.
inline std::vector<std::string> glob_files(const std::string& pattern, glob_outcome& outcome) {
  glob_t matches{};
  const int rc = ::glob(pattern.c_str(), GLOB_ERR, nullptr, &matches);
  std::vector<std::string> names;
  if (rc == 0)
    for (std::size_t i = 0; i < matches.gl_pathc; ++i) names.emplace_back(matches.gl_pathv[i]);
  ::globfree(&matches);
  outcome = rc == 0 && !names.empty()       ? glob_outcome::matched
            : rc == 0 || rc == GLOB_NOMATCH ? glob_outcome::no_match
                                            : glob_outcome::failed;
  return names;
}

#endif

}  // namespace detail::os

TABLIO_END_NAMESPACE
