// webdataset_sample_holder: a WebDataset sample (types/sample.hpp). Over a tar table it reads the
// members that share a key as one entry and writes one member per extension; in any other
// framing the record is the sample's record, and an archive stores it as bytes_holder does.
#pragma once

#include <tablio/core/keeper.hpp>
#include <tablio/holder/bytes.hpp>
#include <tablio/types/sample.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

class webdataset_sample_holder : public encoded_holder<webdataset_sample, detail::sample_format> {
 public:
  // A sample a tar table gives as its members' views (part_taking_holder): copied once, into
  // the members, rather than through a record.
  template <class Parts>
  void take_parts(const Parts& parts, const keeper& /*copied from*/, const std::string& name) {
    std::vector<webdataset_sample::member>& members = value_.members;
    members.resize(parts.size());
    for (std::size_t i = 0; i < parts.size(); ++i) {
      check_sample_extension(parts[i].name, name);
      members[i].extension.assign(parts[i].name);
      members[i].data.assign(parts[i].bytes);
    }
  }
};

TABLIO_END_NAMESPACE
