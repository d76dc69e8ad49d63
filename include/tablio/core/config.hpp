// Compiler-specific switches.
#pragma once

#include <tablio/core/version.hpp>

// For the few hot-path functions (a window check and a copy) that compilers otherwise leave
// out of line when the slow path they guard is large.
#if defined(__GNUC__) || defined(__clang__)
#define TABLIO_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define TABLIO_ALWAYS_INLINE inline
#endif
