// std::optional<T>: a bool (present or not), then the value when present.
#pragma once

#include <tablio/codec/dispatch.hpp>

#include <optional>

TABLIO_BEGIN_NAMESPACE

// The built-in codec of std::optional<T> (step 4 of codec/concepts.hpp): a bool, then the value
// when there is one.
template <class T>
struct builtin_codec<std::optional<T>> {
  using is_builtin = void;
  // The fewest bytes codec C writes for one: the bool of an empty optional.
  template <class C>
  static constexpr std::uint64_t min_size() {
    return codec_primitives<C>::template min_value_size<bool>();
  }
  // Writes whether o holds a value, then the value.
  template <class C>
  static void write(writer& w, const std::optional<T>& o) {
    C::write(w, o.has_value());
    if (o) encode_to<C>(w, *o);
  }
  // Resets o when the bool read is false; otherwise reads the value into o, into the value it
  // already holds if any (default-constructed first if not).
  template <class C>
  static void read(reader& r, std::optional<T>& o) {
    bool present = false;
    C::read(r, present);
    if (!present) {
      o.reset();
      return;
    }
    if (!o) o.emplace();
    decode_from<C>(r, *o);
  }
};

TABLIO_END_NAMESPACE
