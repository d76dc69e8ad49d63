// The IDX side of the table classes ("idx:file"): item i is the entry with key "%08d" of i.
//
// A value is an IDX item through idx_item_traits: an arithmetic value is an item of one
// value (labels), a std::vector an item of one dimension, a matrix<T> an item of two, and a
// std::string the item's stored bytes as they are. Values are converted from the file's type
// on reading; on writing, the element type chooses the file's type (uint8_t, int8_t,
// int16_t, int32_t, float, double) and the first value the item's dimensions, which every
// other value must have.
#pragma once

#include <tablio/framing/idx.hpp>
#include <tablio/table/object_io.hpp>
#include <tablio/table/record_keys.hpp>
#include <tablio/types/matrix.hpp>

#include <concepts>
#include <optional>
#include <span>
#include <string>
#include <vector>

TABLIO_BEGIN_NAMESPACE

template <class V>
struct idx_item_traits;

namespace detail {

template <class T>
concept idx_storable =
    std::same_as<T, std::uint8_t> || std::same_as<T, std::int8_t> || std::same_as<T, std::int16_t> ||
    std::same_as<T, std::int32_t> || std::same_as<T, float> || std::same_as<T, double>;

[[noreturn]] inline void idx_shape_mismatch(const std::string& name, std::string expected,
                                            const idx_header& h) {
  std::string found = "items of " + std::to_string(h.item_values()) +
                      (h.item_values() == 1 ? " value" : " values") + " in " +
                      std::to_string(h.item_dims().size()) + " dimensions";
  throw format_error({name, std::nullopt, {}}, std::move(expected), found);
}

}  // namespace detail

template <class T>
requires std::is_arithmetic_v<T>
struct idx_item_traits<T> {
  using element = T;
  static std::vector<std::uint32_t> dims(const T&) { return {}; }
  static std::span<const T> values(const T& v) { return {&v, 1}; }
  static void read(const idx_header& h, std::span<const char> bytes, T& out, const std::string& name) {
    if (h.item_values() != 1) detail::idx_shape_mismatch(name, "items of one value", h);
    convert_idx_values(h.type, bytes.data(), 1, &out);
  }
};

template <class T>
requires std::is_arithmetic_v<T>
struct idx_item_traits<std::vector<T>> {
  using element = T;
  static std::vector<std::uint32_t> dims(const std::vector<T>& v) {
    return {static_cast<std::uint32_t>(v.size())};
  }
  static std::span<const T> values(const std::vector<T>& v) { return v; }
  static void read(const idx_header& h, std::span<const char> bytes, std::vector<T>& out,
                   const std::string&) {
    out.resize(static_cast<std::size_t>(h.item_values()));
    convert_idx_values(h.type, bytes.data(), out.size(), out.data());
  }
};

template <class T>
struct idx_item_traits<matrix<T>> {
  using element = T;
  static std::vector<std::uint32_t> dims(const matrix<T>& m) {
    return {static_cast<std::uint32_t>(m.num_rows()), static_cast<std::uint32_t>(m.num_cols())};
  }
  static std::span<const T> values(const matrix<T>& m) {
    return {m.data(), static_cast<std::size_t>(m.num_rows()) * static_cast<std::size_t>(m.num_cols())};
  }
  static void read(const idx_header& h, std::span<const char> bytes, matrix<T>& out,
                   const std::string& name) {
    auto d = h.item_dims();
    if (d.size() != 2) detail::idx_shape_mismatch(name, "items of two dimensions (a matrix)", h);
    if (d[0] > INT32_MAX || d[1] > INT32_MAX)
      detail::idx_shape_mismatch(name, "a matrix of at most 2^31-1 rows and columns", h);
    out.resize(static_cast<std::int32_t>(d[0]), static_cast<std::int32_t>(d[1]));
    convert_idx_values(h.type, bytes.data(), static_cast<std::size_t>(h.item_values()), out.data());
  }
};

template <>
struct idx_item_traits<std::string> {
  using element = std::uint8_t;
  static std::vector<std::uint32_t> dims(const std::string& s) {
    return {static_cast<std::uint32_t>(s.size())};
  }
  static std::span<const std::uint8_t> values(const std::string& s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
  }
  static void read(const idx_header&, std::span<const char> bytes, std::string& out, const std::string&) {
    out.assign(bytes.data(), bytes.size());  // the stored bytes, whatever the type
  }
};

template <class V>
concept idx_item = requires {
  typename idx_item_traits<V>::element;
};
// An item whose elements an IDX file can store as they are.
template <class V>
concept idx_writable_item = idx_item<V> && detail::idx_storable<typename idx_item_traits<V>::element>;

namespace detail {

[[noreturn]] inline void not_idx_items(const std::string& name) {
  throw usage_error(
      "'" + name +
      "' is an IDX file: its entries are numbers, vectors, matrices or bytes, not this holder's values");
}

// The item index a key names ("00000042" is item 42), or nothing.
inline std::optional<std::uint64_t> idx_index_of(std::string_view key) {
  if (key.empty() || key.size() > 19) return std::nullopt;
  std::uint64_t i = 0;
  for (char c : key) {
    if (c < '0' || c > '9') return std::nullopt;
    i = i * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return ordinal_key(i) == key ? std::optional(i) : std::nullopt;
}

}  // namespace detail

// Items in order (every shard_count-th from shard_index), and by key. Under `p` a file an
// interrupted writer left gives its whole items.
class idx_table_input {
 public:
  idx_table_input(const rspecifier& spec, const open_options& options)
      : file_(spec.filename, {.recover_unfinished = spec.permissive}, options),
        next_(spec.shard_index),
        step_(spec.shard_count) {}

  template <class V>
  bool next(std::string& key, V& value) {
    if (next_ >= file_.size()) return false;
    key = ordinal_key(next_);
    read(next_, value);
    next_ += step_;
    return true;
  }
  template <class V>
  bool get(std::string_view key, V& value) {
    auto i = detail::idx_index_of(key);
    if (!i || *i >= file_.size()) return false;
    read(*i, value);
    return true;
  }
  bool contains(std::string_view key) const {
    auto i = detail::idx_index_of(key);
    return i && *i < file_.size();
  }
  const std::string& path() const noexcept { return file_.name(); }

 private:
  template <class V>
  void read(std::uint64_t i, V& value) {
    if constexpr (idx_item<V>)
      detail::with_key(ordinal_key(i), file_.name(), [&] {
        idx_item_traits<V>::read(file_.header(), file_.item_bytes(i), value, file_.name());
      });
    else
      detail::not_idx_items(file_.name());
  }

  idx_file file_;
  std::uint64_t next_, step_;
};

// Items appended in key order: the n-th entry written must have key "%08d" of n.
class idx_table_output {
 public:
  idx_table_output(const wspecifier& spec, const open_options& options)
      : name_(spec.archive), options_(options) {}

  template <class V>
  void write(std::string_view key, const V& value) {
    if constexpr (idx_writable_item<V>) {
      using traits = idx_item_traits<V>;
      if (key != ordinal_key(written_))
        throw usage_error("IDX items are keyed by their index: entry " + std::to_string(written_) + " of '" +
                          name_ + "' must have key '" + ordinal_key(written_) + "', not '" +
                          std::string(key) + "'");
      std::vector<std::uint32_t> dims = traits::dims(value);
      if (!out_) {
        out_.emplace(open_output(name_, options_), idx_type_of<typename traits::element>(), dims);
        dims_ = dims;
      } else if (dims != dims_) {
        throw usage_error("every item of the IDX file '" + name_ + "' must have the first item's shape");
      }
      out_->template write_item<typename traits::element>(traits::values(value));
      ++written_;
    } else {
      throw usage_error("'" + name_ +
                        "': IDX files store uint8, int8, int16, int32, float or double numbers, "
                        "vectors or matrices; this holder's values are none of those");
    }
  }
  void flush() {
    if (out_) out_->flush();
  }
  void close() {
    // An empty table is an empty file of single bytes: the shape of no item is known.
    if (!out_) out_.emplace(open_output(name_, options_), idx_type::u8, std::vector<std::uint32_t>{});
    out_->close();
  }

 private:
  std::string name_;
  open_options options_;
  std::optional<idx_writer> out_;
  std::vector<std::uint32_t> dims_;
  std::uint64_t written_ = 0;
};

TABLIO_END_NAMESPACE
