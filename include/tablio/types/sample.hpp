// webdataset_sample: a WebDataset sample, the files that share one key ("000017.jpg", "000017.cls",
// "000017.json"): each member's extension and bytes, in the order they were stored.
//
// As one record (what a tar table's sample entry is, and what a sample holder stores in any
// other framing), a sample is its members one after the other, each as
//   uint32 little-endian length of the extension, the extension,
//   uint64 little-endian length of the data, the data.
// A record is checked whole before anything is allocated: lengths within the record, each
// extension non-empty, with no '/' or NUL, and none twice in one sample.
#pragma once

#include <tablio/core/endian.hpp>
#include <tablio/core/error.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// A WebDataset sample: the members stored under one key, in order (see tablio/types/sample.hpp).
struct webdataset_sample {
  // The extension that a tar table reads and writes samples under: every member of a key.
  static constexpr std::string_view tar_extension = "*";

  // One file of the sample: its extension and its bytes.
  struct member {
    std::string extension;  // "jpg", "cls", "seg.png": what follows the key's '.'
    std::string data;
    bool operator==(const member&) const = default;  // The same extension and bytes.
  };
  std::vector<member> members;

  // The member of that extension, or nullptr.
  const std::string* find(std::string_view extension) const noexcept {
    for (const member& m : members)
      if (m.extension == extension) return &m.data;
    return nullptr;
  }
  // Adds a member, or replaces the data of the member of that extension.
  void set(std::string_view extension, std::string data) {
    for (member& m : members)
      if (m.extension == extension) {
        m.data = std::move(data);
        return;
      }
    members.push_back({std::string(extension), std::move(data)});
  }
  bool operator==(const webdataset_sample&) const = default;  // The same members in the same order.
};

// Whether an extension can name a member: what WebDataset's key rule can give back.
inline bool is_sample_extension(std::string_view extension) noexcept {
  for (char c : extension)  // a loop: extensions are short, two library calls cost more
    if (c == '/' || c == '\0') return false;
  return !extension.empty();
}

// Refuses an extension that cannot name a member (a tar member's, for a sample of the table
// `name`): a format_error naming the table.
inline void check_sample_extension(std::string_view extension, const std::string& name) {
  if (!is_sample_extension(extension))
    throw_format_error(name, std::nullopt, {}, {"a sample member's extension"},
                       {"an empty extension, or one with '/' or NUL"});
}

// An extension as WebDataset's grouping gives it: ASCII capitals lowercased ("JPG" reads as
// "jpg"), into `scratch` when it has any, else the extension itself.
inline std::string_view webdataset_extension(std::string_view extension, std::string& scratch) {
  auto capital = [](char c) { return c >= 'A' && c <= 'Z'; };
  std::size_t i = 0;
  while (i < extension.size() && !capital(extension[i])) ++i;
  if (i == extension.size()) return extension;
  scratch.assign(extension);
  for (; i < scratch.size(); ++i)
    if (capital(scratch[i])) scratch[i] = static_cast<char>(scratch[i] - 'A' + 'a');
  return scratch;
}

// Appends to a sample record the lengths and extension of a member of `size` bytes, whose data
// is to follow.
inline void append_sample_member_header(std::string& record, std::string_view extension, std::uint64_t size) {
  char n[8];
  store<std::endian::little>(n, static_cast<std::uint32_t>(extension.size()));
  record.append(n, 4);
  record += extension;
  store<std::endian::little>(n, size);
  record.append(n, 8);
}

// Appends one member to a sample record; nothing is checked (encode_sample checks).
inline void append_sample_member(std::string& record, std::string_view extension, std::string_view data) {
  append_sample_member_header(record, extension, data.size());
  record += data;
}

namespace detail {
// The member of a checked record at `at`: its extension and data; moves `at` past it.
inline std::pair<std::string_view, std::string_view> sample_member_at(std::string_view record,
                                                                      std::size_t& at) {
  std::size_t ext_size = load<std::endian::little, std::uint32_t>(record.data() + at);
  std::string_view extension = record.substr(at + 4, ext_size);
  at += 4 + ext_size;
  auto size = static_cast<std::size_t>(load<std::endian::little, std::uint64_t>(record.data() + at));
  at += 8;
  std::string_view data = record.substr(at, size);
  at += size;
  return {extension, data};
}

// Whether a checked record has a member of this extension.
inline bool sample_record_has(std::string_view record, std::string_view extension) {
  for (std::size_t at = 0; at < record.size();)
    if (sample_member_at(record, at).first == extension) return true;
  return false;
}

// Whether a sample's members repeat an extension, asked member by member with the record of
// the members before it: a scan of that record while they are few, a hash map of extension to
// member number past that, so that a crafted sample of very many members costs time in
// proportion, not its square.
class repeated_extensions {
 public:
  void clear() {
    members_ = 0;
    many_.clear();
  }
  bool repeats(std::string_view before, std::string_view extension) {
    std::size_t member = members_++;
    if (member < few) return sample_record_has(before, extension);
    if (many_.empty())
      for (std::size_t at = 0, k = 0; at < before.size(); ++k)
        many_.try_emplace(std::string(sample_member_at(before, at).first), k);
    return !many_.try_emplace(std::string(extension), member).second;
  }

 private:
  static constexpr std::size_t few = 16;
  std::size_t members_ = 0;
  std::unordered_map<std::string, std::size_t> many_;
};
}  // namespace detail

// Calls f(extension, data) for each member of a record, in order, once the whole record has
// been checked (a writer puts nothing of a bad one). `name` and `offset` (the record's, in
// its file) are what errors name.
template <class F>
void for_each_sample_member(std::string_view record, std::string_view name, std::uint64_t offset, F&& f) {
  detail::repeated_extensions seen;
  for (std::size_t at = 0; at < record.size();) {
    std::size_t start = at;
    auto fail = [&](std::string_view what) {
      throw_format_error(name, offset + start, {}, {"a sample member (extension and data lengths)"}, {what});
    };
    if (record.size() - at < 4) fail("a truncated extension length");
    std::uint64_t ext_size = load<std::endian::little, std::uint32_t>(record.data() + at);
    at += 4;
    if (ext_size > record.size() - at) fail("an extension longer than the record");
    std::string_view extension = record.substr(at, ext_size);
    at += ext_size;
    if (!is_sample_extension(extension)) fail("an empty extension, or one with '/' or NUL");
    if (seen.repeats(record.substr(0, start), extension)) fail("two members of one extension");
    if (record.size() - at < 8) fail("a truncated data length");
    std::uint64_t size = load<std::endian::little, std::uint64_t>(record.data() + at);
    at += 8;
    if (size > record.size() - at) fail("data longer than the record");
    at += static_cast<std::size_t>(size);
  }
  for (std::size_t at = 0; at < record.size();) {
    auto [extension, data] = detail::sample_member_at(record, at);
    f(extension, data);
  }
}

// Replaces out with the record of s. An extension that is empty, has '/' or NUL, or comes twice
// throws usage_error.
inline void encode_sample(const webdataset_sample& s, std::string& out) {
  out.clear();
  detail::repeated_extensions seen;
  for (const webdataset_sample::member& m : s.members) {
    if (!is_sample_extension(m.extension))
      throw_usage_error({"a sample member's extension '", m.extension, "' is empty or has '/' or NUL"});
    if (seen.repeats(out, m.extension))
      throw_usage_error({"a sample has two members of extension '", m.extension, "'"});
    append_sample_member(out, m.extension, m.data);
  }
}

// Replaces s's members with the record's. A malformed record throws format_error naming `name`
// and leaves s with no members.
inline void decode_sample(std::string_view record, webdataset_sample& s, const std::string& name) {
  s.members.clear();
  for_each_sample_member(record, name, 0, [&](std::string_view extension, std::string_view data) {
    s.members.push_back({std::string(extension), std::string(data)});
  });
}

TABLIO_END_NAMESPACE
