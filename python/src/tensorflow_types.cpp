// TensorFlow's and Caffe's value types as Python values: a tf.Example as a dict of feature
// name to an int64 or float32 ndarray or a list of bytes; a SequenceExample as (context,
// feature_lists); a Caffe Datum as (ndarray[c, h, w], label) or (bytes, label) when encoded;
// any entry's raw bytes as bytes; a WebDataset sample as a dict of extension to bytes.
#include "arrays.hpp"
#include "images.hpp"
#include "tables.hpp"

#include <tablio/holder/sample.hpp>

#include <algorithm>

namespace tablio_python {
namespace {

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

// Where a record's arrays and bytes go: objects of their own, or under view=True read-only
// views into one buffer made for the record (one allocation, however many features; the
// views keep it alive, so they stay valid after the next record).
class record_values {
 public:
  record_values() = default;
  // Room for `arrays` arrays of `array_bytes` bytes in all, and `bytes` of byte strings.
  record_values(std::size_t arrays, std::size_t array_bytes, std::size_t bytes) {
    std::size_t size = array_bytes + 7 * arrays + bytes;  // each array starts 8-byte aligned
    buffer_ =
        py::reinterpret_steal<py::object>(PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(size)));
    if (!buffer_) throw py::error_already_set();
    data_ = PyBytes_AS_STRING(buffer_.ptr());
  }
  bool shared() const noexcept { return data_ != nullptr; }

  // An array of n T that fill(T*) writes.
  template <class T, class Fill>
  py::object array(std::size_t n, Fill fill) {
    if (!shared()) {
      py::array_t<T> out = new_array<T>({static_cast<py::ssize_t>(n)});
      fill(out.mutable_data());
      return std::move(out);
    }
    at_ = (at_ + 7) & ~std::size_t(7);
    T* p = reinterpret_cast<T*>(data_ + at_);
    fill(p);
    at_ += n * sizeof(T);
    auto& api = py::detail::npy_api::get();
    PyObject* descr = api.PyArray_DescrFromType_(py::detail::npy_format_descriptor<T>::value);
    if (!descr) throw py::error_already_set();
    Py_intptr_t shape[1] = {static_cast<Py_intptr_t>(n)};
    PyObject* a = api.PyArray_NewFromDescr_(api.PyArray_Type_, descr, 1, shape, nullptr, p,
                                            py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_ |
                                                py::detail::npy_api::NPY_ARRAY_ALIGNED_,  // not writeable
                                            nullptr);
    if (!a) throw py::error_already_set();
    py::object out = py::reinterpret_steal<py::object>(a);
    if (api.PyArray_SetBaseObject_(a, buffer_.inc_ref().ptr()) != 0) throw py::error_already_set();
    return out;
  }
  // A byte string: bytes, or a read-only memoryview.
  py::object bytes(std::string_view b) {
    if (!shared()) return py::bytes(b.data(), b.size());
    if (!view_) {
      view_ = py::reinterpret_steal<py::object>(PyMemoryView_FromObject(buffer_.ptr()));
      if (!view_) throw py::error_already_set();
    }
    if (!b.empty()) std::memcpy(data_ + at_, b.data(), b.size());
    PyObject* slice = PySequence_GetSlice(view_.ptr(), static_cast<Py_ssize_t>(at_),
                                          static_cast<Py_ssize_t>(at_ + b.size()));
    if (!slice) throw py::error_already_set();
    at_ += b.size();
    return py::reinterpret_steal<py::object>(slice);
  }

 private:
  py::object buffer_, view_;
  char* data_ = nullptr;
  std::size_t at_ = 0;
};

// What view=True makes room for: arrays and their bytes, byte strings.
struct record_room {
  std::size_t arrays = 0, array_bytes = 0, bytes = 0;
  void add(const tablio::feature_view& f, const value_options& o) {
    if (o.decodes_images(f.key)) return;
    if (f.kind == tablio::feature_kind::bytes && !o.raw(f.key)) {
      for (std::string_view b : f.bytes()) bytes += b.size();
    } else if (f.kind == tablio::feature_kind::floats || f.kind == tablio::feature_kind::int64s) {
      ++arrays;
      array_bytes += f.count * (f.kind == tablio::feature_kind::floats ? 4 : 8);
    }
  }
  void add(const tablio::feature& f, std::string_view name, const value_options& o) {
    if (o.decodes_images(name)) return;
    if (auto* b = std::get_if<std::vector<std::string>>(&f); b && !o.raw(name)) {
      for (const std::string& v : *b) bytes += v.size();
    } else if (auto* floats = std::get_if<std::vector<float>>(&f)) {
      ++arrays;
      array_bytes += 4 * floats->size();
    } else if (auto* ints = std::get_if<std::vector<std::int64_t>>(&f)) {
      ++arrays;
      array_bytes += 8 * ints->size();
    }
  }
  record_values values() const { return record_values(arrays, array_bytes, bytes); }
};

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
  {
    unlocked_gil unlocked;
    images.decode_all([&] {
      for (std::size_t i = 0; i < values.size(); ++i) images.add(values[i], i, *o.images, "");
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
tablio::feature feature_from_python(py::handle h, const std::string& name) {
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

// A viewed feature's values: int64 and float32 arrays filled from the record, bytes as a list
// (or decoded, as decode_raw asks).
py::object feature_view_to_python(const tablio::feature_view& f, const value_options& o,
                                  record_values& values) {
  switch (f.kind) {
    case tablio::feature_kind::bytes: {
      if (const raw_feature* r = o.raw(f.key))
        return decode_raw_values(f.bytes(), {py::ssize_t(f.count)}, *r, o.scale);
      py::list out(f.count);
      std::size_t i = 0;
      for (std::string_view b : f.bytes()) out[i++] = values.bytes(b);
      return std::move(out);
    }
    case tablio::feature_kind::floats:
      return values.array<float>(f.count, [&](float* p) { f.floats().copy_to({p, f.count}); });
    case tablio::feature_kind::int64s:
      return values.array<std::int64_t>(
          f.count, [&](std::int64_t* p) { std::copy(f.int64s().begin(), f.int64s().end(), p); });
    default:
      return py::none();
  }
}

// An Example read as a view of its record, and under images= its image features decoded (each
// image with the ordinal of its value in its feature, and the feature's name).
struct example_read {
  tablio::example_view example;
  decoded_images images;
  std::vector<std::string_view> image_features;  // of each image: its feature's name

  // The images of feature `name`: [first, last).
  std::pair<std::size_t, std::size_t> images_of(std::string_view name) const {
    std::size_t first = 0;
    while (first < image_features.size() && image_features[first] != name) ++first;
    std::size_t last = first;
    while (last < image_features.size() && image_features[last] == name) ++last;
    return {first, last};
  }
};

// Reads Examples as views of the record, decoding the image features images= names (in the
// table's threads, with threads=). Keys kept in a feature (key=NAME) are taken out as
// example_view_holder takes them.
class example_images_holder : public tablio::holder_storage<example_read> {
 public:
  static constexpr std::string_view extension = tablio::example_view_holder::extension;
  std::optional<tablio::image_options> images;
  std::vector<std::string> image_features;

  static void write(tablio::writer& w, bool binary, const value_type& v) {
    tablio::example_view_holder::write(w, binary, v.example);
  }
  static void encode_record(std::string& out, const value_type& v) {
    tablio::example_view_holder::encode_record(out, v.example);
  }
  static void encode_record(std::string& out, const value_type& v, std::string_view key_name,
                            std::string_view key) {
    tablio::example_view_holder::encode_record(out, v.example, key_name, key);
  }
  void read(tablio::reader& r) {
    bytes_.read(r);
    decode_record(bytes_.value(), r.name());
  }
  void decode_record(std::string_view bytes, const std::string& name) {
    value_.example.parse(bytes, name);
    value_.image_features.clear();
    if (!images) return value_.images.clear();
    value_.images.decode_all([&] {
      for (const tablio::feature_view& f : value_.example.features()) {
        if (f.kind != tablio::feature_kind::bytes || !is_image_feature(f.key)) continue;
        std::size_t i = 0;
        for (std::string_view encoded : f.bytes()) {
          value_.images.add(encoded, i++, *images, name);
          value_.image_features.push_back(f.key);
        }
      }
    });
  }
  std::string take_record_key(std::string_view key_name, const std::string& name) {
    return tablio::detail::take_key_feature(value_.example, key_name, name);
  }

 private:
  bool is_image_feature(std::string_view name) const {
    return std::find(image_features.begin(), image_features.end(), name) != image_features.end();
  }
  tablio::bytes_holder bytes_;  // an archive's copy of the bytes, which the view points into
};

// Read as a view of the record (no owned copy of it); written from an owned example.
struct example {
  using holder = example_images_holder;
  using owned_holder = tablio::example_holder;
  using value_type = example_read;

  static void configure(holder& h, const value_options& o) {
    h.images = o.images;
    h.image_features = o.image_features;
  }
  static bool failed(const value_type& r) { return r.images.error() != nullptr; }
  // Feature f's value: its images, when images= decodes it.
  static py::object feature_value(const value_type& r, const tablio::feature_view& f, const value_options& o,
                                  record_values& values) {
    if (f.kind == tablio::feature_kind::bytes && o.decodes_images(f.key)) {
      const auto range = r.images_of(f.key);  // not a structured binding: clang 14 cannot capture one
      const auto first = range.first;
      return image_feature_to_python(
          range.second - first, [&](std::size_t i) -> const tablio::image& { return r.images[first + i]; });
    }
    return feature_view_to_python(f, o, values);
  }
  // An owned example: taken over when an rvalue, copied when a table keeps it.
  template <class Example>
  requires std::is_same_v<std::remove_cvref_t<Example>, tablio::example>
  static py::object to_python(Example&& e, const value_options& o) {
    record_values values;
    if (o.view) {
      record_room room;
      for (const auto& [name, f] : e.features)
        if (o.keeps(name)) room.add(f, name, o);
      values = room.values();
    }
    return features_to_python(std::forward<Example>(e), o, values);
  }
  static py::object to_python(value_type&& r, const value_options& o) {
    r.images.throw_error();
    record_values values;
    if (o.view) {
      record_room room;
      for (const tablio::feature_view& f : r.example.features())
        if (o.keeps(f.key)) room.add(f, o);
      values = room.values();
    }
    py::dict out;
    for (const tablio::feature_view& f : r.example.features())
      if (o.keeps(f.key) &&
          PyDict_SetItem(out.ptr(), name_to_python(f.key).ptr(), feature_value(r, f, o, values).ptr()) != 0)
        throw py::error_already_set();
    return std::move(out);
  }
  static tablio::example from_python(py::handle h, const value_options&) { return features_from_python(h); }

  // A batch's features, one column per name, filled as records are read. A column whose
  // records all have it, as int64 or float values of one count, becomes an (N, count) array,
  // and as bytes values of one count and one length, an (N, count, length) uint8 array (what
  // TensorFlow's parse_example then decode_raw give); any other, a list with each record's
  // value (None where a record lacks it).
  class stacker {
   public:
    stacker(const value_options& o, std::size_t expected) : options_(o), expected_(expected) {}
    void add(value_type& r) {
      if (r.images.error() && !failed_) failed_ = r.images.error();
      std::size_t i = 0;
      for (const tablio::feature_view& f : r.example.features()) {
        if (!options_.keeps(f.key)) continue;
        if (f.kind == tablio::feature_kind::bytes && options_.decodes_images(f.key))
          image_column_for(f.key).add(records_, r, f.key);
        else
          column_for(f, i++).add(records_, f);
      }
      ++records_;
    }
    py::object finish() {
      if (failed_) std::rethrow_exception(failed_);  // a bad image fails its batch
      py::dict out;
      for (auto& [name, c] : columns_) out[name_to_python(name)] = c.finish(records_, options_);
      for (auto& [name, c] : image_columns_) out[name_to_python(name)] = c.finish(records_);
      return std::move(out);
    }

   private:
    // An image feature's column: an (N, H, W, C) array when every record has one image of one
    // shape, else a list with each record's value (None where a record lacks it).
    struct image_column {
      std::vector<std::uint32_t> records, counts;
      std::vector<std::vector<py::ssize_t>> dims;  // of each image
      std::vector<std::uint8_t> pixels;            // every image's, one after the other

      void add(std::size_t record, const example_read& r, std::string_view name) {
        auto [first, last] = r.images_of(name);
        records.push_back(static_cast<std::uint32_t>(record));
        counts.push_back(static_cast<std::uint32_t>(last - first));
        for (std::size_t i = first; i < last; ++i) {
          dims.push_back(image_dims(r.images[i]));
          pixels.insert(pixels.end(), r.images[i].pixels.begin(), r.images[i].pixels.end());
        }
      }
      py::object finish(std::size_t n) {
        bool uniform = records.size() == n && n != 0 &&
                       std::all_of(counts.begin(), counts.end(), [](std::uint32_t c) { return c == 1; }) &&
                       std::all_of(dims.begin(), dims.end(), [&](const auto& d) { return d == dims[0]; });
        if (uniform) {
          std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(n)};
          shape.insert(shape.end(), dims[0].begin(), dims[0].end());
          return adopt(std::move(pixels), shape);
        }
        py::list out(n);
        for (std::size_t i = 0; i < n; ++i) out[i] = py::none();
        std::size_t image = 0, at = 0;
        auto next_array = [&] {
          py::array_t<std::uint8_t> a = new_array<std::uint8_t>(dims[image++]);
          auto size = static_cast<std::size_t>(a.size());
          if (size != 0) std::memcpy(a.mutable_data(), pixels.data() + at, size);
          at += size;
          return a;
        };
        for (std::size_t i = 0; i < records.size(); ++i) {
          if (counts[i] == 1) {
            out[records[i]] = next_array();
            continue;
          }
          py::list list(counts[i]);
          for (std::size_t j = 0; j < counts[i]; ++j) list[j] = next_array();
          out[records[i]] = std::move(list);
        }
        return std::move(out);
      }
    };
    image_column& image_column_for(std::string_view name) {
      for (auto& [n, c] : image_columns_)
        if (n == name) return c;
      return image_columns_.emplace_back(std::string(name), image_column{}).second;
    }

    struct column {
      const raw_feature* raw = nullptr;            // decode_raw's entry for it
      std::size_t first = 0;                       // the record it first appeared in
      std::vector<std::uint32_t> records, counts;  // per value: its record, its length
      std::vector<tablio::feature_kind> kinds;
      std::vector<std::int64_t> ints;
      std::vector<float> floats;
      std::vector<std::uint8_t> bytes;   // every bytes value, one after the other
      std::vector<std::size_t> lengths;  // of each

      // Room for n records like f, so that a batch's columns are not copied as they grow.
      void reserve_like(const tablio::feature_view& f, std::size_t n) {
        records.reserve(n);
        counts.reserve(n);
        kinds.reserve(n);
        if (f.kind == tablio::feature_kind::int64s) ints.reserve(reservation<std::int64_t>(f.count, n));
        if (f.kind == tablio::feature_kind::floats) floats.reserve(reservation<float>(f.count, n));
        if (f.kind == tablio::feature_kind::bytes) {
          // The list's encoding: a little over its values.
          bytes.reserve(reservation<std::uint8_t>(f.data.size(), n));
          lengths.reserve(reservation<std::size_t>(f.count, n));
        }
      }
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
            bytes.insert(bytes.end(), b.begin(), b.end());
            lengths.push_back(b.size());
          }
        }
      }
      bool uniform(std::size_t n) const {
        if (records.size() != n || n == 0) return false;
        for (std::size_t i = 0; i < n; ++i)
          if (kinds[i] != kinds[0] || counts[i] != counts[0]) return false;
        if (kinds[0] == tablio::feature_kind::bytes)
          return !lengths.empty() &&
                 std::all_of(lengths.begin(), lengths.end(), [&](std::size_t l) { return l == lengths[0]; });
        return kinds[0] == tablio::feature_kind::int64s || kinds[0] == tablio::feature_kind::floats;
      }
      py::object finish(std::size_t n, const value_options& o) {
        if (uniform(n)) {
          std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(counts[0])};
          if (kinds[0] == tablio::feature_kind::int64s) return adopt(std::move(ints), shape);
          if (kinds[0] == tablio::feature_kind::floats) return adopt(std::move(floats), shape);
          if (raw && (raw->size != 1 || raw->kind != 'u' || o.scale || !raw->shape.empty())) {  // decoded
            std::vector<std::string_view> values(lengths.size());
            for (std::size_t i = 0; i < values.size(); ++i)
              values[i] = {reinterpret_cast<const char*>(bytes.data()) + i * lengths[0], lengths[0]};
            return decode_raw_values(values, shape, *raw, o.scale);
          }
          shape.push_back(static_cast<py::ssize_t>(lengths[0]));
          return adopt(std::move(bytes), shape);
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
          } else if (kinds[i] == tablio::feature_kind::bytes && raw) {
            std::vector<std::string_view> values(static_cast<std::size_t>(count));
            for (auto& v : values) {
              v = {reinterpret_cast<const char*>(bytes.data()) + bytes_at, lengths[value_at++]};
              bytes_at += v.size();
            }
            value = decode_raw_values(values, {count}, *raw, o.scale);
          } else if (kinds[i] == tablio::feature_kind::bytes) {
            py::list list(static_cast<std::size_t>(count));
            for (py::ssize_t j = 0; j < count; ++j) {
              std::size_t length = lengths[value_at++];
              list[static_cast<std::size_t>(j)] =
                  py::bytes(reinterpret_cast<const char*>(bytes.data()) + bytes_at, length);
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
    column& column_for(const tablio::feature_view& f, std::size_t i) {
      if (i < columns_.size() && columns_[i].first == f.key) return columns_[i].second;
      for (auto& [n, c] : columns_)
        if (n == f.key) return c;
      column& added = columns_.emplace_back(std::string(f.key), column{options_.raw(f.key)}).second;
      if (records_ == 0) added.reserve_like(f, expected_);  // a later one is likely ragged
      return added;
    }

    value_options options_;
    std::size_t expected_;
    std::size_t records_ = 0;
    std::vector<std::pair<std::string, column>> columns_;  // a handful: a list beats a map
    std::vector<std::pair<std::string, image_column>> image_columns_;
    std::exception_ptr failed_;
  };
};

// (context, feature_lists): feature_lists maps a name to a list of feature values.
struct sequence_example {
  using holder = tablio::sequence_example_holder;
  using value_type = tablio::sequence_example;
  // Taken over when an rvalue, copied when a table keeps it.
  template <class Sequence>
  requires std::is_same_v<std::remove_cvref_t<Sequence>, value_type>
  static py::object to_python(Sequence&& s, const value_options& o) {
    constexpr bool kept = std::is_const_v<std::remove_reference_t<Sequence>>;
    record_values values;
    if (o.view) {  // one buffer for the context and every list's values
      record_room room;
      for (const auto& [name, f] : s.context.features) room.add(f, name, o);
      for (const auto& [name, list] : s.feature_lists)
        for (const tablio::feature& f : list.features) room.add(f, name, o);
      values = room.values();
    }
    py::dict lists;
    for (auto& [name, list] : s.feature_lists) {
      py::list features(list.features.size());
      for (std::size_t i = 0; i < list.features.size(); ++i) {
        if constexpr (kept)
          features[i] = feature_to_python(list.features[i], name, o, values);
        else
          features[i] = feature_to_python(std::move(list.features[i]), name, o, values);
      }
      lists[name_to_python(name)] = std::move(features);
    }
    return py::make_tuple(features_to_python(std::forward<Sequence>(s).context, o, values), std::move(lists));
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

// A Datum read, and under images= its encoded image decoded. Datum is a tablio::datum_view
// (read in order: it views the record) or a tablio::datum (random access, written).
template <class Datum>
struct datum_read {
  Datum datum;
  decoded_images image;
};

// Decodes an encoded Datum's image, for images=.
template <class Datum>
void decode_datum_image(datum_read<Datum>& r, const tablio::image_options& options, std::string_view source) {
  r.image.decode_all([&] {
    if (r.datum.encoded) r.image.add(r.datum.data, 0, options, source);
  });
}

// The same Datum with its bytes held as To: a view of a Datum's, or a Datum of a view's own.
template <class To, class From>
tablio::basic_datum<To> datum_as(const tablio::basic_datum<From>& d) {
  tablio::basic_datum<To> out;
  out.channels = d.channels;
  out.height = d.height;
  out.width = d.width;
  out.data = To(d.data);
  out.label = d.label;
  out.float_data = d.float_data;
  out.encoded = d.encoded;
  const auto& p = d.present;
  out.present = {p.channels, p.height, p.width, p.data, p.label, p.encoded};
  out.unknown = To(d.unknown);
  return out;
}

// Reads Datums as views of the record, decoding encoded images under images= (in the table's
// threads, with threads=). A TFRecord record holds a Datum in its Example form, as
// example_record_holder<datum_holder> writes and reads it, whose key it gives up under key=.
class datum_images_holder : public tablio::holder_storage<datum_read<tablio::datum_view>> {
 public:
  static constexpr std::string_view extension = tablio::datum_view_holder::extension;
  std::optional<tablio::image_options> images;
  static void write(tablio::writer& w, bool binary, const value_type& v) {
    tablio::datum_view_holder::write(w, binary, v.datum);
  }
  static void encode_record(std::string& out, const value_type& v) {
    tablio::datum_view_holder::encode_record(out, v.datum);
  }
  static void encode_record(std::string& out, const value_type& v, std::string_view key_name,
                            std::string_view key) {
    tablio::example_record_holder<tablio::datum_holder>::encode_record(out, datum_as<std::string>(v.datum),
                                                                       key_name, key);
  }
  void read(tablio::reader& r) {
    bytes_.read(r);
    decode_record(bytes_.value(), r.name());
  }
  void decode_record(std::string_view bytes, const std::string& name) {
    if (tablio::is_example_record(bytes)) {  // as example_record_holder<datum_holder> reads it
      example_.decode_record(bytes, name);
      tablio::detail::check_form_example(example_.value(), name);
      tablio::example_form<tablio::datum_holder>::from_example(example_.value(), stored_, name);
      value_.datum = datum_as<std::string_view>(stored_);
    } else {
      example_.clear();
      tablio::decode_datum(bytes, value_.datum, name);
    }
    if (images)
      decode_datum_image(value_, *images, name);
    else
      value_.image.clear();
  }
  std::string take_record_key(std::string_view key_name, const std::string& name) {
    return example_.take_record_key(key_name, name);
  }

 private:
  tablio::bytes_holder bytes_;  // an archive's copy of the bytes, which the view points into
  tablio::example_holder example_;
  tablio::datum stored_;  // the Datum an Example held, which the view points into
};

// (ndarray[c, h, w] uint8, label), float32 when the Datum holds float_data, or (bytes, label)
// for an encoded image (its pixels under images=: (c, h, w) BGR, as Caffe's data layer gives
// them, unless asked otherwise). Read as a view of the record; written owned.
struct datum {
  using holder = datum_images_holder;
  using owned_holder = tablio::datum_holder;
  using value_type = datum_read<tablio::datum_view>;

  static void configure(holder& h, const value_options& o) { h.images = o.images; }
  static bool failed(const value_type& r) { return r.image.error() != nullptr; }

  enum class image_kind { bytes, floats, encoded };
  // A Datum's image as Python gets it: its bytes (or floats), or its decoded pixels.
  struct pixels {
    image_kind kind;
    std::string_view bytes;
    const std::vector<float>* floats;
    const tablio::image* decoded;
  };
  template <class Datum>
  static pixels pixels_of(const datum_read<Datum>& r) {
    r.image.throw_error();
    const Datum& d = r.datum;
    if (r.image.size() != 0) return {image_kind::bytes, {}, nullptr, &r.image[0]};
    image_kind k = d.encoded                                 ? image_kind::encoded
                   : !d.float_data.empty() && d.data.empty() ? image_kind::floats
                                                             : image_kind::bytes;
    return {k, d.data, &d.float_data, nullptr};
  }
  static std::string_view bytes_of(const pixels& p) {
    if (!p.decoded) return p.bytes;
    return {reinterpret_cast<const char*>(p.decoded->pixels.data()), p.decoded->pixels.size()};
  }
  // What Python gets: under scale=, float32 images for bytes and floats alike.
  static image_kind output_kind(const pixels& p, const value_options& o) {
    if (p.kind == image_kind::encoded && o.scale)
      throw tablio::usage_error(
          "scale= applies to raw images: this Datum holds an encoded image (images= decodes it)");
    return o.scale ? image_kind::floats : p.kind;
  }
  static std::size_t values_of(const pixels& p) {
    return p.kind == image_kind::floats ? p.floats->size() : bytes_of(p).size();
  }
  // An image's array shape, kept in place: one is taken per record.
  struct image_shape {
    py::ssize_t dims[3] = {};
    int rank = 0;
    bool operator==(const image_shape&) const = default;
    std::size_t values() const {
      std::size_t n = 1;
      for (int i = 0; i < rank; ++i) n *= static_cast<std::size_t>(dims[i]);
      return n;
    }
  };
  template <class Datum>
  static image_shape shape(const Datum& d, const pixels& p) {
    if (p.decoded) {
      std::vector<py::ssize_t> dims = image_dims(*p.decoded, true);
      return {{dims[0], dims[1], dims[2]}, 3};
    }
    std::size_t values = values_of(p);
    bool fits = d.channels >= 0 && d.height >= 0 && d.width >= 0 &&
                std::uint64_t(d.channels) * std::uint64_t(d.height) * std::uint64_t(d.width) == values;
    if (fits) return {{d.channels, d.height, d.width}, 3};
    return {{static_cast<py::ssize_t>(values)}, 1};  // dimensions that do not describe the data
  }
  // Each value times scale, in float as Caffe's DataTransformer computes it.
  static void scale_into(const pixels& p, float scale, float* out) {
    if (p.kind == image_kind::floats) {
      for (std::size_t i = 0; i < p.floats->size(); ++i) out[i] = (*p.floats)[i] * scale;
    } else {
      std::string_view b = bytes_of(p);
      const auto* values = reinterpret_cast<const std::uint8_t*>(b.data());
      for (std::size_t i = 0; i < b.size(); ++i) out[i] = static_cast<float>(values[i]) * scale;
    }
  }
  template <class T>
  static py::object filled(const T* values, const image_shape& shape) {
    py::array_t<T> out = new_array<T>(shape.dims, shape.rank);
    if (out.size() != 0)
      std::memcpy(out.mutable_data(), values, static_cast<std::size_t>(out.size()) * sizeof(T));
    return std::move(out);
  }
  template <class Datum>
  static py::object image(const datum_read<Datum>& r, const value_options& o) {
    pixels p = pixels_of(r);
    switch (output_kind(p, o)) {
      case image_kind::encoded:
        return py::bytes(p.bytes.data(), p.bytes.size());
      case image_kind::floats:
        if (o.scale) {
          image_shape s = shape(r.datum, p);
          py::array_t<float> out = new_array<float>(s.dims, s.rank);
          scale_into(p, *o.scale, out.mutable_data());
          return std::move(out);
        }
        return filled(p.floats->data(), shape(r.datum, p));
      default:
        return filled(reinterpret_cast<const std::uint8_t*>(bytes_of(p).data()), shape(r.datum, p));
    }
  }
  static py::object to_python(value_type&& r, const value_options& o) {
    return py::make_tuple(image(r, o), r.datum.label);
  }
  // Random access: the image decoded here, at the lookup.
  static py::object to_python(const tablio::datum& d, const value_options& o) {
    datum_read<tablio::datum_view> r{datum_as<std::string_view>(d), {}};
    if (o.images && d.encoded) {
      unlocked_gil unlocked;
      decode_datum_image(r, *o.images, "");
    }
    return to_python(std::move(r), o);
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

  // (images, labels): images of one shape and kind, unencoded (or decoded), stacked into an
  // (N, c, h, w) array as they are read (scaled to float32 under scale=); any other batch's
  // images as a list. Labels: an (N,) int64 array, the dtype a label alone takes in a
  // DataLoader batch. A bad image fails the batch where it is converted.
  class stacker {
   public:
    stacker(const value_options& o, std::size_t expected) : options_(o), expected_(expected) {
      labels_.reserve(expected);
    }
    void add(value_type& r) {
      labels_.push_back(r.datum.label);
      if (rest_.empty() && !r.image.error()) {
        pixels p = pixels_of(r);
        if (stacks(r.datum, p)) {
          if (options_.scale) {
            std::size_t at = floats_.size();
            floats_.resize(at + values_of(p));
            scale_into(p, *options_.scale, floats_.data() + at);
          } else if (kind_ == image_kind::floats) {
            floats_.insert(floats_.end(), p.floats->begin(), p.floats->end());
          } else {
            std::string_view b = bytes_of(p);
            pixels_.insert(pixels_.end(), b.begin(), b.end());
          }
          ++stacked_;
          return;
        }
      }
      rest_.emplace_back();  // from the first that does not stack on (or fails), each on its own
      rest_.back().datum = datum_as<std::string>(r.datum);
      std::swap(rest_.back().image, r.image);
    }
    py::object finish() {
      py::ssize_t n = static_cast<py::ssize_t>(labels_.size());
      py::object labels = adopt(std::move(labels_), {n});
      if (rest_.empty() && stacked_ != 0) {
        std::vector<py::ssize_t> all{n};
        all.insert(all.end(), shape_.dims, shape_.dims + shape_.rank);
        if (kind_ == image_kind::floats) return py::make_tuple(adopt(std::move(floats_), all), labels);
        return py::make_tuple(adopt(std::move(pixels_), all), labels);
      }
      py::list images(static_cast<std::size_t>(n));
      std::size_t each = shape_.values();
      for (std::size_t i = 0; i < stacked_; ++i)
        images[i] = kind_ == image_kind::floats ? filled(floats_.data() + i * each, shape_)
                                                : filled(pixels_.data() + i * each, shape_);
      for (std::size_t i = 0; i < rest_.size(); ++i) images[stacked_ + i] = image(rest_[i], options_);
      return py::make_tuple(std::move(images), labels);
    }

   private:
    bool stacks(const tablio::datum_view& d, const pixels& p) {
      image_kind k = output_kind(p, options_);
      if (k == image_kind::encoded) return false;
      if (stacked_ == 0) {
        kind_ = k;
        shape_ = shape(d, p);
        if (k == image_kind::floats)
          floats_.reserve(reservation<float>(values_of(p), expected_));
        else
          pixels_.reserve(reservation<std::uint8_t>(values_of(p), expected_));
        return true;
      }
      return k == kind_ && shape(d, p) == shape_;
    }
    value_options options_;
    std::size_t expected_;
    std::vector<std::int64_t> labels_;
    image_kind kind_ = image_kind::bytes;
    image_shape shape_;
    std::vector<std::uint8_t> pixels_;
    std::vector<float> floats_;
    std::size_t stacked_ = 0;
    std::vector<datum_read<tablio::datum>> rest_;
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

// A sample's record (types/sample.hpp), checked whole.
void check_sample_record(std::string_view record, const std::string& name) {
  tablio::for_each_sample_member(record, name, 0, [](std::string_view, std::string_view) {});
}

// A sample's record, kept as its bytes: what is written, and what random access reads (taken
// over from a tar table, which builds it from the sample's members, rather than copied).
class sample_record_holder : public tablio::bytes_holder {
 public:
  static constexpr std::string_view extension = tablio::webdataset_sample::tar_extension;
  void read(tablio::reader& r) {
    bytes_holder::read(r);
    check_sample_record(value_, r.name());
  }
  void decode_record(std::string_view bytes, const std::string& name) {
    check_sample_record(bytes, name);
    bytes_holder::decode_record(bytes, name);
  }
  void take_record(std::string& record, const std::string& name) {
    check_sample_record(record, name);
    bytes_holder::take_record(record, name);
  }
};

// A sample read in order: its members' data as views into the reader's windows, which `keeper`
// keeps until the sample is converted, where the tar table gives them so; else its record.
struct sample_read {
  std::string record;
  std::vector<std::pair<std::string, std::string_view>> members;  // extension, data
  tablio::keeper keeper;
  decoded_images images;  // images=: the image members decoded

  void let_go() {  // of the windows: the views go with them
    members.clear();
    keeper.reset();
  }
};

// Whether a sample member holds an image images= decodes: WebDataset's extensions for them, alone
// or last ("left.jpg").
bool is_image_member(std::string_view extension) {
  for (std::string_view image : {"jpg", "jpeg", "png"})
    if (extension == image || (extension.size() > image.size() && extension.ends_with(image) &&
                               extension[extension.size() - image.size() - 1] == '.'))
      return true;
  return false;
}

// Decodes a sample's image members, for images=.
void decode_images(sample_read& v, const tablio::image_options& options, std::string_view source) {
  v.images.decode_all([&] {
    auto decode = [&](std::size_t ordinal, std::string_view extension, std::string_view data) {
      if (is_image_member(extension)) v.images.add(data, ordinal, options, source);
    };
    if (!v.members.empty()) {
      for (std::size_t i = 0; i < v.members.size(); ++i) decode(i, v.members[i].first, v.members[i].second);
      return;
    }
    std::size_t at = 0;
    for (std::size_t i = 0; at < v.record.size(); ++i) {
      auto [extension, data] = tablio::detail::sample_member_at(v.record, at);
      decode(i, extension, data);
    }
  });
}

class sample_parts_holder : public tablio::holder_storage<sample_read> {
 public:
  static constexpr std::string_view extension = tablio::webdataset_sample::tar_extension;
  // images=: decode image members as they are read (in the table's threads, with threads=).
  std::optional<tablio::image_options> images;
  static void write(tablio::writer& w, bool binary, const sample_read& v) {
    tablio::bytes_holder::write(w, binary, v.record);
  }
  void read(tablio::reader& r) {
    records_.read(r);
    take_record(records_.value(), r.name());
  }
  static void encode_record(std::string& out, const sample_read& v) { out = v.record; }
  void decode_record(std::string_view bytes, const std::string& name) {
    check_sample_record(bytes, name);
    value_.let_go();
    value_.record.assign(bytes);
    decoded(name);
  }
  void take_record(std::string& record, const std::string& name) {
    check_sample_record(record, name);
    value_.let_go();
    value_.record.swap(record);
    decoded(name);
  }
  template <class Parts>
  void take_parts(const Parts& parts, tablio::keeper keeper, const std::string& name) {
    value_.record.clear();
    value_.members.resize(parts.size());
    for (std::size_t i = 0; i < parts.size(); ++i) {
      if (!tablio::is_sample_extension(parts[i].name))
        tablio::throw_format_error(name, 0, {}, {"a sample member (extension and data lengths)"},
                                   {"an empty extension, or one with '/' or NUL"});
      value_.members[i].first.assign(parts[i].name);
      value_.members[i].second = parts[i].bytes;
    }
    value_.keeper = std::move(keeper);
    decoded(name);
  }

 private:
  void decoded(const std::string& name) {
    if (images)
      decode_images(value_, *images, name);
    else
      value_.images.clear();
  }

  tablio::bytes_holder records_;
};

// A sample as {extension: bytes}, in member order, converted straight from its members' views
// or its record: a member is copied once, into its bytes object. Written from a mapping whose
// values are bytes-like, or anything tablio.sample.encode_member makes bytes of (an int for
// "cls", a str, an object for "json", an ndarray for "npy"), as WebDataset's writer encodes them.
struct sample {
  using holder = sample_parts_holder;
  using owned_holder = sample_record_holder;
  using value_type = std::string;

  // The extensions' str objects, made once each: samples repeat a few extensions.
  class extension_names {
   public:
    py::handle operator()(std::string_view extension) {
      for (auto& [name, object] : seen_)
        if (name == extension) return object;
      if (seen_.size() == 16) seen_.clear();
      seen_.emplace_back(std::string(extension),
                         key_to_python(extension));  // bytes not UTF-8, as keys have them
      return seen_.back().second;
    }

   private:
    std::vector<std::pair<std::string, py::str>> seen_;
  };

  static void set_member(py::dict& out, py::handle name, std::string_view data) {
    py::bytes member(data.data(), data.size());
    if (PyDict_SetItem(out.ptr(), name.ptr(), member.ptr()) != 0) throw py::error_already_set();
  }
  static py::object to_dict(std::string_view record, extension_names& names) {
    py::dict out;
    std::size_t at = 0;
    while (at < record.size()) {  // checked when it was read
      auto [extension, data] = tablio::detail::sample_member_at(record, at);
      set_member(out, names(extension), data);
    }
    return std::move(out);
  }
  static py::object to_dict(const sample_read& v, extension_names& names) {
    v.images.throw_error();
    if (v.members.empty() && v.images.size() == 0) return to_dict(v.record, names);
    py::dict out;
    std::size_t next = 0;  // image
    auto add = [&](std::size_t i, std::string_view extension, std::string_view data) {
      if (next < v.images.size() && v.images.from(next) == i) {
        if (PyDict_SetItem(out.ptr(), names(extension).ptr(), image_array(v.images[next++]).ptr()) != 0)
          throw py::error_already_set();
      } else {
        set_member(out, names(extension), data);
      }
    };
    if (v.members.empty()) {
      std::size_t at = 0;
      for (std::size_t i = 0; at < v.record.size(); ++i) {
        auto [extension, data] = tablio::detail::sample_member_at(v.record, at);
        add(i, extension, data);
      }
    } else {
      for (std::size_t i = 0; i < v.members.size(); ++i) add(i, v.members[i].first, v.members[i].second);
    }
    return std::move(out);
  }
  static py::object to_python(std::string_view record, const value_options& o) {
    extension_names names;
    if (!o.images) return to_dict(record, names);
    thread_local sample_read looked_up;  // random access: images decoded here
    looked_up.let_go();
    looked_up.record.assign(record);
    {
      unlocked_gil unlocked;
      decode_images(looked_up, *o.images, "");
    }
    return to_dict(looked_up, names);
  }
  // The holder decodes images= in the table's threads.
  static void configure(holder& h, const value_options& o) { h.images = o.images; }
  static bool failed(const sample_read& v) { return v.images.error() != nullptr; }
  static py::object to_python(sample_read&& v, const value_options&) {
    extension_names names;
    py::object out = to_dict(v, names);
    v.let_go();
    return out;
  }

  // A batch's samples, kept by swapping each with one of a pool each thread keeps (whose
  // record storage the table then reuses): no copy and, batch after batch, no allocation per
  // sample. The windows they view are let go of once they are converted: at the end, or, in a
  // batch so large that it keeps more than max_windows of them, as that many fill (the GIL is
  // taken for it). A batch read while another is converted (by Python code run meanwhile, such
  // as a garbage collector's callback) keeps its samples apart.
  class stacker {
   public:
    static constexpr std::size_t max_windows = 256;  // 64 MB of the reader's 256 KB windows

    stacker(const value_options&, std::size_t) {
      pool& shared = thread_pool();
      if (!shared.in_use) {
        shared.in_use = true;
        samples_ = &shared.samples;
      }
    }
    ~stacker() {
      for (std::size_t i = 0; i < size_; ++i) (*samples_)[i].let_go();
      if (samples_ != &own_) thread_pool().in_use = false;
    }
    stacker(const stacker&) = delete;
    stacker& operator=(const stacker&) = delete;

    void add(sample_read& v) {  // without the GIL
      if (v.keeper && v.keeper.get() != last_window_ && ++windows_ > max_windows) {
        py::gil_scoped_acquire locked;
        convert();
      }
      if (v.keeper) last_window_ = v.keeper.get();
      if (size_ == samples_->size()) samples_->emplace_back();
      std::swap((*samples_)[size_++], v);
    }
    py::object finish() {
      convert();
      std::size_t kept = 0;  // bounded: a batch of large samples is not kept
      for (sample_read& v : *samples_)
        if ((kept += v.record.capacity()) > (std::size_t{64} << 20)) std::string().swap(v.record);
      return std::move(out_);
    }

   private:
    // Converts the samples read since the last time, and lets their windows go.
    void convert() {
      for (std::size_t i = 0; i < size_; ++i) {
        out_.append(to_dict((*samples_)[i], names_));
        (*samples_)[i].let_go();
      }
      size_ = 0;
      windows_ = 0;
    }

    struct pool {
      std::vector<sample_read> samples;
      bool in_use = false;
    };
    static pool& thread_pool() {
      thread_local pool shared;
      return shared;
    }
    std::vector<sample_read> own_;
    std::vector<sample_read>* samples_ = &own_;
    std::size_t size_ = 0;
    std::size_t windows_ = 0;  // windows the samples since the last conversion view
    const void* last_window_ = nullptr;
    py::list out_;
    extension_names names_;
  };

  static value_type from_python(py::handle h, const value_options&) {
    if (!py::isinstance<py::dict>(h) && !py::hasattr(h, "items"))
      throw py::type_error(
          "sample: expected a mapping of extension to value, such as {\"jpg\": data, \"cls\": 3}");
    tablio::webdataset_sample members;
    py::object encode;
    for (auto item : h.attr("items")()) {
      auto pair = py::reinterpret_borrow<py::tuple>(item);
      std::string extension = key_from_python(pair[0]);  // as keys: surrogates stand for bytes not UTF-8
      py::object value = pair[1];
      if (!PyBytes_Check(value.ptr())) {
        if (!encode) encode = py::module_::import("tablio.sample").attr("encode_member");
        value = encode(extension, value);
      }
      members.set(extension, std::string(py::reinterpret_borrow<py::bytes>(value)));
    }
    std::string record;
    tablio::encode_sample(members, record);  // refuses an empty extension, or one with '/'
    return record;
  }
};

}  // namespace

void register_tensorflow_types() {
  register_value_type("example", entry_for<example>());
  register_value_type("sequence-example", entry_for<sequence_example>());
  register_value_type("datum", entry_for<datum>());
  register_value_type("bytes", entry_for<bytes>());
  register_value_type("sample", entry_for<sample>());
}

}  // namespace tablio_python
