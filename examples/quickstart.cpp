// quickstart: a user struct written with no serialization code (Boost.PFR) through the raw
// and the Kaldi codecs, read back and checked; then a Kaldi-style class with Read/Write
// members stored unchanged as a Kaldi archive entry.
//
//   quickstart [OUT_DIR]      (default: ./quickstart-out)
#include <tablio/tablio.hpp>

#include <cstdio>
#include <filesystem>
#include <istream>
#include <ostream>
#include <string>
#include <vector>

// A plain aggregate: no code is needed to serialize it.
struct utterance {
  std::uint32_t speaker;
  std::string text;
  std::vector<float> pitch;
  std::vector<std::int32_t> alignment;
  double duration;
};

// A class written for Kaldi: its Write/Read members work unchanged.
class feature_scaler {
 public:
  feature_scaler() = default;
  explicit feature_scaler(std::vector<float> scale) : scale_(std::move(scale)) {}
  void Write(std::ostream& os, bool binary) const {
    os << "<Scaler> " << scale_.size() << ' ';
    for (float s : scale_) {
      if (binary)
        os.write(reinterpret_cast<const char*>(&s), sizeof s);
      else
        os << s << ' ';
    }
    os << "</Scaler> ";
  }
  void Read(std::istream& is, bool binary) {
    std::string token;
    std::size_t n = 0;
    is >> token >> n;
    if (token != "<Scaler>" || n > 4096) {
      is.setstate(std::ios::failbit);
      return;
    }
    is.get();
    scale_.resize(n);
    for (float& s : scale_) {
      if (binary)
        is.read(reinterpret_cast<char*>(&s), sizeof s);
      else
        is >> s;
    }
    is >> token;
    if (token != "</Scaler>") is.setstate(std::ios::failbit);
  }
  const std::vector<float>& scale() const { return scale_; }

 private:
  std::vector<float> scale_;
};

namespace {

bool same(const utterance& a, const utterance& b) {
  return a.speaker == b.speaker && a.text == b.text && a.pitch == b.pitch && a.alignment == b.alignment &&
         a.duration == b.duration;
}

// Writes `u` to `path` with codec C, reads it back, and reports the size.
template <class C>
bool write_and_read(const std::string& path, const utterance& u, const char* codec_name) {
  {
    tablio::writer out = tablio::open_output(path);
    tablio::encode_to<C>(out, u);
    out.close();  // throws if anything was lost
  }
  tablio::reader in = tablio::open_input(path);
  utterance back = tablio::decode_from<C, utterance>(in);
  bool ok = same(u, back);
  std::printf("  %-13s %-40s %4llu bytes, read back %s\n", codec_name, path.c_str(),
              static_cast<unsigned long long>(std::filesystem::file_size(path)),
              ok ? "identical" : "DIFFERENT");
  return ok;
}

}  // namespace

int main(int argc, char** argv) try {
  const std::string dir = argc > 1 ? argv[1] : "quickstart-out";
  std::filesystem::create_directories(dir);
  const utterance u{7, "the cat sat", {110.5f, 112.25f, 0.0f, 98.75f}, {3, 3, 4, 4, 4, 9}, 1.25};

  std::printf("tablio %d.%d.%d quickstart\n", tablio::version.major, tablio::version.minor,
              tablio::version.patch);
  std::printf("1. a struct with no serialization code (Boost.PFR), three codecs:\n");
  bool ok = write_and_read<tablio::raw_little>(dir + "/utterance.raw", u, "raw<little>");
  ok &= write_and_read<tablio::kaldi_binary>(dir + "/utterance.kaldi", u, "kaldi_binary");
  ok &= write_and_read<tablio::kaldi_text>(dir + "/utterance.txt", u, "kaldi_text");

  std::printf("2. a Kaldi-style class (Write/Read members) as Kaldi archive entries:\n");
  const std::string ark = dir + "/scalers.ark";
  {
    tablio::writer out = tablio::open_output(ark);
    const bool modes[] = {true, false};
    for (bool binary : modes) {
      out.write(binary ? "spk_binary " : "spk_text ");
      tablio::kaldi_object_holder<feature_scaler>::write(out, binary, feature_scaler({0.5f, 2.0f, 1.5f}));
    }
    out.close();
  }
  tablio::reader in = tablio::open_input(ark);
  for (int entry = 0; entry < 2; ++entry) {
    std::string key = tablio::kaldi_io::read_token(in);
    tablio::kaldi_object_holder<feature_scaler> h;
    h.read(in);
    bool same_scale = h.value().scale() == std::vector<float>{0.5f, 2.0f, 1.5f};
    ok &= same_scale;
    std::printf("  %-13s read back %s\n", key.c_str(), same_scale ? "identical" : "DIFFERENT");
  }
  std::printf("%s\n", ok ? "all values read back identical" : "MISMATCH");
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "quickstart: %s\n", e.what());
  return 1;
}
