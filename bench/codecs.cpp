// Serialize and deserialize 100,000 records through tablio's raw<little> and kaldi_binary
// codecs (Boost.PFR, no user code), cereal's binary archive, and a hand-written per-field
// memcpy codec: the limit any codec of this layout can reach.
#include "ratio_reporter.hpp"

#include <tablio/codec/codec.hpp>

#include <cereal/archives/binary.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>

#include <cstring>
#include <random>
#include <sstream>
#include <stdexcept>

namespace {

struct record {
  std::uint32_t id;
  std::string name;
  std::vector<float> v;
  std::vector<std::int32_t> ids;
  double score;

  template <class Archive>
  void serialize(Archive& ar) {  // for cereal only; tablio needs nothing
    ar(id, name, v, ids, score);
  }
};

constexpr std::size_t record_count = 100000;

const std::vector<record>& records() {
  static const std::vector<record> all = [] {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> f(-1, 1);
    std::vector<record> out(record_count);
    for (std::size_t i = 0; i < out.size(); ++i) {
      record& r = out[i];
      r.id = static_cast<std::uint32_t>(i);
      r.name = "utterance-" + std::to_string(i * 7919);
      r.v.resize(128);
      for (float& x : r.v) x = f(rng);
      r.ids.resize(16);
      for (auto& x : r.ids) x = static_cast<std::int32_t>(rng());
      r.score = f(rng);
    }
    return out;
  }();
  return all;
}

// The limit: each field copied with memcpy, u32 lengths, bounds checked on input.
namespace handwritten {

template <class T>
void put(tablio::byte_buffer& out, std::size_t& pos, const T* data, std::size_t n) {
  std::memcpy(out.data() + pos, data, n * sizeof(T));
  pos += n * sizeof(T);
}

void serialize(const std::vector<record>& in, tablio::byte_buffer& out) {
  std::size_t total = 0;
  for (const record& r : in) total += 4 + 4 + r.name.size() + 4 + r.v.size() * 4 + 4 + r.ids.size() * 4 + 8;
  out.resize_uninitialized(total);
  std::size_t pos = 0;
  for (const record& r : in) {
    auto n = static_cast<std::uint32_t>(r.name.size());
    auto nv = static_cast<std::uint32_t>(r.v.size());
    auto ni = static_cast<std::uint32_t>(r.ids.size());
    put(out, pos, &r.id, 1);
    put(out, pos, &n, 1);
    put(out, pos, r.name.data(), n);
    put(out, pos, &nv, 1);
    put(out, pos, r.v.data(), nv);
    put(out, pos, &ni, 1);
    put(out, pos, r.ids.data(), ni);
    put(out, pos, &r.score, 1);
  }
}

struct cursor {
  const char* p;
  const char* end;
  template <class T>
  void get(T* data, std::size_t n) {
    if (static_cast<std::size_t>(end - p) < n * sizeof(T)) throw std::runtime_error("truncated");
    std::memcpy(data, p, n * sizeof(T));
    p += n * sizeof(T);
  }
  std::uint32_t count() {
    std::uint32_t n;
    get(&n, 1);
    return n;
  }
};

void deserialize(const tablio::byte_buffer& in, std::vector<record>& out) {
  cursor c{in.data(), in.data() + in.size()};
  for (record& r : out) {
    c.get(&r.id, 1);
    r.name.resize(c.count());
    c.get(r.name.data(), r.name.size());
    r.v.resize(c.count());
    c.get(r.v.data(), r.v.size());
    r.ids.resize(c.count());
    c.get(r.ids.data(), r.ids.size());
    c.get(&r.score, 1);
  }
}

}  // namespace handwritten

template <class Codec>
void tablio_serialize(benchmark::State& state) {
  const auto& in = records();
  tablio::byte_buffer out;
  for (auto _ : state) {
    out.clear();
    tablio::writer w = tablio::memory_writer(out);
    for (const record& r : in) tablio::encode_to<Codec>(w, r);
    w.close();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
}

template <class Codec>
void tablio_deserialize(benchmark::State& state) {
  tablio::byte_buffer bytes = [] {
    tablio::byte_buffer b;
    tablio::writer w = tablio::memory_writer(b);
    for (const record& r : records()) tablio::encode_to<Codec>(w, r);
    w.close();
    return b;
  }();
  std::vector<record> out(record_count);
  for (auto _ : state) {
    tablio::reader r = tablio::memory_reader(std::string_view(bytes.data(), bytes.size()));
    for (record& rec : out) tablio::decode_from<Codec>(r, rec);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes.size()));
}

void memcpy_serialize(benchmark::State& state) {
  tablio::byte_buffer out;
  for (auto _ : state) {
    handwritten::serialize(records(), out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
}

void memcpy_deserialize(benchmark::State& state) {
  tablio::byte_buffer bytes;
  handwritten::serialize(records(), bytes);
  std::vector<record> out(record_count);
  for (auto _ : state) {
    handwritten::deserialize(bytes, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes.size()));
}

void cereal_serialize(benchmark::State& state) {
  std::ostringstream os;
  for (auto _ : state) {
    os.str({});
    cereal::BinaryOutputArchive ar(os);
    for (const record& r : records()) ar(r);
    benchmark::DoNotOptimize(os.tellp());
  }
}

void cereal_deserialize(benchmark::State& state) {
  std::ostringstream os;
  {
    cereal::BinaryOutputArchive ar(os);
    for (const record& r : records()) ar(r);
  }
  const std::string bytes = os.str();
  std::vector<record> out(record_count);
  for (auto _ : state) {
    std::istringstream is(bytes);
    cereal::BinaryInputArchive ar(is);
    for (record& r : out) ar(r);
    benchmark::DoNotOptimize(out.data());
  }
}

}  // namespace

BENCHMARK(memcpy_serialize)->Name("serialize/memcpy")->Apply(bench::fastest_of_repetitions);
BENCHMARK(tablio_serialize<tablio::raw_little>)
    ->Name("serialize/tablio_raw_little")
    ->Apply(bench::fastest_of_repetitions);
BENCHMARK(tablio_serialize<tablio::kaldi_binary>)
    ->Name("serialize/tablio_kaldi_binary")
    ->Apply(bench::fastest_of_repetitions);
BENCHMARK(cereal_serialize)->Name("serialize/cereal_binary")->Apply(bench::fastest_of_repetitions);
BENCHMARK(memcpy_deserialize)->Name("deserialize/memcpy")->Apply(bench::fastest_of_repetitions);
BENCHMARK(tablio_deserialize<tablio::raw_little>)
    ->Name("deserialize/tablio_raw_little")
    ->Apply(bench::fastest_of_repetitions);
BENCHMARK(tablio_deserialize<tablio::kaldi_binary>)
    ->Name("deserialize/tablio_kaldi_binary")
    ->Apply(bench::fastest_of_repetitions);
BENCHMARK(cereal_deserialize)->Name("deserialize/cereal_binary")->Apply(bench::fastest_of_repetitions);

int main(int argc, char** argv) { return bench::run(argc, argv, "memcpy"); }
