// A program that uses an installed tablio: a user struct through the Kaldi binary codec, and,
// when the components are there, a gzip-compressed TFRecord table, an LMDB table, and remote
// names that reach the remote layer (src/remote.cpp, compiled and linked with libcurl).
#include <tablio/tablio.hpp>
#if defined(TABLIO_WITH_JPEG)
#include <tablio/types/image.hpp>
#endif

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

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
  // Record numbers: the keys a TFRecord file, which keeps none, gives back.
  for (int i = 0; i < 3; ++i)
    out.write(tablio::ordinal_key(static_cast<unsigned>(i)), std::vector<float>(i + 1, 0.25f));
  out.close();
  std::size_t values = 0;
  for (auto& [key, value] : tablio::sequential_table_reader<table>(rspecifier)) values += value.size();
  return values == 6;
}

#if defined(TABLIO_WITH_CURL)
// Reading NAME must fail as a refused connection does, with an io_error that names it: the
// remote layer (src/remote.cpp) is compiled in and libcurl linked, and no server is needed, for
// nothing listens on port 9 (discard) of the loopback interface.
static bool remote_read_refused(const std::string& name) {
  try {
    tablio::sequential_table_reader<tablio::holder<std::vector<float>>> in("tfrecord:" + name);
    for (auto& entry : in) (void)entry;
  } catch (const tablio::io_error& e) {
    std::printf("  %s\n", e.what());
    return std::string(e.what()).find(name) != std::string::npos;
  }
  return false;
}

static bool remote_layer_linked() {
  setenv("TABLIO_HTTP_RETRIES", "1", 1);  // refused once is enough
  setenv("NO_PROXY", "*", 1);             // a proxy in the environment would answer instead
  setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9", 1);
  return remote_read_refused("http://127.0.0.1:9/x.tfrecord") &&
         remote_read_refused("s3://bucket/x.tfrecord");
}
#endif

#if defined(TABLIO_WITH_JPEG)
// A 2x1 PNG of one colour decodes to its pixels (libpng linked), and bytes that start as a JPEG
// but are none are a format_error (TurboJPEG linked).
static bool images_decode() {
  static const char png[] =
      "\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52\x00\x00\x00\x02\x00\x00\x00"
      "\x01\x08\x02\x00\x00\x00\x7b\x40\xe8\xdd\x00\x00\x00\x0f\x49\x44\x41\x54\x78\x9c\x63\xe4\x12"
      "\x91\x63\x60\x60\x00\x00\x01\x26\x00\x3e\x63\xf8\x60\x59\x00\x00\x00\x00\x49\x45\x4e\x44\xae"
      "\x42\x60\x82";
  tablio::image im;
  tablio::decode_image(std::string_view(png, sizeof png - 1), im, {}, "consumer.png");
  bool pixels =
      im.width == 2 && im.height == 1 && im.pixels == std::vector<std::uint8_t>{10, 20, 30, 10, 20, 30};
  try {
    tablio::decode_image("\xff\xd8\xff\xe0 not a JPEG", im, {}, "consumer.jpg");
  } catch (const tablio::format_error&) {
    return pixels;
  }
  return false;
}
#endif

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
#if defined(TABLIO_WITH_CURL)
  ok = report("curl component", remote_layer_linked()) && ok;
#endif
#if defined(TABLIO_WITH_JPEG)
  ok = report("jpeg component", images_decode()) && ok;
#endif
  return ok ? 0 : 1;
}
