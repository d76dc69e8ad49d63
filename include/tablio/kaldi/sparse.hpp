// Kaldi's matrix/sparse-matrix.h over tablio: SparseVector, SparseMatrix, and GeneralMatrix, which
// holds a full, a compressed or a sparse matrix (nnet3's examples store their inputs so). Each
// reads and writes Kaldi's binary ("SV", "SM") and text ("dim=5 [ 0 0.2 3 0.9 ]") forms.
// Reading checks what Kaldi trusts: an index outside its row is a format_error here, where
// Kaldi would write past the matrix a sparse row is copied to.
#pragma once

#include <tablio/codec/kaldi_io.hpp>
#include <tablio/codec/kaldi_token.hpp>
#include <tablio/core/config.hpp>
#include <tablio/core/error.hpp>
#include <tablio/kaldi/base.hpp>
#include <tablio/kaldi/matrix.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <istream>
#include <limits>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

TABLIO_BEGIN_NAMESPACE

namespace kaldi {

namespace detail {
// Kaldi's Write(std::ostream&, bool binary) and Read(std::istream&, bool binary) for a class
// that writes and reads on tablio's writer and reader (write_kaldi, read_kaldi).
template <class Derived>
class kaldi_stream_members {
 public:
  // Writes Kaldi's binary or text form of the object.
  void Write(std::ostream& os, bool binary) const {
    on_writer(os, [&](writer& w) { static_cast<const Derived&>(*this).write_kaldi(w, binary); });
  }
  // Reads what Write wrote; throws format_error on bad input (file, offset, what was found).
  void Read(std::istream& is, bool binary) {
    on_reader(is, [&](reader& r) { static_cast<Derived&>(*this).read_kaldi(r, binary); });
  }
  bool operator==(const kaldi_stream_members&) const = default;
};

// Reads a text token "name=N" ("dim=5", "rows=3"), N from 0 to int32's maximum; format_error
// otherwise.
TABLIO_IMPL MatrixIndexT read_count_token(reader& r, std::string_view name);
// Reads the stored elements of a sparse row of dimension dim; format_error for an index outside
// [0, dim), an element count above dim, and (in text, as Kaldi checks) indices out of order.
// Memory grows with what was read, not with the count the input claims.
template <class Real>
void read_sparse_elements(reader& r, bool binary, MatrixIndexT dim,
                          std::vector<std::pair<MatrixIndexT, Real>>& pairs);
}  // namespace detail

// Kaldi's SparseVector<Real>: a vector of dimension Dim() of which only NumElements() values,
// at increasing indices, are not zero.
template <class Real>
class SparseVector : public detail::kaldi_stream_members<SparseVector<Real>> {
 public:
  SparseVector() = default;
  // All zeros, of dimension dim (usage_error when negative).
  explicit SparseVector(MatrixIndexT dim) : dim_(dim) {
    if (dim < 0) detail::throw_bad_value("SparseVector: a negative dimension");
  }
  // The pairs (index, value) sorted by index, those with one index summed and zeros left out,
  // as Kaldi's; usage_error for an index outside [0, dim).
  SparseVector(MatrixIndexT dim, const std::vector<std::pair<MatrixIndexT, Real>>& pairs)
      : SparseVector(dim) {
    pairs_ = pairs;
    std::sort(pairs_.begin(), pairs_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::size_t kept = 0;
    for (std::size_t i = 0; i < pairs_.size();) {
      std::pair<MatrixIndexT, Real> merged = pairs_[i];
      if (merged.first < 0 || merged.first >= dim) detail::throw_index("SparseVector", merged.first, dim);
      for (++i; i < pairs_.size() && pairs_[i].first == merged.first; ++i) merged.second += pairs_[i].second;
      if (merged.second != Real(0)) pairs_[kept++] = merged;
    }
    pairs_.resize(kept);
  }
  // The values of v that are not zero.
  explicit SparseVector(const VectorBase<Real>& v) : dim_(v.Dim()) {
    for (MatrixIndexT i = 0; i < v.Dim(); ++i)
      if (v(i) != Real(0)) pairs_.emplace_back(i, v(i));
  }

  // The dimension.
  MatrixIndexT Dim() const noexcept { return dim_; }
  // How many values are stored (those not zero).
  MatrixIndexT NumElements() const noexcept { return static_cast<MatrixIndexT>(pairs_.size()); }
  // The stored (index, value) pairs, by increasing index; nullptr when there are none.
  std::pair<MatrixIndexT, Real>* Data() noexcept { return pairs_.empty() ? nullptr : pairs_.data(); }
  const std::pair<MatrixIndexT, Real>* Data() const noexcept {
    return pairs_.empty() ? nullptr : pairs_.data();
  }
  // The i-th stored pair (usage_error when i is outside [0, NumElements())).
  const std::pair<MatrixIndexT, Real>& GetElement(MatrixIndexT i) const {
    if (i < 0 || i >= NumElements()) detail::throw_index("SparseVector::GetElement", i, NumElements());
    return pairs_[static_cast<std::size_t>(i)];
  }
  // The sum of the values.
  Real Sum() const noexcept {
    Real sum = 0;
    for (const auto& p : pairs_) sum += p.second;
    return sum;
  }
  // Multiplies every value by alpha.
  void Scale(Real alpha) noexcept {
    for (auto& p : pairs_) p.second *= alpha;
  }
  // Writes the values into *v, zeros included; v must have Dim() values (usage_error otherwise).
  template <class Other>
  void CopyToVec(VectorBase<Other>* v) const {
    if (v->Dim() != dim_) detail::throw_dims_differ("SparseVector::CopyToVec", v->Dim(), dim_);
    v->SetZero();
    for (const auto& p : pairs_) (*v)(p.first) = static_cast<Other>(p.second);
  }
  // Adds alpha times the values to *v, of Dim() values (usage_error otherwise).
  template <class Other>
  void AddToVec(Real alpha, VectorBase<Other>* v) const {
    if (v->Dim() != dim_) detail::throw_dims_differ("SparseVector::AddToVec", v->Dim(), dim_);
    for (const auto& p : pairs_) (*v)(p.first) += static_cast<Other>(alpha * p.second);
  }
  // Changes the dimension: kCopyData keeps the values below dim, the others clear them all.
  void Resize(MatrixIndexT dim, MatrixResizeType type = kSetZero) {
    if (dim < 0) detail::throw_bad_value("SparseVector::Resize: a negative dimension");
    if (type != kCopyData) pairs_.clear();
    while (!pairs_.empty() && pairs_.back().first >= dim) pairs_.pop_back();
    dim_ = dim;
  }
  // Exchanges contents with *other.
  void Swap(SparseVector* other) noexcept {
    std::swap(dim_, other->dim_);
    pairs_.swap(other->pairs_);
  }
  // Write() in Kaldi's form: binary "SV", the dimension, the count and the pairs; text
  // "dim=5 [ 0 0.2 3 0.9 ] ".
  void write_kaldi(writer& w, bool binary) const;
  // Read(): what write_kaldi wrote.
  void read_kaldi(reader& r, bool binary);

  // Whether both have the same dimension and the same stored pairs.
  bool operator==(const SparseVector&) const = default;

 private:
  MatrixIndexT dim_ = 0;
  std::vector<std::pair<MatrixIndexT, Real>> pairs_;
};

// Kaldi's SparseMatrix<Real>: rows that are SparseVectors of one dimension, NumCols().
template <class Real>
class SparseMatrix : public detail::kaldi_stream_members<SparseMatrix<Real>> {
 public:
  SparseMatrix() = default;
  // rows x cols zeros.
  SparseMatrix(MatrixIndexT rows, MatrixIndexT cols) { Resize(rows, cols); }
  // One row per vector of pairs, each made as SparseVector(dim, pairs) makes it.
  SparseMatrix(MatrixIndexT dim, const std::vector<std::vector<std::pair<MatrixIndexT, Real>>>& pairs) {
    rows_.reserve(pairs.size());
    for (const auto& row : pairs) rows_.emplace_back(dim, row);
  }
  // The values of m that are not zero.
  explicit SparseMatrix(const MatrixBase<Real>& m) {
    rows_.reserve(static_cast<std::size_t>(m.NumRows()));
    for (MatrixIndexT r = 0; r < m.NumRows(); ++r) rows_.emplace_back(m.Row(r));
  }

  // Number of rows.
  MatrixIndexT NumRows() const noexcept { return static_cast<MatrixIndexT>(rows_.size()); }
  // Number of columns: the rows' dimension, 0 without rows.
  MatrixIndexT NumCols() const noexcept { return rows_.empty() ? 0 : rows_.front().Dim(); }
  // How many values are stored in all rows.
  MatrixIndexT NumElements() const noexcept {
    MatrixIndexT n = 0;
    for (const auto& row : rows_) n += row.NumElements();
    return n;
  }
  // The sum of the values.
  Real Sum() const noexcept {
    Real sum = 0;
    for (const auto& row : rows_) sum += row.Sum();
    return sum;
  }
  // Row r (usage_error when outside).
  const SparseVector<Real>& Row(MatrixIndexT r) const {
    if (r < 0 || r >= NumRows()) detail::throw_index("SparseMatrix::Row", r, NumRows());
    return rows_[static_cast<std::size_t>(r)];
  }
  // Replaces row r with v, of NumCols() dimension (usage_error otherwise).
  void SetRow(MatrixIndexT r, const SparseVector<Real>& v) {
    if (r < 0 || r >= NumRows()) detail::throw_index("SparseMatrix::SetRow", r, NumRows());
    if (v.Dim() != NumCols()) detail::throw_dims_differ("SparseMatrix::SetRow", NumCols(), v.Dim());
    rows_[static_cast<std::size_t>(r)] = v;
  }
  // The rows; nullptr when there are none.
  const SparseVector<Real>* Data() const noexcept { return rows_.empty() ? nullptr : rows_.data(); }
  // Writes the values into *m, zeros included (transposed with kTrans); m must have the size
  // that takes (usage_error otherwise).
  template <class Other>
  void CopyToMat(MatrixBase<Other>* m, MatrixTransposeType trans = kNoTrans) const {
    check_size("SparseMatrix::CopyToMat", *m, trans);
    m->SetZero();
    for_each_value(m, trans, [](Other& to, Real v) { to = static_cast<Other>(v); });  // the last of a repeat
  }
  // Adds alpha times the values to *m (transposed with kTrans), of the size that takes.
  void AddToMat(BaseFloat alpha, MatrixBase<Real>* m, MatrixTransposeType trans = kNoTrans) const {
    check_size("SparseMatrix::AddToMat", *m, trans);
    const Real scale = static_cast<Real>(alpha);
    for_each_value(m, trans, [scale](Real& to, Real v) { to += scale * v; });
  }
  // Multiplies every value by alpha.
  void Scale(Real alpha) noexcept {
    for (auto& row : rows_) row.Scale(alpha);
  }
  // Changes the size: kCopyData keeps the values that still fit, the others clear them all.
  void Resize(MatrixIndexT rows, MatrixIndexT cols, MatrixResizeType type = kSetZero) {
    if (rows < 0 || cols < 0) detail::throw_bad_value("SparseMatrix::Resize: a negative size");
    if (type != kCopyData) rows_.clear();
    rows_.resize(static_cast<std::size_t>(rows), SparseVector<Real>(cols));
    for (auto& row : rows_) row.Resize(cols, kCopyData);
  }
  // Exchanges contents with *other.
  void Swap(SparseMatrix* other) noexcept { rows_.swap(other->rows_); }
  // Replaces the rows with those of *inputs, in order, which it empties; usage_error when their
  // dimensions differ.
  void AppendSparseMatrixRows(std::vector<SparseMatrix<Real>>* inputs) {
    std::vector<SparseVector<Real>> rows;
    for (auto& input : *inputs)
      for (auto& row : input.rows_) {
        if (!rows.empty() && row.Dim() != rows.front().Dim())
          detail::throw_dims_differ("AppendSparseMatrixRows", rows.front().Dim(), row.Dim());
        rows.push_back(std::move(row));
      }
    rows_.swap(rows);
    inputs->clear();
  }
  // Write() in Kaldi's form: binary "SM", the number of rows and each row; text "rows=N " and
  // each row, then a newline.
  void write_kaldi(writer& w, bool binary) const;
  // Read(): what write_kaldi wrote; rows of different dimensions are a format_error too.
  void read_kaldi(reader& r, bool binary);

  // Whether both have the same rows.
  bool operator==(const SparseMatrix&) const = default;

 private:
  template <class Other>
  void check_size(std::string_view what, const MatrixBase<Other>& m, MatrixTransposeType trans) const {
    const bool as_is = trans == kNoTrans;
    if (as_is ? m.NumRows() != NumRows() || m.NumCols() != NumCols()
              : m.NumRows() != NumCols() || m.NumCols() != NumRows())
      detail::throw_sizes_differ(what, m.NumRows(), m.NumCols(), NumRows(), NumCols());
  }
  // Calls f(element of *m, value) for each stored value, in order.
  template <class Other, class F>
  void for_each_value(MatrixBase<Other>* m, MatrixTransposeType trans, F f) const {
    for (MatrixIndexT r = 0; r < NumRows(); ++r) {
      const SparseVector<Real>& row = rows_[static_cast<std::size_t>(r)];
      for (MatrixIndexT e = 0; e < row.NumElements(); ++e) {
        const auto& [c, v] = row.Data()[e];
        f(trans == kNoTrans ? (*m)(r, c) : (*m)(c, r), v);
      }
    }
  }

  std::vector<SparseVector<Real>> rows_;
};

// Which matrix a GeneralMatrix holds.
enum GeneralMatrixType { kFullMatrix, kCompressedMatrix, kSparseMatrix };

// Kaldi's GeneralMatrix: a full Matrix<BaseFloat>, a CompressedMatrix or a
// SparseMatrix<BaseFloat>, written in the form it holds and read in the form it finds.
class GeneralMatrix : public detail::kaldi_stream_members<GeneralMatrix> {
 public:
  GeneralMatrix() = default;
  // Holds a copy of m, full.
  explicit GeneralMatrix(const MatrixBase<BaseFloat>& m) { *this = m; }
  // Holds a copy of m, compressed.
  explicit GeneralMatrix(const CompressedMatrix& m) { *this = m; }
  // Holds a copy of m, sparse.
  explicit GeneralMatrix(const SparseMatrix<BaseFloat>& m) { *this = m; }
  // Holds a full copy of m (and nothing else).
  GeneralMatrix& operator=(const MatrixBase<BaseFloat>& m) {
    Clear();
    full_ = m;
    return *this;
  }
  // Holds m, compressed (and nothing else).
  GeneralMatrix& operator=(const CompressedMatrix& m) {
    Clear();
    compressed_ = m;
    return *this;
  }
  // Holds m, sparse (and nothing else).
  GeneralMatrix& operator=(const SparseMatrix<BaseFloat>& m) {
    Clear();
    sparse_ = m;
    return *this;
  }

  // Which form it holds: sparse or compressed when those hold rows, else full.
  GeneralMatrixType Type() const noexcept {
    if (sparse_.NumRows() != 0) return kSparseMatrix;
    if (compressed_.NumRows() != 0) return kCompressedMatrix;
    return kFullMatrix;
  }
  // Number of rows of the matrix held.
  MatrixIndexT NumRows() const noexcept;
  // Number of columns of the matrix held.
  MatrixIndexT NumCols() const noexcept;
  // Compresses a full matrix (with the automatic method); the other forms stay as they are.
  void Compress();
  // Decompresses a compressed matrix into a full one; the other forms stay as they are.
  void Uncompress();
  // The matrix, in any form, as a full one in *m (resized).
  void GetMatrix(Matrix<BaseFloat>* m) const;
  // The matrix written into *m (transposed with kTrans), of the size that takes (usage_error
  // otherwise).
  void CopyToMat(MatrixBase<BaseFloat>* m, MatrixTransposeType trans = kNoTrans) const;
  // Adds alpha times the matrix to *m (transposed with kTrans), of the size that takes.
  void AddToMat(BaseFloat alpha, MatrixBase<BaseFloat>* m, MatrixTransposeType trans = kNoTrans) const;
  // Multiplies every value by alpha, in the form held.
  void Scale(BaseFloat alpha);
  // The full matrix held; usage_error when it holds another form.
  const Matrix<BaseFloat>& GetFullMatrix() const;
  // The compressed matrix held; usage_error when it holds another form with rows.
  const CompressedMatrix& GetCompressedMatrix() const;
  // The sparse matrix held; usage_error when it holds another form with rows.
  const SparseMatrix<BaseFloat>& GetSparseMatrix() const;
  // Exchanges the full matrix held with *m; usage_error when it holds another form.
  void SwapFullMatrix(Matrix<BaseFloat>* m);
  // Exchanges the compressed matrix held with *m; usage_error when it holds another form.
  void SwapCompressedMatrix(CompressedMatrix* m);
  // Exchanges the sparse matrix held with *m; usage_error when it holds another form.
  void SwapSparseMatrix(SparseMatrix<BaseFloat>* m);
  // Holds nothing (a full 0 x 0 matrix).
  void Clear();
  // Exchanges contents with *other.
  void Swap(GeneralMatrix* other) noexcept;
  // Write(): the form held, a SparseMatrix's, a CompressedMatrix's or a Matrix's bytes.
  void write_kaldi(writer& w, bool binary) const;
  // Read(): any of the three forms, told apart as Kaldi does: in binary by the token's first
  // letter ('S' sparse, 'C' compressed, else full), in text by "rows=" (sparse, else full).
  void read_kaldi(reader& r, bool binary);
  // Keeps the rows and columns a script-file range ("0:9,2:5") names, as a full matrix, as
  // Kaldi's ExtractObjectRange does; throws format_error for a bad range.
  friend void apply_range(GeneralMatrix& m, std::string_view range) { m.keep_range(range); }

 private:
  [[noreturn]] static void throw_wrong_type(std::string_view call);
  void keep_range(std::string_view range);
  Matrix<BaseFloat> full_;
  CompressedMatrix compressed_;
  SparseMatrix<BaseFloat> sparse_;
};

// Kaldi's AppendGeneralMatrixRows: the rows of every matrix of src, in order, in *m: sparse when
// all are sparse (or empty), full otherwise; usage_error when their column counts differ.
TABLIO_IMPL void AppendGeneralMatrixRows(const std::vector<const GeneralMatrix*>& src, GeneralMatrix* m);

#if defined(TABLIO_SEPARATE_COMPILATION)
TABLIO_TABLE_INSTANCE class SparseVector<float>;
TABLIO_TABLE_INSTANCE class SparseVector<double>;
TABLIO_TABLE_INSTANCE class SparseMatrix<float>;
TABLIO_TABLE_INSTANCE class SparseMatrix<double>;
#endif

}  // namespace kaldi

TABLIO_END_NAMESPACE

#if TABLIO_HEADER_IMPLEMENTATION
TABLIO_BEGIN_NAMESPACE

namespace kaldi {

TABLIO_IMPL MatrixIndexT detail::read_count_token(reader& r, std::string_view name) {
  r.skip_whitespace();
  const std::uint64_t at = r.tell();
  const std::string token = kaldi_io::read_token(r);
  const std::string_view digits = std::string_view(token).substr(std::min(token.size(), name.size() + 1));
  std::int64_t n = 0;
  bool valid = token.size() > name.size() + 1 && token.compare(0, name.size(), name) == 0 &&
               token[name.size()] == '=' && digits.size() <= 10;
  for (char c : digits) {
    valid = valid && c >= '0' && c <= '9';
    n = n * 10 + (c - '0');
  }
  if (!valid || n > std::numeric_limits<MatrixIndexT>::max())
    r.fail_at(at, {"'", name, "=' and a count"}, {quoted_excerpt(token)});
  return static_cast<MatrixIndexT>(n);
}

template <class Real>
void detail::read_sparse_elements(reader& r, bool binary, MatrixIndexT dim,
                                  std::vector<std::pair<MatrixIndexT, Real>>& pairs) {
  pairs.clear();
  std::pair<MatrixIndexT, Real> pair{};
  const auto read_pair = [&] {
    const std::uint64_t at = r.tell();
    kaldi_io::read_basic_type(r, binary, pair.first);
    kaldi_io::read_basic_type(r, binary, pair.second);
    if (pair.first < 0 || pair.first >= dim)
      r.fail_at(at, {"an index below the dimension ", decimal(dim)}, {"index ", decimal(pair.first)});
    if (!binary && !pairs.empty() && pair.first <= pairs.back().first)
      r.fail_at(at, {"an index above ", decimal(pairs.back().first)}, {"index ", decimal(pair.first)});
    pairs.push_back(pair);
  };
  if (binary) {
    const std::uint64_t at = r.tell();
    MatrixIndexT count = 0;
    kaldi_io::read_basic_type(r, binary, count);
    if (count < 0 || count > dim)
      r.fail_at(at, {"a count of elements from 0 to the dimension ", decimal(dim)}, {decimal(count)});
    pairs.reserve(std::min<std::size_t>(static_cast<std::size_t>(count), 4096));
    for (MatrixIndexT e = 0; e < count; ++e) read_pair();
    return;
  }
  kaldi_io::expect_token(r, "[");
  for (;;) {
    r.skip_whitespace();
    const int next = r.peek();
    if (next == ']') {
      r.advance(1);
      return;
    }
    if (next < 0) r.fail({"']'"}, {"end of input"});
    read_pair();
  }
}

template <class Real>
void SparseVector<Real>::write_kaldi(writer& w, bool binary) const {
  if (binary) {
    kaldi_io::write_token(w, "SV");
    kaldi_io::write_basic_type(w, true, dim_);
    kaldi_io::write_basic_type(w, true, NumElements());
  } else {
    w.write("dim=");
    kaldi_io::write_basic_type(w, false, dim_);
    kaldi_io::write_token(w, "[");
  }
  for (const auto& [index, value] : pairs_) {
    kaldi_io::write_basic_type(w, binary, index);
    kaldi_io::write_basic_type(w, binary, value);
  }
  if (!binary) kaldi_io::write_token(w, "]");
}

template <class Real>
void SparseVector<Real>::read_kaldi(reader& r, bool binary) {
  MatrixIndexT dim = 0;
  if (binary) {
    kaldi_io::expect_token(r, "SV");
    const std::uint64_t at = r.tell();
    kaldi_io::read_basic_type(r, true, dim);
    if (dim < 0) r.fail_at(at, {"a dimension of 0 or more"}, {decimal(dim)});
  } else {
    dim = detail::read_count_token(r, "dim");
  }
  std::vector<std::pair<MatrixIndexT, Real>> pairs;  // kept only whole: a failed read changes nothing
  detail::read_sparse_elements(r, binary, dim, pairs);
  pairs_.swap(pairs);
  dim_ = dim;
}

template <class Real>
void SparseMatrix<Real>::write_kaldi(writer& w, bool binary) const {
  if (binary) {
    kaldi_io::write_token(w, "SM");
    kaldi_io::write_basic_type(w, true, NumRows());
  } else {
    w.write("rows=");
    kaldi_io::write_basic_type(w, false, NumRows());
  }
  for (const auto& row : rows_) row.write_kaldi(w, binary);
  if (!binary) w.put('\n');
}

template <class Real>
void SparseMatrix<Real>::read_kaldi(reader& r, bool binary) {
  MatrixIndexT rows = 0;
  if (binary) {
    kaldi_io::expect_token(r, "SM");
    const std::uint64_t at = r.tell();
    kaldi_io::read_basic_type(r, true, rows);
    if (rows < 0) r.fail_at(at, {"a number of rows of 0 or more"}, {decimal(rows)});
  } else {
    rows = detail::read_count_token(r, "rows");
  }
  std::vector<SparseVector<Real>> read;
  read.reserve(std::min<std::size_t>(static_cast<std::size_t>(rows), 4096));
  for (MatrixIndexT i = 0; i < rows; ++i) {
    const std::uint64_t at = r.tell();
    read.emplace_back().read_kaldi(r, binary);
    if (read.back().Dim() != read.front().Dim())
      r.fail_at(at, {"a row of dimension ", decimal(read.front().Dim())},
                {"one of dimension ", decimal(read.back().Dim())});
  }
  rows_.swap(read);
}

TABLIO_IMPL MatrixIndexT GeneralMatrix::NumRows() const noexcept {
  switch (Type()) {
    case kSparseMatrix:
      return sparse_.NumRows();
    case kCompressedMatrix:
      return compressed_.NumRows();
    default:
      return full_.NumRows();
  }
}
TABLIO_IMPL MatrixIndexT GeneralMatrix::NumCols() const noexcept {
  switch (Type()) {
    case kSparseMatrix:
      return sparse_.NumCols();
    case kCompressedMatrix:
      return compressed_.NumCols();
    default:
      return full_.NumCols();
  }
}
TABLIO_IMPL void GeneralMatrix::Compress() {
  if (full_.NumRows() == 0) return;
  compressed_.CopyFromMat(full_);
  full_.Resize(0, 0);
}
TABLIO_IMPL void GeneralMatrix::Uncompress() {
  if (compressed_.NumRows() == 0) return;
  compressed_.CopyToMat(&full_);
  compressed_.Clear();
}
TABLIO_IMPL void GeneralMatrix::GetMatrix(Matrix<BaseFloat>* m) const {
  switch (Type()) {
    case kSparseMatrix:
      m->Resize(sparse_.NumRows(), sparse_.NumCols(), kUndefined);
      sparse_.CopyToMat(m);
      return;
    case kCompressedMatrix:
      compressed_.CopyToMat(m);
      return;
    default:
      *m = full_;
  }
}
TABLIO_IMPL void GeneralMatrix::CopyToMat(MatrixBase<BaseFloat>* m, MatrixTransposeType trans) const {
  switch (Type()) {
    case kSparseMatrix:
      sparse_.CopyToMat(m, trans);
      return;
    case kCompressedMatrix:
      compressed_.CopyToMat(m, trans);
      return;
    default:
      m->CopyFromMat(full_, trans);
  }
}
TABLIO_IMPL void GeneralMatrix::AddToMat(BaseFloat alpha, MatrixBase<BaseFloat>* m,
                                         MatrixTransposeType trans) const {
  switch (Type()) {
    case kSparseMatrix:
      sparse_.AddToMat(alpha, m, trans);
      return;
    case kCompressedMatrix: {
      Matrix<BaseFloat> values;
      compressed_.CopyToMat(&values);
      m->AddMat(alpha, values, trans);
      return;
    }
    default:
      m->AddMat(alpha, full_, trans);
  }
}
TABLIO_IMPL void GeneralMatrix::Scale(BaseFloat alpha) {
  switch (Type()) {
    case kSparseMatrix:
      sparse_.Scale(alpha);
      return;
    case kCompressedMatrix:
      compressed_.Scale(alpha);
      return;
    default:
      full_.Scale(alpha);
  }
}
TABLIO_IMPL void GeneralMatrix::throw_wrong_type(std::string_view call) {
  throw_usage_error({"GeneralMatrix::", call, " called on a GeneralMatrix of another type"});
}
TABLIO_IMPL const Matrix<BaseFloat>& GeneralMatrix::GetFullMatrix() const {
  if (Type() != kFullMatrix) throw_wrong_type("GetFullMatrix");
  return full_;
}
TABLIO_IMPL const CompressedMatrix& GeneralMatrix::GetCompressedMatrix() const {
  if (Type() != kCompressedMatrix && NumRows() != 0) throw_wrong_type("GetCompressedMatrix");
  return compressed_;
}
TABLIO_IMPL const SparseMatrix<BaseFloat>& GeneralMatrix::GetSparseMatrix() const {
  if (Type() != kSparseMatrix && NumRows() != 0) throw_wrong_type("GetSparseMatrix");
  return sparse_;
}
TABLIO_IMPL void GeneralMatrix::SwapFullMatrix(Matrix<BaseFloat>* m) {
  if (Type() != kFullMatrix) throw_wrong_type("SwapFullMatrix");
  full_.Swap(m);
}
TABLIO_IMPL void GeneralMatrix::SwapCompressedMatrix(CompressedMatrix* m) {
  if (Type() != kCompressedMatrix && NumRows() != 0) throw_wrong_type("SwapCompressedMatrix");
  compressed_.Swap(m);
}
TABLIO_IMPL void GeneralMatrix::SwapSparseMatrix(SparseMatrix<BaseFloat>* m) {
  if (Type() != kSparseMatrix && NumRows() != 0) throw_wrong_type("SwapSparseMatrix");
  sparse_.Swap(m);
}
TABLIO_IMPL void GeneralMatrix::Clear() {
  full_.Resize(0, 0);
  compressed_.Clear();
  sparse_.Resize(0, 0);
}
TABLIO_IMPL void GeneralMatrix::Swap(GeneralMatrix* other) noexcept {
  full_.Swap(&other->full_);
  compressed_.Swap(&other->compressed_);
  sparse_.Swap(&other->sparse_);
}
TABLIO_IMPL void GeneralMatrix::write_kaldi(writer& w, bool binary) const {
  switch (Type()) {
    case kSparseMatrix:
      sparse_.write_kaldi(w, binary);
      return;
    case kCompressedMatrix:
      kaldi_io::with_codec(binary, [&](auto c) {
        encode_to<decltype(c)>(w, static_cast<const compressed_matrix&>(compressed_));
      });
      return;
    default:
      full_.write_kaldi(w, binary);
  }
}
TABLIO_IMPL void GeneralMatrix::read_kaldi(reader& r, bool binary) {
  Clear();
  const int first = kaldi_io::peek(r, binary);
  if (first == (binary ? 'S' : 'r'))
    sparse_.read_kaldi(r, binary);
  else if (binary && first == 'C')
    decode_from<kaldi_binary>(r, static_cast<compressed_matrix&>(compressed_));
  else
    full_.read_kaldi(r, binary);
}

TABLIO_IMPL void GeneralMatrix::keep_range(std::string_view range) {
  Matrix<BaseFloat> kept;
  GetMatrix(&kept);
  apply_range(kept, range);
  Clear();
  full_.Swap(&kept);
}

TABLIO_IMPL void AppendGeneralMatrixRows(const std::vector<const GeneralMatrix*>& src, GeneralMatrix* m) {
  m->Clear();
  const bool all_sparse = std::all_of(src.begin(), src.end(), [](const GeneralMatrix* g) {
    return g->Type() == kSparseMatrix || g->NumRows() == 0;
  });
  if (src.empty()) return;
  if (all_sparse) {
    std::vector<SparseMatrix<BaseFloat>> parts;
    parts.reserve(src.size());
    for (const GeneralMatrix* g : src) parts.push_back(g->GetSparseMatrix());
    SparseMatrix<BaseFloat> appended;
    appended.AppendSparseMatrixRows(&parts);
    m->SwapSparseMatrix(&appended);
    return;
  }
  MatrixIndexT rows = 0, cols = -1;
  for (const GeneralMatrix* g : src) {
    if (g->NumRows() == 0) continue;
    if (cols >= 0 && g->NumCols() != cols)
      detail::throw_dims_differ("AppendGeneralMatrixRows", cols, g->NumCols());
    cols = g->NumCols();
    rows += g->NumRows();
  }
  Matrix<BaseFloat> appended(rows, std::max(cols, 0), kUndefined);
  MatrixIndexT at = 0;
  for (const GeneralMatrix* g : src) {
    if (g->NumRows() == 0) continue;
    SubMatrix<BaseFloat> part = appended.RowRange(at, g->NumRows());
    g->CopyToMat(&part);
    at += g->NumRows();
  }
  m->SwapFullMatrix(&appended);
}

}  // namespace kaldi

TABLIO_END_NAMESPACE
#endif  // TABLIO_HEADER_IMPLEMENTATION
