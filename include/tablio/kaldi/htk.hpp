// HTK and Sphinx feature files, as Kaldi reads and writes them (feat/feature-functions.h,
// util/kaldi-holder.h): ReadHtk, WriteHtk, WriteSphinx, and the holders copy-feats --htk-in
// and --sphinx-in read tables of.
//
// An HTK file is a 12-byte big-endian header (samples, sample period in 100 ns units, bytes
// per sample, parameter kind) and then each sample's floats, big-endian. A Sphinx file is a
// big-endian int32 count of floats and then the floats, big-endian, kFeatDim to a frame.
#pragma once

#include <tablio/core/endian.hpp>
#include <tablio/core/error.hpp>
#include <tablio/holder/concepts.hpp>
#include <tablio/kaldi/logging.hpp>
#include <tablio/kaldi/matrix.hpp>

#include <bit>
#include <istream>
#include <ostream>
#include <string>
#include <utility>

TABLIO_BEGIN_NAMESPACE

namespace kaldi {

// The header of an HTK feature file, with HTK's field names.
struct HtkHeader {
  int32 mNSamples = 0;      // number of samples (frames)
  int32 mSamplePeriod = 0;  // sample period in 100 ns units
  int16 mSampleSize = 0;    // bytes per sample: 4 times the number of columns
  uint16 mSampleKind = 0;   // parameter kind and qualifiers (HTK's parmKind)
};

namespace detail {

// HTK's qualifier bits and the base kinds Kaldi refuses (HTK's HParm.h).
inline constexpr uint16 htk_compressed = 02000, htk_checksum = 010000, htk_vq = 040000;
inline constexpr uint16 htk_waveform = 0, htk_irefc = 5, htk_discrete = 10;

// Reads `rows` x `cols` big-endian floats into m, checking the input holds them before
// allocating (a lying header cannot force a large allocation).
template <class Real>
void read_big_endian_rows(reader& r, Matrix<Real>& m, int32 rows, int32 cols, const char* what) {
  std::string scratch;
  std::string_view bytes =
      r.read_view(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * 4, scratch, what);
  m.Resize(rows, cols);
  const char* p = bytes.data();
  for (int32 i = 0; i < rows; ++i)
    for (int32 j = 0; j < cols; ++j, p += 4)
      m.RowData(i)[j] = static_cast<Real>(load<std::endian::big, float>(p));
}

template <class Real>
void write_big_endian_rows(writer& w, const MatrixBase<Real>& m) {
  for (int32 i = 0; i < m.NumRows(); ++i)
    for (int32 j = 0; j < m.NumCols(); ++j) {
      char b[4];
      store<std::endian::big>(b, static_cast<float>(m(i, j)));
      w.write(b, 4);
    }
}

// Reads an HTK file into m and h, as Kaldi: the checksum qualifier is dropped from the kind
// (and no checksum read), compressed, VQ, waveform, IREFC and discrete files are refused.
template <class Real>
void read_htk(reader& r, Matrix<Real>& m, HtkHeader& h) {
  const std::uint64_t start = r.tell();
  char b[12];
  r.read_exact(b, 12, "bytes of an HTK header");
  h.mNSamples = load<std::endian::big, int32>(b);
  h.mSamplePeriod = load<std::endian::big, int32>(b + 4);
  h.mSampleSize = load<std::endian::big, int16>(b + 8);
  h.mSampleKind = static_cast<uint16>(load<std::endian::big, uint16>(b + 10) & ~htk_checksum);
  const uint16 base = h.mSampleKind & 077;
  if (h.mSampleKind & (htk_compressed | htk_vq))
    r.fail_at(start, {"HTK features that are not compressed or vector-quantised"},
              {"kind ", decimal(h.mSampleKind)});
  if (base == htk_waveform || base == htk_irefc || base == htk_discrete)
    r.fail_at(start, {"HTK features (not a waveform, IREFC or discrete kind)"}, {"kind ", decimal(base)});
  if (h.mNSamples < 0 || h.mSampleSize < 0 || h.mSampleSize % 4 != 0)
    r.fail_at(start, {"an HTK header with a non-negative sample count and float samples"},
              {decimal(h.mNSamples), " samples of ", decimal(h.mSampleSize), " bytes"});
  read_big_endian_rows(r, m, h.mNSamples, h.mSampleSize / 4, "bytes of HTK samples");
}

// Writes m as an HTK file with h's period and kind; h's sample count and size must be m's.
template <class Real>
void write_htk(writer& w, const MatrixBase<Real>& m, const HtkHeader& h) {
  if (h.mNSamples != m.NumRows() || h.mSampleSize != 4 * static_cast<int64>(m.NumCols()))
    throw_usage_error({"an HTK header of ", decimal(h.mNSamples), " samples of ", decimal(h.mSampleSize),
                       " bytes for a matrix of ", decimal(m.NumRows()), " x ", decimal(m.NumCols())});
  char b[12];
  store<std::endian::big>(b, h.mNSamples);
  store<std::endian::big>(b + 4, h.mSamplePeriod);
  store<std::endian::big>(b + 8, h.mSampleSize);
  store<std::endian::big>(b + 10, h.mSampleKind);
  w.write(b, 12);
  write_big_endian_rows(w, m);
}

// Writes m as a Sphinx feature file.
template <class Real>
void write_sphinx(writer& w, const MatrixBase<Real>& m) {
  const int64 count = static_cast<int64>(m.NumRows()) * m.NumCols();
  if (count > INT32_MAX) throw_usage_error({"a Sphinx file of at most 2^31 - 1 values"});
  char b[4];
  store<std::endian::big>(b, static_cast<int32>(count));
  w.write(b, 4);
  write_big_endian_rows(w, m);
}

// Runs f on a reader over `is`; a format_error becomes Kaldi's warning and false.
template <class F>
bool warned_read(std::istream& is, F&& f) {
  try {
    on_reader(is, f);
    return true;
  } catch (const format_error& e) {
    KALDI_WARN << e.what();
    return false;
  }
}

}  // namespace detail

// Reads an HTK feature file from `is` into *m (resized) and, when given, *header; false, with a
// warning, for a file that is not one Kaldi reads (compressed or VQ features, a waveform, a
// truncated file).
template <class Real>
bool ReadHtk(std::istream& is, Matrix<Real>* m, HtkHeader* header) {
  HtkHeader h;
  if (!detail::warned_read(is, [&](reader& r) { detail::read_htk(r, *m, h); })) return false;
  if (header) *header = h;
  return true;
}
// Writes m as an HTK feature file with header's period and kind (its sample count and size
// must be m's); throws usage_error for a header that does not describe m.
template <class Real>
bool WriteHtk(std::ostream& os, const MatrixBase<Real>& m, HtkHeader header) {
  detail::on_writer(os, [&](writer& w) { detail::write_htk(w, m, header); });
  return static_cast<bool>(os);
}
// Writes m as a Sphinx feature file (a big-endian count of values, then the values).
template <class Real>
bool WriteSphinx(std::ostream& os, const MatrixBase<Real>& m) {
  detail::on_writer(os, [&](writer& w) { detail::write_sphinx(w, m); });
  return static_cast<bool>(os);
}

// Kaldi's HtkMatrixHolder: an HTK feature file per entry, read as the features and their
// header. Binary only: text mode throws usage_error, as Kaldi errors.
class HtkMatrixHolder : public holder_storage<std::pair<Matrix<BaseFloat>, HtkHeader>> {
 public:
  // The Holder concept: writes the features as an HTK file with their header.
  static void write(writer& w, bool binary, const value_type& v) {
    if (!binary) throw_usage_error({"HTK features are written in binary mode only"});
    detail::write_htk(w, v.first, v.second);
  }
  // The Holder concept: reads one HTK file; throws format_error for one Kaldi refuses.
  void read(reader& r) { detail::read_htk(r, value_.first, value_.second); }
};

// Kaldi's SphinxMatrixHolder: a Sphinx feature file per entry, kFeatDim values to a frame.
// Binary only, as HtkMatrixHolder.
template <int kFeatDim = 13>
class SphinxMatrixHolder : public holder_storage<Matrix<BaseFloat>> {
  static_assert(kFeatDim > 0, "a Sphinx frame has at least one value");

 public:
  // The Holder concept: writes the features as a Sphinx file; throws usage_error in text mode
  // or for features that are not kFeatDim wide.
  static void write(writer& w, bool binary, const Matrix<BaseFloat>& m) {
    if (!binary) throw_usage_error({"Sphinx features are written in binary mode only"});
    if (m.NumCols() != kFeatDim)
      throw_usage_error({"Sphinx features of ", decimal(kFeatDim), " columns, not ", decimal(m.NumCols())});
    detail::write_sphinx(w, m);
  }
  // The Holder concept: reads one Sphinx file; throws format_error when its count is negative
  // or not a whole number of frames, or the file is shorter than its count says.
  void read(reader& r) {
    const std::uint64_t start = r.tell();
    char b[4];
    r.read_exact(b, 4, "bytes of a Sphinx value count");
    const int32 count = load<std::endian::big, int32>(b);
    if (count < 0 || count % kFeatDim != 0)
      r.fail_at(start,
                {"a Sphinx value count that is a whole number of ", decimal(kFeatDim), "-value frames"},
                {decimal(count)});
    detail::read_big_endian_rows(r, value_, count / kFeatDim, kFeatDim, "bytes of Sphinx features");
  }
};

}  // namespace kaldi

TABLIO_END_NAMESPACE
