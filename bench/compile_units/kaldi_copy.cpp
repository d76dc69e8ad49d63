// Kaldi's copy-feats, as Kaldi code compiled against the facade (also measured with
// TABLIO_SEPARATE_COMPILATION, the compiled mode).
#include <tablio/kaldi.hpp>
namespace kaldi = tablio::kaldi;
int main(int argc, char** argv) {
  using namespace kaldi;
  if (argc != 3) return 1;
  SequentialBaseFloatMatrixReader reader(argv[1]);
  BaseFloatMatrixWriter writer(argv[2]);
  for (; !reader.Done(); reader.Next()) writer.Write(reader.Key(), reader.Value());
  return writer.Close() ? 0 : 1;
}
