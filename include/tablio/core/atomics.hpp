// Atomic operations on plain variables: the compilers' builtins where there are some (<atomic>
// is among the costlier standard headers, and these variables are touched atomically in a few
// places only), std::atomic_ref elsewhere. The order is a template argument, so that it is a
// constant wherever the operation is compiled.
#pragma once

#include <tablio/core/config.hpp>

#include <type_traits>

#if !TABLIO_GNU_EXTENSIONS
#include <atomic>
#endif

TABLIO_BEGIN_NAMESPACE

namespace detail {

#if TABLIO_GNU_EXTENSIONS
enum class order : int {
  relaxed = __ATOMIC_RELAXED,
  acquire = __ATOMIC_ACQUIRE,
  release = __ATOMIC_RELEASE,
  acq_rel = __ATOMIC_ACQ_REL,
  seq_cst = __ATOMIC_SEQ_CST
};

template <order O, class T>
T atomic_load(const T& v) noexcept {
  return __atomic_load_n(&v, static_cast<int>(O));
}
template <order O, class T>
void atomic_store(T& v, std::type_identity_t<T> x) noexcept {
  __atomic_store_n(&v, x, static_cast<int>(O));
}
template <order O, class T>
T atomic_exchange(T& v, std::type_identity_t<T> x) noexcept {
  return __atomic_exchange_n(&v, x, static_cast<int>(O));
}
// Both return the new value.
template <order O, class T>
T atomic_add(T& v, std::type_identity_t<T> x) noexcept {
  return __atomic_add_fetch(&v, x, static_cast<int>(O));
}
template <order O, class T>
T atomic_subtract(T& v, std::type_identity_t<T> x) noexcept {
  return __atomic_sub_fetch(&v, x, static_cast<int>(O));
}
#else
enum class order : int { relaxed, acquire, release, acq_rel, seq_cst };

template <order O>
constexpr std::memory_order standard_order() noexcept {
  constexpr std::memory_order orders[] = {std::memory_order_relaxed, std::memory_order_acquire,
                                          std::memory_order_release, std::memory_order_acq_rel,
                                          std::memory_order_seq_cst};
  return orders[static_cast<int>(O)];
}

template <order O, class T>
T atomic_load(const T& v) noexcept {
  return std::atomic_ref<T>(const_cast<T&>(v)).load(standard_order<O>());
}
template <order O, class T>
void atomic_store(T& v, std::type_identity_t<T> x) noexcept {
  std::atomic_ref<T>(v).store(x, standard_order<O>());
}
template <order O, class T>
T atomic_exchange(T& v, std::type_identity_t<T> x) noexcept {
  return std::atomic_ref<T>(v).exchange(x, standard_order<O>());
}
template <order O, class T>
T atomic_add(T& v, std::type_identity_t<T> x) noexcept {
  return static_cast<T>(std::atomic_ref<T>(v).fetch_add(x, standard_order<O>()) + x);
}
template <order O, class T>
T atomic_subtract(T& v, std::type_identity_t<T> x) noexcept {
  return static_cast<T>(std::atomic_ref<T>(v).fetch_sub(x, standard_order<O>()) - x);
}
#endif

}  // namespace detail

TABLIO_END_NAMESPACE
