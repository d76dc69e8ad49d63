// Values of Kaldi and Caffe holders as tf.Examples that TensorFlow's parse_single_example
// reads: an int64 "shape" feature, a "data" feature (float, int64 or bytes), and what a type
// needs besides.
//
//   holder                          shape                 data                 besides
//   holder<matrix<T>>               rows, cols            float, row-major (*)
//   holder<vector<T>>               dim                   float (*)
//   holder<compressed_matrix>,      rows, cols            bytes: Kaldi's object "CM..."
//     holder<matrix_to_compress>
//   basic_vector_holder<int32>      dim                   int64
//   basic_vector_vector_holder<int32>  number of vectors  int64, concatenated  row_lengths (int64)
//   basic_pair_vector_holder<int32> pairs, 2              int64, pair by pair
//   basic_holder<T>                 (empty)               one int64 (integers, bool) or float (*)
//   token_holder, bytes_holder      (none)                bytes: the string
//   token_vector_holder             number of tokens      bytes, one per token
//   wave_holder                     channels, samples     float, channel rows  sample_rate (float)
//   datum_holder                    channels, height, width  bytes, or float   label (int64),
//                                   (where the Datum has them)                 encoded (int64, if set)
//
// (*) double values, which a float list would round, are one bytes value of little-endian
// float64s instead (tf.io.decode_raw(data, tf.float64) reads them). Either reads as either:
// float64s read as float are rounded to the nearest, as Kaldi reads a double matrix as float.
//
// example_record_holder<H> stores H's values in record framings (TFRecord) in that form, with
// a table's key in a bytes feature under "key=NAME", while archives keep H's own objects; so
// ark -> tfrecord -> ark gives the archive back byte for byte. It reads records of H's own form
// too.
#pragma once

#include <tablio/core/endian.hpp>
#include <tablio/core/float_math.hpp>
#include <tablio/holder/basic.hpp>
#include <tablio/holder/datum.hpp>
#include <tablio/holder/example.hpp>
#include <tablio/holder/holder.hpp>
#include <tablio/holder/record.hpp>
#include <tablio/holder/token.hpp>
#include <tablio/holder/wave.hpp>
#include <tablio/stream/memory.hpp>
#include <tablio/types/compressed_matrix.hpp>
#include <tablio/types/example_mapping.hpp>
#include <tablio/types/matrix.hpp>

#include <bit>
#include <concepts>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

TABLIO_BEGIN_NAMESPACE

/// How holder H's values are tf.Examples, in the table above: specializations have
///   static void to_example(const value_type&, example&);
///   static void from_example(const example&, value_type&, const std::string& name);
/// the second throwing format_error, naming `name` and the feature, for an Example not of the
/// form.
template <class H>
struct example_form;

template <class H>
concept has_example_form = requires(const typename H::value_type& v, typename H::value_type& out, example& ex,
                                    const std::string& name) {
  example_form<H>::to_example(v, ex);
  example_form<H>::from_example(ex, out, name);
};

namespace detail {

template <class T>
const example_list_of<T>& form_list(const example& ex, std::string_view name, const std::string& where) {
  return example_field_list<T>(ex, name, where);
}

// The "shape" feature, checked to have `rank` non-negative int32 dimensions.
inline std::vector<std::int32_t> form_shape(const example& ex, std::size_t rank, const std::string& where) {
  const auto& shape = form_list<std::int64_t>(ex, "shape", where);
  if (shape.size() != rank)
    bad_example_field(where, "shape", std::to_string(rank) + " dimensions", std::to_string(shape.size()));
  std::vector<std::int32_t> dims;
  for (std::int64_t d : shape) {
    if (d < 0 || d > INT32_MAX)
      bad_example_field(where, "shape", "dimensions of 0 to 2^31-1", std::to_string(d));
    dims.push_back(static_cast<std::int32_t>(d));
  }
  return dims;
}

// The "data" feature as a list of T, checked to hold `count` values.
template <class T>
const example_list_of<T>& form_data(const example& ex, std::uint64_t count, const std::string& where) {
  const auto& data = form_list<T>(ex, "data", where);
  if (data.size() != count)
    bad_example_field(where, "data", std::to_string(count) + " values, as the shape says",
                      std::to_string(data.size()));
  return data;
}

// Floating-point values as the "data" feature: float's as a float list; double's, which an
// Example's float32 list would round, as one bytes value of little-endian float64s (TensorFlow
// reads them with tf.io.decode_raw(data, tf.float64)).
template <class T>
void put_form_floats(example& ex, const T* values, std::size_t n) {
  if constexpr (std::is_same_v<T, float>) {
    ex.features["data"] = std::vector<float>(values, values + n);
  } else {
    std::string bytes(n * sizeof(double), '\0');
    for (std::size_t i = 0; i < n; ++i)
      store<std::endian::little>(bytes.data() + i * sizeof(double), values[i]);
    ex.features["data"] = std::vector<std::string>{std::move(bytes)};
  }
}

// A double as the nearest float, as Kaldi reads a double matrix into a float one (beyond
// float's range: an infinity, with no undefined conversion).
inline float nearest_float(double x) noexcept {
  constexpr double rounds_to_infinity = 0x1.ffffffp127;  // FLT_MAX and half its last place
  if (is_finite(x) && magnitude(x) >= rounds_to_infinity)
    return x > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
  if (is_finite(x) && magnitude(x) > std::numeric_limits<float>::max())
    return x > 0 ? std::numeric_limits<float>::max() : std::numeric_limits<float>::lowest();
  return static_cast<float>(x);
}

// The "data" feature's `count` floating-point values, from either form put_form_floats writes.
template <class T>
std::vector<T> form_floats(const example& ex, std::uint64_t count, const std::string& where) {
  auto data = ex.features.find("data");
  if (data == ex.features.end() || !std::holds_alternative<std::vector<std::string>>(data->second)) {
    const auto& floats = form_data<float>(ex, count, where);
    return std::vector<T>(floats.begin(), floats.end());
  }
  const std::string& bytes = form_data<std::string>(ex, 1, where).front();
  if (bytes.size() / sizeof(double) != count || bytes.size() % sizeof(double) != 0)
    bad_example_field(where, "data", std::to_string(count) + " float64 values, as the shape says",
                      std::to_string(bytes.size()) + " bytes");
  std::vector<T> out(bytes.size() / sizeof(double));
  for (std::size_t i = 0; i < out.size(); ++i) {
    double x = load<std::endian::little, double>(bytes.data() + i * sizeof(double));
    if constexpr (std::is_same_v<T, float>)
      out[i] = nearest_float(x);
    else
      out[i] = x;
  }
  return out;
}

// The "data" feature's `count` int64 values, each checked to be an int32.
inline std::vector<std::int32_t> form_int32s(const example& ex, std::uint64_t count,
                                             const std::string& where) {
  const auto& data = form_data<std::int64_t>(ex, count, where);
  std::vector<std::int32_t> out;
  out.reserve(data.size());
  for (std::int64_t x : data) {
    if (x < INT32_MIN || x > INT32_MAX) bad_example_field(where, "data", "int32 values", std::to_string(x));
    out.push_back(static_cast<std::int32_t>(x));
  }
  return out;
}

// The "data" feature's one bytes value, when it holds one.
inline const std::string* single_bytes_value(const example& ex) {
  auto data = ex.features.find("data");
  if (data == ex.features.end()) return nullptr;
  const auto* values = std::get_if<std::vector<std::string>>(&data->second);
  return values && values->size() == 1 ? &values->front() : nullptr;
}

// An Example read for a value in its form holds the form's "data" feature: one that does not
// is another kind of record (a tf.Example of a dataset's own features), said so.
inline void check_form_example(const example& ex, const std::string& where) {
  if (!ex.features.count("data"))
    throw_format_error(where, std::nullopt, {}, {"a value's Example form (a 'data' feature)"},
                       {"an Example of other features"});
}

// A value stored as one bytes "data" value with no shape (tokens, payloads).
struct string_example_form {
  static void to_example(const std::string& v, example& ex) {
    ex.features["shape"] = std::vector<std::int64_t>{};
    ex.features["data"] = std::vector<std::string>{v};
  }
  static void from_example(const example& ex, std::string& v, const std::string& where) {
    v = form_data<std::string>(ex, 1, where).front();
  }
};

}  // namespace detail

// A compressed matrix: its shape, and Kaldi's binary object as one bytes value.
template <>
struct example_form<holder<compressed_matrix>> {
  // The example_form interface: m's shape, and its compressed object ("CM...") as the data.
  static void to_example(const compressed_matrix& m, example& ex) {
    std::string object;
    writer w = memory_writer(object);
    m.write_binary(w);
    w.close();
    ex.features["shape"] = std::vector<std::int64_t>{m.num_rows(), m.num_cols()};
    ex.features["data"] = std::vector<std::string>{std::move(object)};
  }
  // The example_form interface: reads the object back; its size must be the shape's, and the
  // data that object alone.
  static void from_example(const example& ex, compressed_matrix& m, const std::string& where) {
    auto dims = detail::form_shape(ex, 2, where);
    reader r = memory_reader(std::string_view(detail::form_data<std::string>(ex, 1, where).front()), where);
    m.read_binary(r);
    if (m.num_rows() != dims[0] || m.num_cols() != dims[1] || !r.at_end())
      detail::bad_example_field(where, "data", "a compressed matrix of the shape's size", "another");
  }
};

// A matrix: (rows, cols) and its values row by row, as float (or float64 bytes for double).
template <class T>
struct example_form<holder<matrix<T>>> {
  // The example_form interface: the shape and the values, row-major.
  static void to_example(const matrix<T>& m, example& ex) {
    ex.features["shape"] = std::vector<std::int64_t>{m.num_rows(), m.num_cols()};
    detail::put_form_floats(ex, m.data(), m.size());
  }
  // The example_form interface: a matrix of the shape's size, from float or float64 data.
  // A compressed matrix's form is read decompressed, as a matrix holder reads a compressed
  // matrix in an archive: its data is one bytes value, a Kaldi CM object ("CM", "CM2", "CM3"),
  // whose size is never 8 bytes a value as float64 data's is (a header, then 1 or 2 bytes a
  // value). Other bytes are float64 data, of the shape's count or an error saying so.
  static void from_example(const example& ex, matrix<T>& m, const std::string& where) {
    auto dims = detail::form_shape(ex, 2, where);
    const std::uint64_t count = std::uint64_t(dims[0]) * std::uint64_t(dims[1]);
    if (const std::string* object = detail::single_bytes_value(ex);
        object && object->starts_with("CM") && (object->size() % 8 != 0 || object->size() / 8 != count)) {
      compressed_matrix stored;
      example_form<holder<compressed_matrix>>::from_example(ex, stored, where);
      m = matrix<T>(stored.num_rows(), stored.num_cols());
      stored.decompress(m.data());
      return;
    }
    m = matrix<T>(dims[0], dims[1], detail::form_floats<T>(ex, count, where));
  }
};

// A vector: its dimension and its values, as float (or float64 bytes for double).
template <class T>
struct example_form<holder<vector<T>>> {
  // The example_form interface: the dimension and the values.
  static void to_example(const vector<T>& v, example& ex) {
    ex.features["shape"] = std::vector<std::int64_t>{static_cast<std::int64_t>(v.size())};
    detail::put_form_floats(ex, v.data(), v.size());
  }
  // The example_form interface: a vector of the shape's dimension; float data read as double
  // is exact, float64 data read as float rounded to the nearest.
  static void from_example(const example& ex, vector<T>& v, const std::string& where) {
    auto dims = detail::form_shape(ex, 1, where);
    v = vector<T>(detail::form_floats<T>(ex, std::uint64_t(dims[0]), where));
  }
};

// Compressed as it is written, so stored as a compressed matrix is.
template <>
struct example_form<holder<matrix_to_compress>> {
  // The example_form interface: the matrix compressed by its method, as holder<compressed_matrix>.
  static void to_example(const matrix_to_compress& m, example& ex) {
    example_form<holder<compressed_matrix>>::to_example(m.compressed(), ex);
  }
  // The example_form interface: the values decompressed, to be compressed again with the
  // automatic method when written.
  static void from_example(const example& ex, matrix_to_compress& m, const std::string& where) {
    compressed_matrix stored;
    example_form<holder<compressed_matrix>>::from_example(ex, stored, where);
    m.values = matrix<float>(stored.num_rows(), stored.num_cols());
    stored.decompress(m.values.data());
    m.method = compression_method::automatic;
  }
};

// A vector of int32: its dimension and its values as int64.
template <>
struct example_form<basic_vector_holder<std::int32_t>> {
  // The example_form interface: the dimension and the values.
  static void to_example(const std::vector<std::int32_t>& v, example& ex) {
    ex.features["shape"] = std::vector<std::int64_t>{static_cast<std::int64_t>(v.size())};
    ex.features["data"] = std::vector<std::int64_t>(v.begin(), v.end());
  }
  // The example_form interface: the shape's count of values, each checked to fit an int32.
  static void from_example(const example& ex, std::vector<std::int32_t>& v, const std::string& where) {
    auto dims = detail::form_shape(ex, 1, where);
    v = detail::form_int32s(ex, std::uint64_t(dims[0]), where);
  }
};

// A vector of int32 vectors, as a ragged tensor: the number of vectors, their lengths in
// "row_lengths", and their values concatenated.
template <>
struct example_form<basic_vector_vector_holder<std::int32_t>> {
  // The example_form interface: the count, the lengths and the values.
  static void to_example(const std::vector<std::vector<std::int32_t>>& v, example& ex) {
    std::vector<std::int64_t> lengths, data;
    for (const auto& inner : v) {
      lengths.push_back(static_cast<std::int64_t>(inner.size()));
      data.insert(data.end(), inner.begin(), inner.end());
    }
    ex.features["shape"] = std::vector<std::int64_t>{static_cast<std::int64_t>(v.size())};
    ex.features["row_lengths"] = std::move(lengths);
    ex.features["data"] = std::move(data);
  }
  // The example_form interface: one length per vector, none negative, and as many values as
  // they add up to, each checked to fit an int32.
  static void from_example(const example& ex, std::vector<std::vector<std::int32_t>>& v,
                           const std::string& where) {
    auto dims = detail::form_shape(ex, 1, where);
    const auto& lengths = detail::form_list<std::int64_t>(ex, "row_lengths", where);
    if (lengths.size() != std::uint64_t(dims[0]))
      detail::bad_example_field(where, "row_lengths", std::to_string(dims[0]) + " lengths",
                                std::to_string(lengths.size()));
    std::uint64_t total = 0;
    for (std::int64_t n : lengths) {
      if (n < 0) detail::bad_example_field(where, "row_lengths", "lengths of 0 or more", std::to_string(n));
      // Lengths that wrap around could add up to the values there are and point past them.
      if (static_cast<std::uint64_t>(n) > UINT64_MAX - total)
        detail::bad_example_field(where, "row_lengths", "lengths whose sum fits 64 bits", std::to_string(n));
      total += static_cast<std::uint64_t>(n);
    }
    std::vector<std::int32_t> data = detail::form_int32s(ex, total, where);
    v.assign(lengths.size(), {});
    auto at = data.begin();
    for (std::size_t i = 0; i < lengths.size(); at += lengths[i], ++i) v[i].assign(at, at + lengths[i]);
  }
};

// Pairs as a (pairs, 2) shape over int64 data, first and second of each in turn.
template <>
struct example_form<basic_pair_vector_holder<std::int32_t>> {
  // The example_form interface: shape (pairs, 2) and the values.
  static void to_example(const std::vector<std::pair<std::int32_t, std::int32_t>>& v, example& ex) {
    std::vector<std::int64_t> data;
    data.reserve(2 * v.size());
    for (const auto& [a, b] : v) {
      data.push_back(a);
      data.push_back(b);
    }
    ex.features["shape"] = std::vector<std::int64_t>{static_cast<std::int64_t>(v.size()), 2};
    ex.features["data"] = std::move(data);
  }
  // The example_form interface: a shape of two columns, and values that fit an int32.
  static void from_example(const example& ex, std::vector<std::pair<std::int32_t, std::int32_t>>& v,
                           const std::string& where) {
    auto dims = detail::form_shape(ex, 2, where);
    if (dims[1] != 2)
      detail::bad_example_field(where, "shape", "(pairs, 2)", std::to_string(dims[1]) + " columns");
    std::vector<std::int32_t> data = detail::form_int32s(ex, 2 * std::uint64_t(dims[0]), where);
    v.resize(std::size_t(dims[0]));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = {data[2 * i], data[2 * i + 1]};
  }
};

// Tokens as a bytes list, each checked to be a token on reading as on writing.
template <>
struct example_form<token_vector_holder> {
  // The example_form interface: the count and the tokens; throws usage_error for one that is
  // not a token.
  static void to_example(const std::vector<std::string>& tokens, example& ex) {
    for (const std::string& t : tokens) token_holder::check_token(t);
    ex.features["shape"] = std::vector<std::int64_t>{static_cast<std::int64_t>(tokens.size())};
    ex.features["data"] = tokens;
  }
  // The example_form interface: the shape's count of tokens; format_error for one that is not.
  static void from_example(const example& ex, std::vector<std::string>& tokens, const std::string& where) {
    auto dims = detail::form_shape(ex, 1, where);
    const auto& data = detail::form_data<std::string>(ex, std::uint64_t(dims[0]), where);
    for (const std::string& t : data)
      if (!kaldi_io::is_token(t)) detail::bad_example_field(where, "data", "tokens", quoted_excerpt(t));
    tokens.assign(data.begin(), data.end());
  }
};

// A number as one "data" value with an empty shape: int64 for integers and bools, float for
// floating point (a double held exactly, as in matrices).
template <class T>
struct example_form<basic_holder<T>> {
  // The example_form interface: an empty shape and the one value.
  static void to_example(const T& v, example& ex) {
    ex.features["shape"] = std::vector<std::int64_t>{};
    if constexpr (std::is_floating_point_v<T>)
      detail::put_form_floats(ex, &v, 1);
    else
      ex.features["data"] = std::vector<std::int64_t>{static_cast<std::int64_t>(v)};
  }
  // The example_form interface: one value, checked to fit T when T is an integer or bool.
  static void from_example(const example& ex, T& v, const std::string& where) {
    detail::form_shape(ex, 0, where);
    if constexpr (std::is_floating_point_v<T>)
      v = detail::form_floats<T>(ex, 1, where).front();
    else
      v = detail::example_value<T>(detail::form_data<std::int64_t>(ex, 1, where).front(), where, "data", 0);
  }
};

// A token: an empty shape and the token as one bytes value.
template <>
struct example_form<token_holder> : detail::string_example_form {};
// A payload: an empty shape and the bytes as one bytes value, for example_record_holder<
// bytes_holder> named explicitly; tables store bytes as they are (see stored_as_example).
template <>
struct example_form<bytes_holder> : detail::string_example_form {};

// A wave: (channels, samples), the samples channel by channel as float, and "sample_rate".
template <>
struct example_form<wave_holder> {
  // The example_form interface: the shape, the samples and the sample rate.
  static void to_example(const wave_data& w, example& ex) {
    const matrix<float>& s = w.data();
    ex.features["shape"] = std::vector<std::int64_t>{s.num_rows(), s.num_cols()};
    ex.features["data"] = std::vector<float>(s.data(), s.data() + s.size());
    ex.features["sample_rate"] = std::vector<float>{w.sample_frequency()};
  }
  // The example_form interface: the samples as a matrix's form is read, and one sample rate.
  static void from_example(const example& ex, wave_data& w, const std::string& where) {
    matrix<float> samples;
    example_form<holder<matrix<float>>>::from_example(ex, samples, where);
    const auto& rate = detail::form_list<float>(ex, "sample_rate", where);
    if (rate.size() != 1)
      detail::bad_example_field(where, "sample_rate", "one value", std::to_string(rate.size()));
    w = wave_data(rate.front(), std::move(samples));
  }
};

// A Caffe Datum: (channels, height, width), the image's bytes or its float_data, the label,
// and whether the bytes are an encoded image, each only where the Datum has it.
template <>
struct example_form<datum_holder> {
  // The example_form interface: the Datum's fields as features, as the struct says.
  // A Datum that holds neither channels, height nor width (an encoded image, as Caffe's
  // convert_imageset writes one) has no "shape", nor one without a label a "label": read back,
  // they are absent again, and the Datum's bytes are what they were. One with both an image's
  // bytes and float_data keeps the floats beside them, as "float_data".
  static void to_example(const datum& d, example& ex) {
    if (d.present.channels || d.present.height || d.present.width)
      ex.features["shape"] = std::vector<std::int64_t>{d.channels, d.height, d.width};
    if (d.present.data || d.float_data.empty()) {
      ex.features["data"] = std::vector<std::string>{d.data};
      if (!d.float_data.empty()) ex.features["float_data"] = d.float_data;  // beside the bytes
    } else {
      ex.features["data"] = d.float_data;
    }
    if (d.present.label) ex.features["label"] = std::vector<std::int64_t>{d.label};
    if (d.encoded) ex.features["encoded"] = std::vector<std::int64_t>{1};
  }
  // The example_form interface: the image's bytes are taken over from an Example the caller
  // gives up (an rvalue), else copied.
  template <class Example>
  requires std::same_as<std::remove_cvref_t<Example>, example>
  static void from_example(Example&& ex, datum& d, const std::string& where) {
    d = datum{};
    if (ex.features.count("shape")) {
      auto dims = detail::form_shape(ex, 3, where);
      d.channels = dims[0];
      d.height = dims[1];
      d.width = dims[2];
    } else {
      d.present.channels = d.present.height = d.present.width = false;
    }
    auto data = ex.features.find("data");
    if (data != ex.features.end() && std::holds_alternative<std::vector<float>>(data->second)) {
      d.float_data = detail::form_list<float>(ex, "data", where);
    } else {
      const std::string& bytes = detail::form_data<std::string>(ex, 1, where).front();
      if constexpr (std::is_const_v<std::remove_reference_t<Example>> || std::is_lvalue_reference_v<Example>)
        d.data = bytes;
      else
        d.data = std::move(const_cast<std::string&>(bytes));  // the caller's, which it gives up
      d.present.data = true;
      if (ex.features.count("float_data")) d.float_data = detail::form_list<float>(ex, "float_data", where);
    }
    if (ex.features.count("label")) {
      const auto& label = detail::form_list<std::int64_t>(ex, "label", where);
      if (label.size() != 1)
        detail::bad_example_field(where, "label", "one value", std::to_string(label.size()));
      if (label.front() < INT32_MIN || label.front() > INT32_MAX)
        detail::bad_example_field(where, "label", "a label that fits an int32",
                                  std::to_string(label.front()));
      d.label = static_cast<std::int32_t>(label.front());
    } else {
      d.present.label = false;
    }
    if (ex.features.count("encoded")) {
      d.encoded = detail::form_list<std::int64_t>(ex, "encoded", where) == std::vector<std::int64_t>{1};
      d.present.encoded = true;
    }
  }
};

// Whether a record of a type with an Example form holds that form rather than the type's own
// record: an Example starts with its features' tag (0x0a) and their length, where a binary
// object starts "\0B", a Datum with a varint field's tag, a wave "RIFF", a token with no
// whitespace, and a line of tokens, which can start with a newline, is that newline alone when
// it holds none.
inline bool is_example_record(std::string_view bytes) { return bytes.size() >= 2 && bytes.front() == '\x0a'; }

// The feature an Example form keeps its key in.
inline constexpr std::string_view form_key_feature = "key";

// H's values in record framings as example_form<H> Examples; elsewhere H itself.
template <holder_type H>
requires has_example_form<H>
class example_record_holder : public H {
 public:
  using typename H::value_type;
  // Where a table that names no key feature keeps keys that are not its records' numbers
  // (table_writer): the form's own features never take that name.
  static constexpr std::string_view unnumbered_key_feature = form_key_feature;
  // The record_holder concept: the record is v's form, in wire bytes.
  static void encode_record(std::string& out, const value_type& v) { encode_example(as_example(v), out); }
  // The keyed_record_holder concept: v's form with the key in bytes feature key_name.
  static void encode_record(std::string& out, const value_type& v, std::string_view key_name,
                            std::string_view key) {
    example_holder::encode_record(out, as_example(v), key_name, key);
  }
  // The record_holder concept. Records of either form are read, since files of both exist
  // (is_example_record tells them); an Example of other features is a format_error.
  void decode_record(std::string_view bytes, const std::string& name) {
    if (!is_example_record(bytes)) {
      example_.clear();  // which holds no key to take
      return tablio::decode_record(static_cast<H&>(*this), bytes, name);
    }
    example_.decode_record(bytes, name);
    detail::check_form_example(example_.value(), name);
    example_form<H>::from_example(std::move(example_.value()), this->value(),
                                  name);  // only its key is read after
  }
  // The keyed_record_holder concept: the key the last record kept in bytes feature key_name;
  // throws format_error when it has none (as a record of H's own form never has).
  std::string take_record_key(std::string_view key_name, const std::string& name) {
    return example_.take_record_key(key_name, name);
  }

 private:
  static example as_example(const value_type& v) {
    example ex;
    ex.features_present = true;
    example_form<H>::to_example(v, ex);
    return ex;
  }
  example_holder example_;
};

// Whether H's values are Examples of their form in TFRecord files: every type with one, but
// bytes, whose records are payloads as they are (TensorFlow's TFRecordWriter writes them so).
template <class H>
inline constexpr bool stored_as_example = has_example_form<H> && !std::is_same_v<H, bytes_holder>;

// The holder that reads H's values from any table, example_record_holder<H> where H's values
// are stored as Examples: it reads records of both forms, and is H elsewhere.
template <class H>
struct reading_holder {
  using type = H;
};
template <class H>
requires stored_as_example<H>
struct reading_holder<H> {
  using type = example_record_holder<H>;
};
// reading_holder<H>'s holder: `sequential_table_reader<reading_holder_t<H>>` reads H's values
// from a TFRecord file that Python or the tool wrote, and from any other table.
template <class H>
using reading_holder_t = typename reading_holder<H>::type;

TABLIO_END_NAMESPACE
