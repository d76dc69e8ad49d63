// The files of a sharded dataset, named one of five ways:
//   a glob pattern       "train-*-of-00128", "data/part-?????"   (matches in name order)
//   braces, as WebDataset names shards  "shards-{000000..000099}.tar", "{train,val}-0.tar"
//   TensorFlow's "@N"    "train@128" -> train-00000-of-00128 ... train-00127-of-00128
//   a numbered name      "shard-%06d.tar" -> shard-000000.tar, shard-000001.tar... as long as
//                        they follow one another (WebDataset's ShardWriter names its shards so)
//   a single name        "train.tfrecord", "-", "gunzip -c f.gz |"
// Remote names (with the tablio::curl component) are expanded the same way: an s3:// bucket is
// listed (one request per thousand names), an http(s) server cannot be, so that numbered names
// are probed one by one and globs are refused there.
#pragma once

#include <tablio/core/error.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/stream/platform/file_io.hpp>
#include <tablio/stream/platform/folders.hpp>
#include <tablio/stream/remote/url.hpp>

#include <algorithm>
#include <functional>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
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

  // The name with i in place of the "%d", zero-padded to the width.
  std::string operator()(std::uint64_t i) const {
    std::string digits = std::to_string(i);
    std::string name = before;
    if (digits.size() < static_cast<std::size_t>(width))
      name.append(static_cast<std::size_t>(width) - digits.size(), '0');
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

namespace detail {

// What exists where shards are: local files, or remote objects (listed once where a bucket can
// be listed, asked for one by one where not).
class shard_place {
 public:
  shard_place(std::string_view pattern, const open_options& open)
      : remote_(is_remote_name(pattern)), open_(open) {
    if (remote_ && !open.allow_network) no_network(pattern);  // not even to ask what exists
#if defined(TABLIO_WITH_CURL)
    if (remote_ && pattern.starts_with("s3://"))
      listed_ = list_remote(pattern.substr(0, pattern.find_first_of("*?[%@")), open);
#endif
  }
  bool exists(const std::string& name) const {
    if (listed_) return std::binary_search(listed_->begin(), listed_->end(), name);
#if defined(TABLIO_WITH_CURL)
    if (remote_) return remote_exists(name, open_);
#endif
    detail::os::file_status st;
    // Closed, a link is no shard, as a glob's links are not: a pattern must not read a file again.
    if (!detail::os::status_of(name, !is_closed(open_), st)) return false;
    if (st.kind == detail::os::file_kind::link) not_regular(name);
    return true;
  }
  // The names that match a glob pattern, in order; nothing when this place cannot be listed.
  std::optional<std::vector<std::string>> matching(const std::string& pattern) const {
    if (!listed_) return std::nullopt;
    std::vector<std::string> names;
    for (const std::string& n : *listed_)
      if (os::matches_glob(pattern, n)) names.push_back(n);
    return names;
  }
  bool remote() const noexcept { return remote_; }

 private:
  bool remote_;
  open_options open_;
  std::optional<std::vector<std::string>> listed_;  // an s3:// folder's names, sorted
};

using os::glob_escaped;
using os::glob_files;

// A shard of the numbered name n with a number past `missing`, the first number not found:
// its shards are read as long as they follow one another, so such a shard means one was lost,
// not that the dataset ends. Looked for among the names where they can be listed (a folder,
// a bucket), else (an http(s) server) by asking for the next number.
inline std::optional<std::string> numbered_shard_after(const shard_place& place, const numbered_name& n,
                                                       std::uint64_t missing) {
  std::string pattern = glob_escaped(n.before) + "*" + glob_escaped(n.after);
  os::glob_outcome outcome;
  std::optional<std::vector<std::string>> names =
      place.remote() ? place.matching(pattern) : glob_files(pattern, outcome);
  if (!names) {
    std::string next = n(missing + 1);
    return place.exists(next) ? std::optional<std::string>(next) : std::nullopt;
  }
  for (const std::string& name : *names) {
    std::string_view digits(name);
    digits = digits.substr(n.before.size(), digits.size() - n.before.size() - n.after.size());
    if (digits.empty() || digits.size() > 18 ||
        digits.find_first_not_of("0123456789") != std::string_view::npos)
      continue;
    std::uint64_t number = std::stoull(std::string(digits));
    if (number > missing && n(number) == name) return name;
  }
  return std::nullopt;
}

}  // namespace detail

namespace detail {

// The '}' that closes the '{' at `open`, or npos.
inline std::size_t closing_brace(std::string_view p, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < p.size(); ++i) {
    if (p[i] == '{') ++depth;
    if (p[i] == '}' && --depth == 0) return i;
  }
  return std::string_view::npos;
}

// What one brace's body stands for: "a,b,c" (split at top-level commas; each may hold braces
// of its own), or "000..099" (numbers, zero-padded to the width written when it has leading
// zeros, descending when the first is larger); nothing when it is neither.
inline std::optional<std::vector<std::string>> brace_choices(std::string_view body) {
  std::size_t dots = body.find("..");
  auto digits = [](std::string_view d) {
    return !d.empty() && d.size() <= 18 && d.find_first_not_of("0123456789") == std::string_view::npos;
  };
  if (dots != std::string_view::npos && digits(body.substr(0, dots)) && digits(body.substr(dots + 2))) {
    std::string_view a = body.substr(0, dots), b = body.substr(dots + 2);
    std::uint64_t from = std::stoull(std::string(a)), to = std::stoull(std::string(b));
    std::uint64_t count = (from <= to ? to - from : from - to) + 1;
    if (count > max_shard_count)
      throw_usage_error({"'{", body, "}' names more than ", decimal(max_shard_count), " shards"});
    std::size_t width =
        (a.size() > 1 && a[0] == '0') || (b.size() > 1 && b[0] == '0') ? std::max(a.size(), b.size()) : 0;
    std::vector<std::string> out;
    for (std::uint64_t k = 0; k < count; ++k) {
      std::string n = std::to_string(from <= to ? from + k : from - k);
      out.push_back(std::string(n.size() < width ? width - n.size() : 0, '0') + n);
    }
    return out;
  }
  std::vector<std::string> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= body.size(); ++i) {
    if (i < body.size() && body[i] == '{') ++depth;
    if (i < body.size() && body[i] == '}') --depth;
    if (i == body.size() || (body[i] == ',' && depth == 0)) {
      out.emplace_back(body.substr(start, i - start));
      start = i + 1;
    }
  }
  if (out.size() < 2) return std::nullopt;
  return out;
}

// The names the brace pattern `whole` stands for, in WebDataset's order (left to right,
// braces multiplied out), at most max_shard_count of them; `p` is what follows `prefix` in it.
inline void expand_braces(std::string_view whole, std::string_view p, const std::string& prefix,
                          std::vector<std::string>& out) {
  for (std::size_t open = p.find('{'); open != std::string_view::npos; open = p.find('{', open + 1)) {
    std::size_t close = closing_brace(p, open);
    if (close == std::string_view::npos) break;
    auto choices = brace_choices(p.substr(open + 1, close - open - 1));
    if (!choices) continue;  // "{x}" stands for itself
    // A choice may hold braces of its own: it is expanded with what follows it.
    for (const std::string& choice : *choices)
      expand_braces(whole, choice + std::string(p.substr(close + 1)), prefix + std::string(p.substr(0, open)),
                    out);
    return;
  }
  if (out.size() == max_shard_count)
    throw_usage_error({"'", whole, "' names more than ", decimal(max_shard_count), " shards"});
  out.push_back(prefix + std::string(p));
}

inline bool has_braces(std::string_view p) {
  std::size_t open = p.find('{');
  return open != std::string_view::npos && closing_brace(p, open) != std::string_view::npos;
}

}  // namespace detail

namespace detail {

// Under closed options (stream/policy.hpp), each local name a pattern stands for lies inside its
// confining folders, as a regular file where it exists: checked before any is looked for.
inline void check_local_names(const std::vector<std::string>& names, const open_options& governed_options) {
  if (!is_closed(governed_options)) return;
  for (const std::string& name : names)
    if (!is_remote_name(name)) checked_local_path(name, governed_options, local_use::probe);
}

// The folder a glob pattern lists, up to its first wildcard, checked as its names are.
inline void check_glob_folder(const std::string& pattern, const open_options& governed_options) {
  std::size_t slash = pattern.rfind('/', pattern.find_first_of("*?["));
  check_local_names({slash == std::string::npos ? std::string("./x") : pattern.substr(0, slash + 1) + "x"},
                    governed_options);
}

// What a pattern matched (a glob's files, a bucket's objects, a brace's names) is opened as a file
// or an object, never as what its name would otherwise say: a file named "x; id |" beside the
// shards is no command, "-" no standard input, "x:12" no offset into x.
inline void check_matched_names(const std::vector<std::string>& names, std::string_view pattern) {
  for (const std::string& name : names) {
    input_kind kind = classify_rxfilename(name);
    bool plain =
        kind == input_kind::file || (kind == input_kind::remote && offset_colon(name) == std::string::npos);
    if (!plain)
      throw access_error(
          printable(join({"'", pattern, "' matches ", quoted_excerpt(name),
                          ", whose name reads as a command, standard input or an offset, not a file: "
                          "rename it"})));
  }
}

// A list that names a file twice would read its entries twice.
inline void check_no_repeats(std::vector<std::string> names, std::string_view pattern) {
  std::sort(names.begin(), names.end());
  auto twice = std::adjacent_find(names.begin(), names.end());
  if (twice != names.end())
    throw_usage_error({"'", pattern, "' names '", is_remote_name(*twice) ? remote::redacted(*twice) : *twice,
                       "' twice: its entries would be read twice"});
}

}  // namespace detail

// The files `pattern` names, in order, by the five ways the header's opening comment lists (a
// pipe, "-" or a name with no pattern is itself). A shard that is missing, a glob that matches
// nothing or a file named twice is an io_error or a usage_error now, before any is read.
inline std::vector<std::string> expand_shards(std::string_view pattern, const open_options& options = {}) {
  open_options open = governed(options);
  std::string p(pattern);
  if (p.empty() || p.back() == '|' || p.front() == '|' || p == "-") return {p};
  bool remote = is_remote_name(p);
#if !defined(TABLIO_WITH_CURL)
  if (remote) return {p};  // opening it says that remote names need the tablio::curl component
#endif
  // A URL with a query (a presigned URL) names one object: '?', '%' and '@' there are no
  // patterns. Messages show remote names without their query or user.
  if (remote && !p.starts_with("s3://") && p.find('?') != std::string::npos) return {p};
  const std::string shown = remote ? remote::redacted(p) : p;
  if (detail::has_braces(p)) {
    std::vector<std::string> names;
    detail::expand_braces(p, p, {}, names);
    if (names.size() != 1 || names[0] != p) {
      detail::check_no_repeats(names, shown);
      detail::check_matched_names(names, shown);
      detail::check_local_names(names, open);
      // Each is kept once its file is found, as for name@N; an http(s) server is asked when read.
      detail::shard_place place(p.substr(0, p.find('{')), open);
      if (!remote || p.starts_with("s3://"))
        for (std::size_t i = 0; i < names.size(); ++i)
          if (!place.exists(names[i]))
            throw_io_error(
                remote ? remote::redacted(names[i]) : names[i], ENOENT,
                {"cannot find shard ", decimal(i), " of ", decimal(names.size()), " of '", shown, "',"});
      return names;
    }
  }
  if (auto numbered = parse_numbered_name(p)) {
    detail::check_local_names({(*numbered)(0)}, open);
    detail::shard_place place(p, open);
    std::vector<std::string> names;
    while (place.exists((*numbered)(names.size()))) names.push_back((*numbered)(names.size()));
    auto show = [&](const std::string& name) { return remote ? remote::redacted(name) : name; };
    if (names.empty())
      throw_io_error(
          shown, ENOENT,
          {"no ", remote ? "object" : "file", " numbered from 0 ('", show((*numbered)(0)), "') for"});
    if (auto later = detail::numbered_shard_after(place, *numbered, names.size()))
      throw_io_error(show((*numbered)(names.size())), ENOENT,
                     {"shards are numbered on past a missing one ('", show(*later),
                      "' exists): cannot find shard ", decimal(names.size()), " of '", shown, "',"});
    return names;
  }
  if (std::size_t at = p.rfind('@'); at != std::string::npos && at + 1 < p.size() &&
                                     p.find_first_not_of("0123456789", at + 1) == std::string::npos) {
    std::uint64_t n = 0;
    for (char digit : std::string_view(p).substr(at + 1))
      n = n > max_shard_count ? n : n * 10 + static_cast<unsigned>(digit - '0');
    if (n == 0) throw_usage_error({"no shards in '", shown, "'"});
    if (n > max_shard_count)
      throw_usage_error({"'", shown, "' names more than ", decimal(max_shard_count), " shards"});
    // Each name is kept once its file is found: the list costs what exists, and a missing
    // shard is reported now rather than after reading all those before it. An http(s) server
    // is not asked a thousand times: its shards are found when they are read.
    detail::check_local_names({shard_name(p.substr(0, at), 0, n)}, open);
    detail::shard_place place(p, open);
    bool check = !remote || p.starts_with("s3://");
    std::vector<std::string> names;
    for (std::uint64_t i = 0; i < n; ++i) {
      names.push_back(shard_name(p.substr(0, at), i, n));
      if (check && !place.exists(names.back()))
        throw_io_error(names.back(), ENOENT, {"cannot find shard ", decimal(i), " of ", decimal(n), ","});
    }
    return names;
  }
  if (p.find_first_of("*?[") == std::string::npos) return {p};
  if (remote) {
    auto names = detail::shard_place(p, open).matching(p);
    if (!names)
      throw_usage_error({"'", shown,
                         "': an http(s) server cannot be listed for a glob; name the shards (a list, "
                         "name@N or a numbered name)"});
    if (names->empty()) throw_io_error(shown, ENOENT, {"no object matches"});
    detail::check_matched_names(*names, shown);
    return std::move(*names);
  }
  detail::check_glob_folder(p, open);
  detail::os::glob_outcome outcome;
  std::vector<std::string> names = detail::glob_files(p, outcome);
  if (outcome == detail::os::glob_outcome::no_match) throw_io_error(p, ENOENT, {"no file matches"});
  if (outcome == detail::os::glob_outcome::failed)
    throw_io_error(p, errno, {"cannot list the files matching"});
  detail::check_matched_names(names, p);
  detail::check_local_names(names, open);
  return names;  // glob sorts them
}

namespace detail {
// Where the first name of a comma-separated list ends (commas inside braces are the braces').
inline std::size_t list_item_end(std::string_view names, std::size_t start = 0) {
  int depth = 0;
  std::size_t i = start;
  for (; i < names.size() && (names[i] != ',' || depth > 0); ++i) {
    if (names[i] == '{') ++depth;
    if (names[i] == '}' && depth > 0) --depth;
  }
  return i;
}
}  // namespace detail

// The files of a comma-separated list of names, each expanded as above; a file named twice is
// a usage_error.
inline std::vector<std::string> expand_shard_list(std::string_view names, const open_options& open = {}) {
  std::vector<std::string> files;
  for (std::size_t start = 0;;) {
    std::size_t end = detail::list_item_end(names, start);
    for (auto& f : expand_shards(names.substr(start, end - start), open)) files.push_back(std::move(f));
    if (end >= names.size()) {
      if (files.size() > 1)
        detail::check_no_repeats(files, is_remote_name(names) ? remote::redacted(names) : std::string(names));
      return files;
    }
    start = end + 1;
  }
}

// The files of a table, opened one after another. While one is read, the next one, when it is
// a remote object, streams already (remote_opening): many shards cost one round trip, not one
// each, before their first bytes.
class file_sequence {
 public:
  // `opened`: how many of the files the caller has opened already.
  file_sequence(std::vector<std::string> files, const open_options& open, std::size_t opened = 0)
      : files_(std::move(files)), open_(open), next_(opened) {}

  // The names of the files, in order.
  const std::vector<std::string>& files() const noexcept { return files_; }
  // Whether every file has been opened (or the sequence closed).
  bool done() const noexcept { return next_ >= files_.size(); }
  // The index of the file open_next() gave last.
  std::uint32_t current() const noexcept { return static_cast<std::uint32_t>(next_ - 1); }

  // Opens the next file (call it only while !done()), and starts streaming the one after it
  // when that is a remote object.
  reader open_next() {
    const std::string& name = files_[next_++];
#if defined(TABLIO_WITH_CURL)
    std::optional<remote_opening> started = std::exchange(ahead_, std::nullopt);
    if (!done() && starts_ahead(files_[next_])) ahead_.emplace(files_[next_], open_);
    if (started) return started->take();
#endif
    return open_input(name, open_);
  }

  // Opens no more files, and drops the one streaming ahead.
  void close() noexcept {
    next_ = files_.size();
#if defined(TABLIO_WITH_CURL)
    ahead_.reset();
#endif
  }

 private:
#if defined(TABLIO_WITH_CURL)
  bool starts_ahead(std::string_view name) const {
    return open_.allow_network && is_remote_name(name) && can_open_at(name);
  }
  std::optional<remote_opening> ahead_;  // files_[next_], streaming
#endif
  std::vector<std::string> files_;
  open_options open_;
  std::size_t next_;
};

TABLIO_END_NAMESPACE
