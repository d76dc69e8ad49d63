// Values of Kaldi and Caffe holders as tf.Examples that TensorFlow's parse_single_example
// reads: an int64 "shape" feature, a "data" feature (float, int64 or bytes), and what a type
// needs besides.
//
//   holder                          shape                 data                 besides
//   holder<matrix<float>>           rows, cols            float, row-major
//   holder<vector<float>>           dim                   float
//   holder<compressed_matrix>       rows, cols            bytes: Kaldi's object "CM..."
//   basic_vector_holder<int32>      dim                   int64
//   basic_vector_vector_holder<int32>  number of vectors  int64, concatenated  row_lengths (int64)
//   token_holder, bytes_holder      (none)                bytes: the string
//   wave_holder                     channels, samples     float, channel rows  sample_rate (float)
//   datum_holder                    channels, height, width  bytes, or float   label (int64),
//                                   (where the Datum has them)                 encoded (int64, if set)
//
// example_record_holder<H> stores H's values in record framings (TFRecord) in that form, with
// a table's key in a bytes feature under "key=NAME", while archives keep H's own objects; so
// ark -> tfrecord -> ark gives the archive back byte for byte. It reads records of H's own form
// too.
#pragma once

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

#include <cstdint>
#include <string>
#include <vector>

TABLIO_BEGIN_NAMESPACE

template <class H>
struct example_form;  // to_example(const value_type&, example&); from_example(const example&, value_type&,
                      // name)

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

template <>
struct example_form<holder<matrix<float>>> {
  static void to_example(const matrix<float>& m, example& ex) {
    ex.features["shape"] = std::vector<std::int64_t>{m.num_rows(), m.num_cols()};
    ex.features["data"] = std::vector<float>(m.data(), m.data() + m.size());
  }
  static void from_example(const example& ex, matrix<float>& m, const std::string& where) {
    auto dims = detail::form_shape(ex, 2, where);
    const auto& data = detail::form_data<float>(ex, std::uint64_t(dims[0]) * std::uint64_t(dims[1]), where);
    m = matrix<float>(dims[0], dims[1], data);
  }
};

template <>
struct example_form<holder<vector<float>>> {
  static void to_example(const vector<float>& v, example& ex) {
    ex.features["shape"] = std::vector<std::int64_t>{static_cast<std::int64_t>(v.size())};
    ex.features["data"] = std::vector<float>(v.data(), v.data() + v.size());
  }
  static void from_example(const example& ex, vector<float>& v, const std::string& where) {
    auto dims = detail::form_shape(ex, 1, where);
    v = vector<float>(detail::form_data<float>(ex, std::uint64_t(dims[0]), where));
  }
};

template <>
struct example_form<holder<compressed_matrix>> {
  static void to_example(const compressed_matrix& m, example& ex) {
    std::string object;
    writer w = memory_writer(object);
    m.write_binary(w);
    w.close();
    ex.features["shape"] = std::vector<std::int64_t>{m.num_rows(), m.num_cols()};
    ex.features["data"] = std::vector<std::string>{std::move(object)};
  }
  static void from_example(const example& ex, compressed_matrix& m, const std::string& where) {
    auto dims = detail::form_shape(ex, 2, where);
    reader r = memory_reader(std::string_view(detail::form_data<std::string>(ex, 1, where).front()), where);
    m.read_binary(r);
    if (m.num_rows() != dims[0] || m.num_cols() != dims[1] || !r.at_end())
      detail::bad_example_field(where, "data", "a compressed matrix of the shape's size", "another");
  }
};

template <>
struct example_form<basic_vector_holder<std::int32_t>> {
  static void to_example(const std::vector<std::int32_t>& v, example& ex) {
    ex.features["shape"] = std::vector<std::int64_t>{static_cast<std::int64_t>(v.size())};
    ex.features["data"] = std::vector<std::int64_t>(v.begin(), v.end());
  }
  static void from_example(const example& ex, std::vector<std::int32_t>& v, const std::string& where) {
    auto dims = detail::form_shape(ex, 1, where);
    const auto& data = detail::form_data<std::int64_t>(ex, std::uint64_t(dims[0]), where);
    v.clear();
    for (std::int64_t x : data) {
      if (x < INT32_MIN || x > INT32_MAX)
        detail::bad_example_field(where, "data", "int32 values", std::to_string(x));
      v.push_back(static_cast<std::int32_t>(x));
    }
  }
};

template <>
struct example_form<basic_vector_vector_holder<std::int32_t>> {
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
      total += static_cast<std::uint64_t>(n);
    }
    const auto& data = detail::form_data<std::int64_t>(ex, total, where);
    v.assign(lengths.size(), {});
    std::size_t at = 0;
    for (std::size_t i = 0; i < lengths.size(); ++i)
      for (std::int64_t k = 0; k < lengths[i]; ++k, ++at) {
        if (data[at] < INT32_MIN || data[at] > INT32_MAX)
          detail::bad_example_field(where, "data", "int32 values", std::to_string(data[at]));
        v[i].push_back(static_cast<std::int32_t>(data[at]));
      }
  }
};

template <>
struct example_form<token_holder> : detail::string_example_form {};
template <>
struct example_form<bytes_holder> : detail::string_example_form {};

template <>
struct example_form<wave_holder> {
  static void to_example(const wave_data& w, example& ex) {
    const matrix<float>& s = w.data();
    ex.features["shape"] = std::vector<std::int64_t>{s.num_rows(), s.num_cols()};
    ex.features["data"] = std::vector<float>(s.data(), s.data() + s.size());
    ex.features["sample_rate"] = std::vector<float>{w.sample_frequency()};
  }
  static void from_example(const example& ex, wave_data& w, const std::string& where) {
    matrix<float> samples;
    example_form<holder<matrix<float>>>::from_example(ex, samples, where);
    const auto& rate = detail::form_list<float>(ex, "sample_rate", where);
    if (rate.size() != 1)
      detail::bad_example_field(where, "sample_rate", "one value", std::to_string(rate.size()));
    w = wave_data(rate.front(), std::move(samples));
  }
};

template <>
struct example_form<datum_holder> {
  // A Datum that holds neither channels, height nor width (an encoded image, as Caffe's
  // convert_imageset writes one) has no "shape", nor one without a label a "label": read back,
  // they are absent again, and the Datum's bytes are what they were.
  static void to_example(const datum& d, example& ex) {
    if (d.present.channels || d.present.height || d.present.width)
      ex.features["shape"] = std::vector<std::int64_t>{d.channels, d.height, d.width};
    if (d.present.data || d.float_data.empty())
      ex.features["data"] = std::vector<std::string>{d.data};
    else
      ex.features["data"] = d.float_data;
    if (d.present.label) ex.features["label"] = std::vector<std::int64_t>{d.label};
    if (d.encoded) ex.features["encoded"] = std::vector<std::int64_t>{1};
  }
  static void from_example(const example& ex, datum& d, const std::string& where) {
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
      d.data = detail::form_data<std::string>(ex, 1, where).front();
      d.present.data = true;
    }
    if (ex.features.count("label")) {
      const auto& label = detail::form_list<std::int64_t>(ex, "label", where);
      if (label.size() != 1)
        detail::bad_example_field(where, "label", "one value", std::to_string(label.size()));
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

// H's values in record framings as example_form<H> Examples; elsewhere H itself.
template <holder_type H>
requires has_example_form<H>
class example_record_holder : public H {
 public:
  using typename H::value_type;
  static void encode_record(std::string& out, const value_type& v) { encode_example(as_example(v), out); }
  static void encode_record(std::string& out, const value_type& v, std::string_view key_name,
                            std::string_view key) {
    example_holder::encode_record(out, as_example(v), key_name, key);
  }
  // Records of either form are read, since files of both exist: an Example (whose first byte
  // is its features' tag, 0x0a), or H's own record (a binary object starts "\0B", a Datum with a
  // varint, a wave "RIFF", a token with no whitespace).
  void decode_record(std::string_view bytes, const std::string& name) {
    if (bytes.empty() || bytes.front() != '\x0a') {
      example_.clear();  // which holds no key to take
      return tablio::decode_record(static_cast<H&>(*this), bytes, name);
    }
    example_.decode_record(bytes, name);
    example_form<H>::from_example(example_.value(), this->value(), name);
  }
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

TABLIO_END_NAMESPACE
