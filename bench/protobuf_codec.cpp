// tablio::protobuf against libprotobuf's generated code on the same messages (arena off and
// on), and against tablio's positional raw<little> on the same structs: an utterance (an id, a
// speaker, a 400x80 float matrix packed, its shape, 50 labels, a transcript) and a small
// message (six scalars and a short string); and the floor for the utterance, a copy of its
// bytes. Encoding writes into a buffer kept across messages; decoding reads into a value kept
// across messages, as a table reader does.
#include "ratio_reporter.hpp"

#include <tablio/codec/codec.hpp>
#include <tablio/codec/protobuf.hpp>

#include <google/protobuf/arena.h>

#include <cstring>
#include <random>

#include "bench_messages.pb.h"

namespace {

struct utterance {
  std::string id;
  std::int32_t speaker = 0;
  std::vector<float> feats;
  std::vector<std::int32_t> shape;
  std::vector<std::int32_t> labels;
  std::optional<std::string> transcript;
};
struct small {
  std::int32_t a = 0;
  std::int64_t b = 0;
  std::uint32_t c = 0;
  bool d = false;
  float e = 0;
  double f = 0;
  std::string name;
};

const utterance& an_utterance() {
  static const utterance u = [] {
    std::mt19937 rng(3);
    std::normal_distribution<float> normal;
    utterance x{"spk0042-utt000917",           42,
                std::vector<float>(400 * 80),  {400, 80},
                std::vector<std::int32_t>(50), "the quick brown fox"};
    for (float& v : x.feats) v = normal(rng);
    for (auto& l : x.labels) l = static_cast<std::int32_t>(rng() % 3000);
    return x;
  }();
  return u;
}
const small& a_small() {
  static const small s{-7, 1234567890123, 77, true, 0.25f, 3.5, "name-001"};
  return s;
}

crosscheck::Utterance peer(const utterance& u) {
  crosscheck::Utterance m;
  m.set_id(u.id);
  m.set_speaker(u.speaker);
  m.mutable_feats()->Add(u.feats.begin(), u.feats.end());
  m.mutable_shape()->Add(u.shape.begin(), u.shape.end());
  m.mutable_labels()->Add(u.labels.begin(), u.labels.end());
  if (u.transcript) m.set_transcript(*u.transcript);
  return m;
}
crosscheck::Small peer(const small& s) {
  crosscheck::Small m;
  m.set_a(s.a);
  m.set_b(s.b);
  m.set_c(s.c);
  m.set_d(s.d);
  m.set_e(s.e);
  m.set_f(s.f);
  m.set_name(s.name);
  return m;
}

// ----- encoding
template <class T>
void encode_tablio(benchmark::State& state, const T& v) {
  std::string out;
  for (auto _ : state) {
    out.resize(tablio::detail::proto::message_size(v));
    tablio::detail::proto::put_message(out.data(), v);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
}
template <class T>
void encode_raw(benchmark::State& state, const T& v) {
  tablio::byte_buffer out;
  for (auto _ : state) {
    out.clear();
    tablio::writer w = tablio::memory_writer(out);
    tablio::encode_to<tablio::raw_little>(w, v);
    w.close();
    benchmark::DoNotOptimize(out.data());
  }
}
template <class M>
void encode_libprotobuf(benchmark::State& state, const M& m) {
  std::string out;
  for (auto _ : state) {
    out.resize(m.ByteSizeLong());
    m.SerializeWithCachedSizesToArray(reinterpret_cast<std::uint8_t*>(out.data()));
    benchmark::DoNotOptimize(out.data());
  }
}

// ----- decoding
template <class T>
void decode_tablio(benchmark::State& state, const T& v) {
  const std::string bytes(tablio::encode<tablio::protobuf>(v).view());
  const std::string name = "bench";
  T into;
  for (auto _ : state) {
    tablio::protobuf::parse(bytes, into, name);
    benchmark::DoNotOptimize(&into);
  }
}
template <class T>
void decode_raw(benchmark::State& state, const T& v) {
  const tablio::byte_buffer bytes = tablio::encode<tablio::raw_little>(v);
  T into;
  for (auto _ : state) {
    tablio::reader r = tablio::memory_reader(bytes.view());
    tablio::decode_from<tablio::raw_little>(r, into);
    benchmark::DoNotOptimize(&into);
  }
}
template <class M>
void decode_libprotobuf(benchmark::State& state, const M& m) {
  const std::string bytes = m.SerializeAsString();
  M into;
  for (auto _ : state) {
    into.ParseFromString(bytes);
    benchmark::DoNotOptimize(&into);
  }
}
template <class M>
void decode_libprotobuf_arena(benchmark::State& state, const M& m) {
  const std::string bytes = m.SerializeAsString();
  for (auto _ : state) {
    google::protobuf::Arena arena;
    M* into = google::protobuf::Arena::CreateMessage<M>(&arena);
    into->ParseFromString(bytes);
    benchmark::DoNotOptimize(into);
  }
}

// ----- the floor: copying the message's bytes, which every encoder and decoder of its
// 128 KB of packed floats does at least once
void copy_bytes(benchmark::State& state, const std::string& bytes) {
  std::string out(bytes.size(), '\0');
  for (auto _ : state) {
    std::memcpy(out.data(), bytes.data(), bytes.size());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
}
std::string utterance_bytes() { return std::string(tablio::encode<tablio::protobuf>(an_utterance()).view()); }

#define TABLIO_BENCH(name, fn, ...) \
  BENCHMARK_CAPTURE(fn, x, __VA_ARGS__)->Name(name)->Apply(bench::fastest_of_repetitions)

TABLIO_BENCH("encode_utterance/libprotobuf", encode_libprotobuf, peer(an_utterance()));
TABLIO_BENCH("encode_utterance/tablio_protobuf", encode_tablio, an_utterance());
TABLIO_BENCH("encode_utterance/tablio_raw", encode_raw, an_utterance());
TABLIO_BENCH("encode_utterance/floor_memcpy", copy_bytes, utterance_bytes());
TABLIO_BENCH("decode_utterance/libprotobuf", decode_libprotobuf, peer(an_utterance()));
TABLIO_BENCH("decode_utterance/arena_libprotobuf", decode_libprotobuf_arena, peer(an_utterance()));
TABLIO_BENCH("decode_utterance/tablio_protobuf", decode_tablio, an_utterance());
TABLIO_BENCH("decode_utterance/tablio_raw", decode_raw, an_utterance());
TABLIO_BENCH("decode_utterance/floor_memcpy", copy_bytes, utterance_bytes());
TABLIO_BENCH("encode_small/libprotobuf", encode_libprotobuf, peer(a_small()));
TABLIO_BENCH("encode_small/tablio_protobuf", encode_tablio, a_small());
TABLIO_BENCH("encode_small/tablio_raw", encode_raw, a_small());
TABLIO_BENCH("decode_small/libprotobuf", decode_libprotobuf, peer(a_small()));
TABLIO_BENCH("decode_small/arena_libprotobuf", decode_libprotobuf_arena, peer(a_small()));
TABLIO_BENCH("decode_small/tablio_protobuf", decode_tablio, a_small());
TABLIO_BENCH("decode_small/tablio_raw", decode_raw, a_small());

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  bench::ratio_reporter reporter("libprotobuf");
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
}
