// table_writer<Holder, Framing>: writes a table, one entry per key, over any output framing
// (framing/concepts.hpp). Its constructor's arguments open the framing:
//
//   table_writer<holder<matrix<float>>> feats("ark,scp:feats.ark,feats.scp");  // any_framing
//   table_writer<holder<point>, ark_framing> points("points.ark");             // a fixed framing
//
// With the default framing, any_framing (<tablio/table/any_framing.hpp>), a wspecifier names
// the format at run time: "ark:", "ark,scp:", "scp:", "tfrecord:", "lmdb:", "idx:", "tar:"...
// (docs/specifiers.md). Keys are Kaldi tokens: non-empty, printable, no whitespace.
// close() reports every failure (a full disk, a command that failed); the destructor closes
// and reports instead of throwing. A writer destroyed by an exception that leaves the scope
// that made it, or given up with abandon(), gives its output up instead: an object being
// uploaded (s3://) never appears, while files keep what was written.
// With threads (open_options::threads, or threads=N in the wspecifier), values are encoded by
// that many threads and written in order (table/write_behind.hpp): the same bytes, and an
// error in a value's encoding is thrown by a later write() or by close(), naming its key; the
// values written after it are written if the caller goes on (writes, closes again), as one
// thread writes them, and not if it gives the table up at that error. A table given up for
// another reason (an error elsewhere) keeps every value write() took, as with one thread.
#pragma once

#include <tablio/core/owned.hpp>
#include <tablio/framing/concepts.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/table/entry_io.hpp>
#include <tablio/table/write_behind.hpp>

#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

struct any_framing;

template <holder_type H, class Framing = any_framing>
class table_writer {
  static_assert(detail::complete_framing<Framing>,
                "tables opened from specifiers need <tablio/table/any_framing.hpp> (or <tablio/tablio.hpp>)");

 public:
  using value_type = typename H::value_type;
  using framing_type = output_side<Framing>;

  table_writer() = default;
  // Opens the framing with these arguments; a name (a wspecifier for any_framing), with open
  // options or without, goes to the constructor below, which is no template.
  template <class... Args>
  requires(sizeof...(Args) > 0 && std::constructible_from<framing_type, Args...> &&
           !detail::opened_by_name<framing_type, Args...>) explicit table_writer(Args&&... args) {
    open(std::forward<Args>(args)...);
  }
  explicit table_writer(std::string_view wspec, const open_options& options = {}) requires
      std::constructible_from<framing_type, std::string_view, const open_options&> {
    open(wspec, options);
  }
  table_writer(table_writer&&) noexcept = default;
  table_writer& operator=(table_writer&& o) noexcept {
    if (this != &o) {
      close_quietly();
      framing_ = std::move(o.framing_);
      behind_ = std::move(o.behind_);
      record_ = std::move(o.record_);
      keys_placed_ = o.keys_placed_;
      uncaught_ = o.uncaught_;
    }
    return *this;
  }
  ~table_writer();

  // Closes what is open (throwing for its losses), then opens the framing with these arguments, as
  // the constructors do.
  template <class... Args>
  void open(Args&&... args) {
    if constexpr (detail::opened_by_name<framing_type, Args...>)
      open_named(args...);
    else
      open_framing([&] { return make_owned<framing_type>(std::forward<Args>(args)...); });
  }

  // Whether a framing is open: opened, and not closed or given up since.
  bool is_open() const noexcept { return static_cast<bool>(framing_); }

  // Writes value under key. A key that is not a Kaldi token is a key_error (a framing whose keys
  // are any bytes, LMDB's, takes any non-empty key); usage_error when the writer is not open.
  void write(std::string_view key, const value_type& value);
  // The same, moving the value in where threads encode it.
  void write(std::string_view key, value_type&& value);

  // Writes what threads still encode, and flushes the framing.
  void flush();

  // Flushes and closes the framing; throws for any loss.
  void close();

  // Gives the table up, as after an error: an output that must appear whole (an object being
  // uploaded) is discarded; files keep what was written (with threads, what one thread would
  // have written: the values write() took, unless the caller stopped at one that failed).
  void abandon() noexcept {
    if (behind_ && framing_) behind().settle(*framing_);
    detail::abandon_scope scope;
    behind_ = {};
    framing_ = {};
  }

  // The framing, for what only it knows (e.g. where the last entry went; with threads, after
  // flush()).
  framing_type& framing() noexcept { return *framing_; }

 private:
  // Out of line, so that the compiled mode's instances keep them out of users' objects.
  void open_named(std::string_view name, const open_options& options = {});
  template <class Make>
  void open_framing(Make make, unsigned threads = 1);
  void close_quietly() noexcept;
  template <class V>
  void write_value(std::string_view key, V&& value);
  void place_keys(std::string_view first_key);

  owned<framing_type> framing_;        // on the heap, so that entries may point into it
  owned<detail::table_stage> behind_;  // with threads: the values being encoded
  detail::write_behind<H>& behind() noexcept { return static_cast<detail::write_behind<H>&>(*behind_); }
  std::string record_;  // the encoded record, reused
  // Whether the first key has said where H's records keep keys (H::unnumbered_key_feature).
  bool keys_placed_ = true;
  int uncaught_ = std::uncaught_exceptions();
};

namespace detail {
// A key that is not a Kaldi token: taken by a framing whose keys are any bytes (LMDB's, whose
// own limit of 511 bytes it checks), else a key_error.
template <class F>
TABLIO_COLD void check_key_not_token(const F& f, std::string_view key) {
  if (keys_any_bytes(f) && !key.empty()) return;
  throw_key_error({"invalid key ", quoted_excerpt(key), " for '", table_name(f),
                   "': keys are non-empty, have no whitespace or unprintable bytes, and are at most ",
                   decimal(default_limits.max_token_bytes), " bytes (limits::max_token_bytes)"});
}
}  // namespace detail

template <holder_type H, class Framing>
table_writer<H, Framing>::~table_writer() {
  if (detail::giving_up(uncaught_))
    abandon();
  else
    close_quietly();
}

template <holder_type H, class Framing>
void table_writer<H, Framing>::open_named(std::string_view name, const open_options& options) {
  open_framing([&] { return make_owned<framing_type>(name, options); }, options.threads);
}

template <holder_type H, class Framing>
template <class Make>
void table_writer<H, Framing>::open_framing(Make make, unsigned threads) {
  close();
  auto framing = make();
  detail::suggest_extension(*framing, record_extension<H>());
  detail::check_key_option<H>(detail::output_key_name(*framing), detail::table_name(*framing));
  keys_placed_ = !detail::output_key_name(*framing).empty();
  threads = detail::table_threads(*framing, threads);
  if (threads > 1 && detail::write_behind<H>::takes(*framing))
    behind_ = make_owned<detail::write_behind<H>>(threads);
  framing_ = std::move(framing);
}

template <holder_type H, class Framing>
void table_writer<H, Framing>::write(std::string_view key, const value_type& value) {
  write_value(key, value);
}

template <holder_type H, class Framing>
void table_writer<H, Framing>::write(std::string_view key, value_type&& value) {
  write_value(key, std::move(value));
}

template <holder_type H, class Framing>
template <class V>
void table_writer<H, Framing>::write_value(std::string_view key, V&& value) {
  if (!framing_) throw_usage_error({"table_writer::write on a writer that is not open"});
  // What readers take back (framing/concepts.hpp: check_key_read), and nothing else.
  if (!kaldi_io::is_token(key) || key.size() > default_limits.max_token_bytes) [[unlikely]]
    detail::check_key_not_token(*framing_, key);
  if constexpr (requires { H::unnumbered_key_feature; }) {
    if (!keys_placed_) [[unlikely]]
      place_keys(key);
  }
  if (behind_)
    behind().write(*framing_, key, std::forward<V>(value));
  else
    detail::write_entry<H>(*framing_, key, value, record_);
}

// A holder whose records can keep their keys (H::unnumbered_key_feature: values stored as
// Examples of their form) keeps them in that feature of a framing that keeps none unless told
// (TFRecord), unless the first key is the first record's number: then the keys are the records'
// numbers, which reading gives back, and the records hold nothing more (as TensorFlow writes them).
template <holder_type H, class Framing>
void table_writer<H, Framing>::place_keys([[maybe_unused]] std::string_view first_key) {
  keys_placed_ = true;
  if constexpr (requires { H::unnumbered_key_feature; }) {  // (an explicit instance has them all)
    if (first_key != ordinal_key(0)) detail::keep_keys_in(*framing_, H::unnumbered_key_feature);
  }
}

template <holder_type H, class Framing>
void table_writer<H, Framing>::flush() {
  if (behind_) behind().drain(*framing_);
  if constexpr (requires(framing_type & f) { f.flush(); })
    if (framing_) framing_->flush();
}

template <holder_type H, class Framing>
void table_writer<H, Framing>::close() {
  if (!framing_) return;
  // A value that failed in a thread leaves the table open, with the values written after it
  // waiting: closed again, it writes them; given up (an exception, abandon()), it does not.
  if (behind_) behind().drain(*framing_);
  behind_ = {};
  auto framing = std::move(framing_);
  framing->close();
}

template <holder_type H, class Framing>
void table_writer<H, Framing>::close_quietly() noexcept {
  // Each failed value is reported, and the values after it written, until the table is closed.
  while (framing_) {
    try {
      close();
    } catch (const std::exception& e) {
      report_error(e.what());
    }
  }
}

TABLIO_END_NAMESPACE
