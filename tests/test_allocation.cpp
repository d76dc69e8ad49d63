// Allocation bombs: short inputs whose counts claim huge sizes must fail with a format error
// after allocating almost nothing. Global operator new is replaced to count bytes.
#include "test_support.hpp"

#include <atomic>
#include <cstdlib>
#include <map>
#include <new>

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
