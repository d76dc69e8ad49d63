// sequential_table_reader<Holder, Framing>: reads a table in order over any input framing
// (framing/concepts.hpp). Its constructor's arguments open the framing; with the default,
// any_framing (<tablio/table/any_framing.hpp>), an rspecifier names the format at run time:
// "ark:f.ark", "scp,p:f.scp", "ark:gunzip -c f.gz |", "tfrecord,key=utt,shard=0/4:train@128",
// "lmdb:train_lmdb", "idx:train-images-idx3-ubyte.gz", "tar,ext=cls:shard-%06d.tar"...
//
//   for (auto& [key, value] : sequential_table_reader<basic_holder<int>>("ark:ali.ark")) ...
//   for (reader r("scp:feats.scp"); !r.done(); r.next()) use(r.key(), r.value());
//
// Bad input is a format_error naming the file, offset and key, thrown where it is met. Entries
// a framing hands out pending (a script's) are loaded, and records decoded, on the first use of
// value(), so that a table read for its keys alone (a count, a skip) decodes nothing. A record
// whose bytes are whole but whose value does not decode (a truncated Datum, a TFRecord record
// whose data fails its CRC) is an error of value() alone, and next() goes on past it, as past a
// script's entry that cannot be loaded; but not in a table that takes its keys out of its
// records (key=), whose key it holds. Under the permissive option 'p' such entries are skipped
// instead, and other bad input ends the table (the entries before it are kept); error() then
// says what happened.
// With threads (open_options::threads, or threads=N in the rspecifier), entries are decoded
// ahead by that many threads and handed out in the same order, with the same errors at the
// same entries (table/read_ahead.hpp), where the table measures that the threads make it faster
// (table/thread_choice.hpp); elsewhere it reads them as one thread does.
#pragma once

#include <tablio/core/owned.hpp>
#include <tablio/framing/concepts.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/table/entry_io.hpp>
#include <tablio/table/read_ahead.hpp>
#include <tablio/table/thread_choice.hpp>

#include <exception>
#include <iterator>
#include <optional>
#include <string>

TABLIO_BEGIN_NAMESPACE

struct any_framing;

namespace detail {
// What the exception e holds says.
TABLIO_COLD inline std::string message_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "an unknown error";
  }
}
}  // namespace detail

template <holder_type H, class Framing = any_framing>
class sequential_table_reader {
  static_assert(detail::complete_framing<Framing>,
                "tables opened from specifiers need <tablio/table/any_framing.hpp> (or <tablio/tablio.hpp>)");

 public:
  using value_type = typename H::value_type;
  using framing_type = input_side<Framing>;

  sequential_table_reader() = default;
  // Opens the framing with these arguments; a name (an rspecifier for any_framing), with open
  // options or without, goes to the constructor below, which is no template.
  template <class... Args>
  requires(sizeof...(Args) > 0 && std::constructible_from<framing_type, Args...> &&
           !detail::opened_by_name<framing_type, Args...>) explicit sequential_table_reader(Args&&... args) {
    open(std::forward<Args>(args)...);
  }
  explicit sequential_table_reader(std::string_view rspec, const open_options& options = {}) requires
      std::constructible_from<framing_type, std::string_view, const open_options&> {
    open(rspec, options);
  }

  // Closes what is open (reporting, not throwing, what its close met), then opens the framing
  // with these arguments, as the constructors do, and reads the first entry.
  template <class... Args>
  void open(Args&&... args) {
    if constexpr (detail::opened_by_name<framing_type, Args...>)
      open_named(args...);
    else
      open_framing([&] { return make_owned<framing_type>(std::forward<Args>(args)...); });
  }

  // Whether a framing is open: opened, and not closed since.
  bool is_open() const noexcept { return static_cast<bool>(framing_); }
  // Whether the table has ended (or was never opened, or is closed): no current entry.
  bool done() const noexcept { return done_; }
  // The current entry's key.
  const std::string& key() const noexcept { return current_ ? current_->e.key : entry_.key; }

  // The current value; a pending entry is loaded here, and a record decoded, on first use.
  value_type& value() {
    if (loaded_ && !current_ && !value_error_ && !done_) [[likely]]
      return holder_.value();
    return value_after_loading();
  }

  // Moves to the next entry; usage_error once the table is done. Bad input throws here (under
  // 'p', ends the table instead).
  void next() {
    if (done_) throw_usage_error({"sequential_table_reader::next() after the end of the table"});
    advance();
  }

  // Frees the current value's memory (Kaldi's FreeCurrent).
  void free_current() { current_ ? current_->holder.clear() : holder_.clear(); }

  // The holder values are read into, for a holder with options of its own (an image decoder's
  // size) to be given them before open(); a table with threads copies it for each thread.
  H& holder() noexcept { return holder_; }

  // Under 'p', the error that ended or thinned the table; empty when all was well.
  const std::string& error() const noexcept { return error_; }
  // Under 'p', the entries left out so far because they could not be read.
  std::uint64_t left_out() const noexcept { return left_out_; }

  // Closes the framing; an input command is drained and its exit status checked.
  void close();

  ~sequential_table_reader();
  sequential_table_reader(sequential_table_reader&&) noexcept = default;
  sequential_table_reader& operator=(sequential_table_reader&& o) noexcept {
    if (this != &o) {
      close_quietly();
      view_.reset();
      framing_ = std::move(o.framing_);
      ahead_ = std::move(o.ahead_);
      threads_ = o.threads_;
      choice_ = o.choice_;
      current_ = std::exchange(o.current_, nullptr);
      reader_ = std::move(o.reader_);
      holder_ = std::move(o.holder_);
      entry_ = std::move(o.entry_);
      options_ = o.options_;
      error_ = std::move(o.error_);
      left_out_ = o.left_out_;
      value_error_ = std::move(o.value_error_);
      deferred_record_ = o.deferred_record_;
      loaded_ = o.loaded_;
      done_ = std::exchange(o.done_, true);
    }
    return *this;
  }

  // The framing, for what only it knows.
  framing_type& framing() noexcept { return *framing_; }

  // Range access: entries are (key, value) pairs, valid until the next step.
  struct entry_ref {
    const std::string& key;
    value_type& value;
  };
  // An input iterator over the entries; each step is next(), and it equals the end once the
  // table is done.
  class iterator {
   public:
    using value_type = entry_ref;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    // An iterator at the reader's current entry.
    explicit iterator(sequential_table_reader* r) : r_(r) {}
    // An lvalue, so that both `auto& [key, value]` and `auto [key, value]` bind.
    entry_ref& operator*() const { return r_->view_.emplace(entry_ref{r_->key(), r_->value()}); }
    // Moves the reader to its next entry.
    iterator& operator++() {
      r_->next();
      return *this;
    }
    void operator++(int) { ++*this; }
    // Whether it is at the end: the table is done, or the iterator has no reader.
    bool operator==(std::default_sentinel_t) const { return !r_ || r_->done(); }

   private:
    sequential_table_reader* r_ = nullptr;
  };
  // An iterator at the current entry: a reader is iterated once, from where it is.
  iterator begin() { return iterator(this); }
  // The end of the entries.
  std::default_sentinel_t end() { return {}; }

 private:
  // Out of line, so that the compiled mode's instances keep them out of users' objects.
  void open_named(std::string_view name, const open_options& options = {});
  template <class Make>
  void open_framing(Make make, unsigned threads = 1);
  void load_current();
  value_type& value_after_loading();
  H holder_options();
  void advance();
  void read_next();
  bool advance_ahead();
  void finish();
  void close_quietly() noexcept;
  // What the last table of this kind to close in this thread learned of its threads, for the
  // next one it opens.
  static detail::thread_choice_memory& choices_of_kind() {
    thread_local detail::thread_choice_memory memory;
    return memory;
  }

  static constexpr unsigned forms = detail::input_forms<framing_type>();
  using ahead_type = detail::read_ahead<H, forms>;

  std::optional<entry_ref> view_;     // what the iterator hands out for the current entry
  owned<framing_type> framing_;       // on the heap: entries point into it
  unsigned threads_ = 1;              // threads=N
  owned<detail::table_stage> ahead_;  // with threads: the entries decoded ahead, once asked...
  ahead_type& ahead() noexcept { return static_cast<ahead_type&>(*ahead_); }
  typename ahead_type::job* current_ = nullptr;  // ...the current one among them...
  detail::thread_choice choice_;                 // ...and whether they read the next
  entry_reader<H, forms> reader_;
  H holder_;
  entry entry_;
  read_options options_;
  std::string error_;
  std::uint64_t left_out_ = 0;      // under p
  std::exception_ptr value_error_;  // the current record's, which did not decode
  bool deferred_record_ = false;    // the current entry is a record, decoded on first use
  bool loaded_ = false;
  bool done_ = true;
};

template <holder_type H, class Framing>
sequential_table_reader<H, Framing>::~sequential_table_reader() {
  close_quietly();
}

template <holder_type H, class Framing>
void sequential_table_reader<H, Framing>::open_named(std::string_view name, const open_options& options) {
  open_framing([&] { return make_owned<framing_type>(name, options); }, options.threads);
}

template <holder_type H, class Framing>
template <class Make>
void sequential_table_reader<H, Framing>::open_framing(Make make, unsigned threads) {
  close_quietly();
  done_ = false;
  error_.clear();
  left_out_ = 0;
  auto framing = make();
  detail::suggest_extension(*framing, record_extension<H>());
  detail::offer_parts<H>(*framing);
  detail::check_key_option<H>(detail::input_key_name(*framing), detail::table_name(*framing));
  options_ = detail::reading_options(*framing);
  threads = detail::table_threads(*framing, threads);
  framing_ = std::move(framing);
  threads_ = threads;
  choice_ = {};
  if (threads_ > 1) choices_of_kind().recall(choice_);
  advance();
}

template <holder_type H, class Framing>
void sequential_table_reader<H, Framing>::close() {
  if (framing_ && threads_ > 1) choices_of_kind().keep(choice_, ahead_ ? ahead().depth() : 0);
  done_ = true;
  current_ = nullptr;
  ahead_ = {};  // its threads end before the framing its entries point into
  reader_.release();
  if (!framing_) return;
  auto framing = std::move(framing_);
  framing->close();
}

template <holder_type H, class Framing>
void sequential_table_reader<H, Framing>::load_current() {
  detail::load_pending(*framing_, entry_);
  reader_.read(holder_, entry_);
}

// value(), where the current value is not simply there: a threads' entry, one to load or
// decode first, or one whose error is kept.
template <holder_type H, class Framing>
typename H::value_type& sequential_table_reader<H, Framing>::value_after_loading() {
  if (done_) throw_usage_error({"sequential_table_reader::value() after the end of the table"});
  if (current_) {
    if (current_->value_error) [[unlikely]]
      std::rethrow_exception(current_->value_error);
    return current_->holder.value();
  }
  if (!loaded_) {
    if (deferred_record_) {  // its error is kept: its holder may have taken its bytes
      try {
        load_current();
      } catch (const format_error&) {
        value_error_ = std::current_exception();
      }
    } else {
      load_current();  // a pending entry: its error each time it is asked for
    }
    loaded_ = true;
  }
  if (value_error_) [[unlikely]]
    std::rethrow_exception(value_error_);
  return holder_.value();
}

// A copy of holder_ without its value: the options the threads' holders start with.
template <holder_type H, class Framing>
H sequential_table_reader<H, Framing>::holder_options() {
  if constexpr (std::is_copy_constructible_v<H>) {
    value_type value = std::move(holder_.value());
    H options = holder_;
    holder_.value() = std::move(value);
    options.clear();
    return options;
  } else {
    return H{};
  }
}

template <holder_type H, class Framing>
void sequential_table_reader<H, Framing>::advance() {
  if (threads_ < 2) return read_next();
  const bool threaded = advance_ahead();
  if (!threaded) read_next();
  choice_.handed_out(threaded);
}

// The next entry, read here.
template <holder_type H, class Framing>
void sequential_table_reader<H, Framing>::read_next() {
  loaded_ = deferred_record_ = false;
  value_error_ = nullptr;
  for (;;) {
    bool pending = false, record = false;
    try {
      if (!detail::next_entry(*framing_, entry_)) return finish();
      pending = entry_.pending;
      if (pending && !options_.permissive) return;  // loaded on first use of value()
      record = entry_.form == entry_form::record;
      // A record is decoded on the first use of its value, so that a table read for its keys (a
      // count, a skip) decodes none; but at once where its key is in it (key=), and under p,
      // which leaves out a record that does not decode.
      if (record && !entry_.provisional_key && !options_.permissive) {
        deferred_record_ = true;
        return;
      }
      load_current();
      loaded_ = true;
      return;
    } catch (const tablio::error& e) {
      // Under p, a record that does not decode is left out (with the key it keeps, under key=),
      // as a pending entry that cannot be read is, and other bad data (a format_error) ends the
      // table; anything else is thrown.
      const bool bad_data = dynamic_cast<const format_error*>(&e) != nullptr;
      const bool skip = pending || (record && bad_data);
      if (!options_.permissive || !(skip || bad_data)) {
        done_ = true;
        throw;
      }
      error_ = e.what();
      left_out_ += skip;
      done_ = !skip;
      if (done_) return;
    }
  }
}

// The next entry from those read ahead, with the skips and errors read_next() gives; false,
// having done nothing, when none is in flight and the threads are not to read the next.
template <holder_type H, class Framing>
bool sequential_table_reader<H, Framing>::advance_ahead() {
  if (!ahead_) {
    if (!choice_.threaded()) return false;
    // Its threads start when first asked for, with as many entries in flight as kept the last
    // table of its kind busy.
    ahead_ = make_owned<ahead_type>(threads_, holder_options(), choices_of_kind().depth());
  }
  if (current_) {
    current_ = nullptr;
    ahead().release();
  }
  for (;;) {
    if (choice_.threaded())
      ahead().top_up(*framing_, options_, [this](H& h, entry& e) { reader_.read(h, e); });
    if (ahead().empty()) {
      if (!ahead().ended()) return false;
      finish();
      return true;
    }
    try {
      auto& job = ahead().take();
      if (job.decoded) choice_.untaken();
      if (job.skipped || (job.value_error && options_.permissive)) {
        error_ = job.skipped ? job.why_skipped : detail::message_of(job.value_error);
        ++left_out_;
        ahead().release();
        continue;
      }
      // A record that keeps its key (key=) and does not decode has no key to stand under: its
      // error is the table's, as where it is read.
      if (job.value_error && job.e.provisional_key) std::rethrow_exception(job.value_error);
      current_ = &job;
      return true;
    } catch (...) {
      ahead().release();
      done_ = true;
      try {
        throw;
      } catch (const format_error& e) {  // under p, bad data ends the table
        if (!options_.permissive) throw;
        error_ = e.what();
      }
      return true;
    }
  }
}

// The natural end. The framing is closed here, so that a command that failed is an error
// now rather than a table that merely looks short (under 'p', error() says so).
template <holder_type H, class Framing>
void sequential_table_reader<H, Framing>::finish() {
  done_ = true;
  entry_.key.clear();
  try {
    close();
  } catch (const tablio::error& e) {
    if (!options_.permissive) throw;
    error_ = e.what();
  }
}

template <holder_type H, class Framing>
void sequential_table_reader<H, Framing>::close_quietly() noexcept {
  try {
    close();
  } catch (const std::exception& e) {
    if (!options_.permissive) report_error(e.what());
  }
}

TABLIO_END_NAMESPACE
