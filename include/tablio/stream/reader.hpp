// tablio::reader: the buffered input every codec reads from.
//
// The reader exposes a window of bytes [cur, end) and refills it from a type-erased source
// only when it runs dry, so the hot path (peek, get, read_exact of small values) is inline
// pointer arithmetic with no virtual call. A contiguous source (memory, mmap) is a single
// window: reading it copies nothing. Large reads bypass the buffer and go straight into the
// caller's memory.
#pragma once

#include <tablio/core/config.hpp>
#include <tablio/core/error.hpp>
#include <tablio/core/keeper.hpp>
#include <tablio/core/limits.hpp>
#include <tablio/core/minmax.hpp>
#include <tablio/core/owned.hpp>
#include <tablio/stream/concepts.hpp>

#include <concepts>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

TABLIO_BEGIN_NAMESPACE

namespace detail {
// The capacity a buffer that may grow to `claim` bytes takes when it must hold `need`: the
// least of claim >> j that is, so that successive ones at least double (a string grown by less
// than twice its capacity takes twice anyway: the last bytes of a 1 GiB record would take 2 GiB)
// and the last is the claim, and memory peaks at 1.5 times what arrived, never at the claim.
inline std::uint64_t grown_capacity(std::uint64_t claim, std::uint64_t need) {
  std::uint64_t target = claim;
  while (target / 2 >= need) target /= 2;
  return target;
}
}  // namespace detail

// Bytes [offset, offset + size) of an input.
struct byte_range {
  std::uint64_t offset = 0, size = 0;
};

// The type-erased interface the reader refills from.
class source_base {
 public:
  virtual ~source_base() = default;
  // The next bytes of input (valid until the next call); empty only at end of input.
  virtual std::span<const char> next_window() = 0;
  // Reads up to n bytes straight into dst, bypassing any buffer; 0 at end of input.
  virtual std::size_t read_direct(char* dst, std::size_t n) = 0;
  // Total size in bytes, when known.
  virtual std::optional<std::uint64_t> size() const { return std::nullopt; }
  // Offset of the first byte the source delivers (non-zero for a file opened at an offset).
  virtual std::uint64_t start_offset() const { return 0; }
  // Moves to an absolute offset; returns false when the source cannot seek.
  virtual bool seek(std::uint64_t) { return false; }
  // Releases the source and reports deferred failures (a pipe command's exit status).
  virtual void close() {}
  // Ranges about to be read, which a remote source fetches at once; others ignore it.
  virtual void prefetch(std::span<const byte_range>) {}
  // Shares the storage of the window next_window() gave last, so that views into it stay valid
  // after later refills (which then fill other storage); null where a window cannot outlive
  // the source (memory and maps are the source's own).
  virtual keeper keep_window() { return {}; }
};

namespace detail {

// The buffer a reader refills: the largest window a file or a command gives at once. Not
// constant, so that tests can make every object straddle windows of every size.
inline std::size_t default_read_buffer = std::size_t{1} << 18;
// After a seek (random access) refills start this small and double, so that one short entry
// does not cost a whole buffer's copy from the kernel; reading on reaches full refills soon.
inline constexpr std::size_t refill_after_seek = std::size_t{1} << 13;
// Reads at least this large skip the buffer and go straight into the caller's memory.
inline constexpr std::size_t direct_read_threshold = std::size_t{1} << 16;

template <source S>
class source_adapter final : public source_base {
 public:
  explicit source_adapter(S s, std::size_t buffer_size) : s_(std::move(s)), refill_(buffer_size) {
    if constexpr (!contiguous_source<S>) buffer_ = keeper::adopt(new buffer(buffer_size));
  }
  std::span<const char> next_window() override {
    if constexpr (contiguous_source<S>) {
      if (delivered_) return {};
      delivered_ = true;
      std::span<const char> all = s_.contiguous();
      return all.subspan(detail::min_of<std::size_t>(start_, all.size()));
    } else {
      if (!buffer_.alone()) leave_kept_buffer();
      std::vector<char>& bytes = buffer::of(buffer_);
      std::size_t n = s_.read_some(bytes.data(), refill_);
      refill_ = detail::min_of(2 * refill_, bytes.size());
      return {bytes.data(), n};
    }
  }
  std::size_t read_direct(char* dst, std::size_t n) override {
    if constexpr (contiguous_source<S>) {
      std::span<const char> w = next_window();
      n = detail::min_of(n, w.size());
      if (n != 0) std::memcpy(dst, w.data(), n);
      return n;
    } else {
      return s_.read_some(dst, n);
    }
  }
  std::optional<std::uint64_t> size() const override {
    if constexpr (contiguous_source<S>)
      return s_.contiguous().size();
    else if constexpr (sized_source<S>)
      return s_.size();
    else
      return std::nullopt;
  }
  bool seek(std::uint64_t offset) override {
    if constexpr (contiguous_source<S>) {
      start_ = offset;
      delivered_ = false;
      return true;
    } else if constexpr (seekable<S>) {
      s_.seek(offset);
      refill_ = detail::min_of(refill_after_seek, buffer::of(buffer_).size());
      return true;
    } else {
      return false;
    }
  }
  std::uint64_t start_offset() const override {
    if constexpr (seekable<S> && !contiguous_source<S>)
      return s_.tell();
    else
      return 0;
  }
  void close() override {
    if constexpr (closable<S>) s_.close();
  }
  void prefetch(std::span<const byte_range> ranges) override {
    if constexpr (requires { s_.prefetch(ranges); }) s_.prefetch(ranges);
  }
  keeper keep_window() override {
    if constexpr (contiguous_source<S>)
      return {};
    else
      return buffer_;
  }

 private:
  struct buffer final : kept_storage {
    explicit buffer(std::size_t size) : bytes(size) {}
    static std::vector<char>& of(const keeper& k) { return static_cast<buffer*>(k.get())->bytes; }
    std::vector<char> bytes;
  };
  // The window's storage is kept by someone: the next refill goes to storage no one keeps (one
  // let go of since, or a new one), and this one is reused once it is let go of in turn.
  void leave_kept_buffer() {
    for (keeper& spare : kept_)
      if (spare.alone()) {
        std::swap(spare, buffer_);
        return;
      }
    if (kept_.size() < max_kept_buffers) kept_.push_back(buffer_);
    buffer_ = keeper::adopt(new buffer(buffer::of(buffer_).size()));
  }
  static constexpr std::size_t max_kept_buffers = 64;

  S s_;
  keeper buffer_;             // a buffer (not for contiguous sources)
  std::vector<keeper> kept_;  // buffers kept by others when they were left
  std::size_t refill_;        // bytes the next refill asks for
  std::uint64_t start_ = 0;
  bool delivered_ = false;
};

}  // namespace detail

class reader {
 public:
  // Reads from any Source; `name` (usually the path) appears in every error message.
  template <source S>
  requires(!std::same_as<std::remove_cvref_t<S>, reader>) explicit reader(
      S&& s, std::string name = "<stream>", const limits& lim = default_limits,
      std::size_t buffer_size = detail::default_read_buffer)
      : source_(make_owned<detail::source_adapter<std::remove_cvref_t<S>>>(std::forward<S>(s), buffer_size)),
        name_(std::move(name)),
        limits_(lim) {
    total_size_ = source_->size();
    window_offset_ = source_->start_offset();
  }

  reader(reader&&) noexcept = default;
  reader& operator=(reader&&) noexcept = default;

  // What messages call the stream (usually the path).
  const std::string& name() const noexcept { return name_; }
  // What messages call the stream from now on (a name that came from input, quoted short).
  void set_name(std::string name) noexcept { name_ = std::move(name); }
  // The limits decoders check what they read against (limits::max_record_bytes and the others).
  const tablio::limits& limits() const noexcept { return limits_; }
  // Sets those limits, for what is read from now on.
  void set_limits(const tablio::limits& lim) noexcept { limits_ = lim; }

  // Byte offset of the next byte to be read.
  std::uint64_t tell() const noexcept {
    return window_offset_ + static_cast<std::uint64_t>(cur_ - window_begin_);
  }
  // Bytes left before the end of input, when the source knows its size.
  std::optional<std::uint64_t> remaining() const noexcept {
    if (!total_size_) return std::nullopt;
    std::uint64_t pos = tell();
    return pos < *total_size_ ? *total_size_ - pos : 0;
  }
  // True when the source can tell remaining() (memory, regular files, mmap).
  bool size_known() const noexcept { return total_size_.has_value(); }

  // The bytes available without refilling.
  std::span<const char> window() const noexcept { return {cur_, end_}; }
  // Consumes n bytes of the current window (n <= window().size()).
  void advance(std::size_t n) noexcept { cur_ += n; }

  // Makes at least n bytes (n small, e.g. a header) visible in window(), stitching across
  // refills if needed; false if the input ends first (the bytes that exist stay readable).
  TABLIO_ALWAYS_INLINE bool ensure(std::size_t n) {
    if (static_cast<std::size_t>(end_ - cur_) >= n) [[likely]]
      return true;
    return stitch(n);
  }

  // Refills the window when it is empty; false at end of input.
  bool fill() {
    if (cur_ != end_) return true;
    return refill();
  }
  // Whether the input has ended; it refills the window to find out, and so may block on a pipe.
  bool at_end() { return !fill(); }

  // Next byte without consuming it, or -1 at end of input.
  int peek() { return fill() ? static_cast<unsigned char>(*cur_) : -1; }
  // The byte before the next one (-1 at the start, or after a seek out of the window).
  int previous_byte() const noexcept {
    return cur_ > window_begin_ ? static_cast<unsigned char>(cur_[-1]) : before_window_;
  }
  // Next byte, or -1 at end of input.
  int get() { return fill() ? static_cast<unsigned char>(*cur_++) : -1; }

  // Reads up to n bytes; fewer only at end of input.
  std::size_t read_some(char* dst, std::size_t n) {
    std::size_t done = 0;
    while (done < n) {
      std::size_t avail = static_cast<std::size_t>(end_ - cur_);
      if (avail == 0) {
        // Large reads go straight into dst instead of through the buffer.
        if (n - done >= detail::direct_read_threshold && pending_.empty()) {
          retire_window();
          std::size_t got = source_->read_direct(dst + done, n - done);
          if (got == 0) break;
          count_delivered(got);
          window_offset_ += got;
          done += got;
          continue;
        }
        if (!refill()) break;
        avail = static_cast<std::size_t>(end_ - cur_);
      }
      std::size_t take = detail::min_of(avail, n - done);
      std::memcpy(dst + done, cur_, take);
      cur_ += take;
      done += take;
    }
    return done;
  }

  // Reads exactly n bytes or throws a format_error saying how many were missing.
  TABLIO_ALWAYS_INLINE void read_exact(char* dst, std::size_t n, const char* what = "bytes") {
    if (static_cast<std::size_t>(end_ - cur_) >= n) [[likely]] {
      if (n != 0) std::memcpy(dst, cur_, n);  // dst may be null (an empty vector's data())
      cur_ += n;
      return;
    }
    read_exact_slow(dst, n, what);
  }

 private:
  void read_exact_slow(char* dst, std::size_t n, const char* what) {
    std::uint64_t start = tell();
    std::size_t got = read_some(dst, n);
    if (got != n) fail_at(start, {decimal(n), " ", what}, {"end of input after ", decimal(got)});
  }

 public:
  // Returns a view of the next n bytes and consumes them: a view into the window when they
  // are there (always, for contiguous input), otherwise a copy in `scratch`.
  std::string_view read_view(std::size_t n, std::string& scratch, const char* what = "bytes") {
    const std::uint64_t start = tell();
    if (std::optional<std::string_view> v = try_read_view(n, scratch, what)) return *v;
    fail_at(start, {decimal(n), " ", what}, {"end of input after ", decimal(scratch.size())});
  }
  // The same, but nothing when the input ends first (`scratch` then holds what there was);
  // other failures (of the source, of the limits) throw.
  std::optional<std::string_view> try_read_view(std::size_t n, std::string& scratch,
                                                const char* what = "bytes") {
    if (static_cast<std::size_t>(end_ - cur_) >= n) {
      std::string_view v(cur_, n);
      cur_ += n;
      return v;
    }
    check_available(n, 1, what);
    if (size_known() || n <= limits_.max_reserve_bytes) {
      scratch.resize(n);
      scratch.resize(read_some(scratch.data(), n));
    } else {
      read_growing(n, scratch);
    }
    if (scratch.size() < n) return std::nullopt;
    return std::string_view(scratch);
  }

  // Skips n bytes or throws.
  void skip(std::uint64_t n) {
    while (n > 0) {
      if (!fill()) fail({"more bytes"}, {"end of input"});
      std::size_t take =
          static_cast<std::size_t>(detail::min_of<std::uint64_t>(n, static_cast<std::size_t>(end_ - cur_)));
      cur_ += take;
      n -= take;
    }
  }

  // Skips whitespace as std::isspace does in the "C" locale (text mode).
  void skip_whitespace() {
    for (;;) {
      while (cur_ != end_ && is_space(*cur_)) ++cur_;
      if (cur_ != end_ || !refill()) return;
    }
  }

  // Whether c is whitespace as std::isspace says in the "C" locale.
  static constexpr bool is_space(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
  }

  // Appends the bytes up to (not including) the next whitespace or end of input to out; a
  // token longer than limits::max_token_bytes is a format_error.
  void read_until_space(std::string& out) {
    const std::uint64_t start = tell();
    for (;;) {
      const char* p = cur_;
      while (p != end_ && !is_space(*p)) ++p;
      if (out.size() + static_cast<std::size_t>(p - cur_) > limits_.max_token_bytes) long_token(start);
      out.append(cur_, p);
      cur_ = p;
      if (p != end_ || !refill()) return;
    }
  }

  // Reads the rest of the line into `line` (without its '\n', which is consumed); false when
  // the input was already at its end. A last line without '\n' counts as a line.
  bool read_line(std::string& line) {
    line.clear();
    if (!fill()) return false;
    for (;;) {
      const char* nl =
          static_cast<const char*>(std::memchr(cur_, '\n', static_cast<std::size_t>(end_ - cur_)));
      const char* stop = nl ? nl : end_;
      if (line.size() + static_cast<std::size_t>(stop - cur_) > limits_.max_record_bytes)
        fail({"a line of at most ", decimal(limits_.max_record_bytes), " bytes (limits::max_record_bytes)"},
             {"a longer line"});
      line.append(cur_, stop);
      cur_ = nl ? nl + 1 : end_;
      if (nl || !refill()) return true;
    }
  }

  // Checks, before allocating, that `count` items of at least `min_item_bytes` each can be
  // there: against the remaining input when known, otherwise against the limits.
  TABLIO_ALWAYS_INLINE void check_available(std::uint64_t count, std::uint64_t min_item_bytes,
                                            const char* what = "items") const {
    // Fast path without divisions: below 2^32 each, the product cannot overflow.
    if (count < (std::uint64_t{1} << 32) && min_item_bytes < (std::uint64_t{1} << 32) &&
        count <= limits_.max_element_count) {
      std::uint64_t bytes = count * min_item_bytes;
      if (bytes <= limits_.max_record_bytes && (!total_size_ || bytes <= *remaining())) return;
    }
    check_available_precisely(count, min_item_bytes, what);
  }

  // How many elements a container may reserve up front for a checked count.
  std::size_t reserve_hint(std::uint64_t count, std::size_t element_size) const noexcept {
    if (size_known()) return static_cast<std::size_t>(count);
    return static_cast<std::size_t>(detail::min_of<std::uint64_t>(
        count, limits_.max_reserve_bytes / detail::max_of<std::size_t>(1, element_size)));
  }

  // Throws a format_error at the current offset.
  [[noreturn]] TABLIO_COLD void fail(message expected, message found) const {
    throw_format_error(name_, tell(), {}, expected, found);
  }
  // Throws a format_error at byte `offset`.
  [[noreturn]] TABLIO_COLD void fail_at(std::uint64_t offset, message expected, message found) const {
    throw_format_error(name_, offset, {}, expected, found);
  }
  // The same with whole strings: r.fail("a newline", "byte 'x'"). (Templates, which a braced
  // list of pieces cannot match, so that such a list always means a message.)
  template <class Expected, class Found>
  requires std::convertible_to<const Expected&, std::string_view> &&
      std::convertible_to<const Found&, std::string_view>
  [[noreturn]] void fail(const Expected& expected, const Found& found) const {
    fail(message{std::string_view(expected)}, message{std::string_view(found)});
  }
  template <class Expected, class Found>
  requires std::convertible_to<const Expected&, std::string_view> &&
      std::convertible_to<const Found&, std::string_view>
  [[noreturn]] void fail_at(std::uint64_t offset, const Expected& expected, const Found& found) const {
    fail_at(offset, message{std::string_view(expected)}, message{std::string_view(found)});
  }

  // Moves to an absolute offset (throws usage_error when the source cannot seek). An offset in
  // the window is reached there, without asking the source again.
  void seek(std::uint64_t offset) {
    if (offset >= window_offset_ &&
        offset - window_offset_ < static_cast<std::uint64_t>(end_ - window_begin_)) {
      cur_ = window_begin_ + (offset - window_offset_);
      return;
    }
    if (!source_->seek(offset)) throw_usage_error({"cannot seek in '", name_, "'"});
    window_begin_ = cur_ = end_ = nullptr;
    before_window_ = -1;
    pending_ = {};
    window_offset_ = offset;
    // A contiguous source re-delivers from the new offset.
  }

  // Tells the source which ranges are about to be read (a remote one fetches them at once).
  void prefetch(std::span<const byte_range> ranges) {
    if (source_) source_->prefetch(ranges);
  }

  // Shares the storage of the current window, so that views into it (read_view()'s, when not
  // in its scratch) stay valid after the reader moves on; null when it cannot be kept (memory
  // and maps, bytes stitched across refills).
  keeper keep_window() const { return window_is_source_ && source_ ? source_->keep_window() : keeper(); }
  // Changes whenever the window does: views taken while it is the same lie in one window, which
  // one keep_window() keeps for them all.
  std::uint64_t window_number() const noexcept { return windows_; }

  // Closes the source: a pipe command's exit status is checked when its output was read to
  // the end.
  void close() {
    if (source_) {
      auto s = std::move(source_);
      s->close();
    }
  }

 private:
  // check_available()'s slow path: exact checks, and the error that says which one failed.
  void check_available_precisely(std::uint64_t count, std::uint64_t min_item_bytes, const char* what) const {
    if (count > limits_.max_element_count)
      fail({"at most ", decimal(limits_.max_element_count), " ", what, " (limits::max_element_count)"},
           {"a count of ", decimal(count)});
    if (min_item_bytes != 0 && count > limits_.max_record_bytes / min_item_bytes)
      fail({"at most ", decimal(limits_.max_record_bytes), " bytes (limits::max_record_bytes)"},
           {"a count of ", decimal(count), " ", what});
    if (auto rem = remaining(); rem && min_item_bytes != 0 && count > *rem / min_item_bytes)
      fail({decimal(count), " ", what, " (at least ", decimal(count * min_item_bytes), " bytes)"},
           {"only ", decimal(*rem), " bytes left"});
  }

  [[noreturn]] TABLIO_COLD void long_token(std::uint64_t start) const {
    fail_at(start,
            {"a token of at most ", decimal(limits_.max_token_bytes), " bytes (limits::max_token_bytes)"},
            {"a longer run of bytes with no whitespace"});
  }
  [[noreturn]] TABLIO_COLD void too_much() const {
    fail({"at most ", decimal(limits_.max_total_bytes), " bytes from one input (limits::max_total_bytes)"},
         {"more"});
  }
  // Counts what the source delivered against limits::max_total_bytes.
  void count_delivered(std::size_t n) {
    delivered_ += n;
    if (limits_.max_total_bytes != 0 && delivered_ > limits_.max_total_bytes) [[unlikely]]
      too_much();
  }

  // try_read_view()'s path for input of unknown size (a pipe, a decompressor): the scratch grows
  // as the bytes arrive, so that a length that lies costs what was sent, not what it claims.
  void read_growing(std::size_t n, std::string& scratch) {
    scratch.clear();
    while (scratch.size() < n) {
      std::size_t have = scratch.size();
      std::size_t step = detail::min_of(n - have, detail::max_of(have, limits_.max_reserve_bytes));
      if (have + step > scratch.capacity())
        scratch.reserve(static_cast<std::size_t>(detail::grown_capacity(n, have + step)));
      scratch.resize(have + step);
      std::size_t got = read_some(scratch.data() + have, step);
      scratch.resize(have + got);
      if (got < step) return;
    }
  }

  // ensure()'s slow path: copies what is left of the window and the start of the next
  // windows into stitch_, and makes that the window.
  bool stitch(std::size_t n) {
    std::vector<char> stitched(cur_, end_);
    std::uint64_t start = tell();
    while (stitched.size() < n) {
      std::span<const char> w = take_next_window();
      if (w.empty()) break;
      std::size_t k = detail::min_of(n - stitched.size(), w.size());
      stitched.insert(stitched.end(), w.data(), w.data() + k);
      pending_ = w.subspan(k);
    }
    note_byte_before_window();
    stitch_ = std::move(stitched);
    window_is_source_ = false;
    ++windows_;
    window_offset_ = start;
    window_begin_ = cur_ = stitch_.data();
    end_ = stitch_.data() + stitch_.size();
    return stitch_.size() >= n;
  }

  // Keeps the last byte read before the window moves on, for previous_byte().
  void note_byte_before_window() noexcept {
    if (cur_ > window_begin_) before_window_ = static_cast<unsigned char>(cur_[-1]);
  }

  // Accounts for the consumed window so that tell() stays right across refills.
  void retire_window() noexcept {
    window_offset_ += static_cast<std::uint64_t>(end_ - window_begin_);
    window_begin_ = cur_ = end_;
  }

  bool refill() {
    note_byte_before_window();
    retire_window();
    std::span<const char> w = take_next_window();
    window_is_source_ = true;
    ++windows_;
    window_begin_ = cur_ = w.data();
    end_ = w.data() + w.size();
    return !w.empty();
  }

  // The rest of a source window that ensure() left after stitching, else the next one.
  std::span<const char> take_next_window() {
    if (!pending_.empty()) return std::exchange(pending_, {});
    if (!source_) return {};
    std::span<const char> w = source_->next_window();
    count_delivered(w.size());
    return w;
  }

  std::vector<char> stitch_;  // heap storage, so window pointers survive a move
  std::span<const char> pending_;
  bool window_is_source_ = false;  // the window is the source's (not stitch_)
  std::uint64_t windows_ = 0;      // refills and stitches so far
  std::uint64_t delivered_ = 0;    // bytes the source gave, for limits::max_total_bytes
  const char* window_begin_ = nullptr;
  int before_window_ = -1;  // the byte read last before window_begin_, or -1
  const char* cur_ = nullptr;
  const char* end_ = nullptr;
  std::uint64_t window_offset_ = 0;
  owned<source_base> source_;
  std::optional<std::uint64_t> total_size_;
  std::string name_;
  tablio::limits limits_;
};

// An object's bytes taken off a reader undecoded, for another thread to decode: a view of the
// reader's window, kept alive by `window`, or a copy where the window cannot be kept or does
// not hold them whole.
struct skimmed_object {
  std::string_view bytes;
  keeper window;
  std::string copy;

  // Empties it, letting the window it kept go.
  void clear() noexcept {
    bytes = {};
    window.reset();
    copy.clear();
  }
  // Takes the next n bytes of r (they are known to be there).
  void take(reader& r, std::size_t n, const char* what) {
    if (r.window().size() >= n) {
      if (keeper kept = r.keep_window()) {
        bytes = std::string_view(r.window().data(), n);
        r.advance(n);
        window = std::move(kept);
        return;
      }
    }
    copy.resize(n);
    r.read_exact(copy.data(), n, what);
    bytes = copy;
  }
};

TABLIO_END_NAMESPACE
