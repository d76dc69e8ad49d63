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

// A viewed feature's values: int64 and float32 arrays filled from the record, bytes as a list.
py::object feature_view_to_python(const tablio::feature_view& f) {
  switch (f.kind) {
    case tablio::feature_kind::bytes: {
      py::list out(f.count);
      std::size_t i = 0;
      for (std::string_view b : f.bytes()) out[i++] = py::bytes(b.data(), b.size());
      return std::move(out);
    }
    case tablio::feature_kind::floats: {
      py::array_t<float> out = new_array<float>({static_cast<py::ssize_t>(f.count)});
      f.floats().copy_to({out.mutable_data(), f.count});
      return std::move(out);
    }
    case tablio::feature_kind::int64s: {
      py::array_t<std::int64_t> out = new_array<std::int64_t>({static_cast<py::ssize_t>(f.count)});
      std::copy(f.int64s().begin(), f.int64s().end(), out.mutable_data());
      return std::move(out);
    }
    default:
      return py::none();
  }
}

// Read as a view of the record (no owned copy of it); written from an owned example.
struct example {
  using holder = tablio::example_view_holder;
  using owned_holder = tablio::example_holder;
  using value_type = tablio::example_view;
  static py::object to_python(tablio::example&& e, const value_options&) {
    return features_to_python(std::move(e));
  }
  static py::object to_python(value_type&& e, const value_options&) {
    py::dict out;
    for (const tablio::feature_view& f : e.features())
      if (PyDict_SetItem(out.ptr(), key_to_python(f.key).ptr(), feature_view_to_python(f).ptr()) != 0)
        throw py::error_already_set();
    return std::move(out);
  }
  static tablio::example from_python(py::handle h, const value_options&) { return features_from_python(h); }

  // A batch's features, one column per name, filled as records are read. A column whose
  // records all have it, as int64 or float values of one length, becomes an (N, length)
  // array; any other, a list with each record's value (None where a record lacks it).
  class stacker {
   public:
    stacker(const value_options&, std::size_t) {}
    void add(const value_type& e) {
      std::size_t i = 0;
      for (const tablio::feature_view& f : e.features()) column_for(f.key, i++).add(records_, f);
      ++records_;
    }
    py::object finish() {
      py::dict out;
      for (auto& [name, c] : columns_) out[key_to_python(name)] = c.finish(records_);
      return std::move(out);
    }

   private:
    struct column {
      std::size_t first = 0;                       // the record it first appeared in
      std::vector<std::uint32_t> records, counts;  // per value: its record, its length
      std::vector<tablio::feature_kind> kinds;
      std::vector<std::int64_t> ints;
      std::vector<float> floats;
      std::string bytes;                 // every bytes value, one after the other
      std::vector<std::size_t> lengths;  // of each

      void add(std::size_t record, const tablio::feature_view& f) {
        records.push_back(static_cast<std::uint32_t>(record));
        counts.push_back(static_cast<std::uint32_t>(f.count));
        kinds.push_back(f.kind);
        if (f.kind == tablio::feature_kind::int64s) {
          for (std::int64_t v : f.int64s()) ints.push_back(v);
        } else if (f.kind == tablio::feature_kind::floats) {
          std::size_t at = floats.size();
          floats.resize(at + f.count);
          f.floats().copy_to({floats.data() + at, f.count});
        } else if (f.kind == tablio::feature_kind::bytes) {
          for (std::string_view b : f.bytes()) {
            bytes.append(b);
            lengths.push_back(b.size());
          }
        }
      }
      bool uniform(std::size_t n) const {
        if (records.size() != n || n == 0) return false;
        for (std::size_t i = 0; i < n; ++i)
          if (kinds[i] != kinds[0] || counts[i] != counts[0]) return false;
        return kinds[0] == tablio::feature_kind::int64s || kinds[0] == tablio::feature_kind::floats;
      }
      py::object finish(std::size_t n) {
        if (uniform(n)) {
          std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(counts[0])};
          if (kinds[0] == tablio::feature_kind::int64s) return adopt(std::move(ints), shape);
          return adopt(std::move(floats), shape);
        }
        py::list out(n);
        for (std::size_t i = 0; i < n; ++i) out[i] = py::none();
        std::size_t int_at = 0, float_at = 0, bytes_at = 0, value_at = 0;
        for (std::size_t i = 0; i < records.size(); ++i) {
          py::ssize_t count = counts[i];
          py::object value = py::none();
          if (kinds[i] == tablio::feature_kind::int64s) {
            py::array_t<std::int64_t> a = new_array<std::int64_t>({count});
            std::copy_n(ints.data() + int_at, count, a.mutable_data());
            int_at += static_cast<std::size_t>(count);
            value = std::move(a);
          } else if (kinds[i] == tablio::feature_kind::floats) {
            py::array_t<float> a = new_array<float>({count});
            std::copy_n(floats.data() + float_at, count, a.mutable_data());
            float_at += static_cast<std::size_t>(count);
            value = std::move(a);
          } else if (kinds[i] == tablio::feature_kind::bytes) {
            py::list list(static_cast<std::size_t>(count));
            for (py::ssize_t j = 0; j < count; ++j) {
              std::size_t length = lengths[value_at++];
              list[static_cast<std::size_t>(j)] = py::bytes(bytes.data() + bytes_at, length);
              bytes_at += length;
            }
            value = std::move(list);
          }
          out[records[i]] = std::move(value);
        }
        return std::move(out);
      }
    };

    // Records mostly list the same features in the same order: the i-th column is tried first.
    column& column_for(std::string_view name, std::size_t i) {
      if (i < columns_.size() && columns_[i].first == name) return columns_[i].second;
      for (auto& [n, c] : columns_)
        if (n == name) return c;
      return columns_.emplace_back(std::string(name), column{}).second;
    }

    std::size_t records_ = 0;
    std::vector<std::pair<std::string, column>> columns_;  // a handful: a list beats a map
  };
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
// (bytes, label) for an encoded image. Read as a view of the record; written owned.
struct datum {
  using holder = tablio::datum_view_holder;
  using owned_holder = tablio::datum_holder;
  using value_type = tablio::datum_view;

  enum class image_kind { bytes, floats, encoded };
  static image_kind kind_of(const value_type& d) {
    if (d.encoded) return image_kind::encoded;
    return !d.float_data.empty() && d.data.empty() ? image_kind::floats : image_kind::bytes;
  }
  static std::vector<py::ssize_t> shape(const value_type& d) {
    std::size_t values = kind_of(d) == image_kind::floats ? d.float_data.size() : d.data.size();
    bool fits = d.channels >= 0 && d.height >= 0 && d.width >= 0 &&
                std::uint64_t(d.channels) * std::uint64_t(d.height) * std::uint64_t(d.width) == values;
    if (fits) return {d.channels, d.height, d.width};
    return {static_cast<py::ssize_t>(values)};  // dimensions that do not describe the data
  }
  template <class T>
  static py::object filled(const T* values, const std::vector<py::ssize_t>& shape) {
    py::array_t<T> out = new_array<T>(shape);
    if (out.size() != 0)
      std::memcpy(out.mutable_data(), values, static_cast<std::size_t>(out.size()) * sizeof(T));
    return std::move(out);
  }
  static py::object image(const value_type& d) {
    switch (kind_of(d)) {
      case image_kind::encoded:
        return py::bytes(d.data.data(), d.data.size());
      case image_kind::floats:
        return filled(d.float_data.data(), shape(d));
      default:
        return filled(reinterpret_cast<const std::uint8_t*>(d.data.data()), shape(d));
    }
  }
  static py::object to_python(value_type&& d, const value_options&) {
    return py::make_tuple(image(d), d.label);
  }
  static py::object to_python(tablio::datum&& d, const value_options& o) { return to_python(view_of(d), o); }
  static value_type view_of(const tablio::datum& d) {
    value_type v;
    v.channels = d.channels;
    v.height = d.height;
    v.width = d.width;
    v.data = d.data;
    v.label = d.label;
    v.float_data = d.float_data;
    v.encoded = d.encoded;
    return v;
  }

  static tablio::datum from_python(py::handle h, const value_options&) {
    auto pair = py::cast<py::tuple>(h);
    if (pair.size() != 2) throw py::value_error("datum: expected (image, label)");
    tablio::datum d;
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

  // (images, labels): images of one shape and kind, unencoded, stacked into an (N, c, h, w)
  // array as they are read; any other batch's images as a list. Labels: an (N,) int32 array.
  class stacker {
   public:
    stacker(const value_options&, std::size_t expected) : expected_(expected) { labels_.reserve(expected); }
    void add(const value_type& d) {
      labels_.push_back(d.label);
      if (rest_.empty() && stacks(d)) {
        if (kind_ == image_kind::floats)
          floats_.insert(floats_.end(), d.float_data.begin(), d.float_data.end());
        else
          pixels_.insert(pixels_.end(), d.data.begin(), d.data.end());
        ++stacked_;
        return;
      }
      rest_.push_back(owned(d));  // from the first that does not stack on, each on its own
    }
    py::object finish() {
      py::ssize_t n = static_cast<py::ssize_t>(labels_.size());
      py::object labels = adopt(std::move(labels_), {n});
      if (rest_.empty() && stacked_ != 0) {
        std::vector<py::ssize_t> all = shape_;
        all.insert(all.begin(), n);
        if (kind_ == image_kind::floats) return py::make_tuple(adopt(std::move(floats_), all), labels);
        return py::make_tuple(adopt(std::move(pixels_), all), labels);
      }
      py::list images(static_cast<std::size_t>(n));
      std::size_t each = 1;
      for (py::ssize_t d : shape_) each *= static_cast<std::size_t>(d);
      for (std::size_t i = 0; i < stacked_; ++i)
        images[i] = kind_ == image_kind::floats ? filled(floats_.data() + i * each, shape_)
                                                : filled(pixels_.data() + i * each, shape_);
      for (std::size_t i = 0; i < rest_.size(); ++i) images[stacked_ + i] = image(view_of(rest_[i]));
      return py::make_tuple(std::move(images), labels);
    }

   private:
    bool stacks(const value_type& d) {
      image_kind k = kind_of(d);
      if (k == image_kind::encoded) return false;
      if (stacked_ == 0) {
        kind_ = k;
        shape_ = shape(d);
        if (k == image_kind::floats)
          floats_.reserve(expected_ * d.float_data.size());
        else
          pixels_.reserve(expected_ * d.data.size());
        return true;
      }
      return k == kind_ && shape(d) == shape_;
    }
    static tablio::datum owned(const value_type& d) {
      tablio::datum o;
      o.channels = d.channels;
      o.height = d.height;
      o.width = d.width;
      o.data = std::string(d.data);
      o.label = d.label;
      o.float_data = d.float_data;
      o.encoded = d.encoded;
      return o;
    }
    std::size_t expected_;
    std::vector<std::int32_t> labels_;
    image_kind kind_ = image_kind::bytes;
    std::vector<py::ssize_t> shape_;
    std::vector<std::uint8_t> pixels_;
    std::vector<float> floats_;
    std::size_t stacked_ = 0;
    std::vector<tablio::datum> rest_;
  };
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
