// example_view: a tf.Example parsed without copying. Keys, bytes values and the packed
// float and int64 lists stay where they are in the record; the view allocates nothing once
// its feature table has grown to the record's feature count, and is valid while the record
// bytes are.
//
// It accepts exactly what decode_example accepts (and rejects the same malformed input). The
// common wire form (one packed list per feature, as every writer produces) is viewed in
// place; the rare forms libprotobuf also accepts (unpacked lists, a feature split over
// several map entries, unknown fields inside a list) are normalised into storage the view
// owns. Unknown fields are otherwise skipped: a view is for reading values, an example for
// round trips.
#pragma once

#include <tablio/core/minmax.hpp>
#include <tablio/types/example.hpp>

#include <algorithm>
#include <deque>
#include <iterator>
#include <optional>
#include <span>

TABLIO_BEGIN_NAMESPACE

// Which list a feature holds: none (an empty Feature), bytes, floats or int64s.
enum class feature_kind : std::uint8_t { none, bytes, floats, int64s };

namespace detail {

// Reads a varint that was validated when the record was parsed.
inline std::uint64_t read_checked_varint(const char*& p) noexcept {
  std::uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    auto b = static_cast<unsigned char>(*p++);
    v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
    if (!(b & 0x80)) return v;
  }
}

// A bytes list's entries: tag 0x0A, a varint length, the bytes.
struct bytes_entry_decoder {
  using value_type = std::string_view;
  using owned_type = std::string;
  static std::string_view next(const char*& p) noexcept {
    ++p;
    auto n = static_cast<std::size_t>(read_checked_varint(p));
    std::string_view v(p, n);
    p += n;
    return v;
  }
};

// A packed int64 list's varints.
struct int64_decoder {
  using value_type = std::int64_t;
  using owned_type = std::int64_t;
  static std::int64_t next(const char*& p) noexcept {
    return static_cast<std::int64_t>(read_checked_varint(p));
  }
};

// Values encoded back to back, decoded as they are iterated.
template <class Decoder>
class encoded_list_view {
 public:
  using value_type = typename Decoder::value_type;
  class iterator {
   public:
    using value_type = typename Decoder::value_type;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    iterator(const char* p, const char* end) : p_(p), end_(end) { load(); }
    value_type operator*() const { return current_; }
    iterator& operator++() {
      p_ = next_;
      load();
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      ++*this;
      return old;
    }
    bool operator==(const iterator& o) const { return p_ == o.p_; }

   private:
    void load() {
      if (p_ == end_) return;
      next_ = p_;
      current_ = Decoder::next(next_);
    }
    const char* p_ = nullptr;
    const char* end_ = nullptr;
    const char* next_ = nullptr;
    value_type current_{};
  };

  encoded_list_view() = default;
  encoded_list_view(std::string_view bytes, std::size_t count) : bytes_(bytes), count_(count) {}
  std::size_t size() const noexcept { return count_; }
  bool empty() const noexcept { return count_ == 0; }
  iterator begin() const { return {bytes_.data(), bytes_.data() + bytes_.size()}; }
  iterator end() const { return {bytes_.data() + bytes_.size(), bytes_.data() + bytes_.size()}; }
  value_type front() const { return *begin(); }
  std::vector<typename Decoder::owned_type> to_vector() const { return {begin(), end()}; }

 private:
  std::string_view bytes_;
  std::size_t count_ = 0;
};

}  // namespace detail

// The values of a bytes list, as string_views into the record.
using bytes_list_view = detail::encoded_list_view<detail::bytes_entry_decoder>;
// A packed list of int64 varints, decoded as it is iterated.
using int64_list_view = detail::encoded_list_view<detail::int64_decoder>;

// A packed list of little-endian floats. The bytes in a record are not aligned for float,
// so elements are loaded, not referenced; copy_to moves them in bulk.
class float_list_view {
 public:
  float_list_view() = default;
  // Views packed floats, 4 bytes each (a trailing partial value is not counted).
  explicit float_list_view(std::string_view packed) : bytes_(packed) {}
  // Floats in the list.
  std::size_t size() const noexcept { return bytes_.size() / 4; }
  // Whether the list is empty.
  bool empty() const noexcept { return bytes_.empty(); }
  // Float i, loaded from its bytes; unchecked.
  float operator[](std::size_t i) const noexcept {
    return load<std::endian::little, float>(bytes_.data() + 4 * i);
  }
  // Copies the first min(out.size(), size()) floats into out, in one pass.
  void copy_to(std::span<float> out) const noexcept {
    load_array<std::endian::little>(out.data(), bytes_.data(), detail::min_of(out.size(), size()));
  }
  // The floats, owned.
  std::vector<float> to_vector() const {
    std::vector<float> v(size());
    copy_to(v);
    return v;
  }
  // The packed bytes in the record, little-endian.
  std::string_view bytes() const noexcept { return bytes_; }

  // An input iterator over the floats, loading each as it is read.
  class iterator {
   public:
    using value_type = float;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    // At the float whose bytes start at p.
    explicit iterator(const char* p) : p_(p) {}
    // The float here.
    float operator*() const noexcept { return load<std::endian::little, float>(p_); }
    // Moves to the next float.
    iterator& operator++() {
      p_ += 4;
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      p_ += 4;
      return old;
    }
    bool operator==(const iterator&) const = default;  // Whether both are at the same float.

   private:
    const char* p_ = nullptr;
  };
  // The first float.
  iterator begin() const { return iterator(bytes_.data()); }
  // Past the last float.
  iterator end() const { return iterator(bytes_.data() + bytes_.size()); }

 private:
  std::string_view bytes_;
};

// One feature of a viewed Example. `data` is the list in its canonical wire form: bytes
// entries (0A len bytes)..., packed floats, or packed varints.
struct feature_view {
  std::string_view key;
  feature_kind kind = feature_kind::none;
  std::string_view data;
  std::size_t count = 0;

  // The bytes list, or an empty one when the feature holds another kind.
  bytes_list_view bytes() const {
    return kind == feature_kind::bytes ? bytes_list_view(data, count) : bytes_list_view();
  }
  // The float list, or an empty one when the feature holds another kind.
  float_list_view floats() const {
    return kind == feature_kind::floats ? float_list_view(data) : float_list_view();
  }
  // The int64 list, or an empty one when the feature holds another kind.
  int64_list_view int64s() const {
    return kind == feature_kind::int64s ? int64_list_view(data, count) : int64_list_view();
  }
  // The same values, owned.
  feature to_feature() const {
    switch (kind) {
      case feature_kind::bytes:
        return bytes().to_vector();
      case feature_kind::floats:
        return floats().to_vector();
      case feature_kind::int64s:
        return int64s().to_vector();
      default:
        return std::monostate{};
    }
  }
};

namespace detail {

// Views one Feature message whose bytes are all in `c`; false if it is not in the common
// form (exactly one list field, itself holding only its values in packed form).
inline bool view_common_feature(protobuf_wire::cursor c, feature_view& f) {
  using namespace protobuf_wire;
  f.kind = feature_kind::none;
  f.data = {};
  f.count = 0;
  if (c.done()) return true;
  auto tag = static_cast<unsigned char>(*c.p);
  if (tag != 0x0A && tag != 0x12 && tag != 0x1A) return false;
  ++c.p;
  cursor list = c.sub(c.get_bytes());
  if (!c.done()) return false;  // a second field: merged or unknown, the rare path
  f.kind = static_cast<feature_kind>(tag >> 3);
  if (list.done()) return true;
  if (f.kind == feature_kind::bytes) {
    f.data = {list.p, static_cast<std::size_t>(list.end - list.p)};
    while (!list.done()) {
      if (*list.p != 0x0A) return false;
      ++list.p;
      list.get_bytes();
      ++f.count;
    }
    return true;
  }
  if (*list.p != 0x0A) return false;
  ++list.p;
  std::string_view packed = list.get_bytes();
  if (!list.done()) return false;
  if (f.kind == feature_kind::floats) {
    if (packed.size() % 4)
      list.fail({"packed floats (a multiple of 4 bytes)"}, {decimal(packed.size()), " bytes"});
    f.count = packed.size() / 4;
  } else {
    cursor values = list.sub(packed);
    while (!values.done()) {
      values.get_varint();
      ++f.count;
    }
  }
  f.data = packed;
  return true;
}

}  // namespace detail

class example_view {
 public:
  example_view() = default;
  // Views record, as parse() does.
  explicit example_view(std::string_view record, const std::string& name = "<example>") {
    parse(record, name);
  }
  // A copy views what the original views: the caller's record, or, for the rare forms, its own
  // copies of the canonical encodings the original made.
  example_view(const example_view& o) : features_(o.features_), owned_(o.owned_) { rebase(o); }
  example_view& operator=(const example_view& o) {
    if (this != &o) {
      features_ = o.features_;
      owned_ = o.owned_;
      rebase(o);
    }
    return *this;
  }
  // A move keeps the strings where they are: the views stay valid.
  example_view(example_view&&) = default;
  example_view& operator=(example_view&&) = default;

  // Parses record (which must outlive the view's use); throws format_error as decode_example.
  void parse(std::string_view record, const std::string& name = "<example>") {
    using namespace protobuf_wire;
    features_.clear();
    owned_.clear();
    bool rare = false, any_features = false;
    cursor c{record.data(), record.data() + record.size(), record.data(), &name};
    while (!c.done()) {
      std::uint64_t tag = c.get_varint();
      std::uint32_t type = static_cast<std::uint32_t>(tag & 7);
      if ((tag >> 3) != 1 || type != length_delimited) {
        if (type == 3 || type == 4) c.fail({"no groups"}, {"a group"});
        c.skip(type);
        continue;
      }
      any_features = true;
      cursor features = c.sub(c.get_bytes());
      while (!features.done()) {
        std::uint64_t t = features.get_varint();
        if ((t >> 3) != 1 || (t & 7) != length_delimited) {
          features.skip(static_cast<std::uint32_t>(t & 7));
          continue;
        }
        if (!view_entry(features.sub(features.get_bytes()))) rare = true;
      }
    }
    if (!any_features && !record.empty()) c.fail_foreign("tf.Example");
    if (rare) return parse_rare(record, name);
    settle();
  }

  // The features in bytewise key order, one per key.
  std::span<const feature_view> features() const noexcept { return features_; }
  // The number of features (distinct keys).
  std::size_t size() const noexcept { return features_.size(); }
  // The feature of that key, or nullptr; a binary search.
  const feature_view* find(std::string_view key) const noexcept {
    auto it = std::lower_bound(features_.begin(), features_.end(), key,
                               [](const feature_view& f, std::string_view k) { return f.key < k; });
    return it != features_.end() && it->key == key ? &*it : nullptr;
  }
  // Takes the feature out of the view (a table's key kept in the record); nullopt when absent.
  std::optional<feature_view> take(std::string_view key) {
    const feature_view* f = find(key);
    if (!f) return std::nullopt;
    feature_view taken = *f;
    features_.erase(features_.begin() + (f - features_.data()));
    return taken;
  }
  // The bytes list of feature `key`; empty when it is absent or of another kind.
  bytes_list_view bytes(std::string_view key) const { return find_or_empty(key).bytes(); }
  // The float list of feature `key`; empty when it is absent or of another kind.
  float_list_view floats(std::string_view key) const { return find_or_empty(key).floats(); }
  // The int64 list of feature `key`; empty when it is absent or of another kind.
  int64_list_view int64s(std::string_view key) const { return find_or_empty(key).int64s(); }

  // The same values as an owned example (without unknown fields).
  example to_example() const {
    example ex;
    ex.features_present = true;
    for (const auto& f : features_) ex.features.emplace(std::string(f.key), f.to_feature());
    return ex;
  }

 private:
  static const feature_view& find_or_empty(const feature_view* f) {
    static const feature_view none;
    return f ? *f : none;
  }
  const feature_view& find_or_empty(std::string_view key) const { return find_or_empty(find(key)); }

  // Views one map entry in the common form (key then value, each once); false otherwise.
  bool view_entry(protobuf_wire::cursor entry) {
    using namespace protobuf_wire;
    if (entry.done() || *entry.p != 0x0A) return false;
    ++entry.p;
    std::string_view key = entry.get_bytes();
    if (entry.done() || *entry.p != 0x12) return false;
    ++entry.p;
    cursor value = entry.sub(entry.get_bytes());
    if (!entry.done()) return false;
    feature_view& f = features_.emplace_back();
    f.key = key;
    return detail::view_common_feature(value, f);
  }

  // Last wins for repeated keys, as in decode_example; keys end up sorted.
  void settle() {
    auto before = [](const feature_view& a, const feature_view& b) { return a.key < b.key; };
    auto not_before = [&](const feature_view& a, const feature_view& b) { return !before(a, b); };
    // Writers mostly list each key once, in order: then there is nothing to do.
    if (std::adjacent_find(features_.begin(), features_.end(), not_before) == features_.end()) return;
    if (features_.size() <= 32) {  // an Example's handful: a stable sort in place, no buffer
      for (std::size_t i = 1; i < features_.size(); ++i)
        for (std::size_t j = i; j > 0 && before(features_[j], features_[j - 1]); --j)
          std::swap(features_[j], features_[j - 1]);
    } else {
      std::stable_sort(features_.begin(), features_.end(), before);
    }
    auto last = features_.begin();
    for (auto it = features_.begin() + 1; it != features_.end(); ++it) {
      if (it->key == last->key)
        *last = *it;
      else
        *++last = *it;
    }
    features_.erase(last + 1, features_.end());
  }

  // The rare forms: decode fully, then keep canonical encodings of what is not viewable.
  void parse_rare(std::string_view record, const std::string& name) {
    example ex = decode_example(record, name);
    features_.clear();
    for (auto& [key, value] : ex.features) {
      std::string& list = owned_.emplace_back();
      feature_view& f = features_.emplace_back();
      f.kind = static_cast<feature_kind>(value.index());
      if (auto* b = std::get_if<std::vector<std::string>>(&value)) {
        for (const auto& v : *b) {
          list.push_back(0x0A);
          protobuf_wire::put_varint(list, v.size());
          list += v;
        }
        f.count = b->size();
      } else if (auto* fl = std::get_if<std::vector<float>>(&value)) {
        list.resize(4 * fl->size());
        store_array<std::endian::little>(list.data(), fl->data(), fl->size());
        f.count = fl->size();
      } else if (auto* in = std::get_if<std::vector<std::int64_t>>(&value)) {
        for (auto x : *in) protobuf_wire::put_varint(list, static_cast<std::uint64_t>(x));
        f.count = in->size();
      }
      f.data = list;
      f.key = owned_.emplace_back(key);
    }
  }

  // After a copy: views into o's strings point at the same strings of this view.
  void rebase(const example_view& o) {
    auto own = [&](std::string_view v) {
      for (std::size_t i = 0; i < o.owned_.size(); ++i)
        if (v.data() == o.owned_[i].data()) return std::string_view(owned_[i]);
      return v;
    };
    if (!owned_.empty())
      for (feature_view& f : features_) {
        f.key = own(f.key);
        f.data = own(f.data);
      }
  }

  std::vector<feature_view> features_;
  std::deque<std::string> owned_;  // deque: views into it stay valid as it grows
};

TABLIO_END_NAMESPACE
