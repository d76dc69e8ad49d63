// The three table classes over a value type's converter. A converter C names the holder it
// reads with (C::holder) and turns its values into Python objects:
//   static py::object to_python(value_type&& v, const value_options&);
// and back:
//   static owned_value from_python(py::handle h, const value_options&);
// When C::holder's values are views, C::owned_holder names the holder of owned values, which
// writes, and reads for random access (a table may hold values it read ahead, which a view
// would outlive); C::to_python takes its values too. Random access converts the values the
// table keeps where C::to_python takes a const value, and else values of their own (for
// converters that take over a value's storage).
// A value that failed where it was read (a bad image, thrown at its conversion) says so through
// C::failed(const value_type&), so that a batch's error names its key.
// A batch's values are stacked by C::stacker when it has one, which takes each value as it
// is read (without the GIL; a view is valid only until the next entry):
//   stacker(const value_options&, std::size_t expected); void add(value_type&); py::object finish();
// and else by C::stack(std::vector<value_type>&, const value_options&), or into a list.
// Table work runs without the GIL; only conversion holds it.
#pragma once

#include "arrays.hpp"
#include "binding.hpp"

#include <tablio/table/object.hpp>
#include <tablio/table/record_form.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>

namespace tablio_python {

template <class C>
struct owned_holder_of {
  using type = typename C::holder;
};
template <class C>
requires requires { typename C::owned_holder; }
struct owned_holder_of<C> {
  using type = typename C::owned_holder;
};

// Tables read values of either form a record may hold (holder/example_form.hpp), and write
// TFRecord files in the Example form, as the tool does: one encoding per format and type.
template <class H>
using read_with = tablio::reading_holder_t<H>;

// The key a batch's conversion errors name: its record's, when it has one record.
inline std::string one_key(const std::vector<std::string>& keys) {
  return keys.size() == 1 ? keys[0] : std::string();
}

template <class C>
py::object stack_values(std::vector<typename C::holder::value_type>& values, const value_options& options) {
  if constexpr (requires { C::stack(values, options); }) {
    return C::stack(values, options);
  } else {
    py::list out(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) out[i] = C::to_python(std::move(values[i]), options);
    return std::move(out);
  }
}

// The values `produce` reads, stacked as a batch stacks them: produce(add) runs without the GIL
// and calls add(key, value&) for each value in order (at most n; n may mean "all"), whose key
// goes to `keys`; the value may be moved from or reused after. The first record whose value
// failed where it was read (a bad image) is named by the error its conversion throws.
template <class C, class Produce>
py::object stacked_batch(const value_options& options, std::vector<std::string>& keys, std::size_t n,
                         Produce&& produce) {
  using value_type = typename C::holder::value_type;
  std::size_t expected = n < 4096 ? n : 4096;  // n may mean "all": grow past it as entries arrive
  keys.reserve(expected);
  std::optional<std::string> failed;
  auto note_failure = [&](const value_type& v) {
    if constexpr (requires { C::failed(v); })
      if (!failed && C::failed(v)) failed = keys.back();
  };
  if constexpr (requires { typename C::stacker; }) {
    typename C::stacker stacked(options, expected);
    {
      unlocked_gil unlocked;
      produce([&](const std::string& key, value_type& v) {
        keys.push_back(key);
        note_failure(v);
        stacked.add(v);
      });
    }
    return converted_in("", failed.value_or(one_key(keys)), [&] { return stacked.finish(); });
  } else {
    std::vector<value_type> read;
    {
      unlocked_gil unlocked;
      read.reserve(expected);
      produce([&](const std::string& key, value_type& v) {
        keys.push_back(key);
        note_failure(v);
        read.push_back(std::move(v));
        if constexpr (requires { C::reuse(v, options); }) C::reuse(v, options);
      });
    }
    py::object values =
        converted_in("", failed.value_or(one_key(keys)), [&] { return stack_values<C>(read, options); });
    // Values stacked into one array: their memory is for the next batch's.
    if constexpr (requires(value_type v) { C::recycle(std::move(v), options); })
      for (value_type& v : read) C::recycle(std::move(v), options);
    return values;
  }
}

inline py::list keys_to_python(const std::vector<std::string>& keys) {
  py::list out(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) out[i] = key_to_python(keys[i]);
  return out;
}

// Opens a reading table of H's values over rspec, under the keys they were written with
// (tablio::reading_rspec), with the segments file and options value_options give.
template <class H, class Table>
void open_table(Table& table, const std::string& named, const value_options& options) {
  const std::string rspec = tablio::reading_rspec<H>(named, options.open);
  if (options.segments.empty() && !options.max_overshoot && !options.min_segment_length)
    return table.open(rspec, options.open);
  tablio::rspecifier r = tablio::require_rspecifier(rspec);
  if (!options.segments.empty()) r.segments = options.segments;
  r.segmenting.max_overshoot = options.max_overshoot.value_or(r.segmenting.max_overshoot);
  r.segmenting.min_segment_length = options.min_segment_length.value_or(r.segmenting.min_segment_length);
  table.open(r, options.open);
}

template <class C>
class sequential_table final : public sequential_base {
 public:
  using value_type = typename C::holder::value_type;

  sequential_table(const std::string& rspec, const value_options& options) : options_(options) {
    if constexpr (requires(value_type & v) { C::reuse(v, options_); })
      options_.recycled = std::make_shared<storage_pools>();
    if constexpr (requires { C::configure(table_.holder(), options_); })
      C::configure(table_.holder(), options_);
    unlocked_gil unlocked;
    open_table<typename owned_holder_of<C>::type>(table_, rspec, options);
  }

  bool advance_key() override {
    if (!table_.is_open()) return false;
    if (started_) {
      if (table_.done()) return false;  // an error ended it: iteration stops there
      table_.next();
    }
    started_ = true;
    return !table_.done();
  }
  bool advance() override {
    if (!advance_key()) return false;
    table_.value();  // reads a value loaded on demand (a script's entry) here, without the GIL
    return true;
  }
  const std::string& key() const override { return table_.key(); }
  // The value handed over whole where its converter can (an array over its memory); the memory
  // of an array freed since comes back for the next value.
  py::object take_value() override {
    value_type& v = table_.value();
    py::object out = C::to_python(std::move(v), options_);
    if constexpr (requires { C::reuse(v, options_); }) C::reuse(v, options_);
    return out;
  }

  py::tuple batch(std::size_t n) override {
    std::vector<std::string> keys;
    py::object values = stacked_batch<C>(options_, keys, n, [&](auto&& add) {
      while (keys.size() < n && advance()) add(table_.key(), table_.value());
    });
    return py::make_tuple(keys_to_python(keys), std::move(values));
  }

  std::string error() const override { return table_.error(); }
  std::uint64_t left_out() const override { return table_.left_out(); }
  void close() override {
    unlocked_gil unlocked;
    table_.close();
  }

 private:
  tablio::sequential_table_reader<read_with<typename C::holder>> table_;
  value_options options_;
  bool started_ = false;
};

// Notes where each entry a random-access table reads starts, by its key, in the map the table
// points it to: values whose images are decoded when converted (after the read, by then of any
// key) name the offset in their errors, as a sequential table's do.
template <class H>
class offset_noting_holder : public H {
 public:
  static std::unordered_map<std::string, std::uint64_t>*& offsets() {
    thread_local std::unordered_map<std::string, std::uint64_t>* noted = nullptr;
    return noted;
  }
  void at_key(std::string_view key) {  // "" until a record that keeps its key gave it
    key_.assign(key);
    if (!key_.empty() && offset_) note();
  }
  void at_offset(std::uint64_t offset) {
    offset_ = offset;
    if (!key_.empty()) note();
  }

 private:
  void note() {
    if (offsets()) (*offsets())[key_] = *offset_;
  }
  std::string key_;
  std::optional<std::uint64_t> offset_;
};

// Whether C's conversion decodes images= (of values random access read).
template <class C>
inline constexpr bool images_when_converted = requires {
  requires C::images_when_converted;
};

// C's holder for random access: one that notes its entries' offsets where C's conversion
// decodes images.
template <class C>
using random_access_holder =
    std::conditional_t<images_when_converted<C>,
                       offset_noting_holder<read_with<typename owned_holder_of<C>::type>>,
                       read_with<typename owned_holder_of<C>::type>>;

template <class C>
class random_access_table final : public random_access_base {
 public:
  using holder = random_access_holder<C>;
  using value_type = typename holder::value_type;

  random_access_table(const std::string& rspec, const value_options& options) : options_(options) {
    unlocked_gil unlocked;
    open_table<typename owned_holder_of<C>::type>(table_, rspec, options);
  }

  std::variant<py::list, std::size_t> get_all(const std::vector<std::string>& keys) override {
    if (keys.size() > 1) {
      unlocked_gil unlocked;
      table_.prefetch(keys);  // a batch's remote ranges, fetched at once
    }
    if constexpr (requires(const value_type& v) { C::to_python(v, options_); }) {
      // Converted from the value the table keeps, with no copy of it first: each lookup
      // without the GIL, then its conversion (the next lookup may replace the value).
      py::list out(keys.size());
      for (std::size_t i = 0; i < keys.size(); ++i) {
        const value_type* v;
        {
          unlocked_gil unlocked;
          noting_offsets noting(offsets_, options_);
          v = table_.borrow(keys[i]);
        }
        if (!v) return i;
        looked_up_key() = keys[i];
        looked_up_offset() = offset_of(keys[i]);
        out[i] = converted_in("", keys[i], [&] { return C::to_python(*v, options_); });
      }
      return out;
    } else {
      std::vector<value_type> copies;
      copies.reserve(keys.size());
      {
        unlocked_gil unlocked;
        // Values of Python's own: the table hands over what it can give again, and copies
        // what it keeps (values read ahead from a pipe).
        noting_offsets noting(offsets_, options_);
        for (const std::string& key : keys) {
          std::optional<value_type> v = table_.find(key);
          if (!v) return copies.size();
          copies.push_back(std::move(*v));
        }
      }
      py::list out(copies.size());
      for (std::size_t i = 0; i < copies.size(); ++i) {
        looked_up_key() = keys[i];
        looked_up_offset() = offset_of(keys[i]);
        out[i] = converted_in("", keys[i], [&] { return C::to_python(std::move(copies[i]), options_); });
      }
      return out;
    }
  }
  bool contains(const std::string& key) override {
    unlocked_gil unlocked;
    return table_.contains(key);
  }
  std::optional<std::uint64_t> size() override {
    unlocked_gil unlocked;
    return table_.size();
  }
  std::optional<std::vector<std::string>> indexed_keys() override {
    std::vector<std::string> keys;
    if (!table_.for_each_key([&](std::string_view key) { keys.emplace_back(key); })) return std::nullopt;
    return keys;
  }
  void close() override {
    unlocked_gil unlocked;
    table_.close();
  }

 private:
  // Points the holders the table makes on this thread to the table's offsets while it reads.
  struct noting_offsets {
    noting_offsets([[maybe_unused]] std::unordered_map<std::string, std::uint64_t>& offsets,
                   [[maybe_unused]] const value_options& options) {
      if constexpr (images_when_converted<C>)
        if (options.images) holder::offsets() = &offsets;
    }
    ~noting_offsets() {
      if constexpr (images_when_converted<C>) holder::offsets() = nullptr;
    }
    noting_offsets(const noting_offsets&) = delete;
    noting_offsets& operator=(const noting_offsets&) = delete;
  };
  std::optional<std::uint64_t> offset_of(const std::string& key) const {
    auto it = offsets_.find(key);
    return it == offsets_.end() ? std::nullopt : std::optional<std::uint64_t>(it->second);
  }

  tablio::random_access_table_reader<holder> table_;
  value_options options_;
  std::unordered_map<std::string, std::uint64_t> offsets_;  // of entries read, where noted
};

// Runs f, which converts the value to write under `key`: a value it refuses is an error of the
// same kind naming the key, since the caller may be writing many.
template <class F>
auto converted_for(const std::string& key, F f) -> decltype(f()) {
  const std::string where = "the value for key " + tablio::quoted_key(key) + ": ";
  try {
    return f();
  } catch (const tablio::usage_error& e) {
    throw tablio::usage_error(where + e.what());
  } catch (const py::value_error& e) {
    throw py::value_error(where + e.what());
  } catch (const py::type_error& e) {
    throw py::type_error(where + e.what());
  }
}

template <class C, class Holder = typename owned_holder_of<C>::type>
class table_writer final : public writer_base {
 public:
  using holder = Holder;
  using value_type = typename holder::value_type;

  table_writer(const std::string& wspec, const value_options& options) : options_(options) {
    unlocked_gil unlocked;
    table_.open(wspec, options.open);
  }
  void write(const std::string& key, py::handle value) override {
    value_type v = converted_for(key, [&] { return C::from_python(value, options_); });
    unlocked_gil unlocked;
    table_.write(key, std::move(v));  // taken over by a writer's threads
  }
  void flush() override {
    unlocked_gil unlocked;
    table_.flush();
  }
  void close() override {
    unlocked_gil unlocked;
    table_.close();
  }
  void abandon() override {
    unlocked_gil unlocked;
    table_.abandon();
  }

 private:
  tablio::table_writer<holder> table_;
  value_options options_;
};

// A writer of C's values to wspec, in the form every writer stores them in there.
template <class C>
std::unique_ptr<writer_base> make_writer(const std::string& wspec, const value_options& options) {
  return tablio::with_writing_holder<typename owned_holder_of<C>::type>(
      wspec, [&]<class W>() -> std::unique_ptr<writer_base> {
        return std::make_unique<table_writer<C, W>>(wspec, options);
      });
}

// Splits rspec into n shards, written as make_writer writes.
template <class H>
tablio::shard_plan split_table(const std::string& named, const std::string& wspec, std::uint64_t n,
                               tablio::shard_balance by, const tablio::open_options& open) {
  unlocked_gil unlocked;
  const std::string rspec = tablio::reading_rspec<H>(named, open);
  return tablio::with_writing_holder<H>(
      wspec, [&]<class W>() { return tablio::shard_table<read_with<H>, W>(rspec, wspec, n, by, open); });
}

// The entry for a value type whose reading and writing use one converter.
template <class C>
value_type_entry entry_for() {
  return {
      [](const std::string& s, const value_options& o) -> std::unique_ptr<sequential_base> {
        return std::make_unique<sequential_table<C>>(s, o);
      },
      [](const std::string& s, const value_options& o) -> std::unique_ptr<random_access_base> {
        return std::make_unique<random_access_table<C>>(s, o);
      },
      make_writer<C>,
      split_table<typename owned_holder_of<C>::type>,
      [](const std::string& rspec, const tablio::open_options& open) {
        unlocked_gil unlocked;
        using H = typename owned_holder_of<C>::type;
        return tablio::index_shards<read_with<H>>(tablio::reading_rspec<H>(rspec, open), open);
      },
      tablio::record_extension<typename owned_holder_of<C>::type>(),
      [](const std::string& rxfilename, const value_options& o) -> py::object {
        using holder = typename owned_holder_of<C>::type;
        typename holder::value_type v;
        {
          unlocked_gil unlocked;
          v = tablio::read_object<holder>(rxfilename, o.open);
        }
        return C::to_python(std::move(v), o);
      },
      [](const std::string& wxfilename, py::handle value, bool binary, const value_options& o) {
        using holder = typename owned_holder_of<C>::type;
        typename holder::value_type v = C::from_python(value, o);
        unlocked_gil unlocked;
        tablio::write_object<holder>(wxfilename, v, binary, o.open);
      },
      tablio::stored_as_example<typename owned_holder_of<C>::type>,
  };
}

// The entry for a value type read as one of two precisions (dtype=numpy.float64 picks D).
template <class F, class D>
value_type_entry entry_for_precisions() {
  value_type_entry single = entry_for<F>(), twice = entry_for<D>();
  return {
      [=](const std::string& s, const value_options& o) {
        return o.double_precision ? twice.sequential(s, o) : single.sequential(s, o);
      },
      [=](const std::string& s, const value_options& o) {
        return o.double_precision ? twice.random_access(s, o) : single.random_access(s, o);
      },
      [=](const std::string& s, const value_options& o) {
        return o.double_precision ? twice.writer(s, o) : single.writer(s, o);
      },
      single.shard,
      single.index_shards,
      single.tar_extension,
      [=](const std::string& s, const value_options& o) {
        return o.double_precision ? twice.load_object(s, o) : single.load_object(s, o);
      },
      [=](const std::string& s, py::handle v, bool binary, const value_options& o) {
        return o.double_precision ? twice.save_object(s, v, binary, o) : single.save_object(s, v, binary, o);
      },
      single.stored_as_example,
  };
}

}  // namespace tablio_python
