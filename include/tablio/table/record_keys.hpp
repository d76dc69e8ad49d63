// Keys of record tables: the record's ordinal ("00000000", "00000001"... zero-padded to eight
// digits, more when needed, so that bytewise order is record order), or a key kept in the
// record itself by a holder that can (keyed_record_holder, the "key=NAME" option).
#pragma once

#include <tablio/core/error.hpp>
#include <tablio/holder/record.hpp>
#include <tablio/stream/specifier.hpp>

#include <cstdio>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

inline std::string ordinal_key(std::uint64_t ordinal) {
  char digits[24];
  int n = std::snprintf(digits, sizeof digits, "%08llu", static_cast<unsigned long long>(ordinal));
  return std::string(digits, static_cast<std::size_t>(n));
}

namespace detail {

// Refuses key=NAME for a holder that cannot keep a key in its records.
template <holder_type H>
void check_record_key_option(const record_table_options& options, std::string_view spec) {
  if constexpr (!keyed_record_holder<H>) {
    if (!options.key_feature.empty())
      throw usage_error(
          "'" + std::string(spec) +
          "': key=NAME keeps keys in an Example feature; this holder's records cannot hold one");
  }
}

// Sets out to the record for (key, v), with the key inside it when options ask for that.
template <holder_type H>
void encode_keyed_record(std::string& out, const record_table_options& options, std::string_view key,
                         const typename H::value_type& v) {
  if constexpr (keyed_record_holder<H>) {
    if (!options.key_feature.empty()) {
      out.clear();
      H::encode_record(out, v, options.key_feature, key);
      return;
    }
  }
  encode_record<H>(out, v);
}

// Reads a record that starts at byte data_offset of `file` into h, and sets key: the one
// kept inside it, or the ordinal. Errors name the file, the offset in it, and the key.
template <holder_type H>
void decode_keyed_record(H& h, std::string& key, const record_table_options& options, std::uint64_t ordinal,
                         std::string_view bytes, const std::string& file, std::uint64_t data_offset) {
  key = ordinal_key(ordinal);
  try {
    decode_record(h, bytes, file);
    if constexpr (keyed_record_holder<H>) {
      if (!options.key_feature.empty()) key = h.take_record_key(options.key_feature, file);
    }
  } catch (const format_error& e) {
    error_location where = e.where();
    where.path = file;
    where.offset = data_offset + where.offset.value_or(0);
    if (where.key.empty()) where.key = key;
    throw format_error(std::move(where), e.expected(), e.found());
  }
}

}  // namespace detail

TABLIO_END_NAMESPACE
