// Tables with threads (threads=N): the entries, values, bytes and errors one thread gives,
// over every framing and form of entry; early closes with entries in flight; values that fail
// in a thread. Part of test_threads, which scripts/run-tests.sh also runs under ThreadSanitizer.
#include <tablio/table/record_form.hpp>
#include <tablio/tablio.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <thread>

#include "test_support.hpp"
#include "threads_support.hpp"

using namespace tablio;
using test::all_to_threads;
using test::entries;
using test::with_threads;

namespace {

// More entries than the threads hold in flight, so that their slots are reused.
constexpr int entry_count = 700;

// The keys tables that keep none give back (TFRecord), for every table alike.
std::string key_of(int i) {
  char key[16];
  std::snprintf(key, sizeof key, "%08d", i);
  return key;
}

matrix<float> matrix_of(int i) {
  matrix<float> m(3 + i % 5, 4);
  for (std::size_t k = 0; k < m.size(); ++k) m.data()[k] = static_cast<float>(i) + static_cast<float>(k) / 8;
  return m;
}

template <class H>
void same_with_threads(const std::string& rspec, std::size_t expected_entries) {
  INFO(rspec);
  auto one = entries<H>(rspec, 1);
  CHECK(one.size() == expected_entries + 1);  // entries, then how reading ended
  for (unsigned threads : {2u, 3u, 8u}) {
    CHECK(entries<H>(rspec, threads) == one);
    all_to_threads threaded;
    CHECK(entries<H>(rspec, threads) == one);
  }
}

template <class H, class Make>
void write_table(const std::string& wspec, unsigned threads, Make make) {
  table_writer<H> out(wspec, with_threads(threads));
  for (int i = 0; i < entry_count; ++i) out.write(key_of(i), make(i));
  out.close();
}

}  // namespace

TEST_CASE("tables read with threads give the entries one thread gives, in every framing",
          "[threads][table]") {
  test::temp_dir dir;
  using H = holder<matrix<float>>;
  write_table<H>("ark,scp:" + dir / "m.ark," + dir / "m.scp", 1, matrix_of);
  write_table<H>("ark,t:" + dir / "m.txt.ark", 1, matrix_of);
  write_table<H>("tfrecord,gzip:" + dir / "m.tfrecord.gz", 1, matrix_of);
#if defined(TABLIO_WITH_LMDB)
  write_table<H>("lmdb:" + dir / "m_lmdb", 1, matrix_of);
#endif
  write_table<webdataset_sample_holder>("tar:" + dir / "s.tar", 1, [](int i) {
    webdataset_sample s;
    s.set("cls", std::to_string(i));
    s.set("txt", std::string(static_cast<std::size_t>(i % 300), 'x'));
    return s;
  });
  same_with_threads<H>("ark:" + dir / "m.ark", entry_count);               // objects
  same_with_threads<H>("ark:" + dir / "m.txt.ark", entry_count);           // text objects
  same_with_threads<H>("scp:" + dir / "m.scp", entry_count);               // pending objects
  same_with_threads<H>("tfrecord:" + dir / "m.tfrecord.gz", entry_count);  // records, inflated
#if defined(TABLIO_WITH_LMDB)
  same_with_threads<H>("lmdb:" + dir / "m_lmdb", entry_count);  // records in a map
#endif
  std::filesystem::copy(test::data_path("caffe/fashion_t10k_1000_lmdb"), dir / "caffe");
  same_with_threads<datum_holder>("lmdb:" + dir / "caffe", 1000);  // Caffe's, read without liblmdb
  same_with_threads<webdataset_sample_holder>("tar:" + dir / "s.tar", entry_count);  // parts
  same_with_threads<basic_vector_holder<std::int32_t>>(
      "idx:" + test::data_path("idx/fashion/t10k-images-100-idx3-ubyte"), 100);  // arrays
  same_with_threads<example_holder>(
      "tfrecord:" + test::data_path("tfrecord/generated/tutorial10.gz.tfrecord"), 10);
  // Objects decoded in threads (skimmed): compressed, double read as float, text; Kaldi's own.
  for (const char* name :
       {"compressed/cm-method1.bin.ark", "compressed/cm-method2.bin.ark", "compressed/cm-method3.bin.ark",
        "compressed/cm-method7.bin.ark", "compressed/cm-method1.txt.ark", "holders/double-matrix.bin.ark",
        "holders/double-matrix.txt.ark", "scp/ranges.scp", "bad/matrix-rows-marker08.ark",
        "bad/trunc-in-object.ark", "bad/trunc-in-key.ark", "bad/duplicate.ark"}) {
    std::string table = (std::string(name).ends_with(".scp") ? "scp:" : "ark:") +
                        test::data_path(std::string("kaldi/") + name);
    test::in_folder folder(test::data_path("kaldi/scp"));
    same_with_threads<H>(table, entries<H>(table, 1).size() - 1);
    same_with_threads<holder<compressed_matrix>>(table,
                                                 entries<holder<compressed_matrix>>(table, 1).size() - 1);
  }
  write_table<holder<matrix_to_compress>>("ark:" + dir / "cm.ark", 1, [](int i) {
    return matrix_to_compress{matrix_of(i), static_cast<compression_method>(1 + i % 7)};
  });
  same_with_threads<H>("ark:" + dir / "cm.ark", entry_count);
  // Cut inside objects, binary and text, and one whose rows are not followed by a key.
  for (const char* name : {"cm.ark", "m.ark", "m.txt.ark"}) {
    std::string bytes = test::read_file(dir / name);
    for (std::size_t cut : {bytes.size() / 3 + 1, bytes.size() / 2 + 17, bytes.size() - 3}) {
      std::ofstream(dir / "cut.ark", std::ios::binary) << bytes.substr(0, cut);
      auto one = entries<H>("ark:" + dir / "cut.ark", 1);
      INFO(name << " cut at " << cut << ": " << one.back().substr(0, 300));
      CHECK(one.back().find("thrown: ") == 0);
      same_with_threads<H>("ark:" + dir / "cut.ark", one.size() - 1);
    }
  }
  // Headers that claim more than the input holds, or than a record may be: not skimmed, the
  // same error at the same place.
  for (std::int32_t rows : {1 << 20, 1 << 30}) {
    std::string huge = test::read_file(dir / "m.ark").substr(0, 2000);
    std::string header("k1 \0BFM \4", 10);
    header.append(reinterpret_cast<const char*>(&rows), 4)
        .append("\4", 1)
        .append(reinterpret_cast<const char*>(&rows), 4);
    std::ofstream(dir / "huge.ark", std::ios::binary) << header << huge;
    auto one = entries<H>("ark:" + dir / "huge.ark", 1);
    CHECK(one.back().find("thrown: format error") == 0);
    same_with_threads<H>("ark:" + dir / "huge.ark", one.size() - 1);
  }
  // The specifier says it too.
  CHECK(entries<H>("tfrecord,threads=3:" + dir / "m.tfrecord.gz", 1) ==
        entries<H>("tfrecord:" + dir / "m.tfrecord.gz", 1));
  CHECK(!parse_rspecifier("ark,threads=0:x"));
  CHECK(!parse_rspecifier("ark,threads=257:x"));
}

TEST_CASE("errors met with threads are thrown at their entry, as one thread throws them",
          "[threads][table]") {
  all_to_threads threaded;  // one thread's reading is unchanged by it
  test::temp_dir dir;
  // A record whose data fails its CRC, after good ones: its value's error; the records after it
  // read on past it.
  const std::string crc = "tfrecord:" + test::data_path("tfrecord/corrupt/bad_datacrc.tfrecord");
  same_with_threads<example_holder>(crc, 1);
  auto past_crc = entries<example_holder>(crc, 1, true);
  REQUIRE(past_crc.size() > 3);
  CHECK(past_crc[1].starts_with("00000001 failed: format error in"));
  CHECK_THAT(past_crc[1], Catch::Contains("corrupted record at 115"));
  CHECK(past_crc.back() == "error(): ");
  for (unsigned threads : {2u, 5u}) CHECK(entries<example_holder>(crc, threads, true) == past_crc);
  // A decoding error, met in a thread: record 300 holds no matrix.
  {
    table_writer<bytes_holder> out("tfrecord:" + dir / "bad.tfrecord");
    for (int i = 0; i < entry_count; ++i) {
      std::string bytes;
      if (i != 300) {
        writer w = memory_writer(bytes);
        holder<matrix<float>>::write(w, true, matrix_of(i));
        w.close();
      } else {
        bytes = "no matrix";
      }
      out.write(key_of(i), bytes);
    }
  }
  auto one = entries<holder<matrix<float>>>("tfrecord:" + dir / "bad.tfrecord", 1);
  REQUIRE(one.size() == 301);
  CHECK(one.back().find("thrown: ") == 0);
  CHECK(one.back().find("00000300") != std::string::npos);  // the record's key, its number
  for (unsigned threads : {2u, 5u})
    CHECK(entries<holder<matrix<float>>>("tfrecord:" + dir / "bad.tfrecord", threads) == one);
  // Its value's error alone: the records after it read on, with threads as without.
  auto past = entries<holder<matrix<float>>>("tfrecord:" + dir / "bad.tfrecord", 1, true);
  REQUIRE(past.size() == entry_count + 1);
  CHECK(past[300].starts_with("00000300 failed: "));
  for (unsigned threads : {2u, 5u})
    CHECK(entries<holder<matrix<float>>>("tfrecord:" + dir / "bad.tfrecord", threads, true) == past);
  // Under 'p' the bad record is left out quietly, and error() says which.
  auto permissive = entries<holder<matrix<float>>>("tfrecord,p:" + dir / "bad.tfrecord", 1);
  REQUIRE(permissive.size() == entry_count);
  CHECK(permissive[300].starts_with("00000301 "));
  CHECK_THAT(permissive.back(), Catch::StartsWith("error(): ") && Catch::Contains("00000300"));
  CHECK(entries<holder<matrix<float>>>("tfrecord,p:" + dir / "bad.tfrecord", 4) == permissive);
  // A script line whose file is missing: skipped under 'p', thrown without.
  {
    std::ofstream scp(dir / "some.scp");
    write_table<holder<matrix<float>>>("ark,scp:" + dir / "a.ark," + dir / "a.scp", 1, matrix_of);
    std::string lines = test::read_file(dir / "a.scp");
    std::size_t half = lines.find('\n', lines.size() / 2) + 1;
    scp << lines.substr(0, half) << "missing " << dir / "missing.ark"
        << ":10\n"
        << lines.substr(half);
  }
  std::string lines = "scp:" + dir / "some.scp";
  auto strict = entries<holder<matrix<float>>>(lines, 1);
  CHECK_THAT(strict.back(), Catch::Contains("cannot open for reading"));
  CHECK(entries<holder<matrix<float>>>(lines, 3) == strict);
  auto skipped = entries<holder<matrix<float>>>("scp,p:" + dir / "some.scp", 1);
  CHECK(skipped.size() == static_cast<std::size_t>(entry_count) + 1);
  CHECK(entries<holder<matrix<float>>>("scp,p:" + dir / "some.scp", 3) == skipped);
}

TEST_CASE("a table closed with entries in flight ends its threads", "[threads][table]") {
  all_to_threads threaded;  // one thread's reading is unchanged by it
  test::temp_dir dir;
  write_table<holder<matrix<float>>>("tfrecord:" + dir / "m.tfrecord", 1, matrix_of);
  for (int read : {0, 1, 5, 200}) {
    sequential_table_reader<holder<matrix<float>>> table("tfrecord:" + dir / "m.tfrecord", with_threads(4));
    for (int i = 0; i < read; ++i) {
      CHECK(table.key() == key_of(i));
      table.next();
    }
    if (read % 2 == 1) table.close();  // else the destructor ends them
  }
  // Moved with its threads, and read on.
  sequential_table_reader<holder<matrix<float>>> first("tfrecord:" + dir / "m.tfrecord", with_threads(2));
  first.next();
  sequential_table_reader<holder<matrix<float>>> second = std::move(first);
  int n = 0;
  for (; !second.done(); second.next()) ++n;
  CHECK(n == entry_count - 1);
}

TEST_CASE("tables written with threads are byte for byte what one thread writes", "[threads][table]") {
  test::temp_dir dir;
  auto compressed = [](int i) {
    return matrix_to_compress{matrix_of(i), compression_method::speech_feature};
  };
  for (unsigned threads : {1u, 3u}) {
    std::string n = std::to_string(threads);
    write_table<holder<matrix_to_compress>>("ark,scp:" + dir / ("c" + n + ".ark,") + dir / ("c.scp" + n),
                                            threads, compressed);
    write_table<holder<matrix<float>>>("ark,t:" + dir / ("t" + n + ".ark"), threads, matrix_of);
    write_table<holder<matrix<float>>>("tfrecord,gzip,threads=" + n + ":" + dir / ("r" + n + ".tfrecord.gz"),
                                       1, matrix_of);
    write_table<webdataset_sample_holder>("tar:" + dir / ("s" + n + ".tar"), threads, [](int i) {
      webdataset_sample s;
      s.set("txt", std::to_string(i));
      return s;
    });
  }
  for (const char* name : {"c%.ark", "t%.ark", "r%.tfrecord.gz", "s%.tar"}) {
    std::string one = name, three = name;
    one.replace(one.find('%'), 1, "1");
    three.replace(three.find('%'), 1, "3");
    INFO(name);
    CHECK(test::read_file(dir / one) == test::read_file(dir / three));
  }
  // The scripts differ in the archive they name, only.
  std::string script = test::read_file(dir / "c.scp1"), named = "c1.ark", other = "c3.ark";
  for (std::size_t at = script.find(named); at != std::string::npos; at = script.find(named, at))
    script.replace(at, named.size(), other);
  CHECK(script == test::read_file(dir / "c.scp3"));
}

namespace {

// Values of random shapes, empty ones among them, for the types stored in TFRecord files as
// Examples of their form.
struct random_values {
  std::mt19937 rng{20261203};

  std::int32_t size(std::int32_t most) { return static_cast<std::int32_t>(rng() % (most + 1)); }
  std::int32_t integer() { return static_cast<std::int32_t>(rng()); }
  float real() { return std::uniform_real_distribution<float>(-1e4f, 1e4f)(rng); }
  std::string token() { return std::string(1 + rng() % 12, static_cast<char>('a' + rng() % 26)); }

  template <class T>
  matrix<T> make(std::type_identity<matrix<T>>) {
    const std::int32_t rows = size(6), cols = rows == 0 ? 0 : 1 + size(4);
    matrix<T> m(rows, cols);
    for (std::size_t k = 0; k < m.size(); ++k) m.data()[k] = static_cast<T>(real()) / T(7);
    return m;
  }
  template <class T>
  vector<T> make(std::type_identity<vector<T>>) {
    vector<T> v(size(9));
    for (std::size_t k = 0; k < v.size(); ++k) v.data()[k] = static_cast<T>(real()) / T(3);
    return v;
  }
  std::vector<std::int32_t> make(std::type_identity<std::vector<std::int32_t>>) {
    std::vector<std::int32_t> v(static_cast<std::size_t>(size(9)));
    for (auto& x : v) x = integer();
    return v;
  }
  std::vector<std::vector<std::int32_t>> make(std::type_identity<std::vector<std::vector<std::int32_t>>>) {
    std::vector<std::vector<std::int32_t>> v(static_cast<std::size_t>(size(5)));
    for (auto& row : v) row = make(std::type_identity<std::vector<std::int32_t>>{});
    return v;
  }
  std::vector<std::pair<std::int32_t, std::int32_t>> make(
      std::type_identity<std::vector<std::pair<std::int32_t, std::int32_t>>>) {
    std::vector<std::pair<std::int32_t, std::int32_t>> v(static_cast<std::size_t>(size(7)));
    for (auto& [a, b] : v) a = integer(), b = integer();
    return v;
  }
  std::vector<std::string> make(std::type_identity<std::vector<std::string>>) {
    std::vector<std::string> v(static_cast<std::size_t>(size(6)));
    for (auto& t : v) t = token();
    return v;
  }
  std::string make(std::type_identity<std::string>) { return token(); }
  std::int32_t make(std::type_identity<std::int32_t>) { return integer(); }
  float make(std::type_identity<float>) { return real(); }
  double make(std::type_identity<double>) { return real() / 3.0; }
  bool make(std::type_identity<bool>) { return rng() % 2 == 0; }
  wave_data make(std::type_identity<wave_data>) {
    matrix<float> samples(1 + size(1), 1 + size(40));
    for (std::size_t k = 0; k < samples.size(); ++k) samples.data()[k] = std::trunc(real());
    return wave_data(16000, std::move(samples));
  }
  datum make(std::type_identity<datum>) {
    datum d;
    d.channels = 1 + size(2);
    d.height = size(4);
    d.width = size(4);
    d.data.assign(static_cast<std::size_t>(d.channels * d.height * d.width), static_cast<char>(rng()));
    d.label = integer();
    d.present.data = true;
    return d;
  }
};

// Writes random values of H's type to TFRecord in their Example form, with one thread and three,
// and checks both files byte for byte and their reading, in threads, against one thread's.
template <class H>
void example_form_with_threads(const test::temp_dir& dir, const char* name) {
  INFO(name);
  random_values values;
  std::vector<typename H::value_type> written;
  for (int i = 0; i < 300; ++i) written.push_back(values.make(std::type_identity<typename H::value_type>{}));
  for (unsigned threads : {1u, 3u}) {
    const std::string wspec =
        "tfrecord,key=key:" + dir / (std::string(name) + std::to_string(threads) + ".tfrecord");
    with_writing_holder<H>(wspec, [&]<class W>() {
      table_writer<W> out(wspec, with_threads(threads));
      for (std::size_t i = 0; i < written.size(); ++i) out.write("u" + std::to_string(i), written[i]);
      out.close();
    });
  }
  const std::string one = dir / (std::string(name) + "1.tfrecord");
  CHECK(test::read_file(one) == test::read_file(dir / (std::string(name) + "3.tfrecord")));
  same_with_threads<reading_holder_t<H>>("tfrecord,key=key:" + one, written.size());
  sequential_table_reader<reading_holder_t<H>> back("tfrecord,key=key:" + one, with_threads(2));
  std::size_t i = 0;
  for (; !back.done(); back.next(), ++i) {
    REQUIRE(i < written.size());
    CHECK(back.key() == "u" + std::to_string(i));
    CHECK(back.value() == written[i]);
  }
  CHECK(i == written.size());
}

}  // namespace

TEST_CASE("values stored as Examples of their form are the same with threads, whatever their shapes",
          "[threads][table][example_form]") {
  test::temp_dir dir;
  all_to_threads threaded;
  example_form_with_threads<holder<matrix<float>>>(dir, "matrix");
  example_form_with_threads<holder<matrix<double>>>(dir, "double_matrix");
  example_form_with_threads<holder<vector<float>>>(dir, "vector");
  example_form_with_threads<holder<vector<double>>>(dir, "double_vector");
  example_form_with_threads<basic_vector_holder<std::int32_t>>(dir, "int_vector");
  example_form_with_threads<basic_vector_vector_holder<std::int32_t>>(dir, "int_vectors");
  example_form_with_threads<basic_pair_vector_holder<std::int32_t>>(dir, "int_pairs");
  example_form_with_threads<token_vector_holder>(dir, "tokens");
  example_form_with_threads<token_holder>(dir, "token");
  example_form_with_threads<basic_holder<std::int32_t>>(dir, "int32");
  example_form_with_threads<basic_holder<float>>(dir, "float");
  example_form_with_threads<basic_holder<double>>(dir, "double");
  example_form_with_threads<basic_holder<bool>>(dir, "bool");
  example_form_with_threads<wave_holder>(dir, "wave");
  example_form_with_threads<datum_holder>(dir, "datum");
}

TEST_CASE("a value that fails in a writer's thread is an error naming its key; the others are written",
          "[threads][table]") {
  test::temp_dir dir;
  std::string message;
  int thrown = 0;
  auto kept = [&](auto f) {
    try {
      f();
    } catch (const tablio::usage_error& e) {  // as without threads
      message = e.what();
      ++thrown;
    }
  };
  table_writer<holder<matrix_to_compress>> out("ark:" + dir / "c.ark", with_threads(3));
  for (int i = 0; i < entry_count; ++i) {
    matrix_to_compress m{matrix_of(i), compression_method::speech_feature};
    if (i == 10) m.values.data()[1] = std::nanf("");
    kept([&] { out.write(key_of(i), std::move(m)); });
  }
  kept([&] { out.close(); });
  CHECK(thrown == 1);
  CHECK(message.find("'00000010'") != std::string::npos);
  CHECK(message.find("NaN") != std::string::npos);
  int n = 0;
  for (auto& [key, value] : sequential_table_reader<holder<matrix<float>>>("ark:" + dir / "c.ark")) {
    CHECK(key != "00000010");
    ++n;
  }
  CHECK(n == entry_count - 1);
}

TEST_CASE("under 'p', script entries that fail where threads decode them are left out, as by one thread",
          "[threads][table]") {
  test::temp_dir dir;
  // Three matrices, text and compressed, and a script with lines between them that point inside
  // their objects: one thread leaves those out and reads the others.
  write_table<holder<matrix<float>>>("ark,t,scp:" + dir / "t.ark," + dir / "t.scp", 1, matrix_of);
  write_table<holder<matrix_to_compress>>("ark,scp:" + dir / "c.ark," + dir / "c.scp", 1, [](int i) {
    return matrix_to_compress{matrix_of(i), compression_method::two_byte_auto};
  });
  for (const char* name : {"t", "c"}) {
    std::istringstream good_lines(test::read_file(dir / (std::string(name) + ".scp")));
    std::string script, line;
    for (int i = 0; std::getline(good_lines, line) && i < 30; ++i) {
      script += line + "\n";
      std::uint64_t at = std::stoull(line.substr(line.rfind(':') + 1));
      if (i % 6 == 2)  // at the object's second byte, then at its header's end
        script += "bad" + std::to_string(i) + " " + dir / name + ".ark:" + std::to_string(at + 1) + "\n" +
                  "worse" + std::to_string(i) + " " + dir / name + ".ark:" + std::to_string(at + 3) + "\n";
    }
    std::ofstream(dir / "b.scp") << script;
    // One thread reads the 30 good entries (and what a bad line happens to point at whole: a
    // text matrix from its '['), and leaves the others out.
    auto one = entries<holder<matrix<float>>>("scp,p:" + dir / "b.scp", 1);
    std::size_t good = 0;
    for (const std::string& e : one) good += e.starts_with(key_of(static_cast<int>(good)) + " ");
    CHECK(good == 30);
    CHECK(one.back().starts_with("error(): "));
    for (unsigned threads : {2u, 4u}) {
      all_to_threads threaded;
      INFO(name << ", " << threads << " threads");
      CHECK(entries<holder<matrix<float>>>("scp,p:" + dir / "b.scp", threads) == one);
    }
  }
  // Examples reached through a script into a TFRecord file, some records no Example.
  {
    table_writer<bytes_holder> out("tfrecord,scp:" + dir / "e.tfrecord," + dir / "e.scp");
    for (int i = 0; i < 6; ++i) {
      example e;
      e.set("label", std::vector<std::int64_t>{i});
      std::string record;
      encode_record<example_holder>(record, e);
      out.write(key_of(i), i % 3 == 1 ? std::string("no Example") : record);
    }
  }
  auto one = entries<example_holder>("scp,p:" + dir / "e.scp", 1);
  CHECK(one.size() == 5);  // 4 Examples
  for (unsigned threads : {2u, 4u}) {
    all_to_threads threaded;
    CHECK(entries<example_holder>("scp,p:" + dir / "e.scp", threads) == one);
  }
}

TEST_CASE("archives whose objects straddle the reader's windows read whole with threads",
          "[threads][table]") {
  test::temp_dir dir;
  // 600 matrices of 1 + (i * 7) % 500 rows by 80 of zeros: one's header met the end of a window,
  // and its size was read off freed memory.
  {
    table_writer<holder<matrix<float>>> floats("ark:" + dir / "z.ark");
    table_writer<holder<matrix_to_compress>> compressed("ark:" + dir / "zc.ark");
    for (int i = 0; i < 600; ++i) {
      char key[16];
      std::snprintf(key, sizeof key, "utt%06d", i);
      matrix<float> m(1 + (i * 7) % 500, 80);
      floats.write(key, m);
      compressed.write(key, matrix_to_compress{m, compression_method::two_byte_auto});
    }
  }
  for (const char* name : {"z.ark", "zc.ark"}) {
    all_to_threads threaded;
    for (unsigned threads : {2u, 5u, 8u}) {
      auto got = entries<holder<matrix<float>>>("ark:" + dir / name, threads);
      CHECK(got.size() == 601);
      CHECK(got.back() == "error(): ");
    }
  }
}

TEST_CASE(
    "a writer with threads refuses a first value in the write() that gave it, and names a failed "
    "value's key wherever its error is thrown",
    "[threads][table]") {
  test::temp_dir dir;
  auto labelled = [](std::int64_t i, bool own_key) {
    example e;
    e.set("label", std::vector<std::int64_t>{i});
    if (own_key) e.set("key", std::vector<std::string>{"own"});
    return e;
  };
  for (unsigned threads : {1u, 2u, 4u}) {
    all_to_threads threaded;
    INFO(threads << " threads");
    // The first value: thrown by its own write(), as one thread throws it.
    table_writer<example_holder> first("tfrecord,key=key:" + dir / "first.tfrecord", with_threads(threads));
    CHECK_THROWS_WITH(first.write("u00", labelled(0, true)), Catch::Contains("the value of key 'u00'"));
    // A later one: its key, in whichever call throws its error.
    table_writer<example_holder> later("tfrecord,key=key:" + dir / "later.tfrecord", with_threads(threads));
    std::string message;
    try {
      for (int i = 0; i < 20; ++i) later.write(key_of(10 + i), labelled(i, i == 3));
      later.close();
    } catch (const tablio::usage_error& e) {
      message = e.what();
    }
    CHECK_THAT(message, Catch::Contains("the value of key '00000013'") && Catch::Contains("of its own"));
  }
}

TEST_CASE(
    "a writer's failed value leaves the table one thread leaves: the values after it are written "
    "if the caller goes on, not if it stops",
    "[threads][table]") {
  test::temp_dir dir;
  // A matrix with NaN among the last ones, within what the threads hold in flight.
  auto write = [&](const std::string& name, unsigned threads, int bad, bool go_on) {
    table_writer<holder<matrix_to_compress>> out("ark:" + dir / name, with_threads(threads));
    auto fails = [](auto f) {
      try {
        f();
        return false;
      } catch (const tablio::usage_error&) {
        return true;
      }
    };
    for (int i = 0; i < 40; ++i) {
      matrix_to_compress m{matrix_of(i), compression_method::speech_feature};
      if (i == bad) m.values.data()[0] = std::nanf("");
      // A caller who stops at the error gives the table up (as an exception leaving its scope does).
      if (fails([&] { out.write(key_of(i), std::move(m)); }) && !go_on) return out.abandon();
    }
    if (fails([&] { out.close(); })) {
      if (!go_on) return out.abandon();
      out.close();  // the values after the failed one are written
    }
  };
  for (int bad : {0, 5, 36, 39}) {
    for (bool go_on : {false, true}) {
      write("one.ark", 1, bad, go_on);
      for (unsigned threads : {2u, 4u}) {
        all_to_threads threaded;
        write("many.ark", threads, bad, go_on);
        INFO("NaN at " << bad << (go_on ? ", going on" : ", stopping") << ", " << threads << " threads");
        CHECK(test::read_file(dir / "many.ark") == test::read_file(dir / "one.ark"));
      }
    }
  }
}

TEST_CASE("a writer given up for another reason than its own values keeps every value it took, as one thread",
          "[threads][table]") {
  test::temp_dir dir;
  // The caller's input fails after `given` values (an exception destroys the writer), or the
  // caller abandons the table: what one thread had written by then, and no less.
  auto write = [&](const std::string& wspec, unsigned threads, int given, bool by_exception) {
    try {
      table_writer<holder<matrix_to_compress>> out(wspec, with_threads(threads));
      for (int i = 0; i < given; ++i)
        out.write(key_of(i), matrix_to_compress{matrix_of(i), compression_method::speech_feature});
      if (!by_exception) return out.abandon();
      throw std::runtime_error("the input failed");
    } catch (const std::runtime_error&) {
    }
  };
  for (int given : {1, 7, 33}) {
    for (bool by_exception : {true, false}) {
      write("ark,scp:" + dir / "one.ark," + dir / "one.scp", 1, given, by_exception);
      for (unsigned threads : {2u, 4u}) {
        all_to_threads threaded;
        write("ark,scp:" + dir / "many.ark," + dir / "many.scp", threads, given, by_exception);
        INFO(given << " values, " << (by_exception ? "an exception" : "abandon()") << ", " << threads
                   << " threads");
        CHECK(test::read_file(dir / "many.ark") == test::read_file(dir / "one.ark"));
        std::string one_scp = test::read_file(dir / "one.scp"), many_scp = test::read_file(dir / "many.scp");
        CHECK(std::count(many_scp.begin(), many_scp.end(), '\n') == given);
        CHECK(std::count(one_scp.begin(), one_scp.end(), '\n') == given);
      }
    }
  }
}

TEST_CASE("a table opened after another of its kind starts from what that one learned of its threads",
          "[threads][table]") {
  if (std::getenv("TABLIO_THREAD_USE")) return;  // a forced choice measures nothing
  using detail::thread_choice;
  // Entries of 1 ms by one thread and `threaded` ns by the threads (dear enough to try threads
  // at once).
  auto run = [](thread_choice& c, int entries, std::uint64_t threaded_ns = 400000) {
    for (int i = 0; i < entries; ++i) {
      const bool threaded = c.threaded();
      c.entry(threaded, threaded ? threaded_ns : 1000000);
    }
  };
  thread_choice first;
  CHECK_FALSE(first.threaded());  // a table measures one thread first
  CHECK_FALSE(first.learned().measured);
  run(first, 60);
  REQUIRE(first.threaded());
  REQUIRE(first.learned().measured);
  CHECK(first.learned().cost[1] < first.learned().cost[0]);

  detail::thread_choice_memory memory;
  thread_choice nothing_kept;
  memory.recall(nothing_kept);  // no table of the kind closed yet: measured anew
  CHECK_FALSE(nothing_kept.threaded());
  memory.keep(first);
  thread_choice next;
  memory.recall(next);
  CHECK(next.threaded());  // threads from its first entry
  // ...and it still measures: where one thread has become the faster, it goes back to it.
  run(next, 2000, 2000000);
  CHECK(next.learned().best == 0);  // one thread (trying threads again now and then)

  // Tables far shorter than the stretches between tries (a dataset's shards, one after another)
  // still try threads again, as one long table would, and find them faster once they are.
  memory.keep(next);
  int tables = 0;
  for (bool threads_again = false; !threads_again && tables < 10000; ++tables) {
    thread_choice shard;
    memory.recall(shard);
    CHECK(shard.learned().best == 0);
    run(shard, 40);  // a few stretches each
    memory.keep(shard);
    threads_again = shard.learned().best == 1;
  }
  CHECK(tables < 10000);
  INFO(tables << " tables");
  CHECK(tables > 2);  // not at once: tries stay apart
}

TEST_CASE("threads are measured by their time over their entries, however those come in",
          "[threads][table]") {
  if (std::getenv("TABLIO_THREAD_USE")) return;  // a forced choice measures nothing
  // One thread: 700 us an entry. Threads: the table's thread decodes some entries itself (900 us)
  // and finds the others ready (10 us), in runs: 455 us an entry, three blocks of one dear entry
  // to one of five entries. Weighing blocks alike would make that 722 us, and keep one thread.
  const std::uint64_t threaded[] = {900000, 900000, 900000, 10000, 10000, 10000, 10000, 900000};
  detail::thread_choice c;
  for (int i = 0; i < 4000 && c.learned().best == 0; ++i) {
    const bool on_threads = c.threaded();
    c.entry(on_threads, on_threads ? threaded[i % 8] : 700000);
  }
  REQUIRE(c.learned().measured);
  CHECK(c.learned().best == 1);
  CHECK(c.learned().cost[1] < 600000);  // about 455 us (a stretch cut into blocks where it ends)
}

// The calling thread kept busy, not asleep: a sleep shorter than a millisecond is no sleep at all
// on some systems (under wine, Windows' timer), which would leave the other thread no time.
static void busy_for(std::chrono::microseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) std::this_thread::yield();
}

TEST_CASE("a table's threads get more entries in flight when they run out of them", "[threads][table]") {
  using H = holder<matrix<float>>;
  test::temp_dir dir;
  write_table<H>("tfrecord:" + dir / "m.tfrecord", 1, matrix_of);
  tfrecord_input framing(dir / "m.tfrecord");
  const read_options options = detail::reading_options(framing);
  entry_reader<H, tfrecord_input::forms> reader;
  auto read_here = [&](H& h, entry& e) { reader.read(h, e); };
  detail::read_ahead<H, tfrecord_input::forms> ahead(2, H{});
  CHECK(ahead.depth() == 3);  // one a thread, and one more
  // The table's thread busy between entries (a batch converted): its thread runs out of entries,
  // and is given more at once, up to 8 a thread.
  int read = 0;
  for (;; ++read) {
    ahead.top_up(framing, options, read_here);
    if (ahead.empty()) break;
    CHECK(ahead.take().e.key == key_of(read));
    ahead.release();
    if (ahead.depth() < 16) busy_for(std::chrono::microseconds(300));
  }
  CHECK(read == entry_count);
  CHECK(ahead.depth() == 16);

  // The next table of its kind starts from what the last one reached, within the same bounds.
  detail::thread_choice_memory memory;
  CHECK(memory.depth() == 0);
  memory.keep(detail::thread_choice{}, ahead.depth());
  memory.keep(detail::thread_choice{}, 0);  // a table whose threads did not read: nothing learned
  CHECK(memory.depth() == 16);
  CHECK(detail::read_ahead<H, tfrecord_input::forms>(2, H{}, memory.depth()).depth() == 16);
  CHECK(detail::read_ahead<H, tfrecord_input::forms>(3, H{}, 10).depth() == 10);
  CHECK(detail::read_ahead<H, tfrecord_input::forms>(2, H{}, 100).depth() == 16);
  CHECK(detail::read_ahead<H, tfrecord_input::forms>(4, H{}, 1).depth() == 5);
}
