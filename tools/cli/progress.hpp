// A progress line on standard error while a long command runs, only when standard error is
// a terminal (never in logs or pipes).
#pragma once

#include <tablio/stream/platform/file_io.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace cli {

class progress {
 public:
  explicit progress(std::string what)
      : what_(std::move(what)),
        shown_(tablio::detail::os::is_terminal(tablio::detail::os::standard_error())) {}
  ~progress() { done(); }

  // Counts one more entry; redraws at most ten times a second.
  void add() {
    ++entries_;
    if (!shown_ || (entries_ & 63) != 0) return;
    auto now = clock::now();
    if (now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    double seconds = std::chrono::duration<double>(now - start_).count();
    std::fprintf(stderr, "\r%s: %llu entries, %.0f a second ", what_.c_str(),
                 static_cast<unsigned long long>(entries_), seconds > 0 ? entries_ / seconds : 0.0);
    drawn_ = true;
  }
  void done() {
    if (drawn_) std::fprintf(stderr, "\r\033[K");
    drawn_ = false;
  }

 private:
  using clock = std::chrono::steady_clock;
  std::string what_;
  bool shown_, drawn_ = false;
  std::uint64_t entries_ = 0;
  clock::time_point start_ = clock::now(), last_ = start_;
};

}  // namespace cli
