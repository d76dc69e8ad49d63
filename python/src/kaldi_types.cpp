// Kaldi's value types as Python values: matrices and vectors as float ndarrays (compressed
// ones decompressed), integer vectors as int32 ndarrays, tokens as str, waves as
// (rate, ndarray[channels, samples]).
#include "arrays.hpp"
#include "tables.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <variant>

namespace tablio_python {
namespace {

// Values of one shape stacked into one array, each written into it by fill(value, out);
// values of different shapes as a list.
template <class T, class V>
py::object stack_or_list(std::vector<V>& values, const value_options& options, auto shape_of, auto fill,
                         auto to_python) {
  py::object stacked = stack_equal_shapes<T>(values, shape_of, fill);
  if (!stacked.is_none()) return stacked;
  py::list out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = to_python(std::move(values[i]), options);
  return std::move(out);
}

// fill for values that hold their elements contiguously (v.data(), v.size()).
inline constexpr auto copy_elements = [](const auto& v, auto* out) {
  if (v.size() != 0) std::memcpy(out, v.data(), v.size() * sizeof(*out));
};

template <class T>
struct float_matrix {
  using holder = tablio::holder<tablio::matrix<T>>;
  using value_type = tablio::matrix<T>;
  static std::vector<py::ssize_t> shape(const value_type& m) { return {m.num_rows(), m.num_cols()}; }
  static py::object to_python(value_type&& m, const value_options& o) {
    auto s = shape(m);
    return adopt(std::move(m.storage()), s, o);
  }
  static void reuse(value_type& m, const value_options& o) { tablio_python::reuse(m.storage(), o); }
  static void recycle(value_type&& m, const value_options& o) {
    tablio_python::recycle(std::move(m.storage()), o);
  }
  static value_type from_python(py::handle h, const value_options&) {
    auto a = as_array<T>(h, 2, "matrix");
    return value_type(dimension(a.shape(0), "rows"), dimension(a.shape(1), "columns"), to_vector(a));
  }
  static py::object stack(std::vector<value_type>& values, const value_options& o) {
    return stack_or_list<T>(values, o, shape, copy_elements, to_python);
  }
};

template <class T>
struct float_vector {
  using holder = tablio::holder<tablio::vector<T>>;
  using value_type = tablio::vector<T>;
  static std::vector<py::ssize_t> shape(const value_type& v) { return {static_cast<py::ssize_t>(v.size())}; }
  static py::object to_python(value_type&& v, const value_options& o) {
    auto s = shape(v);
    return adopt(std::move(v.storage()), s, o);
  }
  static void reuse(value_type& v, const value_options& o) { tablio_python::reuse(v.storage(), o); }
  static void recycle(value_type&& v, const value_options& o) {
    tablio_python::recycle(std::move(v.storage()), o);
  }
  static value_type from_python(py::handle h, const value_options&) {
    auto a = as_array<T>(h, 1, "vector");
    dimension(a.shape(0), "vector elements");
    return value_type(to_vector(a));
  }
  static py::object stack(std::vector<value_type>& values, const value_options& o) {
    return stack_or_list<T>(values, o, shape, copy_elements, to_python);
  }
};

// Read decompressed (bit-exact with Kaldi's CopyToMat), written with the writer's method.
struct compressed {
  using holder = tablio::holder<tablio::compressed_matrix>;
  using value_type = tablio::compressed_matrix;
  template <class T>
  static py::object decompressed(const value_type& m) {
    py::array_t<T> out = new_array<T>({m.num_rows(), m.num_cols()});
    T* p = out.mutable_data();
    unlocked_gil unlocked;
    m.decompress(p);
    return std::move(out);
  }
  static py::object to_python(value_type&& m, const value_options& o) {
    return o.double_precision ? decompressed<double>(m) : decompressed<float>(m);
  }
  static value_type from_python(py::handle h, const value_options& o) {
    auto method = static_cast<tablio::compression_method>(o.compression_method.value_or(1));
    auto a = as_array<float>(h, 2, "compressed-matrix");
    std::int32_t rows = dimension(a.shape(0), "rows"), cols = dimension(a.shape(1), "columns");
    const float* p = a.data();
    unlocked_gil unlocked;
    return value_type(p, rows, cols, method);
  }
  static py::object stack(std::vector<value_type>& values, const value_options& o) {
    auto shape = [](const value_type& m) { return std::vector<py::ssize_t>{m.num_rows(), m.num_cols()}; };
    auto fill = [](const value_type& m, auto* out) { m.decompress(out); };
    return o.double_precision ? stack_or_list<double>(values, o, shape, fill, to_python)
                              : stack_or_list<float>(values, o, shape, fill, to_python);
  }
};

// Matrices written with a compression method: compressed where the table writes them (in its
// threads, with threads=), so that the caller's thread only copies each array.
struct compressing {
  using holder = tablio::holder<tablio::matrix_to_compress>;
  using value_type = tablio::matrix_to_compress;
  static value_type from_python(py::handle h, const value_options& o) {
    auto a = as_array<float>(h, 2, "compressed-matrix");
    value_type v{tablio::matrix<float>(dimension(a.shape(0), "rows"), dimension(a.shape(1), "columns")),
                 static_cast<tablio::compression_method>(o.compression_method.value_or(1))};
    if (a.size() != 0)
      std::memcpy(v.values.data(), a.data(), static_cast<std::size_t>(a.size()) * sizeof(float));
    return v;
  }
};

// int32 values from any integer array-like, each checked to fit.
std::vector<std::int32_t> int32_values(py::handle h, py::ssize_t ndim, const char* what) {
  py::array a = py::array::ensure(h);
  if (!a) throw py::type_error(std::string(what) + ": expected an array-like of integers");
  char kind = a.dtype().kind();
  if (a.size() != 0 && kind != 'i' && kind != 'u' && kind != 'b')
    throw py::type_error(std::string(what) + ": expected integers, got an array of dtype " +
                         std::string(py::str(py::handle(a.dtype()))));
  auto wide = as_array<std::int64_t>(a, ndim, what);
  std::vector<std::int32_t> out(static_cast<std::size_t>(wide.size()));
  const std::int64_t* p = wide.data();
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (p[i] < std::numeric_limits<std::int32_t>::min() || p[i] > std::numeric_limits<std::int32_t>::max())
      throw py::value_error(std::string(what) + ": " + std::to_string(p[i]) + " does not fit in int32");
    out[i] = static_cast<std::int32_t>(p[i]);
  }
  return out;
}

struct int_vector {
  using holder = tablio::basic_vector_holder<std::int32_t>;
  using value_type = std::vector<std::int32_t>;
  static std::vector<py::ssize_t> shape(const value_type& v) { return {static_cast<py::ssize_t>(v.size())}; }
  static py::object to_python(value_type&& v, const value_options&) {
    auto s = shape(v);
    return adopt(std::move(v), s);
  }
  static value_type from_python(py::handle h, const value_options&) {
    return int32_values(h, 1, "int-vector");
  }
  static py::object stack(std::vector<value_type>& values, const value_options& o) {
    return stack_or_list<std::int32_t>(values, o, shape, copy_elements, to_python);
  }
};

struct int_vector_vector {
  using holder = tablio::basic_vector_vector_holder<std::int32_t>;
  using value_type = std::vector<std::vector<std::int32_t>>;
  static py::object to_python(value_type&& v, const value_options& o) {
    py::list out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) out[i] = int_vector::to_python(std::move(v[i]), o);
    return std::move(out);
  }
  static value_type from_python(py::handle h, const value_options&) {
    value_type out;
    for (py::handle item : py::iter(h)) out.push_back(int32_values(item, 1, "int-vector-vector"));
    return out;
  }
};

struct int_pair_vector {
  using holder = tablio::basic_pair_vector_holder<std::int32_t>;
  using value_type = std::vector<std::pair<std::int32_t, std::int32_t>>;
  static py::object to_python(value_type&& v, const value_options&) {
    py::array_t<std::int32_t> out = new_array<std::int32_t>({static_cast<py::ssize_t>(v.size()), 2});
    std::int32_t* p = out.mutable_data();
    for (const auto& [a, b] : v) {
      *p++ = a;
      *p++ = b;
    }
    return std::move(out);
  }
  static value_type from_python(py::handle h, const value_options&) {
    if (py::array empty = py::array::ensure(h); empty && empty.size() == 0) return {};  // [] as (0, 2)
    std::vector<std::int32_t> flat = int32_values(h, 2, "int-pair-vector");
    if (py::array::ensure(h).shape(1) != 2 && !flat.empty())
      throw py::value_error("int-pair-vector: expected an array of shape (n, 2)");
    value_type out(flat.size() / 2);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = {flat[2 * i], flat[2 * i + 1]};
    return out;
  }
};

std::string text_from_python(py::handle h, const char* what) {
  if (py::isinstance<py::str>(h)) return key_from_python(h);
  if (py::isinstance<py::bytes>(h)) return std::string(py::reinterpret_borrow<py::bytes>(h));
  throw py::type_error(std::string(what) + ": expected str");
}

struct token {
  using holder = tablio::token_holder;
  using value_type = std::string;
  static py::object to_python(value_type&& v, const value_options&) { return key_to_python(v); }
  static value_type from_python(py::handle h, const value_options&) { return text_from_python(h, "token"); }
};

struct token_vector {
  using holder = tablio::token_vector_holder;
  using value_type = std::vector<std::string>;
  static py::object to_python(value_type&& v, const value_options&) {
    py::list out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) out[i] = key_to_python(v[i]);
    return std::move(out);
  }
  static value_type from_python(py::handle h, const value_options&) {
    if (py::isinstance<py::str>(h)) throw py::type_error("token-vector: expected a list of str, got a str");
    value_type out;
    for (py::handle item : py::iter(h)) out.push_back(text_from_python(item, "token-vector"));
    return out;
  }
};

template <class T>
struct basic {
  using holder = tablio::basic_holder<T>;
  using value_type = T;
  static py::object to_python(value_type&& v, const value_options&) { return py::cast(v); }
  static value_type from_python(py::handle h, const value_options&) {
    if constexpr (std::is_same_v<T, bool>) {
      return py::cast<bool>(h);
    } else if constexpr (std::is_integral_v<T>) {
      if (!py::isinstance<py::int_>(h) && !py::isinstance<py::array>(h))
        throw py::type_error("int32: expected an int");
      long long v = py::cast<long long>(h);
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max())
        throw py::value_error("int32: " + std::to_string(v) + " does not fit in int32");
      return static_cast<T>(v);
    } else {
      return py::cast<T>(py::float_(py::reinterpret_borrow<py::object>(h)));
    }
  }
  // The dtype a DataLoader gives the same numbers one by one (Python's int and float become
  // int64 and float64 tensors), so that a batch read stacked equals one collated per sample.
  using stacked_type = std::conditional_t<std::is_same_v<T, bool>, bool,
                                          std::conditional_t<std::is_integral_v<T>, std::int64_t, double>>;
  static py::object stack(std::vector<value_type>& values, const value_options&) {
    py::array_t<stacked_type> out = new_array<stacked_type>({static_cast<py::ssize_t>(values.size())});
    std::copy(values.begin(), values.end(), out.mutable_data());
    return std::move(out);
  }
};

// (rate, float32 ndarray[channels, samples]), as Kaldi's WaveData holds it (float64 when
// dtype= asks).
struct wave {
  using holder = tablio::wave_holder;
  using value_type = tablio::wave_data;
  static py::object to_python(value_type&& w, const value_options& o) {
    float rate = w.sample_frequency();
    if (o.int16_samples) return py::make_tuple(static_cast<long>(std::lround(rate)), int16_samples(w.data()));
    py::object samples = float_matrix<float>::to_python(std::move(w.data()), o);
    if (o.double_precision) samples = samples.attr("astype")("float64");  // dtype=numpy.float64 asks for it
    return py::make_tuple(rate, samples);
  }
  static value_type from_python(py::handle h, const value_options& o) {
    auto pair = py::cast<py::tuple>(h);
    if (pair.size() != 2) throw py::value_error("wave: expected (rate, samples)");
    py::array samples = py::array::ensure(pair[1]);
    if (o.int16_samples) {  // (samples,) or (samples, channels), as kaldiio gives them
      if (samples && samples.ndim() == 1) samples = samples.attr("reshape")(-1, 1);
      samples = py::array_t<float, py::array::forcecast>::ensure(samples.attr("T"));
    } else if (samples && samples.ndim() == 1) {
      samples = samples.attr("reshape")(1, -1);
    }
    return value_type(py::cast<float>(py::float_(py::object(pair[0]))),
                      float_matrix<float>::from_python(samples, o));
  }

 private:
  // Kaldi's samples (channels, samples), as int16 (samples,) for one channel and (samples,
  // channels) for more: kaldiio's layout, the numbers a WAVE file of them stores.
  static py::object int16_samples(const tablio::matrix<float>& m) {
    const std::int32_t channels = m.num_rows(), count = m.num_cols();
    py::array_t<std::int16_t> out =
        channels == 1 ? new_array<std::int16_t>({count}) : new_array<std::int16_t>({count, channels});
    std::int16_t* p = out.mutable_data();
    for (std::int32_t c = 0; c < channels; ++c)
      for (std::int32_t i = 0; i < count; ++i)
        p[static_cast<std::size_t>(i) * static_cast<std::size_t>(channels) + static_cast<std::size_t>(c)] =
            tablio::wave_data::pcm16(m(c, i));
    return std::move(out);
  }
};

// type omitted for a Kaldi table: each value's type from its own header, as kaldiio reads
// them, in the precision stored. Binary: FM/DM and CM/CM2/CM3 (decompressed to float32) are
// matrices, FV/DV vectors, RIFF a wave, an int32 size marker an int32 vector; text (read as
// float32): "[" on a line of its own a matrix, else a vector. Anything else cannot be told
// from its bytes.
struct any_kaldi_value {
  std::variant<tablio::matrix<float>, tablio::matrix<double>, tablio::vector<float>, tablio::vector<double>,
               tablio::wave_data, std::vector<std::int32_t>>
      value;

  // A range ("f.ark:15[0:9]"), as the value's own type takes it: matrices and vectors.
  friend void apply_range(any_kaldi_value& v, std::string_view range) {
    std::visit(
        [&](auto& value) {
          if constexpr (requires { apply_range(value, range); })
            apply_range(value, range);
          else
            throw tablio::usage_error("a range applies to matrices and vectors, not to this object");
        },
        v.value);
  }
};

class any_kaldi_holder : public tablio::holder_storage<any_kaldi_value> {
 public:
  static void write(tablio::writer&, bool, const any_kaldi_value&) {
    throw tablio::usage_error("writing a table needs its values' type (type=\"matrix\", \"vector\", ...)");
  }
  void read(tablio::reader& r) {
    r.ensure(5);  // fewer at the end of the input: the holders say what is missing
    std::string_view head(r.window().data(), std::min<std::size_t>(r.window().size(), 5));
    if (head.starts_with("RIFF")) return read_as<tablio::wave_holder>(r);
    if (head.starts_with(std::string_view("\0B", 2))) {
      std::string_view token = head.substr(2);
      if (token.starts_with("FM") || token.starts_with("CM"))
        return read_as<tablio::holder<tablio::matrix<float>>>(r);
      if (token.starts_with("DM")) return read_as<tablio::holder<tablio::matrix<double>>>(r);
      if (token.starts_with("FV")) return read_as<tablio::holder<tablio::vector<float>>>(r);
      if (token.starts_with("DV")) return read_as<tablio::holder<tablio::vector<double>>>(r);
      if (token.starts_with("\4")) return read_int_vector(r);
    } else if (std::size_t at = head.find_first_not_of(" \t");
               at != std::string_view::npos && head[at] == '[') {
      // A text matrix opens with "[" and a newline; a text vector has its numbers on that line;
      // an empty one, "[ ]", is taken for a 0x0 matrix.
      r.ensure(64);
      std::string_view text(r.window().data(), std::min<std::size_t>(r.window().size(), 64));
      std::size_t next = text.find_first_not_of(" \t", text.find('[') + 1);
      if (next == std::string_view::npos || text[next] == '\n' || text[next] == '\r' || text[next] == ']')
        return read_as<tablio::holder<tablio::matrix<float>>>(r);
      return read_as<tablio::holder<tablio::vector<float>>>(r);
    }
    cannot_tell(r, head);
  }

 private:
  [[noreturn]] static void cannot_tell(tablio::reader& r, std::string_view head) {
    r.fail(
        {"a Kaldi object whose header tells its type (FM, DM, CM, CM2, CM3, FV, DV, RIFF, an int32 vector, "
         "or text in [ ]); pass type= for any other: \"int-vector-vector\", \"token\", \"float\", ..."},
        {tablio::quoted_excerpt(head)});
  }
  // An int32 vector is its count, then as many numbers, each with its size marker: a single
  // number (int32 or float) has no marker after it, an empty vector looks like a 0, and a
  // vector of vectors or of pairs goes on with markers after the count's numbers.
  void read_int_vector(tablio::reader& r) {
    r.ensure(8);
    std::string_view head(r.window().data(), std::min<std::size_t>(r.window().size(), 8));
    if (head.size() < 8 || head[7] != '\4') cannot_tell(r, head);
    read_as<tablio::basic_vector_holder<std::int32_t>>(r);
    if (r.peek() == '\4') cannot_tell(r, "\4...");
  }

  template <class H>
  void read_as(tablio::reader& r) {
    H h;
    h.read(r);
    value().value = std::move(h.value());
  }
};

struct any_kaldi {
  using holder = any_kaldi_holder;
  using value_type = any_kaldi_value;
  static py::object to_python(value_type&& v, const value_options& o) {
    const bool numbers = v.value.index() < 4;  // matrices and vectors: converted when dtype= asks
    py::object out = stored(std::move(v), o);
    if (numbers && o.dtype_given && !o.int16_samples)  // int16 asks for waves as kaldiio gives them
      out = out.attr("astype")(o.double_precision ? "float64" : "float32", py::arg("copy") = false);
    return out;
  }
  static py::object stored(value_type&& v, const value_options& o) {
    return std::visit(
        [&](auto&& value) -> py::object {
          using T = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<T, tablio::matrix<float>>)
            return float_matrix<float>::to_python(std::move(value), o);
          if constexpr (std::is_same_v<T, tablio::matrix<double>>)
            return float_matrix<double>::to_python(std::move(value), o);
          if constexpr (std::is_same_v<T, tablio::vector<float>>)
            return float_vector<float>::to_python(std::move(value), o);
          if constexpr (std::is_same_v<T, tablio::vector<double>>)
            return float_vector<double>::to_python(std::move(value), o);
          if constexpr (std::is_same_v<T, tablio::wave_data>) return wave::to_python(std::move(value), o);
          if constexpr (std::is_same_v<T, std::vector<std::int32_t>>)
            return int_vector::to_python(std::move(value), o);
        },
        std::move(v.value));
  }
  static value_type from_python(py::handle, const value_options&) {
    throw tablio::usage_error("writing a table needs its values' type (type=\"matrix\", \"vector\", ...)");
  }
};

// Matrices: written compressed when the writer has a compression method.
value_type_entry matrix_entry() {
  value_type_entry plain = entry_for_precisions<float_matrix<float>, float_matrix<double>>();
  value_type_entry packed = entry_for<compressed>();
  plain.writer = [plain_writer = plain.writer](const std::string& s,
                                               const value_options& o) -> std::unique_ptr<writer_base> {
    if (o.compression_method) return make_writer<compressing>(s, o);
    return plain_writer(s, o);
  };
  plain.save_object = [plain_save = plain.save_object, packed_save = packed.save_object](
                          const std::string& s, py::handle v, bool binary, const value_options& o) {
    return o.compression_method ? packed_save(s, v, binary, o) : plain_save(s, v, binary, o);
  };
  return plain;
}

}  // namespace

void register_kaldi_types() {
  register_value_type("matrix", matrix_entry());
  register_value_type("vector", entry_for_precisions<float_vector<float>, float_vector<double>>());
  value_type_entry compressed_matrices = entry_for<compressed>();
  compressed_matrices.writer = [](const std::string& s,
                                  const value_options& o) -> std::unique_ptr<writer_base> {
    return make_writer<compressing>(s, o);
  };
  register_value_type("compressed-matrix", compressed_matrices);
  register_value_type("int-vector", entry_for<int_vector>());
  register_value_type("int-vector-vector", entry_for<int_vector_vector>());
  register_value_type("int-pair-vector", entry_for<int_pair_vector>());
  register_value_type("token", entry_for<token>());
  register_value_type("token-vector", entry_for<token_vector>());
  register_value_type("int32", entry_for<basic<std::int32_t>>());
  register_value_type("float", entry_for<basic<float>>());
  register_value_type("double", entry_for<basic<double>>());
  register_value_type("bool", entry_for<basic<bool>>());
  register_value_type("wave", entry_for<wave>());
  register_value_type("auto", entry_for<any_kaldi>());
}

}  // namespace tablio_python
