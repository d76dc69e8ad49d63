// The tables of the holders nearly every Kaldi recipe reads (int32 tables, alignments and
// other int32 vectors, tokens), opened from specifiers: in the compiled mode
// (TABLIO_SEPARATE_COMPILATION), src/tablio.cpp compiles them once, as kaldi-table.cc does for
// Kaldi, and a translation unit that includes this header uses those instead of compiling its
// own. <tablio/kaldi.hpp> and table/compiled_kaldi_tables.hpp include it; header-only, it
// declares nothing. Each such list makes every includer instantiate the classes it names, so
// they stay short.
#pragma once

#include <tablio/holder/basic.hpp>
#include <tablio/holder/token.hpp>
#include <tablio/table/table.hpp>

#include <cstdint>

#if defined(TABLIO_SEPARATE_COMPILATION)
TABLIO_BEGIN_NAMESPACE
TABLIO_COMPILED_TABLES(basic_holder<std::int32_t>)
TABLIO_COMPILED_TABLES(basic_vector_holder<std::int32_t>)
TABLIO_COMPILED_TABLES(token_holder)
TABLIO_END_NAMESPACE
#endif
