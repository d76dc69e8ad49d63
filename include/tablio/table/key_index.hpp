// The keys a random-access table has read ahead, and where each one's entry is: one hash
// table for every holder (nothing here depends on one), keys kept in one arena of bytes, so
// that an index of millions of keys costs their bytes and some 32 more each.
#pragma once

#include <tablio/framing/concepts.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

TABLIO_BEGIN_NAMESPACE

namespace detail {

class key_index {
 public:
  static constexpr std::uint32_t none = 0xffffffffu;

  struct item {
    location where;
    std::uint32_t held = none;  // the value kept for an entry that cannot be read again
    bool freed = false;         // asked for once under 'o': asking again is an error
    bool dropped = false;       // behind the keys asked for under 'cs': gone from the index
  };

  // The item for key, or nullptr; dropped keys are not found.
  item* find(std::string_view key) {
    std::size_t slot = probe(key);
    if (slots_.empty() || slots_[slot] == none) return nullptr;
    item& it = entries_[slots_[slot]].value;
    return it.dropped ? nullptr : &it;
  }
  // Adds key (not there, or dropped) and returns its item.
  item& insert(std::string_view key) {
    if ((entries_.size() + 1) * 2 > slots_.size()) grow();
    std::size_t slot = probe(key);
    if (slots_[slot] != none) {
      item& it = entries_[slots_[slot]].value;
      it = item{};
      return it;
    }
    if (entries_.size() >= none) throw_usage_error({"a random-access table indexes at most 2^32-1 keys"});
    slots_[slot] = static_cast<std::uint32_t>(entries_.size());
    entries_.push_back(
        {static_cast<std::uint64_t>(keys_.size()), static_cast<std::uint32_t>(key.size()), {}});
    keys_.append(key);
    return entries_.back().value;
  }
  // Drops the keys before `key` but those freed, calling on_drop(item) for each; the keys
  // were added in order (a sorted table), so the dropped ones are a prefix.
  template <class OnDrop>
  void drop_before(std::string_view key, OnDrop on_drop) {
    for (; first_kept_ < entries_.size() && key_of(entries_[first_kept_]) < key; ++first_kept_) {
      item& it = entries_[first_kept_].value;
      if (it.freed) continue;
      it.dropped = true;
      on_drop(it);
    }
  }
  // Calls f(key) for every key added, in the order they were added.
  template <class F>
  void for_each_key(F f) const {
    for (const entry& e : entries_) f(key_of(e));
  }
  void clear() {
    slots_.clear();
    entries_.clear();
    keys_.clear();
    first_kept_ = 0;
  }

 private:
  struct entry {
    std::uint64_t key_offset;
    std::uint32_t key_size;
    item value;
  };

  std::string_view key_of(const entry& e) const { return {keys_.data() + e.key_offset, e.key_size}; }

  static std::size_t hash(std::string_view key) noexcept {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (char c : key) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
  // The slot of key, or the empty slot where it would go.
  std::size_t probe(std::string_view key) const {
    if (slots_.empty()) return 0;
    std::size_t mask = slots_.size() - 1;
    for (std::size_t i = hash(key) & mask;; i = (i + 1) & mask)
      if (slots_[i] == none || key_of(entries_[slots_[i]]) == key) return i;
  }
  void grow() {
    std::size_t size = slots_.empty() ? 64 : slots_.size() * 2;
    slots_.assign(size, none);
    for (std::uint32_t i = 0; i < entries_.size(); ++i) {
      std::size_t slot = hash(key_of(entries_[i])) & (size - 1);
      while (slots_[slot] != none) slot = (slot + 1) & (size - 1);
      slots_[slot] = i;
    }
  }

  std::vector<std::uint32_t> slots_;  // open addressing: an entry's number, or none
  std::vector<entry> entries_;
  std::string keys_;
  std::size_t first_kept_ = 0;
};

}  // namespace detail

TABLIO_END_NAMESPACE
