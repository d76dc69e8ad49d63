// random_access_table_reader<Holder, Framing>: looks values up by key in a table over any
// input framing (framing/concepts.hpp), with Kaldi's option semantics. Its constructor's
// arguments open the framing; with the default, any_framing, an rspecifier names it.
//
// at() and find() give the caller a value of its own, which no later call changes; borrow()
// and borrow_at() give the value the reader holds without a copy, valid until the next call
// on the reader, as Kaldi's RandomAccessTableReader::Value() is.
//
// A framing with keyed lookup (scripts, LMDB, IDX) is asked for each key; a value is read
// when asked for and only the last one is held. Any other framing (archives, TFRecord files,
// tar) is read ahead as far as needed to find a key, keeping each entry's location, so that
// memory holds keys and locations and a value is read again when asked for; entries that
// cannot be read again (from a pipe, a compressed file) keep their values instead. When
// reading ahead meets a failure (bad data, a command that exited non-zero, a repeated key),
// every later lookup that would have to read on throws it again: a failed input never looks
// like absent keys. The options (Kaldi's; any_framing takes them from the rspecifier):
//
//   s    the table is sorted: reading ahead stops past the key asked for, disorder is an error
//   cs   with s, keys are also asked for in sorted order: only one value is held
//   o    each key is asked for once: values are freed after use
//   p    unreadable entries are absent instead of errors, and a failed input ends the table
#pragma once

#include <tablio/core/owned.hpp>
#include <tablio/framing/concepts.hpp>
#include <tablio/holder/token.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/table/entry_io.hpp>
#include <tablio/table/key_index.hpp>

#include <exception>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

TABLIO_BEGIN_NAMESPACE

struct any_framing;

template <holder_type H, class Framing = any_framing>
class random_access_table_reader {
  static_assert(detail::complete_framing<Framing>,
                "tables opened from specifiers need <tablio/table/any_framing.hpp> (or <tablio/tablio.hpp>)");

 public:
  using value_type = typename H::value_type;
  using framing_type = input_side<Framing>;

  random_access_table_reader() = default;
  // Opens the framing with these arguments; a name (an rspecifier for any_framing), with open
  // options or without, goes to the constructor below, which is no template.
  template <class... Args>
  requires(
      sizeof...(Args) > 0 && std::constructible_from<framing_type, Args...> &&
      !detail::opened_by_name<framing_type, Args...>) explicit random_access_table_reader(Args&&... args) {
    open(std::forward<Args>(args)...);
  }
  explicit random_access_table_reader(std::string_view rspec, const open_options& options = {}) requires
      std::constructible_from<framing_type, std::string_view, const open_options&> {
    open(rspec, options);
  }

  // Closes what is open, then opens the framing with these arguments, as the constructors do;
  // for a framing with keyed lookup, readies its lookups.
  template <class... Args>
  void open(Args&&... args) {
    if constexpr (detail::opened_by_name<framing_type, Args...>)
      open_named(args...);
    else
      open_framing([&] { return make_owned<framing_type>(std::forward<Args>(args)...); });
  }

  // Whether a framing is open: opened, and not closed since.
  bool is_open() const noexcept { return static_cast<bool>(framing_); }

  // Whether the table has the key. Under 'p', also whether its value can be read.
  bool contains(std::string_view key) { return lookup(key, options_.permissive) != nullptr; }

  // The value for key, the caller's own; throws missing_key_error naming the key when it is
  // absent (under 'p', also when unreadable), and the data's error (format_error) when it is
  // unreadable.
  value_type at(std::string_view key) { return take(borrow_at(key)); }
  // at(), by Kaldi's name (RandomAccessTableReader::Value), except that it returns a copy.
  value_type value(std::string_view key) { return at(key); }

  // The value for key, or nothing when the table has no such key. Data errors still throw
  // unless the 'p' option is given.
  std::optional<value_type> find(std::string_view key) {
    const value_type* v = lookup(key, true);
    if (!v) return std::nullopt;
    return take(*v);
  }

  // The value the reader holds for key, without a copy: valid until the next call on this
  // reader (Kaldi's rule for RandomAccessTableReader::Value), nullptr when absent.
  const value_type* borrow(std::string_view key) { return lookup(key, true); }
  // The value the reader holds for key, without a copy (valid as borrow()'s); throws as at() does.
  const value_type& borrow_at(std::string_view key) {
    const value_type* v = lookup(key, true);
    if (!v) [[unlikely]]
      throw missing_key_error(name_, std::string(key), absent_reason_);
    return *v;
  }

  // Calls f(key) for every key of a table without keyed lookup, in table order, after
  // reading it ahead to its end (a repeated key is a format_error here, as in any lookup); a
  // script's keys in its order, reading no value (under 'p' too); false, calling nothing, for
  // other tables with keyed lookup (LMDB, IDX).
  template <class F>
  bool for_each_key(F f) {
    if (!framing_) throw_usage_error({"keys of a random_access_table_reader that is not open"});
    if (keyed_) {  // a script lists its keys without reading values; other keyed framings cannot
      if constexpr (requires(framing_type & t) { t.for_each_key(f); })
        return framing_->for_each_key(f);
      else
        return false;
    }
    while (scan_next({})) {  // to the end, which under 's' a lookup would not read past
    }
    index_.for_each_key(f);
    return true;
  }

  // Keys about to be looked up (a batch): a framing with keyed lookup that can (a script into
  // remote objects) fetches what they point at now, several requests at a time.
  void prefetch(std::span<const std::string> keys) {
    if constexpr (requires(framing_type & f) { f.prefetch(keys); }) {
      if (framing_ && keyed_) framing_->prefetch(keys);
    }
  }

  // The number of entries, when the framing knows it.
  std::optional<std::uint64_t> size() {
    if constexpr (requires(framing_type & f) { std::optional<std::uint64_t>(f.size()); }) {
      if (framing_) return framing_->size();
    }
    return std::nullopt;
  }

  // Closes the framing and frees every value and location held; throws when an input command
  // failed. A reader closed already does nothing.
  void close();

  ~random_access_table_reader();
  random_access_table_reader(random_access_table_reader&&) noexcept = default;
  random_access_table_reader& operator=(random_access_table_reader&&) noexcept = default;

  // The framing, for what only it knows.
  framing_type& framing() noexcept { return *framing_; }

 private:
  // Out of line, so that the compiled mode's instances keep them out of users' objects.
  void open_named(std::string_view name, const open_options& options = {});
  template <class Make>
  void open_framing(Make make);
  const value_type* lookup(std::string_view key, bool load);

  // ----- framings with keyed lookup
  const value_type* lookup_keyed(std::string_view key, bool load) {
    if (current_ && current_->first == key) return &current_->second;
    if (!detail::find_entry(*framing_, key, entry_)) return nullptr;
    if (!load) return &placeholder();
    return hold_current(key, [&](H& h) {
      detail::load_pending(*framing_, entry_);
      reader_.read(h, entry_);
    });
  }

  // Reads key's value with read(holder) into the one value held; under 'p' an unreadable
  // value is absent, with the reason kept.
  template <class Read>
  const value_type* hold_current(std::string_view key, Read read) {
    try {
      H h;
      read(h);
      note_once(key);
      return hold(key, std::move(h.value()), true);
    } catch (const tablio::error& e) {
      if (!options_.permissive) throw;
      absent_reason_ = e.what();
      return nullptr;
    }
  }

  // ----- framings read ahead
  const value_type* lookup_scanned(std::string_view key, bool load) {
    detail::key_index::item* it = index_.find(key);
    if (it && it->freed)
      throw_format_error(name_, std::nullopt, key, {"each key asked for once (the o option)"},
                         {"a second request"});
    if (options_.called_sorted) {
      if (!last_requested_.empty() && key < last_requested_)
        throw_format_error(name_, std::nullopt, key, {"keys asked for in sorted order (the cs option)"},
                           {quoted_excerpt(key), " after ", quoted_excerpt(last_requested_)});
      last_requested_ = key;
      drop_keys_before(key);
    }
    if (current_ && current_->first == key) return current_for(key, load);
    if (!it) {
      if (!scan_for(key)) return nullptr;
      it = index_.find(key);
      if (!it) return current_ && current_->first == key ? current_for(key, load) : nullptr;
    }
    if (!load) return &placeholder();
    return materialize(key, *it);
  }

  // The value held for key, which a load hands out (and 'o' then frees at the next call).
  const value_type* current_for(std::string_view key, bool load) {
    if (load) note_once(key);
    return &current_->second;
  }

  // Reads ahead until the key is found (true), passed in a sorted table, or the end.
  bool scan_for(std::string_view key) {
    if (options_.sorted && !last_scanned_.empty() && key <= last_scanned_) return false;
    while (scan_next(key)) {
      if (entry_.key == key) return true;
      if (options_.sorted && key < entry_.key)
        return false;  // (not entry_.key > key: Clang 14 fails on that)
    }
    return false;
  }

  // Reads the next entry into the index, keeping its value when it cannot be read again or
  // is `wanted`'s; false at the end. Under 'p' bad data ends the table; any other failure
  // stays the table's: every later lookup that has to read ahead throws it again.
  bool scan_next(std::string_view wanted) {
    if (failure_) std::rethrow_exception(failure_);
    if (eof_) return false;
    try {
      if (!detail::next_entry(*framing_, entry_)) {
        finish_input();
        return false;
      }
      bool again = detail::can_read_at(*framing_);
      // The holder reads what it must: an object, to get past it; a record that keeps its
      // key; any value that cannot be read again.
      bool read = !again || entry_.form == entry_form::object || entry_.provisional_key;
      if (!entry_.provisional_key) check_new_key(entry_.key);
      if (read) {
        detail::load_pending(*framing_, entry_);
        reader_.read(scan_holder_, entry_);
        if (entry_.provisional_key) check_new_key(entry_.key);
      }
      detail::key_index::item* freed = index_.find(entry_.key);
      if (!freed || !freed->freed) {  // a key asked for once already is never asked for again
        detail::key_index::item& it = index_.insert(entry_.key);
        it.where = entry_.where;
        if (!again) {
          it.held = static_cast<std::uint32_t>(held_.size());
          held_.emplace_back(std::move(scan_holder_.value()));
        } else if (read && entry_.key == wanted) {
          hold(entry_.key, std::move(scan_holder_.value()), true);
        }
      }
    } catch (const format_error& e) {
      if (!options_.permissive) {
        failure_ = std::current_exception();
        throw;
      }
      absent_reason_ = e.what();
      eof_ = true;
      return false;
    } catch (const tablio::error&) {
      failure_ = std::current_exception();
      throw;
    }
    last_scanned_ = entry_.key;
    return true;
  }

  // The end of the input. Input that cannot be read again (a command, a compressed stream)
  // has given all it will and is closed here, so that a command that failed is an error now
  // rather than keys that seem absent. Under 'p' that only ends the table, as it does for a
  // sequential reader.
  void finish_input() {
    eof_ = true;
    if (detail::can_read_at(*framing_)) return;
    try {
      framing_->close();
    } catch (const tablio::error& e) {
      if (!options_.permissive) throw;
      absent_reason_ = e.what();
    }
  }

  // A key read ahead must keep the order 's' promises, and must not repeat.
  void check_new_key(const std::string& k) {
    if (options_.sorted && !last_scanned_.empty() && k <= last_scanned_)
      throw_format_error(name_, entry_.where.offset, k, {"keys in sorted order (the s option)"},
                         {"keys in archive are not in sorted order: ", quoted_excerpt(last_scanned_),
                          " is followed by ", quoted_excerpt(k)});
    detail::key_index::item* seen = index_.find(k);
    if ((seen && !seen->freed) || (current_ && current_->first == k && !options_.called_sorted))
      throw_format_error(name_, entry_.where.offset, k, {"distinct keys in the table"},
                         {"duplicate key ", quoted_excerpt(k)});
  }

  const value_type* materialize(std::string_view key, detail::key_index::item& it) {
    if (current_ && current_->first == key) return current_for(key, true);
    if (it.held != detail::key_index::none) {
      note_once(key);
      std::optional<value_type>& held = held_[it.held];
      if (options_.once || options_.called_sorted) {
        // Asked for once, or never again after a later key: held as the current value
        // alone, which only 'o' lets the caller take over (under 'cs' the key may come again).
        const value_type* v = hold(key, std::move(*held), options_.once);
        held.reset();
        it.held = detail::key_index::none;
        return v;
      }
      return &*held;
    }
    // Read the value again at its location.
    if constexpr (positional_input<framing_type>) {
      entry_.key = key;
      framing_->read_at(it.where, entry_);
      H h;
      reader_.read(h, entry_);
      note_once(key);
      return hold(key, std::move(h.value()), true);
    } else {
      return nullptr;  // without read_at, every entry keeps its value
    }
  }

  // cs: keys before the one asked for can never be asked for again.
  void drop_keys_before(std::string_view key) {
    if (current_ && current_->first < key) current_.reset();
    if (!options_.sorted) return;  // an unsorted table may still hold them later on
    index_.drop_before(key, [&](detail::key_index::item& it) {
      if (it.held != detail::key_index::none) held_[it.held].reset();
    });
  }

  // o: the value handed out last is freed when the next request comes.
  void note_once(std::string_view key) {
    if (options_.once) once_pending_ = key;
  }
  void release_previous_once() {
    if (once_pending_.empty()) return;
    if (detail::key_index::item* it = index_.find(once_pending_)) {
      it->freed = true;
      if (it->held != detail::key_index::none) held_[it->held].reset();
      it->held = detail::key_index::none;
    }
    if (current_ && current_->first == once_pending_) current_.reset();
    once_pending_.clear();
  }

  // Makes v the value held for key; `again`: the table can give it again (read it, find it),
  // so that at() and find() hand it over rather than copy it.
  const value_type* hold(std::string_view key, value_type&& v, bool again) {
    current_.emplace(std::string(key), std::move(v));
    current_again_ = again;
    return &current_->second;
  }

  // The caller's own copy of a value lookup() gave.
  value_type take(const value_type& v) {
    if (current_ && &v == &current_->second && current_again_) {
      value_type out = std::move(current_->second);
      current_.reset();
      return out;
    }
    return v;
  }

  static const value_type& placeholder() {
    static const value_type empty{};
    return empty;
  }

  owned<framing_type> framing_;  // on the heap: entries point into it
  read_options options_;
  std::string name_;
  bool keyed_ = false;
  bool eof_ = false;
  entry entry_;
  entry_reader<H, detail::input_forms<framing_type>()> reader_;
  H scan_holder_;
  detail::key_index index_;
  std::vector<std::optional<value_type>> held_;  // values of entries that cannot be read again
  std::optional<std::pair<std::string, value_type>> current_;
  bool current_again_ = false;  // the table can give current_ again
  std::exception_ptr failure_;  // what ended reading ahead, thrown again by every lookup that reads on
  std::string last_scanned_;
  std::string last_requested_;
  std::string once_pending_;
  std::string absent_reason_;
};

template <holder_type H, class Framing>
random_access_table_reader<H, Framing>::~random_access_table_reader() {
  try {
    close();
  } catch (const std::exception& e) {
    if (!options_.permissive) report_error(e.what());
  }
}

template <holder_type H, class Framing>
void random_access_table_reader<H, Framing>::open_named(std::string_view name, const open_options& options) {
  open_framing([&] { return make_owned<framing_type>(name, options); });
}

template <holder_type H, class Framing>
template <class Make>
void random_access_table_reader<H, Framing>::open_framing(Make make) {
  close();
  auto framing = make();
  detail::suggest_extension(*framing, record_extension<H>());
  detail::check_key_option<H>(detail::input_key_name(*framing), detail::table_name(*framing));
  options_ = detail::reading_options(*framing);
  if (!options_.sorted) options_.called_sorted = false;  // as Kaldi: 'cs' means nothing without 's'
  name_ = detail::table_name(*framing);
  keyed_ = detail::can_find(*framing);
  if constexpr (requires { framing->prepare_lookups(); })
    if (keyed_) framing->prepare_lookups();
  framing_ = std::move(framing);
}

template <holder_type H, class Framing>
void random_access_table_reader<H, Framing>::close() {
  index_.clear();
  held_.clear();
  current_.reset();
  reader_.release();
  eof_ = false;
  failure_ = nullptr;
  last_scanned_.clear();
  last_requested_.clear();
  once_pending_.clear();
  if (!framing_) return;
  auto framing = std::move(framing_);
  framing->close();
}

template <holder_type H, class Framing>
auto random_access_table_reader<H, Framing>::lookup(std::string_view key, bool load) -> const value_type* {
  if (!framing_) throw_usage_error({"lookup in a random_access_table_reader that is not open"});
  if (!detail::valid_key(*framing_, key)) throw_usage_error({"invalid key '", key, "'"});
  absent_reason_.clear();
  release_previous_once();
  if constexpr (keyed_input<framing_type>) {
    if (keyed_) return lookup_keyed(key, load);
  }
  return lookup_scanned(key, load);
}

// A table looked up through a map, Kaldi's RandomAccessTableReaderMapped: with utt2spk, a
// per-speaker table answers per-utterance keys. An utterance missing from the map is an
// error; a speaker missing from the table is absent. An empty map rspecifier means no map.
template <holder_type H, class Framing = any_framing>
class random_access_table_reader_mapped {
 public:
  using value_type = typename H::value_type;
  // A reader with nothing open; open() opens one.
  random_access_table_reader_mapped() = default;
  // Opens the table and, unless map_rspec is empty, the map from keys to the table's keys.
  random_access_table_reader_mapped(std::string_view table_rspec, std::string_view map_rspec,
                                    const open_options& options = {})
      : table_(table_rspec, options) {
    if (!map_rspec.empty()) map_.emplace(map_rspec, options);
  }
  // Opens as the constructor does, closing what was open first.
  void open(std::string_view table_rspec, std::string_view map_rspec, const open_options& options = {}) {
    close();
    table_.open(table_rspec, options);
    if (!map_rspec.empty()) map_.emplace(map_rspec, options);
  }
  // Whether a table is open.
  bool is_open() const noexcept { return table_.is_open(); }
  // Closes the table and the map; throws the first failure (a failed command), after closing both.
  void close() {
    std::optional<random_access_table_reader<token_holder, Framing>> map = std::move(map_);
    map_.reset();
    if (!map) return table_.close();
    try {
      table_.close();
    } catch (...) {
      try {
        map->close();
      } catch (...) {  // the table's failure is the one to report
      }
      throw;
    }
    map->close();
  }
  // Whether the table has the key the map gives key; the map must have key (missing_key_error).
  bool contains(std::string_view key) { return table_.contains(mapped(key)); }
  // The value for the key the map gives key, the caller's own. These lookups are
  // random_access_table_reader's, and a key the map lacks throws missing_key_error in each.
  value_type at(std::string_view key) { return table_.at(mapped(key)); }
  // at(), by Kaldi's name.
  value_type value(std::string_view key) { return at(key); }
  // The value for the key the map gives key, or nothing when the table lacks that key.
  std::optional<value_type> find(std::string_view key) { return table_.find(mapped(key)); }
  // The value held for the key the map gives key, without a copy; nullptr when the table lacks it.
  const value_type* borrow(std::string_view key) { return table_.borrow(mapped(key)); }
  // The value held for the key the map gives key, without a copy; throws as at() does.
  const value_type& borrow_at(std::string_view key) { return table_.borrow_at(mapped(key)); }

 private:
  std::string mapped(std::string_view key) {
    if (!map_) return std::string(key);
    return map_->at(key);
  }
  random_access_table_reader<H, Framing> table_;
  std::optional<random_access_table_reader<token_holder, Framing>> map_;
};

TABLIO_END_NAMESPACE
