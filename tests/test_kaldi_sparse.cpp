// The facade's SparseVector, SparseMatrix and GeneralMatrix: Kaldi's bytes in both modes, the
// three forms of a GeneralMatrix through tables (Kaldi's own archives read and written back
// byte for byte), script ranges, and damaged input refused where Kaldi would write past a
// matrix.
#include <tablio/kaldi.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace kaldi = tablio::kaldi;
using namespace kaldi;

namespace {

using test::data_path;
using test::read_file;
using test::temp_dir;
using test::write_file;
using test::written_by_kaldi;

// Kaldi's binary int32 and float: a size byte, then the value's bytes (little-endian).
std::string int32_bytes(std::int32_t v) {
  char b[4];
  std::memcpy(b, &v, 4);
  return std::string("\x04", 1) + std::string(b, 4);
}
std::string float_bytes(float v) {
  char b[4];
  std::memcpy(b, &v, 4);
  return std::string("\x04", 1) + std::string(b, 4);
}

// Two rows of dimension 4: (1, 0.5) and (0, -2), (3, 0.25); then an empty one.
SparseMatrix<float> example() { return SparseMatrix<float>(4, {{{1, 0.5f}}, {{3, 0.25f}, {0, -2.0f}}, {}}); }

template <class T>
T read_back(const std::string& bytes, bool binary) {
  std::istringstream is(bytes);
  T t;
  t.Read(is, binary);
  return t;
}

std::string row_bytes(std::int32_t dim, std::vector<std::pair<std::int32_t, float>> pairs) {
  std::string s = "SV " + int32_bytes(dim) + int32_bytes(static_cast<std::int32_t>(pairs.size()));
  for (auto [i, v] : pairs) s += int32_bytes(i) + float_bytes(v);
  return s;
}

}  // namespace

TEST_CASE("sparse vectors and matrices are Kaldi's bytes in both modes", "[kaldi][facade][sparse]") {
  const SparseMatrix<float> m = example();
  REQUIRE(m.NumRows() == 3);
  REQUIRE(m.NumCols() == 4);
  CHECK(m.NumElements() == 3);
  CHECK(m.Row(1).GetElement(0) == std::pair<MatrixIndexT, float>{0, -2.0f});  // sorted by index
  CHECK(m.Sum() == -1.25f);

  const std::string binary = "SM " + int32_bytes(3) + row_bytes(4, {{1, 0.5f}}) +
                             row_bytes(4, {{0, -2.0f}, {3, 0.25f}}) + row_bytes(4, {});
  CHECK(written_by_kaldi(m, true) == binary);
  CHECK(written_by_kaldi(m, false) == "rows=3 dim=4 [ 1 0.5 ] dim=4 [ 0 -2 3 0.25 ] dim=4 [ ] \n");
  CHECK(read_back<SparseMatrix<float>>(binary, true) == m);
  CHECK(read_back<SparseMatrix<float>>(written_by_kaldi(m, false), false) == m);
  CHECK(read_back<SparseMatrix<double>>(binary, true).Row(1).GetElement(1).second == 0.25);

  // Kaldi's constructor sums pairs of one index and drops zeros.
  const SparseVector<float> v(5, {{4, 1.0f}, {2, 3.0f}, {4, 2.0f}, {1, 0.0f}});
  CHECK(v.NumElements() == 2);
  CHECK(v.GetElement(1) == std::pair<MatrixIndexT, float>{4, 3.0f});
  CHECK(written_by_kaldi(v, false) == "dim=5 [ 2 3 4 3 ] ");
  CHECK_THROWS_AS(SparseVector<float>(2, {{2, 1.0f}}), tablio::usage_error);

  Vector<float> dense(5);
  v.CopyToVec(&dense);
  CHECK(dense(2) == 3.0f);
  CHECK(dense(4) == 3.0f);
  CHECK(dense(0) == 0.0f);
  CHECK(SparseVector<float>(dense) == v);
}

TEST_CASE("a sparse matrix copies and adds into full ones, transposed too", "[kaldi][facade][sparse]") {
  const SparseMatrix<float> m = example();
  Matrix<float> full(3, 4);
  full.Set(7.0f);
  m.CopyToMat(&full);
  CHECK(full(0, 1) == 0.5f);
  CHECK(full(1, 0) == -2.0f);
  CHECK(full(2, 3) == 0.0f);
  CHECK(SparseMatrix<float>(full) == m);

  Matrix<float> transposed(4, 3);
  m.CopyToMat(&transposed, kTrans);
  CHECK(transposed(3, 1) == 0.25f);
  m.AddToMat(2.0f, &transposed, kTrans);
  CHECK(transposed(3, 1) == 0.75f);
  Matrix<double> wrong(3, 3);
  CHECK_THROWS_AS(m.CopyToMat(&wrong), tablio::usage_error);

  // A row Kaldi's writer never makes, with an index twice, copies as Kaldi's: the last value.
  const auto repeated =
      read_back<SparseMatrix<float>>("SM " + int32_bytes(1) + row_bytes(2, {{1, 2.0f}, {1, 1.0f}}), true);
  Matrix<float> one_row(1, 2);
  repeated.CopyToMat(&one_row);
  CHECK(one_row(0, 1) == 1.0f);

  SparseMatrix<float> scaled = m;
  scaled.Scale(2.0f);
  CHECK(scaled.Row(0).GetElement(0).second == 1.0f);
  std::vector<SparseMatrix<float>> parts{m, scaled};
  SparseMatrix<float> appended;
  appended.AppendSparseMatrixRows(&parts);
  CHECK(appended.NumRows() == 6);
  CHECK(parts.empty());
  std::vector<SparseMatrix<float>> mixed{m, SparseMatrix<float>(1, 5)};
  CHECK_THROWS_AS(appended.AppendSparseMatrixRows(&mixed), tablio::usage_error);
}

TEST_CASE("GeneralMatrix holds one of three forms and writes the one it holds", "[kaldi][facade][sparse]") {
  Matrix<float> full(2, 3);
  for (MatrixIndexT r = 0; r < 2; ++r)
    for (MatrixIndexT c = 0; c < 3; ++c) full(r, c) = static_cast<float>(r * 3 + c);

  GeneralMatrix g(full);
  CHECK(g.Type() == kFullMatrix);
  CHECK(written_by_kaldi(g, true) == written_by_kaldi(full, true));
  g.Compress();
  CHECK(g.Type() == kCompressedMatrix);
  CHECK(written_by_kaldi(g, true) == written_by_kaldi(CompressedMatrix(full), true));
  CHECK(g.NumRows() == 2);
  CHECK(g.NumCols() == 3);
  g.Scale(2.0f);  // the codes stay: only the span they stand for is scaled
  Matrix<float> got;
  g.GetMatrix(&got);
  CHECK(got(1, 2) == Approx(10.0f).epsilon(0.01));
  CHECK_THROWS_AS(g.GetFullMatrix(), tablio::usage_error);
  g.Uncompress();
  CHECK(g.Type() == kFullMatrix);

  const GeneralMatrix sparse(example());
  CHECK(sparse.Type() == kSparseMatrix);
  CHECK(written_by_kaldi(sparse, true) == written_by_kaldi(example(), true));
  CHECK(written_by_kaldi(sparse, false) == written_by_kaldi(example(), false));
  Matrix<float> dense(4, 3);
  sparse.CopyToMat(&dense, kTrans);
  CHECK(dense(1, 0) == 0.5f);

  // Read in the form found: 'S' sparse, 'C' compressed, else full; in text "rows=" is sparse.
  CHECK(read_back<GeneralMatrix>(written_by_kaldi(example(), true), true).Type() == kSparseMatrix);
  CHECK(read_back<GeneralMatrix>(written_by_kaldi(CompressedMatrix(full), true), true).Type() ==
        kCompressedMatrix);
  CHECK(read_back<GeneralMatrix>(written_by_kaldi(Matrix<double>(full), true), true).GetFullMatrix()(1, 2) ==
        5.0f);
  CHECK(read_back<GeneralMatrix>(written_by_kaldi(example(), false), false).GetSparseMatrix() == example());
  CHECK(read_back<GeneralMatrix>(written_by_kaldi(full, false), false).GetFullMatrix()(1, 1) == 4.0f);

  const GeneralMatrix compressed{CompressedMatrix(full)};
  std::vector<const GeneralMatrix*> parts{&compressed, &sparse};
  GeneralMatrix appended;
  CHECK_THROWS_AS(AppendGeneralMatrixRows(parts, &appended), tablio::usage_error);  // 3 and 4 columns
  const GeneralMatrix sparse_too(example());
  parts = {&sparse, &sparse_too};
  AppendGeneralMatrixRows(parts, &appended);
  CHECK(appended.Type() == kSparseMatrix);
  CHECK(appended.NumRows() == 6);
  const GeneralMatrix full_too(Matrix<float>(1, 4));
  parts = {&sparse, &full_too};
  AppendGeneralMatrixRows(parts, &appended);
  CHECK(appended.Type() == kFullMatrix);
  CHECK(appended.GetFullMatrix()(1, 3) == 0.25f);
}

TEST_CASE("Kaldi's archives read as GeneralMatrix are written back byte for byte",
          "[kaldi][facade][sparse]") {
  for (const std::string name : {"kaldi/compressed/cm-method1.bin.ark", "kaldi/compressed/cm-method2.bin.ark",
                                 "kaldi/holders/float-matrix.bin.ark"}) {
    INFO(name);
    temp_dir dir;
    const std::string copy = dir / "copy.ark";
    {
      SequentialGeneralMatrixReader reader("ark:" + data_path(name));
      GeneralMatrixWriter writer("ark:" + copy);
      SequentialBaseFloatMatrixReader as_matrices("ark:" + data_path(name));
      for (; !reader.Done(); reader.Next(), as_matrices.Next()) {
        CHECK(reader.Value().Type() ==
              (name.find("cm-") != std::string::npos ? kCompressedMatrix : kFullMatrix));
        Matrix<float> values;
        reader.Value().GetMatrix(&values);
        CHECK(values == as_matrices.Value());
        writer.Write(reader.Key(), reader.Value());
      }
      CHECK(writer.Close());
    }
    CHECK(read_file(copy) == read_file(data_path(name)));
  }
}

TEST_CASE("sparse entries in tables of both modes, and script ranges", "[kaldi][facade][sparse]") {
  temp_dir dir;
  for (const bool binary : {true, false}) {
    INFO("binary " << binary);
    const std::string ark = dir / (binary ? "b.ark" : "t.ark"), scp = dir / (binary ? "b.scp" : "t.scp");
    {
      GeneralMatrixWriter writer(std::string(binary ? "ark" : "ark,t") + ",scp:" + ark + "," + scp);
      writer.Write("u1", GeneralMatrix(example()));
      writer.Write("u2", GeneralMatrix(Matrix<float>(2, 2)));
      writer.Write("u3", GeneralMatrix(example()));
    }
    SequentialGeneralMatrixReader reader("scp:" + scp);
    std::vector<std::string> keys;
    for (; !reader.Done(); reader.Next()) keys.push_back(reader.Key());
    CHECK(keys == std::vector<std::string>{"u1", "u2", "u3"});
    RandomAccessGeneralMatrixReader lookups("ark:" + ark);
    CHECK(lookups.Value("u3").GetSparseMatrix() == example());
    CHECK(lookups.Value("u2").Type() == kFullMatrix);

    // A range makes a full matrix of the part it names, as Kaldi's ExtractObjectRange.
    const std::string lines = read_file(scp);
    const std::string u1 = lines.substr(3, lines.find('\n') - 3);  // "u1 <ark>:<offset>"
    write_file(dir / "r.scp", "r " + u1 + "[1:1,0:1]\n");
    RandomAccessGeneralMatrixReader ranged("scp:" + (dir / "r.scp"));
    const GeneralMatrix& part = ranged.Value("r");
    REQUIRE(part.Type() == kFullMatrix);
    CHECK(part.NumRows() == 1);
    CHECK(part.NumCols() == 2);
    CHECK(part.GetFullMatrix()(0, 0) == -2.0f);
  }
}

TEST_CASE("damaged sparse input is a format_error with its offset", "[kaldi][facade][sparse][bad]") {
  const auto fails = [](const std::string& bytes, bool binary, const std::string& found) {
    INFO(found);
    try {
      read_back<GeneralMatrix>(bytes, binary);
      FAIL("read");
    } catch (const tablio::format_error& e) {
      CHECK_THAT(e.what(), Catch::Contains(found));
      CHECK(e.offset().has_value());
    }
  };
  const std::string head = "SM " + int32_bytes(1);
  fails(head + row_bytes(4, {{4, 1.0f}}), true, "index 4");  // past the row
  fails(head + row_bytes(4, {{-1, 1.0f}}), true, "index -1");
  fails(head + "SV " + int32_bytes(4) + int32_bytes(5), true, "5");  // more elements than the dimension
  fails(head + "SV " + int32_bytes(-3) + int32_bytes(0), true, "-3");
  fails("SM " + int32_bytes(2) + row_bytes(4, {}) + row_bytes(5, {}), true, "dimension 5");
  fails(head + row_bytes(4, {{1, 1.0f}}).substr(0, 20), true, "end of input");  // cut inside a pair
  fails("SM " + int32_bytes(2147483647), true, "end of input");                 // no 2^31 rows made
  fails("SM " + int32_bytes(1) + "SV " + int32_bytes(2147483647) + int32_bytes(2147483647), true,
        "end of input");
  fails("rows=1 dim=4 [ 3 1 1 2 ] ", false, "index 1");  // out of order, as Kaldi checks
  fails("rows=1 dim=4 [ 4 1 ] ", false, "index 4");
  fails("rows=x ", false, "'rows=' and a count");
  fails("rows=1 dim=4 [ 1 0.5 ", false, "end of input");

  // A read that fails leaves the vector as it was: no index of the new dimension with the old.
  SparseVector<float> v(2, {{1, 1.0f}});
  std::istringstream cut(row_bytes(10, {{5, 1.0f}, {6, 2.0f}}).substr(0, 28));
  CHECK_THROWS_AS(v.Read(cut, true), tablio::format_error);
  CHECK(v == SparseVector<float>(2, {{1, 1.0f}}));
  Vector<float> two(2);
  v.CopyToVec(&two);
  CHECK(two(1) == 1.0f);
}
