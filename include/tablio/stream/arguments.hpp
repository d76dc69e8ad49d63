// A program's command-line arguments in UTF-8, the encoding tablio takes names in. On POSIX
// systems they are argv as given; on Windows main's argv is in the ANSI code page, which changes
// the characters it cannot spell ("données" becomes "donn\xe9es"), so they are taken from the
// wide command line instead:
//   int main(int argc, char** argv) {
//     std::vector<std::string> args = tablio::utf8_arguments(argc, argv);
#pragma once

#include <tablio/stream/platform/process.hpp>

#include <string>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// The argc arguments of argv, argv[0] included, in UTF-8 (on Windows, from the wide command
// line when it has as many arguments; argv's own otherwise).
inline std::vector<std::string> utf8_arguments(int argc, char** argv) {
  return detail::os::utf8_arguments(argc, argv);
}

TABLIO_END_NAMESPACE
