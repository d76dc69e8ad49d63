// std::map and std::unordered_map: a size, then key and value of each entry (a map in
// iteration order; an unordered_map in its own order). A repeated key on input is an error.
#pragma once

#include <tablio/codec/dispatch.hpp>

#include <map>
#include <unordered_map>

TABLIO_BEGIN_NAMESPACE

namespace detail {

template <class Map>
struct map_codec {
  using is_builtin = void;
  using K = typename Map::key_type;
  using V = typename Map::mapped_type;
  template <class C>
  static constexpr std::uint64_t min_size() { return C::min_size_prefix; }
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
        r.fail_at(at, "distinct map keys", "a repeated key");
    }
  }
};

}  // namespace detail

template <class K, class V, class Cmp, class A>
struct builtin_codec<std::map<K, V, Cmp, A>> : detail::map_codec<std::map<K, V, Cmp, A>> {};

template <class K, class V, class H, class E, class A>
struct builtin_codec<std::unordered_map<K, V, H, E, A>>
    : detail::map_codec<std::unordered_map<K, V, H, E, A>> {};

TABLIO_END_NAMESPACE
