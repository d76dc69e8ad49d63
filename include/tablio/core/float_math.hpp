// The few <cmath> functions tablio's headers use, as compiler builtins where there are some:
// <cmath> in C++20 (special functions included) costs every includer some 0.05 s.
#pragma once

#include <tablio/core/config.hpp>

#if !TABLIO_GNU_EXTENSIONS
#include <cmath>
#endif

TABLIO_BEGIN_NAMESPACE

namespace detail {

#if TABLIO_GNU_EXTENSIONS
inline bool is_finite(double x) noexcept { return __builtin_isfinite(x); }
inline double magnitude(double x) noexcept { return __builtin_fabs(x); }
inline double truncated(double x) noexcept { return __builtin_trunc(x); }
#else
inline bool is_finite(double x) noexcept { return std::isfinite(x); }
inline double magnitude(double x) noexcept { return std::fabs(x); }
inline double truncated(double x) noexcept { return std::trunc(x); }
#endif

}  // namespace detail

TABLIO_END_NAMESPACE
