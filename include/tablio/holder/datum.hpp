// Holders of Caffe's Datum. In an LMDB database (or any record framing) the record is the
// Datum's wire bytes, as Caffe writes them; in an archive, the wire bytes are stored as a
// bytes_holder stores them. datum_view_holder reads without copying the image bytes: its
// value views the record and is valid until the table moves on.
#pragma once

#include <tablio/holder/bytes.hpp>
#include <tablio/types/datum.hpp>

#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

template <class Bytes>
class basic_datum_holder : public holder_storage<basic_datum<Bytes>> {
 public:
  using value_type = basic_datum<Bytes>;
  static void write(writer& w, bool binary, const value_type& v) {
    thread_local std::string bytes;
    encode_datum(v, bytes);
    bytes_holder::write(w, binary, bytes);
  }
  void read(reader& r) {
    bytes_.read(r);
    decode_datum(bytes_.value(), this->value_, r.name());
  }
  static void encode_record(std::string& out, const value_type& v) { encode_datum(v, out); }
  void decode_record(std::string_view bytes, const std::string& name) {
    decode_datum(bytes, this->value_, name);
  }

 private:
  bytes_holder bytes_;  // an archive's copy of the bytes, which a view points into
};

using datum_holder = basic_datum_holder<std::string>;
using datum_view_holder = basic_datum_holder<std::string_view>;

TABLIO_END_NAMESPACE
