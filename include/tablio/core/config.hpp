// Compiler-specific switches.
#pragma once

#include <tablio/core/version.hpp>

// GNU C++'s extensions (GCC's and Clang's attributes, builtins, vector types, __int128): used
// where they are faster or cheaper to compile, each with a standard C++ spelling beside it that
// other compilers (MSVC) take. Every use sits inside `#if TABLIO_GNU_EXTENSIONS` or behind the
// macros below (tests/gnu_extensions.py checks it); -DTABLIO_GNU_EXTENSIONS=0 builds the standard
// spellings with GCC or Clang too, so that they are tested.
#if !defined(TABLIO_GNU_EXTENSIONS)
#if defined(__GNUC__) || defined(__clang__)
#define TABLIO_GNU_EXTENSIONS 1
#else
#define TABLIO_GNU_EXTENSIONS 0
#endif
#endif

// For the few hot-path functions (a window check and a copy) that compilers otherwise leave
// out of line when the slow path they guard is large.
#if TABLIO_GNU_EXTENSIONS
#define TABLIO_ALWAYS_INLINE inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define TABLIO_ALWAYS_INLINE __forceinline
#else
#define TABLIO_ALWAYS_INLINE inline
#endif

// Out of line and cold: what throw sites call, so that building a message costs each site a
// call rather than inlined string code (which every includer would compile again).
// Cold only: for functions declared apart from their definitions (noinline may not follow an
// inline declaration), which paths that are rarely taken call.
#if TABLIO_GNU_EXTENSIONS
#define TABLIO_COLD __attribute__((cold, noinline))
#define TABLIO_RARELY_USED __attribute__((cold))
#elif defined(_MSC_VER)
#define TABLIO_COLD __declspec(noinline)
#define TABLIO_RARELY_USED
#else
#define TABLIO_COLD
#define TABLIO_RARELY_USED
#endif

// A function compiled for more than the baseline the program was built for (the caller checks
// the processor first): GNU compilers need to be told; MSVC takes the intrinsics anywhere.
#if TABLIO_GNU_EXTENSIONS
#define TABLIO_TARGET(features) __attribute__((target(features)))
#else
#define TABLIO_TARGET(features)
#endif

// A hint that memory at an address will be read soon.
#if TABLIO_GNU_EXTENSIONS
#define TABLIO_PREFETCH(address) __builtin_prefetch(reinterpret_cast<const void*>(address))
#else
#define TABLIO_PREFETCH(address) static_cast<void>(address)
#endif

// The enclosing function's signature, template arguments included (detail::type_name reads it):
// every compiler spells it, each its own way.
#if defined(_MSC_VER) && !defined(__clang__)
#define TABLIO_FUNCTION_SIGNATURE __FUNCSIG__
#else
#define TABLIO_FUNCTION_SIGNATURE __PRETTY_FUNCTION__
#endif

// Separate compilation, optional: with TABLIO_SEPARATE_COMPILATION defined in every
// translation unit of a program (the tablio::compiled CMake target does it), the code that
// opens files, pipes and tables from specifiers, with every format behind them, and the tables
// of the common holders are compiled once in src/tablio.cpp (which defines TABLIO_SOURCE)
// instead of in each translation unit that opens a table. Header-only is the default.
#if defined(TABLIO_SEPARATE_COMPILATION)
#define TABLIO_IMPL
#if defined(TABLIO_SOURCE)
#define TABLIO_HEADER_IMPLEMENTATION 1
#else
#define TABLIO_HEADER_IMPLEMENTATION 0
#endif
#else
#define TABLIO_IMPL inline
#define TABLIO_HEADER_IMPLEMENTATION 1
#endif

// The three tables over specifiers for a holder that src/tablio.cpp compiles once: declared
// extern in users' translation units, defined there (table/compiled_*_tables.hpp list them).
#if defined(TABLIO_SEPARATE_COMPILATION)
#if defined(TABLIO_SOURCE)
#define TABLIO_TABLE_INSTANCE template
#else
#define TABLIO_TABLE_INSTANCE extern template
#endif
#define TABLIO_COMPILED_TABLES(...)                                 \
  TABLIO_TABLE_INSTANCE class table_writer<__VA_ARGS__>;            \
  TABLIO_TABLE_INSTANCE class sequential_table_reader<__VA_ARGS__>; \
  TABLIO_TABLE_INSTANCE class random_access_table_reader<__VA_ARGS__>;
#endif
