// transform-feats, written as Kaldi code and compiled against tablio's Kaldi facade: reads
// features from an rspecifier (e.g. "scp:feats.scp"), looks up a transform per utterance
// from another (e.g. "ark:trans.ark"), and writes the transformed features to a wspecifier
// (e.g. "ark,t:out.ark"). A transform with one more column than the features is affine.
//
//   transform_feats <transform-rspecifier> <feats-rspecifier> <feats-wspecifier>
//   transform_feats --demo DIR     (makes a small feats.scp and trans.ark in DIR and runs)
#include <tablio/kaldi.hpp>

#include <cstdio>
#include <filesystem>
#include <string>

namespace kaldi = tablio::kaldi;
using namespace kaldi;

namespace {

int transform_feats(const std::string& transform_rspecifier, const std::string& feat_rspecifier,
                    const std::string& feat_wspecifier) {
  SequentialBaseFloatMatrixReader feat_reader(feat_rspecifier);
  RandomAccessBaseFloatMatrixReader transform_reader(transform_rspecifier);
  BaseFloatMatrixWriter feat_writer(feat_wspecifier);
  int32 num_done = 0, num_error = 0;
  for (; !feat_reader.Done(); feat_reader.Next()) {
    std::string utt = feat_reader.Key();
    if (!transform_reader.HasKey(utt)) {
      std::fprintf(stderr, "No transform for utterance %s\n", utt.c_str());
      num_error++;
      continue;
    }
    const Matrix<BaseFloat>& feat(feat_reader.Value());
    const Matrix<BaseFloat>& trans = transform_reader.Value(utt);
    int32 dim = feat.NumCols();
    bool affine = trans.NumCols() == dim + 1;
    if (trans.NumCols() != dim && !affine) {
      std::fprintf(stderr, "Transform for %s has %d columns, features have %d\n", utt.c_str(),
                   trans.NumCols(), dim);
      num_error++;
      continue;
    }
    Matrix<BaseFloat> feat_out(feat.NumRows(), trans.NumRows());
    for (int32 t = 0; t < feat.NumRows(); t++)
      for (int32 i = 0; i < trans.NumRows(); i++) {
        double sum = affine ? trans(i, dim) : 0.0;
        for (int32 j = 0; j < dim; j++) sum += trans(i, j) * feat(t, j);
        feat_out(t, i) = static_cast<BaseFloat>(sum);
      }
    feat_writer.Write(utt, feat_out);
    num_done++;
  }
  std::printf("Applied transform to %d utterances; %d had errors.\n", num_done, num_error);
  return num_done != 0 ? 0 : 1;
}

// Writes 3 utterances of 4-dimensional features (as feats.ark + feats.scp) and affine
// transforms to 2 dimensions, then runs the transform.
int demo(const std::string& dir) {
  std::filesystem::create_directories(dir);
  {
    BaseFloatMatrixWriter feats("ark,scp:" + dir + "/feats.ark," + dir + "/feats.scp");
    BaseFloatMatrixWriter transforms("ark:" + dir + "/trans.ark");
    for (int u = 1; u <= 3; ++u) {
      Matrix<BaseFloat> f(5 * u, 4);
      for (int32 t = 0; t < f.NumRows(); ++t)
        for (int32 j = 0; j < 4; ++j) f(t, j) = static_cast<BaseFloat>(t + j * 0.5);
      Matrix<BaseFloat> a(2, 5);
      a(0, 0) = 1;  // first output: feature 0
      a(1, 3) = 2;  // second output: twice feature 3, plus the offset u
      a(1, 4) = static_cast<BaseFloat>(u);
      std::string key = "utt" + std::to_string(u);
      feats.Write(key, f);
      transforms.Write(key, a);
    }
  }
  int rc =
      transform_feats("ark:" + dir + "/trans.ark", "scp:" + dir + "/feats.scp", "ark,t:" + dir + "/out.ark");
  // Check: utt2, frame 1 = [1, 1.5, 2, 2.5] -> [1, 2*2.5 + 2] = [1, 7].
  RandomAccessBaseFloatMatrixReader out("ark:" + dir + "/out.ark");
  const Matrix<BaseFloat>& m = out.Value("utt2");
  bool ok = rc == 0 && m.NumRows() == 10 && m.NumCols() == 2 && m(1, 0) == 1.0f && m(1, 1) == 7.0f;
  std::printf("%s\n", ok ? "demo: transformed features are right" : "demo: WRONG RESULT");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc == 3 && std::string(argv[1]) == "--demo") return demo(argv[2]);
  if (argc != 4) {
    std::fprintf(stderr,
                 "usage: transform_feats <transform-rspecifier> <feats-rspecifier> <feats-wspecifier>\n"
                 "       transform_feats --demo DIR\n");
    return 2;
  }
  return transform_feats(argv[1], argv[2], argv[3]);
} catch (const std::exception& e) {
  std::fprintf(stderr, "transform_feats: %s\n", e.what());
  return 1;
}
