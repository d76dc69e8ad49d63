// keeper: a counted handle that keeps storage alive while views into it are in use (a
// reader's buffer, for a sample's members). The last keeper to let go deletes the storage.
// Counts are atomic, so keepers may be let go of on any thread. Written on core/atomics.hpp
// instead of std::shared_ptr because <memory> is among the costliest standard headers to
// compile, and every reader's includer would pay for it.
#pragma once

#include <tablio/core/atomics.hpp>
#include <tablio/core/version.hpp>

#include <utility>

TABLIO_BEGIN_NAMESPACE

// What a keeper keeps: derive from it; it starts with one keeper, made by keeper::adopt().
class kept_storage {
 public:
  kept_storage() = default;
  kept_storage(const kept_storage&) = delete;
  kept_storage& operator=(const kept_storage&) = delete;
  virtual ~kept_storage() = default;

 private:
  friend class keeper;
  long keepers_ = 0;
};

class keeper {
 public:
  keeper() noexcept = default;
  // The first keeper of storage no keeper has yet, which it deletes in turn.
  static keeper adopt(kept_storage* fresh) noexcept {
    keeper k;
    k.s_ = fresh;
    detail::atomic_store<detail::order::relaxed>(fresh->keepers_, 1);
    return k;
  }
  keeper(const keeper& o) noexcept : s_(o.s_) {
    if (s_) detail::atomic_add<detail::order::relaxed>(s_->keepers_, 1);
  }
  keeper(keeper&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  keeper& operator=(keeper o) noexcept {
    std::swap(s_, o.s_);
    return *this;
  }
  ~keeper() { reset(); }

  // Lets go of the storage, deleting it when this was its last keeper; the keeper is then empty.
  void reset() noexcept {
    // Acquire-release: what other keepers did with the storage happens before its deletion.
    if (kept_storage* s = std::exchange(s_, nullptr);
        s && detail::atomic_subtract<detail::order::acq_rel>(s->keepers_, 1) == 0)
      delete s;
  }
  // Whether it keeps any storage (a default-made or reset keeper keeps none).
  explicit operator bool() const noexcept { return s_ != nullptr; }
  // The storage kept, or nullptr; it lives as long as this keeper does.
  kept_storage* get() const noexcept { return s_; }
  // Whether this is the storage's only keeper (so that its owner may reuse it): once true, it
  // stays true, and what the others did with the storage happened before.
  bool alone() const noexcept { return s_ && detail::atomic_load<detail::order::acquire>(s_->keepers_) == 1; }
  friend bool operator==(const keeper& a, const keeper& b) noexcept { return a.s_ == b.s_; }

 private:
  kept_storage* s_ = nullptr;
};

TABLIO_END_NAMESPACE
