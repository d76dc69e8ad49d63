// TensorFlow's and Caffe's value types as Python values: a tf.Example as a dict of feature
// name to an int64 or float32 ndarray or a list of bytes; a SequenceExample as (context,
// feature_lists); a Caffe Datum as (ndarray[c, h, w], label) or (bytes, label) when encoded;
// any entry's raw bytes as bytes.
#include "arrays.hpp"
#include "tables.hpp"

namespace tablio_python {
namespace {

py::object feature_to_python(tablio::feature&& f) {
  return std::visit(
      [](auto& list) -> py::object {
        using L = std::decay_t<decltype(list)>;
        if constexpr (std::is_same_v<L, std::monostate>) {
          return py::none();
        } else if constexpr (std::is_same_v<L, std::vector<std::string>>) {
          py::list out(list.size());
          for (std::size_t i = 0; i < list.size(); ++i) out[i] = py::bytes(list[i]);
          return std::move(out);
        } else {
          py::ssize_t n = static_cast<py::ssize_t>(list.size());
          return adopt(std::move(list), {n});
        }
      },
      f);
}

// None: a feature with no kind; bytes, str or a list of them: a bytes list; numbers: an
// int64 list (integers, booleans) or a float32 list.
tablio::feature feature_from_python(py::handle h, const std::string& name) {
  if (h.is_none()) return std::monostate{};
  auto as_bytes = [](py::handle item) {
    if (py::isinstance<py::bytes>(item)) return std::string(py::reinterpret_borrow<py::bytes>(item));
    return key_from_python(item);
  };
  if (py::isinstance<py::bytes>(h) || py::isinstance<py::str>(h))
    return std::vector<std::string>{as_bytes(h)};
  if (py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h)) {
    py::sequence items = py::reinterpret_borrow<py::sequence>(h);
    if (items.size() != 0 && (py::isinstance<py::bytes>(items[0]) || py::isinstance<py::str>(items[0]))) {
      std::vector<std::string> out;
      out.reserve(items.size());
      for (py::handle item : items) out.push_back(as_bytes(item));
      return out;
    }
  }
  py::array a = py::array::ensure(h);
  if (!a) throw py::type_error("feature '" + name + "': expected bytes, str, numbers or None");
  if (a.ndim() > 1) a = a.attr("reshape")(-1);
  char kind = a.dtype().kind();
  if (kind == 'i' || kind == 'u' || kind == 'b') {
    auto values = as_array<std::int64_t>(a, 1, "int64 feature");
    return to_vector(values);
  }
  if (kind == 'S' || kind == 'O' || kind == 'U') {
    std::vector<std::string> out;
    for (py::handle item : a) out.push_back(as_bytes(item));
    return out;
  }
  if (kind == 'f' || a.size() == 0) {  // an empty list has no type: a float list, as numpy's []
    auto values = as_array<float>(a, 1, "float feature");
    return to_vector(values);
  }
  throw py::type_error("feature '" + name + "': cannot store an array of dtype " +
                       std::string(py::str(py::handle(a.dtype()))));
}

py::dict features_to_python(tablio::example&& e) {
  py::dict out;
  for (auto& [name, f] : e.features) out[key_to_python(name)] = feature_to_python(std::move(f));
  return out;
}

tablio::example features_from_python(py::handle h) {
  tablio::example e;
  py::dict features = py::cast<py::dict>(h);
  e.features_present = !features.empty();  // {} is Example(), as protobuf writes it: no bytes
  for (auto [name, value] : features) {
    std::string n = key_from_python(name);
    e.features[n] = feature_from_python(value, n);
  }
  return e;
}

struct example {
  using holder = tablio::example_holder;
  using value_type = tablio::example;
  static py::object to_python(value_type&& e, const value_options&) {
    return features_to_python(std::move(e));
  }
  static value_type from_python(py::handle h, const value_options&) { return features_from_python(h); }

  // A feature every record has, of one kind and length, becomes an (N, length) array;
  // any other, a list with one value (or None) per record.
  template <class T>
  static py::object stack_feature(std::vector<value_type>& values, const std::string& name) {
    std::size_t length = 0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      auto* list = values[i].get<T>(name);
      if (!list || (i != 0 && list->size() != length)) return py::none();
      length = list->size();
    }
    py::array_t<T> out =
        new_array<T>({static_cast<py::ssize_t>(values.size()), static_cast<py::ssize_t>(length)});
    T* p = out.mutable_data();
    for (auto& v : values) {
      const auto* list = v.get<T>(name);
      std::copy(list->begin(), list->end(), p);
      p += length;
    }
    return std::move(out);
  }
  static py::object stack(std::vector<value_type>& values, const value_options&) {
    py::dict out;
    if (values.empty()) return std::move(out);
    std::vector<std::string> names;
    for (auto& v : values)
      for (auto& [name, f] : v.features)
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    for (const std::string& name : names) {
      py::object stacked = stack_feature<std::int64_t>(values, name);
      if (stacked.is_none()) stacked = stack_feature<float>(values, name);
      if (stacked.is_none()) {
        py::list ragged(values.size());
        for (std::size_t i = 0; i < values.size(); ++i) {
          auto it = values[i].features.find(name);
          ragged[i] = it == values[i].features.end() ? py::none() : feature_to_python(std::move(it->second));
        }
        stacked = std::move(ragged);
      }
      out[key_to_python(name)] = stacked;
    }
    return std::move(out);
  }
};

// (context, feature_lists): feature_lists maps a name to a list of feature values.
struct sequence_example {
  using holder = tablio::sequence_example_holder;
  using value_type = tablio::sequence_example;
  static py::object to_python(value_type&& s, const value_options&) {
    py::dict lists;
    for (auto& [name, list] : s.feature_lists) {
      py::list values(list.features.size());
      for (std::size_t i = 0; i < list.features.size(); ++i)
        values[i] = feature_to_python(std::move(list.features[i]));
      lists[key_to_python(name)] = std::move(values);
    }
    return py::make_tuple(features_to_python(std::move(s.context)), std::move(lists));
  }
  static value_type from_python(py::handle h, const value_options&) {
    auto pair = py::cast<py::tuple>(h);
    if (pair.size() != 2) throw py::value_error("sequence-example: expected (context, feature_lists)");
    value_type s;
    s.context = features_from_python(pair[0]);
    s.context_present = s.context.features_present;
    py::dict lists = py::cast<py::dict>(pair[1]);
    s.feature_lists_present = !lists.empty();
    for (auto [name, values] : lists) {
      std::string n = key_from_python(name);
      tablio::feature_list& list = s.feature_lists[n];
      for (py::handle f : py::iter(values)) list.features.push_back(feature_from_python(f, n));
    }
    return s;
  }
};

// (ndarray[c, h, w] uint8, label), float32 when the Datum holds float_data, or
// (bytes, label) for an encoded image.
struct datum {
  using holder = tablio::datum_holder;
  using value_type = tablio::datum;
  static std::vector<py::ssize_t> shape(const value_type& d) { return {d.channels, d.height, d.width}; }
  static bool fits(const value_type& d, std::size_t values) {
    return d.channels >= 0 && d.height >= 0 && d.width >= 0 &&
           std::uint64_t(d.channels) * std::uint64_t(d.height) * std::uint64_t(d.width) == values;
  }
  static py::object image(value_type& d) {
    if (d.encoded) return py::bytes(d.data);
    if (!d.float_data.empty() && d.data.empty()) {
      std::size_t n = d.float_data.size();
      std::vector<py::ssize_t> s = fits(d, n) ? shape(d) : std::vector<py::ssize_t>{py::ssize_t(n)};
      return adopt(std::move(d.float_data), s);
    }
    std::vector<py::ssize_t> s =
        fits(d, d.data.size()) ? shape(d) : std::vector<py::ssize_t>{py::ssize_t(d.data.size())};
    py::array_t<std::uint8_t> out = new_array<std::uint8_t>(s);
    if (!d.data.empty()) std::memcpy(out.mutable_data(), d.data.data(), d.data.size());
    return std::move(out);
  }
  static py::object to_python(value_type&& d, const value_options&) {
    return py::make_tuple(image(d), d.label);
  }
  static value_type from_python(py::handle h, const value_options&) {
    auto pair = py::cast<py::tuple>(h);
    if (pair.size() != 2) throw py::value_error("datum: expected (image, label)");
    value_type d;
    d.label = py::cast<std::int32_t>(pair[1]);
    py::handle image = pair[0];
    if (py::isinstance<py::bytes>(image)) {  // an encoded image, as convert_imageset --encoded
      d.data = std::string(py::reinterpret_borrow<py::bytes>(image));
      d.encoded = true;
      d.present.channels = d.present.height = d.present.width = false;
      d.present.data = d.present.encoded = true;
      return d;
    }
    py::array a = py::array::ensure(image);
    if (!a || a.ndim() != 3)
      throw py::value_error("datum: expected an image array of shape (channels, height, width)");
    d.channels = dimension(a.shape(0), "channels");
    d.height = dimension(a.shape(1), "height");
    d.width = dimension(a.shape(2), "width");
    if (a.dtype().kind() == 'f') {
      d.float_data = to_vector(as_array<float>(a, 3, "datum"));
    } else {
      auto bytes = as_array<std::uint8_t>(a, 3, "datum");
      d.data.assign(reinterpret_cast<const char*>(bytes.data()), static_cast<std::size_t>(bytes.size()));
      d.present.data = true;
    }
    return d;
  }
  // (images, labels): an (N, c, h, w) array when every image is unencoded and of one shape
  // and kind, else a list of images; labels an (N,) int32 array.
  static py::object stack(std::vector<value_type>& values, const value_options&) {
    py::array_t<std::int32_t> labels = new_array<std::int32_t>({static_cast<py::ssize_t>(values.size())});
    for (std::size_t i = 0; i < values.size(); ++i) labels.mutable_data()[i] = values[i].label;
    auto bytes_image = [](const value_type& d) {
      return !d.encoded && d.float_data.empty() && fits(d, d.data.size()) ? shape(d)
                                                                          : std::vector<py::ssize_t>{-1};
    };
    auto float_image = [](const value_type& d) {
      return !d.encoded && d.data.empty() && fits(d, d.float_data.size()) ? shape(d)
                                                                          : std::vector<py::ssize_t>{-1};
    };
    py::object images = py::none();
    if (!values.empty() && bytes_image(values.front())[0] >= 0)
      images =
          stack_equal_shapes<std::uint8_t>(values, bytes_image, [](const value_type& d, std::uint8_t* out) {
            if (!d.data.empty()) std::memcpy(out, d.data.data(), d.data.size());
          });
    else if (!values.empty() && float_image(values.front())[0] >= 0)
      images = stack_equal_shapes<float>(values, float_image, [](const value_type& d, float* out) {
        std::copy(d.float_data.begin(), d.float_data.end(), out);
      });
    if (images.is_none()) {
      py::list list(values.size());
      for (std::size_t i = 0; i < values.size(); ++i) list[i] = image(values[i]);
      images = std::move(list);
    }
    return py::make_tuple(std::move(images), std::move(labels));
  }
};

struct bytes {
  using holder = tablio::bytes_holder;
  using value_type = std::string;
  static py::object to_python(value_type&& v, const value_options&) { return py::bytes(v); }
  static value_type from_python(py::handle h, const value_options&) {
    if (!py::isinstance<py::bytes>(h)) throw py::type_error("bytes: expected bytes");
    return std::string(py::reinterpret_borrow<py::bytes>(h));
  }
};

}  // namespace

void register_tensorflow_types() {
  register_value_type("example", entry_for<example>());
  register_value_type("sequence-example", entry_for<sequence_example>());
  register_value_type("datum", entry_for<datum>());
  register_value_type("bytes", entry_for<bytes>());
}

}  // namespace tablio_python
