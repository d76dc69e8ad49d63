// A mutex and its lock over POSIX threads: what tablio's few shared registries need, without
// <mutex>, which costs every includer more to compile than everything it is used for here.
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

}  // namespace detail

TABLIO_END_NAMESPACE
