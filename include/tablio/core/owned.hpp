// owned<T>: a minimal move-only owning pointer. The stream layer uses it instead of
// std::unique_ptr because <memory> is among the costliest standard headers to compile.
#pragma once

#include <tablio/core/version.hpp>

#include <type_traits>
#include <utility>

TABLIO_BEGIN_NAMESPACE

// A move-only owner of a T made with new (or nothing): deletes it when destroyed or reset.
template <class T>
class owned {
 public:
  owned() noexcept = default;
  // Takes ownership of p (which may be nullptr), to delete it in turn.
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

  // The object owned, or nullptr; still owned.
  T* get() const noexcept { return p_; }
  // The object owned, which must not be nullptr.
  T* operator->() const noexcept { return p_; }
  // The object owned, which must not be nullptr.
  T& operator*() const noexcept { return *p_; }
  // Whether an object is owned.
  explicit operator bool() const noexcept { return p_ != nullptr; }
  // Gives up the object without deleting it: the caller owns what is returned.
  T* release() noexcept { return std::exchange(p_, nullptr); }
  // Deletes the object owned, if any, and owns p instead.
  void reset(T* p = nullptr) noexcept { delete std::exchange(p_, p); }

 private:
  T* p_ = nullptr;
};

// A new T made from args, owned: make_owned<T>(...) as std::make_unique<T>(...).
template <class T, class... Args>
owned<T> make_owned(Args&&... args) {
  return owned<T>(new T(std::forward<Args>(args)...));
}

TABLIO_END_NAMESPACE
