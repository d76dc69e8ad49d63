// Caffe's Datum as a Python value: (ndarray[c, h, w], label), or (bytes, label) when encoded.
#include "arrays.hpp"
#include "binding.hpp"
#include "images.hpp"
#include "records.hpp"
#include "tables.hpp"

#include <tablio/holder/bytes.hpp>
#include <tablio/holder/datum.hpp>
#include <tablio/holder/example.hpp>
#include <tablio/holder/example_form.hpp>
#include <tablio/holder/keyed_decoding.hpp>
#include <tablio/types/datum.hpp>
#include <tablio/types/datum_image.hpp>
#include <tablio/types/image.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tablio_python {
namespace {

// A Datum read, and under images= its encoded image decoded. Datum is a tablio::datum_view
// (read in order: it views the record) or a tablio::datum (random access, written).
template <class Datum>
struct datum_read {
  Datum datum;
  decoded_images image;
};

// Decodes an encoded Datum's image, for images=.
template <class Datum>
void decode_datum_image(datum_read<Datum>& r, const tablio::image_options& options, std::string_view source,
                        std::string_view key) {
  r.image.decode_all([&] {
    if (r.datum.encoded)
      r.image.add(r.datum.data, 0, options, source, key);
    else if (options.transform && options.transform->any())
      tablio::transform_raw_datum(r.datum, *options.transform, options.channels_first, r.image.add_made(0),
                                  source, key);
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
  void at_key(std::string_view key) {
    keyed_.at_key(key, [this](const std::string& name) { decode_image(name); });
  }
  void at_offset(std::uint64_t offset) noexcept { value_.image.at_offset(offset); }
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
      // The image's bytes move to stored_; the key stays for take_record_key.
      tablio::example_form<tablio::datum_holder>::from_example(std::move(example_.value()), stored_, name);
      value_.datum = datum_as<std::string_view>(stored_);
    } else {
      example_.clear();
      tablio::decode_datum(bytes, value_.datum, name);
    }
    value_.image.clear();
    if (images) keyed_.read(name, [this](const std::string& source) { decode_image(source); });
  }
  std::string take_record_key(std::string_view key_name, const std::string& name) {
    return example_.take_record_key(key_name, name);
  }

 private:
  void decode_image(const std::string& name) { decode_datum_image(value_, *images, name, keyed_.key()); }

  tablio::keyed_decoding keyed_;  // the entry's key, for images' draws
  tablio::bytes_holder bytes_;    // an archive's copy of the bytes, which the view points into
  tablio::example_holder example_;
  tablio::datum stored_;  // the Datum an Example held, which the view points into
};

// A Datum's label is an int32, as Caffe holds it: any other number is refused, never cut.
std::int32_t label_from_python(py::handle h) {
  py::object n = py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr()));  // ints, numpy's integers
  if (!n) {
    PyErr_Clear();
    throw py::type_error("datum: the label is an int, not " +
                         std::string(py::str(py::type::handle_of(h).attr("__name__"))));
  }
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(n.ptr(), &overflow);
  if (overflow != 0 || v < INT32_MIN || v > INT32_MAX)
    throw py::value_error("datum: the label " + std::string(py::str(n)) + " does not fit in int32");
  return static_cast<std::int32_t>(v);
}

// A Datum's pixels are bytes, 0 to 255, as Caffe holds them: an integer array of another dtype
// is checked to hold only such values, never wrapped.
std::string pixels_from_python(const py::array& a) {
  const char kind = a.dtype().kind();
  if (a.size() != 0 && kind != 'u' && kind != 'i' && kind != 'b')
    throw py::type_error(
        "datum: pixels are integers 0 to 255 (or floats, for float_data), not an array of dtype " +
        std::string(py::str(py::handle(a.dtype()))));
  if ((kind == 'u' && a.itemsize() == 1) || kind == 'b') {
    auto bytes = as_array<std::uint8_t>(a, 3, "datum");
    return std::string(reinterpret_cast<const char*>(bytes.data()), static_cast<std::size_t>(bytes.size()));
  }
  auto wide = as_array<std::int64_t>(a, 3, "datum");
  std::string out(static_cast<std::size_t>(wide.size()), '\0');
  const std::int64_t* p = wide.data();
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (p[i] < 0 || p[i] > 255)
      throw py::value_error("datum: the pixel " + std::to_string(p[i]) + " does not fit in uint8 (0 to 255)");
    out[i] = static_cast<char>(static_cast<std::uint8_t>(p[i]));
  }
  return out;
}

// (ndarray[c, h, w] uint8, label), float32 when the Datum holds float_data, or (bytes, label)
// for an encoded image (its pixels under images=: (c, h, w) BGR, as Caffe's data layer gives
// them, unless asked otherwise). Read as a view of the record; written owned.
struct datum {
  using holder = datum_images_holder;
  using owned_holder = tablio::datum_holder;
  static constexpr bool images_when_converted = true;  // random access: at conversion
  using value_type = datum_read<tablio::datum_view>;

  static void configure(holder& h, const value_options& o) { h.images = o.images; }
  // Nothing of a value to refill: declared so that the table keeps pools, which batches use.
  static void reuse(value_type&, const value_options&) {}
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
    if (r.image.size() != 0) {
      const tablio::image& im = r.image[0];
      if (!im.values.empty()) return {image_kind::floats, {}, &im.values, &im};
      return {image_kind::bytes, {}, nullptr, &im};
    }
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
      r.image.at_offset(looked_up_offset());
      decode_datum_image(r, *o.images, "", looked_up_key());
    }
    return to_python(std::move(r), o);
  }
  static tablio::datum from_python(py::handle h, const value_options&) {
    auto pair = py::cast<py::tuple>(h);
    if (pair.size() != 2) throw py::value_error("datum: expected (image, label)");
    tablio::datum d;
    d.label = label_from_python(pair[1]);
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
      d.data = pixels_from_python(a);
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
        if (kind_ == image_kind::floats)
          return py::make_tuple(adopt(std::move(floats_), all, options_), labels);
        return py::make_tuple(adopt(std::move(pixels_), all, options_), labels);
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
        // A transform's outputs are of the size it was given, not one the input claims: room
        // for the whole batch at once, rather than copies as it grows.
        // The memory of a batch freed since is taken back, touched already.
        const bool transformed =
            options_.images && options_.images->transform && options_.images->transform->any();
        const std::size_t each = values_of(p);
        if (k == image_kind::floats) {
          tablio_python::reuse(floats_, options_);
          floats_.clear();
          floats_.reserve(transformed ? each * expected_ : reservation<float>(each, expected_));
        } else {
          tablio_python::reuse(pixels_, options_);
          pixels_.clear();
          pixels_.reserve(transformed ? each * expected_ : reservation<std::uint8_t>(each, expected_));
        }
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

}  // namespace

void register_datum_type() { register_value_type("datum", with_records<datum>(entry_for<datum>())); }

}  // namespace tablio_python
