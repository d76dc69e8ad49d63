// copy-general-feats.cc: copies features stored in any of GeneralMatrix's forms (full,
// compressed, sparse), written in Kaldi's style against tablio's Kaldi facade, as nnet3's
// example tools handle their inputs. Only the #include line differs from a program built in
// Kaldi's src/featbin.

#include "base/kaldi-common.h"
#include "matrix/sparse-matrix.h"
#include "util/common-utils.h"

namespace kaldi {

// A sparse copy of feats keeping the values whose magnitude reaches threshold.
SparseMatrix<BaseFloat> Sparsify(const Matrix<BaseFloat> &feats, BaseFloat threshold) {
  std::vector<std::vector<std::pair<MatrixIndexT, BaseFloat> > > rows(feats.NumRows());
  for (MatrixIndexT r = 0; r < feats.NumRows(); r++)
    for (MatrixIndexT c = 0; c < feats.NumCols(); c++)
      if (std::abs(feats(r, c)) >= threshold)
        rows[r].push_back(std::make_pair(c, feats(r, c)));
  return SparseMatrix<BaseFloat>(feats.NumCols(), rows);
}

}  // namespace kaldi

int main(int argc, char *argv[]) {
  try {
    using namespace kaldi;
    const char *usage =
        "Copy features held as full, compressed or sparse matrices, optionally converting them.\n"
        "Usage: copy-general-feats [options] <feats-rspecifier> <feats-wspecifier>\n"
        "e.g.: copy-general-feats --compress=true ark:feats.ark ark:compressed.ark\n";

    ParseOptions po(usage);
    bool compress = false, uncompress = false, full = false;
    BaseFloat sparsify_threshold = 0.0, scale = 1.0;
    std::string num_rows_wspecifier;
    po.Register("compress", &compress, "Compress full matrices (CompressedMatrix)");
    po.Register("uncompress", &uncompress, "Write compressed matrices as full ones");
    po.Register("full", &full, "Write every matrix as a full one");
    po.Register("sparsify-threshold", &sparsify_threshold,
                "If > 0, write sparse matrices keeping values of at least this magnitude");
    po.Register("scale", &scale, "Scale applied to every matrix, in the form it is held");
    po.Register("write-num-rows", &num_rows_wspecifier, "Wspecifier for the number of rows");
    po.Read(argc, argv);

    if (po.NumArgs() != 2) {
      po.PrintUsage();
      exit(1);
    }
    SequentialGeneralMatrixReader reader(po.GetArg(1));
    GeneralMatrixWriter writer(po.GetArg(2));
    Int32Writer num_rows_writer(num_rows_wspecifier);
    int32 num_done = 0, num_sparse = 0;
    for (; !reader.Done(); reader.Next(), num_done++) {
      GeneralMatrix mat = reader.Value();
      if (scale != 1.0) mat.Scale(scale);
      if (sparsify_threshold > 0.0) {
        Matrix<BaseFloat> full;
        mat.GetMatrix(&full);
        mat = Sparsify(full, sparsify_threshold);
      }
      if (compress) mat.Compress();
      if (uncompress) mat.Uncompress();
      if (full && mat.Type() != kFullMatrix) {
        Matrix<BaseFloat> values;
        mat.GetMatrix(&values);
        mat = values;
      }
      if (mat.Type() == kSparseMatrix) num_sparse++;
      writer.Write(reader.Key(), mat);
      if (num_rows_writer.IsOpen()) num_rows_writer.Write(reader.Key(), mat.NumRows());
    }
    KALDI_LOG << "Copied " << num_done << " feature matrices, " << num_sparse << " of them sparse.";
    return (num_done != 0 ? 0 : 1);
  } catch (const std::exception &e) {
    std::cerr << e.what();
    return -1;
  }
}
