// The files of a sharded dataset, named one of three ways:
//   a glob pattern       "train-*-of-00128", "data/part-?????"   (matches in name order)
//   TensorFlow's "@N"    "train@128" -> train-00000-of-00128 ... train-00127-of-00128
//   a single name        "train.tfrecord", "-", "gunzip -c f.gz |"
#pragma once

#include <tablio/core/error.hpp>

#include <glob.h>

#include <cstdio>
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

inline std::vector<std::string> expand_shards(std::string_view pattern) {
  std::string p(pattern);
  if (p.empty() || p.back() == '|' || p.front() == '|' || p == "-") return {p};
  if (std::size_t at = p.rfind('@'); at != std::string::npos && at + 1 < p.size() &&
                                     p.find_first_not_of("0123456789", at + 1) == std::string::npos) {
    std::string digits = p.substr(at + 1);
    if (digits.size() > 9) throw usage_error("too many shards in '" + p + "'");
    std::uint64_t n = std::stoull(digits);
    if (n == 0) throw usage_error("no shards in '" + p + "'");
    std::vector<std::string> names;
    names.reserve(n);
    for (std::uint64_t i = 0; i < n; ++i) names.push_back(shard_name(p.substr(0, at), i, n));
    return names;
  }
  if (p.find_first_of("*?[") == std::string::npos) return {p};
  glob_t matches{};
  int rc = ::glob(p.c_str(), GLOB_ERR, nullptr, &matches);
  std::vector<std::string> names;
  if (rc == 0)
    for (std::size_t i = 0; i < matches.gl_pathc; ++i) names.emplace_back(matches.gl_pathv[i]);
  ::globfree(&matches);
  if (rc == GLOB_NOMATCH || (rc == 0 && names.empty())) throw io_error(p, ENOENT, "no file matches");
  if (rc != 0) throw io_error(p, errno, "cannot list the files matching");
  return names;  // glob sorts them
}

TABLIO_END_NAMESPACE
