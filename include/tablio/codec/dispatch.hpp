// encode_to / decode_from: the one entry point that applies the customization order of
// codec/concepts.hpp to any type, plus encode()/decode() to and from memory.
#pragma once

#include <tablio/codec/concepts.hpp>
#include <tablio/core/minmax.hpp>
#include <tablio/stream/memory.hpp>

#include <boost/pfr/core.hpp>

#include <iosfwd>
#include <span>
#include <string_view>
#include <utility>

TABLIO_BEGIN_NAMESPACE

namespace detail {

template <class C, class T>
concept has_codec_traits = requires(writer& w, reader& r, const T& cv, T& v) {
  codec_traits<C, T>::write(w, cv);
  codec_traits<C, T>::read(r, v);
};

template <class C, class T>
concept has_codec_members = requires(writer& w, reader& r, const T& cv, T& v) {
  cv.tablio_write(w, C{});
  v.tablio_read(r, C{});
};

template <class C, class T>
concept has_codec_adl = requires(writer& w, reader& r, const T& cv, T& v) {
  tablio_write(w, C{}, cv);
  tablio_read(r, C{}, v);
};

template <class T>
concept has_builtin_codec = requires {
  typename builtin_codec<T>::is_builtin;
};

template <class C, class T>
concept user_customized = has_codec_traits<C, T> || has_codec_members<C, T> || has_codec_adl<C, T>;

template <class T>
concept reflectable_aggregate =
    std::is_aggregate_v<T> && std::is_class_v<T> && !std::is_array_v<T> && !has_builtin_codec<T>;

}  // namespace detail

// Kaldi-style classes: Write(std::ostream&, bool binary) const and Read(std::istream&, bool).
template <class T>
concept kaldi_object = requires(std::ostream& os, std::istream& is, const T& cv, T& v, bool binary) {
  cv.Write(os, binary);
  v.Read(is, binary);
};

// Runs Kaldi-style Write/Read members on a writer/reader. Defined in
// codec/kaldi_object.hpp, which brings in `<istream>` and `<ostream>`: only code that uses
// Kaldi-style classes pays for them.
template <class T, class Enable = void>
struct kaldi_object_bridge {
  static_assert(sizeof(T) == 0,
                "tablio: this type has Kaldi-style Write/Read members; include "
                "<tablio/codec/kaldi_object.hpp> (or <tablio/tablio.hpp>) to serialize it");
};

template <class C, class T>
void encode_to(writer& w, const T& v);
template <class C, class T>
void decode_from(reader& r, T& v);

// A lower bound on the bytes codec C needs for one T: what a count of T is checked against
// before anything is allocated.
template <class C, class T>
constexpr std::uint64_t min_encoded_size() {
  if constexpr (detail::user_customized<C, T> || kaldi_object<T>) {
    return 1;
  } else if constexpr (std::is_arithmetic_v<T>) {
    return codec_primitives<C>::template min_value_size<T>();
  } else if constexpr (std::is_enum_v<T>) {
    return codec_primitives<C>::template min_value_size<std::underlying_type_t<T>>();
  } else if constexpr (detail::has_builtin_codec<T>) {
    return detail::max_of<std::uint64_t>(1, builtin_codec<T>::template min_size<C>());
  } else if constexpr (detail::reflectable_aggregate<T>) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return detail::max_of<std::uint64_t>(
          1, (std::uint64_t{0} + ... + min_encoded_size<C, boost::pfr::tuple_element_t<I, T>>()));
    }
    (std::make_index_sequence<boost::pfr::tuple_size_v<T>>{});
  } else {
    return 1;
  }
}

// Writes v to w as codec C encodes a T: by the first of the five ways of codec/concepts.hpp
// that T has. A type with none of them fails to compile, with a message saying so.
template <class C, class T>
void encode_to(writer& w, const T& v) {
  if constexpr (detail::has_codec_traits<C, T>) {
    codec_traits<C, T>::write(w, v);
  } else if constexpr (detail::has_codec_members<C, T>) {
    v.tablio_write(w, C{});
  } else if constexpr (detail::has_codec_adl<C, T>) {
    tablio_write(w, C{}, v);
  } else if constexpr (kaldi_object<T>) {
    kaldi_object_bridge<T>::write(w, v, C::binary);
  } else if constexpr (std::is_arithmetic_v<T>) {
    C::write(w, v);
  } else if constexpr (std::is_enum_v<T>) {
    C::write(w, static_cast<std::underlying_type_t<T>>(v));
  } else if constexpr (detail::has_builtin_codec<T>) {
    builtin_codec<T>::template write<C>(w, v);
  } else if constexpr (detail::reflectable_aggregate<T> && requires { C::write_aggregate(w, v); }) {
    C::write_aggregate(w, v);  // a codec of messages (protobuf), not of fields in a row
  } else if constexpr (detail::reflectable_aggregate<T>) {
    boost::pfr::for_each_field(v, [&](const auto& field) { encode_to<C>(w, field); });
  } else {
    static_assert(sizeof(T) == 0,
                  "tablio: this type is not serializable with this codec; see docs/customization.md "
                  "(codec_traits, tablio_write/tablio_read, Write/Read members, std types, aggregates)");
  }
}

// Reads a T written by encode_to<C> into v, chosen the same way. Malformed or cut input throws
// format_error naming the input and the offset, and may leave v partly read.
template <class C, class T>
void decode_from(reader& r, T& v) {
  if constexpr (detail::has_codec_traits<C, T>) {
    codec_traits<C, T>::read(r, v);
  } else if constexpr (detail::has_codec_members<C, T>) {
    v.tablio_read(r, C{});
  } else if constexpr (detail::has_codec_adl<C, T>) {
    tablio_read(r, C{}, v);
  } else if constexpr (kaldi_object<T>) {
    kaldi_object_bridge<T>::read(r, v, C::binary);
  } else if constexpr (std::is_arithmetic_v<T>) {
    C::read(r, v);
  } else if constexpr (std::is_enum_v<T>) {
    std::underlying_type_t<T> u;
    C::read(r, u);
    v = static_cast<T>(u);
  } else if constexpr (detail::has_builtin_codec<T>) {
    builtin_codec<T>::template read<C>(r, v);
  } else if constexpr (detail::reflectable_aggregate<T> && requires { C::read_aggregate(r, v); }) {
    C::read_aggregate(r, v);
  } else if constexpr (detail::reflectable_aggregate<T>) {
    boost::pfr::for_each_field(v, [&](auto& field) { decode_from<C>(r, field); });
  } else {
    static_assert(sizeof(T) == 0,
                  "tablio: this type is not serializable with this codec; see docs/customization.md");
  }
}

// The same, into a value-initialized T that it returns.
template <class C, class T>
T decode_from(reader& r) {
  T v{};
  decode_from<C>(r, v);
  return v;
}

// Encodes one value into a fresh byte vector.
template <class C, class T>
byte_buffer encode(const T& v) {
  byte_buffer out;
  {
    writer w = memory_writer(out);
    encode_to<C>(w, v);
    w.close();
  }
  return out;
}

// Decodes one value from bytes; trailing bytes are an error.
template <class C, class T>
T decode(std::string_view bytes, const limits& lim = default_limits) {
  reader r = memory_reader(bytes, "<memory>", lim);
  T v = decode_from<C, T>(r);
  if constexpr (!C::binary) r.skip_whitespace();  // text values end in a separator
  if (!r.at_end()) r.fail({"end of input after the value"}, {decimal(*r.remaining()), " more bytes"});
  return v;
}
// The same for any contiguous bytes (byte_buffer, std::vector<char>, std::span<const char>).
template <class C, class T, class Bytes>
requires(!std::convertible_to<const Bytes&, std::string_view> &&
         std::constructible_from<std::span<const char>, const Bytes&>) T
    decode(const Bytes& bytes, const limits& lim = default_limits) {
  std::span<const char> s(bytes);
  return decode<C, T>(std::string_view(s.data(), s.size()), lim);
}

namespace detail {

// Reads n elements into a sequence container after checking n against the input.
template <class C, class Container>
void read_elements(reader& r, Container& out, std::uint64_t n) {
  using T = typename Container::value_type;
  r.check_available(n, min_encoded_size<C, T>(), "elements");
  if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool> && requires { out.data(); }) {
    read_sized_array(r, out, n, [&](T* p, std::size_t k) { codec_primitives<C>::read_array(r, p, k); });
  } else {
    out.clear();
    if constexpr (requires { out.reserve(std::size_t{}); }) out.reserve(r.reserve_hint(n, sizeof(T)));
    for (std::uint64_t i = 0; i < n; ++i) {
      T e{};
      decode_from<C>(r, e);
      out.push_back(std::move(e));
    }
  }
}

}  // namespace detail

TABLIO_END_NAMESPACE
