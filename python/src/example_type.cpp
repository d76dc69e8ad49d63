// TensorFlow's Example as a Python value: a tf.Example as a dict of feature name to an int64 or
// float32 ndarray or a list of bytes.
#include "arrays.hpp"
#include "binding.hpp"
#include "decode_raw.hpp"
#include "features.hpp"
#include "images.hpp"
#include "record_values.hpp"
#include "records.hpp"
#include "tables.hpp"

#include <tablio/holder/bytes.hpp>
#include <tablio/holder/example.hpp>
#include <tablio/holder/keyed_decoding.hpp>
#include <tablio/types/example_view.hpp>
#include <tablio/types/image.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace tablio_python {
namespace {

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
  void at_key(std::string_view key) {
    keyed_.at_key(key, [this](const std::string& name) { decode_images(name); });
  }
  void at_offset(std::uint64_t offset) noexcept { value_.images.at_offset(offset); }

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
    value_.images.clear();
    if (images) keyed_.read(name, [this](const std::string& source) { decode_images(source); });
  }
  std::string take_record_key(std::string_view key_name, const std::string& name) {
    return tablio::detail::take_key_feature(value_.example, key_name, name);
  }

 private:
  void decode_images(const std::string& name) {
    value_.images.decode_all([&] {
      for (const tablio::feature_view& f : value_.example.features()) {
        if (f.kind != tablio::feature_kind::bytes || !is_image_feature(f.key)) continue;
        std::size_t i = 0;
        for (std::string_view encoded : f.bytes()) {
          value_.images.add(encoded, i++, *images, name, keyed_.key());
          value_.image_features.push_back(f.key);
        }
      }
    });
  }
  bool is_image_feature(std::string_view name) const {
    return std::find(image_features.begin(), image_features.end(), name) != image_features.end();
  }
  tablio::bytes_holder bytes_;    // an archive's copy of the bytes, which the view points into
  tablio::keyed_decoding keyed_;  // the entry's key, for images' draws
};

// Read as a view of the record (no owned copy of it); written from an owned example.
struct example {
  using holder = example_images_holder;
  using owned_holder = tablio::example_holder;
  static constexpr bool images_when_converted = true;  // random access: at conversion
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
    // An image feature's column: an (N, H, W, C) array (uint8 pixels, or a transform's float32
    // values) when every record has one image of one shape, else a list with each record's
    // value (None where a record lacks it).
    struct image_column {
      std::vector<std::uint32_t> records, counts;
      std::vector<std::vector<py::ssize_t>> dims;  // of each image
      std::vector<std::uint8_t> pixels;            // every image's, one after the other...
      std::vector<float> values;                   // ...or its values, where a transform gives floats

      void add(std::size_t record, const example_read& r, std::string_view name) {
        auto [first, last] = r.images_of(name);
        records.push_back(static_cast<std::uint32_t>(record));
        counts.push_back(static_cast<std::uint32_t>(last - first));
        for (std::size_t i = first; i < last; ++i) {
          const tablio::image& im = r.images[i];
          dims.push_back(image_dims(im));
          pixels.insert(pixels.end(), im.pixels.begin(), im.pixels.end());
          values.insert(values.end(), im.values.begin(), im.values.end());
        }
      }
      py::object finish(std::size_t n) { return values.empty() ? finish(n, pixels) : finish(n, values); }

     private:
      template <class T>
      py::object finish(std::size_t n, std::vector<T>& all) {
        bool uniform = records.size() == n && n != 0 &&
                       std::all_of(counts.begin(), counts.end(), [](std::uint32_t c) { return c == 1; }) &&
                       std::all_of(dims.begin(), dims.end(), [&](const auto& d) { return d == dims[0]; });
        if (uniform) {
          std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(n)};
          shape.insert(shape.end(), dims[0].begin(), dims[0].end());
          return adopt(std::move(all), shape);
        }
        py::list out(n);
        for (std::size_t i = 0; i < n; ++i) out[i] = py::none();
        std::size_t image = 0, at = 0;
        auto next_array = [&] {
          py::array_t<T> a = new_array<T>(dims[image++]);
          auto size = static_cast<std::size_t>(a.size());
          if (size != 0) std::memcpy(a.mutable_data(), all.data() + at, size * sizeof(T));
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

}  // namespace

void register_example_type() { register_value_type("example", with_records<example>(entry_for<example>())); }

}  // namespace tablio_python
