// owned<T>: a minimal move-only owning pointer. The stream layer uses it instead of
// std::unique_ptr because <memory> is among the costliest standard headers to compile.
#pragma once

#include <tablio/core/version.hpp>

#include <type_traits>
#include <utility>

TABLIO_BEGIN_NAMESPACE

template <class T>
class owned {
 public:
  owned() noexcept = default;
  explicit owned(T* p) noexcept : p_(p) {}
  template <class U>
  requires std::is_convertible_v<U*, T*> owned(owned<U>&& o)
  noexcept : p_(o.release()) {}
  owned(owned&& o) noexcept : p_(o.release()) {}
  owned& operator=(owned&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
  }
  owned(const owned&) = delete;
  owned& operator=(const owned&) = delete;
  ~owned() { delete p_; }

  T* get() const noexcept { return p_; }
  T* operator->() const noexcept { return p_; }
  T& operator*() const noexcept { return *p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  T* release() noexcept { return std::exchange(p_, nullptr); }
  void reset(T* p = nullptr) noexcept { delete std::exchange(p_, p); }

 private:
  T* p_ = nullptr;
};

template <class T, class... Args>
owned<T> make_owned(Args&&... args) {
  return owned<T>(new T(std::forward<Args>(args)...));
}

TABLIO_END_NAMESPACE
