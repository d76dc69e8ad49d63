// The .proto schema of what tablio::protobuf writes for a type: proto_schema<T>() gives the
// proto3 text of T's message and of the messages it nests, so that protoc makes readers of the
// records in any language.
//
// A schema needs the fields' names: with Boost.PFR 1.84 and later, the fields' own; otherwise
// (Debian's 1.81) a static member `tablio_field_names` (a std::array of std::string_view, in
// declaration order) or a specialization of proto_field_names<T>. A message is named by a
// static member `tablio_message_name`, a specialization of proto_message_name<T>, or else its
// type's name without namespaces. A type whose fields have no names is a static_assert here,
// and only here: it encodes without them.
#pragma once

#include <tablio/codec/protobuf.hpp>
#include <tablio/core/config.hpp>

#if __has_include(<boost/pfr/core_name.hpp>)
#include <boost/pfr/core_name.hpp>
#endif

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

TABLIO_BEGIN_NAMESPACE

/// Specialize with `static constexpr std::array<std::string_view, N> value{...}`: T's field
/// names in declaration order, where Boost.PFR cannot tell them.
template <class T>
struct proto_field_names;
/// Specialize with `static constexpr std::string_view value`: the name of T's message.
template <class T>
struct proto_message_name;

namespace detail::proto {

template <class T>
constexpr bool names_given = requires {
  proto_field_names<T>::value;
}
|| requires { T::tablio_field_names; };

#if defined(BOOST_PFR_CORE_NAME_ENABLED) && BOOST_PFR_CORE_NAME_ENABLED
template <class T>
constexpr bool has_names = true;
#else
template <class T>
constexpr bool has_names = names_given<T>;
#endif

template <class T>
constexpr bool names_cover_fields() {
  if constexpr (requires { proto_field_names<T>::value; })
    return std::size(proto_field_names<T>::value) == field_count<T>();
  else if constexpr (requires { T::tablio_field_names; })
    return std::size(T::tablio_field_names) == field_count<T>();
  else
    return true;
}

template <class T, std::size_t I>
constexpr std::string_view field_name() {
  if constexpr (requires { proto_field_names<T>::value; })
    return proto_field_names<T>::value[I];
  else if constexpr (requires { T::tablio_field_names; })
    return T::tablio_field_names[I];
#if defined(BOOST_PFR_CORE_NAME_ENABLED) && BOOST_PFR_CORE_NAME_ENABLED
  else
    return boost::pfr::get_name<I, T>();
#endif
}

// The type type_name's signature names as its argument, as GCC and Clang spell it ("... [with
// T = ns::point]", "... [T = ns::point]") or MSVC ("... type_name<struct ns::point>(void)").
inline std::string_view type_in_signature(std::string_view f) noexcept {
  if (std::size_t at = f.find("T = "); at != std::string_view::npos) {
    f.remove_prefix(at + 4);
    return f.substr(0, f.find_first_of(";]"));
  }
  constexpr std::string_view function = "type_name<";
  std::size_t begin = f.find(function), end = f.rfind(">(");
  if (begin == std::string_view::npos || end == std::string_view::npos || end < begin) return f;
  f = f.substr(begin + function.size(), end - begin - function.size());
  for (std::string_view kind : {"struct ", "class ", "enum ", "union "})
    if (f.starts_with(kind)) f.remove_prefix(kind.size());
  while (f.ends_with(' ')) f.remove_suffix(1);
  return f;
}

// T's name as the compiler spells it, without namespaces; characters a protobuf name cannot
// hold (a template's) become '_'.
template <class T>
std::string type_name() {
  std::string_view full = type_in_signature(TABLIO_FUNCTION_SIGNATURE);
  std::size_t depth = 0, last = 0;
  for (std::size_t i = 0; i < full.size(); ++i) {  // the last "::" outside template arguments
    if (full[i] == '<') ++depth;
    if (full[i] == '>') --depth;
    if (depth == 0 && full[i] == ':' && i + 1 < full.size() && full[i + 1] == ':') last = i + 2;
  }
  std::string name(full.substr(last));
  for (char& c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) c = '_';
  while (!name.empty() && name.back() == '_') name.pop_back();
  return name;
}
template <class T>
std::string message_name() {
  if constexpr (requires { proto_message_name<T>::value; })
    return std::string(proto_message_name<T>::value);
  else if constexpr (requires { T::tablio_message_name; })
    return std::string(T::tablio_message_name);
  else
    return type_name<T>();
}

// Builds a schema: each message once, the nested ones after the message that holds them.
class schema_builder {
 public:
  template <class T>
  void add() {
    static_assert(
        has_names<T>,
        "tablio::proto_schema: this type's fields have no names here (Boost.PFR before 1.84): give "
        "them as a static member `static constexpr std::array<std::string_view, N> tablio_field_names` "
        "or a specialization of tablio::proto_field_names<T>");
    static_assert(names_cover_fields<T>(),
                  "tablio::proto_schema: the field names a type gives must name each of its fields, in "
                  "declaration order (a pb::unknown_fields member too)");
    check_message_type<T>();
    const std::string name = message_name<T>();
    for (const std::string& done : names_)
      if (done == name) return;
    names_.push_back(name);
    std::vector<void (*)(schema_builder&)> nested;
    std::string body = "message " + name + " {\n";
    constexpr auto numbers = field_numbers<T>();
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (member_lines<field_type<T, I>>(body, field_name<T, I>(), numbers[I], written_when_zero<T, I>(),
                                      nested),
       ...);
    }
    (std::make_index_sequence<numbers.size()>{});
    out_ += (out_.empty() ? "" : "\n") + body + "}\n";
    for (auto add_nested : nested) add_nested(*this);
  }
  const std::string& text() const noexcept { return out_; }

 private:
  template <class F>
  static std::string value_type(std::vector<void (*)(schema_builder&)>& nested) {
    if constexpr (std::is_enum_v<F>) {
      return "int32";
    } else if constexpr (scalar<F>) {
      return scalar_name<F>();
    } else if constexpr (bytes_field<F>) {
      return "bytes";
    } else {
      static_assert(
          message<F>,
          "tablio::proto_schema: a repeated, optional or map field holds numbers, bytes or messages");
      nested.push_back([](schema_builder& b) { b.add<F>(); });
      return message_name<F>();
    }
  }
  template <class K>
  static std::string key_type() {
    if constexpr (std::is_same_v<K, std::string>) {
      return "string";  // a map key cannot be bytes: string keys are UTF-8 for other readers
    } else {
      static_assert(scalar<K> && !std::is_floating_point_v<K> && !std::is_enum_v<K>,
                    "tablio::proto_schema: a map's keys are integers or strings");
      return scalar_name<K>();
    }
  }
  // A member's lines: a field, a oneof of its alternatives, or none (unknown fields).
  template <class F>
  static void member_lines(std::string& body, std::string_view name, std::uint32_t number, bool presence,
                           std::vector<void (*)(schema_builder&)>& nested) {
    auto line = [&](std::string_view indent, const std::string& type, std::string_view field,
                    std::uint32_t n) {
      body.append(indent).append(type).append(" ").append(field).append(" = ").append(std::to_string(n)) +=
          ";\n";
    };
    if constexpr (is_variant<F>::value) {
      body.append("  oneof ").append(name) += " {\n";
      std::vector<std::string> used;
      [&]<std::size_t... K>(std::index_sequence<K...>) {
        (alternative_line<std::variant_alternative_t<K + first_alternative<F>, F>>(
             line, name, number + static_cast<std::uint32_t>(K), used, nested),
         ...);
      }
      (std::make_index_sequence<field_width<F>()>{});
      body += "  }\n";
    } else if constexpr (!std::is_same_v<F, pb::unknown_fields>) {
      line("  ", field_line<F>(presence, nested), name, number);
    }
  }
  // An alternative of oneof `name` is named `name_` and its type (`label_int32`, `label_inner`).
  template <class A, class Line>
  static void alternative_line(Line& line, std::string_view name, std::uint32_t number,
                               std::vector<std::string>& used,
                               std::vector<void (*)(schema_builder&)>& nested) {
    const std::string type = value_type<A>(nested);
    std::string field = std::string(name) + "_";
    for (char c : type) field += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const std::string& u : used)
      if (u == field) field += "_" + std::to_string(number);  // the same type twice
    used.push_back(field);
    line("    ", type, field, number);
  }
  template <class F>
  static std::string field_line(bool presence, std::vector<void (*)(schema_builder&)>& nested) {
    if constexpr (is_optional<F>::value) {
      using V = typename F::value_type;
      return message<V> ? value_type<V>(nested) : "optional " + value_type<V>(nested);
    } else if constexpr (bytes_field<F> || scalar<F> || message<F>) {
      return (presence ? "optional " : "") + value_type<F>(nested);
    } else if constexpr (is_vector<F>::value || is_std_array<F>::value) {
      return "repeated " + value_type<typename F::value_type>(nested);
    } else {
      static_assert(is_map<F>::value, "tablio::proto_schema: this field's type has no protobuf encoding");
      return "map<" + key_type<typename F::key_type>() + ", " + value_type<typename F::mapped_type>(nested) +
             ">";
    }
  }

  std::vector<std::string> names_;
  std::string out_;
};

}  // namespace detail::proto

// The proto3 schema of what tablio::protobuf writes for T: T's message, then those it nests;
// `package` (when given) names the package.
template <class T>
std::string proto_schema(std::string_view package = {}) {
  detail::proto::schema_builder b;
  b.add<T>();
  std::string out = "syntax = \"proto3\";\n\n";
  if (!package.empty()) out += "package " + std::string(package) + ";\n\n";
  return out + b.text();
}

TABLIO_END_NAMESPACE
