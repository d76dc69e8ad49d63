// How the tool opens tables: as every entry point does (tablio/table/record_form.hpp), so that
// keys survive every format.
#pragma once

#include <tablio/stream/filename.hpp>
#include <tablio/stream/shards.hpp>
#include <tablio/table/record_form.hpp>
#include <tablio/table/specifier.hpp>

#include "access.hpp"
#include "value_types.hpp"

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

namespace cli {

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

// Opens rspec's table of H's values under the keys they were written with, as every entry point
// reads it (tablio::reading_rspec): values that are not Examples from a TFRecord file whose
// records keep a "key" feature (files this tool writes do) take their keys out of it; a
// script's keys are its own. Examples and raw payloads (--type=bytes) keep their records
// whole: their keys are the records' numbers unless the specifier names a feature (key=NAME).
template <class H>
void read_keys_from_records(std::string& rspec) {
  rspec = tablio::reading_rspec<H>(rspec, input_access());
}

// Refuses to write H's values to TFRecord where they have no Example form to keep their keys
// in. Those that have one are written as every entry point writes them
// (tablio::with_writing_holder): as Examples of their form, with each key in a "key" feature
// unless the keys are the records' numbers (an IDX file's, a TFRecord file's without key=),
// which the output's record numbers keep.
template <class H>
void check_tfrecord_form(std::string_view wspec) {
  if constexpr (!tablio::stored_as_example<H> && !tablio::keyed_record_holder<H> &&
                !std::is_same_v<H, tablio::bytes_holder>) {
    if (tablio::require_wspecifier(wspec).writes_tfrecord())
      throw tablio::usage_error(
          std::string(type_label<H>()) +
          " values have no Example form for TFRecord, where their keys would be lost: write "
          "them to tar, ark or lmdb (--type=bytes copies the records without keys)");
  }
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
