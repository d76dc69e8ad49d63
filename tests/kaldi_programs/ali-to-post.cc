// ali-to-post.cc: alignments to posteriors, written in Kaldi's style against tablio's Kaldi
// facade. Only the #include line differs from a program built in Kaldi's src/bin: it tests
// that such a program compiles unchanged (a holder written Kaldi's way, Kaldi's options and
// config files, the logging macros, namespace kaldi reopened, a table made from an option
// that defaults to empty).

#include <tablio/kaldi.hpp>

namespace kaldi {

// One frame's posteriors: (class, weight) pairs.
typedef std::vector<std::vector<std::pair<int32, BaseFloat> > > Posterior;

// Writes and reads Posterior in Kaldi's layout: the frame count, then per frame its pair count
// and each pair; text mode brackets each frame.
class PosteriorHolder {
 public:
  typedef Posterior T;

  PosteriorHolder() { }

  static bool Write(std::ostream &os, bool binary, const T &t) {
    InitKaldiOutputStream(os, binary);
    try {
      if (binary) {
        int32 frames = t.size();
        WriteBasicType(os, binary, frames);
        for (size_t i = 0; i < t.size(); i++) {
          int32 pairs = t[i].size();
          WriteBasicType(os, binary, pairs);
          for (size_t j = 0; j < t[i].size(); j++) {
            WriteBasicType(os, binary, t[i][j].first);
            WriteBasicType(os, binary, t[i][j].second);
          }
        }
      } else {
        for (size_t i = 0; i < t.size(); i++) {
          os << "[ ";
          for (size_t j = 0; j < t[i].size(); j++)
            os << t[i][j].first << ' ' << t[i][j].second << ' ';
          os << "] ";
        }
        os << '\n';
      }
      return os.good();
    } catch (const std::exception &e) {
      KALDI_WARN << "Exception caught writing posteriors: " << e.what();
      return false;
    }
  }

  void Clear() { Posterior().swap(t_); }

  bool Read(std::istream &is) {
    t_.clear();
    bool binary;
    if (!InitKaldiInputStream(is, &binary)) {
      KALDI_WARN << "Reading posteriors: no header";
      return false;
    }
    try {
      if (binary) {
        int32 frames;
        ReadBasicType(is, binary, &frames);
        if (frames < 0) KALDI_ERR << "Negative frame count " << frames;
        t_.resize(frames);
        for (int32 i = 0; i < frames; i++) {
          int32 pairs;
          ReadBasicType(is, binary, &pairs);
          if (pairs < 0) KALDI_ERR << "Negative pair count " << pairs;
          t_[i].resize(pairs);
          for (int32 j = 0; j < pairs; j++) {
            ReadBasicType(is, binary, &t_[i][j].first);
            ReadBasicType(is, binary, &t_[i][j].second);
          }
        }
        return true;
      }
      std::string line;
      std::getline(is, line);
      std::istringstream frames(line);
      std::string token;
      while (frames >> token) {
        if (token != "[") KALDI_ERR << "Expected [, got " << token;
        std::vector<std::pair<int32, BaseFloat> > frame;
        while (frames >> token && token != "]") {
          std::pair<int32, BaseFloat> p;
          std::string weight;
          if (!ConvertStringToInteger(token, &p.first) || !(frames >> weight) ||
              !ConvertStringToReal(weight, &p.second))
            KALDI_ERR << "Bad posterior pair at " << token;
          frame.push_back(p);
        }
        if (token != "]") KALDI_ERR << "Posterior frame without ]";
        t_.push_back(frame);
      }
      return true;
    } catch (const std::exception &e) {
      KALDI_WARN << "Exception caught reading posteriors: " << e.what();
      return false;
    }
  }

  static bool IsReadInBinary() { return true; }

  T &Value() { return t_; }

  void Swap(PosteriorHolder *other) { t_.swap(other->t_); }

 private:
  KALDI_DISALLOW_COPY_AND_ASSIGN(PosteriorHolder);
  T t_;
};

typedef TableWriter<PosteriorHolder> PosteriorWriter;
typedef SequentialTableReader<PosteriorHolder> SequentialPosteriorReader;
typedef RandomAccessTableReader<PosteriorHolder> RandomAccessPosteriorReader;

// Parses "from:to,from:to" into a map of classes.
bool ParseClassMap(const std::string &str, std::map<int32, int32> *out) {
  std::vector<std::string> pairs;
  SplitStringToVector(str, ",", true, &pairs);
  for (size_t i = 0; i < pairs.size(); i++) {
    std::vector<int32> from_to;
    if (!SplitStringToIntegers(pairs[i], ":", false, &from_to) || from_to.size() != 2)
      return false;
    (*out)[from_to[0]] = from_to[1];
  }
  return true;
}

}  // namespace kaldi

int main(int argc, char *argv[]) {
  try {
    using namespace kaldi;

    const char *usage =
        "Turn alignments into posteriors, one class per frame with the given weight\n"
        "Usage:  ali-to-post [options] <alignments-rspecifier> <posteriors-wspecifier>\n"
        "   or:  ali-to-post --check [options] <posteriors-rspecifier> <alignments-rspecifier>\n"
        "e.g.: ali-to-post ark:1.ali ark:1.post\n";

    ParseOptions po(usage);
    BaseFloat weight = 1.0;
    std::string class_map_str;
    std::string lengths_wspecifier;
    bool check = false;
    po.Register("weight", &weight, "Weight of each frame's class");
    po.Register("class-map", &class_map_str, "Classes to rename, as from:to,from:to");
    po.Register("write-lengths", &lengths_wspecifier,
                "Wspecifier to write the number of frames of each utterance");
    po.Register("check", &check, "Read posteriors and check them against the alignments");
    po.Read(argc, argv);

    if (po.NumArgs() != 2) {
      po.PrintUsage();
      exit(1);
    }

    std::map<int32, int32> class_map;
    if (!ParseClassMap(class_map_str, &class_map))
      KALDI_ERR << "Invalid --class-map option " << class_map_str;
    KALDI_VLOG(1) << "Renaming " << class_map.size() << " classes";

    if (check) {
      SequentialPosteriorReader post_reader(po.GetArg(1));
      RandomAccessInt32VectorReader ali_reader(po.GetArg(2));
      int32 num_done = 0, num_bad = 0;
      for (; !post_reader.Done(); post_reader.Next()) {
        std::string key = post_reader.Key();
        const Posterior &post = post_reader.Value();
        if (!ali_reader.HasKey(key)) {
          KALDI_WARN << "No alignment for " << key;
          num_bad++;
          continue;
        }
        const std::vector<int32> &ali = ali_reader.Value(key);
        bool same = post.size() == ali.size();
        for (size_t i = 0; same && i < ali.size(); i++) {
          int32 c = class_map.count(ali[i]) ? class_map[ali[i]] : ali[i];
          same = post[i].size() == 1 && post[i][0].first == c && post[i][0].second == weight;
        }
        if (same) num_done++;
        else num_bad++;
      }
      std::cout << num_done << " match, " << num_bad << " differ\n";
      return num_bad == 0 ? 0 : 1;
    }

    SequentialInt32VectorReader ali_reader(po.GetArg(1));
    PosteriorWriter post_writer(po.GetArg(2));
    Int32Writer lengths_writer(lengths_wspecifier);  // not opened when the option is empty
    int32 num_done = 0;
    for (; !ali_reader.Done(); ali_reader.Next()) {
      const std::vector<int32> &ali = ali_reader.Value();
      Posterior post(ali.size());
      for (size_t i = 0; i < ali.size(); i++) {
        int32 c = class_map.count(ali[i]) ? class_map[ali[i]] : ali[i];
        post[i].push_back(std::make_pair(c, weight));
      }
      post_writer.Write(ali_reader.Key(), post);
      if (lengths_writer.IsOpen())
        lengths_writer.Write(ali_reader.Key(), static_cast<int32>(ali.size()));
      num_done++;
    }
    KALDI_LOG << "Converted " << num_done << " alignments to posteriors.";
    return (num_done != 0 ? 0 : 1);
  } catch(const std::exception &e) {
    std::cerr << e.what();
    return -1;
  }
}
