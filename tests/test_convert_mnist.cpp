// The main job, examples/convert_mnist, against Caffe's own convert_mnist_data: the same keys
// and Datum bytes for the Fashion-MNIST sample, the same database for the 1000 items Caffe
// converted (when Debian's dataset-fashion-mnist is installed), and clear failures.
#include <tablio/framing/idx.hpp>
#include <tablio/framing/lmdb.hpp>
#include <tablio/stream/filename.hpp>

#include <sys/wait.h>

#include "test_support.hpp"

using namespace tablio;

namespace {

int run_convert(const std::string& images, const std::string& labels, const std::string& out,
                std::string& output) {
  std::string command = std::string(TABLIO_CONVERT_MNIST) + " " + images + " " + labels + " " + out + " 2>&1";
  FILE* p = ::popen(command.c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) output.append(buf, n);
  int status = ::pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("convert_mnist writes what Caffe's convert_mnist_data writes", "[mnist][lmdb]") {
  test::temp_dir dir;
  std::string output;
  const std::string fashion = test::data_path("idx/fashion/");
  REQUIRE(run_convert(fashion + "t10k-images-100-idx3-ubyte.gz", fashion + "t10k-labels-100-idx1-ubyte",
                      dir / "out", output) == 0);
  INFO(output);
  CHECK(output.find("converted 100 images of 28x28") != std::string::npos);
  CHECK(output.find("MISMATCH") == std::string::npos);
  // Caffe's database holds the same first 100 records, key for key and byte for byte.
  std::filesystem::copy(test::data_path("caffe/fashion_t10k_1000_lmdb"), dir / "caffe");
  lmdb_reader ours(dir / "out/lmdb", {.no_lock = true}), caffe(dir / "caffe", {.no_lock = true});
  std::string_view k1, v1, k2, v2;
  int n = 0;
  while (ours.next(k1, v1)) {
    REQUIRE(caffe.next(k2, v2));
    CHECK(k1 == k2);
    CHECK(v1 == v2);
    ++n;
  }
  CHECK(n == 100);

  // Caffe refuses an existing database folder; so does convert_mnist.
  output.clear();
  CHECK(run_convert(fashion + "t10k-images-100-idx3-ubyte", fashion + "t10k-labels-100-idx1-ubyte",
                    dir / "out", output) == 1);
  CHECK(output.find("exists already") != std::string::npos);
  // Mismatched files are refused with what is wrong.
  output.clear();
  CHECK(run_convert(fashion + "t10k-labels-100-idx1-ubyte", fashion + "t10k-labels-100-idx1-ubyte",
                    dir / "bad", output) == 1);
  CHECK(output.find("not an MNIST image file") != std::string::npos);
  output.clear();
  CHECK(run_convert(test::data_path("idx/bad/truncated-data-idx3-ubyte"),
                    fashion + "t10k-labels-100-idx1-ubyte", dir / "bad2", output) == 1);
  CHECK(output.find("truncated") != std::string::npos);
}

TEST_CASE("convert_mnist's database is Caffe's, byte for byte", "[mnist][lmdb]") {
  const std::string t10k = "/usr/share/datasets/fashion-mnist/t10k-";
  if (!std::filesystem::exists(t10k + "images-idx3-ubyte.gz")) {
    WARN("dataset-fashion-mnist is not installed: the 1000-item comparison is skipped");
    return;
  }
  // The inputs Caffe converted: the first 1000 items of t10k, with the count set to 1000.
  test::temp_dir dir;
  idx_file images(t10k + "images-idx3-ubyte.gz"), labels(t10k + "labels-idx1-ubyte.gz");
  {
    idx_writer out_images(open_output(dir / "images"), idx_type::u8, {28, 28}, 1000);
    idx_writer out_labels(open_output(dir / "labels"), idx_type::u8, {}, 1000);
    for (std::uint64_t i = 0; i < 1000; ++i) {
      out_images.write_item<std::uint8_t>(images.item<std::uint8_t>(i));
      out_labels.write_item<std::uint8_t>(labels.item<std::uint8_t>(i));
    }
    out_images.close();
    out_labels.close();
  }
  std::string output;
  REQUIRE(run_convert(dir / "images", dir / "labels", dir / "out", output) == 0);
  CHECK(test::read_file(dir / "out/lmdb/data.mdb") ==
        test::read_file(test::data_path("caffe/fashion_t10k_1000_lmdb/data.mdb")));
  // And as the LMDB tools see it.
  auto dump = [](const std::string& file) {
    std::string out;
    reader r = open_input("mdb_dump -n " + file + " |");
    for (int c; (c = r.get()) >= 0;) out += static_cast<char>(c);
    r.close();
    return out;
  };
  std::string ours = dump(dir / "out/lmdb/data.mdb");
  CHECK(ours.find("\n 3030303030393939\n") != std::string::npos);  // key 00000999
  // mdb_dump writes a lock file beside the database it reads: it reads a copy.
  std::filesystem::copy(test::data_path("caffe/fashion_t10k_1000_lmdb/data.mdb"), dir / "reference.mdb");
  CHECK(ours == dump(dir / "reference.mdb"));
}
