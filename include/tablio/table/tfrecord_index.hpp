// Script-file indexes of TFRecord files: one "key file:offset" line per record, so that an
// "scp:" table reads the records by key. Keys are ordinals, or with key=NAME the bytes feature
// NAME of each Example (of a SequenceExample's context).
#pragma once

#include <tablio/framing/scp.hpp>
#include <tablio/framing/tfrecord.hpp>
#include <tablio/table/entry_io.hpp>
#include <tablio/table/formats.hpp>
#include <tablio/table/specifier.hpp>
#include <tablio/types/example_view.hpp>

#include <string>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// The index entries of the records a "tfrecord:" rspecifier names (shards included). The
// files must be plain files or remote objects, uncompressed (offsets into compressed data
// cannot be seeked to). They open as the table's files do (table_input_options: under the
// untrusted policy, confined to the table's folder).
inline std::vector<script_entry> index_tfrecord(std::string_view rspec, const open_options& given = {}) {
  rspecifier spec = require_rspecifier(rspec);
  if (spec.kind != rspecifier_kind::tfrecord)
    throw_usage_error({"index_tfrecord needs a tfrecord: rspecifier, not '", rspec, "'"});
  const open_options options = table_input_options(spec, given);
  tfrecord_input input(spec.filename, {{}, spec.shard_index, spec.shard_count}, options);
  for (const auto& file : input.files()) {
    if (!can_open_at(file))
      throw_usage_error(
          {"cannot index '", file, "': offsets need a file or a remote object, not a pipe or stdin"});
    reader head = open_input_at(file, 0, options);
    if (compression c = tfrecord_compression(head); c != compression::none)  // what the file holds
      throw_format_error(file, 0, {}, {"an uncompressed TFRecord file (a script points at offsets into it)"},
                         {compression_name(c), "-compressed data, which offsets cannot be seeked into"});
  }
  const std::string& key_feature = spec.records.key_feature;
  std::vector<script_entry> entries;
  example_view view;
  for (entry e; input.next(e);) {
    script_entry& s = entries.emplace_back();
    const std::string& file = input.files()[e.where.file];
    if (e.corrupted())
      throw_corrupted_record(file, e.data_offset, e.key);  // an index points at sound records
    s.rxfilename = file + ":" + std::to_string(e.where.offset);
    if (key_feature.empty()) {
      s.key = e.key;
      continue;
    }
    detail::with_key(e.key, file, [&] {
      view.parse(e.bytes, file);
      const feature_view* f = view.find(key_feature);
      if (!f || f->kind != feature_kind::bytes || f->count != 1)
        throw_format_error(file, e.where.offset, {}, {"a bytes feature '", key_feature, "' holding the key"},
                           {f ? "a feature of another kind or size" : "no such feature"});
      s.key = f->bytes().front();
    });
  }
  input.close();
  return entries;
}

// Writes the index of the records `rspec` names to a script file (any wxfilename), opened with
// `output` (a confining folder there confines it); the number of records.
inline std::size_t write_tfrecord_index(std::string_view rspec, std::string_view script_wxfilename,
                                        const open_options& input = {}, const open_options& output = {}) {
  std::vector<script_entry> entries = index_tfrecord(rspec, input);
  script_writer out(open_output(script_wxfilename, output));
  for (const auto& e : entries) out.write(e.key, e.rxfilename);
  out.close();
  return entries.size();
}

TABLIO_END_NAMESPACE
