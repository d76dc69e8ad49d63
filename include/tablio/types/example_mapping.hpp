// A user's aggregate as a tf.Example: each field one feature, named explicitly.
//
//   struct digit { std::int64_t label; std::vector<float> image; std::string source; };
//   template <> struct tablio::example_field_names<digit> {
//     static constexpr std::array names{"label", "image", "source"};  // in field order
//   };
//   tablio::example ex = tablio::to_example(digit{7, pixels, "mnist"});
//   digit d = tablio::from_example<digit>(ex);
//
// Fields map to features by type: integers, bool and enums to an int64 list of one value;
// float and double to a float list of one (a double is narrowed to float, the only floating
// type tf.Example has); std::string to a bytes list of one; std::vector and std::array of
// those to lists (an array must find exactly its size); std::optional<T> to T, or to no
// feature at all when empty. Reading checks each feature's presence, kind and count, and
// says which one is wrong. Boost.PFR finds the fields; Boost 1.84's PFR also knows their
// names, and with it (BOOST_PFR_CORE_NAME_ENABLED) the names may be left out.
#pragma once

#include <tablio/core/error.hpp>
#include <tablio/types/example.hpp>

#include <boost/pfr/core.hpp>
#if __has_include(<boost/pfr/core_name.hpp>)
#include <boost/pfr/core_name.hpp>
#endif

#include <array>
#include <concepts>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

TABLIO_BEGIN_NAMESPACE

/// Specialize with `static constexpr std::array names{"a", "b", ...};`, one name per field of
/// T in declaration order: the feature names to_example and from_example use.
template <class T>
struct example_field_names;

namespace detail {

template <class T>
concept has_example_field_names = requires {
  example_field_names<T>::names;
};

template <class T, std::size_t I>
std::string_view example_field_name() {
  if constexpr (has_example_field_names<T>) {
    static_assert(std::size(example_field_names<T>::names) == boost::pfr::tuple_size_v<T>,
                  "example_field_names<T>::names must name every field of T, in order");
    return example_field_names<T>::names[I];
  } else {
#if defined(BOOST_PFR_CORE_NAME_ENABLED) && BOOST_PFR_CORE_NAME_ENABLED
    return boost::pfr::get_name<I, T>();
#else
    static_assert(has_example_field_names<T>,
                  "name T's fields for tf.Example: specialize tablio::example_field_names<T> "
                  "(Boost.PFR before 1.84 cannot tell field names)");
    return {};
#endif
  }
}

template <class T>
inline constexpr bool is_std_vector = false;
template <class T, class A>
inline constexpr bool is_std_vector<std::vector<T, A>> = true;
template <class T>
inline constexpr bool is_std_array = false;
template <class T, std::size_t N>
inline constexpr bool is_std_array<std::array<T, N>> = true;
template <class T>
inline constexpr bool is_std_optional = false;
template <class T>
inline constexpr bool is_std_optional<std::optional<T>> = true;

template <class T>
concept example_integer = (std::integral<T> || std::is_enum_v<T>);

// The feature list type a scalar of type T goes into.
template <class T>
using example_list_of = std::conditional_t<
    example_integer<T>, std::vector<std::int64_t>,
    std::conditional_t<std::floating_point<T>, std::vector<float>,
                       std::conditional_t<std::same_as<T, std::string>, std::vector<std::string>, void>>>;

template <class T>
concept example_scalar = !std::same_as<example_list_of<T>, void>;

template <class T>
auto to_feature_value(const T& v) {
  if constexpr (example_integer<T>)
    return static_cast<std::int64_t>(v);
  else if constexpr (std::floating_point<T>)
    return static_cast<float>(v);
  else
    return v;
}

template <class T>
void put_example_field(example& ex, std::string_view name, const T& v) {
  if constexpr (is_std_optional<T>) {
    if (v) put_example_field(ex, name, *v);
  } else if constexpr (example_scalar<T>) {
    ex.features[std::string(name)] = example_list_of<T>{to_feature_value(v)};
  } else if constexpr (is_std_vector<T> || is_std_array<T>) {
    using element = typename T::value_type;
    static_assert(example_scalar<element>, "tf.Example lists hold integers, floats or strings");
    example_list_of<element> list;
    list.reserve(v.size());
    for (const auto& x : v) list.push_back(to_feature_value(x));
    ex.features[std::string(name)] = std::move(list);
  } else {
    static_assert(
        example_scalar<T>,
        "a tf.Example feature is an integer, float, string, or a vector, array or optional of them");
  }
}

[[noreturn]] inline void bad_example_field(const std::string& where, std::string_view name,
                                           std::string expected, std::string found) {
  throw_format_error(where, std::nullopt, {}, {"feature '", name, "' as ", expected}, {found});
}

// A feature's value as field type T: an int64 must fit T (a bool is 0 or 1; a uint64 takes
// any, as the two's complement it was written as), or it is a format_error naming the
// feature and the value, never a silently narrowed one.
template <class T, class V>
T example_value(V v, const std::string& where, std::string_view name, std::size_t item) {
  if constexpr (example_integer<T>) {
    using U =
        typename std::conditional_t<std::is_enum_v<T>, std::underlying_type<T>, std::type_identity<T>>::type;
    constexpr bool any = std::is_unsigned_v<U> && sizeof(U) == sizeof(std::int64_t);
    constexpr auto least = static_cast<std::int64_t>(std::numeric_limits<U>::min());
    constexpr auto most = any ? std::numeric_limits<std::int64_t>::max()
                              : static_cast<std::int64_t>(std::numeric_limits<U>::max());
    if (!any && (v < least || v > most)) [[unlikely]] {
      std::string range = std::same_as<U, bool>
                              ? std::string("0 or 1")
                              : "values in [" + std::to_string(least) + ", " + std::to_string(most) + "]";
      bad_example_field(where, name, range, std::to_string(v) + " (value " + std::to_string(item) + ")");
    }
    return static_cast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

template <class T>
const example_list_of<T>& example_field_list(const example& ex, std::string_view name,
                                             const std::string& where) {
  auto it = ex.features.find(std::string(name));
  if (it == ex.features.end()) bad_example_field(where, name, "a list", "no such feature");
  auto* list = std::get_if<example_list_of<T>>(&it->second);
  if (!list) {
    static constexpr const char* kinds[] = {"a feature with no kind", "a bytes list", "a float list",
                                            "an int64 list"};
    bad_example_field(where, name,
                      example_integer<T>       ? "an int64 list"
                      : std::floating_point<T> ? "a float list"
                                               : "a bytes list",
                      kinds[it->second.index()]);
  }
  return *list;
}

template <class T>
void get_example_field(const example& ex, std::string_view name, T& out, const std::string& where) {
  if constexpr (is_std_optional<T>) {
    if (ex.features.count(std::string(name)) == 0) {
      out.reset();
      return;
    }
    get_example_field(ex, name, out.emplace(), where);
  } else if constexpr (example_scalar<T>) {
    const auto& list = example_field_list<T>(ex, name, where);
    if (list.size() != 1)
      bad_example_field(where, name, "one value", std::to_string(list.size()) + " values");
    out = example_value<T>(list[0], where, name, 0);
  } else if constexpr (is_std_vector<T>) {
    using element = typename T::value_type;
    const auto& list = example_field_list<element>(ex, name, where);
    if constexpr (std::same_as<element, typename std::remove_cvref_t<decltype(list)>::value_type>) {
      out.assign(list.begin(), list.end());
    } else {
      out.clear();
      out.reserve(list.size());
      for (std::size_t i = 0; i < list.size(); ++i)
        out.push_back(example_value<element>(list[i], where, name, i));
    }
  } else if constexpr (is_std_array<T>) {
    using element = typename T::value_type;
    const auto& list = example_field_list<element>(ex, name, where);
    if (list.size() != out.size())
      bad_example_field(where, name, std::to_string(out.size()) + " values",
                        std::to_string(list.size()) + " values");
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = example_value<element>(list[i], where, name, i);
  }
}

}  // namespace detail

// The Example of v: one feature per field.
template <class T>
requires std::is_aggregate_v<T> example to_example(const T& v) {
  example ex;
  ex.features_present = true;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (detail::put_example_field(ex, detail::example_field_name<T, I>(), boost::pfr::get<I>(v)), ...);
  }
  (std::make_index_sequence<boost::pfr::tuple_size_v<T>>{});
  return ex;
}

// Fills out from ex; `where` (a file, a record) appears in errors. Features without a field
// are ignored.
template <class T>
requires std::is_aggregate_v<T>
void from_example(const example& ex, T& out, const std::string& where = "<example>") {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (detail::get_example_field(ex, detail::example_field_name<T, I>(), boost::pfr::get<I>(out), where), ...);
  }
  (std::make_index_sequence<boost::pfr::tuple_size_v<T>>{});
}

template <class T>
requires std::is_aggregate_v<T> T from_example(const example& ex, const std::string& where = "<example>") {
  T out{};
  from_example(ex, out, where);
  return out;
}

TABLIO_END_NAMESPACE
