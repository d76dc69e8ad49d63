// The syntax of Kaldi's table specifiers ("ark,scp,t:a.ark,a.scp", "ark,s,cs:-"): options
// before the first ':', split on ',' and ' '. Classifying an extended filename needs it, since
// Kaldi refuses a filename such as "ark:foo" that is a specifier of its own. The full grammar,
// with every format tablio reads and writes, is table/specifier.hpp's.
#pragma once

#include <tablio/core/version.hpp>
#include <tablio/stream/platform/paths.hpp>

#include <cctype>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

TABLIO_BEGIN_NAMESPACE

namespace detail {

// The ':' that ends a specifier's options: the first. On Windows an option's value may be a
// name with a drive ("scp,segments=C:\data\segments:C:\data\wav.scp"), whose ':' (after
// "=X", before '\' or '/') is the name's.
inline std::size_t options_end(std::string_view spec) {
  std::size_t colon = spec.find(':');
  while (colon != std::string_view::npos && colon >= 2 && spec[colon - 2] == '=' &&
         os::starts_with_drive(spec.substr(colon - 1)))
    colon = spec.find(':', colon + 1);
  return colon;
}

// Splits the options before options_end() on ',' and ' ', keeping empty pieces as Kaldi does
// (so "o, s, ark:x" has empty options and is invalid); nullopt without a ':' or with trailing
// whitespace.
inline std::optional<std::pair<std::vector<std::string_view>, std::string_view>> split_specifier(
    std::string_view spec) {
  std::size_t colon = options_end(spec);
  if (colon == std::string_view::npos) return std::nullopt;
  if (std::isspace(static_cast<unsigned char>(spec.back()))) return std::nullopt;
  std::vector<std::string_view> options;
  std::string_view head = spec.substr(0, colon);
  std::size_t start = 0;
  for (std::size_t i = 0; i <= head.size(); ++i) {
    if (i == head.size() || head[i] == ',' || head[i] == ' ') {
      options.push_back(head.substr(start, i - start));
      start = i + 1;
    }
  }
  return std::pair{std::move(options), spec.substr(colon + 1)};
}

// Parses up to 18 decimal digits (no sign, no space): the numbers in specifier options.
inline bool parse_number(std::string_view digits, std::uint64_t& v) {
  if (digits.empty() || digits.size() > 18) return false;
  v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return true;
}

// Whether Kaldi classifies `name` as a wspecifier or rspecifier of its own formats (ark, scp).
inline bool is_kaldi_specifier(std::string_view name) {
  auto split = split_specifier(name);
  if (!split) return false;
  auto in = [](std::string_view o, std::initializer_list<std::string_view> set) {
    for (std::string_view s : set)
      if (o == s) return true;
    return false;
  };
  // As a wspecifier: b t f nf p, and "ark", "scp" or "ark,scp" (with two names).
  bool writable = true, ark = false, scp = false;
  for (std::string_view o : split->first) {
    if (o == "ark") {
      if (ark || scp) writable = false;
      ark = true;
    } else if (o == "scp") {
      if (scp) writable = false;
      scp = true;
    } else if (!in(o, {"b", "t", "f", "nf", "p"})) {
      writable = false;
    }
  }
  if (writable && (ark || scp) && (!(ark && scp) || split->second.find(',') != std::string_view::npos))
    return true;
  // As an rspecifier: Kaldi's reading options and exactly one of "ark" or "scp".
  int formats = 0;
  for (std::string_view o : split->first) {
    if (o == "ark" || o == "scp")
      ++formats;
    else if (!in(o, {"b", "t", "o", "no", "s", "ns", "cs", "ncs", "p", "np", "bg"}))
      return false;
  }
  return formats == 1;
}

}  // namespace detail

TABLIO_END_NAMESPACE
