// Tables with threads (threads=N): the entries, values, bytes and errors one thread gives,
// over every framing and form of entry; early closes with entries in flight; values that fail
// in a thread. Part of test_threads, which scripts/run-tests.sh also runs under ThreadSanitizer.
#include <tablio/tablio.hpp>

#include <cmath>

#include "test_support.hpp"

using namespace tablio;

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

open_options with_threads(unsigned threads) {
  open_options o;
  o.threads = threads;
  return o;
}

// Every entry of a table: its key and its value as the holder writes it in binary; then, if
// reading stopped at an error, the error's message; and under 'p', error().
template <class H>
std::vector<std::string> entries(const std::string& rspec, unsigned threads) {
  std::vector<std::string> out;
  try {
    sequential_table_reader<H> table(rspec, with_threads(threads));
    for (auto& [key, value] : table) {
      std::string bytes;
      writer w = memory_writer(bytes);
      H::write(w, true, value);
      w.close();
      out.push_back(key + " " + bytes);
    }
    out.push_back("error(): " + table.error());
  } catch (const tablio::error& e) {
    out.push_back(std::string("thrown: ") + e.what());
  }
  return out;
}

// Every entry handed to the threads, however cheap to decode (else small ones are decoded by
// the table's thread), for the scope's life.
struct all_to_threads {
  std::uint64_t was = detail::hand_over_nanoseconds;
  all_to_threads() { detail::hand_over_nanoseconds = 0; }
  ~all_to_threads() { detail::hand_over_nanoseconds = was; }
};

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
  write_table<H>("lmdb:" + dir / "m_lmdb", 1, matrix_of);
  write_table<webdataset_sample_holder>("tar:" + dir / "s.tar", 1, [](int i) {
    webdataset_sample s;
    s.set("cls", std::to_string(i));
    s.set("txt", std::string(static_cast<std::size_t>(i % 300), 'x'));
    return s;
  });
  same_with_threads<H>("ark:" + dir / "m.ark", entry_count);                         // objects
  same_with_threads<H>("ark:" + dir / "m.txt.ark", entry_count);                     // text objects
  same_with_threads<H>("scp:" + dir / "m.scp", entry_count);                         // pending objects
  same_with_threads<H>("tfrecord:" + dir / "m.tfrecord.gz", entry_count);            // records, inflated
  same_with_threads<H>("lmdb:" + dir / "m_lmdb", entry_count);                       // records in a map
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
  // A framing's error: a record whose CRC is wrong, after good ones.
  same_with_threads<example_holder>("tfrecord:" + test::data_path("tfrecord/corrupt/bad_datacrc.tfrecord"),
                                    1);
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
  // Under 'p' the bad record ends the table quietly, at the same place.
  auto permissive = entries<holder<matrix<float>>>("tfrecord,p:" + dir / "bad.tfrecord", 1);
  REQUIRE(permissive.size() == 301);
  CHECK(permissive.back().find("error(): ") == 0);
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
