// tablio::protobuf: a user's types as protocol buffers messages, so that records outlive the
// struct that wrote them and any language reads them.
//
//   struct utterance { std::string id; std::int32_t speaker = 0; std::vector<float> feats; };
//   byte_buffer b = encode<protobuf>(utterance{...});      // what libprotobuf writes
//   auto u = decode<protobuf, utterance>(b);
//
// An aggregate is a message (Boost.PFR), field number = declaration index + 1, unless the type
// numbers its fields: a static member `tablio_field_numbers` (a std::array of its fields'
// numbers, in declaration order) or a specialization of proto_field_numbers<T>. Renumbering is
// how a removed field's number stays reserved. Field kinds, as protobuf maps them:
//   bool, int32/int64/uint32/uint64 and enums   varint (a negative int32 sign-extended)
//   float, double                               fixed32, fixed64
//   pb::sint<T>, pb::fixed<T>                   sint32/64 (zigzag), fixed32/64 or sfixed32/64
//   std::string, std::vector<std::byte/uint8_t/char>   bytes
//   std::vector<number>                          packed repeated (read packed or not)
//   std::vector<message, string or bytes>        repeated
//   std::optional<T>                             explicit presence: written when set, even 0
//   std::map<K, V>                               map entries, sorted by key
//   std::array<number, N>                        packed repeated of exactly N (checked)
//   a nested aggregate                           a message, merged when it comes twice
//   std::variant<A, B, ...>                      a oneof: its alternatives take consecutive
//                                                numbers (std::monostate first: none set)
//   pb::unknown_fields                           no number: keeps the fields this struct does
//                                                not know, written back after its own
// Writing gives libprotobuf's deterministic serialization: fields in number order, proto3
// scalars equal to 0 (and empty strings, vectors, messages) left out, except a field whose
// default member initializer is not 0 or empty (`int64_t extra = 42`): it is written always,
// so that a 0 reads back as 0 (its schema field is `optional`); a vector or map a message
// lacks reads as empty, whatever its default. Reading skips unknown fields of every
// wire type, leaves absent fields at their default member initializers, keeps the last value
// of a singular field that comes twice, and refuses a wire type that contradicts the field's
// C++ type (packed values, as bytes, where the field is a singular number) with a format_error
// naming the field number, the offset and both types; nesting is bounded (protobuf's 100) and
// every length checked against the message.
#pragma once

#include <tablio/codec/concepts.hpp>
#include <tablio/codec/dispatch.hpp>
#include <tablio/codec/protobuf_wire.hpp>
#include <tablio/core/endian.hpp>
#include <tablio/core/minmax.hpp>

#include <boost/pfr/core.hpp>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

TABLIO_BEGIN_NAMESPACE

namespace pb {
// An integer field written zigzag-encoded (sint32, sint64): small negative numbers stay short.
template <class T>
requires(std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>) struct sint {
  T value{};
  constexpr sint() = default;
  /// Holds v; implicit, so that a T can be assigned to the field.
  constexpr sint(T v) : value(v) {}
  /// The value, wherever a T is wanted.
  constexpr operator T() const { return value; }
  bool operator==(const sint&) const = default;  ///< Whether the values are equal.
};
// An integer field of fixed width (fixed32, fixed64, sfixed32, sfixed64): large values stay
// 4 or 8 bytes.
template <class T>
requires(std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t> ||
         std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t>) struct fixed {
  T value{};
  constexpr fixed() = default;
  /// Holds v; implicit, so that a T can be assigned to the field.
  constexpr fixed(T v) : value(v) {}
  /// The value, wherever a T is wanted.
  constexpr operator T() const { return value; }
  bool operator==(const fixed&) const = default;  ///< Whether the values are equal.
};
// A member of this type keeps the fields of a message that its struct does not know (written
// by a later release) as their bytes, and writes them back after the fields it knows: a
// program built against an older struct copies newer records without losing anything. It
// takes no field number (0 where the struct gives its numbers) and is not in the schema.
struct unknown_fields {
  std::string bytes;                                       // the fields, as they came on the wire
  bool operator==(const unknown_fields&) const = default;  // Whether the bytes are the same.
};
}  // namespace pb

/// Specialize with `static constexpr std::array<std::uint32_t, N> value{...}` to number T's
/// fields (in declaration order) without touching T. Declared only: without it T's numbers are
/// its own `tablio_field_numbers`, or else declaration index + 1.
template <class T>
struct proto_field_numbers;

// The codec tag: encode<protobuf>(v), decode<protobuf, T>(bytes), holder<T, protobuf>.
// A message's encoding does not say where it ends: holders keep it whole as a record, and
// length-prefixed inside an archive (`delimited`).
struct protobuf;

namespace detail::proto {

using protobuf_wire::wire_type;
inline constexpr int max_depth = 100;  // protobuf's own recursion limit

template <class T>
struct is_sint : std::false_type {};
template <class T>
struct is_sint<pb::sint<T>> : std::true_type {};
template <class T>
struct is_fixed : std::false_type {};
template <class T>
struct is_fixed<pb::fixed<T>> : std::true_type {};
template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};
template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
template <class T>
struct is_map : std::false_type {};
template <class K, class V, class C, class A>
struct is_map<std::map<K, V, C, A>> : std::true_type {};
template <class T>
struct is_std_array : std::false_type {};
template <class T, std::size_t N>
struct is_std_array<std::array<T, N>> : std::true_type {};

template <class T>
struct is_variant : std::false_type {};
template <class... A>
struct is_variant<std::variant<A...>> : std::true_type {};

template <class T>
concept byte_like =
    std::is_same_v<T, std::byte> || std::is_same_v<T, std::uint8_t> || std::is_same_v<T, char>;

// Numbers: what a varint or a fixed field holds.
template <class T>
concept scalar =
    (std::is_arithmetic_v<T> && !std::is_same_v<T, long double>) || std::is_enum_v<T> || is_sint<T>::value
    || is_fixed<T>::value;
// Bytes: std::string, and vectors of bytes.
template <class T>
concept bytes_field = std::is_same_v<T, std::string> ||
    (is_vector<T>::value&& byte_like<typename T::value_type>);

template <class T>
concept message = std::is_class_v<T> && !scalar<T> && !bytes_field<T> && !is_vector<T>::value &&
                  !is_optional<T>::value && !is_map<T>::value && !is_std_array<T>::value &&
                  !is_variant<T>::value && !std::is_same_v<T, pb::unknown_fields> &&
                  (detail::reflectable_aggregate<T> || detail::user_customized<protobuf, T>);

// The wire type and protobuf's name of a scalar.
template <scalar T>
constexpr wire_type wire_of() {
  if constexpr (std::is_same_v<T, float>)
    return protobuf_wire::fixed32;
  else if constexpr (std::is_same_v<T, double>)
    return protobuf_wire::fixed64;
  else if constexpr (is_fixed<T>::value)
    return sizeof(T) == 4 ? protobuf_wire::fixed32 : protobuf_wire::fixed64;
  else
    return protobuf_wire::varint;
}
template <scalar T>
constexpr const char* scalar_name() {
  if constexpr (std::is_same_v<T, bool>)
    return "bool";
  else if constexpr (std::is_same_v<T, float>)
    return "float";
  else if constexpr (std::is_same_v<T, double>)
    return "double";
  else if constexpr (is_sint<T>::value)
    return sizeof(T) == 4 ? "sint32" : "sint64";
  else if constexpr (is_fixed<T>::value)
    return std::is_signed_v<decltype(T::value)> ? (sizeof(T) == 4 ? "sfixed32" : "sfixed64")
                                                : (sizeof(T) == 4 ? "fixed32" : "fixed64");
  else if constexpr (std::is_enum_v<T>)
    return "enum";
  else if constexpr (std::is_signed_v<T>)
    return sizeof(T) <= 4 ? "int32" : "int64";
  else
    return sizeof(T) <= 4 ? "uint32" : "uint64";
}
inline const char* wire_name(std::uint32_t w) {
  switch (w) {
    case protobuf_wire::varint:
      return "varint";
    case protobuf_wire::fixed64:
      return "fixed64";
    case protobuf_wire::length_delimited:
      return "length-delimited";
    case protobuf_wire::fixed32:
      return "fixed32";
    case 3:
    case 4:
      return "group";
    default:
      return "unknown";
  }
}

// A varint scalar's 64 bits as protobuf writes them: signed values sign-extended (a negative
// int32 takes 10 bytes), sint zigzag-encoded.
template <scalar T>
constexpr std::uint64_t varint_bits(T v) {
  if constexpr (is_sint<T>::value) {
    using I = decltype(T::value);
    using U = std::make_unsigned_t<I>;
    return static_cast<U>((static_cast<U>(v.value) << 1) ^ static_cast<U>(v.value >> (sizeof(I) * 8 - 1)));
  } else if constexpr (std::is_enum_v<T>) {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::underlying_type_t<T>>(v)));
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? 1 : 0;
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
  } else {
    return static_cast<std::uint64_t>(v);
  }
}
// A varint read into T as protobuf reads it: int32 and enums from the low 32 bits, bool as
// non-zero; narrower C++ types must hold the number (false otherwise).
template <scalar T>
bool from_varint(std::uint64_t bits, T& v) {
  if constexpr (is_sint<T>::value) {
    using I = decltype(T::value);
    using U = std::make_unsigned_t<I>;
    U u = static_cast<U>(bits);
    v.value = static_cast<I>((u >> 1) ^ (~(u & 1) + 1));
    return true;
  } else if constexpr (std::is_same_v<T, bool>) {
    v = bits != 0;
    return true;
  } else if constexpr (std::is_enum_v<T>) {
    using U = std::underlying_type_t<T>;
    U u{};
    if (!from_varint(bits, u)) return false;  // as protobuf reads an enum: an int32
    v = static_cast<T>(u);
    return true;
  } else if constexpr (sizeof(T) == 8) {
    v = static_cast<T>(bits);
    return true;
  } else if constexpr (std::is_signed_v<T>) {
    std::int32_t n = static_cast<std::int32_t>(static_cast<std::uint32_t>(bits));  // int32's truncation
    if (n < std::numeric_limits<T>::min() || n > std::numeric_limits<T>::max()) return false;
    v = static_cast<T>(n);
    return true;
  } else {
    std::uint32_t n = static_cast<std::uint32_t>(bits);  // uint32's truncation
    if (n > std::numeric_limits<T>::max()) return false;
    v = static_cast<T>(n);
    return true;
  }
}

template <scalar T>
constexpr std::size_t fixed_width() {
  return wire_of<T>() == protobuf_wire::fixed32 ? 4 : 8;
}
template <scalar T>
char* put_fixed(char* p, T v) {
  if constexpr (is_fixed<T>::value)
    store<std::endian::little>(p, v.value);
  else
    store<std::endian::little>(p, v);
  return p + sizeof(v);
}
template <scalar T>
void get_fixed(const char* p, T& v) {
  if constexpr (is_fixed<T>::value)
    v.value = load<std::endian::little, decltype(T::value)>(p);
  else
    v = load<std::endian::little, T>(p);
}
// Whether protobuf leaves the scalar out when it has no explicit presence: it is 0 (a float's
// bits all 0: -0.0 is written).
template <scalar T>
constexpr bool is_zero(const T& v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::bit_cast<std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>(v) == 0;
  } else if constexpr (is_sint<T>::value || is_fixed<T>::value) {
    return v.value == 0;
  } else {
    return v == T{};
  }
}
template <scalar T>
std::size_t scalar_size(const T& v) {
  if constexpr (wire_of<T>() == protobuf_wire::varint)
    return protobuf_wire::varint_size(varint_bits(v));
  else
    return fixed_width<T>();
}
template <scalar T>
char* put_scalar(char* p, const T& v) {
  if constexpr (wire_of<T>() == protobuf_wire::varint)
    return protobuf_wire::put_varint(p, varint_bits(v));
  else
    return put_fixed(p, v);
}

inline std::size_t tag_size(std::uint32_t number) {
  return protobuf_wire::varint_size(std::uint64_t{number} << 3);
}
inline char* put_tag(char* p, std::uint32_t number, wire_type w) {
  return protobuf_wire::put_varint(p, (std::uint64_t{number} << 3) | w);
}

template <class T>
std::string_view bytes_of(const T& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size()};
}

// ----- field numbers

template <class T>
constexpr std::size_t field_count() {
  return boost::pfr::tuple_size_v<T>;
}
template <class T, std::size_t I>
using field_type = std::remove_cvref_t<decltype(boost::pfr::get<I>(std::declval<T&>()))>;

// A oneof's alternatives, std::monostate (only first: "none set") aside.
template <class V>
constexpr bool monostate_first = std::is_same_v<std::variant_alternative_t<0, V>, std::monostate>;
template <class V>
constexpr std::size_t first_alternative = monostate_first<V> ? 1 : 0;

// A oneof's alternatives are what a oneof may hold: numbers, bytes and messages; std::monostate,
// if any, first.
template <class V>
constexpr bool oneof_alternatives_valid() {
  return []<std::size_t... I>(std::index_sequence<I...>) {
    using namespace std;
    return ((I == 0 || !is_same_v<variant_alternative_t<I, V>, monostate>)&&...) &&
           ((I < first_alternative<V> || scalar<variant_alternative_t<I, V>> ||
             bytes_field<variant_alternative_t<I, V>> || message<variant_alternative_t<I, V>>)&&...);
  }
  (std::make_index_sequence<std::variant_size_v<V>>{});
}

// How many field numbers a member takes: a oneof one per alternative, unknown fields none.
template <class F>
constexpr std::uint32_t field_width() {
  if constexpr (std::is_same_v<F, pb::unknown_fields>)
    return 0;
  else if constexpr (is_variant<F>::value)
    return static_cast<std::uint32_t>(std::variant_size_v<F> - first_alternative<F>);
  else
    return 1;
}
template <class T>
constexpr auto field_widths() {
  return []<std::size_t... I>(std::index_sequence<I...>) {
    return std::array<std::uint32_t, sizeof...(I)>{field_width<field_type<T, I>>()...};
  }
  (std::make_index_sequence<field_count<T>()>{});
}
// Each member's (first) number: given by the type, or counted in declaration order.
template <class T>
constexpr auto field_numbers() {
  constexpr std::size_t n = field_count<T>();
  constexpr auto widths = field_widths<T>();
  std::array<std::uint32_t, n> numbers{};
  if constexpr (requires { proto_field_numbers<T>::value; }) {
    for (std::size_t i = 0; i < n; ++i) numbers[i] = proto_field_numbers<T>::value[i];
  } else if constexpr (requires { T::tablio_field_numbers; }) {
    for (std::size_t i = 0; i < n; ++i) numbers[i] = static_cast<std::uint32_t>(T::tablio_field_numbers[i]);
  } else {
    std::uint32_t next = 1;
    for (std::size_t i = 0; i < n; ++i) {
      numbers[i] = widths[i] == 0 ? 0 : next;
      next += widths[i];
    }
  }
  return numbers;
}
template <class T>
constexpr bool numbers_given_for_each_field() {
  if constexpr (requires { proto_field_numbers<T>::value; })
    return std::size(proto_field_numbers<T>::value) == field_count<T>();
  else if constexpr (requires { T::tablio_field_numbers; })
    return std::size(T::tablio_field_numbers) == field_count<T>();
  else
    return true;
}
template <class T>
constexpr bool numbers_valid() {
  constexpr auto numbers = field_numbers<T>();
  constexpr auto widths = field_widths<T>();
  std::size_t unknown = 0;
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    if (widths[i] == 0) {  // pb::unknown_fields: no number, and one at most
      if (numbers[i] != 0 || ++unknown > 1) return false;
      continue;
    }
    for (std::uint32_t n = numbers[i]; n < numbers[i] + widths[i]; ++n) {
      if (n < 1 || n > (1u << 29) - 1 || (n >= 19000 && n <= 19999)) return false;
      for (std::size_t j = 0; j < i; ++j)
        if (n >= numbers[j] && n < numbers[j] + widths[j]) return false;
    }
  }
  return true;
}
// The fields in the order of their numbers, which is the order they are written in; unknown
// fields last, as libprotobuf writes them.
template <class T>
constexpr auto write_order() {
  constexpr auto numbers = field_numbers<T>();
  constexpr auto widths = field_widths<T>();
  auto key = [&](std::size_t i) { return widths[i] == 0 ? ~std::uint32_t{0} : numbers[i]; };
  std::array<std::size_t, numbers.size()> order{};
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (std::size_t i = 1; i < order.size(); ++i)  // insertion sort: a handful of fields
    for (std::size_t j = i; j > 0 && key(order[j - 1]) > key(order[j]); --j)
      std::swap(order[j - 1], order[j]);
  return order;
}
// The member that keeps unknown fields, or field_count<T>() when T keeps none.
template <class T>
constexpr std::size_t unknown_member() {
  constexpr auto widths = field_widths<T>();
  for (std::size_t i = 0; i < widths.size(); ++i)
    if (widths[i] == 0) return i;
  return widths.size();
}

// Whether field I of T has a default member initializer other than 0 (an empty string, a
// message of no fields set), which gives it explicit presence: written even when 0, so that
// the 0 reads back as 0 rather than as the default.
template <class T>
const T& defaults() {
  static const T d{};
  return d;
}
template <class T>
std::size_t message_size(const T& v);
template <class T, std::size_t I>
constexpr bool scalar_default_set() {
  T d{};
  if constexpr (scalar<field_type<T, I>>)
    return !is_zero(boost::pfr::get<I>(d));
  else
    return !boost::pfr::get<I>(d).empty();
}
// Known at compile time where T's default is a constant (no std::map in it, say).
template <class T, std::size_t I>
concept constant_default = (scalar<field_type<T, I>> || bytes_field<field_type<T, I>>)&&requires {
  typename std::bool_constant<scalar_default_set<T, I>()>;
};
template <class T, std::size_t I>
bool written_when_zero() {
  using F = field_type<T, I>;
  if constexpr (constant_default<T, I>) {
    return scalar_default_set<T, I>();
  } else if constexpr (scalar<F>) {
    static const bool set = !is_zero(boost::pfr::get<I>(defaults<T>()));
    return set;
  } else if constexpr (bytes_field<F>) {
    static const bool set = !boost::pfr::get<I>(defaults<T>()).empty();
    return set;
  } else if constexpr (message<F>) {
    static const bool set = message_size(boost::pfr::get<I>(defaults<T>())) != 0;
    return set;
  } else {
    return false;
  }
}

// Sets v to T's defaults keeping what its fields hold allocated (a table reader reads every
// record into one value: its vectors keep their capacity).
template <class T>
void reset(T& v);
template <class F>
void reset_field(F& f, const F& d) {
  if constexpr (is_vector<F>::value && !bytes_field<F>) {
    // left as it is: replaced where the message holds it, emptied where not (read_message)
  } else if constexpr (bytes_field<F> || is_map<F>::value) {
    if (d.empty())
      f.clear();
    else
      f = d;
  } else if constexpr (std::is_same_v<F, pb::unknown_fields>) {
    f.bytes.clear();
  } else if constexpr (message<F> && !user_customized<protobuf, F>) {
    reset(f);
    if (message_size(d) != 0) f = d;
  } else {
    f = d;
  }
}
template <class T, std::size_t I>
constexpr field_type<T, I> scalar_default() {
  T d{};
  return boost::pfr::get<I>(d);
}
template <class T, std::size_t I>
void reset_member(T& v) {
  using F = field_type<T, I>;
  if constexpr (constant_default<T, I> && scalar<F>) {
    boost::pfr::get<I>(v) = scalar_default<T, I>();  // a constant: no look at defaults<T>()
  } else if constexpr (constant_default<T, I>) {
    if constexpr (!scalar_default_set<T, I>())
      boost::pfr::get<I>(v).clear();
    else
      boost::pfr::get<I>(v) = boost::pfr::get<I>(defaults<T>());
  } else {
    reset_field(boost::pfr::get<I>(v), boost::pfr::get<I>(defaults<T>()));
  }
}
template <class T>
void reset(T& v) {
  if constexpr (user_customized<protobuf, T>) {
    v = T{};
  } else {
    [&]<std::size_t... I>(std::index_sequence<I...>) { (reset_member<T, I>(v), ...); }
    (std::make_index_sequence<field_count<T>()>{});
  }
}

// A repeated field (vector, map) a message does not hold is empty, whatever its default member
// initializer: protobuf's repeated fields have no default.
template <class F>
void empty_unless_read(F& f, bool read) {
  if constexpr (is_vector<F>::value || is_map<F>::value) {
    if (!read) f.clear();
  }
}

template <class T>
void check_message_type() {
  static_assert(numbers_given_for_each_field<T>(),
                "tablio::protobuf: the field numbers a type gives must number each of its fields");
  static_assert(numbers_valid<T>(),
                "tablio::protobuf: field numbers are distinct (a std::variant takes one per alternative), 1 "
                "to 2^29-1, and not 19000-19999 (protobuf's own); a pb::unknown_fields member (one at most) "
                "is numbered 0");
}

// ----- sizes and writing

template <class T>
char* put_message(char* p, const T& v);

template <class F>
std::size_t value_size(const F& f) {  // a value's bytes after its tag (and length, for messages)
  if constexpr (scalar<F>)
    return scalar_size(f);
  else if constexpr (bytes_field<F>)
    return f.size();
  else
    return message_size(f);
}
template <class F>
std::size_t delimited_size(const F& f) {
  std::size_t n = value_size(f);
  return protobuf_wire::varint_size(n) + n;
}

// Calls use(number, alternative) with a oneof's set alternative and its number (the oneof's
// first number + its place); `none` when none is set.
template <class V, class Use, class R = std::size_t>
R visit_alternative(const V& v, std::uint32_t first_number, Use use, R none = R{}) {
  static_assert(oneof_alternatives_valid<V>(),
                "tablio::protobuf: a std::variant (a oneof) holds numbers, bytes or messages, and "
                "std::monostate only first");
  constexpr std::size_t skip = first_alternative<V>;
  if (v.valueless_by_exception()) return none;
  return std::visit(
      [&]<class A>(const A& a) -> R {
        if constexpr (std::is_same_v<A, std::monostate>)
          return none;
        else
          return use(first_number + static_cast<std::uint32_t>(v.index() - skip), a);
      },
      v);
}

// The bytes field `number` of value f takes, tag included; `always`: written even when 0/empty.
template <class F>
TABLIO_ALWAYS_INLINE std::size_t field_size(std::uint32_t number, const F& f, bool always) {
  const std::size_t tag = tag_size(number);
  if constexpr (scalar<F>) {
    return always || !is_zero(f) ? tag + scalar_size(f) : 0;
  } else if constexpr (bytes_field<F>) {
    return always || !f.empty() ? tag + protobuf_wire::varint_size(f.size()) + f.size() : 0;
  } else if constexpr (is_optional<F>::value) {
    return f ? field_size(number, *f, true) : 0;
  } else if constexpr (is_variant<F>::value) {
    return visit_alternative(f, number,
                             [](std::uint32_t n, const auto& a) { return field_size(n, a, true); });
  } else if constexpr (std::is_same_v<F, pb::unknown_fields>) {
    return f.bytes.size();
  } else if constexpr (is_vector<F>::value || is_std_array<F>::value) {
    using E = typename F::value_type;
    if (f.empty()) return 0;
    if constexpr (scalar<E>) {
      std::size_t body = 0;
      if constexpr (wire_of<E>() == protobuf_wire::varint)
        for (const E& e : f) body += scalar_size(e);
      else
        body = f.size() * fixed_width<E>();
      return tag + protobuf_wire::varint_size(body) + body;
    } else {
      std::size_t n = 0;
      for (const E& e : f) n += tag + delimited_size(e);
      return n;
    }
  } else if constexpr (is_map<F>::value) {
    std::size_t n = 0;
    for (const auto& [key, value] : f) {
      std::size_t entry = field_size(1, key, true) + field_size(2, value, true);
      n += tag + protobuf_wire::varint_size(entry) + entry;
    }
    return n;
  } else {
    static_assert(message<F>, "tablio::protobuf: this field's type has no protobuf encoding");
    std::size_t n = message_size(f);
    return always || n != 0 ? tag + protobuf_wire::varint_size(n) + n : 0;
  }
}

// The bytes of a type whose protobuf encoding its own code writes (codec_traits<protobuf, T>,
// tablio_write/tablio_read): a message of its making.
template <class T>
byte_buffer own_encoding(const T& v) {
  return encode<protobuf>(v);
}

// Bytes with their length before them.
inline char* put_bytes(char* p, std::string_view b) {
  p = protobuf_wire::put_varint(p, b.size());
  if (!b.empty()) std::memcpy(p, b.data(), b.size());
  return p + b.size();
}
template <class F>
char* put_delimited(char* p, const F& f) {
  if constexpr (bytes_field<F>) {
    return put_bytes(p, bytes_of(f));
  } else if constexpr (user_customized<protobuf, F>) {
    return put_bytes(p, own_encoding(f).view());
  } else {
    p = protobuf_wire::put_varint(p, message_size(f));
    return put_message(p, f);
  }
}

template <class F>
TABLIO_ALWAYS_INLINE char* put_field(char* p, std::uint32_t number, const F& f, bool always) {
  if constexpr (scalar<F>) {
    if (!always && is_zero(f)) return p;
    p = put_tag(p, number, wire_of<F>());
    return put_scalar(p, f);
  } else if constexpr (bytes_field<F>) {
    if (!always && f.empty()) return p;
    p = put_tag(p, number, protobuf_wire::length_delimited);
    return put_delimited(p, f);
  } else if constexpr (is_optional<F>::value) {
    return f ? put_field(p, number, *f, true) : p;
  } else if constexpr (is_variant<F>::value) {
    return visit_alternative(
        f, number, [p](std::uint32_t n, const auto& a) { return put_field(p, n, a, true); }, p);
  } else if constexpr (std::is_same_v<F, pb::unknown_fields>) {
    if (!f.bytes.empty()) std::memcpy(p, f.bytes.data(), f.bytes.size());
    return p + f.bytes.size();
  } else if constexpr (is_vector<F>::value || is_std_array<F>::value) {
    using E = typename F::value_type;
    if (f.empty()) return p;
    if constexpr (scalar<E>) {
      p = put_tag(p, number, protobuf_wire::length_delimited);
      if constexpr (wire_of<E>() == protobuf_wire::varint) {
        std::size_t body = 0;
        for (const E& e : f) body += scalar_size(e);
        p = protobuf_wire::put_varint(p, body);
        for (const E& e : f) p = protobuf_wire::put_varint(p, varint_bits(e));
      } else {
        const std::size_t body = f.size() * fixed_width<E>();
        p = protobuf_wire::put_varint(p, body);
        if constexpr (std::is_floating_point_v<E> && std::endian::native == std::endian::little) {
          std::memcpy(p, f.data(), body);  // the machine's floats are protobuf's
          p += body;
        } else {
          for (const E& e : f) p = put_fixed(p, e);
        }
      }
      return p;
    } else {
      for (const E& e : f) {
        p = put_tag(p, number, protobuf_wire::length_delimited);
        p = put_delimited(p, e);
      }
      return p;
    }
  } else if constexpr (is_map<F>::value) {
    for (const auto& [key, value] : f) {
      p = put_tag(p, number, protobuf_wire::length_delimited);
      p = protobuf_wire::put_varint(p, field_size(1, key, true) + field_size(2, value, true));
      p = put_field(p, 1, key, true);
      p = put_field(p, 2, value, true);
    }
    return p;
  } else if constexpr (user_customized<protobuf, F>) {
    const byte_buffer b = own_encoding(f);  // once here, as once for the size
    if (!always && b.size() == 0) return p;
    p = put_tag(p, number, protobuf_wire::length_delimited);
    return put_bytes(p, b.view());
  } else {
    std::size_t n = message_size(f);
    if (!always && n == 0) return p;
    p = put_tag(p, number, protobuf_wire::length_delimited);
    p = protobuf_wire::put_varint(p, n);
    return put_message(p, f);
  }
}

template <class T>
std::size_t message_size(const T& v) {
  if constexpr (user_customized<protobuf, T>) {
    return own_encoding(v).size();
  } else {
    check_message_type<T>();
    constexpr auto numbers = field_numbers<T>();
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return (std::size_t{0} + ... +
              field_size(numbers[I], boost::pfr::get<I>(v), written_when_zero<T, I>()));
    }
    (std::make_index_sequence<numbers.size()>{});
  }
}
// An aggregate's fields (a type with its own encoding is written by put_field and
// put_delimited, from one encoding of it).
template <class T>
char* put_message(char* p, const T& v) {
  static_assert(!user_customized<protobuf, T>);
  constexpr auto numbers = field_numbers<T>();
  constexpr auto order = write_order<T>();
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    ((p = put_field(p, numbers[order[K]], boost::pfr::get<order[K]>(v), written_when_zero<T, order[K]>())),
     ...);
  }
  (std::make_index_sequence<order.size()>{});
  return p;
}

// ----- reading

[[noreturn]] TABLIO_COLD inline void wrong_wire(const protobuf_wire::cursor& in, const char* tag_start,
                                                std::uint32_t number, const char* type, std::uint32_t wire) {
  throw_format_error(*in.name, static_cast<std::uint64_t>(tag_start - in.begin), {},
                     {"field ", decimal(number), " (", type, ") in its wire type"},
                     {"wire type ", decimal(wire), " (", wire_name(wire), ")"});
}
[[noreturn]] TABLIO_COLD inline void unknown_wire(const protobuf_wire::cursor& in, const char* tag_start,
                                                  std::uint32_t number, std::uint32_t wire) {
  throw_format_error(*in.name, static_cast<std::uint64_t>(tag_start - in.begin), {},
                     {"field ", decimal(number), " (not the struct's) in a wire type to skip"},
                     {"wire type ", decimal(wire), " (", wire_name(wire), ")"});
}
[[noreturn]] TABLIO_COLD inline void out_of_range(const protobuf_wire::cursor& in, const char* at,
                                                  std::uint32_t number, const char* type) {
  throw_format_error(*in.name, static_cast<std::uint64_t>(at - in.begin), {},
                     {"field ", decimal(number), ": a number its C++ type (", type, ") holds"},
                     {"a larger one"});
}

template <class T>
void read_message(protobuf_wire::cursor in, T& v, int depth, bool merging = false);

template <class E>
void copy_fixed(E* to, const char* p, std::size_t n) {
  if constexpr (std::is_floating_point_v<E> && std::endian::native == std::endian::little) {
    if (n != 0) std::memcpy(to, p, n * sizeof(E));  // the machine's floats are protobuf's
  } else {
    for (std::size_t i = 0; i < n; ++i) get_fixed(p + i * fixed_width<E>(), to[i]);
  }
}
// Sets f's values from index `at` on to the n fixed-width values at p. Those f has already
// (the record before's, in a value read again) are overwritten; the rest are appended in
// steps of 16 KiB, zero-filled (a vector cannot grow otherwise) and overwritten while in the
// L1 cache: one pass over memory, not two.
template <class E, class V>
void assign_fixed(V& f, std::size_t at, const char* p, std::size_t n) {
  if (f.size() > at + n) f.resize(at + n);
  const std::size_t have = f.size() - at;
  copy_fixed(f.data() + at, p, have);
  f.reserve(at + n);
  constexpr std::size_t step = 16384 / sizeof(E);
  for (std::size_t done = have; done < n; done += step) {
    const std::size_t k = detail::min_of(step, n - done);
    f.resize(f.size() + k);
    copy_fixed(f.data() + at + done, p + done * fixed_width<E>(), k);
  }
}

// Reads one scalar of wire type `wire` (already checked) at the cursor.
template <scalar F>
TABLIO_ALWAYS_INLINE void read_scalar(protobuf_wire::cursor& in, F& f, std::uint32_t number) {
  const char* at = in.p;
  if constexpr (wire_of<F>() == protobuf_wire::varint) {
    if (!from_varint(in.get_varint(), f)) out_of_range(in, at, number, scalar_name<F>());
  } else {
    in.need(fixed_width<F>());
    get_fixed(in.p, f);
    in.p += fixed_width<F>();
  }
}

// Reads the field whose tag (number, wire) started at tag_start into f: one value of a
// singular field (the last wins), or more of a repeated one.
template <class F>
void read_field(protobuf_wire::cursor& in, const char* tag_start, std::uint32_t number, std::uint32_t wire,
                F& f, int depth, std::uint32_t& count) {
  if constexpr (scalar<F>) {
    // (Packed values are a repeated field's alone: libprotobuf reads none into a singular one.)
    if (wire != wire_of<F>()) wrong_wire(in, tag_start, number, scalar_name<F>(), wire);
    read_scalar(in, f, number);
  } else if constexpr (bytes_field<F>) {
    if (wire != protobuf_wire::length_delimited) wrong_wire(in, tag_start, number, "bytes", wire);
    std::string_view b = in.get_bytes();
    using E = typename F::value_type;
    f.assign(reinterpret_cast<const E*>(b.data()), reinterpret_cast<const E*>(b.data() + b.size()));
  } else if constexpr (is_optional<F>::value) {
    if (!f) {
      f.emplace();
      count = 0;  // a message in it is new, not merged into
    }
    read_field(in, tag_start, number, wire, *f, depth, count);
  } else if constexpr (is_vector<F>::value || is_std_array<F>::value) {
    using E = typename F::value_type;
    // A vector's first values in this message replace what it held (the record before's, whose
    // storage is reused); later ones are appended.
    [[maybe_unused]] bool replacing = false;
    if constexpr (is_vector<F>::value) {
      replacing = count++ == 0;
      // (packed fixed-width values overwrite the record before's in place: assign_fixed)
      bool in_place = false;
      if constexpr (scalar<E>)
        in_place = wire_of<E>() != protobuf_wire::varint && wire == protobuf_wire::length_delimited;
      if (replacing && !in_place) f.clear();
    }
    auto append = [&]() -> E& {
      if constexpr (is_vector<F>::value) {
        return f.emplace_back();
      } else {
        if (count >= f.size())
          throw_format_error(*in.name, static_cast<std::uint64_t>(tag_start - in.begin), {},
                             {"field ", decimal(number), ": ", decimal(f.size()), " values (a std::array)"},
                             {"more"});
        return f[count++];
      }
    };
    if constexpr (scalar<E>) {
      if (wire == protobuf_wire::length_delimited) {  // packed
        protobuf_wire::cursor packed = in.sub(in.get_bytes());
        if constexpr (wire_of<E>() != protobuf_wire::varint) {
          const auto bytes = static_cast<std::size_t>(packed.end - packed.p);
          if (bytes % fixed_width<E>() != 0)
            packed.fail(
                {"packed field ", decimal(number), " of whole ", decimal(fixed_width<E>()), "-byte values"},
                {decimal(bytes), " bytes"});
          if constexpr (is_vector<F>::value) {
            assign_fixed<E>(f, replacing ? 0 : f.size(), packed.p, bytes / fixed_width<E>());
            return;
          }
        }
        if constexpr (is_vector<F>::value) f.reserve(f.size() + protobuf_wire::count_varints(packed));
        while (!packed.done()) read_scalar(packed, append(), number);
      } else if (wire == wire_of<E>()) {
        read_scalar(in, append(), number);
      } else {
        wrong_wire(in, tag_start, number, scalar_name<E>(), wire);
      }
    } else {
      if (wire != protobuf_wire::length_delimited)
        wrong_wire(in, tag_start, number, bytes_field<E> ? "bytes" : "message", wire);
      E& e = append();
      if constexpr (bytes_field<E>) {
        std::string_view b = in.get_bytes();
        using B = typename E::value_type;
        e.assign(reinterpret_cast<const B*>(b.data()), reinterpret_cast<const B*>(b.data() + b.size()));
      } else {
        read_message(in.sub(in.get_bytes()), e, depth + 1);
      }
    }
  } else if constexpr (is_map<F>::value) {
    if (wire != protobuf_wire::length_delimited) wrong_wire(in, tag_start, number, "map entry", wire);
    protobuf_wire::cursor entry = in.sub(in.get_bytes());
    typename F::key_type key{};
    typename F::mapped_type value{};
    std::uint32_t unused = 0;
    while (!entry.done()) {
      const char* at = entry.p;
      std::uint64_t tag = entry.get_varint();
      std::uint32_t w = static_cast<std::uint32_t>(tag & 7);
      if (tag >> 3 == 1)
        read_field(entry, at, number, w, key, depth + 1, unused);
      else if (tag >> 3 == 2)
        read_field(entry, at, number, w, value, depth + 1, unused);
      else
        entry.skip(w);
    }
    f.insert_or_assign(std::move(key), std::move(value));
  } else {
    if (wire != protobuf_wire::length_delimited) wrong_wire(in, tag_start, number, "message", wire);
    // Present: from the message's defaults, not the field's initializer; when it comes again,
    // merged into what came before.
    const bool merging = count++ != 0;
    if (!merging) reset(f);
    read_message(in.sub(in.get_bytes()), f, depth + 1, merging);
  }
}

template <std::size_t K, class V>
void read_alternative(protobuf_wire::cursor& in, const char* tag_start, std::uint32_t number,
                      std::uint32_t wire, V& v, int depth) {
  if constexpr (!std::is_same_v<std::variant_alternative_t<K, V>, std::monostate>) {
    std::uint32_t count = v.index() == K ? 1 : 0;  // 1: a message set before is merged into
    if (count == 0) v.template emplace<K>();
    read_field(in, tag_start, number, wire, std::get<K>(v), depth, count);
  }
}

// Reads field `number` of a member whose first number is `first`: a oneof's alternative is
// set by its number (a message merged into the one set before, as protobuf does).
template <class F>
void read_member(protobuf_wire::cursor& in, const char* tag_start, std::uint32_t first, std::uint32_t number,
                 std::uint32_t wire, F& f, int depth, std::uint32_t& count) {
  if constexpr (is_variant<F>::value) {
    const std::size_t k = first_alternative<F> + (number - first);
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      (void)((k == K && (read_alternative<K>(in, tag_start, number, wire, f, depth), true)) || ...);
    }
    (std::make_index_sequence<std::variant_size_v<F>>{});
  } else {
    read_field(in, tag_start, number, wire, f, depth, count);
  }
}
// A std::array field holds exactly its size of values, or none (it was not written).
template <class F>
void check_array_count(const protobuf_wire::cursor& in, std::uint32_t number, const F&, std::uint32_t count) {
  if constexpr (is_std_array<F>::value) {
    if (count != 0 && count != std::tuple_size_v<F>)
      throw_format_error(
          *in.name, static_cast<std::uint64_t>(in.end - in.begin), {},
          {"field ", decimal(number), ": ", decimal(std::tuple_size_v<F>), " values (a std::array)"},
          {decimal(count)});
  }
}

template <class T>
void read_message(protobuf_wire::cursor in, T& v, int depth, bool merging) {
  if (depth > max_depth) in.fail({"messages nested at most ", decimal(max_depth), " deep"}, {"deeper"});
  if constexpr (user_customized<protobuf, T>) {
    reader r = memory_reader(std::string_view(in.p, static_cast<std::size_t>(in.end - in.p)), *in.name);
    decode_from<protobuf>(r, v);
  } else {
    check_message_type<T>();
    constexpr auto numbers = field_numbers<T>();
    constexpr auto widths = field_widths<T>();
    constexpr std::size_t n = numbers.size();
    // Per field: values read into a std::array, occurrences of a vector or message (merged
    // into the one read before, vectors appended to, from the second on).
    std::array<std::uint32_t, n == 0 ? 1 : n> counts{};
    if (merging) [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((counts[I] = !is_std_array<field_type<T, I>>::value), ...);
      }
    (std::make_index_sequence<n>{});
    std::array<bool, n == 0 ? 1 : n> seen{};
    while (!in.done()) {
      const char* tag_start = in.p;
      const std::uint64_t tag = in.get_varint();
      const std::uint64_t number = tag >> 3;
      const std::uint32_t wire = static_cast<std::uint32_t>(tag & 7);
      if (number == 0 || number > (1u << 29) - 1)
        in.fail({"a field number from 1 to 2^29-1"}, {decimal(number)});
      const bool known = [&]<std::size_t... I>(std::index_sequence<I...>) {
        return ((number - numbers[I] < widths[I] &&
                 (read_member(in, tag_start, numbers[I], static_cast<std::uint32_t>(number), wire,
                              boost::pfr::get<I>(v), depth, counts[I]),
                  seen[I] = true)) ||
                ...);
      }
      (std::make_index_sequence<n>{});
      if (known) continue;
      if (wire != protobuf_wire::varint && wire != protobuf_wire::fixed64 &&
          wire != protobuf_wire::length_delimited && wire != protobuf_wire::fixed32)  // groups, or none
        unknown_wire(in, tag_start, static_cast<std::uint32_t>(number), wire);
      if constexpr (constexpr std::size_t u = unknown_member<T>(); u < n)
        in.keep_unknown(tag_start, wire, boost::pfr::get<u>(v).bytes);
      else
        in.skip(wire);
    }
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (check_array_count(in, numbers[I], boost::pfr::get<I>(v), counts[I]), ...);
      if (!merging) (empty_unless_read(boost::pfr::get<I>(v), seen[I]), ...);
    }
    (std::make_index_sequence<n>{});
  }
}

}  // namespace detail::proto

struct protobuf : detail::codec_defaults<protobuf> {
  static constexpr bool binary = true;
  // A message's bytes do not say where it ends: a holder keeps it whole as a record, and with
  // its length before it inside an archive.
  static constexpr bool delimited = false;

  // Bare numbers and sizes (encode<protobuf>(42)), as protobuf writes a field's value: varints,
  // and floats in 4 or 8 bytes.
  template <class T>
  requires std::is_arithmetic_v<T>
  static void write(writer& w, T v) {
    char* p = w.reserve(10);
    w.advance(static_cast<std::size_t>(detail::proto::put_scalar(p, v) - p));
  }
  // The Codec concept: reads a number written by write, as protobuf reads a field of type T; a
  // varint cut short or over 10 bytes, or a number T cannot hold, throws format_error.
  template <class T>
  requires std::is_arithmetic_v<T>
  static void read(reader& r, T& v) {
    char bytes[10];
    std::size_t n = 0;
    if constexpr (detail::proto::wire_of<T>() == protobuf_wire::varint) {
      do {
        if (n == sizeof bytes) r.fail({"a varint of at most 10 bytes"}, {"more"});
        if (!r.ensure(1)) r.fail({"a varint"}, {"end of input"});
        bytes[n++] = static_cast<char>(r.get());
      } while (static_cast<unsigned char>(bytes[n - 1]) & 0x80);
    } else {
      n = detail::proto::fixed_width<T>();
      r.read_exact(bytes, n, "bytes of a number");
    }
    const std::string& name = r.name();
    protobuf_wire::cursor in{bytes, bytes + n, bytes, &name};
    detail::proto::read_scalar(in, v, 0);
  }
  // The Codec concept: a count as a varint.
  static void write_size(writer& w, std::uint64_t n) { write(w, n); }
  // The Codec concept: a count written by write_size.
  static std::uint64_t read_size(reader& r) {
    std::uint64_t n;
    read(r, n);
    return n;
  }

  // A message: an aggregate, field by field, as its numbers say.
  template <class T>
  static void write_aggregate(writer& w, const T& v) {
    const std::size_t size = detail::proto::message_size(v);
    char* p = w.reserve(size);
    detail::proto::put_message(p, v);
    w.advance(size);
  }
  // A message from the rest of the input (a record, or bytes), into a T of its defaults.
  template <class T>
  static void read_aggregate(reader& r, T& v) {
    if (std::optional<std::uint64_t> rest = r.remaining(); rest && r.fill() && r.window().size() >= *rest) {
      // All of it in view (a record in memory): read in place.
      parse(std::string_view(r.window().data(), static_cast<std::size_t>(*rest)), v, r.name());
      r.advance(static_cast<std::size_t>(*rest));
      return;
    }
    std::string bytes = rest_of(r);
    parse(bytes, v, r.name());
  }
  // A message from bytes, into a T of its defaults.
  template <class T>
  static void parse(std::string_view bytes, T& v, const std::string& name) {
    detail::proto::reset(v);
    detail::proto::read_message(
        protobuf_wire::cursor{bytes.data(), bytes.data() + bytes.size(), bytes.data(), &name}, v, 0);
  }

 private:
  static std::string rest_of(reader& r) {
    std::string out;
    while (r.ensure(1)) {
      std::span<const char> w = r.window();
      if (out.size() + w.size() > r.limits().max_record_bytes)
        r.fail({"a message of at most ", decimal(r.limits().max_record_bytes),
                " bytes (limits::max_record_bytes)"},
               {"more"});
      out.append(w.data(), w.size());
      r.advance(w.size());
    }
    return out;
  }
};

TABLIO_END_NAMESPACE
