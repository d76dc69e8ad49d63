// Maps: std::map, std::unordered_map and any map-like container (key_type, mapped_type,
// emplace returning an insertion flag): a size, then key and value of each entry in
// iteration order. A repeated key on input is an error. Matching the shape rather than
// naming std::map spares every includer <map> and <unordered_map>.
#pragma once

#include <tablio/codec/dispatch.hpp>

#include <type_traits>
#include <utility>

TABLIO_BEGIN_NAMESPACE

template <class M>
concept map_like = requires(M& m, const M& cm, typename M::key_type k, typename M::mapped_type v) {
  { cm.size() } -> std::convertible_to<std::size_t>;
  cm.begin();
  cm.end();
  m.clear();
  { m.emplace(std::move(k), std::move(v)).second } -> std::convertible_to<bool>;
};

// The built-in codec of map-like containers (step 4 of codec/concepts.hpp): a count, then each
// entry's key and value.
template <class Map>
struct builtin_codec<Map, std::enable_if_t<map_like<Map>>> {
  using is_builtin = void;
  using K = typename Map::key_type;
  using V = typename Map::mapped_type;
  // The fewest bytes codec C writes for one: the count of an empty map.
  template <class C>
  static constexpr std::uint64_t min_size() {
    return codec_primitives<C>::min_size_prefix;
  }
  // Writes m.size(), then each key and value in m's iteration order (an unordered map's order
  // is its own, so equal maps may give different bytes).
  template <class C>
  static void write(writer& w, const Map& m) {
    C::write_size(w, m.size());
    for (const auto& [k, v] : m) {
      encode_to<C>(w, k);
      encode_to<C>(w, v);
    }
  }
  // Replaces m's entries with those read. The count is checked against the input before any
  // entry is read; a repeated key throws format_error at that entry.
  template <class C>
  static void read(reader& r, Map& m) {
    std::uint64_t n = C::read_size(r);
    r.check_available(n, min_encoded_size<C, K>() + min_encoded_size<C, V>(), "map entries");
    m.clear();
    for (std::uint64_t i = 0; i < n; ++i) {
      std::uint64_t at = r.tell();
      K k{};
      decode_from<C>(r, k);
      V v{};
      decode_from<C>(r, v);
      if (!m.emplace(std::move(k), std::move(v)).second)
        r.fail_at(at, {"distinct map keys"}, {"a repeated key"});
    }
  }
};

TABLIO_END_NAMESPACE
