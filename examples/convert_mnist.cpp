// convert_mnist: converts an MNIST-format pair of IDX files (images and labels) into the
// three dataset formats tablio speaks, with one table API, then reads each back and checks it.
//
//   OUT_DIR/lmdb            a Caffe LMDB of Datum, exactly as Caffe's convert_mnist_data
//                           writes it (keys %08d, the same Datum bytes, the same database)
//   OUT_DIR/data.tfrecord   tf.Examples as TensorFlow's MNIST converter writes them (height,
//                           width, depth, label, image_raw), with the key in a "key" feature
//   OUT_DIR/data.ark        a Kaldi archive of {label, rows, cols, pixels} records
//
//   convert_mnist [IMAGES LABELS OUT_DIR]
//
// By default it converts Fashion-MNIST's 60,000 training images from Debian's
// dataset-fashion-mnist package into ./mnist-out. The IDX files may be gzip-compressed.
#include <tablio/tablio.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

namespace fs = std::filesystem;
using namespace tablio;

namespace {

// One image as a Kaldi archive entry: a plain struct, serialized field by field.
struct mnist_image {
  std::int32_t label;
  std::int32_t rows;
  std::int32_t cols;
  std::vector<std::uint8_t> pixels;
};

// What every copy must agree on: a CRC32C over each entry's key, label and pixels, in order.
struct digest {
  std::uint64_t count = 0;
  std::uint32_t crc = 0;
  void add(std::string_view key, std::int64_t label, std::string_view pixels) {
    crc = crc32c_extend(crc, key.data(), key.size());
    char l[8];
    store<std::endian::little>(l, label);
    crc = crc32c_extend(crc, l, 8);
    crc = crc32c_extend(crc, pixels.data(), pixels.size());
    ++count;
  }
  bool operator==(const digest&) const = default;
};

std::string_view as_chars(const std::vector<std::uint8_t>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size()};
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::uint64_t size_on_disk(const fs::path& p) {
  if (fs::is_regular_file(p)) return fs::file_size(p);
  std::uint64_t total = 0;
  for (const auto& e : fs::recursive_directory_iterator(p))
    if (e.is_regular_file()) total += e.file_size();
  return total;
}

class progress {
 public:
  progress(const char* what, std::uint64_t total) : what_(what), total_(total), tty_(::isatty(2)) {}
  void update(std::uint64_t done) {
    if (done % 2000 != 0 && done != total_) return;
    if (tty_)
      std::fprintf(stderr, "\r%s %llu/%llu", what_, static_cast<unsigned long long>(done),
                   static_cast<unsigned long long>(total_));
    else if (done == total_)
      std::fprintf(stderr, "%s %llu/%llu\n", what_, static_cast<unsigned long long>(done),
                   static_cast<unsigned long long>(total_));
  }
  ~progress() {
    if (tty_) std::fputs("\r\033[K", stderr);
  }

 private:
  const char* what_;
  std::uint64_t total_;
  bool tty_;
};

int convert(const std::string& images_path, const std::string& labels_path, const fs::path& out) {
  idx_file images(images_path), labels(labels_path);
  const idx_header& ih = images.header();
  if (ih.type != idx_type::u8 || ih.dims.size() != 3)
    throw usage_error("'" + images_path + "' is not an MNIST image file (unsigned bytes, 3 dimensions)");
  if (labels.header().type != idx_type::u8 || labels.header().dims.size() != 1)
    throw usage_error("'" + labels_path + "' is not an MNIST label file (unsigned bytes, 1 dimension)");
  if (images.size() != labels.size())
    throw usage_error("'" + images_path + "' has " + std::to_string(images.size()) + " images but '" +
                      labels_path + "' has " + std::to_string(labels.size()) + " labels");
  const std::int32_t rows = static_cast<std::int32_t>(ih.dims[1]),
                     cols = static_cast<std::int32_t>(ih.dims[2]);
  const std::uint64_t n = images.size();

  fs::create_directories(out);
  const std::string lmdb_path = (out / "lmdb").string(), tf_path = (out / "data.tfrecord").string(),
                    ark_path = (out / "data.ark").string();
  if (fs::exists(lmdb_path)) throw usage_error("'" + lmdb_path + "' exists already; Caffe refuses it too");

  // ----- write all three
  auto start = std::chrono::steady_clock::now();
  digest source;
  {
    table_writer<datum_holder> lmdb("lmdb:" + lmdb_path);
    table_writer<example_holder> tf("tfrecord,key=key:" + tf_path);
    table_writer<holder<mnist_image>> ark("ark:" + ark_path);
    datum d;
    d.channels = 1;
    d.height = rows;
    d.width = cols;
    example ex;
    ex.set("height", std::vector<std::int64_t>{rows});
    ex.set("width", std::vector<std::int64_t>{cols});
    ex.set("depth", std::vector<std::int64_t>{1});
    mnist_image image{0, rows, cols, {}};
    progress shown("converting", n);
    char key[24];  // any 64-bit index fits
    for (std::uint64_t i = 0; i < n; ++i) {
      std::snprintf(key, sizeof key, "%08llu", static_cast<unsigned long long>(i));  // Caffe's keys
      std::span<const char> pixels = images.item_bytes(i);
      const std::int32_t label = static_cast<unsigned char>(labels.item_bytes(i)[0]);
      source.add(key, label, {pixels.data(), pixels.size()});

      d.data.assign(pixels.data(), pixels.size());
      d.label = label;
      lmdb.write(key, d);

      ex.set("label", std::vector<std::int64_t>{label});
      ex.set("image_raw", std::vector<std::string>{d.data});
      tf.write(key, ex);

      image.label = label;
      image.pixels.assign(pixels.begin(), pixels.end());
      ark.write(key, image);
      shown.update(i + 1);
    }
    lmdb.close();
    tf.close();
    ark.close();
  }
  double write_time = seconds_since(start);

  // ----- read each back through the same table classes
  struct result {
    const char* format;
    std::string path;
    double seconds;
    digest got;
  };
  std::vector<result> results;
  auto timed = [&](const char* format, const std::string& path, auto read) {
    auto t = std::chrono::steady_clock::now();
    digest got;
    read(got);
    results.push_back({format, path, seconds_since(t), got});
  };
  timed("Caffe LMDB", lmdb_path, [&](digest& got) {
    for (auto& [key, datum] : sequential_table_reader<datum_view_holder>("lmdb:" + lmdb_path))
      got.add(key, datum.label, datum.data);
  });
  timed("TFRecord", tf_path, [&](digest& got) {
    example_view view;
    tfrecord_reader records(open_tfrecord_input(tf_path));
    for (std::string_view record; records.next(record);) {
      view.parse(record, tf_path);
      got.add(view.bytes("key").front(), view.int64s("label").front(), view.bytes("image_raw").front());
    }
  });
  timed("Kaldi archive", ark_path, [&](digest& got) {
    for (auto& [key, image] : sequential_table_reader<holder<mnist_image>>("ark:" + ark_path))
      got.add(key, image.label, as_chars(image.pixels));
  });

  std::printf("converted %llu images of %dx%d and their labels in %.2f s\n  from %s\n   and %s\n",
              static_cast<unsigned long long>(n), rows, cols, write_time, images_path.c_str(),
              labels_path.c_str());
  std::printf("  %-14s %10s %9s %8s %9s      %s\n", "format", "size", "read", "entries", "checksum", "path");
  bool all_well = true;
  for (const auto& r : results) {
    bool ok = r.got == source;
    all_well = all_well && ok;
    std::printf("  %-14s %7.1f MB %7.3f s %8llu  %08x %-8s %s\n", r.format,
                static_cast<double>(size_on_disk(r.path)) / 1e6, r.seconds,
                static_cast<unsigned long long>(r.got.count), r.got.crc, ok ? "ok" : "MISMATCH",
                r.path.c_str());
  }
  std::printf("  %-14s %10s %9s %8llu  %08x\n", "source IDX", "", "", static_cast<unsigned long long>(n),
              source.crc);
  return all_well ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string debian = "/usr/share/datasets/fashion-mnist/";
  std::string images = debian + "train-images-idx3-ubyte.gz", labels = debian + "train-labels-idx1-ubyte.gz";
  fs::path out = "mnist-out";
  if (argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    std::puts("usage: convert_mnist [IMAGES LABELS OUT_DIR]");
    return 0;
  }
  if (argc == 4) {
    images = argv[1];
    labels = argv[2];
    out = argv[3];
  } else if (argc != 1) {
    std::fputs("usage: convert_mnist [IMAGES LABELS OUT_DIR]\n", stderr);
    return 2;
  }
  try {
    return convert(images, labels, out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "convert_mnist: %s\n", e.what());
    return 1;
  }
}
