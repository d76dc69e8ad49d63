// decode_raw=: an Example's bytes feature read as an array of little-endian numbers, as
// TensorFlow's decode_raw reads it, for a record's feature or a batch's column of them.
#pragma once

#include "arrays.hpp"
#include "binding.hpp"

#include <tablio/core/endian.hpp>
#include <tablio/core/error.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace tablio_python {

// Calls f(T{}) with the C++ type of a decode_raw element type.
template <class F>
py::object with_raw_type(const raw_feature& r, F&& f) {
  bool is_signed = r.kind == 'i';
  switch (r.kind == 'f' ? -r.size : r.size) {
    case -4:
      return f(float{});
    case -8:
      return f(double{});
    case 1:
      return is_signed ? f(std::int8_t{}) : f(std::uint8_t{});
    case 2:
      return is_signed ? f(std::int16_t{}) : f(std::uint16_t{});
    case 4:
      return is_signed ? f(std::int32_t{}) : f(std::uint32_t{});
    default:
      return is_signed ? f(std::int64_t{}) : f(std::uint64_t{});
  }
}

// n little-endian numbers of type T at src into out, as T, or as float32 times scale.
template <class T>
void decode_numbers(const char* src, std::size_t n, T* out) {
  tablio::load_array<std::endian::little>(out, src, n);
}
template <class T>
void decode_numbers(const char* src, std::size_t n, float* out, float scale) {
  for (std::size_t i = 0; i < n; ++i)
    out[i] = static_cast<float>(tablio::load<std::endian::little, T>(src + i * sizeof(T))) * scale;
}

// Values of a bytes feature decoded as decode_raw asks: an array (rows..., length / size) of
// their numbers, one row per value (rows: the value count, or batch size and count). Values
// of different lengths, or of a length that does not fit the type or shape, are a
// format_error naming the feature (the table and key are added where the value is taken).
template <class Values>
py::object decode_raw_values(const Values& values, std::vector<py::ssize_t> rows, const raw_feature& r,
                             std::optional<float> scale) {
  std::size_t length = 0, i = 0;
  for (std::string_view v : values) {
    if (i++ == 0) length = v.size();
    if (v.size() != length)
      tablio::throw_format_error("", std::nullopt, "", {"values of feature '", r.name, "' of one length"},
                                 {tablio::decimal(length), " and ", tablio::decimal(v.size()), " bytes"});
  }
  if (length % static_cast<std::size_t>(r.size) != 0)
    tablio::throw_format_error(
        "", std::nullopt, "",
        {"values of feature '", r.name, "' of whole ", tablio::decimal(r.size), "-byte numbers"},
        {tablio::decimal(length), " bytes"});
  std::size_t each = length / static_cast<std::size_t>(r.size);
  std::vector<py::ssize_t> shape = std::move(rows);
  if (r.shape.empty()) {
    shape.push_back(static_cast<py::ssize_t>(each));
  } else {
    std::size_t numbers = 1;
    for (py::ssize_t extent : r.shape) numbers *= static_cast<std::size_t>(extent);
    if (numbers != each && !(values.begin() == values.end()))
      tablio::throw_format_error("", std::nullopt, "",
                                 {"values of feature '", r.name, "' of ", tablio::decimal(numbers),
                                  " numbers, as decode_raw's shape"},
                                 {tablio::decimal(each), " numbers"});
    shape.insert(shape.end(), r.shape.begin(), r.shape.end());
  }
  return with_raw_type(r, [&](auto zero) -> py::object {
    using T = decltype(zero);
    if (scale) {
      py::array_t<float> out = new_array<float>(shape);
      float* p = out.mutable_data();
      for (std::string_view v : values) decode_numbers<T>(v.data(), each, p, *scale), p += each;
      return std::move(out);
    }
    py::array_t<T> out = new_array<T>(shape);
    T* p = out.mutable_data();
    for (std::string_view v : values) decode_numbers<T>(v.data(), each, p), p += each;
    return std::move(out);
  });
}

}  // namespace tablio_python
