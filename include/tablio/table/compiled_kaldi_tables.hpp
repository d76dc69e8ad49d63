// The tables of Kaldi's common holders over tablio's types, opened from specifiers: in the
// compiled mode (TABLIO_SEPARATE_COMPILATION), src/tablio.cpp compiles them once, as
// kaldi-table.cc does for Kaldi, and a translation unit that includes this header uses those
// instead of compiling its own. <tablio/tablio.hpp> includes it (the Kaldi facade's own types
// are listed in <tablio/kaldi.hpp>); header-only, it declares nothing.
#pragma once

#include <tablio/holder/holders.hpp>
#include <tablio/table/compiled_basic_tables.hpp>
#include <tablio/table/table.hpp>
#include <tablio/types/matrix.hpp>

#include <cstdint>

#if defined(TABLIO_SEPARATE_COMPILATION)
TABLIO_BEGIN_NAMESPACE
TABLIO_COMPILED_TABLES(holder<matrix<float>>)
TABLIO_COMPILED_TABLES(holder<matrix<double>>)
TABLIO_COMPILED_TABLES(holder<vector<float>>)
TABLIO_COMPILED_TABLES(holder<vector<double>>)
TABLIO_COMPILED_TABLES(holder<compressed_matrix>)
TABLIO_COMPILED_TABLES(basic_holder<float>)
TABLIO_COMPILED_TABLES(basic_vector_vector_holder<std::int32_t>)
TABLIO_COMPILED_TABLES(basic_pair_vector_holder<std::int32_t>)
TABLIO_COMPILED_TABLES(token_vector_holder)
TABLIO_COMPILED_TABLES(wave_holder)
TABLIO_COMPILED_TABLES(bytes_holder)
TABLIO_END_NAMESPACE
#endif
