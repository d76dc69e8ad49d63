// How a table of H's values sits in TFRecord files, so that every entry point (the tool,
// Python, a C++ program) stores one type in one format one way and reads it back under its keys.
// TFRecord files hold values that are not Examples in their Example form
// (holder/example_form.hpp), which TensorFlow reads, with each key in a "key" bytes feature
// unless the keys are the records' numbers; archives, LMDB and tar hold H's own objects.
// Readers take either form (reading_holder_t<H>) and find the keys where they are (reading_rspec).
//
//   sequential_table_reader<reading_holder_t<H>> in(reading_rspec<H>(rspec));
//   with_writing_holder<H>(wspec, [&]<class W>() {
//     table_writer<W> out(wspec);
//     ...
//   });
//
// Examples themselves are the user's features: a "key" feature among them is the key only where
// the specifier says so (key=NAME), in reading and in writing.
#pragma once

#include <tablio/framing/tfrecord.hpp>
#include <tablio/holder/example_form.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/stream/shards.hpp>
#include <tablio/table/formats.hpp>
#include <tablio/table/specifier.hpp>
#include <tablio/types/example_view.hpp>

#include <optional>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

// Calls `f.template operator()<W>()` with `W` the holder that writes H's values to wspec.
template <holder_type H, class F>
decltype(auto) with_writing_holder(std::string_view wspec, F&& f) {
  if constexpr (stored_as_example<H>) {
    if (require_wspecifier(wspec).writes_tfrecord()) return f.template operator()<example_record_holder<H>>();
  }
  return f.template operator()<H>();
}

namespace detail {
// Whether a record is an Example with a bytes feature `name` of one value.
inline bool has_key_feature(std::string_view record, std::string_view name) {
  example_view view;
  try {
    view.parse(record);
  } catch (const error&) {
    return false;
  }
  const feature_view* f = view.find(name);
  return f && f->kind == feature_kind::bytes && f->count == 1;
}

// The first record of a TFRecord table whose first file can be opened again (a file or a
// remote object); nothing for an empty table or a command, which must not run twice.
inline std::optional<std::string> first_tfrecord_record(const rspecifier& r, const open_options& options) {
  const open_options open = table_input_options(r, options);  // as the table opens them: cached
  auto files = expand_shard_list(r.filename, open);
  if (files.empty() || !can_open_at(files.front())) return std::nullopt;
  tfrecord_reader records(inflated_tfrecord_input(open_input_at(files.front(), 0, open)));
  std::string_view record;
  if (!records.next(record)) return std::nullopt;
  return std::string(record);
}

}  // namespace detail

// The rspecifier that reads values stored as Examples of their form under the keys they were
// written with: a TFRecord table that names no key feature reads with key=key when its first
// record keeps one, as every tablio writer's records do. A table read from a command, which
// cannot be looked at twice, is taken to keep them. Other tables are read as named: a script's
// keys are its own (Kaldi's scripts rename entries, as utils/copy_data_dir.sh does), and a
// "key" feature of the records it points at is not read.
inline std::string keyed_form_rspec(std::string_view rspec, const open_options& options = {}) {
  rspecifier r = require_rspecifier(rspec);
  if (r.kind != rspecifier_kind::tfrecord || !r.records.key_feature.empty()) return std::string(rspec);
  std::optional<std::string> first = detail::first_tfrecord_record(r, options);
  bool keyed = !first || detail::has_key_feature(*first, form_key_feature);
  return keyed ? with_key_option(rspec, form_key_feature) : std::string(rspec);
}

// The wspecifier that keeps the keys of values stored as Examples of their form in a "key"
// feature whatever they are, for a writer that must say where keys go before its first value
// (a shard index does): a TFRecord table that names no key feature gets key=key. Without it,
// table_writer keeps keys in that feature unless the first is the first record's number.
inline std::string keyed_form_wspec(std::string_view wspec) {
  wspecifier w = require_wspecifier(wspec);
  if (!w.writes_tfrecord() || !w.records.key_feature.empty()) return std::string(wspec);
  return with_key_option(wspec, form_key_feature);
}

// The rspecifier that reads H's values under their keys: keyed_form_rspec for values stored as
// Examples of their form; others (Examples, whose features are the user's, and raw payloads)
// have no key of their own in a record, and are read as named.
template <holder_type H>
std::string reading_rspec(std::string_view rspec, const open_options& options = {}) {
  if constexpr (stored_as_example<H>)
    return keyed_form_rspec(rspec, options);
  else
    return std::string(rspec);
}

// keyed_form_wspec for values stored as Examples of their form; others are written as named.
template <holder_type H>
std::string writing_wspec(std::string_view wspec) {
  if constexpr (stored_as_example<H>)
    return keyed_form_wspec(wspec);
  else
    return std::string(wspec);
}

TABLIO_END_NAMESPACE
