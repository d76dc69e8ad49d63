// apply-mean-norm.cc: subtracts per-speaker (or per-utterance) mean vectors from features,
// written in Kaldi's style against tablio's Kaldi facade: only the #include line differs from
// a program built in Kaldi's src/featbin. It uses the matrix views and elementwise functions,
// the mapped random-access reader, the specifier and filename functions, and single files as
// well as tables.

#include <tablio/kaldi.hpp>

namespace kaldi {

// The mean of each column of feats.
void ComputeMean(const MatrixBase<BaseFloat> &feats, Vector<BaseFloat> *mean) {
  mean->Resize(feats.NumCols());
  for (MatrixIndexT r = 0; r < feats.NumRows(); r++)
    mean->AddVec(1.0, feats.Row(r));
  if (feats.NumRows() > 0) mean->Scale(1.0 / feats.NumRows());
}

// Subtracts mean from every row of feats, then applies the options' elementwise steps.
void Normalize(const VectorBase<BaseFloat> &mean, BaseFloat scale, BaseFloat floor,
               bool apply_log, MatrixBase<BaseFloat> *feats) {
  for (MatrixIndexT r = 0; r < feats->NumRows(); r++) {
    SubVector<BaseFloat> row(*feats, r);
    row.AddVec(-1.0, mean);
  }
  if (scale != 1.0) feats->Scale(scale);
  if (apply_log) {
    feats->ApplyFloor(floor);
    feats->ApplyLog();
  }
}

}  // namespace kaldi

int main(int argc, char *argv[]) {
  try {
    using namespace kaldi;
    const char *usage =
        "Subtract mean vectors from features: per speaker with --utt2spk, else per utterance.\n"
        "With a means rspecifier, the means are read; with \"-\" they are computed from each\n"
        "utterance.\n"
        "Usage: apply-mean-norm [options] <means-rspecifier|-> <feats-rspecifier> <feats-wspecifier>\n"
        "  or:  apply-mean-norm [options] - <feats-rxfilename> <feats-wxfilename>\n"
        "e.g.: apply-mean-norm --utt2spk=ark:utt2spk ark:spk_means.ark scp:feats.scp ark:-\n";

    ParseOptions po(usage);
    std::string utt2spk_rspecifier;
    BaseFloat scale = 1.0, floor = 1.0e-10;
    bool apply_log = false, binary = true;
    int32 first_column = 0;
    po.Register("utt2spk", &utt2spk_rspecifier, "rspecifier of the utterances' speakers");
    po.Register("scale", &scale, "Scale of the normalized features");
    po.Register("floor", &floor, "Floor applied before --apply-log");
    po.Register("apply-log", &apply_log, "Take the log of the normalized features");
    po.Register("binary", &binary, "Write single files in binary mode");
    po.Register("first-column", &first_column, "Normalize only this column and those after it");
    po.Read(argc, argv);

    if (po.NumArgs() != 3) {
      po.PrintUsage();
      exit(1);
    }
    std::string means_rspecifier = po.GetArg(1), feats_in = po.GetArg(2),
        feats_out = po.GetArg(3);
    if (first_column < 0) KALDI_ERR << "--first-column must not be negative";

    bool in_is_table = ClassifyRspecifier(feats_in, NULL, NULL) != kNoRspecifier,
        out_is_table = ClassifyWspecifier(feats_out, NULL, NULL, NULL) != kNoWspecifier;
    if (in_is_table != out_is_table)
      KALDI_ERR << "Cannot mix tables and single files";

    if (!in_is_table) {
      if (means_rspecifier != "-")
        KALDI_ERR << "With single files the mean is computed: give - as the means";
      Matrix<BaseFloat> feats;
      ReadKaldiObject(feats_in, &feats);
      SubMatrix<BaseFloat> part(feats, 0, feats.NumRows(), std::min(first_column, feats.NumCols()),
                                feats.NumCols() - std::min(first_column, feats.NumCols()));
      Vector<BaseFloat> mean;
      ComputeMean(part, &mean);
      Normalize(mean, scale, floor, apply_log, &part);
      WriteKaldiObject(feats, feats_out, binary);
      KALDI_LOG << "Normalized features from " << PrintableRxfilename(feats_in)
                << " to " << PrintableWxfilename(feats_out);
      return 0;
    }

    RandomAccessBaseFloatVectorReaderMapped means_reader;
    if (means_rspecifier != "-" && !means_reader.Open(means_rspecifier, utt2spk_rspecifier))
      KALDI_ERR << "Cannot open means " << means_rspecifier;
    SequentialBaseFloatMatrixReader feats_reader(feats_in);
    BaseFloatMatrixWriter feats_writer(feats_out);
    int32 num_done = 0, num_err = 0;
    for (; !feats_reader.Done(); feats_reader.Next()) {
      std::string utt = feats_reader.Key();
      Matrix<BaseFloat> feats(feats_reader.Value());
      if (first_column > feats.NumCols()) {
        KALDI_WARN << "Utterance " << utt << " has only " << feats.NumCols() << " columns";
        num_err++;
        continue;
      }
      SubMatrix<BaseFloat> part = feats.Range(0, feats.NumRows(), first_column,
                                              feats.NumCols() - first_column);
      Vector<BaseFloat> mean;
      if (means_reader.IsOpen()) {
        if (!means_reader.HasKey(utt)) {
          KALDI_WARN << "No mean for utterance " << utt;
          num_err++;
          continue;
        }
        mean = means_reader.Value(utt);
        if (mean.Dim() != part.NumCols()) {
          KALDI_WARN << "Mean of dimension " << mean.Dim() << " for " << part.NumCols()
                     << " columns, utterance " << utt;
          num_err++;
          continue;
        }
      } else {
        ComputeMean(part, &mean);
      }
      Normalize(mean, scale, floor, apply_log, &part);
      KALDI_VLOG(2) << "Utterance " << utt << ": sum after normalizing " << part.Sum();
      feats_writer.Write(utt, feats);
      num_done++;
    }
    if (means_reader.IsOpen() && !means_reader.Close())
      KALDI_ERR << "Error closing means " << means_rspecifier;
    KALDI_LOG << "Normalized " << num_done << " utterances, errors on " << num_err;
    return (num_done != 0 ? 0 : 1);
  } catch(const std::exception &e) {
    std::cerr << e.what();
    return -1;
  }
}
