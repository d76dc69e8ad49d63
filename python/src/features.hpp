// An Example's features as Python values and back (decode_raw=, images= and view=True
// applied): what the Example and SequenceExample types convert their features with.
#pragma once

#include "arrays.hpp"
#include "binding.hpp"
#include "decode_raw.hpp"
#include "images.hpp"
#include "record_values.hpp"

#include <tablio/core/error.hpp>
#include <tablio/types/example.hpp>
#include <tablio/types/image.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace tablio_python {

// An image feature's values as images= gives them: its one image as an array, or a list of
// arrays for any other count of them.
template <class Image>
py::object image_feature_to_python(std::size_t count, Image&& image_at) {
  if (count == 1) return image_array(image_at(0));
  py::list out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = image_array(image_at(i));
  return std::move(out);
}

// A looked-up Example's image feature, decoded here.
inline py::object images_looked_up(const std::vector<std::string>& values, const value_options& o) {
  decoded_images images;
  images.at_offset(looked_up_offset());
  {
    unlocked_gil unlocked;
    images.decode_all([&] {
      for (std::size_t i = 0; i < values.size(); ++i)
        images.add(values[i], i, *o.images, "", looked_up_key());
    });
  }
  images.throw_error();
  return image_feature_to_python(images.size(),
                                 [&](std::size_t i) -> const tablio::image& { return images[i]; });
}

// A feature's values: arrays that take over an owned feature's storage, or copies of a
// feature a table keeps (Feature is const), or in view=True's shared buffer.
template <class Feature>
py::object feature_to_python(Feature&& f, std::string_view name, const value_options& o,
                             record_values& values) {
  constexpr bool kept = std::is_const_v<std::remove_reference_t<Feature>>;
  return std::visit(
      [&](auto& list) -> py::object {
        using L = std::decay_t<decltype(list)>;
        if constexpr (std::is_same_v<L, std::monostate>) {
          return py::none();
        } else if constexpr (std::is_same_v<L, std::vector<std::string>>) {
          if (o.decodes_images(name)) return images_looked_up(list, o);
          if (const raw_feature* r = o.raw(name))
            return decode_raw_values(list, {py::ssize_t(list.size())}, *r, o.scale);
          py::list out(list.size());
          for (std::size_t i = 0; i < list.size(); ++i) out[i] = values.bytes(list[i]);
          return std::move(out);
        } else {
          using T = typename L::value_type;
          if constexpr (!kept) {
            auto n = static_cast<py::ssize_t>(list.size());
            if (!values.shared()) return adopt(std::move(list), {n});
          }
          return values.array<T>(list.size(), [&](T* p) { std::copy(list.begin(), list.end(), p); });
        }
      },
      f);
}

// None: a feature with no kind; bytes, a list of bytes or an empty list: a bytes list (as a
// bytes list reads back: a list, where numbers read back as arrays); numbers: an int64 list
// (integers, booleans) or a float32 list. A str is refused, as TensorFlow's BytesList refuses it:
// which bytes it stands for is the caller's to say.
inline tablio::feature feature_from_python(py::handle h, const std::string& name) {
  if (h.is_none()) return std::monostate{};
  auto refuse = [&](const std::string& why) {
    throw py::type_error("feature " + tablio::quoted_excerpt(name) + ": " + why);
  };
  auto as_bytes = [&](py::handle item) {
    if (py::isinstance<py::bytes>(item)) return std::string(py::reinterpret_borrow<py::bytes>(item));
    if (py::isinstance<py::str>(item)) refuse("a str is no bytes value (encode it: 'text'.encode())");
    refuse("expected bytes in a bytes list, found " +
           std::string(py::str(py::type::handle_of(item).attr("__name__"))));
    return std::string();
  };
  if (py::isinstance<py::bytes>(h) || py::isinstance<py::str>(h))
    return std::vector<std::string>{as_bytes(h)};
  if (py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h)) {
    py::sequence items = py::reinterpret_borrow<py::sequence>(h);
    if (items.size() == 0) return std::vector<std::string>{};
    if (py::isinstance<py::bytes>(items[0]) || py::isinstance<py::str>(items[0])) {
      std::vector<std::string> out;
      out.reserve(items.size());
      for (py::handle item : items) out.push_back(as_bytes(item));
      return out;
    }
  }
  py::array a = py::array::ensure(h);
  if (!a) refuse("expected bytes, numbers or None");
  if (a.ndim() > 1) a = a.attr("reshape")(-1);
  char kind = a.dtype().kind();
  if (kind == 'i' || kind == 'u' || kind == 'b') {
    auto values = as_array<std::int64_t>(a, 1, "int64 feature");
    return to_vector(values);
  }
  if (kind == 'U') refuse("an array of str holds no bytes values (encode them, or give dtype bytes)");
  if (kind == 'S' || kind == 'O') {
    std::vector<std::string> out;
    for (py::handle item : a) out.push_back(as_bytes(item));
    return out;
  }
  if (kind == 'f') {
    auto values = as_array<float>(a, 1, "float feature");
    return to_vector(values);
  }
  refuse("cannot store an array of dtype " + std::string(py::str(py::handle(a.dtype()))));
  return std::monostate{};
}

// An example's features, taken over (an rvalue) or copied (a const example a table keeps).
template <class Example>
py::dict features_to_python(Example&& e, const value_options& o, record_values& values) {
  constexpr bool kept = std::is_const_v<std::remove_reference_t<Example>>;
  static_assert(kept || !std::is_lvalue_reference_v<Example>, "an example to take over is an rvalue");
  py::dict out;
  for (auto& [name, f] : e.features) {
    if (!o.keeps(name)) continue;
    if constexpr (kept)
      out[name_to_python(name)] = feature_to_python(f, name, o, values);
    else
      out[name_to_python(name)] = feature_to_python(std::move(f), name, o, values);
  }
  return out;
}

inline tablio::example features_from_python(py::handle h) {
  tablio::example e;
  py::dict features = py::cast<py::dict>(h);
  e.features_present = !features.empty();  // {} is Example(), as protobuf writes it: no bytes
  for (auto [name, value] : features) {
    std::string n = key_from_python(name);
    e.features[n] = feature_from_python(value, n);
  }
  return e;
}

}  // namespace tablio_python
