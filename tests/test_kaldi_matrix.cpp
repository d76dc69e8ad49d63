// The facade's matrix and vector classes as Kaldi's programs use them: views that write
// through to their parents, Kaldi's element-wise operations, sizes checked where Kaldi
// asserts, and bytes written exactly as tablio::matrix and tablio::vector write them.
#include <tablio/kaldi.hpp>

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace kaldi = tablio::kaldi;
using namespace kaldi;

namespace {

using test::written_by_kaldi;

// A rows x cols matrix whose value at (r, c) is 10 r + c.
Matrix<float> counting(MatrixIndexT rows, MatrixIndexT cols) {
  Matrix<float> m(rows, cols);
  for (MatrixIndexT r = 0; r < rows; ++r)
    for (MatrixIndexT c = 0; c < cols; ++c) m(r, c) = static_cast<float>(10 * r + c);
  return m;
}

Vector<float> vec(std::initializer_list<float> values) {
  return Vector<float>(tablio::vector<float>(values));
}

// What tablio::matrix writes for the same values.
std::string written_by_tablio(const tablio::matrix<float>& m, bool binary) {
  std::string out;
  tablio::writer w = tablio::memory_writer(out);
  m.write_kaldi(w, binary);
  w.close();
  return out;
}

// Kaldi code takes matrices by MatrixBase pointer (copy-matrix's ApplySoftMaxPerRow).
void softmax_per_row(MatrixBase<BaseFloat>* mat) {
  for (int32 i = 0; i < mat->NumRows(); i++) mat->Row(i).ApplySoftMax();
}

std::string temp_path(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "tablio-kaldi-matrix";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

}  // namespace

TEST_CASE("Matrix is a MatrixBase whose views write through", "[kaldi][matrix]") {
  Matrix<float> m = counting(4, 5);
  MatrixBase<float>* base = &m;
  CHECK(base->NumRows() == 4);
  CHECK(base->NumCols() == 5);
  CHECK(base->Stride() == 5);
  CHECK(base->Data() == m.Data());
  CHECK(m.RowData(2) == m.Data() + 10);
  CHECK(m.SizeInBytes() == 4 * 5 * sizeof(float));

  SubMatrix<float> sub = m.Range(1, 2, 2, 3);  // rows 1-2, columns 2-4
  CHECK(sub.NumRows() == 2);
  CHECK(sub.NumCols() == 3);
  CHECK(sub.Stride() == 5);
  CHECK(sub(0, 0) == 12.0f);
  CHECK(sub(1, 2) == 24.0f);
  sub(1, 1) = -1.0f;
  CHECK(m(2, 3) == -1.0f);
  sub.Set(7.0f);  // row by row: the columns outside stay
  CHECK(m(1, 1) == 11.0f);
  CHECK(m(1, 2) == 7.0f);
  CHECK(m(2, 4) == 7.0f);
  CHECK(m(3, 2) == 32.0f);

  m.RowRange(3, 1).Add(1.0f);
  CHECK(m(3, 0) == 31.0f);
  CHECK(m(2, 0) == 20.0f);
  m.ColRange(0, 1).Scale(2.0f);
  CHECK(m(3, 0) == 62.0f);
  CHECK(m(3, 1) == 32.0f);

  // A view of a view, and a view of a const matrix (writable, as Kaldi's).
  SubMatrix<float> inner = sub.Range(1, 1, 1, 2);
  inner.SetZero();
  CHECK(m(2, 3) == 0.0f);
  CHECK(m(2, 4) == 0.0f);
  const Matrix<float>& constant = m;
  SubMatrix<float> from_const(constant, 0, 1, 0, 1);
  from_const(0, 0) = 99.0f;
  CHECK(m(0, 0) == 99.0f);
  SubMatrix<float> copy_of_view(sub);  // copies view the same values
  CHECK(copy_of_view.Data() == sub.Data());

  // Rows as vectors.
  SubVector<float> row = m.Row(1);
  CHECK(row.Dim() == 5);
  row(0) = 5.0f;
  CHECK(m(1, 0) == 5.0f);
  CHECK(constant.Row(3)(1) == 32.0f);
  SubVector<float> row_again(m, 1);
  CHECK(row_again.Data() == m.RowData(1));

  // Kaldi code passes &matrix where a MatrixBase* is taken.
  Matrix<float> probs(2, 3);
  probs.Row(1).Set(2.0f);
  softmax_per_row(&probs);
  CHECK(probs(0, 0) == Approx(1.0 / 3));
  CHECK(probs(1, 2) == Approx(1.0 / 3));
  CHECK(probs.Row(0).Sum() == Approx(1.0));

  // An explicit view of raw memory, with its own stride.
  std::vector<double> raw(12, 0.0);
  SubMatrix<double> strided(raw.data(), 3, 2, 4);
  strided(2, 1) = 3.5;
  CHECK(raw[9] == 3.5);
  SubMatrix<double> empty_view(raw.data(), 0, 0, 0);
  CHECK(empty_view.NumRows() == 0);
}

TEST_CASE("views refuse what is not inside their parent", "[kaldi][matrix][bad]") {
  Matrix<float> m = counting(3, 4);
  CHECK_THROWS_AS(m.Range(0, 4, 0, 1), tablio::usage_error);
  CHECK_THROWS_AS(m.Range(2, 2, 0, 1), tablio::usage_error);
  CHECK_THROWS_AS(m.Range(0, 1, 3, 2), tablio::usage_error);
  CHECK_THROWS_AS(m.Range(-1, 1, 0, 1), tablio::usage_error);
  CHECK_THROWS_AS(m.Range(0, 1, 0, -1), tablio::usage_error);
  CHECK_THROWS_AS(m.Range(0, 0, 0, 2), tablio::usage_error);  // rows alone zero
  CHECK_THROWS_WITH(m.RowRange(1, 3), Catch::Contains("SubMatrix rows") && Catch::Contains("3"));
  CHECK_THROWS_AS(m.ColRange(4, 1), tablio::usage_error);
  CHECK(m.Range(3, 0, 4, 0).NumRows() == 0);  // both zero: an empty view, as Kaldi's
  CHECK_THROWS_WITH(m.Row(3), Catch::Contains("Row: index 3 is outside a size of 3"));
  CHECK_THROWS_AS(m.Row(-1), tablio::usage_error);
  CHECK_THROWS_AS(SubVector<float>(m, 3), tablio::usage_error);
  std::vector<float> raw(8);
  CHECK_THROWS_AS(SubMatrix<float>(raw.data(), 2, 4, 3), tablio::usage_error);  // stride < columns

  Vector<float> v(4);
  CHECK_THROWS_AS(v.Range(2, 3), tablio::usage_error);
  CHECK_THROWS_AS(v.Range(-1, 1), tablio::usage_error);
  CHECK_THROWS_AS(SubVector<float>(v, 1, -1), tablio::usage_error);
  CHECK(v.Range(4, 0).Dim() == 0);
}

TEST_CASE("CopyFromMat and its kin copy into a matrix of the right size", "[kaldi][matrix]") {
  const Matrix<float> m = counting(2, 3);

  Matrix<double> d(2, 3);
  d.CopyFromMat(m);
  CHECK(d(1, 2) == 12.0);
  Matrix<float> t(3, 2);
  t.CopyFromMat(m, kTrans);
  CHECK(t(2, 1) == 12.0f);
  CHECK(t(0, 1) == 10.0f);
  t.Range(0, 2, 0, 2).CopyFromMat(d.Range(0, 2, 1, 2), kTrans);  // views, of the other precision
  CHECK(t(0, 0) == 1.0f);
  CHECK(t(0, 1) == 11.0f);
  CHECK(t(1, 0) == 2.0f);

  Matrix<float> wrong(3, 3);
  CHECK_THROWS_WITH(wrong.CopyFromMat(m), Catch::Contains("CopyFromMat") && Catch::Contains("3x3 and 2x3"));
  CHECK_THROWS_AS(t.CopyFromMat(m), tablio::usage_error);
  CHECK_THROWS_AS(d.CopyFromMat(m, kTrans), tablio::usage_error);

  // paste-feats' AppendFeats: columns side by side, through views of both.
  Matrix<float> out(2, 5);
  out.Range(0, 2, 0, 3).CopyFromMat(m.Range(0, 2, 0, 3));
  out.Range(0, 2, 3, 2).CopyFromMat(m.Range(0, 2, 1, 2));
  CHECK(out(1, 2) == 12.0f);
  CHECK(out(1, 3) == 11.0f);
  CHECK(out(0, 4) == 2.0f);

  // Overlapping views of one matrix copy as if through a temporary.
  Matrix<float> shift = counting(3, 3);
  shift.Range(1, 2, 0, 3).CopyFromMat(shift.Range(0, 2, 0, 3));
  CHECK(shift(1, 0) == 0.0f);
  CHECK(shift(2, 2) == 12.0f);
  Matrix<float> square = counting(3, 3);
  square.CopyFromMat(square, kTrans);
  CHECK(square(0, 2) == 20.0f);
  CHECK(square(2, 0) == 2.0f);

  Matrix<float> rows(2, 3);
  rows.CopyRowsFromVec(vec({1, 2, 3}));
  CHECK(rows(1, 2) == 3.0f);
  rows.CopyRowsFromVec(vec({1, 2, 3, 4, 5, 6}));
  CHECK(rows(1, 0) == 4.0f);
  rows.CopyColsFromVec(vec({1, 2, 3, 4, 5, 6}));
  CHECK(rows(1, 0) == 2.0f);
  CHECK(rows(0, 2) == 5.0f);
  rows.CopyColsFromVec(vec({7, 8}));
  CHECK(rows(1, 1) == 8.0f);
  rows.CopyRowFromVec(vec({-1, -2, -3}), 0);
  CHECK(rows(0, 2) == -3.0f);
  rows.CopyColFromVec(vec({9, 9}), 1);
  CHECK(rows(0, 1) == 9.0f);
  CHECK(rows(1, 1) == 9.0f);
  CHECK_THROWS_AS(rows.CopyRowsFromVec(vec({1, 2})), tablio::usage_error);
  CHECK_THROWS_AS(rows.CopyColsFromVec(vec({1, 2, 3})), tablio::usage_error);
  CHECK_THROWS_AS(rows.CopyRowFromVec(vec({1, 2}), 0), tablio::usage_error);
  CHECK_THROWS_AS(rows.CopyRowFromVec(vec({1, 2, 3}), 2), tablio::usage_error);
  CHECK_THROWS_AS(rows.CopyColFromVec(vec({1, 2}), 3), tablio::usage_error);
  // A row of the matrix itself, copied into the other rows.
  rows.CopyRowsFromVec(rows.Row(1));
  CHECK(rows(0, 0) == rows(1, 0));
}

TEST_CASE("MatrixBase's arithmetic and element-wise functions", "[kaldi][matrix]") {
  Matrix<float> m(2, 2);
  m.Set(3.0f);
  m.Scale(2.0f);
  m.Add(-1.0f);
  CHECK(m(1, 1) == 5.0f);
  CHECK(m.Sum() == 20.0f);
  m.SetUnit();
  CHECK(m(0, 0) == 1.0f);
  CHECK(m(0, 1) == 0.0f);
  Matrix<float> rect(2, 3);
  rect.SetUnit();
  CHECK(rect.Sum() == 2.0f);

  Matrix<float> a = counting(2, 3), b(3, 2);
  b.Set(1.0f);
  a.AddMat(2.0f, b, kTrans);
  CHECK(a(1, 2) == 14.0f);
  a.AddMat(-1.0f, counting(2, 3));
  CHECK(a(1, 2) == 2.0f);
  CHECK_THROWS_AS(a.AddMat(1.0f, b), tablio::usage_error);
  Matrix<float> self = counting(2, 2);
  self.AddMat(1.0f, self, kTrans);  // A + A^T, read before written
  CHECK(self(0, 1) == 11.0f);
  CHECK(self(1, 0) == 11.0f);

  Matrix<float> x = counting(2, 2), y(2, 2);
  y.Set(2.0f);
  x.MulElements(y);
  CHECK(x(1, 1) == 22.0f);
  x.DivElements(y);
  CHECK(x(1, 0) == 10.0f);
  CHECK_THROWS_AS(x.MulElements(Matrix<float>(1, 2)), tablio::usage_error);

  // copy-matrix --apply-log: floor, then log, so that zeros do not become -inf.
  Matrix<float> p = counting(2, 2);
  p(0, 0) = 0.0f;
  p(0, 1) = -3.0f;
  p.ApplyFloor(1.0e-20f);
  CHECK(p(0, 1) == 1.0e-20f);
  p.ApplyLog();
  CHECK(p(0, 0) == Approx(std::log(1.0e-20f)));
  CHECK(p(1, 1) == Approx(std::log(11.0f)));
  p.ApplyExp();
  CHECK(p(1, 1) == Approx(11.0f));
  Matrix<float> negative(1, 1);
  negative(0, 0) = -1.0f;
  CHECK_THROWS_AS(negative.ApplyLog(), tablio::usage_error);
  Matrix<float> zero(1, 1);
  zero.ApplyLog();
  CHECK(zero(0, 0) == -std::numeric_limits<float>::infinity());

  Matrix<float> q = counting(2, 2);
  q.ApplyCeiling(10.0f);
  CHECK(q(1, 1) == 10.0f);
  CHECK(q(0, 1) == 1.0f);
  q.ApplyPow(2.0f);
  CHECK(q(1, 1) == 100.0f);
  q.ApplyPow(0.5f);
  CHECK(q(1, 1) == 10.0f);
  q.ApplyPow(3.0f);
  CHECK(q(0, 1) == 1.0f);
  CHECK(q(1, 0) == Approx(1000.0f));
  q.ApplyPow(1.0f);
  CHECK(q(1, 0) == Approx(1000.0f));
  Matrix<float> signs(1, 4);
  signs(0, 0) = -4.0f;
  signs(0, 1) = 9.0f;
  signs(0, 2) = 0.0f;
  signs(0, 3) = -0.5f;
  Matrix<float> roots(signs);
  CHECK_THROWS_AS(roots.ApplyPow(0.5f), tablio::usage_error);
  roots = signs;
  roots.ApplyPowAbs(0.5f, true);
  CHECK(roots(0, 0) == -2.0f);
  CHECK(roots(0, 1) == 3.0f);
  roots = signs;
  roots.ApplyPowAbs(2.0f);
  CHECK(roots(0, 0) == 16.0f);
  roots = signs;
  roots.ApplyPowAbs(-1.0f, true);
  CHECK(roots(0, 2) == 0.0f);  // zero stays zero for a negative power
  CHECK(roots(0, 3) == -2.0f);
  Matrix<float> infinite(1, 1);
  CHECK_THROWS_AS(infinite.ApplyPow(-1.0f), tablio::usage_error);  // 0^-1: infinity
  Matrix<float> h(signs);
  h.ApplyHeaviside();
  CHECK(h(0, 0) == 0.0f);
  CHECK(h(0, 1) == 1.0f);
  CHECK(h(0, 2) == 0.0f);
  Matrix<float> abs_values(signs);
  abs_values.ApplyAbs();
  CHECK(abs_values(0, 0) == 4.0f);
  CHECK(abs_values(0, 3) == 0.5f);

  // Only the view's values change.
  Matrix<float> whole = counting(3, 3);
  whole.Range(1, 1, 1, 2).ApplyPow(2.0f);
  CHECK(whole(1, 1) == 121.0f);
  CHECK(whole(1, 0) == 10.0f);
  CHECK(whole(2, 2) == 22.0f);
}

TEST_CASE("MatrixBase's reductions and comparisons", "[kaldi][matrix]") {
  const Matrix<float> m = counting(2, 3);
  CHECK(m.Sum() == 36.0f);
  CHECK(m.Max() == 12.0f);
  CHECK(m.Min() == 0.0f);
  CHECK(m.Range(1, 1, 0, 2).Max() == 11.0f);
  CHECK(m.Range(0, 2, 1, 1).Min() == 1.0f);
  CHECK_THROWS_AS(Matrix<float>().Max(), tablio::usage_error);
  CHECK_THROWS_AS(Matrix<float>().Min(), tablio::usage_error);
  Matrix<float> three_four(1, 2);
  three_four(0, 0) = 3.0f;
  three_four(0, 1) = -4.0f;
  CHECK(three_four.FrobeniusNorm() == 5.0f);
  CHECK(Matrix<float>(2, 2).IsZero());
  CHECK_FALSE(three_four.IsZero());
  Matrix<float> tiny(1, 1);
  tiny(0, 0) = 1.0e-6f;
  CHECK(tiny.IsZero());
  CHECK_FALSE(tiny.IsZero(1.0e-7f));

  Matrix<float> close_to_m(m);
  close_to_m(1, 2) += 0.01f;
  CHECK(close_to_m.ApproxEqual(m));
  CHECK_FALSE(close_to_m.ApproxEqual(m, 1.0e-6f));
  CHECK_FALSE(close_to_m.Equal(m));
  CHECK(Matrix<float>(m).Equal(m));
  CHECK(m == Matrix<float>(m));
  CHECK(m != close_to_m);
  CHECK_FALSE(m == Matrix<float>(3, 2));  // another size is another matrix
  CHECK_THROWS_AS(m.Equal(Matrix<float>(3, 2)), tablio::usage_error);
  CHECK_THROWS_AS(m.ApproxEqual(Matrix<float>(3, 2)), tablio::usage_error);
  CHECK(SameDim(m, Matrix<double>(2, 3)));
  CHECK_FALSE(SameDim(m, Matrix<double>(3, 2)));
}

TEST_CASE("Matrix owns its values: copies, moves, Resize, Swap, Transpose", "[kaldi][matrix]") {
  Matrix<float> m = counting(3, 4);
  SubMatrix<float> part = m.Range(1, 2, 1, 2);

  // From any MatrixBase, implicitly (as a table's Write takes it); with kTrans; from the
  // other precision, explicitly.
  Matrix<float> copied = part;
  CHECK(copied.NumRows() == 2);
  CHECK(copied.Stride() == 2);
  CHECK(copied(1, 1) == 22.0f);
  copied(0, 0) = -5.0f;
  CHECK(m(1, 1) == 11.0f);  // a deep copy
  Matrix<float> transposed(part, kTrans);
  CHECK(transposed(1, 0) == 12.0f);
  Matrix<double> wide(m);
  CHECK(wide(2, 3) == 23.0);
  Matrix<float> narrow(wide, kTrans);
  CHECK(narrow.NumRows() == 4);
  CHECK(narrow(3, 2) == 23.0f);
  const tablio::matrix<float>& plain = m;  // tablio's own matrix, as before
  CHECK(plain.num_cols() == 4);
  CHECK(Matrix<float>(plain) == m);

  // Copies and moves re-point the view at the new owner's values.
  Matrix<float> copy(m);
  CHECK(copy.Data() != m.Data());
  CHECK(copy == m);
  const float* values = m.Data();
  Matrix<float> moved(std::move(m));
  CHECK(moved.Data() == values);
  CHECK(moved(2, 3) == 23.0f);
  CHECK(m.NumRows() == 0);  // NOLINT: a moved-from matrix is empty
  CHECK(m.NumCols() == 0);
  m = std::move(moved);
  CHECK(m.Data() == values);
  CHECK(moved.NumRows() == 0);  // NOLINT
  copy = m;
  CHECK(copy.Data() != m.Data());
  CHECK(copy == m);
  std::vector<Matrix<float>> many;
  for (int i = 0; i < 20; ++i) many.push_back(counting(i + 1, 2));  // moved as the vector grows
  for (int i = 0; i < 20; ++i)
    CHECK(many[static_cast<std::size_t>(i)](i, 1) == static_cast<float>(10 * i + 1));
  Matrix<float> from_table;
  from_table = many[3];
  CHECK(from_table.NumRows() == 4);

  // Assigning a view of the matrix itself, of another size.
  Matrix<float> shrink = counting(3, 3);
  shrink = shrink.Range(1, 2, 1, 1);
  CHECK(shrink.NumRows() == 2);
  CHECK(shrink.NumCols() == 1);
  CHECK(shrink(1, 0) == 21.0f);
  Matrix<float> same = counting(2, 2);
  same = static_cast<const MatrixBase<float>&>(same);
  CHECK(same(1, 1) == 11.0f);

  Matrix<float> r = counting(2, 3);
  r.Resize(3, 2, kCopyData);
  CHECK(r(1, 1) == 11.0f);
  CHECK(r(2, 0) == 0.0f);
  CHECK(r(0, 1) == 1.0f);
  r.Resize(4, 4, kCopyData);
  CHECK(r(1, 1) == 11.0f);
  CHECK(r(1, 2) == 0.0f);
  CHECK(r(3, 3) == 0.0f);
  CHECK(r.Stride() == 4);
  const float* kept = r.Data();
  r.Resize(4, 4, kCopyData);  // the same size: nothing to do
  CHECK(r.Data() == kept);
  CHECK(r(1, 1) == 11.0f);
  r.Resize(2, 2, kUndefined, kStrideEqualNumCols);
  CHECK(r.IsZero());
  r.Resize(0, 0);
  CHECK(r.NumRows() == 0);
  Matrix<float> empty;
  empty.Resize(2, 2, kCopyData);
  CHECK(empty.IsZero());
  CHECK_THROWS_AS(r.Resize(0, 3), tablio::usage_error);
  CHECK_THROWS_AS(r.Resize(-1, 2), tablio::usage_error);
  CHECK_THROWS_AS(Matrix<float>(2, 0), tablio::usage_error);

  Matrix<float> s1 = counting(1, 2), s2 = counting(3, 1);
  const float* d1 = s1.Data();
  s1.Swap(&s2);
  CHECK(s2.Data() == d1);
  CHECK(s1.NumRows() == 3);
  CHECK(s2(0, 1) == 1.0f);

  Matrix<float> t = counting(2, 3);
  t.Transpose();
  CHECK(t.NumRows() == 3);
  CHECK(t.NumCols() == 2);
  CHECK(t(2, 1) == 12.0f);
  Matrix<float> sq = counting(2, 2);
  sq.Transpose();
  CHECK(sq(0, 1) == 10.0f);
  MatrixBase<float>& t_base = t;
  CHECK_THROWS_AS(t_base.Transpose(), tablio::usage_error);  // the base's: square only

  Matrix<float> rows = counting(3, 2);
  rows.RemoveRow(1);
  CHECK(rows.NumRows() == 2);
  CHECK(rows(1, 1) == 21.0f);
  CHECK_THROWS_AS(rows.RemoveRow(2), tablio::usage_error);
  rows.RemoveRow(0);
  rows.RemoveRow(0);
  CHECK(rows.NumRows() == 0);
  CHECK(rows.NumCols() == 0);

  // ReadKaldiObject's ranges, and tablio's apply_range, keep the view right.
  Matrix<float> ranged = counting(4, 4);
  apply_range(ranged, "1:2,2:3");
  CHECK(ranged.NumRows() == 2);
  CHECK(ranged(1, 1) == 23.0f);
  CHECK(ranged.Data() == ranged.RowData(0));
  Vector<float> vranged = vec({1, 2, 3, 4});
  apply_range(vranged, "1:2");
  CHECK(vranged.Dim() == 2);
  CHECK(vranged(1) == 3.0f);
}

TEST_CASE("VectorBase, Vector and SubVector", "[kaldi][vector]") {
  Vector<float> v = vec({1, 2, 3, 4});
  VectorBase<float>* base = &v;
  CHECK(base->Dim() == 4);
  CHECK(v.SizeInBytes() == 16);
  SubVector<float> mid = v.Range(1, 2);
  mid(0) = 20.0f;
  CHECK(v(1) == 20.0f);
  mid.Scale(2.0f);
  CHECK(v(2) == 6.0f);
  const Vector<float>& constant = v;
  CHECK(constant.Range(3, 1)(0) == 4.0f);
  std::vector<float> raw{5, 6, 7};
  SubVector<float> over_raw(raw.data(), 3);
  over_raw.Add(1.0f);
  CHECK(raw[2] == 8.0f);

  Vector<double> d(4);
  d.CopyFromVec(v);
  CHECK(d(1) == 40.0);
  Vector<float> w(4);
  w.CopyFromPtr(v.Data(), 4);
  CHECK(w == v);
  CHECK_THROWS_AS(w.CopyFromPtr(v.Data(), 3), tablio::usage_error);
  CHECK_THROWS_AS(w.CopyFromVec(Vector<float>(3)), tablio::usage_error);
  Vector<float> shifted = vec({1, 2, 3, 4, 5});
  shifted.Range(1, 4).CopyFromVec(shifted.Range(0, 4));  // overlapping, as memmove
  CHECK(shifted == vec({1, 1, 2, 3, 4}));

  Vector<float> a = vec({1, 2, 3});
  a.AddVec(2.0f, Vector<double>(vec({1, 1, 1})));
  CHECK(a == vec({3, 4, 5}));
  a.AddVec(-1.0f, a);
  CHECK(a.IsZero());
  Vector<float> b = vec({2, 4, 6});
  b.MulElements(vec({0.5f, 0.25f, 2}));
  CHECK(b == vec({1, 1, 12}));
  b.DivElements(vec({1, 2, 3}));
  CHECK(b == vec({1, 0.5f, 4}));
  CHECK_THROWS_AS(b.AddVec(1.0f, vec({1})), tablio::usage_error);
  CHECK_THROWS_AS(b.MulElements(vec({1})), tablio::usage_error);

  Vector<float> f = vec({-1, 0.5f, 3});
  CHECK(f.ApplyFloor(0.0f) == 1);
  MatrixIndexT count = -1;
  f.ApplyCeiling(1.0f, &count);
  CHECK(count == 1);
  CHECK(f == vec({0, 0.5f, 1}));
  f.ApplyExp();
  CHECK(f(0) == 1.0f);
  f.ApplyLog();
  CHECK(f(2) == Approx(1.0f));
  CHECK_THROWS_AS(vec({-1}).ApplyLog(), tablio::usage_error);
  Vector<float> pw = vec({-2, 3});
  pw.ApplyPow(2.0f);
  CHECK(pw == vec({4, 9}));
  Vector<float> pa = vec({-8, 27});
  pa.ApplyPowAbs(1.0f / 3, true);
  CHECK(pa(0) == Approx(-2.0f));
  CHECK(pa(1) == Approx(3.0f));
  pa.ApplyAbs();
  CHECK(pa(0) == Approx(2.0f));
  Vector<float> ab = vec({-1, 1});
  ab.Abs();
  CHECK(ab == vec({1, 1}));

  // Softmax returns the log of the sum of the exponentials.
  Vector<float> s = vec({1, 2, 3});
  const double log_sum = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  CHECK(s.ApplySoftMax() == Approx(log_sum));
  CHECK(s.Sum() == Approx(1.0));
  CHECK(s(2) == Approx(std::exp(3.0 - log_sum)));
  Vector<float> big = vec({1000, 1000});  // no overflow: computed from the maximum
  CHECK(big.ApplySoftMax() == Approx(1000 + std::log(2.0)));
  CHECK(big(0) == 0.5f);
  Vector<float> ls = vec({1, 2, 3});
  CHECK(ls.ApplyLogSoftMax() == Approx(log_sum));
  CHECK(ls(0) == Approx(1 - log_sum));
  CHECK(ls(2) == Approx(3 - log_sum));

  const Vector<float> r = vec({3, -4, 0, 1});
  CHECK(r.Sum() == 0.0f);
  CHECK(vec({1, std::exp(1.0f), std::exp(2.0f)}).SumLog() == Approx(3.0));
  CHECK(r.Max() == 3.0f);
  CHECK(r.Min() == -4.0f);
  MatrixIndexT at = -1;
  CHECK(r.Min(&at) == -4.0f);
  CHECK(at == 1);
  CHECK(r.Max(&at) == 3.0f);
  CHECK(at == 0);
  CHECK(Vector<float>().Max() == -std::numeric_limits<float>::infinity());
  CHECK_THROWS_AS(Vector<float>().Max(&at), tablio::usage_error);
  CHECK(r.Norm(0.0f) == 3.0f);
  CHECK(r.Norm(1.0f) == 8.0f);
  CHECK(r.Norm(2.0f) == Approx(std::sqrt(26.0)));
  CHECK(r.Norm(3.0f) == Approx(std::cbrt(27.0 + 64 + 1)));
  CHECK(r.Norm(std::numeric_limits<float>::infinity()) == 4.0f);
  CHECK_THROWS_AS(r.Norm(-1.0f), tablio::usage_error);
  CHECK(vec({1e-7f}).IsZero());
  CHECK_FALSE(vec({1e-5f}).IsZero());
  CHECK(r.ApproxEqual(vec({3, -4, 0, 1.01f})));
  CHECK_FALSE(r.ApproxEqual(vec({3, -4, 0, 1.01f}), 0.0f));
  CHECK_THROWS_AS(r.ApproxEqual(vec({1})), tablio::usage_error);
  CHECK(VecVec(r, vec({1, 1, 1, 1})) == 0.0f);
  CHECK(VecVec(r, Vector<double>(r)) == 26.0f);
  CHECK_THROWS_AS(VecVec(r, vec({1})), tablio::usage_error);

  // Rows and columns of matrices.
  const Matrix<float> m = counting(2, 3);
  Vector<float> flat(6);
  flat.CopyRowsFromMat(m);
  CHECK(flat == vec({0, 1, 2, 10, 11, 12}));
  flat.CopyColsFromMat(m);
  CHECK(flat == vec({0, 10, 1, 11, 2, 12}));
  Vector<float> row(3), col(2);
  row.CopyRowFromMat(m, 1);
  CHECK(row == vec({10, 11, 12}));
  col.CopyColFromMat(Matrix<double>(m), 2);
  CHECK(col == vec({2, 12}));
  CHECK_THROWS_AS(flat.CopyRowsFromMat(Matrix<float>(1, 1)), tablio::usage_error);
  CHECK_THROWS_AS(row.CopyRowFromMat(m, 2), tablio::usage_error);
  CHECK_THROWS_AS(col.CopyColFromMat(m, 3), tablio::usage_error);
  CHECK_THROWS_AS(col.CopyRowFromMat(m, 0), tablio::usage_error);

  // Owning: copies, moves, Resize, Swap, RemoveElement.
  Vector<float> from_view = m.Row(1);
  CHECK(from_view == vec({10, 11, 12}));
  Vector<double> other_precision(from_view);
  CHECK(other_precision(2) == 12.0);
  const float* values = from_view.Data();
  Vector<float> moved(std::move(from_view));
  CHECK(moved.Data() == values);
  CHECK(from_view.Dim() == 0);  // NOLINT
  Vector<float> grown = vec({1, 2});
  grown.Resize(4, kCopyData);
  CHECK(grown == vec({1, 2, 0, 0}));
  grown.Resize(1, kCopyData);
  CHECK(grown == vec({1}));
  grown.Resize(3);
  CHECK(grown == vec({0, 0, 0}));
  Vector<float> x = vec({1}), y = vec({2, 3});
  x.Swap(&y);
  CHECK(x == vec({2, 3}));
  CHECK(y == vec({1}));
  x.RemoveElement(0);
  CHECK(x == vec({3}));
  CHECK_THROWS_AS(x.RemoveElement(1), tablio::usage_error);
  Vector<float> self = vec({1, 2, 3});
  self = self.Range(1, 2);
  CHECK(self == vec({2, 3}));
  const tablio::vector<float>& plain = self;
  CHECK(plain.dim() == 2);
}

TEST_CASE("AddRowSumMat and AddColSumMat sum a matrix's rows or columns", "[kaldi][vector]") {
  const Matrix<float> m = counting(3, 2);  // rows 0 1, 10 11, 20 21
  Vector<float> columns(2);
  columns.Set(std::numeric_limits<float>::quiet_NaN());
  columns.AddRowSumMat(1.0f, m, 0.0f);  // beta 0 reads nothing, as Kaldi's BLAS call
  CHECK(columns(0) == 30.0f);
  CHECK(columns(1) == 33.0f);
  columns.AddRowSumMat(2.0f, m, 0.5f);
  CHECK(columns(1) == 82.5f);
  Vector<float> rows(3);
  rows.Set(1.0f);
  rows.AddColSumMat(1.0f, m);
  CHECK(rows(2) == 42.0f);
  CHECK_THROWS_AS(rows.AddRowSumMat(1.0f, m), tablio::usage_error);
  CHECK_THROWS_AS(columns.AddColSumMat(1.0f, m), tablio::usage_error);
}

TEST_CASE("a view is written with exactly the bytes of the equal Matrix", "[kaldi][matrix][io]") {
  Matrix<float> m = counting(4, 5);
  m(2, 3) = 0.1f;
  const SubMatrix<float> sub = m.Range(1, 3, 1, 3);  // stride 5, 3 columns
  REQUIRE(sub.Stride() != sub.NumCols());
  const Matrix<float> packed(sub);
  for (bool binary : {true, false}) {
    const std::string bytes = written_by_kaldi(sub, binary);
    CHECK(bytes == written_by_kaldi(packed, binary));
    CHECK(bytes == written_by_tablio(packed, binary));
  }
  CHECK(written_by_kaldi(sub, true).substr(0, 3) == "FM ");
  CHECK(written_by_kaldi(sub, false) == " [\n  11 12 13 \n  21 22 0.1 \n  31 32 33 ]\n");
  std::ostringstream streamed;
  streamed << sub;
  CHECK(streamed.str() == written_by_kaldi(sub, false));
  CHECK(written_by_kaldi(Matrix<float>(), false) == " [ ]\n");
  CHECK(written_by_kaldi(m.Range(0, 0, 0, 0), true) == written_by_kaldi(Matrix<float>(), true));
  CHECK(written_by_kaldi(Matrix<double>(sub), true).substr(0, 3) == "DM ");

  // A row of a matrix, and a range of a vector, written as the Vector holding their values.
  const SubVector<float> row = sub.Row(1);
  for (bool binary : {true, false})
    CHECK(written_by_kaldi(row, binary) == written_by_kaldi(Vector<float>(row), binary));
  CHECK(written_by_kaldi(row, false) == " [ 21 22 0.1 ]\n");
  std::ostringstream vstreamed;
  vstreamed << row;
  CHECK(vstreamed.str() == " [ 21 22 0.1 ]\n");
}

TEST_CASE("Read: a Matrix resizes, a view must be of the size read", "[kaldi][matrix][io]") {
  const Matrix<float> source = counting(2, 3);
  for (bool binary : {true, false}) {
    const std::string bytes = written_by_kaldi(source, binary) + "rest";
    Matrix<double> m(5, 5);
    std::istringstream is(bytes);
    m.Read(is, binary);
    CHECK(m.NumRows() == 2);
    CHECK(m(1, 2) == 12.0);
    std::istringstream again(bytes);
    m.Read(again, binary, true);  // adds what it reads
    CHECK(m(1, 2) == 24.0);

    Matrix<float> big = counting(3, 4);
    SubMatrix<float> window = big.Range(1, 2, 1, 3);
    std::istringstream into_view(bytes);
    window.Read(into_view, binary);
    CHECK(big(2, 3) == 12.0f);
    CHECK(big(1, 1) == 0.0f);
    CHECK(big(1, 0) == 10.0f);
    std::string rest;
    into_view >> rest;
    CHECK(rest == "rest");  // no more than the matrix was taken
    std::istringstream wrong(bytes);
    CHECK_THROWS_AS(big.Range(0, 3, 0, 3).Read(wrong, binary), tablio::format_error);

    Vector<float> v = vec({1, 2, 3});
    const std::string vbytes = written_by_kaldi(v, binary);
    Vector<float> back;
    std::istringstream vis(vbytes);
    back.Read(vis, binary);
    CHECK(back == v);
    std::istringstream vadd(vbytes);
    back.Read(vadd, binary, true);
    CHECK(back == vec({2, 4, 6}));
    Vector<float> four(4);
    std::istringstream vsub(vbytes);
    four.Range(1, 3).Read(vsub, binary);
    CHECK(four == vec({0, 1, 2, 3}));
    std::istringstream vwrong(vbytes);
    CHECK_THROWS_AS(four.Range(0, 2).Read(vwrong, binary), tablio::format_error);
  }
}

TEST_CASE("a SubMatrix written to a table reads back as the equal Matrix", "[kaldi][matrix][tables]") {
  const std::string path = temp_path("sub.ark"), plain_path = temp_path("plain.ark");
  Matrix<float> m = counting(5, 6);
  const SubMatrix<float> sub = m.Range(1, 3, 2, 3);
  const Matrix<float> expected(sub);
  {
    BaseFloatMatrixWriter w("ark:" + path);
    w.Write("k", Matrix<float>(sub));
    w.Write("implicit", sub);
    w.Write("row", m.RowRange(4, 1));
    CHECK(w.Close());
    // The same values as tablio::matrix, through tablio's own table: the same bytes.
    tablio::table_writer<tablio::holder<tablio::matrix<float>>> plain("ark:" + plain_path);
    plain.write("k", static_cast<const tablio::matrix<float>&>(expected));
    plain.write("implicit", static_cast<const tablio::matrix<float>&>(expected));
    plain.write("row", static_cast<const tablio::matrix<float>&>(Matrix<float>(m.RowRange(4, 1))));
    plain.close();
  }
  CHECK(test::read_file(path) == test::read_file(plain_path));
  SequentialBaseFloatMatrixReader r("ark:" + path);
  REQUIRE(!r.Done());
  CHECK(r.Key() == "k");
  CHECK(r.Value() == expected);
  r.Next();
  CHECK(r.Value() == expected);
  r.Next();
  CHECK(r.Value().NumRows() == 1);
  CHECK(r.Value()(0, 5) == 45.0f);
  r.Next();
  CHECK(r.Done());
  r.Close();

  RandomAccessDoubleMatrixReader doubles("ark:" + path);
  CHECK(doubles.Value("k")(2, 2) == 34.0);
  doubles.Close();  // (Windows removes no file that is open)

  // Vectors: a matrix row written as a Vector table entry.
  {
    BaseFloatVectorWriter vw("ark,t:" + path);
    vw.Write("row", m.Row(2));
    vw.Write("part", Vector<float>(m.Row(3).Range(1, 2)));
    CHECK(vw.Close());
  }
  RandomAccessBaseFloatVectorReader vr("ark:" + path);
  CHECK(vr.Value("row") == vec({20, 21, 22, 23, 24, 25}));
  CHECK(vr.Value("part") == vec({31, 32}));
  vr.Close();

  // A compressed table of a strided view holds what one of the packed matrix holds.
  {
    CompressedMatrixWriter cw("ark:" + path);
    cw.Write("k", CompressedMatrix(sub));
    CHECK(cw.Close());
  }
  SequentialCompressedMatrixReader cr("ark:" + path);
  CHECK(cr.Value().bytes() == CompressedMatrix(expected).bytes());
  cr.Close();
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST_CASE("CompressedMatrix from and into views", "[kaldi][matrix][compressed]") {
  Matrix<float> m = counting(12, 5);
  const SubMatrix<float> sub = m.Range(2, 10, 1, 3);
  const CompressedMatrix from_view(sub, kTwoByteAuto);
  const CompressedMatrix from_packed(Matrix<float>(sub), kTwoByteAuto);
  CHECK(from_view.bytes() == from_packed.bytes());
  CHECK(from_view.NumRows() == 10);
  CHECK(from_view.NumCols() == 3);
  CompressedMatrix recompressed;
  recompressed.CopyFromMat(Matrix<double>(sub).Range(0, 10, 0, 2), kOneByteAuto);  // strided doubles
  CHECK(recompressed.NumCols() == 2);
  CHECK(Matrix<float>(recompressed).ApproxEqual(Matrix<float>(sub.Range(0, 10, 0, 2)), 0.01f));

  // Into a Matrix: resized to fit (tablio's overload), transposed or not.
  Matrix<float> whole;
  from_view.CopyToMat(&whole);
  CHECK(whole.NumRows() == 10);
  CHECK(whole.ApproxEqual(Matrix<float>(sub), 1.0e-3f));
  Matrix<double> turned;
  from_view.CopyToMat(&turned, kTrans);
  CHECK(turned.NumRows() == 3);
  CHECK(turned(2, 9) == Approx(whole(9, 2)));
  CHECK(Matrix<float>(from_view) == whole);

  // Into a view: it must have the size, and only its values change.
  Matrix<float> target(12, 6);
  target.Set(-1.0f);
  SubMatrix<float> window = target.Range(1, 10, 2, 3);
  from_view.CopyToMat(&window);
  CHECK(target(1, 2) == whole(0, 0));
  CHECK(target(10, 4) == whole(9, 2));
  CHECK(target(1, 1) == -1.0f);
  CHECK(target(11, 2) == -1.0f);
  SubMatrix<float> across = target.Range(0, 3, 0, 6);
  CHECK_THROWS_AS(from_view.CopyToMat(&across), tablio::usage_error);
  CHECK_THROWS_AS(from_view.CopyToMat(&across, kTrans), tablio::usage_error);  // 3 x 6, not 3 x 10
  Matrix<float> transposed_target(3, 10);
  MatrixBase<float>* base = &transposed_target;
  from_view.CopyToMat(base, kTrans);
  CHECK(transposed_target(1, 4) == whole(4, 1));
  Matrix<float> by_copy(10, 3);
  by_copy.CopyFromMat(from_view);
  CHECK(by_copy == whole);
  CHECK_THROWS_AS(Matrix<float>(3, 3).CopyFromMat(from_view), tablio::usage_error);

  const CompressedMatrix empty;
  Matrix<float> none(2, 2);
  empty.CopyToMat(&none);
  CHECK(none.NumRows() == 0);
}

TEST_CASE("tablio's other codecs store Matrix and Vector as tablio's types", "[kaldi][matrix][io]") {
  using raw = tablio::raw<std::endian::little>;
  const Matrix<float> m = counting(2, 3);
  const Vector<double> v = Vector<double>(vec({1, 2}));
  std::string ours, theirs;
  {
    tablio::writer w = tablio::memory_writer(ours);
    tablio::encode_to<raw>(w, m);
    tablio::encode_to<raw>(w, v);
    w.close();
    tablio::writer t = tablio::memory_writer(theirs);
    tablio::encode_to<raw>(t, static_cast<const tablio::matrix<float>&>(m));
    tablio::encode_to<raw>(t, static_cast<const tablio::vector<double>&>(v));
    t.close();
  }
  CHECK(ours == theirs);
  tablio::reader r = tablio::memory_reader(ours, "raw");
  Matrix<float> m_back;
  Vector<double> v_back;
  tablio::decode_from<raw>(r, m_back);
  tablio::decode_from<raw>(r, v_back);
  CHECK(m_back == m);
  CHECK(m_back.Data() == m_back.RowData(0));
  CHECK(v_back == v);
}

TEST_CASE("a read that fails leaves a Matrix whose view matches its storage", "[kaldi][matrix][io][bad]") {
  const std::string whole = written_by_kaldi(counting(3, 3), true);
  for (const std::string& bad : {whole.substr(0, whole.size() - 5), std::string(" [ 1 2 \n 3 ]\n"),
                                 std::string("FM \4\x03\0\0\0\4\xff\0\0\0", 13)}) {
    const bool binary = bad[0] != ' ';
    Matrix<float> m = counting(2, 2);
    std::istringstream is(bad);
    CHECK_THROWS_AS(m.Read(is, binary), tablio::format_error);
    const tablio::matrix<float>& storage = m;
    CHECK(static_cast<std::size_t>(m.NumRows()) * static_cast<std::size_t>(m.NumCols()) == storage.size());
    CHECK(m.Data() == storage.data());
    CHECK(m.Stride() == m.NumCols());
    m.Resize(1, 1, kCopyData);  // usable afterwards
    CHECK(m.NumRows() == 1);
  }
}
