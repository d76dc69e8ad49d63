// A mutex, its lock and a condition over POSIX threads: what tablio's few shared registries and
// its tables' threads need, without <mutex> and <condition_variable>, which cost every includer
// more to compile than everything they are used for here.
#pragma once

#include <tablio/core/version.hpp>

#include <pthread.h>

TABLIO_BEGIN_NAMESPACE

namespace detail {

class mutex {
 public:
  mutex() = default;
  mutex(const mutex&) = delete;
  mutex& operator=(const mutex&) = delete;
  ~mutex() { pthread_mutex_destroy(&m_); }
  void lock() noexcept { pthread_mutex_lock(&m_); }
  void unlock() noexcept { pthread_mutex_unlock(&m_); }
  pthread_mutex_t* native() noexcept { return &m_; }

 private:
  pthread_mutex_t m_ = PTHREAD_MUTEX_INITIALIZER;
};

class lock {
 public:
  explicit lock(mutex& m) noexcept : m_(m) { m_.lock(); }
  lock(const lock&) = delete;
  lock& operator=(const lock&) = delete;
  ~lock() { m_.unlock(); }

 private:
  mutex& m_;
};

// Waits until signalled, with a mutex of the above locked (pthread_cond_wait's terms).
class condition {
 public:
  condition() = default;
  condition(const condition&) = delete;
  condition& operator=(const condition&) = delete;
  ~condition() { pthread_cond_destroy(&c_); }
  void wait(mutex& m) noexcept { pthread_cond_wait(&c_, m.native()); }
  void signal() noexcept { pthread_cond_signal(&c_); }
  void broadcast() noexcept { pthread_cond_broadcast(&c_); }

 private:
  pthread_cond_t c_ = PTHREAD_COND_INITIALIZER;
};

}  // namespace detail

TABLIO_END_NAMESPACE
