// ordered_pipeline<Job>: threads that run jobs handed in one by one, which are taken back in
// the order they came in, so that work done in parallel is seen in sequence (a table's
// entries decoded ahead of its reader, encoded behind its writer). At most `depth` jobs are in
// flight (handed in, not yet released), so memory stays bounded by depth jobs.
//
// One thread, the owner, hands jobs in and takes them back; the threads the pipeline starts
// only run them, and so does the owner while it waits for one: it runs those no thread has
// taken up yet. A job is storage the owner fills and reuses: run(context, job) is called for it
// on one of those threads, and an exception it throws is kept and rethrown where the owner
// takes that job back, so that an error surfaces at its job's position in the sequence. The
// job last released is the next filled, so that the memory jobs touch is what is in flight at
// once, warm, however deep the pipeline may be.
//
// Over POSIX threads, as core/mutex.hpp, for what <thread> and <condition_variable> would cost
// every includer.
#pragma once

#include <tablio/core/atomics.hpp>
#include <tablio/core/error.hpp>
#include <tablio/core/mutex.hpp>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <vector>

TABLIO_BEGIN_NAMESPACE

namespace detail {

template <class Job>
class ordered_pipeline {
 public:
  using run_function = void (*)(void* context, Job& job);

  // Runs jobs in `threads` threads (at least 2): the owner's and threads - 1 it starts, for at
  // most `depth` jobs in flight (at least threads).
  ordered_pipeline(unsigned threads, std::size_t depth, run_function run, void* context)
      : slots_(depth < threads ? threads : depth),
        jobs_(slots_.size()),
        threads_count_(threads < 2 ? 2 : threads),
        run_(run),
        context_(context) {
    free_.reserve(jobs_.size());
    for (std::size_t i = jobs_.size(); i-- > 0;) free_.push_back(i);
    threads_.reserve(threads_count_ - 1);
    for (unsigned i = 1; i < threads_count_; ++i) {
      pthread_t t;
      if (int err = pthread_create(&t, nullptr, &thread_main, this)) {
        stop();
        throw_io_error({}, err, {"could not start thread ", decimal(i), " of ", decimal(threads_count_ - 1)});
      }
      threads_.push_back(t);
    }
  }
  ordered_pipeline(const ordered_pipeline&) = delete;
  ordered_pipeline& operator=(const ordered_pipeline&) = delete;
  // Jobs not started are dropped, started ones end, and the threads are joined.
  ~ordered_pipeline() { stop(); }

  std::size_t depth() const noexcept { return slots_.size(); }
  // Times take() waited for a thread, having no job of its own to run.
  std::uint64_t waits() const noexcept { return waits_; }
  // Times a thread the pipeline started waited for a job, having run those handed in.
  std::uint64_t starved() const noexcept { return detail::atomic_load<detail::order::relaxed>(starved_); }
  std::size_t in_flight() const noexcept { return tail_ - head_; }
  bool full() const noexcept { return in_flight() == depth(); }
  bool empty() const noexcept { return tail_ == head_; }

  // Job i of depth(), to prepare before any job is handed in.
  Job& job_at(std::size_t i) noexcept { return jobs_[i]; }
  // The job to fill next; only when not full().
  Job& next_slot() noexcept { return jobs_[free_.back()]; }
  // Hands the job filled in next_slot() to the threads; `wake`: wakes those that wait for work
  // (busy ones find the job when they are done). Jobs handed in without waking wait for a later
  // hand_in, wake() or take(): waking a thread per small job costs more than the job.
  void hand_in(bool wake = true) {
    slots_[tail_ % depth()].job = free_.back();
    free_.pop_back();
    detail::atomic_store<detail::order::release>(tail_, tail_ + 1);
    if (wake) this->wake();
  }
  // Wakes the threads that wait for work, for the jobs handed in.
  void wake() {
    lock l(mutex_);
    if (idle_ > 0 && next_run_ != tail_) work_.broadcast();
  }

  // The oldest job in flight, once run; rethrows what its run threw. It stays in flight,
  // its slot untouched, until release(). A job no thread has taken up yet the owner runs
  // itself, rather than wait for a thread to wake to it.
  Job& take() {
    slot& s = slots_[head_ % depth()];
    // While it is not done, the owner runs the jobs no thread has taken up yet, oldest first
    // (this one, if none has), rather than wait: a consumer faster than the threads would
    // otherwise sleep and be woken for every job.
    while (!detail::atomic_load<detail::order::acquire>(s.done)) {
      std::size_t unclaimed = no_job;
      {
        lock l(mutex_);
        if (next_run_ != detail::atomic_load<detail::order::relaxed>(tail_)) unclaimed = next_run_++;
      }
      if (unclaimed == no_job) break;
      run_one(unclaimed);
    }
    if (!detail::atomic_load<detail::order::acquire>(s.done)) {
      lock l(mutex_);
      if (idle_ > 0 && next_run_ != tail_) work_.broadcast();
      // A thread that ends the job sees this, or this sees the job done (both sequentially
      // consistent), so that no wake-up is lost.
      detail::atomic_store<detail::order::seq_cst>(awaited_, head_);
      if (!detail::atomic_load<detail::order::seq_cst>(s.done)) ++waits_;
      while (!detail::atomic_load<detail::order::seq_cst>(s.done)) done_.wait(mutex_);
      detail::atomic_store<detail::order::relaxed>(awaited_, no_job);
    }
    if (s.error) std::rethrow_exception(s.error);
    return jobs_[s.job];
  }
  // The oldest job in flight, as it was handed in or as its run left it: for after take() threw.
  Job& oldest() noexcept { return jobs_[slots_[head_ % depth()].job]; }
  // Ends the oldest job (taken): it is the next filled.
  void release() noexcept {
    slot& s = slots_[head_ % depth()];
    detail::atomic_store<detail::order::relaxed>(s.done, false);  // no thread reads it until handed in again
    s.error = nullptr;
    free_.push_back(s.job);
    ++head_;
  }

 private:
  // A place in the sequence: the job there, and how its run ended.
  struct slot {
    std::size_t job = 0;
    std::exception_ptr error;
    bool done = false;  // run: set by its thread, read and cleared by the owner (atomically)
  };

  static void* thread_main(void* self) {
    static_cast<ordered_pipeline*>(self)->work();
    return nullptr;
  }

  void work() {
    lock l(mutex_);
    for (;;) {
      std::size_t tail = 0;
      while (!stopping_ && next_run_ == (tail = detail::atomic_load<detail::order::acquire>(tail_))) {
        ++idle_;
        detail::atomic_store<detail::order::relaxed>(starved_, starved_ + 1);
        work_.wait(mutex_);
        --idle_;
      }
      if (stopping_) return;
      // A share of the jobs waiting, taken at once: one lock for many small jobs.
      std::size_t first = next_run_, count = (tail - first + threads_count_ - 1) / threads_count_;
      next_run_ += count;
      mutex_.unlock();
      for (std::size_t i = first; i < first + count; ++i) run_one(i);
      mutex_.lock();
    }
  }

  void run_one(std::size_t i) {
    slot& s = slots_[i % depth()];
    try {
      run_(context_, jobs_[s.job]);
    } catch (...) {
      s.error = std::current_exception();
    }
    detail::atomic_store<detail::order::seq_cst>(s.done, true);
    if (detail::atomic_load<detail::order::seq_cst>(awaited_) == i) {
      lock l(mutex_);  // the owner waits, or is about to: it holds the mutex until it does
      done_.signal();
    }
  }

  void stop() noexcept {
    {
      lock l(mutex_);
      stopping_ = true;
      work_.broadcast();
    }
    for (pthread_t t : threads_) pthread_join(t, nullptr);
    threads_.clear();
  }

  std::vector<slot> slots_;
  std::vector<Job> jobs_;
  std::vector<std::size_t> free_;  // the owner's: jobs not in flight, the last released last
  std::vector<pthread_t> threads_;
  std::size_t threads_count_;
  run_function run_;
  void* context_;
  mutex mutex_;
  condition work_, done_;  // jobs handed in or stopping; the awaited job done
  // The owner's: the oldest job in flight, and the next to hand in (read by threads atomically).
  std::size_t head_ = 0, tail_ = 0;
  static constexpr std::size_t no_job = ~std::size_t{0};
  std::size_t awaited_ = no_job;  // the job the owner waits for (atomically)
  std::uint64_t waits_ = 0;       // the owner's
  std::uint64_t starved_ = 0;     // written under mutex_, read by the owner atomically
  // Under mutex_: the next job a thread takes up, threads waiting for work, the end.
  std::size_t next_run_ = 0;
  unsigned idle_ = 0;
  bool stopping_ = false;
};

}  // namespace detail

TABLIO_END_NAMESPACE
