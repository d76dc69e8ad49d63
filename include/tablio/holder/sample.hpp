// webdataset_sample_holder: a WebDataset sample (types/sample.hpp). Over a tar table it reads the
// members that share a key as one entry and writes one member per extension; in any other
// framing the record is the sample's record, and an archive stores it as bytes_holder does.
#pragma once

#include <tablio/holder/bytes.hpp>
#include <tablio/types/sample.hpp>

#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

namespace detail {
struct sample_format {
  static constexpr std::string_view extension = webdataset_sample::tar_extension;
  static void encode(const webdataset_sample& v, std::string& out) { encode_sample(v, out); }
  static void decode(std::string_view bytes, webdataset_sample& v, const std::string& name) {
    decode_sample(bytes, v, name);
  }
};
}  // namespace detail

using webdataset_sample_holder = encoded_holder<webdataset_sample, detail::sample_format>;

TABLIO_END_NAMESPACE
