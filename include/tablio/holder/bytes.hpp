// bytes_holder: any payload, kept unchanged. In a record framing (TFRecord, LMDB) the record
// is the payload itself; in an archive it is a length-prefixed string object ("\0B", then
// Kaldi's int32 length and the bytes; in text mode "length bytes").
#pragma once

#include <tablio/codec/std/string.hpp>
#include <tablio/holder/holder.hpp>

#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

class bytes_holder : public holder<std::string> {
 public:
  static void encode_record(std::string& out, const std::string& v) { out = v; }
  void decode_record(std::string_view bytes, const std::string& /*name*/) { value_.assign(bytes); }
};

TABLIO_END_NAMESPACE
