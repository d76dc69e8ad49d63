// The Codec concept and the customization point that decides how a value of type T is
// encoded by codec C. The order, first match wins:
//   1. a specialization codec_traits<C, T> with static write(writer&, const T&) and
//      read(reader&, T&) — full control, for third-party types;
//   2. members  void tablio_write(writer&, C) const / void tablio_read(reader&, C), or
//      ADL free functions tablio_write(writer&, C, const T&) / tablio_read(reader&, C, T&);
//   3. Kaldi-style members Write(std::ostream&, bool binary) const / Read(std::istream&, bool),
//      run on the writer/reader through zero-copy streambufs;
//   4. built-ins: arithmetic types and enums (by the codec itself), std::string, vector,
//      array, pair, tuple, optional, variant, map, unordered_map (codec/std/*.hpp);
//   5. aggregates, field by field, through Boost.PFR: no user code at all.
#pragma once

#include <tablio/core/minmax.hpp>
#include <tablio/stream/reader.hpp>
#include <tablio/stream/writer.hpp>

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

TABLIO_BEGIN_NAMESPACE

// A codec is a tag type naming an encoding. It provides static primitives for arithmetic
// values and container sizes; `binary` says whether Kaldi-style Write/Read members are
// called in binary mode. Everything else the library needs from a codec has a default (see
// codec_primitives below).
template <class C>
concept codec = requires(writer& w, reader& r, std::uint64_t n, int& i) {
  { C::binary } -> std::convertible_to<bool>;
  C::write(w, 0);
  C::read(r, i);
  C::write_size(w, n);
  { C::read_size(r) } -> std::same_as<std::uint64_t>;
};

namespace detail {

// Resizes v to n elements (n already checked against the input) and fills them with
// read_array(pointer, count). When the input size is unknown, v grows in bounded steps as
// data actually arrives, so a lying count cannot force a large allocation. When it is
// known, v is resized once, reusing its capacity (no clear(): no needless zero-filling).
template <class Vector, class ReadArray>
void read_sized_array(reader& r, Vector& v, std::uint64_t n, ReadArray read_array) {
  using T = typename Vector::value_type;
  std::size_t first = r.reserve_hint(n, sizeof(T));
  if (first >= n) {
    v.resize(static_cast<std::size_t>(n));
    read_array(v.data(), v.size());
    return;
  }
  v.clear();
  std::size_t step = detail::max_of<std::size_t>(1, first);
  while (v.size() < n) {
    std::size_t before = v.size();
    std::size_t take = static_cast<std::size_t>(detail::min_of<std::uint64_t>(step, n - before));
    v.resize(before + take);
    read_array(v.data() + before, take);
    step = v.size();  // geometric growth once data has arrived
  }
}

// The defaults of codec_primitives: arrays element by element, strings as a size then the
// bytes. The built-in codecs inherit them, so that each has every primitive as a member.
template <class Codec>
struct codec_defaults {
  template <class T>
  requires std::is_arithmetic_v<T>
  static void write_array(writer& w, const T* data, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) Codec::write(w, data[i]);
  }
  template <class T>
  requires std::is_arithmetic_v<T>
  static void read_array(reader& r, T* data, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) Codec::read(r, data[i]);
  }
  static void write_string(writer& w, std::string_view s) {
    Codec::write_size(w, s.size());
    w.write(s.data(), s.size());
  }
  static void read_string(reader& r, std::string& s) {
    std::uint64_t n = Codec::read_size(r);
    r.check_available(n, 1, "string bytes");
    s.resize(static_cast<std::size_t>(n));
    r.read_exact(s.data(), s.size(), "string bytes");
  }
};

}  // namespace detail

// What the library calls on a codec: the codec's own primitive when it defines one, otherwise
// a default built on the concept's, so a codec that only meets the concept encodes strings,
// containers and optionals too. A codec defines any of these to do better:
//   min_value_size<T>()          the fewest bytes of an arithmetic T (default 1)
//   min_size_prefix              the fewest bytes of a container's count (default 1)
//   min_string_size              the fewest bytes of a string (default min_size_prefix)
//   write_array / read_array     runs of arithmetic values (default: one by one)
//   write_string / read_string   strings (default: the size, then the bytes)
// The minimums bound what a count read from the input may claim; they must not overstate.
template <codec C>
struct codec_primitives {
  // The fewest bytes C writes for an arithmetic T: C's own min_value_size<T>(), else 1.
  template <class T>
  static constexpr std::uint64_t min_value_size() {
    if constexpr (requires { C::template min_value_size<T>(); })
      return C::template min_value_size<T>();
    else
      return 1;
  }
  static constexpr std::uint64_t min_size_prefix = [] {
    if constexpr (requires { C::min_size_prefix; })
      return std::uint64_t{C::min_size_prefix};
    else
      return std::uint64_t{1};
  }();
  static constexpr std::uint64_t min_string_size = [] {
    if constexpr (requires { C::min_string_size; })
      return std::uint64_t{C::min_string_size};
    else
      return min_size_prefix;
  }();

  // Writes n arithmetic values: C's own write_array, else C::write on each.
  template <class T>
  requires std::is_arithmetic_v<T>
  static void write_array(writer& w, const T* data, std::size_t n) {
    if constexpr (requires { C::write_array(w, data, n); })
      C::write_array(w, data, n);
    else
      detail::codec_defaults<C>::write_array(w, data, n);
  }
  // Reads n arithmetic values into data: C's own read_array, else C::read on each.
  template <class T>
  requires std::is_arithmetic_v<T>
  static void read_array(reader& r, T* data, std::size_t n) {
    if constexpr (requires { C::read_array(r, data, n); })
      C::read_array(r, data, n);
    else
      detail::codec_defaults<C>::read_array(r, data, n);
  }
  // Writes a string: C's own write_string, else C's size and then the bytes.
  static void write_string(writer& w, std::string_view s) {
    if constexpr (requires { C::write_string(w, s); })
      C::write_string(w, s);
    else
      detail::codec_defaults<C>::write_string(w, s);
  }
  // Reads a string into s: C's own read_string, else a size (checked against the input before
  // s grows) and the bytes.
  static void read_string(reader& r, std::string& s) {
    if constexpr (requires { C::read_string(r, s); })
      C::read_string(r, s);
    else
      detail::codec_defaults<C>::read_string(r, s);
  }
};

/// Specialize for full control over how codec C encodes T (step 1 above), with static
/// `write(writer&, const T&)` and `read(reader&, T&)`: the way for a type one cannot change.
/// Declared only: no T has one unless it is specialized.
template <class C, class T>
struct codec_traits;

/// Built-in support for standard types (step 4): specialized in the headers of codec/std, each
/// with `min_size`, `write` and `read` templates taking the codec.
template <class T, class Enable = void>
struct builtin_codec;

TABLIO_END_NAMESPACE
