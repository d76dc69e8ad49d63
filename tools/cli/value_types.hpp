// The value types the tool handles (--type=...), each with its holder, how an entry's shape
// is described, and how it is printed as text.
#pragma once

#include <tablio/holder/example_form.hpp>
#include <tablio/holder/holders.hpp>
#include <tablio/holder/sample.hpp>
#include <tablio/stream/memory.hpp>
#include <tablio/table/specifier.hpp>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "arguments.hpp"

namespace cli {

inline constexpr const char* type_names =
    "matrix, compressed-matrix, vector, int-vector, int-vector-vector, token, wave, example, datum, sample, "
    "bytes";

// Calls f.template operator()<H>() with the holder of the type named `name`.
template <class F>
decltype(auto) with_type(std::string_view name, F&& f) {
  using namespace tablio;
  if (name == "matrix") return f.template operator()<holder<matrix<float>>>();
  if (name == "compressed-matrix") return f.template operator()<holder<compressed_matrix>>();
  if (name == "vector") return f.template operator()<holder<vector<float>>>();
  if (name == "int-vector") return f.template operator()<basic_vector_holder<std::int32_t>>();
  if (name == "int-vector-vector") return f.template operator()<basic_vector_vector_holder<std::int32_t>>();
  if (name == "token") return f.template operator()<token_holder>();
  if (name == "wave") return f.template operator()<wave_holder>();
  if (name == "example") return f.template operator()<example_holder>();
  if (name == "datum") return f.template operator()<datum_holder>();
  if (name == "sample") return f.template operator()<webdataset_sample_holder>();
  if (name == "bytes") return f.template operator()<bytes_holder>();
  throw usage_error("unknown --type '" + std::string(name) + "': one of " + type_names);
}

// The --type given, else "sample" for a table of WebDataset samples (tar,ext=*:), whose
// records no other type reads, "wave" for utterances a segments file cuts (segments=), else
// `otherwise`.
// What an error reading the table should add: a Kaldi archive's objects read as bytes fail
// on their first size marker, which says nothing of the --type to give.
inline std::string error_hint;

inline std::string value_type_of(arguments& args, const std::string& otherwise) {
  const auto& positional = args.positional();
  std::optional<tablio::rspecifier> r;
  if (!positional.empty()) r = tablio::parse_rspecifier(positional[0]);
  bool samples = r && r->format == "tar" && r->extension == tablio::webdataset_sample::tar_extension;
  std::string type = args.get("type", samples ? "sample" : r && !r->segments.empty() ? "wave" : otherwise);
  if (type == "bytes" && r && (r->format == "ark" || r->format == "scp"))
    error_hint =
        "--type=bytes reads Kaldi objects written as bytes; an archive of matrices, vectors or other "
        "objects is read with their type: --type=matrix, compressed-matrix, vector, int-vector, "
        "int-vector-vector, token or wave";
  return type;
}

// What H is called in summaries.
template <class H>
const char* type_label() {
  using namespace tablio;
  if constexpr (std::is_same_v<H, holder<matrix<float>>>)
    return "float matrix";
  else if constexpr (std::is_same_v<H, holder<compressed_matrix>>)
    return "compressed matrix";
  else if constexpr (std::is_same_v<H, holder<vector<float>>>)
    return "float vector";
  else if constexpr (std::is_same_v<H, basic_vector_holder<std::int32_t>>)
    return "int32 vector";
  else if constexpr (std::is_same_v<H, basic_vector_vector_holder<std::int32_t>>)
    return "int32 vector of vectors";
  else if constexpr (std::is_same_v<H, token_holder>)
    return "token";
  else if constexpr (std::is_same_v<H, wave_holder>)
    return "wave";
  else if constexpr (std::is_same_v<H, example_holder>)
    return "tf.Example";
  else if constexpr (std::is_same_v<H, datum_holder>)
    return "Caffe Datum";
  else if constexpr (std::is_same_v<H, webdataset_sample_holder>)
    return "WebDataset sample";
  else
    return "bytes";
}

// An entry's shape, as "500x80", "13", "2 channels x 16000 samples"...
inline std::string shape_of(const tablio::matrix<float>& m) {
  return std::to_string(m.num_rows()) + "x" + std::to_string(m.num_cols());
}
inline std::string shape_of(const tablio::compressed_matrix& m) {
  return std::to_string(m.num_rows()) + "x" + std::to_string(m.num_cols());
}
inline std::string shape_of(const tablio::vector<float>& v) { return std::to_string(v.size()); }
inline std::string shape_of(const std::vector<std::int32_t>& v) { return std::to_string(v.size()); }
inline std::string shape_of(const std::vector<std::vector<std::int32_t>>& v) {
  return std::to_string(v.size()) + " vectors";
}
inline std::string shape_of(const std::string& s) { return std::to_string(s.size()) + " bytes"; }
inline std::string shape_of(const tablio::wave_data& w) {
  return std::to_string(w.num_channels()) + " channels x " + std::to_string(w.num_samples()) + " samples";
}
inline std::string shape_of(const tablio::example& e) {
  return std::to_string(e.features.size()) + " features";
}
inline std::string shape_of(const tablio::datum& d) {
  return std::to_string(d.channels) + "x" + std::to_string(d.height) + "x" + std::to_string(d.width);
}
// A sample's extensions, in member order: "jpg+cls+json".
inline std::string shape_of(const tablio::webdataset_sample& s) {
  std::string out;
  for (const auto& m : s.members) out += (out.empty() ? "" : "+") + m.extension;
  return out;
}

// Bytes as a protobuf text-format string literal.
inline std::string quoted(std::string_view bytes) {
  std::string out = "\"";
  for (unsigned char c : bytes) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\%03o", c);
      out += esc;
    }
  }
  return out + "\"";
}

inline std::string float_text(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  return buf;
}

// An Example in protobuf's text format, on one line.
inline std::string example_text(const tablio::example& e) {
  std::string out = "features {";
  for (const auto& [key, value] : e.features) {
    out += " feature { key: " + cli::quoted(key) + " value {";
    std::visit(
        [&](const auto& list) {
          using L = std::decay_t<decltype(list)>;
          if constexpr (std::is_same_v<L, std::vector<std::string>>) {
            out += " bytes_list {";
            for (const auto& b : list) out += " value: " + cli::quoted(b);
          } else if constexpr (std::is_same_v<L, std::vector<float>>) {
            out += " float_list {";
            for (float f : list) out += " value: " + float_text(f);
          } else if constexpr (std::is_same_v<L, std::vector<std::int64_t>>) {
            out += " int64_list {";
            for (std::int64_t i : list) out += " value: " + std::to_string(i);
          } else {
            return;
          }
          out += " }";
        },
        value);
    out += " } }";
  }
  return out + " }";
}

// A Datum in protobuf's text format, on one line (the fields it holds).
inline std::string datum_text(const tablio::datum& d) {
  std::string out;
  auto field = [&](const char* name, const std::string& value) {
    if (!out.empty()) out += ' ';
    out += std::string(name) + ": " + value;
  };
  if (d.present.channels) field("channels", std::to_string(d.channels));
  if (d.present.height) field("height", std::to_string(d.height));
  if (d.present.width) field("width", std::to_string(d.width));
  if (d.present.data) field("data", cli::quoted(d.data));
  if (d.present.label) field("label", std::to_string(d.label));
  for (float f : d.float_data) field("float_data", float_text(f));
  if (d.present.encoded) field("encoded", d.encoded ? "true" : "false");
  return out;
}

// An entry's value as text: Kaldi's text form for Kaldi's types, protobuf text format for
// Examples and Datums, an escaped string for bytes.
template <class H>
std::string value_text(const typename H::value_type& v) {
  using namespace tablio;
  if constexpr (std::is_same_v<H, example_holder>) {
    return example_text(v) + "\n";
  } else if constexpr (std::is_same_v<H, datum_holder>) {
    return datum_text(v) + "\n";
  } else if constexpr (std::is_same_v<H, bytes_holder>) {
    return cli::quoted(v) + "\n";
  } else if constexpr (std::is_same_v<H, webdataset_sample_holder>) {  // jpg: "..." cls: "3"
    std::string text;
    for (const auto& m : v.members) {
      if (!text.empty()) text += ' ';
      text += cli::quoted(m.extension);
      text += ": ";
      text += cli::quoted(m.data);
    }
    return text + "\n";
  } else if constexpr (std::is_same_v<H, wave_holder>) {
    return shape_of(v) + " at " + float_text(v.sample_frequency()) + " Hz\n";  // Kaldi has no text wave
  } else {
    std::string text;
    writer w = memory_writer(text);
    H::write(w, false, v);
    w.close();
    return text;
  }
}

// The size of an entry's binary object (what an archive holds after the key).
template <class H>
std::uint64_t binary_size(const typename H::value_type& v) {
  std::string bytes;
  tablio::writer w = tablio::memory_writer(bytes);
  H::write(w, true, v);
  w.close();
  return bytes.size();
}

}  // namespace cli
