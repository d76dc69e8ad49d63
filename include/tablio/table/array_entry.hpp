// How a value is a typed array entry (IDX items): array_traits<V>. An arithmetic value is an
// array of one value (labels), a std::vector or a vector<T> one of one dimension, a matrix<T>
// one of two, and a std::string an entry's stored bytes as they are. On reading, values are
// converted from the stored type, and one the value's type does not hold (3e10 as an int, 2.5
// as an int, 300 as a uint8) is a format_error naming it; on writing, the element type (uint8_t, int8_t,
// int16_t, int32_t, float, double) is the stored type and the value's shape the entry's.
//
//   static constexpr bool writable;                    the elements can be stored as they are
//   static std::size_t dims(const V&, std::uint32_t* out);   the shape (at most 2 dimensions)
//   static const void* data(const V&);                 the elements, in native byte order
//   using element = ...;
//   static void read(const array_view&, V&, const std::string& name);
#pragma once

#include <tablio/core/error.hpp>
#include <tablio/framing/concepts.hpp>

#include <concepts>
#include <cstdint>
#include <string>
#include <vector>

TABLIO_BEGIN_NAMESPACE

/// How values of type V are typed array entries: the members the header's opening comment
/// lists. Declared only, and specialized below for numbers, std::vector, vector<T>, matrix<T>
/// and std::string.
template <class V>
struct array_traits;

// Declared only: a table of matrices or vectors includes <tablio/types/matrix.hpp> itself,
// and other tables need not compile it.
template <std::floating_point T>
class matrix;
template <std::floating_point T>
class vector;

namespace detail {

[[noreturn]] inline void array_shape_mismatch(const std::string& name, const char* expected,
                                              const array_view& a) {
  throw_format_error(name, std::nullopt, {}, {expected},
                     {"entries of ", decimal(a.values()), (a.values() == 1 ? " value" : " values"), " in ",
                      decimal(a.dims.size()), " dimensions"});
}

}  // namespace detail

// A number is an array of one value (an IDX file of labels).
template <class T>
requires std::is_arithmetic_v<T>
struct array_traits<T> {
  using element = T;
  static constexpr bool writable = array_element<T>;
  // No dimensions: one value.
  static std::size_t dims(const T&, std::uint32_t*) { return 0; }
  // The value itself.
  static const void* data(const T& v) { return &v; }
  // Converts the entry's one value; format_error for an entry of more or fewer values, or one that
  // T does not hold.
  static void read(const array_view& a, T& out, const std::string& name) {
    if (a.values() != 1) detail::array_shape_mismatch(name, "items of one value", a);
    convert_elements_checked(a, &out, 1, name);
  }
};

// A std::vector holds an entry's values in order, whatever its shape.
template <class T>
requires std::is_arithmetic_v<T>
struct array_traits<std::vector<T>> {
  using element = T;
  static constexpr bool writable = array_element<T>;
  // One dimension, of the vector's size.
  static std::size_t dims(const std::vector<T>& v, std::uint32_t* out) {
    out[0] = static_cast<std::uint32_t>(v.size());
    return 1;
  }
  // The elements.
  static const void* data(const std::vector<T>& v) { return v.data(); }
  // Converts all the entry's values, flattened; format_error for one that T does not hold.
  static void read(const array_view& a, std::vector<T>& out, const std::string& name) {
    out.resize(static_cast<std::size_t>(a.values()));
    convert_elements_checked(a, out.data(), out.size(), name);
  }
};

// A Kaldi vector holds an entry's values, whatever its shape, as std::vector does.
template <std::floating_point T>
struct array_traits<vector<T>> {
  using element = T;
  static constexpr bool writable = array_element<T>;
  // One dimension, of the vector's size.
  static std::size_t dims(const vector<T>& v, std::uint32_t* out) {
    return array_traits<std::vector<T>>::dims(v.storage(), out);
  }
  // The elements.
  static const void* data(const vector<T>& v) { return v.data(); }
  // Converts all the entry's values, flattened; format_error for one that T does not hold.
  static void read(const array_view& a, vector<T>& out, const std::string& name) {
    array_traits<std::vector<T>>::read(a, out.storage(), name);
  }
};

// A matrix is an entry of two dimensions: rows, then columns.
template <std::floating_point T>
struct array_traits<matrix<T>> {
  using element = T;
  static constexpr bool writable = array_element<T>;
  // Rows and columns.
  static std::size_t dims(const matrix<T>& m, std::uint32_t* out) {
    out[0] = static_cast<std::uint32_t>(m.num_rows());
    out[1] = static_cast<std::uint32_t>(m.num_cols());
    return 2;
  }
  // The elements, row after row.
  static const void* data(const matrix<T>& m) { return m.data(); }
  // Converts an entry of two dimensions; format_error for any other shape, a dimension past
  // 2^31-1, or a value that T does not hold.
  static void read(const array_view& a, matrix<T>& out, const std::string& name) {
    if (a.dims.size() != 2) detail::array_shape_mismatch(name, "items of two dimensions (a matrix)", a);
    if (a.dims[0] > INT32_MAX || a.dims[1] > INT32_MAX)
      detail::array_shape_mismatch(name, "a matrix of at most 2^31-1 rows and columns", a);
    out.resize(static_cast<std::int32_t>(a.dims[0]), static_cast<std::int32_t>(a.dims[1]));
    convert_elements_checked(a, out.data(), static_cast<std::size_t>(a.values()), name);
  }
};

// A std::string is an entry's stored bytes as they are, of whatever type and shape: written,
// one dimension of bytes.
template <>
struct array_traits<std::string> {
  using element = std::uint8_t;
  static constexpr bool writable = true;
  // One dimension, of the string's size.
  static std::size_t dims(const std::string& s, std::uint32_t* out) {
    out[0] = static_cast<std::uint32_t>(s.size());
    return 1;
  }
  // The bytes.
  static const void* data(const std::string& s) { return s.data(); }
  // The entry's stored bytes, unconverted (in the file's byte order); it never throws a
  // format_error.
  static void read(const array_view& a, std::string& out, const std::string&) {
    out.assign(a.data, static_cast<std::size_t>(a.values()) * element_size(a.type));  // the stored bytes
  }
};

// A value that can be read from an array entry, and one that can also be written as one.
template <class V>
concept array_value = requires {
  typename array_traits<V>::element;
};
template <class V>
concept writable_array_value = array_value<V> && array_traits<V>::writable;

TABLIO_END_NAMESPACE
