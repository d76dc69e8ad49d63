// tablio's separately compiled code: with TABLIO_SEPARATE_COMPILATION defined in every
// translation unit of a program, what opens files, pipes and tables from specifiers (every
// format behind them), and the tables of the common holders (Kaldi's, Example, Datum, bytes,
// WebDataset samples: table/compiled_kaldi_tables.hpp and table/compiled_record_tables.hpp),
// are compiled here, once, instead of in each translation unit that opens a table. Compile it
// with the same definitions as the rest of the program (TABLIO_WITH_ZLIB and TABLIO_WITH_LMDB
// for the formats that need them); the tablio::compiled CMake target does all of it.
#if !defined(TABLIO_SEPARATE_COMPILATION)
#error "src/tablio.cpp is for TABLIO_SEPARATE_COMPILATION builds; header-only builds need no source file"
#endif
#define TABLIO_SOURCE
#include <tablio/kaldi.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/table/any_framing.hpp>
#include <tablio/table/compiled_kaldi_tables.hpp>
#include <tablio/table/compiled_record_tables.hpp>
#include <tablio/table/segments.hpp>
