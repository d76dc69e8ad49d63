// Kaldi's matrix and vector classes (matrix/kaldi-matrix.h, kaldi-vector.h) as its table
// programs use them, with plain loops where Kaldi calls BLAS. MatrixBase and VectorBase are
// views (a pointer, the sizes, a row stride) on which every operation works; Matrix and Vector
// own their values, kept in a tablio::matrix and a tablio::vector so that tables store them
// byte for byte as those; SubMatrix and SubVector are views of part of another; and
// CompressedMatrix is tablio's compressed_matrix with Kaldi's accessors.
#pragma once

#include <tablio/codec/kaldi_io.hpp>
#include <tablio/codec/kaldi_object.hpp>
#include <tablio/core/config.hpp>
#include <tablio/core/error.hpp>
#include <tablio/kaldi/base.hpp>
#include <tablio/types/compressed_matrix.hpp>
#include <tablio/types/matrix.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <istream>
#include <limits>
#include <ostream>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#if !TABLIO_GNU_EXTENSIONS
#include <cmath>
#endif

TABLIO_BEGIN_NAMESPACE

namespace kaldi {

// How Matrix and Vector resize: kCopyData keeps the values that still fit; the other two zero
// every value (kUndefined too, where Kaldi leaves them unset).
enum MatrixResizeType { kSetZero, kUndefined, kCopyData };
// Whether an operand is used as it is or transposed, with Kaldi's values (CBLAS's).
enum MatrixTransposeType { kTrans = 112, kNoTrans = 111 };
// Kaldi's request for padded rows or not: accepted, and moot, since tablio never pads rows.
enum MatrixStrideType { kDefaultStride, kStrideEqualNumCols };
// Kaldi's compression methods for CompressedMatrix, with Kaldi's values.
enum CompressionMethod {
  kAutomaticMethod = 1,
  kSpeechFeature = 2,
  kTwoByteAuto = 3,
  kTwoByteSignedInteger = 4,
  kOneByteAuto = 5,
  kOneByteUnsignedInteger = 6,
  kOneByteZeroOne = 7
};

template <class Real>
class MatrixBase;
template <class Real>
class Matrix;
template <class Real>
class SubMatrix;
template <class Real>
class VectorBase;
template <class Real>
class Vector;
template <class Real>
class SubVector;
class CompressedMatrix;

namespace detail {

// The <cmath> functions the element-wise operations need, as the compiler's builtins where it
// has them: <cmath> would add thousands of lines to every unit that includes the facade.
#if TABLIO_GNU_EXTENSIONS
inline float real_log(float x) noexcept { return __builtin_logf(x); }
inline double real_log(double x) noexcept { return __builtin_log(x); }
inline float real_exp(float x) noexcept { return __builtin_expf(x); }
inline double real_exp(double x) noexcept { return __builtin_exp(x); }
inline float real_pow(float x, float y) noexcept { return __builtin_powf(x, y); }
inline double real_pow(double x, double y) noexcept { return __builtin_pow(x, y); }
inline float real_sqrt(float x) noexcept { return __builtin_sqrtf(x); }
inline double real_sqrt(double x) noexcept { return __builtin_sqrt(x); }
inline float real_abs(float x) noexcept { return __builtin_fabsf(x); }
inline double real_abs(double x) noexcept { return __builtin_fabs(x); }
#else
inline float real_log(float x) noexcept { return std::log(x); }
inline double real_log(double x) noexcept { return std::log(x); }
inline float real_exp(float x) noexcept { return std::exp(x); }
inline double real_exp(double x) noexcept { return std::exp(x); }
inline float real_pow(float x, float y) noexcept { return std::pow(x, y); }
inline double real_pow(double x, double y) noexcept { return std::pow(x, y); }
inline float real_sqrt(float x) noexcept { return std::sqrt(x); }
inline double real_sqrt(double x) noexcept { return std::sqrt(x); }
inline float real_abs(float x) noexcept { return std::fabs(x); }
inline double real_abs(double x) noexcept { return std::fabs(x); }
#endif

// The errors Kaldi asserts against, as usage_error: operands of different sizes...
[[noreturn]] TABLIO_COLD inline void throw_sizes_differ(std::string_view what, std::int64_t rows,
                                                        std::int64_t cols, std::int64_t other_rows,
                                                        std::int64_t other_cols) {
  throw_usage_error({what, ": sizes differ, ", decimal(rows), "x", decimal(cols), " and ",
                     decimal(other_rows), "x", decimal(other_cols)});
}
[[noreturn]] TABLIO_COLD inline void throw_dims_differ(std::string_view what, std::int64_t dim,
                                                       std::int64_t other_dim) {
  throw_usage_error({what, ": dimensions differ, ", decimal(dim), " and ", decimal(other_dim)});
}
// ... an index or a range outside the object...
[[noreturn]] TABLIO_COLD inline void throw_index(std::string_view what, std::int64_t i, std::int64_t size) {
  throw_usage_error({what, ": index ", decimal(i), " is outside a size of ", decimal(size)});
}
[[noreturn]] TABLIO_COLD inline void throw_outside(std::string_view what, std::int64_t first,
                                                   std::int64_t count, std::int64_t size) {
  throw_usage_error(
      {what, ": ", decimal(count), " from ", decimal(first), " are outside a size of ", decimal(size)});
}
// ... and values the operation has no answer for.
[[noreturn]] TABLIO_COLD inline void throw_bad_value(std::string_view what) { throw_usage_error({what}); }

// Whether two runs of values share memory: compared as addresses, since < between pointers
// into different arrays is unspecified.
template <class Real>
bool share_memory(const Real* a, std::size_t a_size, const Real* b, std::size_t b_size) noexcept {
  if (a_size == 0 || b_size == 0) return false;
  const auto a0 = reinterpret_cast<std::uintptr_t>(a), b0 = reinterpret_cast<std::uintptr_t>(b);
  return a0 < b0 + b_size * sizeof(Real) && b0 < a0 + a_size * sizeof(Real);
}
// The values a view spans in memory, from its first to its last, padding between rows included.
template <class Real>
std::size_t extent(const MatrixBase<Real>& m) noexcept {
  if (m.NumRows() == 0) return 0;
  return static_cast<std::size_t>(m.NumRows() - 1) * static_cast<std::size_t>(m.Stride()) +
         static_cast<std::size_t>(m.NumCols());
}
template <class Real>
std::size_t extent(const VectorBase<Real>& v) noexcept {
  return static_cast<std::size_t>(v.Dim());
}
template <class Real>
Matrix<Real> owned_copy(const MatrixBase<Real>& m) {
  return Matrix<Real>(m);
}
template <class Real>
Vector<Real> owned_copy(const VectorBase<Real>& v) {
  return Vector<Real>(v);
}
// Runs f on `operand`, or on a copy of it when it shares memory with [data, data + size): an
// operation writes there while it still reads the operand, which Kaldi leaves undefined.
template <class Real, class Operand, class F>
void with_operand(const Real* data, std::size_t size, const Operand& operand, F&& f) {
  using operand_real = std::remove_cv_t<std::remove_pointer_t<decltype(operand.Data())>>;
  if constexpr (std::is_same_v<operand_real, Real>) {
    if (share_memory(data, size, operand.Data(), extent(operand))) {
      const auto copy = owned_copy(operand);
      f(static_cast<const Operand&>(copy));
      return;
    }
  }
  f(operand);
}

// The element-wise kernels, on one run of n values (a vector, or a row of a matrix).
// Floors each value at `floor`; returns how many were raised.
template <class Real>
MatrixIndexT floor_values(Real* p, MatrixIndexT n, Real floor) noexcept {
  MatrixIndexT changed = 0;
  for (MatrixIndexT i = 0; i < n; ++i) {
    if (p[i] < floor) {
      p[i] = floor;
      ++changed;
    }
  }
  return changed;
}
// Caps each value at `ceiling`; returns how many were lowered.
template <class Real>
MatrixIndexT ceil_values(Real* p, MatrixIndexT n, Real ceiling) noexcept {
  MatrixIndexT changed = 0;
  for (MatrixIndexT i = 0; i < n; ++i) {
    if (p[i] > ceiling) {
      p[i] = ceiling;
      ++changed;
    }
  }
  return changed;
}
// The natural log of each value; a negative one throws, as Kaldi's (zero gives -infinity).
template <class Real>
void log_values(Real* p, MatrixIndexT n) {
  for (MatrixIndexT i = 0; i < n; ++i) {
    if (p[i] < 0) throw_bad_value("ApplyLog: the log of a negative number");
    p[i] = real_log(p[i]);
  }
}
// Each value to `power`, with Kaldi's special cases (1: unchanged, 2: squared exactly, 0.5: the
// square root, throwing for a negative value) and its failure (a result of +infinity throws).
template <class Real>
void pow_values(Real* p, MatrixIndexT n, Real power) {
  if (power == Real(1)) return;
  for (MatrixIndexT i = 0; i < n; ++i) {
    if (power == Real(2)) {
      p[i] = p[i] * p[i];
    } else if (power == Real(0.5)) {
      if (!(p[i] >= 0)) throw_bad_value("ApplyPow: the square root of a negative number");
      p[i] = real_sqrt(p[i]);
    } else {
      p[i] = real_pow(p[i], power);
      if (p[i] == std::numeric_limits<Real>::infinity())
        throw_bad_value("ApplyPow: a value raised to infinity");
    }
  }
}
// |x| to `power` for each value x, with x's sign when include_sign; zero stays zero for a
// negative power. A result of +infinity throws, as Kaldi's.
template <class Real>
void pow_abs_values(Real* p, MatrixIndexT n, Real power, bool include_sign) {
  for (MatrixIndexT i = 0; i < n; ++i) {
    const Real a = real_abs(p[i]);
    Real y = power == Real(1)      ? a
             : power == Real(2)    ? a * a
             : power == Real(0.5)  ? real_sqrt(a)
             : power < 0 && a == 0 ? Real(0)
                                   : real_pow(a, power);
    if (y == std::numeric_limits<Real>::infinity())
      throw_bad_value("ApplyPowAbs: a value raised to infinity");
    p[i] = include_sign && p[i] < 0 ? -y : y;
  }
}
// Applies f to each value in place.
template <class Real, class F>
void map_values(Real* p, MatrixIndexT n, F f) {
  for (MatrixIndexT i = 0; i < n; ++i) p[i] = f(p[i]);
}

}  // namespace detail

// ----- MatrixBase

// Kaldi's MatrixBase<Real> (float or double): a view of rows x cols values, each row Stride()
// values after the one before, on which Kaldi's operations work without resizing. Matrix owns
// its values; SubMatrix views part of another matrix. Sizes that differ throw usage_error where
// Kaldi asserts; indices given to operator() and RowData() are not checked.
template <class Real>
class MatrixBase {
  static_assert(std::is_same_v<Real, float> || std::is_same_v<Real, double>,
                "Kaldi's matrices hold float or double");

 public:
  // Number of rows (0 for an empty matrix).
  MatrixIndexT NumRows() const noexcept { return num_rows_; }
  // Number of columns (0 for an empty matrix).
  MatrixIndexT NumCols() const noexcept { return num_cols_; }
  // Elements from one row's start to the next's: NumCols() for a Matrix (tablio never pads
  // rows), more for a SubMatrix of some of its parent's columns.
  MatrixIndexT Stride() const noexcept { return stride_; }
  // Bytes from the first row's start to past the last row's stride, as Kaldi counts them.
  std::size_t SizeInBytes() const noexcept {
    return static_cast<std::size_t>(num_rows_) * static_cast<std::size_t>(stride_) * sizeof(Real);
  }
  // The first value of the first row.
  Real* Data() noexcept { return data_; }
  const Real* Data() const noexcept { return data_; }
  // The first value of row r, which is not checked against NumRows().
  Real* RowData(MatrixIndexT r) noexcept { return data_ + offset(r); }
  const Real* RowData(MatrixIndexT r) const noexcept { return data_ + offset(r); }
  // The value at row r, column c, unchecked.
  Real& operator()(MatrixIndexT r, MatrixIndexT c) noexcept { return data_[offset(r) + c]; }
  Real operator()(MatrixIndexT r, MatrixIndexT c) const noexcept { return data_[offset(r) + c]; }

  // Row r as a vector that writes through to this matrix; throws usage_error when there is no
  // row r. The const form's values are const.
  SubVector<Real> Row(MatrixIndexT r) {
    check_index("Row", r, num_rows_);
    return SubVector<Real>(RowData(r), num_cols_);
  }
  const SubVector<Real> Row(MatrixIndexT r) const {
    check_index("Row", r, num_rows_);
    return SubVector<Real>(const_cast<Real*>(RowData(r)), num_cols_);
  }
  // The rows from row_offset and columns from col_offset as a matrix that writes through to this
  // one, even a const one, as Kaldi's does; throws usage_error when they are not all inside it.
  SubMatrix<Real> Range(MatrixIndexT row_offset, MatrixIndexT rows, MatrixIndexT col_offset,
                        MatrixIndexT cols) const {
    return SubMatrix<Real>(*this, row_offset, rows, col_offset, cols);
  }
  // The rows from row_offset, every column, as Range() gives them.
  SubMatrix<Real> RowRange(MatrixIndexT row_offset, MatrixIndexT rows) const {
    return SubMatrix<Real>(*this, row_offset, rows, 0, num_cols_);
  }
  // The columns from col_offset, every row, as Range() gives them.
  SubMatrix<Real> ColRange(MatrixIndexT col_offset, MatrixIndexT cols) const {
    return SubMatrix<Real>(*this, 0, num_rows_, col_offset, cols);
  }

  // Sets every value to zero.
  void SetZero() noexcept { Set(Real(0)); }
  // Sets every value to v.
  void Set(Real v) noexcept {
    each_row([v](Real* p, MatrixIndexT n) { std::fill(p, p + n, v); });
  }
  // Sets the values at (i, i) to one and all others to zero, square or not.
  void SetUnit() noexcept {
    SetZero();
    for (MatrixIndexT i = 0; i < std::min(num_rows_, num_cols_); ++i) (*this)(i, i) = Real(1);
  }
  // Copies m's values, or its transpose's with kTrans, converting precision; the sizes must
  // match already (usage_error otherwise): this copies, it never resizes.
  template <class Other>
  void CopyFromMat(const MatrixBase<Other>& m, MatrixTransposeType trans = kNoTrans) {
    if (trans == kNoTrans ? m.NumRows() != num_rows_ || m.NumCols() != num_cols_
                          : m.NumCols() != num_rows_ || m.NumRows() != num_cols_)
      detail::throw_sizes_differ(trans == kNoTrans ? "CopyFromMat" : "CopyFromMat (transposed)", num_rows_,
                                 num_cols_, m.NumRows(), m.NumCols());
    operate_on(m, [&](const MatrixBase<Other>& src) {
      for (MatrixIndexT r = 0; r < num_rows_; ++r) {
        Real* out = RowData(r);
        if (trans == kNoTrans) {
          const Other* in = src.RowData(r);
          for (MatrixIndexT c = 0; c < num_cols_; ++c) out[c] = static_cast<Real>(in[c]);
        } else {
          for (MatrixIndexT c = 0; c < num_cols_; ++c) out[c] = static_cast<Real>(src(c, r));
        }
      }
    });
  }
  // Decompresses c into this matrix, whose size must be c's (usage_error otherwise).
  void CopyFromMat(const CompressedMatrix& c);
  // Fills the matrix from v: row after row when v holds NumRows() * NumCols() values, or v in
  // every row when it holds NumCols(); any other size throws usage_error.
  template <class Other>
  void CopyRowsFromVec(const VectorBase<Other>& v) {
    const bool whole = static_cast<std::int64_t>(v.Dim()) == std::int64_t{num_rows_} * num_cols_;
    if (!whole && v.Dim() != num_cols_)
      detail::throw_sizes_differ("CopyRowsFromVec", num_rows_, num_cols_, 1, v.Dim());
    operate_on(v, [&](const VectorBase<Other>& src) {
      for (MatrixIndexT r = 0; r < num_rows_; ++r) {
        const Other* in = src.Data() + (whole ? offset_in(r, num_cols_) : 0);
        std::transform(in, in + num_cols_, RowData(r), [](Other x) { return static_cast<Real>(x); });
      }
    });
  }
  // Fills the matrix from v: column after column when v holds NumRows() * NumCols() values, or
  // v in every column when it holds NumRows(); any other size throws usage_error.
  template <class Other>
  void CopyColsFromVec(const VectorBase<Other>& v) {
    const bool whole = static_cast<std::int64_t>(v.Dim()) == std::int64_t{num_rows_} * num_cols_;
    if (!whole && v.Dim() != num_rows_)
      detail::throw_sizes_differ("CopyColsFromVec", num_rows_, num_cols_, v.Dim(), 1);
    operate_on(v, [&](const VectorBase<Other>& src) {
      for (MatrixIndexT c = 0; c < num_cols_; ++c) {
        const Other* in = src.Data() + (whole ? offset_in(c, num_rows_) : 0);
        for (MatrixIndexT r = 0; r < num_rows_; ++r) (*this)(r, c) = static_cast<Real>(in[r]);
      }
    });
  }
  // Copies v, of NumCols() values, into row r; throws usage_error for another size or no row r.
  template <class Other>
  void CopyRowFromVec(const VectorBase<Other>& v, MatrixIndexT r) {
    check_index("CopyRowFromVec", r, num_rows_);
    if (v.Dim() != num_cols_) detail::throw_dims_differ("CopyRowFromVec", num_cols_, v.Dim());
    operate_on(v, [&](const VectorBase<Other>& src) {
      std::transform(src.Data(), src.Data() + num_cols_, RowData(r),
                     [](Other x) { return static_cast<Real>(x); });
    });
  }
  // Copies v, of NumRows() values, into column c; throws usage_error for another size or no
  // column c.
  template <class Other>
  void CopyColFromVec(const VectorBase<Other>& v, MatrixIndexT c) {
    check_index("CopyColFromVec", c, num_cols_);
    if (v.Dim() != num_rows_) detail::throw_dims_differ("CopyColFromVec", num_rows_, v.Dim());
    operate_on(v, [&](const VectorBase<Other>& src) {
      for (MatrixIndexT r = 0; r < num_rows_; ++r) (*this)(r, c) = static_cast<Real>(src(r));
    });
  }

  // Multiplies every value by alpha.
  void Scale(Real alpha) noexcept {
    each_value([alpha](Real x) { return x * alpha; });
  }
  // Adds alpha to every value.
  void Add(Real alpha) noexcept {
    each_value([alpha](Real x) { return x + alpha; });
  }
  // Adds alpha times m (or its transpose, with kTrans) to this matrix, of m's size (usage_error
  // otherwise).
  void AddMat(Real alpha, const MatrixBase<Real>& m, MatrixTransposeType trans = kNoTrans) {
    if (trans == kNoTrans ? m.num_rows_ != num_rows_ || m.num_cols_ != num_cols_
                          : m.num_cols_ != num_rows_ || m.num_rows_ != num_cols_)
      detail::throw_sizes_differ(trans == kNoTrans ? "AddMat" : "AddMat (transposed)", num_rows_, num_cols_,
                                 m.num_rows_, m.num_cols_);
    operate_on(m, [&](const MatrixBase<Real>& src) {
      for (MatrixIndexT r = 0; r < num_rows_; ++r)
        for (MatrixIndexT c = 0; c < num_cols_; ++c)
          (*this)(r, c) += alpha * (trans == kNoTrans ? src(r, c) : src(c, r));
    });
  }
  // Multiplies each value by m's at the same place; m's size must be this one's.
  void MulElements(const MatrixBase<Real>& m) {
    combine("MulElements", m, [](Real x, Real y) { return x * y; });
  }
  // Divides each value by m's at the same place; m's size must be this one's.
  void DivElements(const MatrixBase<Real>& m) {
    combine("DivElements", m, [](Real x, Real y) { return x / y; });
  }

  // Raises each value below floor_val to it.
  void ApplyFloor(Real floor_val) noexcept {
    each_row([floor_val](Real* p, MatrixIndexT n) { detail::floor_values(p, n, floor_val); });
  }
  // Lowers each value above ceiling_val to it.
  void ApplyCeiling(Real ceiling_val) noexcept {
    each_row([ceiling_val](Real* p, MatrixIndexT n) { detail::ceil_values(p, n, ceiling_val); });
  }
  // The natural log of each value; throws usage_error at a negative one, as Kaldi's (which is
  // why copy-matrix floors first). Zero gives -infinity.
  void ApplyLog() {
    each_row([](Real* p, MatrixIndexT n) { detail::log_values(p, n); });
  }
  // e to the power of each value.
  void ApplyExp() noexcept {
    each_value([](Real x) { return detail::real_exp(x); });
  }
  // Each value to `power`: a square root (power 0.5) of a negative value, or a result of
  // +infinity, throws usage_error, as in Kaldi.
  void ApplyPow(Real power) {
    each_row([power](Real* p, MatrixIndexT n) { detail::pow_values(p, n, power); });
  }
  // Each value's absolute value to `power`, given the value's sign when include_sign; zero stays
  // zero for a negative power, and a result of +infinity throws usage_error.
  void ApplyPowAbs(Real power, bool include_sign = false) {
    each_row([=](Real* p, MatrixIndexT n) { detail::pow_abs_values(p, n, power, include_sign); });
  }
  // Each value's absolute value.
  void ApplyAbs() noexcept {
    each_value([](Real x) { return detail::real_abs(x); });
  }
  // 1 for each value above zero, 0 for the others.
  void ApplyHeaviside() noexcept {
    each_value([](Real x) { return x > 0 ? Real(1) : Real(0); });
  }

  // The sum of the values, added up in double precision.
  Real Sum() const noexcept {
    double sum = 0;
    for (MatrixIndexT r = 0; r < num_rows_; ++r)
      for (MatrixIndexT c = 0; c < num_cols_; ++c) sum += (*this)(r, c);
    return static_cast<Real>(sum);
  }
  // The greatest value; throws usage_error for an empty matrix.
  Real Max() const {
    return extreme("Max of an empty matrix", [](Real x, Real best) { return x > best; });
  }
  // The least value; throws usage_error for an empty matrix.
  Real Min() const {
    return extreme("Min of an empty matrix", [](Real x, Real best) { return x < best; });
  }
  // The square root of the sum of the squared values (added up in double precision).
  Real FrobeniusNorm() const noexcept {
    return static_cast<Real>(detail::real_sqrt(sum_of_squares(nullptr)));
  }
  // Whether no value's magnitude exceeds cutoff.
  bool IsZero(Real cutoff = Real(1.0e-05)) const noexcept {
    for (MatrixIndexT r = 0; r < num_rows_; ++r)
      for (MatrixIndexT c = 0; c < num_cols_; ++c)
        if (detail::real_abs((*this)(r, c)) > cutoff) return false;
    return true;
  }
  // Whether the Frobenius norm of the difference from other is at most tol times this one's;
  // throws usage_error when the sizes differ.
  bool ApproxEqual(const MatrixBase<Real>& other, float tol = 0.01f) const {
    check_same_size("ApproxEqual", other);
    return detail::real_sqrt(sum_of_squares(&other)) <= tol * detail::real_sqrt(sum_of_squares(nullptr));
  }
  // Whether every value equals other's exactly (NaN equals nothing); throws usage_error when the
  // sizes differ.
  bool Equal(const MatrixBase<Real>& other) const {
    check_same_size("Equal", other);
    return *this == other;
  }
  // Whether other has the same size and values (no Kaldi counterpart: tablio's, for tests).
  bool operator==(const MatrixBase<Real>& other) const noexcept {
    if (num_rows_ != other.num_rows_ || num_cols_ != other.num_cols_) return false;
    for (MatrixIndexT r = 0; r < num_rows_; ++r)
      if (!std::equal(RowData(r), RowData(r) + num_cols_, other.RowData(r))) return false;
    return true;
  }
  // Transposes a square matrix in place; throws usage_error for another (Matrix::Transpose
  // transposes any).
  void Transpose() {
    if (num_rows_ != num_cols_)
      detail::throw_sizes_differ("Transpose (of a square matrix)", num_rows_, num_cols_, num_cols_,
                                 num_rows_);
    for (MatrixIndexT r = 0; r < num_rows_; ++r)
      for (MatrixIndexT c = 0; c < r; ++c) std::swap((*this)(r, c), (*this)(c, r));
  }

  // Writes the matrix as Kaldi does, rows packed whatever the stride: binary "FM "/"DM ", rows,
  // columns, values; text " [", a line per row, and "]". No "\0B": that is
  // InitKaldiOutputStream's or Output's.
  void Write(std::ostream& os, bool binary) const;
  // Reads a matrix (in binary, either precision or a compressed one) into this one, whose size
  // it must have, or adds it to this one with `add`; throws format_error on bad input or
  // another size. Matrix::Read resizes instead.
  void Read(std::istream& is, bool binary, bool add = false);
  // Write() on a tablio::writer, for codecs (no Kaldi counterpart); the bytes are those
  // tablio::matrix writes for the same values.
  void write_kaldi(writer& w, bool binary) const;

 protected:
  MatrixBase() noexcept = default;
  MatrixBase(Real* data, MatrixIndexT rows, MatrixIndexT cols, MatrixIndexT stride) noexcept
      : data_(data), num_rows_(rows), num_cols_(cols), stride_(stride) {}
  MatrixBase(const MatrixBase&) noexcept = default;  // for SubMatrix's copies of the view
  MatrixBase& operator=(const MatrixBase&) = delete;
  ~MatrixBase() = default;

  // Points the view at rows x cols values from data, rows `stride` apart.
  void set_view(Real* data, MatrixIndexT rows, MatrixIndexT cols, MatrixIndexT stride) noexcept {
    data_ = data;
    num_rows_ = rows;
    num_cols_ = cols;
    stride_ = stride;
  }
  // Throws usage_error, naming `what`, unless 0 <= i < size.
  static void check_index(std::string_view what, MatrixIndexT i, MatrixIndexT size) {
    if (i < 0 || i >= size) detail::throw_index(what, i, size);
  }

 private:
  std::ptrdiff_t offset(MatrixIndexT r) const noexcept { return static_cast<std::ptrdiff_t>(r) * stride_; }
  static std::ptrdiff_t offset_in(MatrixIndexT i, MatrixIndexT n) noexcept {
    return static_cast<std::ptrdiff_t>(i) * n;
  }
  template <class F>
  void each_row(F f) {
    for (MatrixIndexT r = 0; r < num_rows_; ++r) f(RowData(r), num_cols_);
  }
  template <class F>
  void each_value(F f) {
    each_row([&](Real* p, MatrixIndexT n) { detail::map_values(p, n, f); });
  }
  // Runs f on the operand, or on a copy when it shares this matrix's memory.
  template <class Operand, class F>
  void operate_on(const Operand& operand, F&& f) {
    detail::with_operand(static_cast<const Real*>(data_), detail::extent(*this), operand, f);
  }
  void check_same_size(std::string_view what, const MatrixBase<Real>& m) const {
    if (m.num_rows_ != num_rows_ || m.num_cols_ != num_cols_)
      detail::throw_sizes_differ(what, num_rows_, num_cols_, m.num_rows_, m.num_cols_);
  }
  template <class F>
  void combine(std::string_view what, const MatrixBase<Real>& m, F f) {
    check_same_size(what, m);
    operate_on(m, [&](const MatrixBase<Real>& src) {
      for (MatrixIndexT r = 0; r < num_rows_; ++r)
        for (MatrixIndexT c = 0; c < num_cols_; ++c) (*this)(r, c) = f((*this)(r, c), src(r, c));
    });
  }
  template <class Better>
  Real extreme(std::string_view empty_error, Better better) const {
    if (num_rows_ == 0) detail::throw_bad_value(empty_error);
    Real best = (*this)(0, 0);
    for (MatrixIndexT r = 0; r < num_rows_; ++r)
      for (MatrixIndexT c = 0; c < num_cols_; ++c)
        if (better((*this)(r, c), best)) best = (*this)(r, c);
    return best;
  }
  // The sum of the squared values, or of the squared differences from *minus's.
  double sum_of_squares(const MatrixBase<Real>* minus) const noexcept {
    double sum = 0;
    for (MatrixIndexT r = 0; r < num_rows_; ++r)
      for (MatrixIndexT c = 0; c < num_cols_; ++c) {
        double x = static_cast<double>((*this)(r, c)) - (minus ? static_cast<double>((*minus)(r, c)) : 0.0);
        sum += x * x;
      }
    return sum;
  }

  Real* data_ = nullptr;
  MatrixIndexT num_rows_ = 0;
  MatrixIndexT num_cols_ = 0;
  MatrixIndexT stride_ = 0;
};

// ----- VectorBase

// Kaldi's VectorBase<Real> (float or double): a view of Dim() contiguous values, on which
// Kaldi's operations work without resizing. Vector owns its values; SubVector views part of
// another vector or a matrix row. Sizes that differ throw usage_error where Kaldi asserts;
// indices given to operator() are not checked.
template <class Real>
class VectorBase {
  static_assert(std::is_same_v<Real, float> || std::is_same_v<Real, double>,
                "Kaldi's vectors hold float or double");

 public:
  // Number of values.
  MatrixIndexT Dim() const noexcept { return dim_; }
  // Bytes the values take.
  std::size_t SizeInBytes() const noexcept { return static_cast<std::size_t>(dim_) * sizeof(Real); }
  // The Dim() values, contiguous.
  Real* Data() noexcept { return data_; }
  const Real* Data() const noexcept { return data_; }
  // Value i, unchecked.
  Real& operator()(MatrixIndexT i) noexcept { return data_[i]; }
  Real operator()(MatrixIndexT i) const noexcept { return data_[i]; }
  // The `length` values from `offset` as a vector that writes through to this one; throws
  // usage_error when they are not all inside it. The const form's values are const.
  SubVector<Real> Range(MatrixIndexT offset, MatrixIndexT length) {
    return SubVector<Real>(*this, offset, length);
  }
  const SubVector<Real> Range(MatrixIndexT offset, MatrixIndexT length) const {
    return SubVector<Real>(*this, offset, length);
  }

  // Sets every value to zero.
  void SetZero() noexcept { Set(Real(0)); }
  // Sets every value to v.
  void Set(Real v) noexcept { std::fill(data_, data_ + dim_, v); }
  // Copies v's values, converting precision; v must have Dim() values (usage_error otherwise).
  template <class Other>
  void CopyFromVec(const VectorBase<Other>& v) {
    if (v.Dim() != dim_) detail::throw_dims_differ("CopyFromVec", dim_, v.Dim());
    if constexpr (std::is_same_v<Other, Real>)
      CopyFromPtr(v.Data(), v.Dim());
    else
      std::transform(v.Data(), v.Data() + dim_, data_, [](Other x) { return static_cast<Real>(x); });
  }
  // Copies `size` values from data, which may overlap this vector's; size must be Dim()
  // (usage_error otherwise). Kaldi's is protected.
  void CopyFromPtr(const Real* data, MatrixIndexT size) {
    if (size != dim_) detail::throw_dims_differ("CopyFromPtr", dim_, size);
    if (dim_ > 0 && data != data_) std::memmove(data_, data, static_cast<std::size_t>(dim_) * sizeof(Real));
  }
  // Copies m's rows one after another; Dim() must be m's NumRows() * NumCols().
  template <class Other>
  void CopyRowsFromMat(const MatrixBase<Other>& m) {
    if (static_cast<std::int64_t>(dim_) != std::int64_t{m.NumRows()} * m.NumCols())
      detail::throw_sizes_differ("CopyRowsFromMat", 1, dim_, m.NumRows(), m.NumCols());
    operate_on(m, [&](const MatrixBase<Other>& src) {
      Real* out = data_;
      for (MatrixIndexT r = 0; r < src.NumRows(); ++r, out += src.NumCols())
        std::transform(src.RowData(r), src.RowData(r) + src.NumCols(), out,
                       [](Other x) { return static_cast<Real>(x); });
    });
  }
  // Copies m's columns one after another; Dim() must be m's NumRows() * NumCols().
  template <class Other>
  void CopyColsFromMat(const MatrixBase<Other>& m) {
    if (static_cast<std::int64_t>(dim_) != std::int64_t{m.NumRows()} * m.NumCols())
      detail::throw_sizes_differ("CopyColsFromMat", dim_, 1, m.NumRows(), m.NumCols());
    operate_on(m, [&](const MatrixBase<Other>& src) {
      Real* out = data_;
      for (MatrixIndexT c = 0; c < src.NumCols(); ++c)
        for (MatrixIndexT r = 0; r < src.NumRows(); ++r) *out++ = static_cast<Real>(src(r, c));
    });
  }
  // Copies row `row` of m, whose NumCols() must be Dim(); throws usage_error for no such row.
  template <class Other>
  void CopyRowFromMat(const MatrixBase<Other>& m, MatrixIndexT row) {
    if (row < 0 || row >= m.NumRows()) detail::throw_index("CopyRowFromMat", row, m.NumRows());
    if (m.NumCols() != dim_) detail::throw_dims_differ("CopyRowFromMat", dim_, m.NumCols());
    operate_on(m, [&](const MatrixBase<Other>& src) {
      std::transform(src.RowData(row), src.RowData(row) + dim_, data_,
                     [](Other x) { return static_cast<Real>(x); });
    });
  }
  // Copies column `col` of m, whose NumRows() must be Dim(); throws usage_error for no such
  // column.
  template <class Other>
  void CopyColFromMat(const MatrixBase<Other>& m, MatrixIndexT col) {
    if (col < 0 || col >= m.NumCols()) detail::throw_index("CopyColFromMat", col, m.NumCols());
    if (m.NumRows() != dim_) detail::throw_dims_differ("CopyColFromMat", dim_, m.NumRows());
    operate_on(m, [&](const MatrixBase<Other>& src) {
      for (MatrixIndexT i = 0; i < dim_; ++i) data_[i] = static_cast<Real>(src(i, col));
    });
  }

  // Multiplies every value by alpha.
  void Scale(Real alpha) noexcept {
    detail::map_values(data_, dim_, [alpha](Real x) { return x * alpha; });
  }
  // Adds c to every value.
  void Add(Real c) noexcept {
    detail::map_values(data_, dim_, [c](Real x) { return x + c; });
  }
  // Adds alpha times v, of Dim() values, converting its precision.
  template <class Other>
  void AddVec(Real alpha, const VectorBase<Other>& v) {
    if (v.Dim() != dim_) detail::throw_dims_differ("AddVec", dim_, v.Dim());
    operate_on(v, [&](const VectorBase<Other>& src) {
      for (MatrixIndexT i = 0; i < dim_; ++i) data_[i] += alpha * static_cast<Real>(src(i));
    });
  }
  // Sets the values to alpha times the sum of m's rows plus beta times themselves; m must have
  // Dim() columns (usage_error otherwise).
  void AddRowSumMat(Real alpha, const MatrixBase<Real>& m, Real beta = 1) {
    if (m.NumCols() != dim_) detail::throw_dims_differ("AddRowSumMat", dim_, m.NumCols());
    std::vector<Real> sums(static_cast<std::size_t>(dim_));
    for (MatrixIndexT r = 0; r < m.NumRows(); ++r)
      for (MatrixIndexT c = 0; c < dim_; ++c) sums[static_cast<std::size_t>(c)] += m(r, c);
    combine_sums(alpha, sums, beta);
  }
  // The same with the sums of m's columns; m must have Dim() rows.
  void AddColSumMat(Real alpha, const MatrixBase<Real>& m, Real beta = 1) {
    if (m.NumRows() != dim_) detail::throw_dims_differ("AddColSumMat", dim_, m.NumRows());
    std::vector<Real> sums(static_cast<std::size_t>(dim_));
    for (MatrixIndexT r = 0; r < dim_; ++r)
      for (MatrixIndexT c = 0; c < m.NumCols(); ++c) sums[static_cast<std::size_t>(r)] += m(r, c);
    combine_sums(alpha, sums, beta);
  }
  // Multiplies each value by v's at the same index; v must have Dim() values.
  template <class Other>
  void MulElements(const VectorBase<Other>& v) {
    combine("MulElements", v, [](Real x, Real y) { return x * y; });
  }
  // Divides each value by v's at the same index; v must have Dim() values.
  template <class Other>
  void DivElements(const VectorBase<Other>& v) {
    combine("DivElements", v, [](Real x, Real y) { return x / y; });
  }

  // Raises each value below floor_val to it; returns how many were raised (Kaldi's older
  // form) and stores that in *floored_count too when given (its newer one).
  MatrixIndexT ApplyFloor(Real floor_val, MatrixIndexT* floored_count = nullptr) noexcept {
    MatrixIndexT n = detail::floor_values(data_, dim_, floor_val);
    if (floored_count) *floored_count = n;
    return n;
  }
  // Lowers each value above ceil_val to it; returns how many were lowered, and stores that in
  // *ceiled_count too when given.
  MatrixIndexT ApplyCeiling(Real ceil_val, MatrixIndexT* ceiled_count = nullptr) noexcept {
    MatrixIndexT n = detail::ceil_values(data_, dim_, ceil_val);
    if (ceiled_count) *ceiled_count = n;
    return n;
  }
  // The natural log of each value; throws usage_error at a negative one, as Kaldi's.
  void ApplyLog() { detail::log_values(data_, dim_); }
  // e to the power of each value.
  void ApplyExp() noexcept {
    detail::map_values(data_, dim_, [](Real x) { return detail::real_exp(x); });
  }
  // Each value to `power`, as MatrixBase::ApplyPow.
  void ApplyPow(Real power) { detail::pow_values(data_, dim_, power); }
  // Each value's absolute value to `power`, as MatrixBase::ApplyPowAbs.
  void ApplyPowAbs(Real power, bool include_sign = false) {
    detail::pow_abs_values(data_, dim_, power, include_sign);
  }
  // Each value's absolute value.
  void ApplyAbs() noexcept {
    detail::map_values(data_, dim_, [](Real x) { return detail::real_abs(x); });
  }
  // ApplyAbs() by the name older Kaldi gives it.
  void Abs() noexcept { ApplyAbs(); }
  // Replaces the values x by exp(x) / sum(exp(x)), computed from x - Max() so that nothing
  // overflows; returns log(sum(exp(x))), the normalizer.
  Real ApplySoftMax() noexcept {
    const Real max = Max();
    Real sum = 0;
    for (MatrixIndexT i = 0; i < dim_; ++i) sum += (data_[i] = detail::real_exp(data_[i] - max));
    Scale(static_cast<Real>(1.0 / sum));
    return max + detail::real_log(sum);
  }
  // Replaces the values x by x - log(sum(exp(x))), the log of ApplySoftMax's; returns that
  // normalizer.
  Real ApplyLogSoftMax() noexcept {
    const Real max = Max();
    Real sum = 0;
    for (MatrixIndexT i = 0; i < dim_; ++i) sum += detail::real_exp(data_[i] -= max);
    const Real log_sum = detail::real_log(sum);
    Add(-log_sum);
    return max + log_sum;
  }

  // The sum of the values, added up in double precision.
  Real Sum() const noexcept {
    double sum = 0;
    for (MatrixIndexT i = 0; i < dim_; ++i) sum += data_[i];
    return static_cast<Real>(sum);
  }
  // The sum of the values' natural logs (NaN when one is negative).
  Real SumLog() const noexcept {
    double sum = 0;
    for (MatrixIndexT i = 0; i < dim_; ++i) sum += detail::real_log(static_cast<double>(data_[i]));
    return static_cast<Real>(sum);
  }
  // The greatest value; -infinity for an empty vector.
  Real Max() const noexcept {
    Real best = -std::numeric_limits<Real>::infinity();
    for (MatrixIndexT i = 0; i < dim_; ++i)
      if (data_[i] > best) best = data_[i];
    return best;
  }
  // The greatest value, and in *index the first place it is at; throws usage_error for an empty
  // vector.
  Real Max(MatrixIndexT* index) const {
    if (dim_ == 0) detail::throw_bad_value("Max of an empty vector");
    *index = static_cast<MatrixIndexT>(std::max_element(data_, data_ + dim_) - data_);
    return data_[*index];
  }
  // The least value; +infinity for an empty vector.
  Real Min() const noexcept {
    Real best = std::numeric_limits<Real>::infinity();
    for (MatrixIndexT i = 0; i < dim_; ++i)
      if (data_[i] < best) best = data_[i];
    return best;
  }
  // The least value, and in *index the first place it is at; throws usage_error for an empty
  // vector.
  Real Min(MatrixIndexT* index) const {
    if (dim_ == 0) detail::throw_bad_value("Min of an empty vector");
    *index = static_cast<MatrixIndexT>(std::min_element(data_, data_ + dim_) - data_);
    return data_[*index];
  }
  // The p-norm (p >= 0, added up in double precision): the count of non-zero values for 0,
  // the greatest magnitude for infinity, (sum |x|^p)^(1/p) otherwise.
  Real Norm(Real p) const {
    if (!(p >= 0)) detail::throw_bad_value("Norm: a negative p");
    double sum = 0;
    if (p == std::numeric_limits<Real>::infinity()) {
      for (MatrixIndexT i = 0; i < dim_; ++i)
        sum = std::max(sum, static_cast<double>(detail::real_abs(data_[i])));
      return static_cast<Real>(sum);
    }
    for (MatrixIndexT i = 0; i < dim_; ++i) {
      const double a = detail::real_abs(static_cast<double>(data_[i]));
      sum += p == 0   ? (a != 0 ? 1.0 : 0.0)
             : p == 1 ? a
             : p == 2 ? a * a
                      : detail::real_pow(a, static_cast<double>(p));
    }
    if (p == 0 || p == 1) return static_cast<Real>(sum);
    if (p == 2) return static_cast<Real>(detail::real_sqrt(sum));
    return static_cast<Real>(detail::real_pow(sum, 1.0 / static_cast<double>(p)));
  }
  // Whether no value's magnitude exceeds cutoff.
  bool IsZero(Real cutoff = Real(1.0e-06)) const noexcept {
    return std::all_of(data_, data_ + dim_, [cutoff](Real x) { return detail::real_abs(x) <= cutoff; });
  }
  // Whether the 2-norm of the difference from other is at most tol times this one's (exact
  // equality for tol 0); throws usage_error when the dimensions differ.
  bool ApproxEqual(const VectorBase<Real>& other, float tol = 0.01f) const {
    if (other.dim_ != dim_) detail::throw_dims_differ("ApproxEqual", dim_, other.dim_);
    if (tol == 0) return *this == other;
    double diff = 0, norm = 0;
    for (MatrixIndexT i = 0; i < dim_; ++i) {
      const double x = data_[i], d = x - static_cast<double>(other.data_[i]);
      diff += d * d;
      norm += x * x;
    }
    return detail::real_sqrt(diff) <= tol * detail::real_sqrt(norm);
  }
  // Whether other has the same values (no Kaldi counterpart: tablio's, for tests).
  bool operator==(const VectorBase<Real>& other) const noexcept {
    return dim_ == other.dim_ && std::equal(data_, data_ + dim_, other.data_);
  }

  // Writes the vector as Kaldi does: binary "FV "/"DV ", the size, the values; text " [ a b ]"
  // and a newline.
  void Write(std::ostream& os, bool binary) const;
  // Reads a vector (in binary, of either precision) into this one, whose dimension it must have,
  // or adds it to this one with `add`; throws format_error on bad input or another dimension.
  // Vector::Read resizes instead.
  void Read(std::istream& is, bool binary, bool add = false);
  // Write() on a tablio::writer, for codecs (no Kaldi counterpart).
  void encode_with(writer& w, bool binary) const;

 protected:
  VectorBase() noexcept = default;
  VectorBase(Real* data, MatrixIndexT dim) noexcept : data_(data), dim_(dim) {}
  VectorBase(const VectorBase&) noexcept = default;  // for SubVector's copies of the view
  VectorBase& operator=(const VectorBase&) = delete;
  ~VectorBase() = default;

  // Points the view at dim values from data.
  void set_view(Real* data, MatrixIndexT dim) noexcept {
    data_ = data;
    dim_ = dim;
  }

 private:
  template <class Operand, class F>
  void operate_on(const Operand& operand, F&& f) {
    detail::with_operand(static_cast<const Real*>(data_), detail::extent(*this), operand, f);
  }
  template <class Other, class F>
  void combine(std::string_view what, const VectorBase<Other>& v, F f) {
    if (v.Dim() != dim_) detail::throw_dims_differ(what, dim_, v.Dim());
    operate_on(v, [&](const VectorBase<Other>& src) {
      for (MatrixIndexT i = 0; i < dim_; ++i) data_[i] = f(data_[i], static_cast<Real>(src(i)));
    });
  }
  // The values become alpha times sums plus beta times themselves (sums has Dim() values).
  void combine_sums(Real alpha, const std::vector<Real>& sums, Real beta) noexcept {
    for (MatrixIndexT i = 0; i < dim_; ++i) {
      const Real sum = alpha * sums[static_cast<std::size_t>(i)];
      data_[i] = beta == 0 ? sum : sum + beta * data_[i];  // beta 0 reads nothing, as BLAS
    }
  }

  Real* data_ = nullptr;
  MatrixIndexT dim_ = 0;
};

// ----- the views

// Kaldi's SubMatrix<Real>: some rows and columns of another matrix, written through to it. It
// does not keep that matrix alive: resizing or destroying it leaves the view dangling, as in
// Kaldi. Copies view the same values; assigning one to another is not allowed, as in Kaldi.
template <class Real>
class SubMatrix : public MatrixBase<Real> {
 public:
  // The `rows` rows from row_offset and `cols` columns from col_offset of m, writable even when m
  // is const, as Kaldi's; throws usage_error when they are not all inside m, or when one of rows
  // and cols alone is zero (0 and 0 make an empty view).
  SubMatrix(const MatrixBase<Real>& m, MatrixIndexT row_offset, MatrixIndexT rows, MatrixIndexT col_offset,
            MatrixIndexT cols) {
    if (row_offset < 0 || rows < 0 || std::int64_t{row_offset} + rows > m.NumRows())
      detail::throw_outside("SubMatrix rows", row_offset, rows, m.NumRows());
    if (col_offset < 0 || cols < 0 || std::int64_t{col_offset} + cols > m.NumCols())
      detail::throw_outside("SubMatrix columns", col_offset, cols, m.NumCols());
    check_shape(rows, cols);
    if (rows > 0)
      this->set_view(const_cast<Real*>(m.RowData(row_offset)) + col_offset, rows, cols, m.Stride());
  }
  // rows x cols values at data, each row `stride` values after the one before (stride >=
  // cols); throws usage_error for a shape a matrix cannot have.
  SubMatrix(Real* data, MatrixIndexT rows, MatrixIndexT cols, MatrixIndexT stride) {
    if (stride < cols)
      throw_usage_error({"SubMatrix: a stride of ", decimal(stride), " for ", decimal(cols), " columns"});
    check_shape(rows, cols);
    if (rows > 0) this->set_view(data, rows, cols, stride);
  }
  SubMatrix(const SubMatrix&) noexcept = default;
  SubMatrix& operator=(const SubMatrix&) = delete;

 private:
  static void check_shape(MatrixIndexT rows, MatrixIndexT cols) {
    if (rows < 0 || cols < 0 || (rows == 0) != (cols == 0))
      throw_usage_error({"SubMatrix: ", decimal(rows), " rows and ", decimal(cols),
                         " columns, where both or neither must be zero"});
  }
};

// Kaldi's SubVector<Real>: some values of a vector, or a matrix row, written through to it. It
// does not keep them alive, as in Kaldi. Copies view the same values; assigning one to another
// is not allowed, as in Kaldi.
template <class Real>
class SubVector : public VectorBase<Real> {
 public:
  // The `length` values of v from `offset`, writable even when v is const, as Kaldi's; throws
  // usage_error when they are not all inside v.
  SubVector(const VectorBase<Real>& v, MatrixIndexT offset, MatrixIndexT length) {
    if (offset < 0 || length < 0 || std::int64_t{offset} + length > v.Dim())
      detail::throw_outside("SubVector", offset, length, v.Dim());
    this->set_view(const_cast<Real*>(v.Data()) + offset, length);
  }
  // Row `row` of m, writable even when m is const; throws usage_error when m has no such row.
  SubVector(const MatrixBase<Real>& m, MatrixIndexT row) {
    if (row < 0 || row >= m.NumRows()) detail::throw_index("SubVector of a matrix row", row, m.NumRows());
    this->set_view(const_cast<Real*>(m.RowData(row)), m.NumCols());
  }
  // The `length` values at data, unchecked.
  SubVector(Real* data, MatrixIndexT length) noexcept : VectorBase<Real>(data, length) {}
  SubVector(const SubVector&) noexcept = default;
  SubVector& operator=(const SubVector&) = delete;
};

// ----- the owners

// Kaldi's Matrix<Real> (float or double): owns its values, in a tablio::matrix (rows contiguous,
// no padding: Stride() is NumCols()), and is stored in tables exactly as that is. Copies are
// deep; every change of size re-points the MatrixBase view, and a moved-from matrix is empty.
template <class Real>
class Matrix : public MatrixBase<Real> {
 public:
  Matrix() noexcept = default;
  // A rows x cols matrix of zeros, whatever the resize and stride types; throws usage_error for
  // a negative size, or for one of the two zero and not the other (Kaldi asserts the same).
  Matrix(MatrixIndexT rows, MatrixIndexT cols, MatrixResizeType = kSetZero, MatrixStrideType = kDefaultStride)
      : values_(rows, cols) {
    sync();
  }
  // A copy of m's values, or of its transpose's with kTrans. Implicit, unlike Kaldi's, so that a
  // SubMatrix goes wherever a const Matrix& is taken (a table's Write, WaveData).
  Matrix(const MatrixBase<Real>& m, MatrixTransposeType trans = kNoTrans) { copy_of(m, trans); }  // NOLINT
  // A copy of a matrix of the other precision (or its transpose), each value converted.
  template <class Other>
  explicit Matrix(const MatrixBase<Other>& m, MatrixTransposeType trans = kNoTrans) {
    copy_of(m, trans);
  }
  // The values of c, decompressed.
  explicit Matrix(const CompressedMatrix& c);
  // A copy of a tablio::matrix, or its values moved in.
  Matrix(const tablio::matrix<Real>& m) : values_(m) { sync(); }  // NOLINT: converts, as before
  Matrix(tablio::matrix<Real>&& m) noexcept : values_(std::move(m)) { sync(); }  // NOLINT
  Matrix(const Matrix& m) : MatrixBase<Real>(), values_(m.values_) { sync(); }
  Matrix(Matrix&& m) noexcept : MatrixBase<Real>(), values_(std::move(m.values_)) {
    sync();
    m.reset_empty();
  }
  Matrix& operator=(const Matrix& m) {
    if (this != &m) {
      values_ = m.values_;
      sync();
    }
    return *this;
  }
  Matrix& operator=(Matrix&& m) noexcept {
    if (this != &m) {
      values_ = std::move(m.values_);
      sync();
      m.reset_empty();
    }
    return *this;
  }
  // Takes m's size and values; m may be a view of this matrix.
  Matrix& operator=(const MatrixBase<Real>& m) {
    if (&m == this) return *this;
    if (m.NumRows() == this->NumRows() && m.NumCols() == this->NumCols()) {
      this->CopyFromMat(m);
    } else {
      Matrix copy(m);
      Swap(&copy);
    }
    return *this;
  }
  ~Matrix() = default;

  // Makes the matrix rows x cols (sizes checked as the constructor's); kCopyData keeps the
  // values of the rows and columns both sizes share, and every other value is zero. The
  // stride type is moot: rows are never padded.
  void Resize(MatrixIndexT rows, MatrixIndexT cols, MatrixResizeType type = kSetZero,
              MatrixStrideType = kDefaultStride) {
    if (type == kCopyData && rows == this->NumRows() && cols == this->NumCols()) return;
    if (type == kCopyData && !values_.empty()) {
      tablio::matrix<Real> next(rows, cols);
      for (MatrixIndexT r = 0; r < std::min(rows, this->NumRows()); ++r)
        std::copy(this->RowData(r), this->RowData(r) + std::min(cols, this->NumCols()), next.row(r).data());
      values_ = std::move(next);
    } else {
      values_.resize(rows, cols);
    }
    sync();
  }
  // Exchanges the values of the two matrices, copying none.
  void Swap(Matrix* other) noexcept {
    std::swap(values_, other->values_);
    sync();
    other->sync();
  }
  // Transposes the matrix, square or not.
  void Transpose() {
    if (this->NumRows() == this->NumCols()) {
      MatrixBase<Real>::Transpose();
      return;
    }
    Matrix transposed(*this, kTrans);
    Swap(&transposed);
  }
  // Removes row r, moving the later ones up; throws usage_error when there is no row r. The last
  // row's removal leaves a 0 x 0 matrix, where Kaldi's keeps the columns.
  void RemoveRow(MatrixIndexT r) {
    this->check_index("RemoveRow", r, this->NumRows());
    const MatrixIndexT rows = this->NumRows() - 1, cols = this->NumCols();
    std::vector<Real>& values = values_.storage();
    values.erase(values.begin() + static_cast<std::ptrdiff_t>(r) * cols,
                 values.begin() + static_cast<std::ptrdiff_t>(r + 1) * cols);
    values_ = rows == 0 ? tablio::matrix<Real>() : tablio::matrix<Real>(rows, cols, std::move(values));
    sync();
  }
  // Reads a matrix in the mode given, resizing to fit: in binary mode one of either precision
  // or a compressed one, decompressed, as Kaldi does. With `add`, a non-empty matrix adds what
  // it reads, which must be of its size. Throws format_error on bad input.
  void Read(std::istream& is, bool binary, bool add = false);
  // Read() from a tablio::reader, for codecs (no Kaldi counterpart).
  void read_kaldi(reader& r, bool binary);
  // Writes the matrix for tablio's other codecs, as tablio::matrix (no Kaldi counterpart).
  template <class Codec>
  void tablio_write(writer& w, Codec c) const {
    values_.tablio_write(w, c);
  }
  // Reads what tablio_write wrote (no Kaldi counterpart).
  template <class Codec>
  void tablio_read(reader& r, Codec c) {
    resync guard{this};
    values_.tablio_read(r, c);
  }
  // The values as tablio's own matrix (no Kaldi counterpart).
  operator const tablio::matrix<Real>&() const noexcept { return values_; }  // NOLINT
  // Keeps the rows and columns a script-file range ("0:9", "0:9,2:5", ":,2:5") names, as
  // tablio::apply_range does (ReadKaldiObject's ranges); throws format_error for a bad range.
  friend void apply_range(Matrix& m, std::string_view range) {
    resync guard{&m};
    tablio::apply_range(m.values_, range);
  }

 private:
  // Re-points the view at values_ when it goes out of scope, whatever happened to values_.
  struct resync {
    Matrix* m;
    ~resync() { m->sync(); }
  };
  template <class Other>
  void copy_of(const MatrixBase<Other>& m, MatrixTransposeType trans) {
    if (trans == kNoTrans)
      values_.resize(m.NumRows(), m.NumCols());
    else
      values_.resize(m.NumCols(), m.NumRows());
    sync();
    this->CopyFromMat(m, trans);
  }
  // Points the view at values_; storage that does not hold a matrix's shape and values (what a
  // read that failed half-way may leave) is emptied first.
  void sync() noexcept {
    const std::int64_t rows = values_.num_rows(), cols = values_.num_cols();
    if (rows < 0 || cols < 0 || (rows == 0) != (cols == 0) ||
        values_.size() != static_cast<std::size_t>(rows * cols))
      values_ = tablio::matrix<Real>();
    this->set_view(values_.data(), values_.num_rows(), values_.num_cols(), values_.num_cols());
  }
  void reset_empty() noexcept {
    values_ = tablio::matrix<Real>();
    sync();
  }

  tablio::matrix<Real> values_;
};

// Kaldi's Vector<Real> (float or double): owns its values, in a tablio::vector, and is stored in
// tables exactly as that is. Copies are deep; every change of size re-points the VectorBase
// view, and a moved-from vector is empty.
template <class Real>
class Vector : public VectorBase<Real> {
 public:
  Vector() noexcept = default;
  // dim zeros, whatever the resize type (a negative dim makes an empty vector).
  explicit Vector(MatrixIndexT dim, MatrixResizeType = kSetZero) : values_(dim) { sync(); }
  // A copy of v's values. Implicit, unlike Kaldi's, as Matrix's from a MatrixBase.
  Vector(const VectorBase<Real>& v) : values_(std::vector<Real>(v.Data(), v.Data() + v.Dim())) {  // NOLINT
    sync();
  }
  // A copy of a vector of the other precision, each value converted.
  template <class Other>
  explicit Vector(const VectorBase<Other>& v) : values_(v.Dim()) {
    sync();
    this->CopyFromVec(v);
  }
  // A copy of a tablio::vector, or its values moved in.
  Vector(const tablio::vector<Real>& v) : values_(v) { sync(); }  // NOLINT: converts, as before
  Vector(tablio::vector<Real>&& v) noexcept : values_(std::move(v)) { sync(); }  // NOLINT
  Vector(const Vector& v) : VectorBase<Real>(), values_(v.values_) { sync(); }
  Vector(Vector&& v) noexcept : VectorBase<Real>(), values_(std::move(v.values_)) {
    sync();
    v.reset_empty();
  }
  Vector& operator=(const Vector& v) {
    if (this != &v) {
      values_ = v.values_;
      sync();
    }
    return *this;
  }
  Vector& operator=(Vector&& v) noexcept {
    if (this != &v) {
      values_ = std::move(v.values_);
      sync();
      v.reset_empty();
    }
    return *this;
  }
  // Takes v's dimension and values; v may be a view of this vector.
  Vector& operator=(const VectorBase<Real>& v) {
    if (&v == this) return *this;
    if (v.Dim() == this->Dim()) {
      this->CopyFromVec(v);
    } else {
      Vector copy(v);
      Swap(&copy);
    }
    return *this;
  }
  ~Vector() = default;

  // Makes the vector dim long (a negative dim: empty); kCopyData keeps the first values and
  // zeroes the new ones, the other types zero them all.
  void Resize(MatrixIndexT dim, MatrixResizeType type = kSetZero) {
    if (type == kCopyData)
      values_.storage().resize(static_cast<std::size_t>(std::max(dim, MatrixIndexT{0})), Real(0));
    else
      values_.resize(dim);
    sync();
  }
  // Exchanges the values of the two vectors, copying none.
  void Swap(Vector* other) noexcept {
    values_.storage().swap(other->values_.storage());
    sync();
    other->sync();
  }
  // Removes value i, moving the later ones down; throws usage_error when there is no value i.
  void RemoveElement(MatrixIndexT i) {
    if (i < 0 || i >= this->Dim()) detail::throw_index("RemoveElement", i, this->Dim());
    values_.storage().erase(values_.storage().begin() + i);
    sync();
  }
  // Writes the vector as VectorBase::Write, without copying it first.
  void Write(std::ostream& os, bool binary) const;
  // Reads a vector in the mode given, resizing to fit; with `add`, a non-empty vector adds what
  // it reads, which must be of its dimension. Throws format_error on bad input.
  void Read(std::istream& is, bool binary, bool add = false);
  // Write() on a tablio::writer, for codecs (no Kaldi counterpart).
  void encode_with(writer& w, bool binary) const;
  // Read() from a tablio::reader, for codecs (no Kaldi counterpart).
  void decode_with(reader& r, bool binary);
  // Writes the vector for tablio's other codecs, as tablio::vector (no Kaldi counterpart).
  template <class Codec>
  void tablio_write(writer& w, Codec c) const {
    values_.tablio_write(w, c);
  }
  // Reads what tablio_write wrote (no Kaldi counterpart).
  template <class Codec>
  void tablio_read(reader& r, Codec c) {
    resync guard{this};
    values_.tablio_read(r, c);
  }
  // The values as tablio's own vector (no Kaldi counterpart).
  operator const tablio::vector<Real>&() const noexcept { return values_; }  // NOLINT
  // Keeps the values a script-file range ("3:10") names, as tablio::apply_range does; throws
  // format_error for a bad range.
  friend void apply_range(Vector& v, std::string_view range) {
    resync guard{&v};
    tablio::apply_range(v.values_, range);
  }

 private:
  // Re-points the view at values_ when it goes out of scope, whatever happened to values_.
  struct resync {
    Vector* v;
    ~resync() { v->sync(); }
  };
  void sync() noexcept { this->set_view(values_.data(), values_.dim()); }
  void reset_empty() noexcept {
    values_.storage().clear();
    sync();
  }

  tablio::vector<Real> values_;
};

// ----- CompressedMatrix

// Kaldi's CompressedMatrix: a tablio::compressed_matrix (Kaldi's "CM", "CM2", "CM3" formats)
// with Kaldi's accessors.
class CompressedMatrix : public compressed_matrix {
 public:
  CompressedMatrix() = default;
  // A copy of m, with Kaldi's accessors.
  CompressedMatrix(const compressed_matrix& m) : compressed_matrix(m) {}  // NOLINT
  // m compressed by `method`, as Kaldi compresses it; throws usage_error for NaN or infinite
  // values.
  template <class Real>
  explicit CompressedMatrix(const MatrixBase<Real>& m, CompressionMethod method = kAutomaticMethod) {
    CopyFromMat(m, method);
  }
  // Replaces the contents with m compressed by `method`, as the constructor.
  template <class Real>
  void CopyFromMat(const MatrixBase<Real>& m, CompressionMethod method = kAutomaticMethod) {
    const auto how = static_cast<compression_method>(method);
    if (m.NumRows() <= 1 || m.Stride() == m.NumCols()) {
      compress(m.Data(), m.NumRows(), m.NumCols(), how);
    } else {
      const Matrix<Real> packed(m);
      compress(packed.Data(), m.NumRows(), m.NumCols(), how);
    }
  }
  // Number of rows.
  MatrixIndexT NumRows() const noexcept { return num_rows(); }
  // Number of columns.
  MatrixIndexT NumCols() const noexcept { return num_cols(); }
  // Multiplies every value by alpha, as Kaldi's: the codes stay, their span is scaled.
  void Scale(float alpha) noexcept { scale(alpha); }
  // Empties it (0 x 0).
  void Clear() noexcept { *this = CompressedMatrix(); }
  // Exchanges contents with *other.
  void Swap(CompressedMatrix* other) noexcept { std::swap(*this, *other); }
  // Decompresses into *m (transposed with kTrans), which must have the size that takes
  // (usage_error otherwise), as Kaldi's.
  template <class Real>
  void CopyToMat(MatrixBase<Real>* m, MatrixTransposeType trans = kNoTrans) const {
    const bool as_is = trans == kNoTrans;
    if (as_is ? m->NumRows() != NumRows() || m->NumCols() != NumCols()
              : m->NumRows() != NumCols() || m->NumCols() != NumRows())
      detail::throw_sizes_differ(as_is ? "CopyToMat" : "CopyToMat (transposed)", m->NumRows(), m->NumCols(),
                                 NumRows(), NumCols());
    if (empty()) return;
    if (as_is && (m->NumRows() <= 1 || m->Stride() == m->NumCols())) {
      decompress(m->Data());
      return;
    }
    Matrix<Real> values(NumRows(), NumCols());
    decompress(values.Data());
    m->CopyFromMat(values, trans);
  }
  // Decompresses into *m, resized to fit (transposed with kTrans): tablio's overload for a
  // Matrix, which Kaldi requires to be of the right size already.
  template <class Real>
  void CopyToMat(Matrix<Real>* m, MatrixTransposeType trans = kNoTrans) const {
    if (trans == kNoTrans)
      m->Resize(NumRows(), NumCols(), kUndefined);
    else
      m->Resize(NumCols(), NumRows(), kUndefined);
    CopyToMat(static_cast<MatrixBase<Real>*>(m), trans);
  }
  // Writes the compressed bytes in binary mode, as Kaldi does; in text mode the decompressed
  // values, as a Matrix writes them.
  void Write(std::ostream& os, bool binary) const;
  // Reads what Write wrote; a plain matrix (in text mode, always) is compressed with the
  // automatic method, as Kaldi does. Throws format_error on bad input or NaN values.
  void Read(std::istream& is, bool binary);
};

template <class Real>
void MatrixBase<Real>::CopyFromMat(const CompressedMatrix& c) {
  c.CopyToMat(this);
}

template <class Real>
Matrix<Real>::Matrix(const CompressedMatrix& c) {
  c.CopyToMat(this);
}

// ----- functions on matrices and vectors

// Writes m as text, as Write(os, false) does.
template <class Real>
std::ostream& operator<<(std::ostream& os, const MatrixBase<Real>& m) {
  m.Write(os, false);
  return os;
}
// Writes v as text, as Write(os, false) does.
template <class Real>
std::ostream& operator<<(std::ostream& os, const VectorBase<Real>& v) {
  v.Write(os, false);
  return os;
}
// Whether a and b have the same numbers of rows and of columns.
template <class Real, class Other>
bool SameDim(const MatrixBase<Real>& a, const MatrixBase<Other>& b) noexcept {
  return a.NumRows() == b.NumRows() && a.NumCols() == b.NumCols();
}
// The dot product of a and b, of the same dimension (usage_error otherwise), in a's precision.
template <class Real, class Other>
Real VecVec(const VectorBase<Real>& a, const VectorBase<Other>& b) {
  if (a.Dim() != b.Dim()) detail::throw_dims_differ("VecVec", a.Dim(), b.Dim());
  Real sum = 0;
  for (MatrixIndexT i = 0; i < a.Dim(); ++i) sum += a(i) * static_cast<Real>(b(i));
  return sum;
}

// The classes of both precisions, compiled once in src/tablio.cpp in the compiled mode, as
// Kaldi compiles them into kaldi-matrix: a program then calls their Read, Write and loops
// rather than compiling the codecs behind them itself.
#if defined(TABLIO_SEPARATE_COMPILATION)
TABLIO_TABLE_INSTANCE class MatrixBase<float>;
TABLIO_TABLE_INSTANCE class MatrixBase<double>;
TABLIO_TABLE_INSTANCE class Matrix<float>;
TABLIO_TABLE_INSTANCE class Matrix<double>;
TABLIO_TABLE_INSTANCE class VectorBase<float>;
TABLIO_TABLE_INSTANCE class VectorBase<double>;
TABLIO_TABLE_INSTANCE class Vector<float>;
TABLIO_TABLE_INSTANCE class Vector<double>;
#endif

}  // namespace kaldi

// The facade's value types are stored exactly like the tablio types they hold.
template <class C, std::floating_point Real>
requires(std::same_as<C, kaldi_binary> ||
         std::same_as<C, kaldi_text>) struct codec_traits<C, kaldi::Matrix<Real>> {
  /// The codec_traits interface: writes m in C's mode, as Matrix::Write.
  static void write(writer& w, const kaldi::Matrix<Real>& m) { m.write_kaldi(w, C::binary); }
  /// The codec_traits interface: reads m in C's mode, as Matrix::Read.
  static void read(reader& r, kaldi::Matrix<Real>& m) { m.read_kaldi(r, C::binary); }
};
// The Kaldi codecs' codec_traits for the facade's Vector: stored as tablio::vector<Real> is.
template <class C, std::floating_point Real>
requires(std::same_as<C, kaldi_binary> ||
         std::same_as<C, kaldi_text>) struct codec_traits<C, kaldi::Vector<Real>> {
  /// The codec_traits interface: writes v in C's mode, as Vector::Write.
  static void write(writer& w, const kaldi::Vector<Real>& v) { v.encode_with(w, C::binary); }
  /// The codec_traits interface: reads v in C's mode, as Vector::Read.
  static void read(reader& r, kaldi::Vector<Real>& v) { v.decode_with(r, C::binary); }
};
// The Kaldi codecs' codec_traits for the facade's CompressedMatrix: stored as
// tablio::compressed_matrix is.
template <class C>
requires(std::same_as<C, kaldi_binary> ||
         std::same_as<C, kaldi_text>) struct codec_traits<C, kaldi::CompressedMatrix> {
  /// The codec_traits interface: writes m as a compressed_matrix in C's mode.
  static void write(writer& w, const kaldi::CompressedMatrix& m) {
    codec_traits<C, compressed_matrix>::write(w, m);
  }
  /// The codec_traits interface: reads m as a compressed_matrix in C's mode (a plain matrix is
  /// compressed).
  static void read(reader& r, kaldi::CompressedMatrix& m) { codec_traits<C, compressed_matrix>::read(r, m); }
};

TABLIO_END_NAMESPACE

#if TABLIO_HEADER_IMPLEMENTATION
TABLIO_BEGIN_NAMESPACE

namespace kaldi {

// The members that read and write, defined here so that in the compiled mode a program calls
// the ones src/tablio.cpp compiled rather than compiling the codecs behind them itself.
template <class Real>
void MatrixBase<Real>::Write(std::ostream& os, bool binary) const {
  detail::on_writer(os, [&](writer& w) { write_kaldi(w, binary); });
}
template <class Real>
void MatrixBase<Real>::Read(std::istream& is, bool binary, bool add) {
  detail::on_reader(is, [&](reader& r) {
    const std::uint64_t at = r.tell();
    Matrix<Real> read;
    read.read_kaldi(r, binary);
    if (read.NumRows() != num_rows_ || read.NumCols() != num_cols_)
      r.fail_at(at, {"a ", decimal(num_rows_), "x", decimal(num_cols_), " matrix"},
                {"a ", decimal(read.NumRows()), "x", decimal(read.NumCols()), " one"});
    if (add)
      AddMat(Real(1), read);
    else
      CopyFromMat(read);
  });
}
template <class Real>
void MatrixBase<Real>::write_kaldi(writer& w, bool binary) const {
  const Real* values = data_;
  std::vector<Real> packed;
  if (num_rows_ > 1 && stride_ != num_cols_) {
    packed.resize(static_cast<std::size_t>(num_rows_) * static_cast<std::size_t>(num_cols_));
    for (MatrixIndexT r = 0; r < num_rows_; ++r)
      std::copy(RowData(r), RowData(r) + num_cols_, packed.data() + offset_in(r, num_cols_));
    values = packed.data();
  }
  if (binary)
    kaldi_io::write_matrix_binary(w, num_rows_, num_cols_, values);
  else
    kaldi_io::write_matrix_text(w, num_rows_, num_cols_, values);
}
template <class Real>
void VectorBase<Real>::Write(std::ostream& os, bool binary) const {
  detail::on_writer(os, [&](writer& w) { encode_with(w, binary); });
}
template <class Real>
void VectorBase<Real>::Read(std::istream& is, bool binary, bool add) {
  detail::on_reader(is, [&](reader& r) {
    const std::uint64_t at = r.tell();
    Vector<Real> read;
    read.decode_with(r, binary);
    if (read.Dim() != dim_)
      r.fail_at(at, {"a vector of dimension ", decimal(dim_)}, {"one of dimension ", decimal(read.Dim())});
    if (add)
      AddVec(Real(1), read);
    else
      CopyFromVec(read);
  });
}
template <class Real>
void VectorBase<Real>::encode_with(writer& w, bool binary) const {
  const std::vector<Real> values(data_, data_ + dim_);
  kaldi_io::with_codec(binary, [&](auto c) { encode_to<decltype(c)>(w, values); });
}
template <class Real>
void Matrix<Real>::Read(std::istream& is, bool binary, bool add) {
  if (add && this->NumRows() != 0) {
    MatrixBase<Real>::Read(is, binary, true);
    return;
  }
  detail::on_reader(is, [&](reader& r) { read_kaldi(r, binary); });
}
template <class Real>
void Matrix<Real>::read_kaldi(reader& r, bool binary) {
  resync guard{this};
  values_.read_kaldi(r, binary);
}
template <class Real>
void Vector<Real>::Write(std::ostream& os, bool binary) const {
  detail::on_writer(os, [&](writer& w) { encode_with(w, binary); });
}
template <class Real>
void Vector<Real>::Read(std::istream& is, bool binary, bool add) {
  if (add && this->Dim() != 0) {
    VectorBase<Real>::Read(is, binary, true);
    return;
  }
  detail::on_reader(is, [&](reader& r) { decode_with(r, binary); });
}
template <class Real>
void Vector<Real>::encode_with(writer& w, bool binary) const {
  kaldi_io::with_codec(binary, [&](auto c) { encode_to<decltype(c)>(w, values_.storage()); });
}
template <class Real>
void Vector<Real>::decode_with(reader& r, bool binary) {
  resync guard{this};
  kaldi_io::with_codec(binary, [&](auto c) { decode_from<decltype(c)>(r, values_.storage()); });
}

TABLIO_IMPL void CompressedMatrix::Write(std::ostream& os, bool binary) const {
  detail::on_writer(os, [&](writer& w) {
    if (binary)
      encode_to<kaldi_binary>(w, static_cast<const compressed_matrix&>(*this));
    else
      encode_to<kaldi_text>(w, static_cast<const compressed_matrix&>(*this));
  });
}
TABLIO_IMPL void CompressedMatrix::Read(std::istream& is, bool binary) {
  detail::on_reader(is, [&](reader& r) {
    if (binary)
      decode_from<kaldi_binary>(r, static_cast<compressed_matrix&>(*this));
    else
      decode_from<kaldi_text>(r, static_cast<compressed_matrix&>(*this));
  });
}

}  // namespace kaldi

TABLIO_END_NAMESPACE
#endif  // TABLIO_HEADER_IMPLEMENTATION
