// The tables of TensorFlow's Examples, Caffe's Datums and WebDataset's samples, opened from
// specifiers: in the compiled mode (TABLIO_SEPARATE_COMPILATION), src/tablio.cpp compiles them
// once, and a translation unit that includes this header uses those instead of compiling its
// own. <tablio/tablio.hpp> includes it; header-only, it declares nothing.
#pragma once

#include <tablio/holder/datum.hpp>
#include <tablio/holder/example.hpp>
#include <tablio/holder/sample.hpp>
#include <tablio/table/table.hpp>

#if defined(TABLIO_SEPARATE_COMPILATION)
TABLIO_BEGIN_NAMESPACE
TABLIO_COMPILED_TABLES(example_holder)
TABLIO_COMPILED_TABLES(datum_holder)
TABLIO_COMPILED_TABLES(webdataset_sample_holder)
TABLIO_END_NAMESPACE
#endif
