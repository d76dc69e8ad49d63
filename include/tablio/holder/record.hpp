// How a holder's value is one whole record of a record framing (a TFRecord record, an LMDB
// value), where the framing, not the value, says where the bytes end.
//
// A holder may say so itself with
//   static void encode_record(std::string& out, const value_type&);
//   void decode_record(std::string_view bytes, const std::string& name);
// and may keep a table's key inside the record (the "key=NAME" specifier option) with
//   static void encode_record(std::string& out, const value_type&, std::string_view key_name,
//                             std::string_view key);
//   std::string take_record_key(std::string_view key_name, const std::string& name);
// (called after decode_record: it returns the key and removes it from the value). A holder
// without them stores its binary object, exactly what an archive holds after the key, and a
// record must hold that object and nothing more.
//
// A holder that keeps a record's bytes whole may also take a record a framing built in a
// string of its own (a tar sample's members), where decode_record would copy it:
//   void take_record(std::string& record, const std::string& name);
// It swaps the string with one of its own, which the framing then reuses.
//
// Framings that name their entries' files (tar members "KEY.EXT") take a record's extension
// from `static constexpr std::string_view extension`, "bin" (binary objects) by default.
#pragma once

#include <tablio/holder/concepts.hpp>
#include <tablio/stream/memory.hpp>

#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

template <class H>
concept record_holder = holder_type<H> && requires(H& h, std::string& out, const typename H::value_type& v,
                                                   std::string_view bytes, const std::string& name) {
  H::encode_record(out, v);
  h.decode_record(bytes, name);
};

template <class H>
concept keyed_record_holder = record_holder<H> &&
    requires(H& h, std::string& out, const typename H::value_type& v, std::string_view s,
             const std::string& name) {
  H::encode_record(out, v, s, s);
  { h.take_record_key(s, name) } -> std::convertible_to<std::string>;
};

template <class H>
concept record_taking_holder = record_holder<H> &&
    requires(H& h, std::string& record, const std::string& name) {
  h.take_record(record, name);
};

// The natural file extension of H's records.
template <class H>
constexpr std::string_view record_extension() {
  if constexpr (requires { H::extension; })
    return H::extension;
  else
    return "bin";
}

// Sets out to the record that holds v.
template <holder_type H>
void encode_record(std::string& out, const typename H::value_type& v) {
  out.clear();
  if constexpr (record_holder<H>) {
    H::encode_record(out, v);
  } else {
    writer w = memory_writer(out);
    H::write(w, true, v);
    w.close();
  }
}

// Reads the value a record holds into h; `name` (the file and record) appears in errors.
template <holder_type H>
void decode_record(H& h, std::string_view bytes, const std::string& name) {
  if constexpr (record_holder<H>) {
    h.decode_record(bytes, name);
  } else {
    reader r = memory_reader(bytes, name);
    h.read(r);
    if (!r.at_end())
      r.fail({"the end of the record after the object"}, {decimal(bytes.size() - r.tell()), " more bytes"});
  }
}

TABLIO_END_NAMESPACE
