// Floating-point numbers from text, as std::from_chars (general format) reads them: the
// nearest value, "inf" and "nan" taken, no leading '+', out of range reported. Standard
// libraries without it for floating point (libc++ before 20, as on macOS) use fast_float
// (libfast-float-dev, vcpkg and Conan's fast-float), which rounds exactly as they do.
#pragma once

#include <tablio/core/version.hpp>

#include <charconv>
#include <system_error>
#include <type_traits>

#if !defined(__cpp_lib_to_chars) || defined(TABLIO_TEST_FAST_FLOAT)
#if __has_include(<fast_float/fast_float.h>)
#include <fast_float/fast_float.h>
#define TABLIO_HAS_FAST_FLOAT 1
#elif !defined(__cpp_lib_to_chars)
#error \
    "tablio: this standard library cannot read floating-point text; install fast_float (libfast-float-dev, or vcpkg/Conan fast-float)"
#endif
#endif

TABLIO_BEGIN_NAMESPACE

namespace detail {

#if defined(TABLIO_HAS_FAST_FLOAT)
// fast_float 3 gives ±inf for an overflow and 0 for an underflow without saying so: both are
// reported here as std::from_chars reports them (result_out_of_range, the value untouched).
template <class T>
std::from_chars_result from_chars_fast_float(const char* first, const char* last, T& value) noexcept {
  T parsed{};
  auto r = fast_float::from_chars(first, last, parsed);
  if (r.ec != std::errc{}) return {r.ptr, r.ec};
  const char* p = first + (first != r.ptr && *first == '-');
  const bool literal = p != r.ptr && (*p == 'i' || *p == 'I' || *p == 'n' || *p == 'N');
  if (!literal) {
    bool nonzero_digit = false;
    for (const char* q = p; q != r.ptr && *q != 'e' && *q != 'E'; ++q)
      nonzero_digit |= *q >= '1' && *q <= '9';
    const bool overflow = parsed - parsed != parsed - parsed;  // infinite
    if (overflow || (parsed == 0 && nonzero_digit)) return {r.ptr, std::errc::result_out_of_range};
  }
  value = parsed;
  return {r.ptr, std::errc{}};
}
#endif

// std::from_chars for float and double, wherever the standard library lacks it.
template <class T>
requires std::is_floating_point_v<T> std::from_chars_result parse_float(const char* first, const char* last,
                                                                        T& value)
noexcept {
#if defined(__cpp_lib_to_chars)
  return std::from_chars(first, last, value, std::chars_format::general);
#else
  return from_chars_fast_float(first, last, value);
#endif
}

}  // namespace detail

TABLIO_END_NAMESPACE
