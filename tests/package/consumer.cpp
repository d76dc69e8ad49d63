// A program that uses an installed tablio: a user struct through the Kaldi binary codec, and,
// when the components are there, a gzip-compressed TFRecord table and an LMDB table.
#include <tablio/tablio.hpp>

#include <cstdio>
#include <filesystem>
#include <string>

struct point {
  int x;
  float y;
  std::string label;
};

static bool codec_round_trip() {
  point p{3, 0.5f, "origin"};
  auto bytes = tablio::encode<tablio::kaldi_binary>(p);
  auto back = tablio::decode<tablio::kaldi_binary, point>(std::string_view(bytes.data(), bytes.size()));
  return back.x == 3 && back.y == 0.5f && back.label == "origin";
}

// Prints how one part went, and passes its result on.
static bool report(const char* what, bool ok) {
  std::printf("%s: %s\n", what, ok ? "ok" : "MISMATCH");
  return ok;
}

// Writes three entries to WSPECIFIER and reads them back through RSPECIFIER.
static bool table_round_trip(const std::string& wspecifier, const std::string& rspecifier) {
  using table = tablio::holder<std::vector<float>>;
  tablio::table_writer<table> out(wspecifier);
  for (int i = 0; i < 3; ++i) out.write("key" + std::to_string(i), std::vector<float>(i + 1, 0.25f));
  out.close();
  std::size_t values = 0;
  for (auto& [key, value] : tablio::sequential_table_reader<table>(rspecifier)) values += value.size();
  return values == 6;
}

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  fs::path dir = argc > 1 ? fs::path(argv[1]) : fs::temp_directory_path() / "tablio-consumer";
  fs::remove_all(dir);
  fs::create_directories(dir);
  bool ok = report("codec", codec_round_trip());
#if defined(TABLIO_WITH_ZLIB)
  std::string gz = (dir / "v.tfrecord.gz").string();
  ok = report("zlib component", table_round_trip("tfrecord,gzip:" + gz, "tfrecord:" + gz)) && ok;
#endif
#if defined(TABLIO_WITH_LMDB)
  std::string db = (dir / "lmdb").string();
  ok = report("lmdb component", table_round_trip("lmdb:" + db, "lmdb:" + db)) && ok;
#endif
  return ok ? 0 : 1;
}
