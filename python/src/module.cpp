// The tablio._tablio extension module: table classes over every value type, IDX arrays,
// and C++ exceptions as Python exceptions that keep path, offset and key.
#include "arrays.hpp"
#include "binding.hpp"

#include <tablio/core/version.hpp>
#include <tablio/stream/platform/process.hpp>
#include <tablio/table/formats.hpp>
#include <tablio/table/record_form.hpp>
#include <tablio/table/segments.hpp>  // segments=: this module reads them
#include <tablio/types/image_transform.hpp>

#include <Python.h>

#include <cstring>

namespace tablio_python {

// ---- value options

namespace {

// decode_raw's element types: those of TensorFlow's decode_raw that numpy has.
raw_feature raw_feature_from(py::handle name, py::handle dtype) {
  raw_feature r{key_from_python(name)};
  py::dtype d = py::dtype::from_args(py::reinterpret_borrow<py::object>(dtype));
  if (py::object sub = d.attr("subdtype"); !sub.is_none()) {  // (numpy.uint8, (28, 28)): each value's shape
    d = py::reinterpret_borrow<py::dtype>(sub[py::int_(0)]);
    for (py::handle extent : py::reinterpret_borrow<py::tuple>(sub[py::int_(1)]))
      r.shape.push_back(extent.cast<py::ssize_t>());
  }
  r.kind = d.kind();
  r.size = static_cast<int>(d.itemsize());
  bool integer =
      (r.kind == 'u' || r.kind == 'i') && (r.size == 1 || r.size == 2 || r.size == 4 || r.size == 8);
  if (!integer && !(r.kind == 'f' && (r.size == 4 || r.size == 8)))
    throw tablio::usage_error("decode_raw: feature '" + r.name + "' cannot be decoded as " +
                              std::string(py::str(py::handle(d))) +
                              ": use an integer type, float32 or float64");
  return r;
}

// features=[name, ...]: the names of an Example's features to read.
std::vector<std::string> feature_names_from(py::handle names) {
  if (py::isinstance<py::str>(names) || py::isinstance<py::bytes>(names) ||
      !py::isinstance<py::iterable>(names))
    throw tablio::usage_error("features= is a list of feature names, such as [\"image_raw\", \"label\"]");
  std::vector<std::string> out;
  for (py::handle name : names) {
    if (!py::isinstance<py::str>(name) && !py::isinstance<py::bytes>(name))
      throw tablio::usage_error("features=: a feature name is str (or bytes), not " +
                                std::string(py::str(py::type::of(name).attr("__name__"))));
    out.push_back(key_from_python(name));
  }
  return out;
}

value_options finish_options(value_options o, py::handle compression_method, const std::string& type);

value_options options_from(py::handle dtype, py::handle compression_method, const std::string& type,
                           py::handle scale = py::none(), py::handle decode_raw = py::none(),
                           bool view = false, py::handle features = py::none()) {
  value_options o;
  if (!features.is_none()) {
    if (type != "example")
      throw tablio::usage_error("features= applies to type 'example', not '" + type + "'");
    o.features = feature_names_from(features);
  }
  if (view && type != "example" && type != "sequence-example")
    throw tablio::usage_error("view=True applies to types 'example' and 'sequence-example', not '" + type +
                              "'");
  o.view = view;
  if (!decode_raw.is_none()) {
    if (type != "example")
      throw tablio::usage_error("decode_raw= applies to type 'example', not '" + type + "'");
    for (auto [name, d] : py::cast<py::dict>(decode_raw)) {
      o.decode_raw.push_back(raw_feature_from(name, d));
      if (!o.keeps(o.decode_raw.back().name))
        throw tablio::usage_error("decode_raw names feature '" + o.decode_raw.back().name +
                                  "', which features= leaves out");
    }
  }
  if (!scale.is_none()) {
    if (type != "datum" && !(type == "example" && !o.decode_raw.empty()))
      throw tablio::usage_error(
          "scale= applies to datum images and to an example's decode_raw features, not to type '" + type +
          "'");
    o.scale = py::cast<float>(scale);
  }
  if (!dtype.is_none()) {
    py::dtype d = py::dtype::from_args(py::reinterpret_borrow<py::object>(dtype));
    o.dtype_given = true;
    // int16: kaldiio's layout of waves, for type "wave", and for "auto" (whose matrices and
    // vectors then come in the precision stored).
    o.int16_samples = (type == "wave" || type == "auto") && d.kind() == 'i' && d.itemsize() == 2;
    if (o.int16_samples) return finish_options(o, compression_method, type);
    if (d.kind() != 'f' || (d.itemsize() != 4 && d.itemsize() != 8))
      throw tablio::usage_error(
          "dtype must be numpy.float32 or numpy.float64 (or numpy.int16 for type 'wave' or 'auto'), not " +
          std::string(py::str(py::handle(d))));
    o.double_precision = d.itemsize() == 8;
  }
  return finish_options(o, compression_method, type);
}

// The compression method, checked to apply to the type.
value_options finish_options(value_options o, py::handle compression_method, const std::string& type) {
  if (!compression_method.is_none()) {
    if (type != "matrix" && type != "compressed-matrix")
      throw tablio::usage_error(
          "compression_method= applies to types 'matrix' and 'compressed-matrix', not '" + type + "'");
    if (!PyIndex_Check(compression_method.ptr()) || PyBool_Check(compression_method.ptr()))
      throw py::type_error("compression_method is an int, one of Kaldi's methods 1 to 7, not " +
                           std::string(py::repr(compression_method)).substr(0, 40));
    py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(compression_method.ptr()));
    if (!index) throw py::error_already_set();
    const std::string shown = py::str(index);
    if (shown.size() != 1 || shown[0] < '1' || shown[0] > '7')
      throw tablio::usage_error("compression_method is one of Kaldi's methods 1 to 7, not " +
                                shown.substr(0, 40));
    o.compression_method = shown[0] - '0';
  }
  return o;
}

// The limits a `limits=` dict asks for: the defaults (or the untrusted policy's) with those it
// names tightened or loosened.
tablio::limits limits_from(py::handle given) {
  tablio::limits lim = tablio::default_limits;
  if (given.is_none()) return lim;
  if (!py::isinstance<py::dict>(given))
    throw tablio::usage_error("limits= is a dict such as {'record_bytes': 1 << 24, 'expansion': 100}");
  for (auto [name, value] : py::cast<py::dict>(given)) {
    std::string n = py::str(name);
    if (n == "request_deadline" || n == "stream_deadline") continue;  // remote_options'
    if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value) ||
        py::cast<py::int_>(value) < py::int_(0))
      throw tablio::usage_error("limits['" + n + "'] is a number of 0 or more");
    std::uint64_t v = py::cast<std::uint64_t>(value);
    if (n == "record_bytes")
      lim.max_record_bytes = v;
    else if (n == "element_count")
      lim.max_element_count = v;
    else if (n == "token_bytes")
      lim.max_token_bytes = static_cast<std::size_t>(v);
    else if (n == "total_bytes")
      lim.max_total_bytes = v;
    else if (n == "expansion")
      lim.max_expansion = v;
    else if (n == "table_expansion")
      lim.max_table_expansion = v;
    else
      throw tablio::usage_error(
          "limits= takes record_bytes, element_count, token_bytes, total_bytes, "
          "expansion, table_expansion, request_deadline and stream_deadline, not '" +
          n + "'");
  }
  return lim;
}

}  // namespace

// Which names a table may open (remote objects, commands, the folder they must lie in) and
// the limits of what it reads.
tablio::open_options access_from(bool allow_network, bool allow_pipes, py::handle confine,
                                 py::handle limits) {
  tablio::open_options o;
  o.allow_network = allow_network;
  o.allow_pipes = allow_pipes;
  if (!confine.is_none())
    o.confine = py::cast<std::string>(py::module_::import("os").attr("fspath")(confine));
  o.parse_limits = limits_from(limits);
  if (!limits.is_none())
    for (auto [name, value] : py::cast<py::dict>(limits)) {
      std::string n = py::str(name);
      std::optional<double>* deadline = n == "request_deadline"  ? &o.remote.request_deadline
                                        : n == "stream_deadline" ? &o.remote.stream_deadline
                                                                 : nullptr;
      if (!deadline) continue;
      double seconds = py::cast<double>(value);
      if (!(seconds >= 0)) throw tablio::usage_error("limits['" + n + "'] is a number of seconds, 0 or more");
      *deadline = seconds;
    }
  return o;
}

// The access the package's own functions pass: (allow_network, allow_pipes, confine, limits).
tablio::open_options access_of(py::handle access) {
  if (access.is_none()) return tablio::open_options{};
  py::tuple t = py::cast<py::tuple>(access);
  return access_from(py::cast<bool>(t[0]), py::cast<bool>(t[1]), t[2], t[3]);
}

namespace {

value_options with_access(value_options o, bool allow_network, bool allow_pipes, py::handle confine,
                          py::handle limits) {
  o.open = access_from(allow_network, allow_pipes, confine, limits);
  return o;
}

// segments=(file or None, max_overshoot or None, min_segment_length or None), or None.
value_options with_segments(value_options o, py::handle segments) {
  if (segments.is_none()) return o;
  py::tuple t = py::cast<py::tuple>(segments);
  if (!t[0].is_none()) o.segments = py::cast<std::string>(t[0]);
  if (!t[1].is_none()) o.max_overshoot = py::cast<float>(t[1]);
  if (!t[2].is_none()) o.min_segment_length = py::cast<float>(t[2]);
  return o;
}

// images='s transform, as tablio.open() makes it (checked there): a dict of torchvision's or
// Caffe's names, their values normalised ("random_resized_crop": (size, scale lo, hi, ratio lo,
// hi); "mean_file": (path, its bytes)).
std::shared_ptr<const tablio::image_transform> transform_from(py::handle spec) {
  if (spec.is_none()) return nullptr;
  py::dict d = py::cast<py::dict>(spec);
  auto t = std::make_shared<tablio::image_transform>();
  auto get = [&](const char* name, auto& into) {
    if (!d.contains(name)) return;
    if constexpr (std::is_same_v<std::decay_t<decltype(into)>, std::vector<float>>) {
      into.clear();
      for (py::handle v : py::cast<py::list>(d[name])) into.push_back(py::cast<float>(v));
    } else {
      into = py::cast<std::decay_t<decltype(into)>>(d[name]);
    }
  };
  if (d.contains("random_resized_crop")) {
    py::tuple r = py::cast<py::tuple>(d["random_resized_crop"]);
    t->random_resized_crop.size = py::cast<std::uint32_t>(r[0]);
    t->random_resized_crop.scale[0] = py::cast<double>(r[1]);
    t->random_resized_crop.scale[1] = py::cast<double>(r[2]);
    t->random_resized_crop.ratio[0] = py::cast<double>(r[3]);
    t->random_resized_crop.ratio[1] = py::cast<double>(r[4]);
  }
  get("resize", t->resize);
  get("center_crop", t->center_crop);
  get("flip", t->flip);
  get("mean", t->mean);
  get("std", t->std);
  get("caffe", t->caffe);
  get("crop_size", t->crop_size);
  get("mirror", t->mirror);
  get("train", t->train);
  get("mean_value", t->mean_value);
  get("scale", t->scale);
  get("seed", t->seed);
  get("dct_scaling", t->dct_scaling);
  if (d.contains("mean_file")) {
    py::tuple f = py::cast<py::tuple>(d["mean_file"]);
    const std::string path = py::cast<std::string>(f[0]);
    const std::string bytes = py::cast<std::string>(f[1]);
    t->mean_file = std::make_shared<const tablio::mean_image>(tablio::read_mean_image(bytes, path));
  }
  return t;
}

// images=(channels, width, height, channels_first, bgr, features, transform), as tablio.open()
// makes it (checked there), or None.
value_options with_images(value_options o, py::handle images) {
  if (images.is_none()) return o;
#if !defined(TABLIO_WITH_JPEG)
  throw tablio::usage_error("images= needs the tablio::jpeg component (libjpeg-turbo and libpng)");
#endif
  py::tuple t = py::cast<py::tuple>(images);
  tablio::image_options image;
  image.channels = py::cast<unsigned>(t[0]);
  image.at_least = {py::cast<std::uint32_t>(t[1]), py::cast<std::uint32_t>(t[2])};
  image.channels_first = py::cast<bool>(t[3]);
  image.bgr = py::cast<bool>(t[4]);
  image.transform = transform_from(t[6]);
  o.images = image;
  for (py::handle feature : py::cast<py::tuple>(t[5]))
    o.image_features.push_back(py::cast<std::string>(feature));
  return o;
}

// ---- the Python classes

// What the three Python classes share: the C++ table behind them, its specifier, and use by
// one thread at a time, in the process that opened it. A child process (after fork) must not
// touch its parent's table: it shares the parent's file positions, pipes and buffers, so
// reading would move the parent's place and closing would drain its command or write its
// buffered bytes a second time. There it is an error to use, and dropped without a close.
template <class Table>
class python_table {
 public:
  explicit python_table(std::string spec)
      : spec_(std::move(spec)), owner_(tablio::detail::os::current_process_id()) {}
  ~python_table() {
    if (table_ && !in_owner()) (void)table_.release();  // the parent's to close, not this process's
  }
  const std::string& spec() const { return spec_; }
  void close() {
    if (!table_) return;
    if (!in_owner()) {
      (void)table_.release();
      return;
    }
    busy_guard guard(busy_);
    auto table = std::move(table_);
    table->close();
  }

 protected:
  bool in_owner() const { return tablio::detail::os::current_process_id() == owner_; }

  // Calls f(table) for this thread alone; a UsageError when the table is closed.
  template <class F>
  decltype(auto) use(F f) {
    if (!table_) throw tablio::usage_error("the table '" + spec_ + "' is closed");
    if (!in_owner())
      throw tablio::usage_error("the table '" + spec_ +
                                "' was opened in another process (before a fork): open it again in this one");
    busy_guard guard(busy_);
    return f(*table_);
  }

  std::string spec_;
  std::unique_ptr<Table> table_;
  bool busy_ = false;
  unsigned long owner_;
};

class sequential_reader : public python_table<sequential_base> {
 public:
  sequential_reader(std::string rspec, const std::string& type, py::handle dtype, py::handle scale,
                    py::handle decode_raw, bool view, py::handle features, bool allow_network,
                    bool allow_pipes, py::handle confine, py::handle limits, py::handle segments,
                    py::handle images, bool records)
      : python_table(std::move(rspec)), type_(type) {
    const value_type_entry& entry = find_value_type(type);
    if (records && !entry.records)
      throw tablio::usage_error("type '" + type + "' is read as its values, not as records to decode later");
    table_ = (records ? entry.records : entry.sequential)(
        spec_, with_images(with_segments(with_access(options_from(dtype, py::none(), type, scale, decode_raw,
                                                                  view, features),
                                                     allow_network, allow_pipes, confine, limits),
                                         segments),
                           images));
  }
  py::object next() {
    return use([this](sequential_base& t) -> py::object {
      bool more;
      {
        unlocked_gil unlocked;
        more = t.advance();
      }
      if (!more) throw py::stop_iteration();
      py::object key = key_to_python(t.key()),
                 value = converted_in(spec_, t.key(), [&] { return t.take_value(); });
      PyObject* pair = PyTuple_Pack(2, key.ptr(), value.ptr());
      if (!pair) throw py::error_already_set();
      return py::reinterpret_steal<py::object>(pair);
    });
  }
  // Moves past up to n entries without converting them (values a table can skip, such as a
  // script's, are not read); the number skipped.
  std::size_t skip(std::size_t n) {
    return use([n](sequential_base& t) {
      unlocked_gil unlocked;
      std::size_t skipped = 0;
      while (skipped < n && t.advance_key()) ++skipped;
      return skipped;
    });
  }
  py::tuple batch(std::size_t n) {
    if (n == 0) throw tablio::usage_error("a batch holds at least one entry");
    return use([&](sequential_base& t) { return converted_in(spec_, "", [&] { return t.batch(n); }); });
  }
  std::string error() const { return table_ ? table_->error() : error_; }
  std::uint64_t left_out() const { return table_ ? table_->left_out() : left_out_; }
  void close() {
    if (table_) {
      error_ = table_->error();
      left_out_ = table_->left_out();
    }
    python_table::close();
  }
  const std::string& type() const { return type_; }

 private:
  std::string type_, error_;
  std::uint64_t left_out_ = 0;
};

// Decodes records a table of `type` was read as (SequentialReader(..., _records=True)) into its
// values, as tablio.open() with these options reads them, in `threads` threads: records a
// shuffle buffer held undecoded, decoded once a batch picks them.
class record_decoder {
 public:
  record_decoder(const std::string& type, py::handle dtype, py::handle scale, py::handle decode_raw,
                 bool view, py::handle features, py::handle images, unsigned threads)
      : decode_(find_value_type(type).decode_records), threads_(threads) {
    if (!decode_) throw tablio::usage_error("type '" + type + "' has no records to decode");
    options_ = with_images(options_from(dtype, py::none(), type, scale, decode_raw, view, features), images);
    options_.recycled = std::make_shared<storage_pools>();
  }
  // (keys, values) of the records, each of the entry at `offsets[i]` of the table `sources[i]`
  // read with images= of seed `seeds[i]`; FormatError naming the table, key and offset of the
  // first that fails.
  py::tuple decode(const py::list& keys, const py::list& records, const py::list& sources,
                   const py::list& seeds, const py::list& offsets) {
    std::vector<std::string> key_strings, source_strings;
    std::vector<std::uint64_t> seed_numbers, offset_numbers;
    for (py::handle k : keys) key_strings.push_back(py::cast<std::string>(k));
    for (py::handle s : sources) source_strings.push_back(py::cast<std::string>(s));
    for (py::handle s : seeds) seed_numbers.push_back(py::cast<std::uint64_t>(s));
    for (py::handle o : offsets) offset_numbers.push_back(py::cast<std::uint64_t>(o));
    return decode_(key_strings, records, source_strings, seed_numbers, offset_numbers, options_, threads_);
  }

 private:
  decltype(value_type_entry::decode_records) decode_;
  value_options options_;
  unsigned threads_;
};

class random_access_reader : public python_table<random_access_base> {
 public:
  random_access_reader(std::string rspec, const std::string& type, py::handle dtype, py::handle scale,
                       py::handle decode_raw, bool view, py::handle features, bool allow_network,
                       bool allow_pipes, py::handle confine, py::handle limits, py::handle segments,
                       py::handle images)
      : python_table(std::move(rspec)),
        type_(type),
        options_(with_images(with_segments(with_access(options_from(dtype, py::none(), type, scale,
                                                                    decode_raw, view, features),
                                                       allow_network, allow_pipes, confine, limits),
                                           segments),
                             images)) {
    table_ = find_value_type(type).random_access(spec_, options_);
  }
  py::object get(py::handle key, py::object fallback) {
    auto got = values_of(py::make_tuple(key));
    return std::holds_alternative<std::size_t>(got) ? fallback : std::get<py::list>(got)[0];
  }
  py::object at(py::handle key) { return lookup(py::make_tuple(key))[0]; }
  // [r[key] for key in keys], in one call.
  py::list lookup(const py::sequence& keys) {
    auto got = values_of(keys);
    if (auto* absent = std::get_if<std::size_t>(&got)) {
      PyErr_SetObject(PyExc_KeyError, keys[*absent].ptr());
      throw py::error_already_set();
    }
    return std::get<py::list>(std::move(got));
  }
  bool contains(py::handle key) {
    if (!py::isinstance<py::str>(key) && !py::isinstance<py::bytes>(key)) return false;
    return use([&](random_access_base& t) { return t.contains(key_from_python(key)); });
  }
  // The keys in table order. A table read ahead is read to its end, which also checks that
  // no key repeats (a value looked up must be its key's only one); one with keyed lookup is
  // listed by a sequential pass that reads no value it can skip.
  py::list keys() {
    if (!keys_) {
      keys_ = use([](random_access_base& t) {
        unlocked_gil unlocked;
        return t.indexed_keys();
      });
      if (!keys_) {
        auto table = find_value_type(type_).sequential(spec_, options_);
        std::vector<std::string> keys;
        {
          unlocked_gil unlocked;
          while (table->advance_key()) keys.push_back(table->key());
        }
        table->close();
        keys_.emplace(std::move(keys));
      }
    }
    py::list out(keys_->size());
    for (std::size_t i = 0; i < keys_->size(); ++i) out[i] = key_to_python((*keys_)[i]);
    return out;
  }
  std::size_t size() {
    if (auto n = use([](random_access_base& t) { return t.size(); })) return static_cast<std::size_t>(*n);
    return keys().size();
  }

 private:
  // The values of keys, or the index of the first that is absent.
  std::variant<py::list, std::size_t> values_of(const py::sequence& keys) {
    std::vector<std::string> wanted;
    wanted.reserve(keys.size());
    for (py::handle key : keys) wanted.push_back(key_from_python(key));
    return use(
        [&](random_access_base& t) { return converted_in(spec_, "", [&] { return t.get_all(wanted); }); });
  }

  std::string type_;
  value_options options_;
  std::optional<std::vector<std::string>> keys_;
};

class table_writer : public python_table<writer_base> {
 public:
  table_writer(std::string wspec, const std::string& type, py::handle dtype, py::handle compression_method,
               bool allow_network, bool allow_pipes, py::handle confine)
      : python_table(std::move(wspec)) {
    table_ =
        find_value_type(type).writer(spec_, with_access(options_from(dtype, compression_method, type),
                                                        allow_network, allow_pipes, confine, py::none()));
  }
  // A writer dropped without close() is closed here, except an object being uploaded, which
  // is given up (the exception that may have dropped the writer is unknown here); what could
  // not be written is a warning, since a destructor cannot raise.
  ~table_writer() {
    if (!table_ || !in_owner()) return;
    if (close_failed_) {
      table_->abandon();
      return;
    }
    try {
      tablio::detail::dropped_scope dropped;
      table_->close();
    } catch (const std::exception& e) {
      std::string message =
          "tablio writer '" + spec_ + "' was not closed, and closing it failed: " + e.what();
      if (PyErr_WarnEx(PyExc_RuntimeWarning, message.c_str(), 1) != 0) PyErr_WriteUnraisable(nullptr);
    }
  }
  void write(py::handle key, py::handle value) {
    use([&](writer_base& t) { t.write(key_from_python(key), value); });
    ++written_;
  }
  // The next entry under its record number (00000000, 00000001...): the keys a TFRecord or IDX
  // file, which keep none, give back when read.
  void append(py::handle value) {
    use([&](writer_base& t) { t.write(tablio::ordinal_key(written_), value); });
    ++written_;
  }
  void flush() {
    use([](writer_base& t) { t.flush(); });
  }
  // A value that failed in the table's threads leaves it open, the values written after it
  // waiting: closed again, it writes them, as one thread wrote them for a caller who went on.
  // Dropped after such a close(), it is given up, as by a caller who stops at the error.
  void close() {
    if (!table_ || !in_owner()) return python_table::close();
    {
      busy_guard guard(busy_);
      try {
        table_->close();
      } catch (...) {
        close_failed_ = true;
        throw;
      }
    }
    table_.reset();
  }
  // Gives the table up: an object being uploaded never appears; files keep what was written.
  void abandon() {
    if (!table_ || !in_owner()) return;
    busy_guard guard(busy_);
    auto table = std::move(table_);
    table->abandon();
  }
  // A with-block's end: closed, or given up when an exception leaves the block.
  void exit(py::handle exception_type) {
    if (!exception_type.is_none()) return abandon();
    try {
      close();
    } catch (...) {
      abandon();  // the error leaves the block
      throw;
    }
  }

 private:
  std::uint64_t written_ = 0;  // entries written, which append() numbers on from
  bool close_failed_ = false;  // a close() raised a value's error: dropped, the table is given up
};

py::list strings_to_python(const std::vector<std::string>& strings) {
  py::list out(strings.size());
  for (std::size_t i = 0; i < strings.size(); ++i) out[i] = key_to_python(strings[i]);
  return out;
}

// ---- IDX

// numpy's dtype for an IDX type, big-endian as stored.
py::dtype idx_dtype(tablio::idx_type t) {
  switch (t) {
    case tablio::idx_type::u8:
      return py::dtype("u1");
    case tablio::idx_type::i8:
      return py::dtype("i1");
    case tablio::idx_type::i16:
      return py::dtype(">i2");
    case tablio::idx_type::i32:
      return py::dtype(">i4");
    case tablio::idx_type::f32:
      return py::dtype(">f4");
    case tablio::idx_type::f64:
      return py::dtype(">f8");
  }
  throw tablio::usage_error("unknown IDX type");
}

// The whole file as a read-only array over the mapped (or inflated) bytes.
py::array idx_read(const std::string& path, py::handle access) {
  // Opened as a table's file is: under the untrusted policy, confined to its folder.
  tablio::open_options open = tablio::table_open_options(access_of(access), path);
  std::unique_ptr<tablio::idx_file> file;
  {
    unlocked_gil unlocked;
    file = std::make_unique<tablio::idx_file>(path, tablio::idx_read_options{}, open);
  }
  const tablio::idx_header& h = file->header();
  // What numpy cannot shape is the file's error, as any other: at most 32 dimensions, and a
  // product of the non-zero ones (numpy multiplies them even when another is 0) that it can count.
  std::uint64_t bytes = tablio::idx_type_size(h.type);
  for (std::uint32_t d : h.dims)
    if (d != 0) bytes = bytes > UINT64_MAX / d ? UINT64_MAX : bytes * d;
  if (h.dims.size() > 32 || bytes > static_cast<std::uint64_t>(PTRDIFF_MAX))
    tablio::throw_format_error(path, 3, {},
                               {"an array numpy can hold: at most 32 dimensions, under 2^63 bytes"},
                               {tablio::decimal(h.dims.size()), " dimensions"});
  std::vector<py::ssize_t> shape(h.dims.begin(), h.dims.end());
  const char* data = h.items() == 0 ? nullptr : file->item_bytes(0).data();
  py::dtype dtype = idx_dtype(h.type);
  auto* owner = file.release();
  py::capsule keep(owner, [](void* p) { delete static_cast<tablio::idx_file*>(p); });
  static const char empty = 0;
  py::array out(dtype, shape, {}, data ? data : &empty, keep);
  out.attr("setflags")(py::arg("write") = false);
  return out;
}

tablio::idx_type idx_type_of(const py::dtype& d) {
  char kind = d.kind();
  switch (d.itemsize()) {
    case 1:
      if (kind == 'u' || kind == 'b') return tablio::idx_type::u8;
      if (kind == 'i') return tablio::idx_type::i8;
      break;
    case 2:
      if (kind == 'i') return tablio::idx_type::i16;
      break;
    case 4:
      if (kind == 'i') return tablio::idx_type::i32;
      if (kind == 'f') return tablio::idx_type::f32;
      break;
    case 8:
      if (kind == 'f') return tablio::idx_type::f64;
      break;
  }
  throw tablio::usage_error("IDX stores uint8, int8, int16, int32, float32 or float64, not " +
                            std::string(py::str(py::handle(d))));
}

void idx_write(const std::string& path, py::handle values, py::handle access) {
  tablio::open_options open = access_of(access);
  py::array a = py::array::ensure(values, py::array::c_style);
  if (!a) throw py::type_error("idx.write: expected an array");
  if (a.ndim() == 0) throw tablio::usage_error("idx.write: an IDX file has at least one dimension");
  tablio::idx_type type = idx_type_of(a.dtype());
  if (a.dtype().byteorder() == '>') a = a.attr("astype")(a.dtype().attr("newbyteorder")("="));
  std::vector<std::uint32_t> item_dims;
  for (py::ssize_t d = 1; d < a.ndim(); ++d)
    item_dims.push_back(static_cast<std::uint32_t>(dimension(a.shape(d), "IDX dimensions")));
  std::uint32_t items = static_cast<std::uint32_t>(dimension(a.shape(0), "IDX items"));
  std::size_t item_values = 1;
  for (std::uint32_t d : item_dims) item_values *= d;
  const char* p = static_cast<const char*>(a.data());
  std::size_t item_bytes = item_values * static_cast<std::size_t>(a.itemsize());
  unlocked_gil unlocked;
  tablio::idx_writer out(tablio::open_output(path, open), type, item_dims, items);
  for (std::uint32_t i = 0; i < items; ++i) out.write_native_item(p + i * item_bytes, item_values);
  out.close();
}

// ---- exceptions

struct python_errors {
  py::object format_error, data_loss_error, usage_error, access_error, stream_error;
};

python_errors& errors() {
  static python_errors* e = new python_errors();  // lives as long as the interpreter
  return *e;
}

// A message can quote bytes of a bad file: those that are not UTF-8 are shown escaped.
py::object message_to_python(const char* what) {
  PyObject* s = PyUnicode_DecodeUTF8(what, static_cast<Py_ssize_t>(std::strlen(what)), "backslashreplace");
  if (!s) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(s);
}

// A path or URL as errors give it to Python (OSError shows its filename): a URL without its
// credentials or query, as the messages show it.
py::object path_to_python(const std::string& given) {
  const std::string path = tablio::detail::without_credentials(given);
  PyObject* s = PyUnicode_DecodeFSDefaultAndSize(path.data(), static_cast<Py_ssize_t>(path.size()));
  if (!s) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(s);
}

void raise_format_error(const py::object& type, const tablio::format_error& e) {
  py::object offset = e.offset() ? py::object(py::int_(*e.offset())) : py::object(py::none());
  py::object key = e.key().empty() ? py::object(py::none()) : py::object(key_to_python(e.key()));
  py::object path = path_to_python(e.path());
  py::object instance = type(message_to_python(e.what()), path, offset, key);
  PyErr_SetObject(type.ptr(), instance.ptr());
}

void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const tablio::data_loss_error& e) {
    raise_format_error(errors().data_loss_error, e);
  } catch (const tablio::format_error& e) {
    raise_format_error(errors().format_error, e);
  } catch (const tablio::io_error& e) {
    // OSError(errno, message, path) is the subclass of that errno (FileNotFoundError...); with
    // no errno, a StreamError, which shows the message alone.
    py::object path = path_to_python(e.path());
    py::object message = message_to_python(e.what());
    py::object instance = e.error_number() != 0
                              ? py::handle(PyExc_OSError)(py::int_(e.error_number()), message, path)
                              : errors().stream_error(py::none(), message, path);
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(instance.ptr())), instance.ptr());
  } catch (const tablio::missing_key_error& e) {
    PyErr_SetObject(PyExc_KeyError, key_to_python(e.key()).ptr());
  } catch (const tablio::access_error& e) {
    PyErr_SetObject(errors().access_error.ptr(), message_to_python(e.what()).ptr());
  } catch (const tablio::usage_error& e) {
    PyErr_SetObject(errors().usage_error.ptr(), message_to_python(e.what()).ptr());
  } catch (const tablio::error& e) {
    PyErr_SetObject(errors().format_error.ptr(), message_to_python(e.what()).ptr());
  }
}

}  // namespace
}  // namespace tablio_python

PYBIND11_MODULE(_tablio, m) {
  using namespace tablio_python;
  m.doc() = "tablio's C++ tables, for the tablio package";
  // The headers' version, which the package reports as tablio.__version__.
  m.attr("__version__") = std::to_string(tablio::version.major) + '.' +
                          std::to_string(tablio::version.minor) + '.' + std::to_string(tablio::version.patch);
  register_kaldi_types();
  register_example_type();
  register_sequence_example_type();
  register_datum_type();
  register_bytes_type();
  register_sample_type();

  py::module_ error_module = py::module_::import("tablio.errors");
  errors().format_error = error_module.attr("FormatError");
  errors().data_loss_error = error_module.attr("DataLossError");
  errors().usage_error = error_module.attr("UsageError");
  errors().access_error = error_module.attr("AccessError");
  errors().stream_error = error_module.attr("StreamError");
  py::register_exception_translator(&translate);
  py::module_::import("atexit").attr("register")(py::cpp_function(&unlocked_gil::let_threads_through_exit));

  py::class_<record_decoder>(m, "_RecordDecoder")
      .def(py::init<const std::string&, py::handle, py::handle, py::handle, bool, py::handle, py::handle,
                    unsigned>(),
           py::arg("type"), py::arg("dtype") = py::none(), py::arg("scale") = py::none(),
           py::arg("decode_raw") = py::none(), py::arg("view") = false, py::arg("features") = py::none(),
           py::arg("images") = py::none(), py::arg("threads") = 1)
      .def("decode", &record_decoder::decode, py::arg("keys"), py::arg("records"), py::arg("sources"),
           py::arg("seeds"), py::arg("offsets"));
  py::class_<sequential_reader>(
      m, "SequentialReader",
      "A table read in order, as Kaldi's SequentialTableReader reads it: iterating "
      "gives (key, value) pairs.\n\nMade by tablio.open(rspec, ...), which documents "
      "the arguments; use it as a context manager, or close() it.")
      .def(py::init<std::string, const std::string&, py::handle, py::handle, py::handle, bool, py::handle,
                    bool, bool, py::handle, py::handle, py::handle, py::handle, bool>(),
           py::arg("rspec"), py::arg("type") = "matrix", py::arg("dtype") = py::none(),
           py::arg("scale") = py::none(), py::arg("decode_raw") = py::none(), py::arg("view") = false,
           py::arg("features") = py::none(), py::arg("allow_network") = true, py::arg("allow_pipes") = true,
           py::arg("confine") = py::none(), py::arg("limits") = py::none(), py::arg("segments") = py::none(),
           py::arg("images") = py::none(), py::arg("_records") = false)
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__", &sequential_reader::next,
           "The next (key, value); StopIteration at the table's end. A bad entry raises FormatError or "
           "DataLossError naming the file, offset and key.")
      .def("_batch", &sequential_reader::batch, py::arg("n"))
      .def("skip", &sequential_reader::skip, py::arg("n"),
           "Moves past up to n entries without reading their values; returns how many.")
      .def_property_readonly("error", &sequential_reader::error,
                             "Why the table ended early under Kaldi's p option (empty when it did not).")
      .def_property_readonly("left_out", &sequential_reader::left_out,
                             "Entries left out because they could not be read while the table stayed "
                             "readable past them (on_error='skip', or a script's missing entry under p).")
      .def_property_readonly("rspec", &sequential_reader::spec, "The rspecifier the table was opened with.")
      .def_property_readonly("type", &sequential_reader::type, "The value type the entries are read as.")
      .def("close", &sequential_reader::close,
           "Closes the table and what it opened (files, commands, connections); closing twice is harmless.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](sequential_reader& r, py::args) { r.close(); });

  py::class_<random_access_reader>(m, "RandomAccessReader",
                                   "A table read by key, as Kaldi's RandomAccessTableReader reads it, and a "
                                   "collections.abc.Mapping: r[key], key in r, r.get(key), len(r), keys(), "
                                   "items(), values().\n\nMade by tablio.random_access(rspec, ...), which "
                                   "documents the arguments; use it as a context manager, or close() it.")
      .def(py::init<std::string, const std::string&, py::handle, py::handle, py::handle, bool, py::handle,
                    bool, bool, py::handle, py::handle, py::handle, py::handle>(),
           py::arg("rspec"), py::arg("type") = "matrix", py::arg("dtype") = py::none(),
           py::arg("scale") = py::none(), py::arg("decode_raw") = py::none(), py::arg("view") = false,
           py::arg("features") = py::none(), py::arg("allow_network") = true, py::arg("allow_pipes") = true,
           py::arg("confine") = py::none(), py::arg("limits") = py::none(), py::arg("segments") = py::none(),
           py::arg("images") = py::none())
      .def("__getitem__", &random_access_reader::at,
           "The value of key; KeyError when the table has no such key.")
      .def("get", &random_access_reader::get, py::arg("key"), py::arg("default") = py::none(),
           "The value of key, or default when the table has no such key.")
      .def("lookup", &random_access_reader::lookup, py::arg("keys"),
           "The values of keys, in one call (KeyError for the first that is absent).")
      .def("__contains__", &random_access_reader::contains,
           "Whether the table has key (its value is not read).")
      .def("__len__", &random_access_reader::size, "The number of keys.")
      .def("keys", &random_access_reader::keys, "The keys, a list in table order.")
      .def(
          "__iter__", [](random_access_reader& r) { return r.keys().attr("__iter__")(); },
          "Iterates over the keys, in table order.")
      .def("close", &random_access_reader::close,
           "Closes the table and what it opened; closing twice is harmless.")
      .def_property_readonly("rspec", &random_access_reader::spec,
                             "The rspecifier the table was opened with.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](random_access_reader& r, py::args) { r.close(); });

  py::class_<table_writer>(m, "Writer",
                           "A table written one entry per key, as Kaldi's TableWriter writes it: "
                           "w.write(key, value) or w[key] = value.\n\nMade by tablio.writer(wspec, ...), "
                           "which documents the arguments. close() raises for anything that could not be "
                           "written; a with block completes the table, or gives it up when left by an "
                           "exception.")
      .def(py::init<std::string, const std::string&, py::handle, py::handle, bool, bool, py::handle>(),
           py::arg("wspec"), py::arg("type") = "matrix", py::arg("dtype") = py::none(),
           py::arg("compression_method") = py::none(), py::arg("allow_network") = true,
           py::arg("allow_pipes") = true, py::arg("confine") = py::none())
      .def("write", &table_writer::write, py::arg("key"), py::arg("value"),
           "Writes value under key (a Kaldi token: non-empty, printable, no whitespace).")
      .def("__setitem__", &table_writer::write, "The same as write(key, value).")
      .def("append", &table_writer::append, py::arg("value"),
           "Writes value under the next record number (00000000, 00000001...), the keys a TFRecord "
           "or IDX file gives back: for formats that keep no keys.")
      .def("flush", &table_writer::flush, "Pushes what was written to the OS (an upload waits for close()).")
      .def("close", &table_writer::close,
           "Completes the table; raises OSError for anything that could not be written: a full disk "
           "(ENOSPC), a failed | command or upload (StreamError).")
      .def("abandon", &table_writer::abandon,
           "Gives the table up, as after an error: an object being uploaded never appears.")
      .def_property_readonly("wspec", &table_writer::spec, "The wspecifier the table was opened with.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](table_writer& w, py::handle type, py::handle, py::handle) { w.exit(type); });

  m.def("idx_read", &idx_read, py::arg("path"), py::arg("access") = py::none());
  m.def("idx_write", &idx_write, py::arg("path"), py::arg("array"), py::arg("access") = py::none());
  m.def(
      "shard",
      [](const std::string& rspec, const std::string& wspec, std::uint64_t n, const std::string& by,
         const std::string& type, py::handle access) {
        if (by != "count" && by != "bytes")
          throw tablio::usage_error("by is 'count' or 'bytes', not '" + by + "'");
        // Without a type, as the tool: an archive's objects are matrices, other records bytes.
        std::optional<tablio::rspecifier> r = tablio::parse_rspecifier(rspec);
        const std::string& chosen =
            !type.empty()
                ? type
                : std::string(r && r->kind == tablio::rspecifier_kind::archive ? "matrix" : "bytes");
        tablio::shard_plan plan = find_value_type(chosen).shard(
            rspec, wspec, n, by == "count" ? tablio::shard_balance::count : tablio::shard_balance::bytes,
            access_of(access));
        py::list out(plan.wspecifiers.size());
        for (std::size_t k = 0; k < out.size(); ++k)
          out[k] = py::make_tuple(plan.wspecifiers[k], plan.entries[k]);
        return out;
      },
      py::arg("rspec"), py::arg("wspec"), py::arg("n"), py::arg("by") = "count", py::arg("type") = "",
      py::arg("access") = py::none());
  m.def(
      "index_shards",
      [](const std::string& rspec, const std::string& type, py::handle access) {
        return tablio::shard_index_name(tablio::require_rspecifier(rspec).filename) + "\n" +
               tablio::to_json(find_value_type(type).index_shards(rspec, access_of(access)));
      },
      py::arg("rspec"), py::arg("type") = "bytes", py::arg("access") = py::none(),
      "Writes the shard index of a TFRecord or tar table's files beside them: its name and JSON.");
  m.def(
      "record_key_name",
      [](const std::string& rspec) { return tablio::require_rspecifier(rspec).records.key_feature; },
      py::arg("rspec"), "The feature a table's records keep their keys in (its key=NAME option), or ''.");
  m.def(
      "tar_extension",
      [](const std::string& type) { return std::string(find_value_type(type).tar_extension); },
      py::arg("type"),
      "The extension of the tar members a value type reads unless told (ext=): '*' for samples.");
  m.def(
      "parse_wspecifier",
      [](std::string_view wspec) {
        tablio::wspecifier w = tablio::require_wspecifier(wspec);
        std::optional<tablio::table_format> format = tablio::find_format(w.format);
        // Whether reading numbers its entries, so that it takes no keys of its own.
        bool numbered = format && (format->read_options & tablio::format_option::numbered_keys) &&
                        w.records.key_feature.empty() && w.script.empty();
        py::dict out;
        out["format"] = w.format;
        out["archive"] = w.archive;
        out["script"] = w.script;
        out["extension"] = w.extension;
        out["key"] = w.records.key_feature;
        out["numbered"] = numbered;
        out["split"] = w.max_count != 0 || w.max_size != 0;
        return out;
      },
      py::arg("wspec"),
      "A wspecifier's parts: format, archive, script, extension (ext=), key (key=), numbered (whether its "
      "entries are keyed by their record numbers), split (maxcount= or maxsize=).");
  m.def(
      "shard_wspecifier",
      [](std::string_view wspec, std::uint64_t i, std::uint64_t n) {
        return tablio::shard_wspecifier(wspec, i, n);
      },
      py::arg("wspec"), py::arg("i"), py::arg("n"),
      "The wspecifier of shard i of n, named as tablio.shard() names it.");
  m.def(
      "shard_index_json",
      [](const std::string& name, const std::string& format, const std::string& value_type,
         const std::string& key, py::list shards) {
        tablio::shard_index index{name, format, value_type, {}, key};
        for (py::handle shard : shards) {
          auto s = py::cast<py::tuple>(shard);
          if (s.size() != 6)
            throw py::value_error("a shard is (url, samples, bytes, first_key, last_key, sorted)");
          index.shards.push_back({py::cast<std::string>(s[0]), py::cast<std::uint64_t>(s[1]),
                                  py::cast<std::uint64_t>(s[2]), key_from_python(s[3]), key_from_python(s[4]),
                                  py::cast<bool>(s[5])});
        }
        return tablio::to_json(index);
      },
      py::arg("name"), py::arg("format"), py::arg("value_type"), py::arg("key"), py::arg("shards"),
      "A shard index's JSON, as the writers of shards write it: shards are (url, samples, bytes, "
      "first_key, last_key, sorted); key is a TFRecord table's key= feature, or empty.");
  m.def(
      "write_file",
      [](const std::string& name, const py::bytes& data, py::handle access) {
        // A file or an object, never a command: what it is given is written whole or not at all.
        tablio::open_options open = access_of(access);
        open.allow_pipes = false;
        std::string_view bytes = data;
        unlocked_gil unlocked;
        tablio::writer out = tablio::open_output(name, open);
        out.write(bytes);
        out.close();
      },
      py::arg("name"), py::arg("data"), py::arg("access") = py::none(),
      "Writes bytes to a file or an object (s3://, which appears whole when written).");
  m.def("shard_index_name", &tablio::shard_index_name, py::arg("pattern"),
        "Where the shard index of the shards a name or pattern gives goes: beside them.");
  m.def("shard_index_folder", &tablio::shard_index_folder, py::arg("pattern"),
        "The folder a shard index's relative URLs start from.");
  m.def(
      "is_remote_name", [](std::string_view name) { return tablio::is_remote_name(name); }, py::arg("name"),
      "Whether tablio opens the name as a remote object (http://, https://, s3://).");
  m.def(
      "stored_size",
      [](const std::string& name, py::handle access) {
        tablio::open_options open = access_of(access);
        unlocked_gil unlocked;
        return tablio::stored_size(name, open);
      },
      py::arg("name"), py::arg("access") = py::none(), "The size of a file or remote object.");
  m.def(
      "read_file",
      [](const std::string& name, std::uint64_t limit, py::handle access) {
        // A file or an object, never a command: what names it may come from the input.
        tablio::open_options open = access_of(access);
        open.allow_pipes = false;
        std::string all;
        {
          unlocked_gil unlocked;
          tablio::reader in = tablio::open_input(name, open);
          while (in.ensure(1)) {
            std::span<const char> window = in.window();
            if (window.size() > limit - all.size())
              tablio::throw_format_error(name, all.size(), {}, {"at most ", tablio::decimal(limit), " bytes"},
                                         {"more"});
            all.append(window.data(), window.size());
            in.advance(window.size());
          }
          in.close();
        }
        return py::bytes(all);
      },
      py::arg("name"), py::arg("limit"), py::arg("access") = py::none(),
      "The whole of a file or remote object (never a command) of at most `limit` bytes (more is a "
      "FormatError).");
  m.def("value_types", [] { return strings_to_python(value_type_names()); });
  m.def(
      "_reads_records",
      [](const std::string& type) { return static_cast<bool>(find_value_type(type).records); },
      py::arg("type"),
      "Whether tables of TYPE can be read as records to decode later (SequentialReader _records).");
  m.def(
      "table_files",
      [](const std::string& rspec, py::handle access) {
        tablio::open_options open = access_of(access);
        std::vector<std::string> files;
        {
          unlocked_gil unlocked;  // listing a bucket is network I/O
          files = tablio::table_files(rspec, open);
        }
        return strings_to_python(files);
      },
      py::arg("rspec"), py::arg("access") = py::none(),
      "One rspecifier per file of a table whose format reads several (TFRecord, tar); else [rspec].");
  m.def(
      "set_process_policy",
      [](bool untrusted, bool allow_network, py::handle confine, py::handle limits) {
        tablio::process_policy p;
        p.untrusted = untrusted;
        p.allow_network = allow_network;
        p.confine = access_from(allow_network, true, confine, py::none()).confine;
        if (!limits.is_none()) p.parse_limits = limits_from(limits);
        tablio::set_process_policy(p);
      },
      py::arg("untrusted"), py::arg("allow_network"), py::arg("confine") = py::none(),
      py::arg("limits") = py::none(), "Tightens the process's policy for opening names (it never loosens).");
  m.def(
      "process_policy",
      [] {
        tablio::process_policy p = tablio::current_process_policy();
        return py::make_tuple(p.untrusted, p.allow_network.value_or(true),
                              p.confine.empty() ? py::object(py::none()) : py::object(py::str(p.confine)));
      },
      "The process's policy: (untrusted, allow_network, confine).");
  m.def(
      "load_object",
      [](const std::string& rxfilename, const std::string& type, py::handle dtype, bool allow_network,
         bool allow_pipes, py::handle confine, py::handle limits) {
        value_options o =
            with_access(options_from(dtype, py::none(), type), allow_network, allow_pipes, confine, limits);
        o.open = tablio::table_open_options(o.open, rxfilename);  // confined as a table's file is
        return find_value_type(type).load_object(rxfilename, o);
      },
      py::arg("rxfilename"), py::arg("type"), py::arg("dtype"), py::arg("allow_network"),
      py::arg("allow_pipes"), py::arg("confine"), py::arg("limits"),
      "One object with no key, as Kaldi's ReadKaldiObject reads it.");
  m.def(
      "save_object",
      [](const std::string& wxfilename, py::handle value, const std::string& type, py::handle dtype,
         py::handle compression_method, bool binary, bool allow_network, bool allow_pipes,
         py::handle confine) {
        find_value_type(type).save_object(wxfilename, value, binary,
                                          with_access(options_from(dtype, compression_method, type),
                                                      allow_network, allow_pipes, confine, py::none()));
      },
      py::arg("wxfilename"), py::arg("value"), py::arg("type"), py::arg("dtype"),
      py::arg("compression_method"), py::arg("binary"), py::arg("allow_network"), py::arg("allow_pipes"),
      py::arg("confine"), "Writes one object with no key, as Kaldi's WriteKaldiObject writes it.");
  m.def(
      "_set_thread_use",
      [](const std::string& use) {
        using tablio::detail::thread_use;
        if (use != "measured" && use != "always" && use != "never")
          throw tablio::usage_error("thread use is measured, always or never, not '" + use + "'");
        tablio::detail::forced_thread_use = use == "always"  ? thread_use::always
                                            : use == "never" ? thread_use::never
                                                             : thread_use::measured;
      },
      py::arg("use"),
      "For tests and benchmarks, as TABLIO_THREAD_USE: tables with threads hand every entry they can "
      "to them (always), none (never), or what they measure to be faster (measured).");
  m.def(
      "reading_rspec",
      [](const std::string& rspec, const std::string& type, py::handle access) {
        if (!find_value_type(type).stored_as_example) return rspec;
        tablio::open_options open = access_of(access);
        unlocked_gil unlocked;  // a remote table's first record is fetched
        return tablio::keyed_form_rspec(rspec, open);
      },
      py::arg("rspec"), py::arg("type"), py::arg("access") = py::none(),
      "The rspecifier that reads TYPE's values under the keys they were written with "
      "(tablio::reading_rspec): key=key for a TFRecord table of values stored as Examples of their form "
      "whose records keep a 'key' feature.");
  m.def(
      "writing_wspec",
      [](const std::string& wspec, const std::string& type) {
        if (!find_value_type(type).stored_as_example) return wspec;
        return tablio::keyed_form_wspec(wspec);
      },
      py::arg("wspec"), py::arg("type"),
      "The wspecifier that keeps TYPE's keys in a 'key' feature whatever they are (tablio::writing_wspec).");
  m.def(
      "transform_draw",
      [](py::handle transform, std::uint32_t width, std::uint32_t height, const std::string& key) {
        auto t = transform_from(transform);
        if (!t) throw tablio::usage_error("transform_draw: images= names no transform");
        const tablio::transform_draw d = tablio::draw_transform(*t, width, height, key);
        return py::make_tuple(d.left, d.top, d.width, d.height, d.flip);
      },
      py::arg("transform"), py::arg("width"), py::arg("height"), py::arg("key"),
      "(left, top, width, height, flip): the draws of images='s transform for a record's image "
      "(tablio::draw_transform).");
  m.def("ordinal_keys", &tablio::table_keys_are_numbers, py::arg("rspec"),
        "Whether the table's keys are its records' numbers, counted across its files (TFRecord, IDX).");
  m.def("ordinal_key", &tablio::ordinal_key, py::arg("ordinal"),
        "The key of record `ordinal` of a table that keeps no keys, as tablio numbers them.");
  m.def(
      "count_cuts",
      [](std::uint64_t entries, std::uint64_t n) {
        if (n == 0) throw tablio::usage_error("count_cuts: n is a number of parts, 1 or more");
        py::list cuts;
        for (std::uint64_t cut : tablio::count_cuts(entries, n)) cuts.append(cut);
        return cuts;
      },
      py::arg("entries"), py::arg("n"),
      "Where each of n parts of `entries` entries begins, and where the last ends, as split_scp.pl splits "
      "them.");
}
