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

namespace detail {
template <class Bytes>
struct datum_format {
  static constexpr std::string_view extension = "datum";
  static void encode(const basic_datum<Bytes>& v, std::string& out) { encode_datum(v, out); }
  static void decode(std::string_view bytes, basic_datum<Bytes>& v, const std::string& name) {
    decode_datum(bytes, v, name);
  }
};
}  // namespace detail

// The Holder of a table of Caffe Datums (an LMDB such as convert_mnist_data writes, or
// TFRecord records of them): each entry a serialized Datum, read into a datum.
using datum_holder = encoded_holder<datum, detail::datum_format<std::string>>;
// The same, reading each Datum as a datum_view of the record: the pixels are not copied.
using datum_view_holder = encoded_holder<datum_view, detail::datum_format<std::string_view>>;

TABLIO_END_NAMESPACE
