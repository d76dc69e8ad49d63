// write_behind<H>: a table writer's values encoded by N threads (compressed, serialized) while
// the writer's own thread puts them into the framing in the order they were written. An entry's
// bytes are what the holder gives for it alone, so the table is byte for byte what one thread
// writes. At most `depth` values wait, copied, so memory stays bounded. Where the table measures
// that its threads would not write faster (table/thread_choice.hpp: values that encode about as
// fast as they are copied, such as float matrices), values are written as one thread writes
// them, once those in flight are.
//
// The first value is encoded and put where it is written, so that a value the output takes none
// of fails in the write() that gave it, as with one thread. A later value that fails to encode
// is not written; the error one thread throws for it (naming its key and table, where it is a
// usage_error) is thrown by a later write(), which has taken its own value, or by drain() (flush,
// close), once the entries before it are written. The values written after it wait: a caller who
// goes on (writes, flushes or closes again) has them written, and one who stops (abandons the
// table, or lets the exception destroy it) leaves the table one thread leaves to a caller who
// stops at the error. A table given up for any other reason (its caller's input failed) has
// the values write() took written first (settle()), as one thread had written them. The
// framing's own errors (a full disk) are thrown where they happen, and end the writing.
#pragma once

#include <tablio/core/monotonic_clock.hpp>
#include <tablio/core/ordered_pipeline.hpp>
#include <tablio/stream/memory.hpp>
#include <tablio/table/entry_io.hpp>
#include <tablio/table/table_threads.hpp>
#include <tablio/table/thread_choice.hpp>

#include <optional>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

namespace detail {

template <holder_type H>
class write_behind final : public table_stage {
 public:
  using value_type = typename H::value_type;

  // Entries of forms other than arrays (which take no encoding) can be written behind.
  template <class F>
  static bool takes(const F& f) {
    return output_form(f) != entry_form::array;
  }

  explicit write_behind(unsigned threads) : threads_(threads) {}

  // Copies or moves v in, as V is, or writes it here.
  template <class F, class V>
  void write(F& f, std::string_view key, V&& v) {
    stopped_ = false;  // a caller who writes on after an error goes on
    const std::uint64_t start = monotonic_nanoseconds();
    const bool threaded = started_ && choice_.threaded();
    if (threaded)
      write_behind_here(f, key, std::forward<V>(v));
    else
      write_here(f, key, v);
    choice_.entry(threaded, monotonic_nanoseconds() - start);
  }

  // Puts the values in flight up to the first that failed, whose error it throws.
  template <class F>
  void drain(F& f) {
    stopped_ = false;
    while (jobs_ && !jobs_->empty())
      if (auto failed = put_oldest(f)) failed_here(failed);
  }

  // For a table given up (an exception, abandon()): puts what one thread would have written for
  // a caller who stops now, the values write() took, up to one that failed, unless that failure
  // was the last thrown (the caller stopped at it) or the framing failed. Quietly: the table is
  // being given up.
  template <class F>
  void settle(F& f) noexcept {
    try {
      while (!stopped_ && !broken_ && jobs_ && !jobs_->empty())
        if (put_oldest(f)) return;
    } catch (...) {
    }
  }

 private:
  struct job {
    std::string key;
    value_type value{};
    std::string bytes;
    entry_form form = entry_form::record;
    bool binary = true;
    std::string_view key_name;
  };

  static void encode(void*, job& j) {
    j.bytes.clear();
    if (j.form == entry_form::object) {
      writer out = memory_writer(j.bytes);
      H::write(out, j.binary, j.value);
      out.close();
    } else {
      encode_keyed_record<H>(j.bytes, j.key_name, j.key, j.value);
    }
  }

  // Writes v as one thread does, after the values in flight; behind them if one of them failed.
  template <class F, class V>
  void write_here(F& f, std::string_view key, V& v) {
    while (jobs_ && !jobs_->empty()) {
      if (auto failed = put_oldest(f)) {
        hand_in(f, key, std::forward<V>(v));  // in order, behind the values that wait
        failed_here(failed);
      }
    }
    write_entry<H>(f, key, v, record_);
    started_ = true;
  }

  template <class F, class V>
  void write_behind_here(F& f, std::string_view key, V&& v) {
    if (!jobs_) jobs_.emplace(threads_, threads_ * jobs_per_thread, &encode, nullptr);  // threads start now
    // Waiting for a thread to encode the oldest: more in flight keep the threads busy.
    if (jobs_->waits() != waits_seen_ && depth_ < jobs_->depth()) ++depth_;
    waits_seen_ = jobs_->waits();
    std::exception_ptr failed;
    if (jobs_->in_flight() >= depth_) failed = put_oldest(f);
    hand_in(f, key, std::forward<V>(v));
    if (failed) failed_here(failed);
  }

  // Throws a value's failure to the caller, who may stop at it (settle() then writes no more).
  [[noreturn]] void failed_here(std::exception_ptr failed) {
    stopped_ = true;
    std::rethrow_exception(failed);
  }

  template <class F, class V>
  void hand_in(F& f, std::string_view key, V&& v) {
    job& j = jobs_->next_slot();
    j.key.assign(key);
    j.value = std::forward<V>(v);
    j.form = output_form(f);
    j.binary = j.form == entry_form::object && writes_binary(f);
    j.key_name = output_key_name(f);
    jobs_->hand_in(2 * jobs_->in_flight() >= depth_);  // threads woken for many at once
  }

  // What write_entry throws for a value whose encoding threw `thrown`.
  template <class F>
  static std::exception_ptr as_written(F& f, const job& j, std::exception_ptr thrown) {
    try {
      std::rethrow_exception(thrown);
    } catch (const usage_error& e) {
      if (j.form == entry_form::record && dynamic_cast<const key_error*>(&e)) return thrown;
      try {
        fail_value(f, j.key, e);
      } catch (...) {
        return std::current_exception();
      }
    } catch (...) {
    }
    return thrown;
  }

  // Puts the oldest value into the framing; the error its encoding met, if it failed.
  template <class F>
  std::exception_ptr put_oldest(F& f) {
    struct release_on_exit {
      ordered_pipeline<job>& jobs;
      ~release_on_exit() { jobs.release(); }
    } release{*jobs_};
    job* j;
    try {
      j = &jobs_->take();
    } catch (...) {
      return as_written(f, jobs_->oldest(), std::current_exception());
    }
    broken_ = true;  // until the framing has taken it: its own error (a full disk) ends the table
    if (j->form == entry_form::object) {
      if constexpr (object_output<F>) {
        f.begin(j->key).write(j->bytes);
        f.end();
      }
    } else {
      if constexpr (record_output<F>) f.put(j->key, std::string_view(j->bytes));
    }
    broken_ = false;
    return nullptr;
  }

  unsigned threads_;
  std::optional<ordered_pipeline<job>> jobs_;  // once a value is written behind
  // Values in flight at most: one a thread and one more at first, more each time the writer's
  // thread waits for a thread, up to the pipeline's depth (memory touched as it is needed).
  std::size_t depth_ = threads_ + 1;
  std::uint64_t waits_seen_ = 0;
  thread_choice choice_;
  bool started_ = false;  // a value is written: the first is written here
  bool stopped_ = false;  // a failed value's error was the last thrown
  bool broken_ = false;   // the framing threw
  std::string record_;    // a record written here
};

}  // namespace detail

TABLIO_END_NAMESPACE
