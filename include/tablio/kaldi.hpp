// Kaldi's names over tablio, so that a Kaldi program whose Kaldi include lines ("base/...",
// "util/...", "matrix/...", "feat/wave-reader.h") are replaced by this one header compiles
// unchanged when TABLIO_KALDI_NAMESPACE is defined (on the command line, or before this
// header is included):
//
//   #define TABLIO_KALDI_NAMESPACE
//   #include <tablio/kaldi.hpp>
//   namespace kaldi { void MyHelper(const Matrix<BaseFloat>& m); }   // reopened, as in Kaldi
//   int main(int argc, char* argv[]) { using namespace kaldi; ParseOptions po(usage); ... }
//
// The facade lives in namespace tablio::kaldi; TABLIO_KALDI_NAMESPACE adds a global namespace kaldi,
// which takes it in whole. Without it, `namespace kaldi = tablio::kaldi;` gives the same names
// to code that does not reopen namespace kaldi.
//
// What it has: the tables (TableWriter, SequentialTableReader, RandomAccessTableReader(Mapped))
// and their typedefs; Kaldi's holders and holders written Kaldi's way; ParseOptions; the
// KALDI_* logging macros; ClassifyRspecifier and the other specifier and filename functions;
// Input/Output and the basic I/O functions; Matrix, Vector and their views, CompressedMatrix,
// SparseMatrix, GeneralMatrix; WaveData and WaveInfo; HTK and Sphinx features; the string
// utilities. What stays outside: linear algebra beyond elementwise operations, OpenFst, CUDA
// (docs/kaldi-facade.md).
#pragma once

#include <tablio/kaldi/base.hpp>
#include <tablio/kaldi/holders.hpp>
#include <tablio/kaldi/htk.hpp>
#include <tablio/kaldi/io.hpp>
#include <tablio/kaldi/logging.hpp>
#include <tablio/kaldi/matrix.hpp>
#include <tablio/kaldi/object_io.hpp>
#include <tablio/kaldi/options.hpp>
#include <tablio/kaldi/sparse.hpp>
#include <tablio/kaldi/specifiers.hpp>
#include <tablio/kaldi/stl_utils.hpp>
#include <tablio/kaldi/tables.hpp>
#include <tablio/kaldi/text.hpp>
#include <tablio/kaldi/wave.hpp>

// What Kaldi's base/kaldi-common.h brings its programs, which use it without including it.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#if defined(TABLIO_KALDI_NAMESPACE)
// Kaldi's own namespace, reopenable by the program, with every name of the facade in it.
namespace kaldi {
using namespace ::tablio::kaldi;  // NOLINT(google-build-using-namespace): the facade is kaldi's
}  // namespace kaldi
#endif
