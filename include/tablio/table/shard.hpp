// Splits a table into n shards with the same keys and values in the same order: read one
// after the other, the shards give back the table. Shards are balanced by entry count (sizes
// differ by one at most) or by bytes, and named as the engines that read them expect:
//   TFRecord, tar, LMDB, IDX    as TensorFlow's and Beam's writers name shards:
//                               train.tfrecord -> train-00000-of-00016.tfrecord (read back
//                               with the glob "tfrecord:train-*-of-00016.tfrecord")
//   Kaldi archives and scripts  as split_scp.pl is used in Kaldi recipes: feats.1.ark ...
// A script (scp:) is split by its lines, as split_scp.pl splits it; its objects stay where
// they are. Any other table is read twice: once to count (and measure) its entries, once to
// write them. TFRecord and tar shards get their shard index beside them, written last
// (shard_index.hpp: "train.tar" -> "train.shardindex.json").
#pragma once

#include <tablio/core/minmax.hpp>
#include <tablio/framing/scp.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/stream/platform/paths.hpp>
#include <tablio/stream/policy.hpp>
#include <tablio/stream/shard_index.hpp>
#include <tablio/stream/shards.hpp>
#include <tablio/stream/specifier.hpp>
#include <tablio/table/any_framing.hpp>
#include <tablio/table/formats.hpp>
#include <tablio/table/sequential_reader.hpp>
#include <tablio/table/specifier.hpp>
#include <tablio/table/table_writer.hpp>
#include <tablio/types/sample.hpp>

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// How shard() balances shards: by the number of entries, or by their bytes.
enum class shard_balance { count, bytes };

namespace detail {

// H, reading an archive's objects for their number alone: skimmed past where H can tell where
// one ends without decoding it (Kaldi's compressed and text matrices), else read.
template <holder_type H>
class skimming_holder : public H {
 public:
  void read(reader& r) {
    if constexpr (requires { H::skim(r, skimmed_); }) {
      if (H::skim(r, skimmed_)) return;
    }
    H::read(r);
  }

 private:
  skimmed_object skimmed_;
};

}  // namespace detail

// What shard_table wrote: each shard's wspecifier and its number of entries.
struct shard_plan {
  std::vector<std::string> wspecifiers;
  std::vector<std::uint64_t> entries;
  std::string error;  // under 'p': what ended the table early (the entries after it were not read)
};

// Where each of n shards of `entries` begins, and where the last ends (shard k takes
// [cuts[k], cuts[k + 1])): as split_scp.pl splits, the first entries % n shards take one more.
inline std::vector<std::uint64_t> count_cuts(std::uint64_t entries, std::uint64_t n) {
  std::vector<std::uint64_t> cuts;
  for (std::uint64_t k = 0; k <= n; ++k) cuts.push_back(k * (entries / n) + detail::min_of(k, entries % n));
  return cuts;
}

namespace detail {

inline bool names_kaldi_files(std::string_view options) {
  for (std::size_t at = 0; at <= options.size();) {
    std::size_t comma = options.find(',', at);
    std::string_view token =
        options.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    if (token == "ark" || token == "scp") return true;
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  return false;
}

// feats.ark -> feats.3.ark (shard 3, counted from 1); a name without extension gets ".3".
inline std::string kaldi_shard_name(std::string_view name, std::uint64_t i) {
  std::size_t slash = name.find_last_of(detail::os::separators);
  std::size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash) || dot == slash + 1)
    dot = name.size();
  return std::string(name.substr(0, dot)) + "." + std::to_string(i + 1) + std::string(name.substr(dot));
}

// train.tfrecord -> train-00003-of-00016.tfrecord: the shard's number before the name's
// extensions (from the first dot of its last component), as TensorFlow's writers put it.
inline std::string tensorflow_shard_name(std::string_view name, std::uint64_t i, std::uint64_t n) {
  std::size_t slash = name.find_last_of(detail::os::separators);
  std::size_t start = slash == std::string_view::npos ? 0 : slash + 1;
  std::size_t dot = name.find('.', start + 1);  // a leading dot names a hidden file, not an extension
  if (dot == std::string_view::npos) dot = name.size();
  return shard_name(name.substr(0, dot), i, n) + std::string(name.substr(dot));
}

// The same for entries of the given sizes: cut k is the first entry at which the bytes before
// it reach k/n of the total.
inline std::vector<std::uint64_t> byte_cuts(const std::vector<std::uint64_t>& weights, std::uint64_t n) {
  long double total = 0;  // in long double: a sum of sizes times k could pass 2^64
  for (std::uint64_t w : weights) total += static_cast<long double>(w);
  std::vector<std::uint64_t> cuts{0};
  long double before = 0;
  std::size_t j = 0;
  for (std::uint64_t k = 1; k < n; ++k) {
    while (j < weights.size() && before * static_cast<long double>(n) < total * static_cast<long double>(k))
      before += static_cast<long double>(weights[j++]);
    cuts.push_back(j);
  }
  cuts.push_back(weights.size());
  return cuts;
}

// A script's lines, split as split_scp.pl splits them.
inline shard_plan shard_script(const std::string& script, std::string_view wspec, std::uint64_t n,
                               const open_options& open);

}  // namespace detail

// The wspecifier of shard i of n of wspec: each of its file names renamed as above.
inline std::string shard_wspecifier(std::string_view wspec, std::uint64_t i, std::uint64_t n) {
  std::size_t colon = detail::options_end(wspec);
  if (colon == std::string_view::npos) throw_usage_error({"not a wspecifier: '", wspec, "'"});
  std::string_view options = wspec.substr(0, colon), names = wspec.substr(colon + 1);
  bool kaldi = detail::names_kaldi_files(options);
  std::string out(options);
  out += ':';
  for (std::size_t at = 0;;) {
    std::size_t comma = names.find(',', at);
    std::string_view name =
        names.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    if (name.empty() || name.find('|') != std::string_view::npos || name == "-")
      throw_usage_error({"shards are files: '", wspec, "' names none"});
    if (parse_numbered_name(name))
      throw_usage_error({"'", name,
                         "' is a numbered name: give one plain name, which each shard's number is added to (",
                         kaldi ? "feats.ark: " + detail::kaldi_shard_name("feats.ark", 0)
                               : "train.tar: " + detail::tensorflow_shard_name("train.tar", 0, n),
                         ", ...)"});
    out += kaldi ? detail::kaldi_shard_name(name, i) : detail::tensorflow_shard_name(name, i, n);
    if (comma == std::string_view::npos) break;
    out += ',';
    at = comma + 1;
  }
  return out;
}

// One rspecifier per file of a table whose format reads several (format_option::files:
// TFRecord and tar, "a,b", globs, name@16, numbered names), each with the table's options; a
// table of any other format, or read from a command, is one. For splitting work by shard.
inline std::vector<std::string> table_files(std::string_view rspec, const open_options& open = {}) {
  rspecifier r = require_rspecifier(rspec);
  std::optional<table_format> format = find_format(r.format);
  input_kind kind = classify_rxfilename(r.filename);
  bool several = format && (format->read_options & format_option::files) &&
                 (kind == input_kind::file || kind == input_kind::remote);
  if (!several) return {std::string(rspec)};
  std::string_view options = rspec.substr(0, detail::options_end(rspec) + 1);
  std::vector<std::string> files;
  for (const std::string& file : expand_shard_list(r.filename, open))
    files.push_back(std::string(options) + file);
  return files;
}

// Whether the table's keys are its records' numbers (format_option::numbered_keys), which
// run on across its files: the first file's last key is one less than the second's first.
inline bool table_keys_are_numbers(std::string_view rspec) {
  rspecifier r = require_rspecifier(rspec);
  std::optional<table_format> format = find_format(r.format);
  return format && (format->read_options & format_option::numbered_keys) && r.records.key_feature.empty();
}

// Refuses to copy a table of samples (ext=*, in a format whose entries are named by extension:
// tar) to one of one member per entry, or back: each sample would become one member KEY.EXT
// holding its record, which no reader takes for a sample again (H is the holder read and
// written with, whose extension is the default).
template <holder_type H>
void check_samples_stay_samples(std::string_view rspec, std::string_view wspec) {
  std::optional<rspecifier> r = parse_rspecifier(rspec);
  std::optional<wspecifier> w = parse_wspecifier(wspec);
  auto by_extension = [](std::string_view format, unsigned table_format::*options) {
    std::optional<table_format> f = find_format(format);
    return f && ((*f).*options & format_option::extension);
  };
  if (!r || !w || !by_extension(r->format, &table_format::read_options) ||
      !by_extension(w->format, &table_format::write_options))
    return;
  auto extension = [](std::string_view given) { return given.empty() ? record_extension<H>() : given; };
  std::string_view in = extension(r->extension), out = extension(w->extension);
  auto entries = [](std::string_view ext) {
    if (ext == webdataset_sample::tar_extension) return std::string("samples (ext=*)");
    std::string members = "members KEY.";
    members += ext;
    return members;
  };
  if ((in == webdataset_sample::tar_extension) != (out == webdataset_sample::tar_extension))
    throw_usage_error({"'", rspec, "' reads ", entries(in), ", which '", wspec, "' would write as ",
                       entries(out),
                       ", each holding one record of the other: give both the same ext= (--type=sample, "
                       "type=\"sample\", reads and writes samples)"});
}

// Splits the table rspec into n shards named after wspec (see tablio/table/shard.hpp), read with holder H
// (bytes_holder copies any record format exactly) and written with W, a holder of the same
// values (example_record_holder<H>, say, to keep them in TFRecord as Examples with their keys).
template <holder_type H, holder_type W = H>
shard_plan shard_table(std::string_view rspec, std::string_view wspec, std::uint64_t n,
                       shard_balance by = shard_balance::count, const open_options& open = {}) {
  static_assert(std::is_same_v<typename H::value_type, typename W::value_type>, "W writes H's values");
  if (n == 0) throw_usage_error({"a table splits into one shard or more, not 0"});
  std::optional<rspecifier> in_spec = parse_rspecifier(rspec);
  if (!in_spec) throw_usage_error({"invalid rspecifier '", rspec, "'"});
  shard_wspecifier(wspec, 0, n);  // a name it cannot number is refused before anything is read
  check_samples_stay_samples<H>(rspec, wspec);
  if (in_spec->kind == rspecifier_kind::script) {
    if (by != shard_balance::count)
      throw_usage_error({"a script is split by its lines (as split_scp.pl does), not by bytes"});
    return detail::shard_script(in_spec->filename, wspec, n, open);
  }
  std::vector<std::uint64_t> weights;
  std::string ended_early;
  auto count = [&]<class R>(const rspecifier& counted, const open_options& counting) {
    sequential_table_reader<R> in;
    in.open(counted, counting);
    std::string encoded;
    for (; !in.done(); in.next()) {
      if (by == shard_balance::count) {
        weights.push_back(1);
        continue;
      }
      encoded.clear();
      writer measure = memory_writer(encoded);
      H::write(measure, true, in.value());
      measure.close();
      weights.push_back(encoded.size());
    }
    ended_early = in.error();
    in.close();
  };
  if (by == shard_balance::count) {
    // Counted by their number alone, a table's records are not decoded (nor by threads, nor for
    // keys they keep, which a count needs not), nor the archive objects H can skim past: only
    // the copy below decodes them. (Under p, where an entry that does not decode is left out,
    // the count decodes as the copy does.)
    rspecifier counted = *in_spec;
    open_options counting = open;
    counted.records.key_feature.clear();
    counted.threads = counting.threads = 1;
    if (counted.permissive)
      count.template operator()<H>(counted, counting);
    else
      count.template operator()<detail::skimming_holder<H>>(counted, counting);
  } else {
    count.template operator()<H>(*in_spec, open);
  }
  std::vector<std::uint64_t> cuts =
      by == shard_balance::count ? count_cuts(weights.size(), n) : detail::byte_cuts(weights, n);
  shard_plan plan;
  plan.error = std::move(ended_early);
  wspecifier out_spec = require_wspecifier(wspec);
  std::optional<table_format> out_format = find_format(out_spec.format);
  bool indexed = out_format && (out_format->read_options & format_option::files);
  shard_index index{{}, out_spec.format, {}, {}, out_spec.records.key_feature};
  if (out_spec.format == "tar")
    index.value_type = out_spec.extension.empty() ? std::string(record_extension<W>()) : out_spec.extension;
  std::string folder = shard_index_folder(out_spec.archive);
  // Shards that keep no keys (TFRecord without key= or a script) number their records from 0
  // each, and read together number them on: a table keyed by its record numbers is written
  // under each shard's own numbers, and keys of its own are left for the writer to refuse.
  const bool numbered_shards = out_format && (out_format->read_options & format_option::numbered_keys) &&
                               out_spec.records.key_feature.empty() && out_spec.script.empty();
  sequential_table_reader<H> in(rspec, open);
  for (std::uint64_t k = 0; k < n; ++k) {
    plan.wspecifiers.push_back(shard_wspecifier(wspec, k, n));
    table_writer<W> out(plan.wspecifiers.back(), open);
    shard_index_entry shard;
    for (std::uint64_t j = cuts[k]; j < cuts[k + 1]; ++j, in.next()) {
      if (in.done())
        throw_format_error(in_spec->filename, std::nullopt, {},
                           {decimal(weights.size()), " entries, as counted"},
                           {decimal(j), " on the second reading"});
      const bool renumber = numbered_shards && in.key() == ordinal_key(j);
      out.write(renumber ? ordinal_key(j - cuts[k]) : in.key(), in.value());
      shard.add(in.key());
    }
    // A writer that keeps keys in a feature of its own choosing (W's, for keys that are not
    // record numbers) says so in the shard's specifier and the index, which read it back so.
    if (std::string kept(detail::output_key_name(out.framing()));
        !kept.empty() && out_spec.records.key_feature.empty()) {
      plan.wspecifiers.back() = with_key_option(plan.wspecifiers.back(), kept);
      index.key = kept;
    }
    out.close();
    plan.entries.push_back(cuts[k + 1] - cuts[k]);
    if (indexed) {
      std::string file = require_wspecifier(plan.wspecifiers.back()).archive;
      shard.url = shard_index_url(folder, file);
      shard.bytes = stored_size(file, open);
      index.shards.push_back(std::move(shard));
    }
  }
  in.close();
  if (indexed) write_shard_index(out_spec.archive, std::move(index), open);
  return plan;
}

// Writes the shard index of a TFRecord or tar table's files beside them (shard_index_name),
// counting each file's entries as H reads them: for shards written by other tools
// (WebDataset's ShardWriter, TensorFlow) or before indexes. Returns it.
template <holder_type H>
shard_index index_shards(std::string_view rspec, const open_options& open = {}) {
  rspecifier r = require_rspecifier(rspec);
  std::optional<table_format> format = find_format(r.format);
  input_kind kind = classify_rxfilename(r.filename);
  if (!format || !(format->read_options & format_option::files) ||
      (kind != input_kind::file && kind != input_kind::remote))
    throw_usage_error({"'", rspec, "': a shard index lists the files or objects of a TFRecord or tar table"});
  shard_index index{{}, r.format, {}, {}, r.records.key_feature};
  if (r.format == "tar")
    index.value_type = r.extension.empty() ? std::string(record_extension<H>()) : r.extension;
  std::string folder = shard_index_folder(r.filename);
  // Keys that are record numbers run on across the files, as the table read whole gives them.
  const bool numbers = table_keys_are_numbers(rspec);
  std::uint64_t before = 0;
  auto table_key = [&](const std::string& key) {
    if (!numbers) return key;
    std::string n = std::to_string(before + std::stoull(key));
    return std::string(key.size() > n.size() ? key.size() - n.size() : 0, '0') + n;
  };
  for (const std::string& file_spec : table_files(rspec, open)) {
    std::string file = require_rspecifier(file_spec).filename;
    shard_index_entry shard;
    shard.url = shard_index_url(folder, file);
    shard.bytes = stored_size(file, open);
    sequential_table_reader<H> in(file_spec, open);
    for (; !in.done(); in.next()) {
      shard.add(table_key(in.key()));
    }
    in.close();
    before += shard.samples;
    index.shards.push_back(std::move(shard));
  }
  write_shard_index(r.filename, index, open);
  return index;
}

namespace detail {

// Under closed options, a line the shards of a script copy is one a table reading the script
// would open: a key and a file (no command, no standard input, no control byte) inside its folder.
TABLIO_COLD inline void check_copied_line(const std::string& line, std::uint64_t number,
                                          const std::string& script, const open_options& listed) {
  std::optional<script_entry> e = parse_script_line(line);
  const input_kind kind = e ? classify_rxfilename(e->rxfilename) : input_kind::none;
  if (kind == input_kind::none || printable(line) != line)  // "| cmd" is no input either
    throw_format_error(script, std::nullopt, {},
                       {"a line of a key and a file name (line ", decimal(number), ")"},
                       {quoted_excerpt(line)});
  if (kind == input_kind::pipe) check_command_allowed(e->rxfilename, listed);
  if (kind == input_kind::standard_input) check_standard_stream_allowed(e->rxfilename, listed);
  if (kind == input_kind::remote && !listed.allow_network) no_network(e->rxfilename);
  if (kind == input_kind::file || kind == input_kind::offset_file) {
    std::optional<offset_filename> at = parse_offset_filename(e->rxfilename);
    (void)checked_local_path(at ? at->file : e->rxfilename, listed, local_use::probe);
  }
}

inline shard_plan shard_script(const std::string& script, std::string_view wspec, std::uint64_t n,
                               const open_options& open) {
  std::vector<std::string> lines;
  {
    const open_options listed = table_open_options(open, script);  // what the lines may name
    reader in = open_input(script, open);
    for (std::string line; in.read_line(line);)
      if (line.find_first_not_of(" \t\r") != std::string::npos) {
        if (is_closed(listed)) check_copied_line(line, lines.size() + 1, script, listed);
        lines.push_back(line);
      }
  }
  std::vector<std::uint64_t> cuts = count_cuts(lines.size(), n);
  // The shards of "scp:x.scp" or of a plain "x.scp".
  std::string_view name = wspec.substr(0, 4) == "scp:" ? wspec.substr(4) : wspec;
  shard_plan plan;
  for (std::uint64_t k = 0; k < n; ++k) {
    std::string file = shard_wspecifier(std::string("scp:") + std::string(name), k, n).substr(4);
    writer out = open_output(file, open);
    for (std::uint64_t j = cuts[k]; j < cuts[k + 1]; ++j) {
      out.write(lines[j].data(), lines[j].size());
      out.put('\n');
    }
    out.close();
    plan.wspecifiers.push_back("scp:" + file);
    plan.entries.push_back(cuts[k + 1] - cuts[k]);
  }
  return plan;
}

}  // namespace detail

TABLIO_END_NAMESPACE
