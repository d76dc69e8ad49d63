// A remote object as a seekable source for tablio::reader.
//
// Read in order from where it was opened, the object streams: one GET to its end, on a
// background thread that stays up to `stream_buffer` bytes ahead of the reader, so that the
// reader never waits a round trip per buffer. After a seek (random access) it fetches byte
// ranges instead, on the reader's thread over a kept-alive connection, starting small and
// growing while reading goes on in order, and streaming again once it has gone on for a while.
// prefetch() fetches many ranges at once, over several connections, neighbours coalesced
// into one request, for a batch of lookups about to read them.
#pragma once

#include <tablio/stream/reader.hpp>
#include <tablio/stream/remote/object.hpp>

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

TABLIO_BEGIN_NAMESPACE

namespace remote {

// Bytes of the object held in memory: [start, start + data.size()).
struct block {
  std::uint64_t start = 0;
  std::string data;
  std::uint64_t serial = 0;  // when it was fetched: the oldest go first
  // Whether the byte at offset `at` is held.
  bool holds(std::uint64_t at) const noexcept { return at >= start && at - start < data.size(); }
  // Whether every byte of r is held.
  bool holds(const byte_range& r) const noexcept {
    return r.offset >= start && r.offset - start + r.size <= data.size();
  }
};

namespace detail {

// The background GET of everything from one offset on, into a ring buffer the reader empties:
// the transfer waits while the buffer is full. Until the first read it holds `early` bytes at
// most: started ahead of its reader, it is to hide the round trip, not to hold the object.
// Bytes are copied in and out without the lock, which guards the positions only.
class stream_ahead {
 public:
  stream_ahead(std::shared_ptr<object> obj, std::uint64_t from, std::size_t capacity, std::size_t early)
      : obj_(std::move(obj)),
        next_(from),
        ring_(new char[capacity]),  // not zeroed: pages touched as they fill
        capacity_(capacity),
        limit_(std::min(early, capacity)),
        known_(obj_->known()) {  // else its thread learns the object, and wait_known() waits for that
    thread_ = std::thread([this, from] { run(from); });
  }
  ~stream_ahead() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  // The offset of the next byte read() gives.
  std::uint64_t next() const noexcept { return next_; }

  // Waits for the response's headers: the object's size and identity are known after.
  void wait_known() {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [&] { return known_ || done_; });
    if (!known_ && error_) std::rethrow_exception(error_);
  }

  // Up to n bytes, waiting for them; 0 at the object's end. Throws what ended the GET.
  std::size_t read(char* dst, std::size_t n) {
    std::size_t filled, start;
    {
      std::unique_lock<std::mutex> lock(m_);
      if (limit_ < capacity_) {
        limit_ = capacity_;
        cv_.notify_all();
      }
      cv_.wait(lock, [&] { return filled_ != 0 || done_; });
      if (filled_ == 0) {
        if (error_) std::rethrow_exception(error_);
        return 0;
      }
      filled = filled_;
      start = head_;
    }
    std::size_t take = std::min({n, filled, capacity_ - start});  // up to the ring's end
    std::memcpy(dst, ring_.get() + start, take);
    {
      std::lock_guard<std::mutex> lock(m_);
      head_ = (head_ + take) % capacity_;
      filled_ -= take;
      next_ += take;
    }
    cv_.notify_all();
    return take;
  }

 private:
  void run(std::uint64_t from) {
    try {
      connection c;
      c.stream();
      obj_->get(
          c, from, std::nullopt,
          [&](const char* data, std::size_t n) {
            while (n > 0) {
              std::size_t room, tail;
              {
                std::unique_lock<std::mutex> lock(m_);
                cv_.wait(lock, [&] { return filled_ < limit_ || stop_; });
                if (stop_) return false;
                room = limit_ - filled_;
                tail = (head_ + filled_) % capacity_;
              }
              std::size_t put = std::min({n, room, capacity_ - tail});
              std::memcpy(ring_.get() + tail, data, put);
              {
                std::lock_guard<std::mutex> lock(m_);
                filled_ += put;
              }
              cv_.notify_all();
              data += put;
              n -= put;
            }
            return true;
          },
          [&] { signal_known(); },
          [&](double seconds) {  // between attempts: no longer than the reader stays
            std::unique_lock<std::mutex> lock(m_);
            return !cv_.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return stop_; });
          });
    } catch (...) {
      std::lock_guard<std::mutex> lock(m_);
      error_ = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(m_);
      done_ = true;
      known_ = known_ || obj_->known();
    }
    cv_.notify_all();
  }
  void signal_known() {
    {
      std::lock_guard<std::mutex> lock(m_);
      known_ = true;
    }
    cv_.notify_all();
  }

  std::shared_ptr<object> obj_;
  std::mutex m_;
  std::condition_variable cv_;
  std::uint64_t next_;
  std::unique_ptr<char[]> ring_;
  std::size_t capacity_, limit_;       // the ring's size, and how much of it may be filled
  std::size_t head_ = 0, filled_ = 0;  // the bytes waiting: ring_[head_, head_ + filled_), wrapping
  bool stop_ = false, done_ = false, known_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace detail

// Reads a remote object (the header's opening comment says how): it models the Source concept,
// seekable, sized and closable. Read in order, it streams ahead; after a seek, it fetches
// ranges of growing size, and streams again once reading goes on in order.
class remote_source {
 public:
  static constexpr std::size_t stream_buffer = std::size_t{16} << 20;    // streamed ahead, at most
  static constexpr std::size_t stream_early = std::size_t{1} << 20;      // before the first read
  static constexpr std::uint64_t stream_after = std::uint64_t{1} << 20;  // read in order after a seek
  static constexpr std::size_t first_range = std::size_t{64} << 10, largest_range = std::size_t{8} << 20;
  static constexpr std::uint64_t coalesce_gap = std::uint64_t{64} << 10;  // prefetch: one request across
  static constexpr int parallel_requests = 16;
  static constexpr std::size_t prefetch_memory = std::size_t{64} << 20;  // blocks kept, at most

  // Reading from `offset` streams, unless `random` asks for ranges. The object's size and
  // identity come with the first answer, unless it was stat()ed already on `c` (kept alive).
  remote_source(std::shared_ptr<object> obj, std::uint64_t offset, bool random)
      : remote_source(std::move(obj), offset, random, connection()) {}
  remote_source(std::shared_ptr<object> obj, std::uint64_t offset, bool random, connection c)
      : s_(std::make_unique<state>(std::move(c))) {
    s_->obj = std::move(obj);
    s_->pos = offset;
    s_->random = random;
  }

  // Starts streaming from the position now (reading in order), not at the first read.
  void start_streaming() {
    state& s = *s_;
    if (!s.random && !s.ahead)
      s.ahead = std::make_unique<detail::stream_ahead>(s.obj, s.pos, stream_buffer, stream_early);
  }

  // The Source concept: reads up to n bytes into dst; 0 at the end of the object. An object
  // replaced since it was first seen, or a failure past the retries and deadlines, is an io_error.
  std::size_t read_some(char* dst, std::size_t n) {
    state& s = *s_;
    std::uint64_t size = known_size();
    if (s.pos >= size || n == 0) return 0;
    std::size_t got;
    if (const block* b = held(s.pos)) {
      got = std::min<std::uint64_t>(n, b->start + b->data.size() - s.pos);
      std::memcpy(dst, b->data.data() + (s.pos - b->start), got);
    } else if (s.ahead && s.ahead->next() == s.pos) {
      got = s.ahead->read(dst, n);
    } else if (!s.random || s.in_order >= stream_after) {
      s.ahead.reset();
      s.ahead = std::make_unique<detail::stream_ahead>(s.obj, s.pos, stream_buffer, stream_buffer);
      got = s.ahead->read(dst, n);
    } else {
      got = fetch_range(dst, n);
    }
    s.pos += got;
    s.in_order += got;
    return got;
  }

  // Moves to byte offset; it asks nothing of the server until the next read.
  void seek(std::uint64_t offset) {
    state& s = *s_;
    if (offset == s.pos) return;
    s.pos = offset;
    s.random = true;
    s.in_order = 0;
    s.next_range = first_range;
    if (s.ahead && s.ahead->next() != offset) s.ahead.reset();
  }
  // The offset of the next byte read.
  std::uint64_t tell() const noexcept { return s_->pos; }
  // Asked for when the reader is made: an object opened without a stat() is asked for its
  // first bytes now, and the answer says how large it is.
  std::optional<std::uint64_t> size() const { return known_size(); }
  // Stops the streaming and drops the prefetched blocks.
  void close() {
    s_->ahead.reset();
    s_->prefetched.clear();
  }

  // Fetches these ranges now, several at a time, neighbours in one request, for reads that
  // are about to come; what cannot be fetched is left to those reads (which retry it). Ranges
  // held already are not fetched again.
  void prefetch(std::span<const byte_range> wanted) {
    std::uint64_t size = known_size();
    std::vector<block> blocks;
    for (const byte_range& r : sorted(wanted)) {
      std::uint64_t end = std::min(r.offset + r.size, size);
      if (r.offset >= end || held({r.offset, end - r.offset})) continue;
      if (!blocks.empty() && r.offset <= blocks.back().start + blocks.back().data.size() + coalesce_gap) {
        block& last = blocks.back();
        last.data.resize(std::max<std::uint64_t>(last.data.size(), end - last.start));
      } else {
        blocks.push_back({r.offset, std::string(end - r.offset, '\0')});
      }
    }
    if (blocks.empty()) return;
    fetch_all(blocks);
    std::erase_if(blocks, [](const block& b) { return b.data.empty(); });
    keep(std::move(blocks));
  }

 private:
  struct state {
    explicit state(connection connected) : c(std::move(connected)) {}
    ~state() {
      pool.clear();
      if (multi) curl_multi_cleanup(multi);
    }
    state(const state&) = delete;
    state& operator=(const state&) = delete;
    std::shared_ptr<object> obj;
    std::uint64_t pos = 0;
    bool random = false;
    bool sized = false;          // known_size() has learned the object
    std::uint64_t in_order = 0;  // bytes read in order since the last seek
    std::size_t next_range = first_range;
    connection c;
    block last;                     // the last range fetched
    std::vector<block> prefetched;  // newest first
    std::uint64_t serial = 0;
    std::vector<std::unique_ptr<connection>> pool;  // for prefetch(), in `multi`
    CURLM* multi = nullptr;
    std::unique_ptr<detail::stream_ahead> ahead;
  };

  // The object's size, learned by the first request unless known already. A stream under way
  // learns it on its own thread: the object is read here only after wait_known().
  std::uint64_t known_size() const {
    state& s = *s_;
    if (!s.sized) {
      if (!s.ahead && !s.obj->known()) {
        if (s.random)
          fetch_range(nullptr, 0);
        else
          s.ahead = std::make_unique<detail::stream_ahead>(s.obj, s.pos, stream_buffer, stream_buffer);
      }
      if (s.ahead) s.ahead->wait_known();
      s.sized = true;
    }
    return s.obj->size();
  }

  const block* held(std::uint64_t at) const {
    state& s = *s_;
    if (s.last.holds(at)) return &s.last;
    for (const block& b : s.prefetched)
      if (b.holds(at)) return &b;
    return nullptr;
  }
  bool held(const byte_range& r) const {
    for (const block& b : s_->prefetched)
      if (b.holds(r)) return true;
    return false;
  }

  // Adds fetched blocks to those kept, dropping the oldest past prefetch_memory.
  void keep(std::vector<block> blocks) {
    state& s = *s_;
    std::uint64_t serial = ++s.serial;
    for (block& b : blocks) {
      b.serial = serial;
      s.prefetched.push_back(std::move(b));
    }
    std::sort(s.prefetched.begin(), s.prefetched.end(),
              [](const block& a, const block& b) { return a.serial > b.serial; });
    std::size_t kept = 0, bytes = 0;
    while (kept < s.prefetched.size() && bytes + s.prefetched[kept].data.size() <= prefetch_memory)
      bytes += s.prefetched[kept++].data.size();
    s.prefetched.resize(std::max<std::size_t>(kept, blocks.size()));
  }

  // A range from the position, at least n bytes, growing while reading goes on in order.
  std::size_t fetch_range(char* dst, std::size_t n) const {
    state& s = *s_;
    std::uint64_t length = std::max(n, s.next_range);
    if (s.obj->known()) length = std::min<std::uint64_t>(length, s.obj->size() - s.pos);
    s.next_range = std::min(largest_range, s.next_range * 2);
    s.last.start = s.pos;
    s.last.data.clear();
    s.last.data.reserve(length);
    s.obj->get(s.c, s.pos, s.pos + length - 1, [&](const char* data, std::size_t k) {
      s.last.data.append(data, k);
      return true;
    });
    std::size_t got = std::min<std::size_t>(n, s.last.data.size());
    if (got) std::memcpy(dst, s.last.data.data(), got);
    return got;
  }

  static std::vector<byte_range> sorted(std::span<const byte_range> ranges) {
    std::vector<byte_range> out(ranges.begin(), ranges.end());
    std::sort(out.begin(), out.end(),
              [](const byte_range& a, const byte_range& b) { return a.offset < b.offset; });
    return out;
  }

  // Fills each block's bytes, parallel_requests requests at a time; a block whose request
  // fails is emptied.
  void fetch_all(std::vector<block>& blocks) {
    state& s = *s_;
    if (blocks.size() == 1) {  // one request: on the source's own connection, retried as any read
      block& b = blocks.front();
      std::size_t filled = 0;
      s.obj->get(s.c, b.start, b.start + b.data.size() - 1, [&](const char* data, std::size_t k) {
        std::memcpy(b.data.data() + filled, data, k);
        filled += k;
        return true;
      });
      return;
    }
    if (!s.multi) s.multi = curl_multi_init();  // its connections stay alive from batch to batch
    CURLM* multi = s.multi;
    struct job {
      block* b;
      std::size_t filled = 0;
      response r;
      data_sink sink;
      connection* c = nullptr;
    };
    std::vector<job> jobs(blocks.size());
    std::size_t next = 0, running = 0;
    auto start = [&](connection* c) {
      job& j = jobs[next++];
      j.b = &blocks[static_cast<std::size_t>(&j - jobs.data())];
      j.c = c;
      j.sink = [&j](const char* data, std::size_t k) {
        std::memcpy(j.b->data.data() + j.filled, data, k);  // limit: no more than the block's size
        j.filled += k;
        return true;
      };
      c->prepare(s.obj->where(), s.obj->request_deadline(),
                 s.obj->range_request(j.b->start, j.b->start + j.b->data.size() - 1), j.r, j.sink,
                 j.b->data.size());
      curl_easy_setopt(c->handle(), CURLOPT_PRIVATE, &j);
      curl_multi_add_handle(multi, c->handle());
      ++running;
    };
    while (s.pool.size() < std::min<std::size_t>(parallel_requests, blocks.size()))
      s.pool.push_back(std::make_unique<connection>());
    for (std::size_t i = 0; i < s.pool.size() && next < jobs.size(); ++i) start(s.pool[i].get());
    while (running) {
      int active = 0;
      curl_multi_perform(multi, &active);
      while (CURLMsg* msg = curl_multi_info_read(multi, &active)) {
        if (msg->msg != CURLMSG_DONE) continue;
        job* j = nullptr;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &j);
        curl_multi_remove_handle(multi, msg->easy_handle);
        --running;
        bool ok = msg->data.result == CURLE_OK && j->r.status == 206 && j->filled == j->b->data.size() &&
                  !s.obj->wrong_response(j->r, j->b->start);
        if (!ok) j->b->data.clear();
        if (next < jobs.size()) start(j->c);
      }
      if (running) curl_multi_poll(multi, nullptr, 0, 100, nullptr);
    }
  }

  std::unique_ptr<state> s_;
};

}  // namespace remote

TABLIO_END_NAMESPACE
