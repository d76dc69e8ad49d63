// An s3:// object as a sink for tablio::writer: the bytes written fill a part, which a
// background thread uploads while the next one fills; the first part is kept until close(), so
// that a header can be patched at the end (an IDX item count), and memory holds three parts at
// most. close() uploads the last parts and completes the upload, or stores a small object in
// one request. The object appears only then, whole: a writer that fails, or is given up (by an
// exception, or abandon()), aborts the upload, and one that is killed leaves only an
// unfinished upload, never a partial object. Each request ends by the request deadline, and
// the whole upload, from open to close, by the stream deadline.
#pragma once

#include <tablio/stream/remote/object.hpp>
#include <tablio/stream/remote/s3.hpp>
#include <tablio/stream/writer.hpp>

#include <condition_variable>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

TABLIO_BEGIN_NAMESPACE

namespace remote {

// Uploads an s3:// object as it is written, as the header's opening comment says: it models
// the Sink concept, closable and seekable within the first part.
class upload_sink {
 public:
  // Parts of 8 MiB, twice that after each thousand (S3 takes at most 10,000 parts).
  static constexpr std::size_t first_part_size = std::size_t{8} << 20;

  // Uploads to obj; nothing is asked of S3 until a part past the first fills, or close().
  explicit upload_sink(std::shared_ptr<object> obj) : s_(std::make_unique<state>(std::move(obj))) {}
  upload_sink(upload_sink&&) noexcept = default;
  ~upload_sink() {
    if (s_) s_->give_up();
  }

  // Appends; or, after a seek back into the first part (which is kept until close() to allow
  // it: a header patched at the end), overwrites there.
  void write(const char* src, std::size_t n) {
    state& s = *s_;
    if (s.position < s.total) {
      if (s.position + n > s.first.size())
        throw_usage_error({"'", s.obj->name(), "': an object being uploaded can be rewritten in its first ",
                           decimal(first_part_size), " bytes only"});
      std::memcpy(s.first.data() + s.position, src, n);
      s.position += n;
      return;
    }
    s.position += n;
    s.total += n;
    while (n > 0) {
      std::string& part = s.parts == 0 ? s.first : s.filling;
      std::size_t room = s.part_size() - part.size();
      std::size_t take = n < room ? n : room;
      part.append(src, take);
      src += take;
      n -= take;
      if (part.size() == s.part_size()) {
        if (s.parts == 0) {
          s.parts = 1;  // the first part waits for close()
          s.filled = part.size();
        } else {
          s.hand_over();
        }
      }
    }
  }
  // The Sink concept: nothing to push.
  void flush() {}  // parts go as they fill; the object appears at close()
  // Moves to byte offset: the end, or a byte of the first part (which is kept until close());
  // usage_error for any other offset.
  void seek(std::uint64_t offset) {
    state& s = *s_;
    if (offset != s.total && offset > s.first.size())
      throw_usage_error({"'", s.obj->name(), "': an object being uploaded can be rewritten in its first ",
                         decimal(first_part_size), " bytes only"});
    s.position = offset;
  }
  // The offset the next write goes to.
  std::uint64_t tell() const noexcept { return s_->position; }
  // Given up (detail::giving_up): the upload is aborted, and no object appears.
  void abandon() { s_->give_up(); }

  // Uploads what is left and completes the upload, or stores a small object whole: the object
  // appears now. On failure the upload is aborted and io_error thrown; a writer dropped without
  // close() (dropped_scope) gives the upload up and throws.
  void close() {
    state& s = *s_;
    if (::tablio::detail::dropped_scope::depth() > 0) {
      s.give_up();
      throw_io_error(s.obj->name(), 0,
                     {"its writer was dropped without close(), so nothing says the table is complete: the "
                      "upload is given up, and no object appears at"});
    }
    s.wait_idle();
    try {
      if (s.parts == 0) {
        s.upload.put_whole(s.c, s.first);  // the object is one part: one request
      } else {
        if (!s.filling.empty()) s.upload.put_part(s.c, ++s.parts, s.filling, s.filled);
        s.upload.put_part(s.c, 1, s.first, 0);
        s.upload.complete(s.c);
      }
    } catch (...) {
      s.upload.abort(s.c);
      s.closed = true;
      throw;
    }
    s.closed = true;
  }

 private:
  struct state {
    explicit state(std::shared_ptr<object> o) : obj(std::move(o)), upload(*obj) {}
    ~state() {
      if (worker.joinable()) worker.join();
    }

    std::size_t part_size() const { return first_part_size << std::min(parts / 1000, 9); }

    // Gives the full part to the worker, waiting for it to finish the one before.
    void hand_over() {
      std::unique_lock<std::mutex> lock(m);
      cv.wait(lock, [&] { return !busy; });
      if (error) std::rethrow_exception(error);
      uploading.swap(filling);
      filling.clear();
      uploading_at = filled;
      filled += uploading.size();
      busy = true;
      number = ++parts;
      if (!worker.joinable()) worker = std::thread([this] { run(); });
      lock.unlock();
      cv.notify_all();
    }

    void run() {
      connection own;
      std::unique_lock<std::mutex> lock(m);
      for (;;) {
        cv.wait(lock, [&] { return busy || stop; });
        if (!busy) return;
        lock.unlock();
        std::exception_ptr failed;
        try {
          upload.put_part(own, number, uploading, uploading_at);
        } catch (...) {
          failed = std::current_exception();
        }
        lock.lock();
        busy = false;
        if (failed) error = failed;
        cv.notify_all();
      }
    }

    // Waits for the part being uploaded; rethrows its failure (after aborting the upload).
    void wait_idle() {
      std::unique_lock<std::mutex> lock(m);
      cv.wait(lock, [&] { return !busy; });
      stop = true;
      cv.notify_all();
      lock.unlock();
      if (worker.joinable()) worker.join();
      if (error) {
        upload.abort(c);
        closed = true;
        std::rethrow_exception(error);
      }
    }

    // Not closed (a failure before, or no close()): no object may appear.
    void give_up() noexcept {
      if (closed) return;
      {
        std::unique_lock<std::mutex> lock(m);
        cv.wait(lock, [&] { return !busy; });
        stop = true;
      }
      cv.notify_all();
      if (worker.joinable()) worker.join();
      upload.abort(c);
      closed = true;
    }

    std::shared_ptr<object> obj;
    s3_upload upload;
    connection c;
    std::string first, filling,
        uploading;              // part 1 (kept until close()), the part filling, the one uploading
    int parts = 0, number = 0;  // parts filled; the number of the one uploading
    std::uint64_t position = 0, total = 0;       // where writes go; bytes appended
    std::uint64_t filled = 0, uploading_at = 0;  // bytes in full parts; the uploading part's offset
    std::mutex m;
    std::condition_variable cv;
    bool busy = false, stop = false, closed = false;
    std::exception_ptr error;
    std::thread worker;
  };

  std::unique_ptr<state> s_;
};

}  // namespace remote

TABLIO_END_NAMESPACE
