// std::variant<Ts...>: the index of the alternative it holds (a uint32), then that value;
// std::monostate is nothing. An index that names no alternative is a format_error.
#pragma once

#include <tablio/codec/dispatch.hpp>

#include <cstdint>
#include <utility>
#include <variant>

TABLIO_BEGIN_NAMESPACE

// The built-in codec of std::monostate (step 4 of codec/concepts.hpp): no bytes at all, so a
// variant's empty alternative is its index alone.
template <>
struct builtin_codec<std::monostate> {
  using is_builtin = void;
  // The fewest bytes of one: none.
  template <class C>
  static constexpr std::uint64_t min_size() {
    return 0;
  }
  // Writes nothing.
  template <class C>
  static void write(writer&, std::monostate) {}
  // Reads nothing.
  template <class C>
  static void read(reader&, std::monostate&) {}
};

// The built-in codec of std::variant (step 4 of codec/concepts.hpp): the index of the
// alternative held, as a uint32, then its value.
template <class... Ts>
struct builtin_codec<std::variant<Ts...>> {
  using is_builtin = void;
  // The fewest bytes codec C writes for one: the index alone.
  template <class C>
  static constexpr std::uint64_t min_size() {
    return codec_primitives<C>::template min_value_size<std::uint32_t>();
  }
  // Writes v's index and value; throws usage_error for a variant left valueless by an exception.
  template <class C>
  static void write(writer& w, const std::variant<Ts...>& v) {
    if (v.valueless_by_exception())
      throw_usage_error({"a std::variant left valueless by an exception has no value to write"});
    C::write(w, static_cast<std::uint32_t>(v.index()));
    std::visit([&w](const auto& value) { encode_to<C>(w, value); }, v);
  }
  // Reads an index, then that alternative's value into v: into the value v holds when it holds
  // that alternative, else into a default-constructed one. An index with no alternative throws
  // format_error.
  template <class C>
  static void read(reader& r, std::variant<Ts...>& v) {
    const std::uint64_t at = r.tell();
    std::uint32_t index = 0;
    C::read(r, index);
    if (index >= sizeof...(Ts))
      r.fail_at(
          at, {"the index of one of the variant's ", decimal(std::uint64_t{sizeof...(Ts)}), " alternatives"},
          {"index ", decimal(std::uint64_t{index})});
    read_alternative<C>(r, v, index, std::index_sequence_for<Ts...>{});
  }

 private:
  template <class C, std::size_t... I>
  static void read_alternative(reader& r, std::variant<Ts...>& v, std::uint32_t index,
                               std::index_sequence<I...>) {
    (void)((I == index && (read_as<C, I>(r, v), true)) || ...);
  }
  template <class C, std::size_t I>
  static void read_as(reader& r, std::variant<Ts...>& v) {
    static_assert(
        std::is_default_constructible_v<std::variant_alternative_t<I, std::variant<Ts...>>>,
        "tablio reads a std::variant's alternative into one it made: each needs a default constructor");
    if (v.index() != I) v.template emplace<I>();
    decode_from<C>(r, std::get<I>(v));
  }
};

TABLIO_END_NAMESPACE
