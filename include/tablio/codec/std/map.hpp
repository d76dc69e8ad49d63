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

template <class Map>
struct builtin_codec<Map, std::enable_if_t<map_like<Map>>> {
  using is_builtin = void;
  using K = typename Map::key_type;
  using V = typename Map::mapped_type;
  template <class C>
  static constexpr std::uint64_t min_size() {
    return codec_primitives<C>::min_size_prefix;
  }
  template <class C>
  static void write(writer& w, const Map& m) {
    C::write_size(w, m.size());
    for (const auto& [k, v] : m) {
      encode_to<C>(w, k);
      encode_to<C>(w, v);
    }
  }
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
