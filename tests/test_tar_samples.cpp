// WebDataset samples in tar tables: a key's members grouped into one entry, as WebDataset
// groups them; written back as one member per extension, which GNU tar lists; and samples
// that are malformed, in the archive or as records.
#include <cstdlib>
#include <fstream>

#include <tablio/holder/sample.hpp>

#include "test_support.hpp"

using namespace tablio;

namespace {

webdataset_sample make_sample(std::initializer_list<std::pair<const char*, std::string>> members) {
  webdataset_sample s;
  for (auto& [ext, data] : members) s.set(ext, data);
  return s;
}

std::string sample_key(int i) {
  std::string digits = std::to_string(i);
  return std::string(4 - digits.size(), '0') + digits;
}

using test::write_file;

std::vector<std::pair<std::string, webdataset_sample>> read_all(const std::string& rspec) {
  std::vector<std::pair<std::string, webdataset_sample>> out;
  for (auto& [key, s] : sequential_table_reader<webdataset_sample_holder>(rspec)) out.emplace_back(key, s);
  return out;
}

}  // namespace

TEST_CASE("a key's consecutive members are one sample, as WebDataset groups them",
          "[tar][sample][unix-tools]") {
  test::temp_dir dir;
  test::in_folder here(dir.path);
  std::string big(5000, 'x');
  {
    table_writer<webdataset_sample_holder> out("tar:samples.tar");
    out.write("000000", make_sample({{"jpg", "JPEG0"}, {"cls", "3"}, {"json", "{\"a\": 1}"}}));
    out.write("a.b/000001",
              make_sample({{"jpg", big}, {"seg.png", "PNG"}}));  // dots in folders and extensions
    out.write("000002", make_sample({{"cls", "7"}}));            // a sample with members missing
    out.close();
  }
  // One member per extension, in order, as GNU tar lists them.
  REQUIRE(std::system("tar -tf samples.tar > listing.txt") == 0);
  CHECK(test::read_file("listing.txt") ==
        "000000.jpg\n000000.cls\n000000.json\na.b/000001.jpg\na.b/000001.seg.png\n000002.cls\n");
  auto samples = read_all("tar:samples.tar");
  REQUIRE(samples.size() == 3);
  CHECK(samples[0].first == "000000");
  CHECK(samples[0].second == make_sample({{"jpg", "JPEG0"}, {"cls", "3"}, {"json", "{\"a\": 1}"}}));
  CHECK(samples[1].first == "a.b/000001");
  CHECK(*samples[1].second.find("jpg") == big);
  CHECK(*samples[1].second.find("seg.png") == "PNG");
  CHECK(samples[2].second.members.size() == 1);
  // Random access by key, and one extension's members read as a table of their own.
  random_access_table_reader<webdataset_sample_holder> by_key("tar:samples.tar");
  CHECK(by_key.value("a.b/000001") == samples[1].second);
  CHECK(by_key.value("000002") == samples[2].second);
  CHECK_FALSE(by_key.contains("000003"));
  std::vector<std::string> labels;
  for (auto& [key, bytes] : sequential_table_reader<bytes_holder>("tar,ext=cls:samples.tar"))
    labels.push_back(bytes);
  CHECK(labels == std::vector<std::string>{"3", "7"});
  // Shards of samples: a member never leaves its sample's shard.
  {
    table_writer<webdataset_sample_holder> out("tar,maxcount=2:shard-%04d.tar");
    for (auto& [key, s] : samples) out.write(key, s);
    out.close();
  }
  CHECK(read_all("tar:shard-{0000..0001}.tar") == samples);
  CHECK(read_all("tar,shard=1/2:shard-%04d.tar") == std::vector{samples[1]});
}

TEST_CASE("a holder that takes sample records over keeps each entry's own", "[tar][sample]") {
  test::temp_dir dir;
  test::in_folder here(dir.path);
  std::vector<std::string> records;
  {
    table_writer<webdataset_sample_holder> out("tar:samples.tar");
    for (int i = 0; i < 40; ++i) {  // sizes that vary, from a few bytes (held inline) to 20 KB
      webdataset_sample s = make_sample({{"cls", std::to_string(i)}});
      if (i % 3 != 0)
        s.set("jpg", std::string(static_cast<std::size_t>(i) * 500, static_cast<char>('a' + i % 26)));
      out.write(sample_key(i), s);
      records.emplace_back();
      encode_sample(s, records.back());
    }
    out.close();
  }
  // bytes_holder takes the record the framing built (ext=* reads samples' records whole).
  static_assert(record_taking_holder<bytes_holder>);
  std::vector<std::string> taken;
  for (auto& [key, record] : sequential_table_reader<bytes_holder>("tar,ext=*:samples.tar"))
    taken.push_back(std::move(record));  // the storage moves on: the next entry must not see it
  CHECK(taken == records);
  random_access_table_reader<bytes_holder> by_key("tar,ext=*:samples.tar");
  for (int i : {7, 2, 39, 0, 7}) CHECK(by_key.value(sample_key(i)) == records[static_cast<std::size_t>(i)]);
}

namespace {
// Keeps every sample it reads, as the parts it is given (views, and what keeps them) or as
// records, to look at them after the whole table has been read.
struct part_keeping_holder : bytes_holder {
  struct sample {
    std::vector<std::pair<std::string, std::string_view>> parts;
    tablio::keeper keeper;
    std::string record;
  };
  static constexpr std::string_view extension = webdataset_sample::tar_extension;
  static std::vector<sample>& seen() {
    static std::vector<sample> samples;
    return samples;
  }
  void decode_record(std::string_view bytes, const std::string& name) {
    bytes_holder::decode_record(bytes, name);
    seen().push_back({{}, {}, value_});
  }
  void take_record(std::string& record, const std::string& name) { decode_record(record, name); }
  template <class Parts>
  void take_parts(const Parts& parts, tablio::keeper keeper, const std::string&) {
    sample s;
    for (const auto& p : parts) s.parts.emplace_back(std::string(p.name), p.bytes);
    s.keeper = std::move(keeper);
    seen().push_back(std::move(s));
  }
};
}  // namespace

TEST_CASE("a holder that takes samples as parts views windows kept for it", "[tar][sample]") {
  test::temp_dir dir;
  test::in_folder here(dir.path);
  std::vector<std::string> records;
  {
    table_writer<webdataset_sample_holder> out("tar:parts.tar");
    for (int i = 0; i < 200; ++i) {  // 2 MB: samples across the reader's windows too
      webdataset_sample s = make_sample({{"cls", std::to_string(i)}, {"txt", ""}});
      s.set("jpg", std::string(static_cast<std::size_t>(i % 40) * 500, static_cast<char>('a' + i % 26)));
      out.write(sample_key(i), s);
      records.emplace_back();
      encode_sample(s, records.back());
    }
    out.close();
  }
  static_assert(part_taking_holder<part_keeping_holder>);
  part_keeping_holder::seen().clear();
  std::size_t entries = 0;
  for (auto& [key, value] : sequential_table_reader<part_keeping_holder>("tar:parts.tar"))
    entries += !key.empty();
  auto& seen = part_keeping_holder::seen();
  REQUIRE(seen.size() == 200);
  CHECK(entries == 200);
  std::size_t as_parts = 0;
  for (std::size_t i = 0; i < seen.size(); ++i) {  // read long after: the kept views still hold
    std::string record = seen[i].record;
    if (!seen[i].parts.empty()) {
      ++as_parts;
      CHECK(seen[i].keeper);
      record.clear();
      for (const auto& [extension, data] : seen[i].parts) append_sample_member(record, extension, data);
    }
    CHECK(record == records[i]);
  }
  CHECK(as_parts > 150);          // most samples lie in one window
  CHECK(as_parts < seen.size());  // some across two: their records are copies
  // Random access reads records, which it may keep.
  part_keeping_holder::seen().clear();
  random_access_table_reader<part_keeping_holder> by_key("tar:parts.tar");
  CHECK(by_key.contains(sample_key(123)));
  by_key.value(sample_key(123));
  CHECK(part_keeping_holder::seen().back().record == records[123]);
  part_keeping_holder::seen().clear();
}

TEST_CASE("archives GNU tar made of WebDataset's files read as samples", "[tar][sample][peer][unix-tools]") {
  test::temp_dir dir;
  test::in_folder here(dir.path);
  REQUIRE(std::system(
              "mkdir -p d.v1 && printf J1 > d.v1/k1.jpg && printf 1 > d.v1/k1.cls && "
              "printf J2 > d.v1/k2.jpg && printf x > d.v1/README && printf h > d.v1/.hidden && "
              "tar --format=gnu -cf gnu.tar d.v1/k1.jpg d.v1/k1.cls d.v1/README d.v1/.hidden d.v1/k2.jpg") ==
          0);
  auto samples = read_all("tar:gnu.tar");
  REQUIRE(samples.size() == 2);  // members with no extension, and hidden ones, are skipped
  CHECK(samples[0] ==
        std::pair<std::string, webdataset_sample>("d.v1/k1", make_sample({{"jpg", "J1"}, {"cls", "1"}})));
  CHECK(samples[1] == std::pair<std::string, webdataset_sample>("d.v1/k2", make_sample({{"jpg", "J2"}})));
}

TEST_CASE("extensions read lowercased and metadata folders skipped, as WebDataset groups them",
          "[tar][sample][peer][unix-tools]") {
  test::temp_dir dir;
  test::in_folder here(dir.path);
  REQUIRE(std::system(
              "mkdir -p __meta__ x && printf J > x/k1.JPG && printf 1 > x/k1.Cls && "
              "printf m > __meta__/k1.json && printf n > x/__k2__.txt && printf t > x/k2.TxT && "
              "printf d > x/k3.jpg && printf D > x/k3.JPG && "
              "tar --format=gnu -cf mixed.tar x/k1.JPG x/k1.Cls __meta__/k1.json x/__k2__.txt x/k2.TxT && "
              "tar --format=gnu -cf twice.tar x/k3.jpg x/k3.JPG") == 0);
  auto samples = read_all("tar:mixed.tar");
  REQUIRE(samples.size() == 3);
  CHECK(samples[0] ==
        std::pair<std::string, webdataset_sample>("x/k1", make_sample({{"jpg", "J"}, {"cls", "1"}})));
  CHECK(samples[1].first == "x/__k2__");  // only a first folder "__NAME__" is metadata
  CHECK(samples[2] == std::pair<std::string, webdataset_sample>("x/k2", make_sample({{"txt", "t"}})));
  // Lowercased by random access too.
  random_access_table_reader<webdataset_sample_holder> by_key("tar:mixed.tar");
  CHECK(by_key.value("x/k1") == samples[0].second);
  CHECK_FALSE(by_key.contains("__meta__/k1"));
  // k3.jpg and k3.JPG are one extension twice, as WebDataset finds them.
  CHECK_THROWS_MATCHES(read_all("tar:twice.tar"), format_error,
                       test::says("'x/k3.JPG' after another member x/k3.jpg"));
}

TEST_CASE("malformed samples are errors naming file, offset and member", "[tar][sample][bad]") {
  test::temp_dir dir;
  test::in_folder here(dir.path);
  // A key's extension twice in a row: WebDataset refuses it too.
  {
    table_writer<bytes_holder> jpg("tar:twice.tar");
    jpg.write("k", "a");
    jpg.close();
  }
  std::string one = test::read_file("twice.tar");
  std::string member = one.substr(0, 1024);  // the header and the data block
  write_file("twice.tar", member + member + std::string(1024, '\0'));
  try {
    read_all("tar:twice.tar");
    FAIL("no error");
  } catch (const format_error& e) {
    CHECK(e.where().path == "twice.tar");
    CHECK(e.where().offset == 1024u);
    CHECK(e.where().key == "k");
    CHECK_THAT(e.what(), Catch::Contains("k.bin") && Catch::Contains("one member of each extension"));
  }
  // A truncated archive: the member's data runs past the end.
  write_file("cut.tar", member.substr(0, 512) + std::string(100, '\0'));
  CHECK_THROWS_WITH(read_all("tar:cut.tar"),
                    Catch::Contains("format error in 'cut.tar' at byte 0") && Catch::Contains("truncated"));
  // Records that are no samples, and samples that cannot be written.
  webdataset_sample_holder h;
  const std::pair<std::string, const char*> bad_records[] = {
      {std::string("\x05\0\0\0jp", 6), "an extension longer than the record"},
      {std::string("\x03\0\0\0jpg\x09\0\0\0\0\0\0\0abc", 18), "data longer than the record"},  // oversized
      {std::string("\0\0\0\0\0\0\0\0\0\0\0\0", 12), "an empty extension"},
      {std::string("\x01\0\0\0", 4), "an extension longer than the record"},
      {std::string("\x01\0\0\0a\x01\0\0\0\0\0\0\0z\x01", 15), "a truncated extension length"},  // at byte 14
      {std::string("\x01\0\0\0a\0\0", 7), "a truncated data length"}};
  for (const auto& [bad, why] : bad_records) {
    INFO(why);
    CHECK_THROWS_WITH(h.decode_record(bad, "x"),
                      Catch::Contains("format error in 'x'") && Catch::Contains(why));
  }
  CHECK_THROWS_WITH(h.decode_record(bad_records[4].first, "x"), Catch::Contains("at byte 14"));
  std::string twice;
  append_sample_member(twice, "a", "1");
  append_sample_member(twice, "a", "2");
  CHECK_THROWS_WITH(h.decode_record(twice, "x"), Catch::Contains("two members of one extension"));
  table_writer<webdataset_sample_holder> out("tar:x.tar");
  webdataset_sample s;
  s.members = {{"jpg", "1"}, {"jpg", "2"}};
  CHECK_THROWS_WITH(out.write("k", s), Catch::Contains("two members of extension 'jpg'"));
  s.members = {{"a/b", "1"}};
  CHECK_THROWS_WITH(out.write("k", s), Catch::Contains("extension 'a/b' is empty or has '/'"));
}

TEST_CASE("a sample is delivered before an error only when the error is another key's",
          "[tar][sample][bad]") {
  test::temp_dir dir;
  test::in_folder here(dir.path);
  {
    table_writer<webdataset_sample_holder> out("tar:s.tar");
    for (const char* key : {"a000", "a001", "a002"})
      out.write(key, make_sample({{"jpg", key}, {"cls", "1"}}));
    out.close();
  }
  std::string archive = test::read_file("s.tar");  // a sample per 2048 bytes: jpg, cls headers and data
  // Reads bad.tar as far as it goes: the keys delivered, and the error's offset and key.
  auto read = [&](const std::string& bytes, const std::string& options) {
    write_file("bad.tar", bytes);
    std::vector<std::string> keys;
    sequential_table_reader<webdataset_sample_holder> r("tar" + options + ":bad.tar");
    try {
      for (; !r.done(); r.next()) keys.push_back(r.key());
    } catch (const format_error& e) {
      keys.push_back("error at " + std::to_string(e.where().offset.value_or(0)) + " key '" + e.key() + "'");
    }
    return keys;
  };
  using keys = std::vector<std::string>;
  // a002.jpg's data cut short: a001 is whole, so it comes first, then the error naming a002.
  CHECK(read(archive.substr(0, 4096 + 700), "") == keys{"a000", "a001", "error at 4096 key 'a002'"});
  CHECK(read(archive.substr(0, 4096 + 700), ",p") == keys{"a000", "a001"});  // 'p' keeps a001
  // a001.cls's data cut short: a001 lacks a member, so it never comes.
  CHECK(read(archive.substr(0, 3072 + 700), "") == keys{"a000", "error at 3072 key 'a001'"});
  CHECK(read(archive.substr(0, 3072 + 700), ",p") == keys{"a000"});
  // a002.jpg's header unreadable: whose it was cannot be told, so a001 may lack a member; the
  // error names a001, the sample it costs.
  std::string corrupt = archive;
  corrupt[4096 + 148] ^= 1;
  CHECK(read(corrupt, "") == keys{"a000", "error at 4096 key 'a001'"});
  CHECK(read(corrupt, ",p") == keys{"a000"});
  // Cut inside a header: the same.
  CHECK(read(archive.substr(0, 4096 + 100), "") == keys{"a000", "error at 4096 key 'a001'"});
  // Cut on a block boundary, after a002.jpg or after all of a002: the file ends with none of the
  // end blocks every writer puts, so a002 may lack members (GNU tar and tarfile end quietly).
  CHECK(read(archive.substr(0, 5120), "") == keys{"a000", "a001", "error at 5120 key 'a002'"});
  CHECK(read(archive.substr(0, 6144), "") == keys{"a000", "a001", "error at 6144 key 'a002'"});
  CHECK(read(archive.substr(0, 6144), ",p") == keys{"a000", "a001"});
  CHECK(read(archive.substr(0, 6144 + 512), "") == keys{"a000", "a001", "a002"});  // one end block will do
}

TEST_CASE("what would read back as other samples than were written is refused", "[tar][sample][bad]") {
  test::temp_dir dir;
  test::in_folder here(dir.path);
  table_writer<webdataset_sample_holder> out("tar,maxcount=2:s-%04d.tar");
  CHECK_THROWS_WITH(out.write("k0", webdataset_sample{}), Catch::Contains("has no member"));
  out.write("k1", make_sample({{"jpg", "1"}}));
  CHECK_THROWS_WITH(out.write("k1", make_sample({{"cls", "1"}})),
                    Catch::Contains("two samples in a row of key 'k1'"));
  out.write("k2", make_sample({{"jpg", "2"}}));
  out.write("k2", make_sample({{"cls", "2"}}));  // another shard: read back apart
  out.write("k1", make_sample({{"cls", "3"}}));  // not in a row
  // Members that would read back as another extension, or be skipped as metadata.
  CHECK_THROWS_MATCHES(out.write("k3", make_sample({{"jpg", "1"}, {"Cls", "1"}})), usage_error,
                       test::says("the member 'k3.Cls' would read back as extension 'cls'"));
  CHECK_THROWS_MATCHES(out.write("__m__/k3", make_sample({{"jpg", "1"}})), usage_error,
                       test::says("the member '__m__/k3.jpg' would be skipped as WebDataset's metadata"));
  CHECK_THROWS_MATCHES(out.write("__k3", make_sample({{"x__", "1"}})), usage_error,
                       test::says("the member '__k3.x__' would be skipped as WebDataset's metadata"));
  out.write("__k3__", make_sample({{"jpg", "1"}}));  // its member __k3__.jpg is no metadata
  out.close();
  auto samples = read_all("tar:s-%04d.tar");
  REQUIRE(samples.size() == 5);  // nothing of a refused sample
  CHECK(samples[2].first == "k2");
  CHECK(samples[3] == std::pair<std::string, webdataset_sample>("k1", make_sample({{"cls", "3"}})));
  CHECK(samples[4].first == "__k3__");
  // A script line points at one member: samples have none to point at.
  CHECK_THROWS_WITH(
      [] {
        table_writer<webdataset_sample_holder> scripted("tar,scp:t.tar,t.scp");
        scripted.write("k", make_sample({{"jpg", "1"}}));
      }(),
      Catch::Contains("a sample (ext=*) has several"));
}

TEST_CASE("samples of very many members are checked for repeated extensions without comparing every pair",
          "[tar][sample][bad]") {
  test::temp_dir dir;
  test::in_folder here(dir.path);
  webdataset_sample many;
  for (int i = 0; i < 20000; ++i)
    many.set(std::string("e").append(std::to_string(i)),
             "x");  // not "e" + ...: g++ 12 warns falsely (-Wrestrict)
  std::string record;
  encode_sample(many, record);
  webdataset_sample_holder h;
  h.decode_record(record, "many");  // pairwise, 2 * 10^8 comparisons
  CHECK(h.value().members.size() == 20000);
  std::size_t at = record.size();
  append_sample_member(record, "e40", "again");  // past the members scanned one by one
  CHECK_THROWS_WITH(h.decode_record(record, "many"),
                    Catch::Contains("format error in 'many' at byte " + std::to_string(at)) &&
                        Catch::Contains("two members of one extension"));
  webdataset_sample twice = many;
  twice.members.push_back({"e40", "again"});
  table_writer<webdataset_sample_holder> out("tar:many.tar");
  CHECK_THROWS_WITH(out.write("k", twice), Catch::Contains("two members of extension 'e40'"));
  out.write("k", many);
  out.close();
  auto samples = read_all("tar:many.tar");
  REQUIRE(samples.size() == 1);
  CHECK(samples[0].second == many);
  // In an archive: the repeated member's header is the error's offset.
  std::string archive = test::read_file("many.tar");
  std::string last_two_blocks = archive.substr(20000 * 1024);  // the end: zero blocks
  std::string e40 = archive.substr(40 * 1024, 1024);           // k.e40's header and data
  write_file("repeat.tar", archive.substr(0, 20000 * 1024) + e40 + last_two_blocks);
  try {
    read_all("tar:repeat.tar");
    FAIL("no error");
  } catch (const format_error& e) {
    CHECK(e.where().offset == 20000u * 1024);
    CHECK(e.where().key == "k");
    CHECK_THAT(e.what(), Catch::Contains("'k.e40' after another member k.e40"));
  }
}
