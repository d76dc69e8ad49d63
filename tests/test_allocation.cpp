// Allocation bombs: short inputs whose counts claim huge sizes must fail with a format error
// after allocating almost nothing. Global operator new is replaced to count bytes.
#include <tablio/framing/idx.hpp>
#include <tablio/framing/tar.hpp>
#include <tablio/framing/tfrecord.hpp>
#include <tablio/stream/shards.hpp>
#include <tablio/types/compressed_matrix.hpp>
#include <tablio/types/datum.hpp>
#include <tablio/types/example.hpp>
#include <tablio/types/example_view.hpp>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <new>
#include <optional>

#include "test_support.hpp"

// GCC cannot see that the replaced operator new below allocates with malloc.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {
std::atomic<bool> counting{false};
std::atomic<std::size_t> counted_bytes{0};
std::atomic<std::size_t> largest{0};
}  // namespace

namespace {
void* counted_malloc(std::size_t n) {
  if (counting) {
    counted_bytes += n;
    std::size_t prev = largest;
    while (n > prev && !largest.compare_exchange_weak(prev, n)) {
    }
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
}  // namespace

// Every plain form is replaced, so that new and delete always pair malloc with free.
void* operator new(std::size_t n) { return counted_malloc(n); }
void* operator new[](std::size_t n) { return counted_malloc(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

using namespace tablio;

namespace {

// Runs f with counting on; returns the total bytes allocated meanwhile.
template <class F>
std::size_t allocated_by(F f) {
  counted_bytes = 0;
  largest = 0;
  counting = true;
  try {
    f();
  } catch (...) {
    counting = false;
    throw;
  }
  counting = false;
  return counted_bytes;
}

}  // namespace

TEST_CASE("a 16-byte input claiming 2^28 floats allocates a few KiB at most", "[allocation]") {
  // A Kaldi binary float vector: "FV ", int32 count 2^28 with its marker, then 8 data bytes.
  std::string bomb(
      "FV \x04\x00\x00\x00\x10"
      "12345678",
      16);
  REQUIRE(bomb.size() == 16);
  std::size_t bytes = 0;
  CHECK_THROWS_AS(bytes = allocated_by([&] { decode<kaldi_binary, std::vector<float>>(bomb); }),
                  format_error);
  bytes = counted_bytes;
  CHECK(bytes < 4096);
  CHECK(largest < 4096);
}

TEST_CASE("the same bomb from a pipe, where the size is unknown, stays bounded", "[allocation]") {
  // Without a known input size the reader grows the vector only as data arrives.
  std::size_t bytes = 0;
  CHECK_THROWS_AS(bytes = allocated_by([&] {
                    reader r = open_input("printf 'FV \\004\\000\\000\\000\\020' |");
                    decode_from<kaldi_binary, std::vector<float>>(r);
                  }),
                  format_error);
  bytes = counted_bytes;
  // The reader's own buffer plus one bounded reserve step (limits::max_reserve_bytes).
  CHECK(largest <= default_limits.max_reserve_bytes);
  CHECK(bytes < 3 * default_limits.max_reserve_bytes);
}

TEST_CASE("lying counts in every codec and container fail before allocating", "[allocation]") {
  std::string huge_u64(
      "\xff\xff\xff\xff\xff\xff\xff\x0f"
      "abcdefgh",
      16);
  std::string huge_i32(
      "\x04\xff\xff\xff\x7f"
      "abcdefghijk",
      16);
  auto check = [](auto decode_fn) {
    std::size_t bytes = 0;
    CHECK_THROWS_AS(bytes = allocated_by(decode_fn), format_error);
    CHECK(counted_bytes < 4096);
  };
  check([&] { decode<raw_little, std::vector<double>>(huge_u64); });
  check([&] { decode<raw_little, std::string>(huge_u64); });
  check([&] { decode<raw_little, std::vector<std::vector<int>>>(huge_u64); });
  check([&] { decode<raw_little, std::map<int, int>>(huge_u64); });
  check([&] { decode<kaldi_binary, std::vector<std::string>>(huge_i32); });
  check([&] { decode<kaldi_binary, std::string>(huge_i32); });
  check([&] { decode<kaldi_text, std::vector<std::string>>("99999999999 "); });
  check([&] {
    basic_vector_holder<std::int32_t> h;
    std::string object("\0B", 2);
    object += huge_i32;
    reader r = memory_reader(std::string_view(object));
    h.read(r);
  });
}

namespace {

// A source of unknown size, as a pipe is: a parser cannot check a count against it.
struct unsized_source {
  std::string_view bytes;
  std::size_t read_some(char* dst, std::size_t n) {
    n = std::min(n, bytes.size());
    std::memcpy(dst, bytes.data(), n);
    bytes.remove_prefix(n);
    return n;
  }
};

// Protocol buffer pieces: a varint, and a length-delimited field (whose length may lie).
std::string varint(std::uint64_t v) {
  std::string out;
  for (; v >= 0x80; v >>= 7) out += static_cast<char>((v & 0x7f) | 0x80);
  return out + static_cast<char>(v);
}
std::string field(int number, const std::string& body, std::optional<std::uint64_t> claimed = {}) {
  return static_cast<char>(number << 3 | 2) + varint(claimed.value_or(body.size())) + body;
}

std::string le32(std::uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }
std::string be32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

// A TFRecord header claiming `length` bytes, with a valid length CRC.
std::string tfrecord_header(std::uint64_t length) {
  char h[12];
  store<std::endian::little>(h, length);
  store<std::endian::little>(h + 8, mask_crc(crc32c(h, 8)));
  return std::string(h, 12);
}

// A tar header for a member `name` of `size` bytes (base-256 when octal cannot hold it).
std::string tar_header(const std::string& name, std::uint64_t size, char type = '0') {
  std::string out;
  writer w = memory_writer(out);
  detail::put_tar_header(w, name, size, type);
  w.close();
  return out;
}

struct bomb {
  std::string name;
  std::string bytes;
  std::function<void(reader&)> parse;
  bool accepted = false;  // a valid input after all
};

std::vector<bomb> bombs() {
  using namespace std::string_literals;
  auto kaldi = [](auto holder) {
    return [](reader& r) {
      decltype(holder) h;
      h.read(r);
    };
  };
  auto whole = [](auto decode) {
    return [decode](reader& r) {
      std::string all;
      for (int c; (c = r.get()) >= 0;) all += static_cast<char>(c);
      decode(all);
    };
  };
  auto one_tfrecord = [](reader& r) {
    tfrecord_reader t(std::move(r));
    std::string_view record;
    while (t.next(record)) {
    }
  };
  auto idx = [](reader& r) { idx_file f(std::move(r)); };
  auto tar_member = [](reader& r) {
    detail::tar_member m;
    std::string scratch;
    while (detail::read_tar_member(r, m, scratch)) detail::read_tar_data(r, m, scratch);
  };
  std::string big = "\xff\xff\xff\x7f"s;
  // Example { features { feature { key: "a" value: Feature } } } around a Feature's bytes.
  auto in_example = [](const std::string& feature) {
    return field(1, field(1, field(1, "a") + field(2, feature)));
  };
  return {
      {"Kaldi float matrix of 2^30 x 2^30", "\0BFM \4\0\0\0\x40\4\0\0\0\x40"s + "12345678",
       kaldi(holder<matrix<float>>{})},
      {"Kaldi float matrix of 2^15 x 2^15", "\0BFM \4\0\x80\0\0\4\0\x80\0\0"s + "12345678",
       kaldi(holder<matrix<float>>{})},
      {"Kaldi double vector of 2^31-1", "\0BDV \4"s + big + "12345678", kaldi(holder<vector<double>>{})},
      {"Kaldi compressed matrix of 30000 x 30000",
       "\0BCM "s + le32(0) + le32(0x3f800000) + le32(30000) + le32(30000) + "1234",
       kaldi(holder<compressed_matrix>{})},
      {"Kaldi int vector of 2^31-1", "\0B\4"s + big + "12345678", kaldi(basic_vector_holder<std::int32_t>{})},
      {"Kaldi int vectors, 2^31-1 of them", "\0B\4"s + big + "\4\4\0\0\0",
       kaldi(basic_vector_vector_holder<std::int32_t>{})},
      {"Kaldi int vectors, nested counts", "\0B\4\2\0\0\0\4"s + big + "12345",
       kaldi(basic_vector_vector_holder<std::int32_t>{})},
      {"Kaldi int pairs, 2^31-1 of them", "\0B\4"s + big + "\4\1\0\0\0\4\2\0\0\0",
       kaldi(basic_pair_vector_holder<std::int32_t>{})},
      {"wave with 4 GiB of data",
       "RIFF"s + le32(36) + "WAVEfmt " + le32(16) + "\1\0\1\0"s + le32(16000) + le32(32000) + "\2\0\x10\0"s +
           "data" + le32(0xfffffff0u) + "1234",
       kaldi(wave_holder{})},
      {"TFRecord of 2^62 bytes", tfrecord_header(std::uint64_t{1} << 62) + "1234", one_tfrecord},
      {"TFRecord of 2^31 bytes", tfrecord_header(std::uint64_t{1} << 31) + "1234", one_tfrecord},
      {"Example whose features claim 2^62 bytes", field(1, "1234", std::uint64_t{1} << 62),
       whole([](const std::string& b) { decode_example(b); })},
      {"Example with a bytes value of 2^40 bytes",
       in_example(field(1, field(1, "12", std::uint64_t{1} << 40))),
       whole([](const std::string& b) { decode_example(b); })},
      {"Example with packed floats of 2^40 bytes",
       in_example(field(2, field(1, "1234", std::uint64_t{1} << 40))),
       whole([](const std::string& b) { decode_example(b); })},
      {"Example view with packed int64s of 2^40 bytes",
       in_example(field(3, field(1, "1234", std::uint64_t{1} << 40))), whole([](const std::string& b) {
         example_view v;
         v.parse(b);
       })},
      {"SequenceExample whose feature list claims 2^40 bytes",
       field(2, field(1, field(1, "a") + field(2, "12", std::uint64_t{1} << 40))),
       whole([](const std::string& b) { decode_sequence_example(b); })},
      {"Datum with 2^40 data bytes", field(4, "1234", std::uint64_t{1} << 40),
       whole([](const std::string& b) { decode_datum(b); })},
      {"Datum with packed floats of 2^40 bytes", field(6, "1234", std::uint64_t{1} << 40),
       whole([](const std::string& b) { decode_datum(b); })},
      {"IDX with dimensions whose product overflows",
       "\0\0\x0d\4"s + be32(0xffffffff) + be32(0xffffffff) + be32(0xffffffff) + be32(0xffffffff) + "1234",
       idx},
      {"tar member of 2^60 bytes", tar_header("huge.bin", std::uint64_t{1} << 60) + "1234", tar_member},
      {"tar pax header of 2^40 bytes", tar_header("././@PaxHeader", std::uint64_t{1} << 40, 'x') + "1234",
       tar_member},
      {"tar long name of 2^33 bytes", tar_header("././@LongLink", std::uint64_t{1} << 33, 'L') + "1234",
       tar_member},
      {"IDX of 2^32-1 doubles items of 2^20", "\0\0\x0e\2"s + be32(0xffffffff) + be32(1 << 20) + "12345678",
       idx},
  };
}

}  // namespace

TEST_CASE("crafted counts in every format fail after allocating a small multiple of the input",
          "[allocation]") {
  for (const bomb& b : bombs()) {
    for (bool stream : {false, true}) {
      INFO(b.name << (stream ? ", from a stream of unknown size" : ", from memory"));
      reader r =
          stream ? reader(unsized_source{b.bytes}, "bomb") : memory_reader(std::string_view(b.bytes), "bomb");
      if (b.accepted)
        allocated_by([&] { b.parse(r); });
      else
        CHECK_THROWS_AS(allocated_by([&] { b.parse(r); }), format_error);
      // From memory: at most a few KiB. From a stream: the reader's buffer and one bounded
      // step of growth (limits::max_reserve_bytes) before the data runs out.
      std::size_t bound = stream ? detail::default_read_buffer + 2 * default_limits.max_reserve_bytes : 4096;
      CHECK(counted_bytes <= bound + 64 * b.bytes.size());
    }
  }
}

TEST_CASE("shard counts cost what exists: names are made only for files that are there",
          "[allocation][shard]") {
  test::temp_dir dir;
  for (int i = 0; i < 2; ++i) std::ofstream(dir / shard_name("part", i, 999999));
  // An absurd count is refused before any name is made.
  CHECK_THROWS_AS(allocated_by([&] { expand_shards(dir / "part@999999999"); }), usage_error);
  CHECK(counted_bytes <= 4096);
  // A count within bounds stops at the first shard that is missing.
  CHECK_THROWS_WITH(
      allocated_by([&] { expand_shards(dir / "part@999999"); }),
      Catch::Contains("cannot find shard 2 of 999999") && Catch::Contains("part-00002-of-999999"));
  CHECK(counted_bytes <= 4096);
}

TEST_CASE("a tar member larger than the reader's buffer is read once into its entry's bytes",
          "[allocation][tar][unix-tools]") {
  test::temp_dir dir;
  const std::string big(std::size_t{4} << 20, 'x'), path = dir / "big.tar";
  std::ofstream(dir / "b.bin", std::ios::binary) << big;
  REQUIRE(std::system(("cd '" + dir.path.string() + "' && tar --format=ustar -cf big.tar b.bin").c_str()) ==
          0);
  for (std::string extension : {"*", "bin"}) {  // a sample's record, or the member's bytes
    INFO("ext=" << extension);
    tar_input in(path, {extension});
    entry e;
    allocated_by([&] { REQUIRE(in.next(e)); });
    CHECK(e.bytes.size() >= big.size());
    CHECK(e.lent);  // a holder may take the bytes rather than copy them
    // The bytes, the reader's buffer and names: no copy in between.
    CHECK(counted_bytes <= big.size() + detail::default_read_buffer + 65536);
  }
}
