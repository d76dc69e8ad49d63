// feats-to-htk.cc: writes each matrix of a table as an HTK feature file, written in Kaldi's
// style against tablio's Kaldi facade (only the #include line differs from a program built in
// Kaldi's src/featbin). Prints a script of the files it wrote, for copy-feats --htk-in.

#include <tablio/kaldi.hpp>

int main(int argc, char *argv[]) {
  try {
    using namespace kaldi;
    const char *usage =
        "Write each feature matrix as an HTK file <output-dir>/<key>.<output-ext>\n"
        "and a script of them to standard output\n"
        "Usage: feats-to-htk [options] <feats-rspecifier>\n"
        "e.g.: feats-to-htk --output-dir=/tmp/htk ark:feats.ark > htk.scp\n";
    ParseOptions po(usage);
    std::string dir_out = "./", ext_out = "htk";
    int32 sample_period = 100000, sample_kind = 9;  // 10 ms, USER
    po.Register("output-dir", &dir_out, "Folder of the HTK files");
    po.Register("output-ext", &ext_out, "Extension of the HTK files");
    po.Register("sample-period", &sample_period, "HTK sample period in 100 ns units");
    po.Register("sample-kind", &sample_kind, "HTK parameter kind");
    po.Read(argc, argv);
    if (po.NumArgs() != 1) {
      po.PrintUsage();
      exit(1);
    }
    SequentialBaseFloatMatrixReader feats_reader(po.GetArg(1));
    int32 num_done = 0;
    for (; !feats_reader.Done(); feats_reader.Next()) {
      const Matrix<BaseFloat> &feats = feats_reader.Value();
      std::string name = dir_out + "/" + feats_reader.Key() + "." + ext_out;
      HtkHeader header;
      header.mNSamples = feats.NumRows();
      header.mSamplePeriod = sample_period;
      header.mSampleSize = static_cast<int16>(sizeof(float) * feats.NumCols());
      header.mSampleKind = static_cast<uint16>(sample_kind);
      Output ko(name, true, false);  // binary, without Kaldi's "\0B"
      if (!WriteHtk(ko.Stream(), feats, header))
        KALDI_ERR << "Could not write to " << PrintableWxfilename(name);
      if (!ko.Close()) KALDI_ERR << "Could not close " << PrintableWxfilename(name);
      std::cout << feats_reader.Key() << ' ' << name << '\n';
      num_done++;
    }
    KALDI_LOG << "Wrote " << num_done << " HTK files";
    return (num_done != 0 ? 0 : 1);
  } catch(const std::exception &e) {
    std::cerr << e.what();
    return -1;
  }
}
