// min and max of two values. tablio's headers use these instead of <algorithm>, which in
// C++20 adds some 11,000 lines (the ranges algorithms) to every translation unit.
#pragma once

#include <tablio/core/version.hpp>

TABLIO_BEGIN_NAMESPACE

namespace detail {

template <class T>
constexpr T min_of(const T& a, const T& b) noexcept {
  return b < a ? b : a;
}
template <class T>
constexpr T max_of(const T& a, const T& b) noexcept {
  return a < b ? b : a;
}

}  // namespace detail

TABLIO_END_NAMESPACE
