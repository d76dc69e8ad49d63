// How the tool opens tables: TFRecord files hold non-Example values as Examples of their
// example_form, with the key in a "key" bytes feature, so that keys survive every format.
#pragma once

#include <tablio/framing/tfrecord.hpp>
#include <tablio/holder/example_form.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/stream/shards.hpp>
#include <tablio/table/shard.hpp>
#include <tablio/table/specifier.hpp>
#include <tablio/types/example_view.hpp>

#include "value_types.hpp"

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

namespace cli {

inline constexpr std::string_view key_feature = "key";

// Adds "key=key" to a tfrecord specifier that names no key feature.
inline std::string with_key_option(std::string_view spec) {
  std::size_t colon = spec.find(':');
  return std::string(spec.substr(0, colon)) + ",key=" + std::string(key_feature) +
         std::string(spec.substr(colon));
}

inline bool is_tfrecord(const tablio::rspecifier& r) { return r.kind == tablio::rspecifier_kind::tfrecord; }

// LMDB's lock files, which hold no data: lock.mdb, or NAME-lock beside a database opened as a file.
inline bool is_lock_file(std::string_view name) { return name == "lock.mdb" || name.ends_with("-lock"); }

// What a table's files take on disk ("stored: ..."), for local files and folders (an LMDB);
// said in words where it cannot be counted.
inline std::string stored_size(const std::string& rspec) {
  namespace fs = std::filesystem;
  tablio::rspecifier r = tablio::require_rspecifier(rspec);
  if (r.format == "scp") return "stored: in the files the script's lines name";
  switch (tablio::classify_rxfilename(r.filename)) {
    case tablio::input_kind::file:
      break;
    case tablio::input_kind::remote:
      return "stored: in remote objects";
    default:
      return "stored: read from a command or standard input, not counted";
  }
  std::uint64_t bytes = 0, files = 0;
  for (const std::string& name : tablio::expand_shard_list(r.filename)) {
    std::error_code failed;
    if (fs::is_directory(name, failed)) {
      for (const auto& member : fs::directory_iterator(name, failed))
        if (member.is_regular_file(failed) && !is_lock_file(member.path().filename().string())) {
          bytes += member.file_size(failed);
          ++files;
        }
    } else {
      bytes += fs::file_size(name, failed);
      ++files;
    }
    if (failed) return "stored: not counted (" + failed.message() + ")";
  }
  return "stored: " + std::to_string(bytes) + " bytes in " + std::to_string(files) +
         (files == 1 ? " file" : " files");
}

// The first record of a TFRecord table when its first file is a file or a remote object;
// nothing for an empty table or a command (which must not run twice).
inline std::optional<std::string> first_record(const tablio::rspecifier& r) {
  auto files = tablio::expand_shard_list(r.filename);
  if (files.empty() || !tablio::can_open_at(files.front())) return std::nullopt;
  tablio::tfrecord_reader records(tablio::inflated_tfrecord_input(tablio::open_input_at(files.front(), 0)));
  std::string_view record;
  if (!records.next(record)) return std::nullopt;
  return std::string(record);
}

// Whether a record is an Example with a bytes feature `name` of one value.
inline bool has_bytes_feature(std::string_view record, std::string_view name) {
  tablio::example_view view;
  try {
    view.parse(record);
  } catch (const tablio::error&) {
    return false;
  }
  const tablio::feature_view* f = view.find(name);
  return f && f->kind == tablio::feature_kind::bytes && f->count == 1;
}

// The record a script's first entry points at, when it is a TFRecord record (tablio index and
// tfrecord,scp: write such scripts); empty when that record cannot be read (reading the table
// says why); nothing when the entry points elsewhere.
inline std::optional<std::string> first_script_record(const tablio::rspecifier& r) {
  if (tablio::classify_rxfilename(r.filename) != tablio::input_kind::file) return std::nullopt;
  tablio::reader script = tablio::open_input(r.filename);
  std::string line;
  if (!script.read_line(line)) return std::nullopt;
  auto entry = tablio::parse_script_line(line);
  if (!entry || tablio::classify_rxfilename(entry->rxfilename) != tablio::input_kind::offset_file)
    return std::nullopt;
  auto target_name = tablio::parse_offset_filename(entry->rxfilename);
  if (!target_name) return std::nullopt;  // reading the table says what is wrong with the line
  // Opened as the table will open it: confined to the script's folder under the untrusted policy.
  tablio::reader target = tablio::open_input(target_name->file, tablio::table_open_options({}, r.filename));
  target.seek(target_name->offset);
  if (!target.ensure(12) || !tablio::is_tfrecord_header(target.window())) return std::nullopt;
  std::string scratch;
  try {
    return std::string(tablio::read_tfrecord_at(target, scratch));
  } catch (const tablio::error&) {
    return std::string();
  }
}

// Adds "key=key" to rspec where the records whose first is `first` keep their keys in a "key"
// feature (files this tool writes do) and H's records can give it up.
template <class H>
void take_keys_from_records(std::string& rspec, const std::optional<std::string>& first) {
  bool keyed = !first || has_bytes_feature(*first, key_feature);
  if (keyed && (tablio::stored_as_example<H> || tablio::keyed_record_holder<H>))
    rspec = with_key_option(rspec);
}

// Adds "key=key" to rspec where H's values are read from TFRecord records that keep their keys
// (files this tool writes do): a TFRecord file's first record tells. Scripts that point into
// TFRecord files read as the TFRecord table they index: with the keys its records keep checked
// against the script's, and taken out of the values. Raw payloads (--type=bytes) are TFRecord
// records as they are, as TensorFlow's TFRecordWriter writes them; their keys are ordinals.
// The table is then read with tablio::reading_holder_t<H>, which takes records of both forms.
template <class H>
void read_keys_from_records(std::string& rspec) {
  tablio::rspecifier r = tablio::require_rspecifier(rspec);
  if (r.kind == tablio::rspecifier_kind::script) {
    auto first = first_script_record(r);
    if (first && r.records.key_feature.empty() && !first->empty()) take_keys_from_records<H>(rspec, first);
  } else if (is_tfrecord(r) && r.records.key_feature.empty()) {
    take_keys_from_records<H>(rspec, first_record(r));
  }
}

// Adds "key=key" to wspec where H's values are written to TFRecord files, which keep keys (in a
// "key" feature unless the specifier names another); they are written with
// tablio::with_writing_holder<H>, which holds values that are not Examples in their Example form.
// Keys that are the input's record numbers (a TFRecord file's without key=, an IDX file's) are
// kept as the output's record numbers: no feature is added to what the records hold.
template <class H>
void write_keys_in_records(std::string& wspec, std::string_view rspec) {
  tablio::wspecifier w = tablio::require_wspecifier(wspec);
  if (!w.writes_tfrecord()) return;
  if constexpr (!tablio::stored_as_example<H> && !tablio::keyed_record_holder<H> &&
                !std::is_same_v<H, tablio::bytes_holder>)
    throw tablio::usage_error(
        std::string(type_label<H>()) +
        " values have no Example form for TFRecord, where their keys would be lost: write "
        "them to tar, ark or lmdb (--type=bytes copies the records without keys)");
  if (w.records.key_feature.empty() &&
      (tablio::stored_as_example<H> ||
       tablio::keyed_record_holder<H>)&&!tablio::table_keys_are_numbers(rspec))
    wspec = with_key_option(wspec);
}

// Under 'p' a bad entry ends a table quietly: said on standard error, since what came after it
// is lost (the exit status stays 0, as Kaldi's tools keep it).
inline void warn_if_ended_early(const char* command, const std::string& error) {
  if (!error.empty())
    std::fprintf(stderr,
                 "tablio %s: warning: under 'p', the table ended early or left out entries it could not read "
                 "(a script's); the last problem: %s\n",
                 command, error.c_str());
}

}  // namespace cli
