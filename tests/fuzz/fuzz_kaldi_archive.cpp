// Kaldi archives of every kind of holder, binary and text: bad input is a tablio::error, and
// what is read writes back to an archive that reads as the same values.
#include <tablio/framing/ark.hpp>
#include <tablio/holder/holders.hpp>
#include <tablio/stream/memory.hpp>
#include <tablio/types/compressed_matrix.hpp>
#include <tablio/types/matrix.hpp>

#include "fuzz_support.hpp"

namespace {

template <class H>
void round_trip(std::string_view bytes) {
  using namespace tablio;
  std::vector<std::pair<std::string, typename H::value_type>> entries;
  bool ok = fuzz::accepts([&] {
    archive_reader archive(memory_reader(bytes, "fuzz"));
    std::string key;
    while (archive.next_key(key)) {
      H h;
      h.read(archive.in());
      entries.emplace_back(key, std::move(h.value()));
    }
  });
  if (!ok || entries.empty()) return;
  std::string out;
  // Kaldi's readers also accept tokens its writers refuse (a token with a control byte): the
  // writer's usage_error ends the round trip there.
  bool written = fuzz::accepts([&] {
    archive_writer w(memory_writer(out));
    for (const auto& [key, value] : entries) {
      w.begin_entry(key);
      H::write(w.out(), true, value);
      w.end_entry();
    }
    w.close();
  });
  if (!written) return;
  // Read back, each value writes the same bytes again (float bits included).
  archive_reader again(memory_reader(out, "again"));
  std::string key;
  for (const auto& [k, value] : entries) {
    fuzz::require(again.next_key(key) && key == k);
    H h;
    h.read(again.in());
    std::string first, second;
    {
      writer w = memory_writer(first);
      H::write(w, true, value);
      w.close();
      writer w2 = memory_writer(second);
      H::write(w2, true, h.value());
      w2.close();
    }
    fuzz::require(first == second);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tablio;
  if (size == 0) return 0;
  std::string_view bytes = fuzz::as_chars(data + 1, size - 1);
  switch (data[0] % 8) {
    case 0:
      round_trip<holder<matrix<float>>>(bytes);
      break;
    case 1:
      round_trip<holder<vector<double>>>(bytes);
      break;
    case 2:
      round_trip<holder<compressed_matrix>>(bytes);
      break;
    case 3:
      round_trip<basic_vector_holder<std::int32_t>>(bytes);
      break;
    case 4:
      round_trip<basic_vector_vector_holder<std::int32_t>>(bytes);
      break;
    case 5:
      round_trip<basic_pair_vector_holder<std::int32_t>>(bytes);
      break;
    case 6:
      round_trip<token_vector_holder>(bytes);
      break;
    default:
      round_trip<wave_holder>(bytes);
      break;
  }
  return 0;
}
