// The files of a sharded dataset, named one of four ways:
//   a glob pattern       "train-*-of-00128", "data/part-?????"   (matches in name order)
//   TensorFlow's "@N"    "train@128" -> train-00000-of-00128 ... train-00127-of-00128
//   a numbered name      "shard-%06d.tar" -> shard-000000.tar, shard-000001.tar... as long as
//                        they exist (WebDataset's ShardWriter names its shards so)
//   a single name        "train.tfrecord", "-", "gunzip -c f.gz |"
#pragma once

#include <tablio/core/error.hpp>

#include <glob.h>
#include <sys/stat.h>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// TensorFlow's name of shard i of n ("%s-%05d-of-%05d").
inline std::string shard_name(std::string_view base, std::uint64_t i, std::uint64_t n) {
  char suffix[64];
  std::snprintf(suffix, sizeof suffix, "-%05llu-of-%05llu", static_cast<unsigned long long>(i),
                static_cast<unsigned long long>(n));
  return std::string(base) + suffix;
}

// A name with one "%d" (or "%0Nd") in it, split around it; "%%" stands for '%'.
struct numbered_name {
  std::string before, after;
  int width = 0;  // zero-padded to this many digits

  std::string operator()(std::uint64_t i) const {
    std::string digits = std::to_string(i);
    std::string name = before;
    if (digits.size() < static_cast<std::size_t>(width)) name.append(width - digits.size(), '0');
    return name + digits + after;
  }
};

// The numbered name `name` is, or nothing when it is not one: one "%d" or "%0Nd", and no other
// '%' but "%%". Any other name is taken as it is; a width of 100 digits or more is refused.
inline std::optional<numbered_name> parse_numbered_name(std::string_view name) {
  numbered_name n;
  bool found = false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    std::string& out = found ? n.after : n.before;
    if (name[i] != '%') {
      out += name[i];
      continue;
    }
    if (i + 1 < name.size() && name[i + 1] == '%') {
      out += '%';
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    int width = 0;
    if (j < name.size() && name[j] == '0') ++j;
    for (; j < name.size() && name[j] >= '0' && name[j] <= '9'; ++j)
      width = width < 100 ? width * 10 + (name[j] - '0') : width;
    if (found || j >= name.size() || name[j] != 'd') return std::nullopt;
    if (width >= 100) throw_usage_error({"'", name, "': a shard number of more than 99 digits"});
    n.width = width;
    found = true;
    i = j;
  }
  if (!found) return std::nullopt;
  return n;
}

// More shards than a dataset has: "name@N" beyond this is a mistake, refused before any name is made.
inline constexpr std::uint64_t max_shard_count = 1000000;

inline std::vector<std::string> expand_shards(std::string_view pattern) {
  std::string p(pattern);
  if (p.empty() || p.back() == '|' || p.front() == '|' || p == "-") return {p};
  if (auto numbered = parse_numbered_name(p)) {
    std::vector<std::string> names;
    for (struct stat st; ::stat((*numbered)(names.size()).c_str(), &st) == 0;)
      names.push_back((*numbered)(names.size()));
    if (names.empty()) throw_io_error((*numbered)(0), ENOENT, {"no file matches"});
    return names;
  }
  if (std::size_t at = p.rfind('@'); at != std::string::npos && at + 1 < p.size() &&
                                     p.find_first_not_of("0123456789", at + 1) == std::string::npos) {
    std::uint64_t n = 0;
    for (char digit : std::string_view(p).substr(at + 1))
      n = n > max_shard_count ? n : n * 10 + static_cast<unsigned>(digit - '0');
    if (n == 0) throw_usage_error({"no shards in '", p, "'"});
    if (n > max_shard_count)
      throw_usage_error({"'", p, "' names more than ", decimal(max_shard_count), " shards"});
    // Each name is kept once its file is found: the list costs what exists, and a missing
    // shard is reported now rather than after reading all those before it.
    std::vector<std::string> names;
    for (std::uint64_t i = 0; i < n; ++i) {
      names.push_back(shard_name(p.substr(0, at), i, n));
      if (struct stat st; ::stat(names.back().c_str(), &st) != 0)
        throw_io_error(names.back(), errno, {"cannot find shard ", decimal(i), " of ", decimal(n), ","});
    }
    return names;
  }
  if (p.find_first_of("*?[") == std::string::npos) return {p};
  glob_t matches{};
  int rc = ::glob(p.c_str(), GLOB_ERR, nullptr, &matches);
  std::vector<std::string> names;
  if (rc == 0)
    for (std::size_t i = 0; i < matches.gl_pathc; ++i) names.emplace_back(matches.gl_pathv[i]);
  ::globfree(&matches);
  if (rc == GLOB_NOMATCH || (rc == 0 && names.empty())) throw_io_error(p, ENOENT, {"no file matches"});
  if (rc != 0) throw_io_error(p, errno, {"cannot list the files matching"});
  return names;  // glob sorts them
}

// The files of a comma-separated list of names, each expanded as above.
inline std::vector<std::string> expand_shard_list(std::string_view names) {
  std::vector<std::string> files;
  for (std::size_t start = 0;;) {
    std::size_t comma = names.find(',', start);
    for (auto& f : expand_shards(names.substr(start, comma - start))) files.push_back(std::move(f));
    if (comma == std::string_view::npos) return files;
    start = comma + 1;
  }
}

TABLIO_END_NAMESPACE
