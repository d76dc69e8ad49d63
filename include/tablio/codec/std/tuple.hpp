// std::pair and std::tuple: their elements in order, nothing else.
#pragma once

#include <tablio/codec/dispatch.hpp>

#include <tuple>
#include <utility>

TABLIO_BEGIN_NAMESPACE

// The built-in codec of std::tuple (step 4 of codec/concepts.hpp): its elements in order, with
// no count.
template <class... T>
struct builtin_codec<std::tuple<T...>> {
  using is_builtin = void;
  // The fewest bytes codec C writes for one: the sum of its elements' fewest.
  template <class C>
  static constexpr std::uint64_t min_size() {
    return (std::uint64_t{0} + ... + min_encoded_size<C, T>());
  }
  // Writes each element of t in order.
  template <class C>
  static void write(writer& w, const std::tuple<T...>& t) {
    std::apply([&](const auto&... e) { (encode_to<C>(w, e), ...); }, t);
  }
  // Reads each element of t in order.
  template <class C>
  static void read(reader& r, std::tuple<T...>& t) {
    std::apply([&](auto&... e) { (decode_from<C>(r, e), ...); }, t);
  }
};

// The built-in codec of std::pair (step 4 of codec/concepts.hpp): first, then second.
template <class A, class B>
struct builtin_codec<std::pair<A, B>> {
  using is_builtin = void;
  // The fewest bytes codec C writes for one: first's fewest plus second's.
  template <class C>
  static constexpr std::uint64_t min_size() {
    return min_encoded_size<C, A>() + min_encoded_size<C, B>();
  }
  // Writes p.first, then p.second.
  template <class C>
  static void write(writer& w, const std::pair<A, B>& p) {
    encode_to<C>(w, p.first);
    encode_to<C>(w, p.second);
  }
  // Reads p.first, then p.second.
  template <class C>
  static void read(reader& r, std::pair<A, B>& p) {
    decode_from<C>(r, p.first);
    decode_from<C>(r, p.second);
  }
};

TABLIO_END_NAMESPACE
