// A folder for a benchmark's input files, made on first use and removed at exit.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace bench {

inline const std::string& scratch_folder() {
  static const struct folder {
    std::string path;
    folder() {
      path = (std::filesystem::temp_directory_path() / "tablio-bench-XXXXXX").string();
      if (!mkdtemp(path.data())) std::abort();
    }
    ~folder() { std::filesystem::remove_all(path); }
  } made;
  return made.path;
}

}  // namespace bench
