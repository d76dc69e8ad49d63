// What one table may read in all under limits::max_table_expansion: that many times the bytes
// of what it names (a script's lines and files, a segments file's recordings, an LMDB data file),
// each counted once, when first named. Lines that point again and again at the same bytes read
// them again each time; past the budget the table ends with a format_error.
#pragma once

#include <tablio/core/error.hpp>

#include <cstdint>
#include <optional>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

namespace detail {

class table_budget {
 public:
  explicit table_budget(std::uint64_t factor) noexcept : factor_(factor) {}
  bool bounded() const noexcept { return factor_ != 0; }
  // Gone past once: every later take() refuses, whatever is allowed since.
  bool spent() const noexcept { return spent_; }

  void allow(std::uint64_t named) noexcept {
    if (factor_ == 0) return;
    const std::uint64_t more = named > UINT64_MAX / factor_ ? UINT64_MAX : named * factor_;
    allowed_ = more > UINT64_MAX - allowed_ ? UINT64_MAX : allowed_ + more;
  }
  // Counts `read` more; past the budget, a format_error at `key` of `table` (at `offset`) that
  // says what the budget is of (`of_what`: "bytes of the script and of the files it names").
  void take(std::uint64_t read, std::string_view table, std::optional<std::uint64_t> offset,
            std::string_view key, const char* of_what) {
    used_ = read > UINT64_MAX - used_ ? UINT64_MAX : used_ + read;
    if (used_ > allowed_ || spent_) [[unlikely]] {
      spent_ = true;
      over(table, offset, key, of_what);
    }
  }
  void restart() noexcept {  // a new pass
    used_ = 0;
    spent_ = false;
  }

 private:
  [[noreturn]] TABLIO_COLD void over(std::string_view table, std::optional<std::uint64_t> offset,
                                     std::string_view key, const char* of_what) const {
    throw_format_error(table, offset, key,
                       {"at most ", decimal(factor_), " times the ", of_what, " in all, ", decimal(allowed_),
                        " (limits::max_table_expansion)"},
                       {decimal(used_)});
  }

  std::uint64_t factor_;
  std::uint64_t allowed_ = 0;
  std::uint64_t used_ = 0;
  bool spent_ = false;
};

}  // namespace detail

TABLIO_END_NAMESPACE
