// Threads against one thread, on random tables: every framing and kind of holder, random shapes
// and sizes, files read through windows of sizes from a few bytes to the reader's own (so that
// objects and their headers straddle windows everywhere), good entries and bad ones (files cut
// short, bytes changed, records that do not decode, script lines that point inside objects or at
// missing files), with 'p' and without. With 2 and 4 threads, used for every entry or as the
// table measures, the same keys, values, errors and messages as one thread. Part of test_threads (and so also
// run under ThreadSanitizer); tests/fuzz/fuzz_threads.cpp fuzzes archives the same way.
#include <tablio/tablio.hpp>

#include <algorithm>
#include <random>

#include "test_support.hpp"
#include "threads_support.hpp"

using namespace tablio;

namespace {

using random_bits = std::mt19937;

int uniform(random_bits& rng, int low, int high) {
  return std::uniform_int_distribution<int>(low, high)(rng);
}

std::string random_key(random_bits& rng, int i) {
  return "k" + std::to_string(i) + std::string(static_cast<std::size_t>(uniform(rng, 0, 9)), 'x');
}

matrix<float> random_matrix(random_bits& rng, int most_rows) {
  int rows = uniform(rng, 0, most_rows), cols = rows == 0 ? 0 : uniform(rng, 1, 40);
  matrix<float> m(rows, cols);
  std::normal_distribution<float> normal(0, 3);
  for (std::size_t k = 0; k < m.size(); ++k) m.data()[k] = normal(rng);
  return m;
}

// An object as its holder writes it in binary.
template <class H>
std::string object_bytes(const typename H::value_type& v) {
  std::string bytes;
  writer w = memory_writer(bytes);
  H::write(w, true, v);
  w.close();
  return bytes;
}

// An archive of matrices of every binary kind Kaldi writes, mixed: float, double, and compressed
// by each method (an empty matrix compressed is an empty CM).
std::string mixed_archive(random_bits& rng, int count, int most_rows) {
  std::string ark;
  for (int i = 0; i < count; ++i) {
    matrix<float> m = random_matrix(rng, most_rows);
    ark += random_key(rng, i) + " ";
    switch (uniform(rng, 0, 2)) {
      case 0:
        ark += object_bytes<holder<matrix<float>>>(m);
        break;
      case 1: {
        matrix<double> d(m.num_rows(), m.num_cols());
        for (std::size_t k = 0; k < m.size(); ++k) d.data()[k] = m.data()[k];
        ark += object_bytes<holder<matrix<double>>>(d);
        break;
      }
      default:
        ark += object_bytes<holder<matrix_to_compress>>(
            matrix_to_compress{m, static_cast<compression_method>(uniform(rng, 1, 7))});
    }
  }
  return ark;
}

void save(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Good, or cut short, or with a byte changed, or with garbage inserted.
std::string damaged(random_bits& rng, std::string bytes) {
  if (bytes.empty()) return bytes;
  auto at = static_cast<std::size_t>(uniform(rng, 0, static_cast<int>(bytes.size()) - 1));
  switch (uniform(rng, 0, 5)) {
    case 0:
      bytes.resize(at);
      break;
    case 1:
      bytes[at] = static_cast<char>(bytes[at] ^ (1 << uniform(rng, 0, 7)));
      break;
    case 2:
      bytes.insert(at, std::string(static_cast<std::size_t>(uniform(rng, 1, 30)), '\x07'));
      break;
    default:  // good
      break;
  }
  return bytes;
}

// Where two readings of a table part, as text: the entry's number, and each reading's entry
// there (its key and the size of its value, or how the reading ended); empty where they agree.
std::string difference(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  auto shown = [](const std::vector<std::string>& v, std::size_t i) -> std::string {
    if (i >= v.size()) return "nothing";
    if (i + 1 == v.size()) return v[i];  // how the reading ended
    std::size_t space = v[i].find(' ');
    return "key " + v[i].substr(0, space) + ", " + std::to_string(v[i].size() - space - 1) +
           " bytes of value";
  };
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i)
    if (i >= a.size() || i >= b.size() || a[i] != b[i])
      return "entry " + std::to_string(i) + ": " + shown(a, i) + " | " + shown(b, i);
  return {};
}

// A table read as `format` with its options, at every thread count, with 'p' and without.
template <class H>
void same_with_any_threads(const std::string& format, const std::string& path) {
  for (const char* p : {"", ",p"}) {
    std::string rspec = format + p + ":" + path;
    INFO(rspec);
    auto one = test::entries<H>(rspec, 1);
    for (unsigned threads : {2u, 4u}) {
      CHECK(difference(one, test::entries<H>(rspec, threads)) == "");
      test::all_to_threads threaded;
      CHECK(difference(one, test::entries<H>(rspec, threads)) == "");
    }
  }
}

// A script over an archive, with lines that point inside objects, past the end, at a missing
// file, and with row ranges, among good lines.
std::string script_over(random_bits& rng, const std::string& scp, const std::string& ark) {
  std::string out, line;
  std::istringstream in(scp);
  int n = 0;
  while (std::getline(in, line)) {
    out += line + "\n";
    std::string key = "bad" + std::to_string(n++);
    std::uint64_t offset = std::stoull(line.substr(line.rfind(':') + 1));
    switch (uniform(rng, 0, 6)) {
      case 0:
        out += key + " " + ark + ":" +
               std::to_string(offset + static_cast<std::uint64_t>(uniform(rng, 1, 40))) + "\n";
        break;
      case 1:
        out += key + " " + ark + ":999999999\n";
        break;
      case 2:
        out += key + " " + ark + ".missing:" + std::to_string(offset) + "\n";
        break;
      case 3:
        out += key + " " + line.substr(line.find(' ') + 1) + "[0:1]\n";
        break;
      default:
        break;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("threads give what one thread gives on random tables, layouts and faults",
          "[threads][table][property]") {
  test::temp_dir dir;
  // A fixed seed, or Catch's (--rng-seed N, or time), for more tables than the suite's.
  const unsigned seed = Catch::rngSeed() != 0 ? Catch::rngSeed() : 20261202;
  random_bits rng(seed);
  // Windows of a few bytes to the reader's own, each round's own.
  const std::size_t windows[] = {3, 16, 61, 512, 4099, std::size_t{1} << 18};
  for (int round = 0; round < 42; ++round) {
    const std::size_t window = windows[static_cast<std::size_t>(round) % std::size(windows)];
    test::read_windows in_windows(window);
    // Tables of some hundreds of kilobytes through large windows, a few through small ones.
    const int most_rows = window < 1000 ? 6 : 300, count = uniform(rng, 1, window < 1000 ? 12 : 40);
    INFO("seed " << seed << ", round " << round << ", windows of " << window << " bytes");
    switch (round % 7) {
      case 0: {  // binary objects of every kind, read as float and as double matrices
        save(dir / "m.ark", damaged(rng, mixed_archive(rng, count, most_rows)));
        same_with_any_threads<holder<matrix<float>>>("ark", dir / "m.ark");
        same_with_any_threads<holder<matrix<double>>>("ark", dir / "m.ark");
        break;
      }
      case 1: {  // text matrices
        {
          table_writer<holder<matrix<float>>> out("ark,t:" + dir / "t.ark");
          for (int i = 0; i < count; ++i) out.write(random_key(rng, i), random_matrix(rng, most_rows));
        }
        save(dir / "t.ark", damaged(rng, test::read_file(dir / "t.ark")));
        same_with_any_threads<holder<matrix<float>>>("ark", dir / "t.ark");
        break;
      }
      case 2: {  // a script, with bad lines among good ones, over an archive of every kind
        save(dir / "s.ark", mixed_archive(rng, count, most_rows));
        {
          sequential_table_reader<holder<matrix<float>>> in("ark:" + dir / "s.ark");
          table_writer<holder<matrix<float>>> out("ark,scp:" + dir / "copy.ark," + dir / "s.scp");
          for (auto& [key, value] : in) out.write(key, value);
        }
        save(dir / "s.scp", script_over(rng, test::read_file(dir / "s.scp"), dir / "copy.ark"));
        save(dir / "copy.ark", damaged(rng, test::read_file(dir / "copy.ark")));
        same_with_any_threads<holder<matrix<float>>>("scp", dir / "s.scp");
        break;
      }
      case 3: {  // Examples in TFRecord files, plain or gzip
        const bool gzip = uniform(rng, 0, 1) == 1;
        const std::string name = dir / (gzip ? "e.tfrecord.gz" : "e.tfrecord");
        {
          table_writer<example_holder> out(std::string("tfrecord") + (gzip ? ",gzip:" : ":") + name);
          for (int i = 0; i < count; ++i) {
            example e;
            matrix<float> m = random_matrix(rng, most_rows);
            e.set("feats", std::vector<float>(m.data(), m.data() + m.size()));
            e.set("label", std::vector<std::int64_t>{uniform(rng, 0, 9)});
            out.write(ordinal_key(static_cast<std::uint64_t>(i)), e);  // the keys TFRecord gives back
          }
        }
        save(name, damaged(rng, test::read_file(name)));
        same_with_any_threads<example_holder>("tfrecord", name);
        break;
      }
      case 4: {  // samples in a tar file
        {
          table_writer<webdataset_sample_holder> out("tar:" + dir / "s.tar");
          for (int i = 0; i < count; ++i) {
            webdataset_sample s;
            s.set("cls", std::to_string(i));
            s.set("txt", std::string(static_cast<std::size_t>(uniform(rng, 0, most_rows * 30)), 'x'));
            out.write(random_key(rng, i), s);
          }
        }
        save(dir / "s.tar", damaged(rng, test::read_file(dir / "s.tar")));
        same_with_any_threads<webdataset_sample_holder>("tar", dir / "s.tar");
        break;
      }
      case 5: {  // a script into a TFRecord file of Examples, some records no Example, some lines bad
        {
          table_writer<bytes_holder> out("tfrecord,scp:" + dir / "r.tfrecord," + dir / "r.scp");
          for (int i = 0; i < count; ++i) {
            example e;
            e.set("id",
                  std::vector<std::string>{std::string(static_cast<std::size_t>(uniform(rng, 0, 900)), 'i')});
            std::string record;
            encode_record<example_holder>(record, e);
            out.write(random_key(rng, i), uniform(rng, 0, 3) == 0 ? std::string("no Example") : record);
          }
        }
        save(dir / "r.scp", script_over(rng, test::read_file(dir / "r.scp"), dir / "r.tfrecord"));
        same_with_any_threads<example_holder>("scp", dir / "r.scp");
        break;
      }
      default: {  // matrices as records of a TFRecord file; vectors and integer vectors in an archive
        {
          table_writer<holder<matrix<float>>> records("tfrecord:" + dir / "m.tfrecord");
          table_writer<holder<vector<float>>> vectors("ark:" + dir / "v.ark");
          table_writer<basic_vector_holder<std::int32_t>> ints("ark:" + dir / "i.ark");
          for (int i = 0; i < count; ++i) {
            matrix<float> m = random_matrix(rng, most_rows);
            records.write(ordinal_key(static_cast<std::uint64_t>(i)), m);
            vectors.write(random_key(rng, i),
                          vector<float>(std::vector<float>(m.data(), m.data() + m.size())));
            ints.write(random_key(rng, i), std::vector<std::int32_t>(m.size(), i));
          }
        }
        for (const char* name : {"m.tfrecord", "v.ark", "i.ark"})
          save(dir / name, damaged(rng, test::read_file(dir / name)));
        same_with_any_threads<holder<matrix<float>>>("tfrecord", dir / "m.tfrecord");
        same_with_any_threads<holder<vector<float>>>("ark", dir / "v.ark");
        same_with_any_threads<basic_vector_holder<std::int32_t>>("ark", dir / "i.ark");
      }
    }
  }
}
