// Kaldi-style code compiled against tablio's facade: a Kaldi class written with Kaldi's I/O
// functions, tables by their Kaldi names, Input/Output and Read/WriteKaldiObject.
#include <tablio/kaldi.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

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

namespace {

// A holder written Kaldi's way, shaped like Kaldi's PosteriorHolder: static Write on an
// ostream, Read from an istream detecting the mode, Value(), Clear(), T.
class PairsHolder {
 public:
  typedef std::vector<std::pair<int32, BaseFloat>> T;
  static bool Write(std::ostream& os, bool binary, const T& t) {
    InitKaldiOutputStream(os, binary);
    int32 n = static_cast<int32>(t.size());
    WriteBasicType(os, binary, n);
    for (const auto& p : t) {
      WriteBasicType(os, binary, p.first);
      WriteBasicType(os, binary, p.second);
    }
    if (!binary) os << '\n';
    return os.good();
  }
  bool Read(std::istream& is) {
    t_.clear();
    bool binary = false;
    if (!InitKaldiInputStream(is, &binary)) return false;
    try {
      int32 n = 0;
      ReadBasicType(is, binary, &n);
      if (n < 0 || n > 1000) return false;
      t_.resize(static_cast<size_t>(n));
      for (auto& p : t_) {
        ReadBasicType(is, binary, &p.first);
        ReadBasicType(is, binary, &p.second);
      }
      while (!binary && is.peek() == ' ') is.get();  // text values end in a space, as Kaldi writes
      if (!binary && is.get() != '\n') return false;
      return true;
    } catch (const std::exception&) {
      return false;
    }
  }
  static bool IsReadInBinary() { return true; }
  T& Value() { return t_; }
  void Clear() { T().swap(t_); }

 private:
  T t_;
};
static_assert(kaldi_style_holder<PairsHolder>);
static_assert(
    std::same_as<table_holder_t<PairsHolder>, tablio::kaldi::detail::kaldi_holder_adapter<PairsHolder>>);

}  // namespace

TEST_CASE("holders written Kaldi's way plug into the tables", "[kaldi][facade]") {
  test::temp_dir dir;
  const PairsHolder::T a{{1, 0.5f}, {7, 0.25f}}, b{};
  for (const char* options : {"ark", "ark,t"}) {
    {
      TableWriter<PairsHolder> w(std::string(options) + ",scp:" + (dir / "p.ark") + "," + (dir / "p.scp"));
      w.Write("u1", a);
      w.Write("u2", b);
      CHECK(w.Close());
    }
    SequentialTableReader<PairsHolder> seq("scp:" + (dir / "p.scp"));
    REQUIRE(!seq.Done());
    CHECK(seq.Key() == "u1");
    CHECK(seq.Value() == a);
    seq.Next();
    CHECK(seq.Value() == b);
    seq.Next();
    CHECK(seq.Done());
    RandomAccessTableReader<PairsHolder> random("ark:" + (dir / "p.ark"));
    CHECK(random.Value("u1") == a);
    CHECK(!random.HasKey("u3"));
  }
  CHECK(test::read_file(dir / "p.ark") == "u1 2 1 0.5 7 0.25 \nu2 0 \n");  // Kaldi's text form
  // A Read that refuses is a format_error naming the archive and the offset.
  test::write_file(dir / "bad.ark", std::string("u1 \0B\4\xff\xff\xff\xff", 10));
  CHECK_THROWS_AS(
      [&] {
        SequentialTableReader<PairsHolder> bad("ark:" + (dir / "bad.ark"));
        bad.Value();
      }(),
      tablio::format_error);
}

TEST_CASE("Kaldi's holders also work on their own, on streams", "[kaldi][facade]") {
  std::ostringstream os;
  CHECK(BasicVectorHolder<int32>::Write(os, false, std::vector<int32>{1, 2, 3}));
  CHECK(os.str() == "1 2 3 \n");
  std::istringstream is(os.str());
  BasicVectorHolder<int32> h;
  REQUIRE(h.Read(is));
  CHECK(h.Value() == std::vector<int32>{1, 2, 3});
  h.Clear();
  CHECK(h.Value().empty());
  std::istringstream bad("1 x\n");
  CHECK_FALSE(h.Read(bad));  // a warning, and false, as Kaldi's holders
  WaveHolder wh;
  std::ifstream wav(test::data_path("kaldi/scp/wav/w1.wav"), std::ios::binary);
  REQUIRE(wh.Read(wav));
  CHECK(wh.Value().Data().NumRows() == 1);
  std::ostringstream copy;
  CHECK(WaveHolder::Write(copy, true, wh.Value()));
  CHECK(copy.str() == test::read_file(test::data_path("kaldi/scp/wav/w1.wav")));
}

TEST_CASE("tables from empty specifiers are not opened, as in Kaldi", "[kaldi][facade]") {
  // Using one is Kaldi's error, so that an unset variable in a recipe is not an empty table.
  test::CerrCapture capture;
  const auto kaldis_error = Catch::Contains("Trying to use empty");
  Int32Writer w("");
  CHECK_FALSE(w.IsOpen());
  CHECK_THROWS_MATCHES(w.Write("k", 1), KaldiFatalError, Catch::Predicate<KaldiFatalError>([](const auto& e) {
                         return std::string(e.KaldiMessage()).find("empty TableWriter") != std::string::npos;
                       }));
  SequentialBaseFloatMatrixReader s("");
  CHECK_FALSE(s.IsOpen());
  CHECK_THROWS_AS(s.Done(), KaldiFatalError);
  CHECK_THROWS_AS(s.Key(), KaldiFatalError);
  RandomAccessInt32Reader r("");
  CHECK_FALSE(r.IsOpen());
  CHECK_THROWS_AS(r.HasKey("k"), KaldiFatalError);
  RandomAccessBaseFloatVectorReaderMapped m("", "");
  CHECK_FALSE(m.IsOpen());
  CHECK_THROWS_AS(m.Value("k"), KaldiFatalError);
  CHECK_THAT(capture.str(), kaldis_error && Catch::Contains("empty RandomAccessTableReaderMapped"));

  // A table read to its end stays open until Close(), as Kaldi's; closed, it is empty again.
  SequentialInt32VectorReader all("ark:" + test::data_path("kaldi/holders/int32-vector.bin.ark"));
  while (!all.Done()) all.Next();
  CHECK(all.IsOpen());
  CHECK(all.Done());
  CHECK(all.Close());
  CHECK_FALSE(all.IsOpen());
  CHECK_THROWS_AS(all.Done(), KaldiFatalError);
}

TEST_CASE("an invalid script line ends a sequential table with a warning", "[kaldi][facade][bad]") {
  test::temp_dir dir;
  {
    Int32VectorWriter w("ark,scp:" + (dir / "a.ark") + "," + (dir / "a.scp"));
    w.Write("u1", {1});
    w.Write("u2", {2});
  }
  const std::string script = test::read_file(dir / "a.scp");
  const std::size_t second = script.find("u2");
  for (const std::string& bad : {std::string("\n"), std::string("u9\n"), std::string("   \n")}) {
    test::write_file(dir / "b.scp", script.substr(0, second) + bad + script.substr(second));
    SequentialInt32VectorReader r("scp:" + (dir / "b.scp"));
    REQUIRE(!r.Done());
    CHECK(r.Key() == "u1");
    r.Next();
    CHECK(r.Done());
    CHECK_FALSE(r.Close());  // as Kaldi's, which leaves the exit status to the program
  }
  test::write_file(dir / "c.scp", "\n" + script);
  SequentialInt32VectorReader first("scp:" + (dir / "c.scp"));
  CHECK(first.Done());
}

TEST_CASE("RandomAccessTableReaderMapped opens, closes and maps", "[kaldi][facade]") {
  test::temp_dir dir;
  {
    BaseFloatVectorWriter w("ark:" + (dir / "spk.ark"));
    w.Write("s1", Vector<BaseFloat>(2));
  }
  test::write_file(dir / "utt2spk", "u1 s1\nu2 s2\n");
  RandomAccessBaseFloatVectorReaderMapped m;
  CHECK_FALSE(m.IsOpen());
  REQUIRE(m.Open("ark:" + (dir / "spk.ark"), "ark:" + (dir / "utt2spk")));
  CHECK(m.IsOpen());
  CHECK(m.HasKey("u1"));
  CHECK(m.Value("u1").Dim() == 2);
  CHECK_FALSE(m.HasKey("u2"));                                 // the speaker has no entry
  CHECK_THROWS_AS(m.HasKey("u3"), tablio::missing_key_error);  // the utterance has no speaker
  CHECK(m.Close());
  CHECK_FALSE(m.IsOpen());
  CHECK_FALSE(m.Open("ark:" + (dir / "missing.ark"), ""));
}

TEST_CASE("ClassifyRspecifier and ClassifyWspecifier", "[kaldi][facade]") {
  std::string name, script;
  RspecifierOptions ro;
  CHECK(ClassifyRspecifier("ark,s,cs,p:a.ark", &name, &ro) == kArchiveRspecifier);
  CHECK(name == "a.ark");
  CHECK((ro.sorted && ro.called_sorted && ro.permissive && !ro.once));
  CHECK(ClassifyRspecifier("scp:a.scp", &name, nullptr) == kScriptRspecifier);
  CHECK(name == "a.scp");
  CHECK(ClassifyRspecifier("a.ark", &name, nullptr) == kNoRspecifier);
  CHECK(name.empty());
  CHECK(ClassifyRspecifier("tfrecord:a.tfrecord", nullptr, nullptr) == kArchiveRspecifier);
  WspecifierOptions wo;
  CHECK(ClassifyWspecifier("ark,scp,t,f:a.ark,a.scp", &name, &script, &wo) == kBothWspecifier);
  CHECK((name == "a.ark" && script == "a.scp" && !wo.binary && wo.flush));
  CHECK(ClassifyWspecifier("scp:s.scp", &name, &script, nullptr) == kScriptWspecifier);
  CHECK((name.empty() && script == "s.scp"));
  CHECK(ClassifyWspecifier("ark:-", &name, nullptr, nullptr) == kArchiveWspecifier);
  CHECK(ClassifyWspecifier("scp,ark:a,b", &name, &script, nullptr) == kNoWspecifier);
  CHECK((name.empty() && script.empty()));
  CHECK(ClassifyWspecifier("-", nullptr, nullptr, nullptr) == kNoWspecifier);
}

TEST_CASE("HTK and Sphinx features, written and read as Kaldi does", "[kaldi][facade]") {
  Matrix<BaseFloat> m(2, 3);
  for (MatrixIndexT r = 0; r < 2; ++r)
    for (MatrixIndexT c = 0; c < 3; ++c) m(r, c) = static_cast<BaseFloat>(r * 3 + c) - 1.5f;
  HtkHeader h;
  h.mNSamples = 2;
  h.mSamplePeriod = 100000;
  h.mSampleSize = 12;
  h.mSampleKind = 6 | 010000;  // MFCC with a checksum flag, which Kaldi drops when reading
  std::ostringstream os;
  REQUIRE(WriteHtk(os, m, h));
  const std::string htk = os.str();
  REQUIRE(htk.size() == 12 + 24);
  CHECK(htk.substr(0, 4) == std::string("\0\0\0\2", 4));       // big-endian
  CHECK(htk.substr(12, 4) == std::string("\xbf\xc0\0\0", 4));  // -1.5f
  std::istringstream is(htk);
  Matrix<BaseFloat> back;
  HtkHeader read;
  REQUIRE(ReadHtk(is, &back, &read));
  CHECK(back.NumRows() == 2);
  CHECK(back.NumCols() == 3);
  CHECK(back(1, 2) == m(1, 2));
  CHECK(read.mSampleKind == 6);
  // Cut, lying and compressed files are refused: false from ReadHtk, format_error in tables.
  for (const std::string& bad :
       {htk.substr(0, 20), htk.substr(0, 8), std::string("\x7f\xff\xff\xff", 4) + htk.substr(4),
        htk.substr(0, 10) + std::string("\4\6", 2) + htk.substr(12),
        htk.substr(0, 10) + std::string("\0\0", 2) + htk.substr(12)}) {
    std::istringstream in(bad);
    CHECK_FALSE(ReadHtk(in, &back, nullptr));
  }
  h.mNSamples = 3;
  std::ostringstream wrong;
  CHECK_THROWS_AS(WriteHtk(wrong, m, h), tablio::usage_error);

  test::temp_dir dir;
  {
    TableWriter<HtkMatrixHolder> w("ark:" + (dir / "htk.ark"));
    h.mNSamples = 2;
    w.Write("u1", {m, h});
    TableWriter<SphinxMatrixHolder<3>> s("ark:" + (dir / "s.ark"));
    s.Write("u1", m);
    CHECK_THROWS_AS(s.Write("u2", Matrix<BaseFloat>(1, 4)), tablio::usage_error);
    TableWriter<HtkMatrixHolder> t("ark,t:" + (dir / "t.ark"));
    CHECK_THROWS_AS(t.Write("u1", {m, h}), tablio::usage_error);
  }
  SequentialTableReader<HtkMatrixHolder> hr("ark:" + (dir / "htk.ark"));
  CHECK(hr.Value().first(0, 1) == m(0, 1));
  CHECK(hr.Value().second.mSamplePeriod == 100000);
  SequentialTableReader<SphinxMatrixHolder<3>> sr("ark:" + (dir / "s.ark"));
  CHECK(sr.Value().NumRows() == 2);
  CHECK(test::read_file(dir / "s.ark").substr(3, 4) == std::string("\0\0\0\6", 4));
  test::write_file(dir / "lying.ark", std::string("u1 \0\0\0\x07", 7));  // 7 values: not frames of 3
  CHECK_THROWS_AS(
      [&] {
        SequentialTableReader<SphinxMatrixHolder<3>> lying("ark:" + (dir / "lying.ark"));
        lying.Value();
      }(),
      tablio::format_error);
}

TEST_CASE("WaveInfo reads headers and passes the samples", "[kaldi][facade]") {
  SequentialTableReader<WaveInfoHolder> info("ark:" + test::data_path("kaldi/holders/wav.bin.ark"));
  SequentialWaveReader whole("ark:" + test::data_path("kaldi/holders/wav.bin.ark"));
  int n = 0;
  for (; !info.Done(); info.Next(), whole.Next(), ++n) {
    REQUIRE(!whole.Done());
    CHECK(info.Key() == whole.Key());
    CHECK(info.Value().SampleCount() == static_cast<uint32>(whole.Value().Data().NumCols()));
    CHECK(info.Value().NumChannels() == whole.Value().Data().NumRows());
    CHECK(info.Value().SampFreq() == whole.Value().SampFreq());
    CHECK(info.Value().Duration() == Approx(whole.Value().Duration()));
    CHECK_FALSE(info.Value().IsStreamed());
  }
  CHECK(n == 3);
  // A streamed wave (sizes left as placeholders) is counted to its end.
  std::string wav = test::read_file(test::data_path("kaldi/scp/wav/w1.wav"));
  wav.replace(40, 4, std::string("\xff\xff\xff\xff", 4));
  std::istringstream is(wav);
  WaveInfo streamed;
  streamed.Read(is);
  CHECK(streamed.IsStreamed());
  CHECK(streamed.SampleCount() == 5);
  std::istringstream cut(wav.substr(0, 30));
  CHECK_THROWS_AS(streamed.Read(cut), tablio::format_error);
  std::ostringstream os;
  CHECK_FALSE(WaveInfoHolder::Write(os, true, streamed));  // no samples to write: Kaldi errors too
}

#if !defined(_WIN32)  // POSIX's /dev/full and shell
TEST_CASE("TableWriter: a failed pipe command warns as Kaldi's does, and the destructor closes",
          "[kaldi][facade][bad]") {
  test::temp_dir dir;
  const std::string ark = dir / "w.ark";
  {
    Int32Writer writer("ark,t:" + ark);
    writer.Write("a", 1);
  }                                         // closed here, flushed
  CHECK(test::read_file(ark) == "a 1 \n");  // Kaldi text: the value, a space, the newline

  test::CerrCapture capture;
  {
    Int32Writer writer("ark,t:| exit 3");
    writer.Write("a", 1);
    CHECK(writer.Close());  // Kaldi warns of the status and closes
  }
  {
    Int32Writer writer("ark,t:| exit 4");
    writer.Write("a", 1);
  }  // the destructor too warns and goes on
  CHECK_THAT(capture.str(),
             Catch::Contains("WARNING") && Catch::Contains("status 3") && Catch::Contains("status 4"));

  // Unwinding already: the destructor neither aborts nor adds a message to the error on its way.
  try {
    Int32Writer writer("ark,t:/dev/full");
    writer.Write("a", 1);
    throw std::runtime_error("unwinding");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "unwinding");
  }
  CHECK_THAT(capture.str(), !Catch::Contains("Error closing TableWriter"));
}
#endif
