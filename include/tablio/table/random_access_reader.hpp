// random_access_table_reader<Holder, Framing>: looks values up by key in a table over any
// input framing (framing/concepts.hpp), with Kaldi's option semantics. Its constructor's
// arguments open the framing; with the default, any_framing, an rspecifier names it.
//
// A framing with keyed lookup (scripts, LMDB, IDX) is asked for each key; a value is read
// when asked for and only the last one is held. Any other framing (archives, TFRecord files,
// tar) is read ahead as far as needed to find a key, keeping each entry's location, so that
// memory holds keys and locations and a value is read again when asked for; entries that
// cannot be read again (from a pipe, a compressed file) keep their values instead. The
// options (Kaldi's; any_framing takes them from the rspecifier):
//
//   s    the table is sorted: reading ahead stops past the key asked for, disorder is an error
//   cs   keys are also asked for in sorted order: only one value is held
//   o    each key is asked for once: values are freed after use
//   p    unreadable entries are absent instead of errors
#pragma once

#include <tablio/core/owned.hpp>
#include <tablio/framing/concepts.hpp>
#include <tablio/holder/token.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/table/entry_io.hpp>
#include <tablio/table/key_index.hpp>

#include <optional>
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
  // Opens the framing with these arguments (an rspecifier for any_framing).
  template <class... Args>
  requires(
      sizeof...(Args) > 0 &&
      std::constructible_from<framing_type, Args...>) explicit random_access_table_reader(Args&&... args) {
    open(std::forward<Args>(args)...);
  }
  explicit random_access_table_reader(std::string_view rspec, const open_options& options = {}) requires
      std::constructible_from<framing_type, std::string_view, const open_options&> {
    open(rspec, options);
  }

  template <class... Args>
  void open(Args&&... args) {
    close();
    auto framing = make_owned<framing_type>(std::forward<Args>(args)...);
    detail::suggest_extension(*framing, record_extension<H>());
    detail::check_key_option<H>(detail::input_key_name(*framing), detail::table_name(*framing));
    options_ = detail::reading_options(*framing);
    name_ = detail::table_name(*framing);
    keyed_ = detail::can_find(*framing);
    if constexpr (requires { framing->prepare_lookups(); })
      if (keyed_) framing->prepare_lookups();
    framing_ = std::move(framing);
  }

  bool is_open() const noexcept { return static_cast<bool>(framing_); }

  // Whether the table has the key. Under 'p', also whether its value can be read.
  bool contains(std::string_view key) { return lookup(key, options_.permissive) != nullptr; }

  // The value for key; throws format_error naming the key when it is absent or unreadable.
  const value_type& at(std::string_view key) {
    const value_type* v = lookup(key, true);
    if (!v)
      throw_format_error(
          name_, std::nullopt, key, {"the key in the table"},
          {"no entry", (absent_reason_.empty() ? std::string() : " (" + absent_reason_ + ")")});
    return *v;
  }
  const value_type& value(std::string_view key) { return at(key); }

  // The value for key, or nullptr when the table has no such key. Data errors still throw
  // unless the 'p' option is given.
  const value_type* find(std::string_view key) { return lookup(key, true); }

  // The number of entries, when the framing knows it.
  std::optional<std::uint64_t> size() {
    if constexpr (requires(framing_type & f) { std::optional<std::uint64_t>(f.size()); }) {
      if (framing_) return framing_->size();
    }
    return std::nullopt;
  }

  void close() {
    index_.clear();
    held_.clear();
    current_.reset();
    reader_.release();
    eof_ = false;
    last_scanned_.clear();
    last_requested_.clear();
    once_pending_.clear();
    if (!framing_) return;
    auto framing = std::move(framing_);
    framing->close();
  }

  ~random_access_table_reader() {
    try {
      close();
    } catch (const std::exception& e) {
      if (!options_.permissive) report_error(e.what());
    }
  }
  random_access_table_reader(random_access_table_reader&&) noexcept = default;
  random_access_table_reader& operator=(random_access_table_reader&&) noexcept = default;

  // The framing, for what only it knows.
  framing_type& framing() noexcept { return *framing_; }

 private:
  const value_type* lookup(std::string_view key, bool load) {
    if (!framing_) throw_usage_error({"lookup in a random_access_table_reader that is not open"});
    if (!kaldi_io::is_token(key)) throw_usage_error({"invalid key '", key, "'"});
    absent_reason_.clear();
    release_previous_once();
    if constexpr (keyed_input<framing_type>) {
      if (keyed_) return lookup_keyed(key, load);
    }
    return lookup_scanned(key, load);
  }

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
      current_.emplace(std::string(key), std::move(h.value()));
      note_once(current_->first);
      return &current_->second;
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
                           {"'", key, "' after '", last_requested_, "'"});
      last_requested_ = key;
      drop_keys_before(key);
    }
    if (current_ && current_->first == key) return &current_->second;
    if (!it) {
      if (!scan_for(key)) return nullptr;
      it = index_.find(key);
      if (!it) return current_ && current_->first == key ? &current_->second : nullptr;
    }
    if (!load) return &placeholder();
    return materialize(key, *it);
  }

  // Reads ahead until the key is found (true), passed in a sorted table, or the end.
  bool scan_for(std::string_view key) {
    if (options_.sorted && !last_scanned_.empty() && key <= last_scanned_) return false;
    while (!eof_) {
      try {
        if (!detail::next_entry(*framing_, entry_)) {
          eof_ = true;
          break;
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
          } else if (read && entry_.key == key) {
            current_.emplace(entry_.key, scan_holder_.value());
          }
        }
      } catch (const format_error& e) {
        if (!options_.permissive) throw;
        absent_reason_ = e.what();
        eof_ = true;
        break;
      }
      last_scanned_ = entry_.key;
      if (entry_.key == key) return true;
      if (options_.sorted && entry_.key > key) return false;
    }
    return false;
  }

  // A key read ahead must keep the order 's' promises, and must not repeat.
  void check_new_key(const std::string& k) {
    if (options_.sorted && !last_scanned_.empty() && k <= last_scanned_)
      throw_format_error(
          name_, entry_.where.offset, k, {"keys in sorted order (the s option)"},
          {"keys in archive are not in sorted order: '", last_scanned_, "' is followed by '", k, "'"});
    detail::key_index::item* seen = index_.find(k);
    if ((seen && !seen->freed) || (current_ && current_->first == k && !options_.called_sorted))
      throw_format_error(name_, entry_.where.offset, k, {"distinct keys in the table"},
                         {"duplicate key '", k, "'"});
  }

  const value_type* materialize(std::string_view key, detail::key_index::item& it) {
    if (current_ && current_->first == key) {
      note_once(key);
      return &current_->second;
    }
    if (it.held != detail::key_index::none) {
      note_once(key);
      std::optional<value_type>& held = held_[it.held];
      if (options_.once || options_.called_sorted) {
        current_.emplace(std::string(key), std::move(*held));
        held.reset();
        it.held = detail::key_index::none;
        return &current_->second;
      }
      return &*held;
    }
    // Read the value again at its location.
    if constexpr (positional_input<framing_type>) {
      entry_.key = key;
      framing_->read_at(it.where, entry_);
      H h;
      reader_.read(h, entry_);
      current_.emplace(std::string(key), std::move(h.value()));
      note_once(key);
      return &current_->second;
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
  std::string last_scanned_;
  std::string last_requested_;
  std::string once_pending_;
  std::string absent_reason_;
};

// A table looked up through a map, Kaldi's RandomAccessTableReaderMapped: with utt2spk, a
// per-speaker table answers per-utterance keys. An utterance missing from the map is an
// error; a speaker missing from the table is absent. An empty map rspecifier means no map.
template <holder_type H, class Framing = any_framing>
class random_access_table_reader_mapped {
 public:
  using value_type = typename H::value_type;
  random_access_table_reader_mapped(std::string_view table_rspec, std::string_view map_rspec,
                                    const open_options& options = {})
      : table_(table_rspec, options) {
    if (!map_rspec.empty()) map_.emplace(map_rspec, options);
  }
  bool contains(std::string_view key) { return table_.contains(mapped(key)); }
  const value_type& at(std::string_view key) { return table_.at(mapped(key)); }
  const value_type& value(std::string_view key) { return at(key); }
  const value_type* find(std::string_view key) { return table_.find(mapped(key)); }

 private:
  std::string mapped(std::string_view key) {
    if (!map_) return std::string(key);
    return map_->at(key);
  }
  random_access_table_reader<H, Framing> table_;
  std::optional<random_access_table_reader<token_holder, Framing>> map_;
};

TABLIO_END_NAMESPACE
