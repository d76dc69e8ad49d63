// Streams: memory, files, offsets, mmap, pipes, iostream bridges, extended filenames; and
// SHA-256, which names cached objects and signs remote requests.
#include <tablio/core/sha256.hpp>
#include <tablio/stream/platform/folders.hpp>

#include "test_support.hpp"

#include <cstdlib>
#include <filesystem>
#include <tuple>

using namespace tablio;
namespace fs = std::filesystem;

namespace {

using test::in_folder;
using test::temp_dir;

std::string read_all(reader& r) {
  std::string out;
  char buf[1000];
  while (std::size_t n = r.read_some(buf, sizeof buf)) out.append(buf, n);
  return out;
}

std::string pattern(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131) >> 3);
  return s;
}

}  // namespace

TEST_CASE("reader windows, peeking and stitching across refills", "[stream]") {
  std::string data = pattern(100000);
  std::string path;
  temp_dir dir;
  path = dir / "p.bin";
  {
    writer w(file_sink(path), path, 4096);
    for (std::size_t i = 0; i < data.size(); i += 777)
      w.write(data.data() + i, std::min<std::size_t>(777, data.size() - i));
    w.close();
  }
  CHECK(test::read_file(path) == data);
  // A tiny buffer forces refills and stitching everywhere.
  reader r(file_source(path), path, default_limits, 7);
  CHECK(r.remaining() == 100000u);
  std::string got;
  while (!r.at_end()) {
    REQUIRE(r.ensure(std::min<std::uint64_t>(5, *r.remaining())));
    std::uint64_t before = r.tell();
    char c[3];
    std::size_t n = r.read_some(c, 3);
    got.append(c, n);
    CHECK(r.tell() == before + n);
  }
  CHECK(got == data);
  CHECK_THROWS_WITH(r.read_exact(got.data(), 1),
                    Catch::Contains(path) && Catch::Contains("end of input after 0"));
}

TEST_CASE("a keeper deletes its storage when the last copy lets go", "[stream]") {
  struct counted : kept_storage {
    explicit counted(int& alive) : alive(alive) { ++alive; }
    ~counted() override { --alive; }
    int& alive;
  };
  int alive = 0;
  keeper first = keeper::adopt(new counted(alive));
  CHECK(first.alone());
  keeper second = first, third;
  CHECK((!first.alone() && second == first && !third && third != first));
  third = std::move(second);
  CHECK((!second && third == first && !first.alone()));
  first.reset();
  CHECK((alive == 1 && third.alone()));
  third = keeper();
  CHECK(alive == 0);
}

TEST_CASE("a kept window outlives refills, which go to storage no one keeps", "[stream]") {
  std::string data = pattern(50000);
  temp_dir dir;
  std::string path = dir / "k.bin";
  {
    writer w(file_sink(path), path);
    w.write(data.data(), data.size());
    w.close();
  }
  struct kept_view {
    std::size_t offset;
    std::string_view bytes;
    tablio::keeper keeper;
  };
  reader r(file_source(path), path, default_limits, 1000);
  std::string scratch;
  std::vector<kept_view> kept;
  std::size_t stitched = 0;
  std::uint64_t window = r.window_number();
  tablio::keeper windows_keeper;  // of the last view in that window
  std::size_t same_window = 0;
  for (std::size_t at = 0; at + 300 <= data.size(); at += 300) {  // some in one window, some across two
    std::string_view v = r.read_view(300, scratch);
    if (v.data() == scratch.data()) {
      ++stitched;
      CHECK(r.window_number() != window);  // the reader went on to another window
      window = r.window_number();
      windows_keeper.reset();
      continue;  // a copy: nothing of the source's to keep
    }
    kept.push_back({at, v, r.keep_window()});
    REQUIRE(kept.back().keeper);
    // Views while the window's number stays the same share one keeper.
    if (windows_keeper && r.window_number() == window) {
      CHECK(kept.back().keeper == windows_keeper);
      ++same_window;
    }
    window = r.window_number();
    windows_keeper = kept.back().keeper;
  }
  CHECK(same_window > 50);
  CHECK(kept.size() > 100);
  CHECK(stitched > 10);
  for (const kept_view& k : kept) CHECK(k.bytes == std::string_view(data).substr(k.offset, 300));
  // Once let go of, the storage serves refills again.
  kept.clear();
  r.seek(0);
  CHECK(read_all(r) == data);
  // Memory is the source's own: nothing to keep.
  reader in_memory(memory_source(std::string_view(data)), "mem");
  CHECK(in_memory.read_view(10, scratch) == std::string_view(data).substr(0, 10));
  CHECK_FALSE(in_memory.keep_window());
}

TEST_CASE("large reads bypass the buffer and keep offsets right", "[stream]") {
  temp_dir dir;
  std::string data = pattern(3 << 20);
  std::string path = dir / "big.bin";
  {
    writer w(file_sink(path), path);
    w.write(data);
    w.close();
  }
  reader r(file_source(path), path);
  std::string head(10, '\0');
  r.read_exact(head.data(), 10);
  std::string body(data.size() - 10, '\0');
  r.read_exact(body.data(), body.size());
  CHECK(head + body == data);
  CHECK(r.tell() == data.size());
  CHECK(r.at_end());
}

TEST_CASE("names are UTF-8, and bytes go through untranslated", "[stream][filename]") {
  temp_dir dir;
  // Non-ASCII names, and CR, LF and ^Z (the end of a text file on Windows) in the bytes.
  const std::string name = dir /
                           "donn\xC3\xA9"
                           "es-\xE6\x97\xA5\xE6\x9C\xAC.ark";
  const std::string bytes = std::string("a\r\nb\nc\x1a") + std::string(1, '\0') + "d\r";
  {
    writer w = open_output(name);
    w.write(bytes);
    w.close();
  }
  reader r = open_input(name);
  CHECK(read_all(r) == bytes);
  mmap_source mapped(name);
  CHECK(std::string(mapped.contiguous().data(), mapped.contiguous().size()) == bytes);
  reader at = open_input_at(name, 2);
  CHECK(read_all(at) == bytes.substr(2));
  const fs::path shown(std::u8string(reinterpret_cast<const char8_t*>(name.data()), name.size()));
  CHECK(fs::file_size(shown) == bytes.size());  // the name the system shows
}

TEST_CASE("memory writer grows its vector and reports its size", "[stream]") {
  byte_buffer out;
  writer w = memory_writer(out);
  for (int i = 0; i < 10000; ++i) w.write("abcdefgh", 8);
  CHECK(w.tell() == 80000u);
  w.close();
  CHECK(out.size() == 80000u);
  CHECK_THROWS_AS(w.write("x", 1), usage_error);
}

TEST_CASE("files opened at an offset, seeking and mmap", "[stream]") {
  temp_dir dir;
  std::string path = dir / "f.bin";
  {
    writer w = open_output(path);
    w.write("0123456789");
    w.close();
  }
  reader at = open_input(path + ":4");
  CHECK(at.tell() == 4u);
  CHECK(read_all(at) == "456789");
  at.seek(1);
  CHECK(at.get() == '1');
  CHECK_THROWS_WITH(open_input(path + ":11"), Catch::Contains("past the end"));

  reader mapped(mmap_source(path), path);
  REQUIRE(mapped.fill());
  CHECK(mapped.window().size() == 10u);  // one window: no copy
  mapped.seek(7);
  CHECK(read_all(mapped) == "789");
  CHECK_THROWS_AS(mmap_source(dir / "missing"), io_error);
}

namespace {
// A seekable source over a string that records how much each read asks for.
struct asking_source {
  std::string data;
  std::vector<std::size_t>* asked;
  std::uint64_t at = 0;
  std::size_t read_some(char* dst, std::size_t n) {
    asked->push_back(n);
    n = std::min<std::size_t>(n, data.size() - at);
    std::memcpy(dst, data.data() + at, n);
    at += n;
    return n;
  }
  void seek(std::uint64_t offset) { at = offset; }
  std::uint64_t tell() const { return at; }
};
}  // namespace

TEST_CASE("after a seek, refills start small and grow back to the whole buffer", "[stream]") {
  std::string data = pattern(1 << 20);
  std::vector<std::size_t> asked;
  reader r(asking_source{data, &asked}, "asking");
  char byte;
  r.read_exact(&byte, 1);
  CHECK(asked == std::vector<std::size_t>{detail::default_read_buffer});  // reading from the start
  asked.clear();
  r.seek(500000);  // random access to a short entry reads little
  char entry[100];
  r.read_exact(entry, sizeof entry);
  CHECK(std::string(entry, sizeof entry) == data.substr(500000, sizeof entry));
  CHECK(asked == std::vector<std::size_t>{detail::refill_after_seek});
  // Reading on doubles each refill up to the buffer's size.
  std::string rest = read_all(r);
  CHECK(rest == data.substr(500000 + sizeof entry));
  REQUIRE(asked.size() > 4);
  CHECK(asked[1] == 2 * detail::refill_after_seek);
  CHECK(asked[2] == 4 * detail::refill_after_seek);
  CHECK(*std::max_element(asked.begin(), asked.end()) == detail::default_read_buffer);
}

TEST_CASE("I/O errors name the file and the system's reason", "[stream][bad]") {
  try {
    file_source missing("/nonexistent/dir/file");
    FAIL("opened");
  } catch (const io_error& e) {
    CHECK(e.path() == "/nonexistent/dir/file");
    CHECK(e.error_number() == ENOENT);
    CHECK_THAT(e.what(), Catch::Contains("No such file"));
  }
  if (!std::filesystem::exists("/dev/full")) return;  // a device of Linux (and of wine, which maps it)
  SECTION("a full disk is reported, not ignored") {
    writer w(file_sink("/dev/full"), "/dev/full");
    w.write(std::string(1000, 'x'));
    CHECK_THROWS_WITH(w.close(), Catch::Contains("/dev/full") && Catch::Contains("No space left"));
  }
  SECTION("a writer destroyed with a failure reports it instead of throwing") {
    static std::string reported;
    auto previous = set_error_reporter([](const char* m) noexcept { reported = m; });
    {
      writer w(file_sink("/dev/full"), "/dev/full");
      w.write("lost", 4);
    }
    set_error_reporter(previous);
    CHECK_THAT(reported, Catch::Contains("/dev/full"));
  }
}

TEST_CASE("pipes run commands and report their failure", "[stream][pipe]") {
  temp_dir dir;
  SECTION("an input pipe reads the command's output") {
    reader r = open_input(test::command("print \"hello world\"") + " |");
    CHECK(read_all(r) == "hello world");
    r.close();
  }
  SECTION("an output pipe feeds the command") {
    std::string target = dir / "out.txt";
    writer w = open_output("| " + test::command("upper") + " > " + target);
    w.write("shout");
    w.close();
    CHECK(test::read_file(target) == "SHOUT");
  }
  SECTION("a command that exits non-zero is an error at close") {
    reader r = open_input(test::command("print partial exit 3") + " |");
    CHECK(read_all(r) == "partial");
    CHECK_THROWS_WITH(r.close(), Catch::Contains("exited with status 3"));
    writer w = open_output("| " + test::command("drain exit 4"));
    w.write("x", 1);
    CHECK_THROWS_WITH(w.close(), Catch::Contains("exited with status 4"));
    // Its own type, which callers that judge a command's status themselves catch (Kaldi's
    // tables warn of it).
    reader again = open_input(test::command("print partial exit 3") + " |");
    read_all(again);
    CHECK_THROWS_AS(again.close(), command_error);
  }
  SECTION("an input pipe is read to its end before it is closed") {
    // Without draining, `yes | head` style producers die of SIGPIPE and look like failures.
    reader r = open_input(test::command("zeros 1000000") + " |");
    CHECK(r.get() == 0);
    CHECK_NOTHROW(r.close());
  }
  SECTION("writing to a command that exited is an error, not a SIGPIPE death") {
    writer w = open_output("| exit 0");
    std::string block(1 << 20, 'x');
    CHECK_THROWS_AS(
        [&] {
          for (int i = 0; i < 64; ++i) w.write(block);
          w.close();
        }(),
        io_error);
  }
  SECTION("pipes can be switched off for untrusted names") {
    open_options no_pipes;
    no_pipes.allow_pipes = false;
    CHECK_THROWS_WITH(open_input("rm -rf / |", no_pipes), Catch::Contains("pipes are disabled"));
    CHECK_THROWS_WITH(open_output("| rm -rf /", no_pipes), Catch::Contains("pipes are disabled"));
  }
}

TEST_CASE("rxfilenames are classified as Kaldi classifies them", "[stream][filename]") {
  CHECK(classify_rxfilename("") == input_kind::standard_input);
  CHECK(classify_rxfilename("-") == input_kind::standard_input);
  CHECK(classify_rxfilename("| gunzip") == input_kind::none);
  CHECK(classify_rxfilename("gunzip -c foo.gz |") == input_kind::pipe);
  CHECK(classify_rxfilename(" foo") == input_kind::none);
  CHECK(classify_rxfilename("foo ") == input_kind::none);
  CHECK(classify_rxfilename("ark:foo") == input_kind::none);
  CHECK(classify_rxfilename("scp,p:foo") == input_kind::none);
  CHECK(classify_rxfilename("a:b") == input_kind::file);  // not a valid specifier
  CHECK(classify_rxfilename("foo.ark:123") == input_kind::offset_file);
  CHECK(classify_rxfilename("foo.ark:") == input_kind::file);
  CHECK(classify_rxfilename("foo.ark:12a") == input_kind::file);
  CHECK(classify_rxfilename("foo|bar") == input_kind::none);
  CHECK(classify_rxfilename("/tmp/foo.ark") == input_kind::file);
  CHECK(split_offset_filename("a:b.ark:42").file == "a:b.ark");
  CHECK(split_offset_filename("a:b.ark:42").offset == 42u);
}

TEST_CASE("wxfilenames are classified as Kaldi classifies them", "[stream][filename]") {
  CHECK(classify_wxfilename("") == output_kind::standard_output);
  CHECK(classify_wxfilename("-") == output_kind::standard_output);
  CHECK(classify_wxfilename("| gzip -c > f.gz") == output_kind::pipe);
  CHECK(classify_wxfilename("gzip |") == output_kind::none);
  CHECK(classify_wxfilename(" f") == output_kind::none);
  CHECK(classify_wxfilename("ark,t:f") == output_kind::none);
  CHECK(classify_wxfilename("f.ark:10") == output_kind::none);
  CHECK(classify_wxfilename("f|g") == output_kind::none);
  CHECK(classify_wxfilename("f.ark") == output_kind::file);
  CHECK_THROWS_WITH(open_output("f.ark:10"), Catch::Contains("invalid wxfilename"));
}

TEST_CASE("remote names: classified, refused where the network is off or libcurl is not linked",
          "[stream][filename][remote]") {
  CHECK(classify_rxfilename("s3://bucket/train.ark") == input_kind::remote);
  CHECK(classify_rxfilename("https://host:8443/data/train.ark:1234") == input_kind::remote);
  CHECK(classify_rxfilename("http://host/cat |") == input_kind::pipe);
  CHECK(classify_wxfilename("s3://bucket/out.tfrecord") == output_kind::remote);
  CHECK(can_open_at("s3://bucket/f.ark"));
  CHECK_FALSE(can_open_at("s3://bucket/f.ark:10"));
  CHECK(can_open_at("http://host:8080"));  // the port is no offset
  CHECK(can_open_at("http://host:8080/f"));
  offset_filename o = split_offset_filename("https://host:8443/data/train.ark:1234");
  CHECK(o.file == "https://host:8443/data/train.ark");
  CHECK(o.offset == 1234u);
  CHECK_THROWS_WITH(split_offset_filename("http://host:8080"), Catch::Contains("not a file:offset"));
  open_options offline;
  offline.allow_network = false;
  CHECK_THROWS_WITH(open_input("s3://b/k", offline), Catch::Contains("network access is disabled"));
  CHECK_THROWS_WITH(open_output("https://h/k", offline), Catch::Contains("network access is disabled"));
#if !defined(TABLIO_WITH_CURL)
  CHECK_THROWS_WITH(open_input("s3://b/k"), Catch::Contains("link the tablio::curl CMake target"));
  CHECK_THROWS_WITH(open_output("s3://b/k"), Catch::Contains("link the tablio::curl CMake target"));
#endif
}

TEST_CASE("specifiers are parsed as Kaldi parses them", "[stream][specifier]") {
  auto w = parse_wspecifier("ark,scp,t,f:a.ark,a.scp");
  REQUIRE(w);
  CHECK(w->kind == wspecifier_kind::archive_and_script);
  CHECK(w->archive == "a.ark");
  CHECK(w->script == "a.scp");
  CHECK_FALSE(w->binary);
  CHECK(w->flush);
  CHECK_FALSE(parse_wspecifier("scp,ark:a,b"));
  CHECK_FALSE(parse_wspecifier("ark,ark:a"));
  CHECK_FALSE(parse_wspecifier("ark,scp:nocomma"));
  CHECK_FALSE(parse_wspecifier("ark:a "));
  CHECK_FALSE(parse_wspecifier("ark,x:a"));
  auto r = parse_rspecifier("ark,s,cs,o,p:f.ark");
  REQUIRE(r);
  CHECK(r->sorted);
  CHECK(r->called_sorted);
  CHECK(r->once);
  CHECK(r->permissive);
  CHECK(r->filename == "f.ark");
  CHECK_FALSE(parse_rspecifier("o, s, ark:x"));  // empty options between ',' and ' '
  CHECK_FALSE(parse_rspecifier("ark,scp:a,b"));
  CHECK_FALSE(parse_rspecifier("s:f"));
  CHECK(parse_rspecifier("b,t,ns,ncs,np,no,bg,scp:f")->kind == rspecifier_kind::script);
}

TEST_CASE("an option's value may be a name with a drive on Windows; elsewhere ':' ends the options",
          "[stream][specifier]") {
  auto r = parse_rspecifier("scp,segments=C:\\d\\segments:C:\\d\\wav.scp");
  REQUIRE(r);
#if defined(_WIN32)
  CHECK(r->segments == "C:\\d\\segments");
  CHECK(r->filename == "C:\\d\\wav.scp");
  CHECK(parse_rspecifier("scp,segments=d:/segments:wav.scp")->segments == "d:/segments");
#else
  CHECK(r->segments == "C");
  CHECK(r->filename == "\\d\\segments:C:\\d\\wav.scp");
#endif
  CHECK(parse_rspecifier("scp,segments=segments:C:\\d\\wav.scp")->segments == "segments");
}

TEST_CASE("globs match as fnmatch(3) with FNM_PATHNAME and glob(3) do, on every system", "[stream][glob]") {
  using detail::os::matches_glob;
  const std::vector<std::tuple<std::string, std::string, bool>> cases{
      {"*.tar", "a.tar", true},
      {"*.tar", "d/a.tar", false},
      {"?.tar", "a.tar", true},
      {"?.tar", "ab.tar", false},
      {"?", "/", false},
      {"[ab].tar", "b.tar", true},
      {"[!ab].tar", "c.tar", true},
      {"[!ab].tar", "a.tar", false},
      {"[^ab]", "c", true},
      {"[a-c]x", "bx", true},
      {"[a-c]x", "dx", false},
      {"[]a]", "]", true},
      {"[/]", "/", false},
      {"d/*.tar", "d/a.tar", true},
      {"*/x", "a/b/x", false},
      {"*a*", "bab", true},
      {"*", "", true},
      {"a[", "a[", true},
      {"[*]", "*", true},
      {"[*]", "a", false},
      {"shard-[0-9][0-9].tar", "shard-07.tar", true}};
  for (const auto& [pattern, name, matches] : cases) {
    INFO(pattern << " against " << name);
    CHECK(matches_glob(pattern, name) == matches);
  }
  for (std::string text : {"a*b?[c]", "plain", "x[!]"})
    CHECK(matches_glob(detail::os::glob_escaped(text), text));
  CHECK_FALSE(matches_glob(detail::os::glob_escaped("a*b"), "axb"));

  temp_dir dir;
  in_folder there(dir.path);
  fs::create_directory("sub");
  for (const char* name : {"a1.tar", "a2.tar", "b.tar", ".hidden.tar", "sub/c.tar"})
    test::write_file(name, "x");
  detail::os::glob_outcome outcome;
  CHECK(detail::os::glob_files("a*.tar", outcome) == std::vector<std::string>{"a1.tar", "a2.tar"});
  CHECK(outcome == detail::os::glob_outcome::matched);
  CHECK(detail::os::glob_files("*.tar", outcome) == std::vector<std::string>{"a1.tar", "a2.tar", "b.tar"});
  CHECK(detail::os::glob_files(".*.tar", outcome) == std::vector<std::string>{".hidden.tar"});
  CHECK(detail::os::glob_files("s*/*.tar", outcome) == std::vector<std::string>{"sub/c.tar"});
  CHECK(detail::os::glob_files("z*.tar", outcome).empty());
  CHECK(outcome == detail::os::glob_outcome::no_match);
}

TEST_CASE("iostream bridges in both directions", "[stream][iostream]") {
  std::istringstream in("abc def");
  reader r(istream_source(in), "istream");
  CHECK(read_all(r) == "abc def");
  std::ostringstream out;
  {
    writer w(ostream_sink(out), "ostream");
    w.write("xyz");
    w.close();
  }
  CHECK(out.str() == "xyz");

  std::string src = "12 34 rest";
  reader r2 = memory_reader(std::string_view(src));
  {
    reader_streambuf buf(r2);
    std::istream is(&buf);
    int a, b;
    is >> a >> b;
    CHECK(a + b == 46);
  }
  CHECK(r2.tell() == 5u);  // the reader continues where the istream stopped
  byte_buffer bytes;
  writer w2 = memory_writer(bytes);
  w2.write("<", 1);
  {
    writer_streambuf buf(w2);
    std::ostream os(&buf);
    os << 42 << std::string(100000, 'z');
  }
  w2.write(">", 1);
  w2.close();
  CHECK(bytes.size() == 100004u);
  CHECK(std::string_view(bytes.data(), 3) == "<42");
}

TEST_CASE("SHA-256 of FIPS 180-2's examples, fed in pieces of any size", "[sha256]") {
  auto digest = [](std::string_view data, std::size_t piece) {
    sha256 h;
    h.update(std::string_view());  // no bytes: a null data() included
    for (std::size_t at = 0; at < data.size(); at += piece) h.update(data.substr(at, piece));
    return h.hex();
  };
  for (std::size_t piece : {1, 3, 63, 64, 65, 1000}) {
    INFO(piece);
    CHECK(digest("", piece) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(digest("abc", piece) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", piece) ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    CHECK(digest(std::string(1000000, 'a'), piece) ==
          "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  }
}
