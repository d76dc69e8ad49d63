// Kaldi script files: one entry a line, "key <whitespace> rxfilename[range]". The value is
// trimmed of whitespace (so CRLF files work; inner spaces stay, as in "cmd args |"), and a
// value ending in ']' carries a range, e.g. "feats.ark:42[0:9,2:5]".
#pragma once

#include <tablio/stream/reader.hpp>
#include <tablio/stream/writer.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

TABLIO_BEGIN_NAMESPACE

struct script_entry {
  std::string key;
  std::string rxfilename;
  std::string range;  // without the brackets; empty when the line has none
};

namespace detail {
inline constexpr std::string_view script_space = " \t\n\r\f\v";
}

// Parses one line as Kaldi does; nullopt for an invalid line (no key, no value, or a
// malformed range such as "a[" or "a[]").
inline std::optional<script_entry> parse_script_line(std::string_view line) {
  using detail::script_space;
  std::size_t key_begin = line.find_first_not_of(script_space);
  if (key_begin == std::string_view::npos) return std::nullopt;
  std::size_t key_end = line.find_first_of(script_space, key_begin);
  if (key_end == std::string_view::npos) return std::nullopt;
  std::size_t value_begin = line.find_first_not_of(script_space, key_end);
  if (value_begin == std::string_view::npos) return std::nullopt;
  std::size_t value_end = line.find_last_not_of(script_space) + 1;
  script_entry e{std::string(line.substr(key_begin, key_end - key_begin)),
                 std::string(line.substr(value_begin, value_end - value_begin)),
                 {}};
  if (e.rxfilename.back() == ']') {
    // "name[range]": splitting on '[' (empty pieces dropped) must give exactly two pieces.
    std::vector<std::string_view> pieces;
    std::string_view v = e.rxfilename;
    for (std::size_t start = 0; start <= v.size();) {
      std::size_t bracket = v.find('[', start);
      std::size_t end = bracket == std::string_view::npos ? v.size() : bracket;
      if (end > start) pieces.push_back(v.substr(start, end - start));
      if (bracket == std::string_view::npos) break;
      start = bracket + 1;
    }
    if (pieces.size() != 2 || pieces[1].size() < 2) return std::nullopt;
    e.range = std::string(pieces[1].substr(0, pieces[1].size() - 1));
    e.rxfilename = std::string(pieces[0]);
  }
  return e;
}

// Reads a script file line by line.
class script_reader {
 public:
  explicit script_reader(reader in) : in_(std::move(in)) {}

  // The next entry; false at the end. An invalid line is a format_error naming its number.
  bool next(script_entry& entry) {
    std::string line;
    for (;;) {
      if (!read_line(line)) return false;
      ++line_number_;
      if (auto e = parse_script_line(line)) {
        entry = std::move(*e);
        return true;
      }
      in_.fail_at(line_offset_, "a script line 'key rxfilename' (line " + std::to_string(line_number_) + ")",
                  "'" + line + "'");
    }
  }
  std::uint64_t line_number() const noexcept { return line_number_; }
  const std::string& name() const noexcept { return in_.name(); }
  void close() { in_.close(); }

 private:
  bool read_line(std::string& line) {
    line_offset_ = in_.tell();
    return in_.read_line(line);
  }

  reader in_;
  std::uint64_t line_number_ = 0;
  std::uint64_t line_offset_ = 0;
};

// Writes script lines "key value\n".
class script_writer {
 public:
  explicit script_writer(writer out) : out_(std::move(out)) {}
  void write(std::string_view key, std::string_view value) {
    out_.write(key);
    out_.put(' ');
    out_.write(value);
    out_.put('\n');
  }
  writer& out() noexcept { return out_; }
  void close() { out_.close(); }

 private:
  writer out_;
};

TABLIO_END_NAMESPACE
