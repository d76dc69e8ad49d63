// std::optional<T>: a bool (present or not), then the value when present.
#pragma once

#include <tablio/codec/dispatch.hpp>

#include <optional>

TABLIO_BEGIN_NAMESPACE

template <class T>
struct builtin_codec<std::optional<T>> {
  using is_builtin = void;
  template <class C>
  static constexpr std::uint64_t min_size() {
    return codec_primitives<C>::template min_value_size<bool>();
  }
  template <class C>
  static void write(writer& w, const std::optional<T>& o) {
    C::write(w, o.has_value());
    if (o) encode_to<C>(w, *o);
  }
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
