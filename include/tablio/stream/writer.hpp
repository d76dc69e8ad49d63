// tablio::writer: the buffered output every codec writes to.
//
// Like the reader, the writer owns a window [pos, end) that codecs fill with inline stores;
// a type-erased sink takes the filled bytes only when the window is full. A memory sink
// hands out its own storage as the window, so encoding to memory copies nothing twice.
#pragma once

#include <tablio/core/config.hpp>
#include <tablio/core/error.hpp>
#include <tablio/core/owned.hpp>
#include <tablio/stream/concepts.hpp>

#include <cstring>
#include <exception>
#include <span>
#include <string>
#include <utility>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// The type-erased interface the writer empties its window into.
class sink_base {
 public:
  virtual ~sink_base() = default;
  // The first `used` bytes of the last window are final. Returns a new window with room for
  // at least min_free bytes, or a smaller one if the sink has a fixed buffer.
  virtual std::span<char> next_window(std::size_t used, std::size_t min_free) = 0;
  // Writes n bytes straight through (called after next_window has taken the pending bytes).
  virtual void write_direct(const char* src, std::size_t n) = 0;
  // Takes the pending bytes and pushes everything to the OS.
  virtual void flush(std::size_t used) = 0;
  // Moves the output to an absolute offset (after flush); false when the sink cannot seek.
  virtual bool seek(std::uint64_t) { return false; }
  // Flushes and releases the sink, reporting every failure (full disk, failed command).
  virtual void close(std::size_t used) { flush(used); }
  // The writer is given up (detail::giving_up): an output that must appear whole (an object
  // being uploaded) is discarded; any other closes as usual, keeping what was written.
  virtual void abandon(std::size_t used) { close(used); }
};

namespace detail {
// Scopes of one kind open on this thread.
template <class Kind>
struct thread_scope {
  static int& depth() noexcept {
    thread_local int open = 0;
    return open;
  }
  thread_scope() noexcept { ++depth(); }
  ~thread_scope() { --depth(); }
  thread_scope(const thread_scope&) = delete;
  thread_scope& operator=(const thread_scope&) = delete;
};
// Outputs given up: a writer destroyed while an exception leaves the scope that made it, or
// inside an abandon_scope (a table given up on purpose), abandons its output rather than
// closing it.
using abandon_scope = thread_scope<struct abandoning>;
// A writer dropped without close() by a host that cannot tell why (Python's garbage
// collector, after an exception it does not see): nothing says its table is complete, so an
// output that must appear whole gives itself up at close() and reports it; others close.
using dropped_scope = thread_scope<struct dropping>;
// Whether an object made when `uncaught` exceptions were in flight is being given up.
inline bool giving_up(int uncaught) noexcept {
  return std::uncaught_exceptions() > uncaught || abandon_scope::depth() > 0;
}
}  // namespace detail

namespace detail {

inline constexpr std::size_t default_write_buffer = std::size_t{1} << 18;

template <sink S>
class sink_adapter final : public sink_base {
 public:
  sink_adapter(S s, std::size_t buffer_size) : s_(std::move(s)), buffer_(buffer_size) {}
  std::span<char> next_window(std::size_t used, std::size_t) override {
    if (used != 0) s_.write(buffer_.data(), used);
    return {buffer_.data(), buffer_.size()};
  }
  void write_direct(const char* src, std::size_t n) override { s_.write(src, n); }
  void flush(std::size_t used) override {
    if (used != 0) s_.write(buffer_.data(), used);
    s_.flush();
  }
  bool seek(std::uint64_t offset) override {
    if constexpr (seekable<S>) {
      s_.seek(offset);
      return true;
    } else {
      return false;
    }
  }
  void close(std::size_t used) override {
    if (used != 0) s_.write(buffer_.data(), used);
    // A closable sink finishes its own way (a compressor must not partially flush first).
    if constexpr (closable<S>)
      s_.close();
    else
      s_.flush();
  }
  void abandon(std::size_t used) override {
    if constexpr (requires { s_.abandon(); })
      s_.abandon();
    else
      close(used);
  }

 private:
  S s_;
  std::vector<char> buffer_;
};

}  // namespace detail

class writer {
  // Runs a call into the sink. If it throws, the bytes it was given are in an unknown state,
  // so the writer is broken: every later write, flush or close throws the same failure,
  // rather than handing the sink those bytes again.
  template <class F>
  decltype(auto) guarded(F call) {
    try {
      return call();
    } catch (...) {
      failure_ = std::current_exception();
      begin_ = pos_ = end_ = nullptr;
      throw;
    }
  }

 public:
  // Writes to any Sink; `name` (usually the path) appears in error messages.
  template <sink S>
  requires(!std::same_as<std::remove_cvref_t<S>, writer>) explicit writer(
      S&& s, std::string name = "<stream>", std::size_t buffer_size = detail::default_write_buffer)
      : writer(make_owned<detail::sink_adapter<std::remove_cvref_t<S>>>(std::forward<S>(s), buffer_size),
               std::move(name)) {}

  // Writes to a sink that manages its own windows (e.g. memory).
  writer(owned<sink_base> s, std::string name) : sink_(std::move(s)), name_(std::move(name)) {}

  writer(writer&& o) noexcept { *this = std::move(o); }
  writer& operator=(writer&& o) noexcept {
    if (this != &o) {
      close_quietly();
      begin_ = std::exchange(o.begin_, nullptr);
      pos_ = std::exchange(o.pos_, nullptr);
      end_ = std::exchange(o.end_, nullptr);
      committed_ = o.committed_;
      failure_ = std::exchange(o.failure_, nullptr);
      sink_ = std::move(o.sink_);
      name_ = std::move(o.name_);
      uncaught_ = o.uncaught_;
    }
    return *this;
  }
  // Closing may fail: call close() to see the failure. The destructor closes quietly.
  ~writer() { close_quietly(); }

  // What messages call the output (usually the path).
  const std::string& name() const noexcept { return name_; }
  // Bytes written so far.
  std::uint64_t tell() const noexcept { return committed_ + static_cast<std::uint64_t>(pos_ - begin_); }

  // Writes byte c.
  TABLIO_ALWAYS_INLINE void put(char c) {
    if (pos_ == end_) [[unlikely]]
      grow(1);
    *pos_++ = c;
  }

  // Writes the n bytes at src: copied into the window, or handed to the sink when they do not
  // fit. A sink's failure (io_error) breaks the writer: each later write throws it again, as a
  // write to a closed writer throws usage_error.
  TABLIO_ALWAYS_INLINE void write(const char* src, std::size_t n) {
    if (static_cast<std::size_t>(end_ - pos_) >= n) [[likely]] {
      if (n != 0) std::memcpy(pos_, src, n);  // pos_ may be null before the first window
      pos_ += n;
      return;
    }
    write_slow(src, n);
  }
  void write(std::string_view s) { write(s.data(), s.size()); }

  // A window of at least n writable bytes (n up to a few KiB); commit with advance().
  TABLIO_ALWAYS_INLINE char* reserve(std::size_t n) {
    if (static_cast<std::size_t>(end_ - pos_) < n) [[unlikely]]
      grow(n);
    return pos_;
  }
  // Commits n bytes written into the window that reserve() gave.
  void advance(std::size_t n) noexcept { pos_ += n; }
  // Takes back what was written since `offset` (an earlier tell()) when all of it is still in
  // the current window, so that an entry that failed midway leaves nothing; false when some
  // of it has gone to the sink.
  bool take_back(std::uint64_t offset) noexcept {
    if (offset < committed_ || offset > tell()) return false;
    pos_ = begin_ + (offset - committed_);
    return true;
  }
  // The writable bytes of the current window (may be empty before the first write).
  std::span<char> window() const noexcept { return {pos_, end_}; }

  // Pushes everything written so far to the OS (e.g. Kaldi's `f` flush-per-write option).
  void flush() {
    check_open();
    std::size_t used = static_cast<std::size_t>(pos_ - begin_);
    committed_ += used;
    begin_ = pos_ = end_ = nullptr;
    guarded([&] { sink_->flush(used); });
  }

  // Moves the output to an absolute offset (used to patch headers); throws when the sink
  // cannot seek.
  void seek(std::uint64_t offset) {
    flush();
    if (!guarded([&] { return sink_->seek(offset); })) throw_usage_error({"cannot seek in '", name_, "'"});
    committed_ = offset;
  }

  // Flushes and closes, reporting any loss (full disk, failed pipe command) as io_error.
  // After a failed write, close() releases the output and throws that failure again.
  void close() {
    if (!sink_) return;
    auto s = std::move(sink_);
    std::size_t used = static_cast<std::size_t>(pos_ - begin_);
    committed_ += used;
    begin_ = pos_ = end_ = nullptr;
    if (failure_) {
      s = {};
      std::rethrow_exception(std::exchange(failure_, nullptr));
    }
    s->close(used);
  }
  // Whether it has a sink to write to: not closed, and not moved from.
  bool is_open() const noexcept { return static_cast<bool>(sink_); }

 private:
  void check_open() const {
    if (failure_) std::rethrow_exception(failure_);
    if (!sink_) throw_usage_error({"write to closed output '", name_, "'"});
  }
  void grow(std::size_t need) {
    check_open();
    std::size_t used = static_cast<std::size_t>(pos_ - begin_);
    committed_ += used;
    std::span<char> w = guarded([&] { return sink_->next_window(used, need); });
    begin_ = pos_ = w.data();
    end_ = w.data() + w.size();
    if (w.size() < need) throw_usage_error({"output window too small in '", name_, "'"});
  }
  void write_slow(const char* src, std::size_t n) {
    check_open();
    if (std::size_t room = static_cast<std::size_t>(end_ - pos_); room != 0) {
      std::memcpy(pos_, src, room);
      pos_ += room;
      src += room;
      n -= room;
    }
    std::size_t used = static_cast<std::size_t>(pos_ - begin_);
    committed_ += used;
    std::span<char> w = guarded([&] { return sink_->next_window(used, n); });
    begin_ = pos_ = w.data();
    end_ = w.data() + w.size();
    if (n <= w.size()) {
      std::memcpy(pos_, src, n);
      pos_ += n;
    } else {
      // Larger than the sink's buffer: the window is empty, so write straight through.
      guarded([&] { sink_->write_direct(src, n); });
      committed_ += n;
    }
  }
  void close_quietly() noexcept {
    if (failure_) {
      // Already thrown to the caller once: release without reporting it again.
      sink_ = {};
      failure_ = nullptr;
      return;
    }
    try {
      if (sink_ && detail::giving_up(uncaught_)) {
        auto s = std::move(sink_);
        std::size_t used = static_cast<std::size_t>(pos_ - begin_);
        begin_ = pos_ = end_ = nullptr;
        s->abandon(used);
        return;
      }
      close();
    } catch (const std::exception& e) {
      // A destructor cannot throw: the failure goes to the error reporter instead.
      report_error(e.what());
    }
  }

  char* begin_ = nullptr;
  char* pos_ = nullptr;
  char* end_ = nullptr;
  std::uint64_t committed_ = 0;
  std::exception_ptr failure_;
  owned<sink_base> sink_;
  std::string name_;
  int uncaught_ = std::uncaught_exceptions();  // in flight when the writer was made
};

TABLIO_END_NAMESPACE
