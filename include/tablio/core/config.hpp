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
