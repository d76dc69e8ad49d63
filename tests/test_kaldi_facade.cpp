// Kaldi-style code compiled against tablio's facade: a Kaldi class written with Kaldi's I/O
// functions, tables by their Kaldi names, Input/Output and Read/WriteKaldiObject.
#include <tablio/kaldi.hpp>

#include <filesystem>
#include <sstream>

#include "test_support.hpp"

namespace kaldi = tablio::kaldi;
using namespace kaldi;

namespace {

// A class as Kaldi code writes them.
class DiagGmmLike {
 public:
  void Write(std::ostream& os, bool binary) const {
    WriteToken(os, binary, "<DiagGmm>");
    WriteToken(os, binary, "<GCONSTS>");
    WriteBasicType(os, binary, num_);
    WriteIntegerVector(os, binary, ids_);
    weights_.Write(os, binary);
    WriteToken(os, binary, "</DiagGmm>");
  }
  void Read(std::istream& is, bool binary) {
    ExpectToken(is, binary, "<DiagGmm>");
    if (PeekToken(is, binary) == 'G') ExpectToken(is, binary, "<GCONSTS>");
    ReadBasicType(is, binary, &num_);
    ReadIntegerVector(is, binary, &ids_);
    weights_.Read(is, binary);
    ExpectToken(is, binary, "</DiagGmm>");
  }
  int32 num_ = 0;
  std::vector<int32> ids_;
  Vector<BaseFloat> weights_;
};

}  // namespace

TEST_CASE("a Kaldi-style class in a Kaldi-named table, both modes", "[kaldi][facade]") {
  DiagGmmLike g;
  g.num_ = 3;
  g.ids_ = {4, 5};
  g.weights_ = Vector<BaseFloat>(tablio::vector<float>{0.25f, 0.75f});
  const std::string dir = (std::filesystem::temp_directory_path() / "tablio-facade").string();
  std::filesystem::create_directories(dir);
  for (const char* options : {"ark", "ark,t"}) {
    {
      TableWriter<KaldiObjectHolder<DiagGmmLike>> out(std::string(options) + ":" + dir + "/gmm.ark");
      out.Write("spk1", g);
      out.Write("spk2", g);
      CHECK(out.Close());
    }
    RandomAccessTableReader<KaldiObjectHolder<DiagGmmLike>> in("ark:" + dir + "/gmm.ark");
    CHECK(in.HasKey("spk2"));
    const DiagGmmLike& back = in.Value("spk2");
    CHECK(back.num_ == 3);
    CHECK(back.ids_ == std::vector<int32>{4, 5});
    CHECK(back.weights_.Dim() == 2);
    CHECK(back.weights_(1) == 0.75f);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("Kaldi's I/O functions on plain iostreams", "[kaldi][facade]") {
  std::ostringstream os;
  WriteBasicType(os, true, int32(7));
  WriteToken(os, true, "<Tok>");
  WriteBasicType(os, false, 0.1f);
  CHECK(os.str() == std::string("\4\7\0\0\0<Tok> 0.1 ", 15));
  std::istringstream is(os.str() + "rest");
  int32 i = 0;
  ReadBasicType(is, true, &i);
  CHECK(i == 7);
  ExpectToken(is, true, "<Tok>");
  float f = 0;
  ReadBasicType(is, false, &f);
  CHECK(f == 0.1f);
  std::string rest;
  is >> rest;
  CHECK(rest == "rest");  // nothing beyond what was parsed was taken from the stream
  std::istringstream bad(std::string("\x08\0\0\0\0\0\0\0\0", 9));
  CHECK_THROWS_WITH(ReadBasicType(bad, true, &i), Catch::Contains("8 vs. 4"));
}

TEST_CASE("Input, Output and Read/WriteKaldiObject", "[kaldi][facade]") {
  const std::string path = (std::filesystem::temp_directory_path() / "tablio-facade-matrix.mat").string();
  Matrix<BaseFloat> m(2, 3);
  m(1, 2) = 5.5f;
  WriteKaldiObject(m, path, true);
  CHECK(test::read_file(path).substr(0, 5) == std::string("\0BFM ", 5));
  Matrix<double> back;
  ReadKaldiObject(path, &back);
  CHECK(back.NumRows() == 2);
  CHECK(back(1, 2) == 5.5);
  bool binary = false;
  Input in(path, &binary);
  CHECK(binary);
  CHECK(ClassifyRxfilename(path + ":5") == kOffsetFileInput);
  CHECK(ClassifyWxfilename("| gzip") == kPipeOutput);
  // Remote names are files to Kaldi's classification, and Input and Output open them.
  CHECK(ClassifyRxfilename("s3://bucket/feats.ark") == kFileInput);
  CHECK(ClassifyRxfilename("https://host/feats.ark") == kFileInput);
  CHECK(ClassifyWxfilename("s3://bucket/out.ark") == kFileOutput);
  CHECK(ClassifyRxfilename("ark:feats.ark") == kNoInput);
  // A range, as Kaldi's ReadKaldiObject takes for matrices: utt1 of feats.ark is 5x3.
  const std::string feats = test::data_path("kaldi/scp/feats.ark");
  Matrix<BaseFloat> whole, part;
  ReadKaldiObject(feats + ":5", &whole);
  ReadKaldiObject(feats + ":5[1:2,1:2]", &part);
  REQUIRE(part.NumRows() == 2);
  REQUIRE(part.NumCols() == 2);
  CHECK(part(1, 0) == whole(2, 1));
  ReadKaldiObject(feats + ":5[3:6]", &back);  // rows clipped, in the other precision
  CHECK(back.NumRows() == 2);
  CHECK(back(1, 2) == static_cast<double>(whole(4, 2)));
  CHECK_THROWS_WITH(ReadKaldiObject(feats + ":5[0:0,0:3]", &part),
                    Catch::Contains(feats + ":5[0:0,0:3]") && Catch::Contains("for a matrix of size 5x3"));
  CHECK_THROWS_AS(ReadKaldiObject(feats + ":5[0:0][1:1]", &part), tablio::usage_error);
  // Each number of a range may follow whitespace, as strtoll takes it in Kaldi's parser; none
  // may be followed by it.
  Matrix<BaseFloat> spaced;
  ReadKaldiObject(feats + ":5[ 1:\t2, +1: 2]", &spaced);
  CHECK((spaced.NumRows() == 2 && spaced.NumCols() == 2 && spaced(1, 0) == whole(2, 1)));
  CHECK_THROWS_WITH(ReadKaldiObject(feats + ":5[1 :2]", &part), Catch::Contains("'1 :2'"));
  CHECK_THROWS_AS(ReadKaldiObject(feats + ":5[ :,1:2]", &part), tablio::format_error);
  CompressedMatrix cm(m, kTwoByteAuto);
  Matrix<BaseFloat> restored;
  cm.CopyToMat(&restored);
  CHECK(restored.NumCols() == 3);
  std::filesystem::remove(path);
}

namespace {
std::vector<std::string> reported;
void keep_report(const char* message) noexcept { reported.emplace_back(message); }
}  // namespace

TEST_CASE("Open and Close return false and report, as Kaldi's do", "[kaldi][facade][bad]") {
  tablio::error_reporter previous = tablio::set_error_reporter(&keep_report);
  reported.clear();
  SequentialBaseFloatMatrixReader sequential;
  CHECK_FALSE(sequential.Open("ark:/no/such/dir/feats.ark"));
  CHECK_FALSE(sequential.IsOpen());
  CHECK_FALSE(sequential.Open("nonsense:feats.ark"));
  RandomAccessBaseFloatMatrixReader random;
  CHECK_FALSE(random.Open("ark:/no/such/dir/feats.ark"));
  CHECK_FALSE(random.IsOpen());
  // A command that fails after its first entry is reported when the table closes.
  const std::string failing =
      "ark:" + test::command("file \"" + test::data_path("kaldi/scp/feats.ark") + "\" exit 3") + " |";
  CHECK(sequential.Open(failing));
  CHECK(sequential.Key() == "utt1");
  CHECK_FALSE(sequential.Close());
  CHECK(random.Open(failing));
  CHECK_FALSE(random.Close());
  tablio::set_error_reporter(previous);
  REQUIRE(reported.size() == 5);
  CHECK_THAT(reported[0], Catch::Contains("/no/such/dir/feats.ark"));
  CHECK_THAT(reported[1], Catch::Contains("nonsense:feats.ark"));
  CHECK_THAT(reported[2], Catch::Contains("/no/such/dir/feats.ark"));
  CHECK_THAT(reported[3], Catch::Contains("status 3"));
  CHECK_THAT(reported[4], Catch::Contains("status 3"));
}
