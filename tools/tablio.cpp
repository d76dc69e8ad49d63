// tablio: copies, inspects, indexes and verifies tables in every format tablio reads (Kaldi
// archives and scripts, TFRecord files, Caffe LMDB databases, IDX files, tar files).
#if defined(TABLIO_WITH_LMDB)
#include <tablio/framing/lmdb.hpp>  // a snapshot held in the lock table of a database being written
#endif
#include <tablio/framing/lmdb_reader.hpp>
#include <tablio/holder/decoded_datum.hpp>
#include <tablio/stream/arguments.hpp>
#include <tablio/stream/platform/file_io.hpp>
#include <tablio/table/record_form.hpp>
#include <tablio/table/segments.hpp>
#include <tablio/table/shard.hpp>
#include <tablio/table/tfrecord_index.hpp>
#include <tablio/tablio.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/access.hpp"
#include "cli/arguments.hpp"
#include "cli/images.hpp"
#include "cli/progress.hpp"
#include "cli/tables.hpp"
#include "cli/value_types.hpp"

namespace {

using namespace tablio;
using cli::arguments;

struct command {
  const char* name;
  const char* usage;
  const char* help;
  int (*run)(arguments&);
};

// ---- copy

// A value or key the output refused (its message names the key), thrown again for main():
// the first value refused, no key at fault, is a command whose output takes none of this type
// (a usage error); any other is bad input. The same with --threads, whose writer refuses the
// first value where it is written and a later one at a later write or at close.
[[noreturn]] void refused_by_output(const usage_error& e, std::uint64_t written, bool values_may_fail) {
  if (written == 0 && !values_may_fail && !dynamic_cast<const key_error*>(&e)) throw;
  throw error(e.what());
}

// Copies In's values as Out's, converted; `configure` gives the reading holder its options.
template <class In, class Out, class Convert, class Configure = void (*)(reading_holder_t<In>&)>
std::uint64_t copy_table(
    std::string rspec, std::string wspec, Convert convert,
    Configure configure = [](reading_holder_t<In>&) {}) {
  cli::read_keys_from_records<In>(rspec);
  cli::check_tfrecord_form<Out>(wspec);
  std::uint64_t count = 0;
  with_writing_holder<Out>(wspec, [&]<class W>() {
    sequential_table_reader<reading_holder_t<In>> in;
    configure(in.holder());
    in.open(rspec, cli::input_access());
    table_writer<W> out(wspec, cli::output_access());
    cli::progress shown("copy");
    constexpr bool compresses = std::is_same_v<Out, holder<matrix_to_compress>>;
    for (auto& [key, value] : in) {
      try {
        out.write(key, convert(value));
      } catch (const usage_error& e) {
        refused_by_output(e, count, compresses);
      }
      shown.add();
      ++count;
    }
    try {
      out.close();  // with --threads, the last values' errors
    } catch (const usage_error& e) {
      refused_by_output(e, count, compresses);
    }
    cli::warn_if_ended_early("copy", in.error());
  });
  return count;
}

// copy --images: each value's image decoded into a raw Datum, in the input's threads.
std::uint64_t copy_images(const std::string& type, const image_options& images, const std::string& rspec,
                          const std::string& wspec) {
  auto decoded = [&]<class H>() -> std::uint64_t {
    return copy_table<decoded_datum_holder<H>, datum_holder>(
        rspec, wspec, [](const datum& d) -> const datum& { return d; },
        [&](decoded_datum_holder<H>& h) { h.images = images; });
  };
  if (type == "datum") return decoded.template operator()<datum_holder>();
  if (type == "sample") return decoded.template operator()<webdataset_sample_holder>();
  if (type == "example") return decoded.template operator()<example_holder>();
  throw usage_error(
      "--images decodes the images of Datums, WebDataset samples or Examples (--type=datum, "
      "sample or example), not --type=" +
      type);
}

int copy(arguments& args) {
  std::string type = cli::value_type_of(args, "matrix");
  bool compress = args.flag("compress");
  bool method_given = args.has("compression-method");
  int method = args.integer("compression-method", 1);
  std::optional<image_options> images = cli::image_options_of(args);
  args.finish(2, 2);
  if (method < 1 || method > 7) throw usage_error("--compression-method is 1 to 7");
  // Without --compress nothing is compressed (compressed matrices are copied as they are stored).
  if (method_given && !compress) throw usage_error("--compression-method applies with --compress");
  if (images) {
    if (compress) throw usage_error("--compress applies to --type=matrix, not to --images");
    const std::uint64_t count = copy_images(type, *images, args.positional()[0], args.positional()[1]);
    std::fprintf(stderr, "copied %llu entries, their images decoded\n",
                 static_cast<unsigned long long>(count));
    return 0;
  }
  std::uint64_t count = cli::with_type(type, [&]<class H>() -> std::uint64_t {
    const std::string& rspec = args.positional()[0];
    const std::string& wspec = args.positional()[1];
    check_samples_stay_samples<H>(rspec, wspec);
    if (!compress)
      return copy_table<H, H>(
          rspec, wspec, [](const auto& v) -> const auto& { return v; });
    if constexpr (std::is_same_v<H, holder<matrix<float>>>) {
      auto how = static_cast<compression_method>(method);
      // Compressed where written (by the output's threads, with --threads); a matrix that
      // cannot be compressed leaves nothing of its entry.
      return copy_table<H, holder<matrix_to_compress>>(rspec, wspec, [how](matrix<float>& m) {
        return matrix_to_compress{std::move(m), how};
      });
    } else {
      throw usage_error("--compress applies to --type=matrix");
    }
  });
  std::fprintf(stderr, "copied %llu entries\n", static_cast<unsigned long long>(count));
  return 0;
}

// ---- info

int info(arguments& args) {
  std::string type = cli::value_type_of(args, "matrix");
  bool list_keys = args.flag("keys");
  args.finish(1, 1);
  std::string rspec = args.positional()[0];
  return cli::with_type(type, [&]<class H>() {
    cli::read_keys_from_records<H>(rspec);
    std::uint64_t entries = 0, total = 0, smallest = UINT64_MAX, largest = 0, unsorted = 0, repeated = 0;
    std::map<std::string, std::uint64_t> shapes;
    std::string first, last;
    {
      cli::progress shown("info");
      sequential_table_reader<reading_holder_t<H>> in(rspec);
      for (auto& [key, value] : in) {
        std::string shape = cli::shape_of(value);
        std::uint64_t size = cli::binary_size<H>(value);
        if (list_keys)
          std::printf("%s\t%s\t%llu bytes\n", cli::shown(key).c_str(), cli::shown(shape).c_str(),
                      (unsigned long long)size);
        if (entries == 0) first = key;
        if (entries != 0 && key < last) ++unsorted;
        if (entries != 0 && key == last) ++repeated;
        last = key;
        ++shapes[shape];
        total += size;
        smallest = std::min(smallest, size);
        largest = std::max(largest, size);
        ++entries;
        shown.add();
      }
      cli::warn_if_ended_early("info", in.error());
    }
    std::printf("entries: %llu\ntype: %s\n", (unsigned long long)entries, cli::type_label<H>());
    if (entries == 0) return 0;
    std::vector<std::pair<std::uint64_t, std::string>> by_count;
    for (const auto& [shape, n] : shapes) by_count.emplace_back(n, shape);
    std::sort(by_count.rbegin(), by_count.rend());
    std::printf("shapes:");
    for (std::size_t i = 0; i < by_count.size() && i < 5; ++i)
      std::printf(" %s (%llu)", cli::shown(by_count[i].second).c_str(),
                  (unsigned long long)by_count[i].first);
    if (by_count.size() > 5) std::printf(" and %zu more", by_count.size() - 5);
    std::printf("\n%s\n", cli::stored_size(rspec).c_str());
    std::printf("decoded: %llu bytes in all, %llu to %llu per entry (each value as a binary %s object)\n",
                (unsigned long long)total, (unsigned long long)smallest, (unsigned long long)largest,
                cli::type_label<H>());
    std::printf("keys: '%s' to '%s', %s%s\n", cli::shown(first).c_str(), cli::shown(last).c_str(),
                unsorted ? "not sorted" : "sorted", repeated ? ", with repeated keys" : "");
    rspecifier r = require_rspecifier(rspec);
    std::printf("checksums: %s\n", cli::is_tfrecord(r)
                                       ? "the CRC32C of every TFRecord length and record matched"
                                       : "none in this format");
    return 0;
  });
}

// ---- cat

int cat(arguments& args) {
  std::string type = cli::value_type_of(args, "matrix");
  args.finish(1, 1);
  std::string rspec = args.positional()[0];
  cli::with_type(type, [&]<class H>() {
    cli::read_keys_from_records<H>(rspec);
    sequential_table_reader<reading_holder_t<H>> in(rspec);
    for (auto& [key, value] : in) {
      std::string text = cli::value_text<H>(value);
      std::printf("%s %s", cli::shown(key).c_str(), cli::shown(text, "\n").c_str());
    }
    cli::warn_if_ended_early("cat", in.error());
  });
  return 0;
}

// ---- index

std::string cannot_point_into(const std::string& name) {
  return "'" + name + "' is not a file or a remote object: a script can only point into one";
}

int index(arguments& args) {
  std::string type = cli::value_type_of(args, "matrix");
  args.finish(2, 2);
  std::string rspec = args.positional()[0];
  const std::string& script = args.positional()[1];
  rspecifier r = require_rspecifier(rspec);
  // The table's files open as every command's tables do, the script as every command's outputs.
  const open_options input = table_input_options(r, cli::input_access());
  const open_options& output = cli::output_access();
  std::uint64_t count = 0;
  if (cli::is_tfrecord(r)) {
    cli::with_type(type, [&]<class H>() { cli::read_keys_from_records<H>(rspec); });  // as copy reads it
    count = write_tfrecord_index(rspec, script, cli::input_access(), output);
  } else if (r.kind == rspecifier_kind::archive) {
    if (!can_open_at(r.filename)) throw usage_error(cannot_point_into(r.filename));
    cli::with_type(type, [&]<class H>() {
      archive_reader archive(r.filename, input);
      writer out = open_output(script, output);
      std::string key;
      while (archive.next_key(key)) {
        std::uint64_t offset = archive.in().tell();
        H h;
        h.read(archive.in());
        out.write(key + " " + r.filename + ":" + std::to_string(offset) + "\n");
        ++count;
      }
      out.close();
    });
  } else if (r.format == "tar") {
    // Members hold records: their locations need no value type, only its members' extension.
    std::string extension = r.extension;
    if (extension.empty())
      extension = cli::with_type(type, []<class H>() { return std::string(record_extension<H>()); });
    tar_input members(r.filename, {extension, r.shard_index, r.shard_count}, input);
    if (auto refusal = members.script_refusal(); !refusal.empty()) throw usage_error(std::string(refusal));
    script_writer out(open_output(script, output));
    for (entry e; members.next(e); ++count) {
      if (!can_open_at(members.files()[e.where.file]))
        throw usage_error(cannot_point_into(members.files()[e.where.file]));
      out.write(e.key, members.files()[e.where.file] + ":" + std::to_string(e.where.offset));
    }
    out.close();
  } else {
    throw usage_error(
        "tablio index builds scripts for archives (ark:), TFRecord files (tfrecord:) and tar files (tar:)");
  }
  std::fprintf(stderr, "indexed %llu entries\n", static_cast<unsigned long long>(count));
  return 0;
}

// ---- verify

struct verifier {
  std::uint64_t checked = 0, problems = 0;
  void report(const std::string& what) {
    std::printf("%s\n", what.c_str());
    ++problems;
  }
};

// TFRecord files record by record: a record whose data CRC fails, or whose value does not
// decode, is reported and the next one read; a damaged header ends the file.
template <class R>
void verify_tfrecord(const rspecifier& r, verifier& v) {
  std::uint64_t ordinal = 0;  // records are numbered across the table's files
  // A record's problem names its key, as the table names it: its number, unless the records
  // keep their keys (key=), which is lost with a record that cannot be read.
  auto numbered = [&](const format_error& e, std::uint64_t n) {
    return r.records.key_feature.empty() && e.key().empty() ? e.with_key(ordinal_key(n)).what()
                                                            : std::string(e.what());
  };
  for (const std::string& file : expand_shard_list(r.filename)) {
    // A file cut inside a record's header is a problem, as the table says (unless unended).
    tfrecord_reader records(open_tfrecord_input(file), tfrecord_read_options{.strict_end = !r.unended});
    R h;
    for (;;) {
      std::string_view record;
      try {
        if (!records.next(record)) break;
      } catch (const data_loss_error& e) {
        v.report(numbered(e, ordinal));
        if (e.cause() != data_loss_error::cause::corrupted_data) break;
        ++ordinal;
        continue;  // the next record follows this one's bad data
      } catch (const format_error& e) {
        v.report(
            numbered(e, ordinal));  // the stream itself (a cut gzip member): nothing after it can be read
        break;
      }
      ++v.checked;
      // Read as the table reads it, so that a problem is the table's error, at the same place.
      entry e;
      e.form = entry_form::record;
      e.bytes = record;
      e.source = file;
      e.data_offset = records.offset() + 12;
      e.key = ordinal_key(ordinal++);
      e.key_name = r.records.key_feature;
      e.provisional_key = !e.key_name.empty();
      e.max_key_bytes = governed({}).parse_limits.max_token_bytes;  // the policy's, --max-token-bytes
      try {
        detail::read_record(h, e);
      } catch (const format_error& error) {
        v.report(error.what());
      }
    }
    records.close();
  }
}

// LMDB values one by one.
template <class R>
void verify_lmdb(const rspecifier& r, verifier& v) {
#if defined(TABLIO_WITH_LMDB)
  owned<lmdb_reader> held = open_lmdb_reader(r.filename);
#else
  owned<lmdb_reader> held = make_owned<lmdb_reader>(r.filename);
#endif
  lmdb_reader& db = *held;
  std::string_view key, value;
  R h;
  while (db.next(key, value)) {
    ++v.checked;
    try {
      entry e;
      e.form = entry_form::record;
      e.bytes = value;
      e.source = db.path();  // the data file, and where the value is in it, as the table names them
      e.data_offset = db.offset_of(value);
      e.key = std::string(key);
      detail::read_record(h, e);  // as the table reads it
    } catch (const format_error& error) {
      v.report(error.what());
    }
  }
}

// Any other table in order: script entries are independent (each bad one is reported); in an
// archive, IDX or tar file the first problem ends the check of that file, and the table's
// other files (tar shards) are checked each on its own.
template <class R>
void verify_table(const std::string& rspec, verifier& v) {
  bool script = require_rspecifier(rspec).kind == rspecifier_kind::script;
  for (const std::string& file : script ? std::vector<std::string>{rspec} : table_files(rspec)) {
    try {
      sequential_table_reader<R> in(file);
      while (!in.done()) {
        ++v.checked;
        try {
          (void)in.value();
        } catch (const error& e) {
          v.report(e.what());
          if (!script) break;
        }
        in.next();
      }
      if (!in.error().empty()) v.report(in.error());  // under 'p', what ended the file early
    } catch (const usage_error&) {
      throw;
    } catch (const error& e) {
      v.report(e.what());  // the file could not be read on (a framing error, a failed command)
    }
  }
}

int verify(arguments& args) {
  std::string type = cli::value_type_of(args, "matrix");
  args.finish(1, 1);
  std::string rspec = args.positional()[0];
  verifier v;
  try {
    cli::with_type(type, [&]<class H>() {
      cli::read_keys_from_records<H>(rspec);
      rspecifier r = require_rspecifier(rspec);
      using R = reading_holder_t<H>;
      if (cli::is_tfrecord(r))
        verify_tfrecord<R>(r, v);
      else if (r.kind == rspecifier_kind::lmdb)
        verify_lmdb<R>(r, v);
      else
        verify_table<R>(rspec, v);
    });
  } catch (const usage_error&) {
    throw;
  } catch (const error& e) {
    v.report(e.what());  // the table could not be read on (a framing error, a failed command)
  }
  std::printf("%llu entries checked, %llu problem%s\n", (unsigned long long)v.checked,
              (unsigned long long)v.problems, v.problems == 1 ? "" : "s");
  return v.problems == 0 ? 0 : 1;
}

// ---- shard

int shard(arguments& args) {
  // bytes copies records of any format but Kaldi's archives, whose objects need their type.
  std::optional<rspecifier> in;
  if (!args.positional().empty()) in = parse_rspecifier(args.positional()[0]);
  std::string type =
      cli::value_type_of(args, in && in->kind == rspecifier_kind::archive ? "matrix" : "bytes");
  std::string by = args.get("by", "count");
  args.finish(3, 3);
  if (by != "count" && by != "bytes") throw usage_error("--by is count or bytes, not '" + by + "'");
  const std::string& count = args.positional()[2];
  if (count.empty() || count.find_first_not_of("0123456789") != std::string::npos || count.size() > 9)
    throw usage_error("N is a number of shards, not '" + count + "'");
  auto balance = by == "count" ? shard_balance::count : shard_balance::bytes;
  shard_plan plan = cli::with_type(type, [&]<class H>() {
    // In the forms copy reads and writes: TFRecord shards keep values as Examples, with keys.
    std::string rspec = args.positional()[0], wspec = args.positional()[1];
    cli::read_keys_from_records<H>(rspec);
    cli::check_tfrecord_form<H>(wspec);
    return with_writing_holder<H>(wspec, [&]<class W>() {
      return shard_table<reading_holder_t<H>, W>(rspec, wspec, std::stoull(count), balance,
                                                 cli::output_access());
    });
  });
  for (std::size_t k = 0; k < plan.wspecifiers.size(); ++k)
    std::printf("%s\t%llu\n", plan.wspecifiers[k].c_str(), static_cast<unsigned long long>(plan.entries[k]));
  cli::warn_if_ended_early("shard", plan.error);
  return 0;
}

// ---- index-shards

int index_shards(arguments& args) {
  std::string type = cli::value_type_of(args, "bytes");
  args.finish(1, 1);
  const std::string& rspec = args.positional()[0];
  shard_index index = cli::with_type(type, [&]<class H>() {
    std::string keyed = rspec;
    cli::read_keys_from_records<H>(keyed);  // the keys the shards are read under, as copy reads them
    return tablio::index_shards<reading_holder_t<H>>(keyed, cli::output_access());
  });
  std::uint64_t samples = 0;
  for (const shard_index_entry& s : index.shards) samples += s.samples;
  std::printf("%s\t%zu shards\t%llu entries\n", shard_index_name(require_rspecifier(rspec).filename).c_str(),
              index.shards.size(), static_cast<unsigned long long>(samples));
  return 0;
}

// ---- the commands

const command commands[] = {
    {"copy", "tablio copy [options] RSPECIFIER WSPECIFIER",
     "Copies a table to another, in any formats: Kaldi archives and scripts, TFRecord files,\n"
     "LMDB databases, IDX files, tar files. Keys survive every format: in a TFRecord file they are kept\n"
     "in a \"key\" bytes feature, and values that are not Examples become Examples of a\n"
     "\"shape\" int64 feature and a \"data\" feature.\n\n"
     "Options:\n"
     "  --type=TYPE   the values' type (default matrix; sample for tar,ext=*:): matrix,\n"
     "                compressed-matrix, vector, int-vector, int-vector-vector, token, wave,\n"
     "                example, datum, sample (a WebDataset sample: a key's members), bytes\n"
     "  --compress    compress matrices (Kaldi's CompressedMatrix)\n"
     "  --compression-method=N  1 to 7, as Kaldi's copy-feats (default 1)\n"
     "  --images      decode each value's image (an encoded Datum's, a sample's jpg or png member,\n"
     "                an Example's image/encoded) into a raw Datum, as convert_imageset stores it;\n"
     "                the label: the Datum's, the sample's cls, the Example's image/class/label\n"
     "  --gray        decode to one channel (as convert_imageset --gray)\n"
     "  with --images, torchvision's transforms (uint8; float32 values with --mean and --std):\n"
     "  --resize=N --center-crop=N | --random-resized-crop=N [--crop-scale=LO,HI --crop-ratio=LO,HI]\n"
     "  --flip=P --mean=M[,M,M] --std=S[,S,S] --dct-scaling=true|false\n"
     "  or Caffe's transform_param (float32 values):\n"
     "  --crop-size=N --mirror --mean-value=V[,V,V] | --mean-file=BINARYPROTO --scale=F --train=false\n"
     "  --seed=N      what a random crop or flip is drawn from, with each key (default 0)\n",
     copy},
    {"info", "tablio info [options] RSPECIFIER",
     "Counts a table's entries and sums up their keys, shapes and sizes; TFRecord files have\n"
     "every CRC checked on the way.\n\nOptions:\n"
     "  --type=TYPE   the values' type (default matrix), as for copy\n"
     "  --keys        also list every entry: key, shape and size\n",
     info},
    {"cat", "tablio cat [options] RSPECIFIER",
     "Prints each entry as \"key value\": Kaldi's text form, or protobuf's text format for\n"
     "Examples and Datums.\n\nOptions:\n"
     "  --type=TYPE   the values' type (default matrix), as for copy\n",
     cat},
    {"index", "tablio index [options] RSPECIFIER SCRIPT",
     "Writes a script (scp) of \"key file:offset\" lines for an archive (ark:), a TFRecord\n"
     "file (tfrecord:) or tar files (tar:), for random access.\n\nOptions:\n"
     "  --type=TYPE   the archive's values' type (default matrix), as for copy\n",
     index},
    {"verify", "tablio verify [options] RSPECIFIER",
     "Reads every entry and prints each problem with its file and offset. Each file of a list\n"
     "or pattern is checked on its own; in an archive or tar file, the first problem ends that\n"
     "file's check. Exits with 0 when all is well, 1 when a problem was found.\n\nOptions:\n"
     "  --type=TYPE   the values' type (default matrix), as for copy\n",
     verify},
    {"shard", "tablio shard [options] RSPECIFIER WSPECIFIER N",
     "Splits a table into N shards with the same entries in the same order. TFRecord, tar, LMDB\n"
     "and IDX shards are named as TensorFlow names them (train-00000-of-00016.tfrecord, read back\n"
     "with tfrecord:train-*-of-00016.tfrecord); Kaldi archives and scripts as split_scp.pl is used\n"
     "(feats.1.ark, feats.1.scp...). A script (scp:) is split by its lines, as split_scp.pl\n"
     "splits it. Prints each shard's wspecifier and entry count.\n\nOptions:\n"
     "  --type=TYPE   the values' type, as for copy (default bytes, which copies any record\n"
     "                exactly; matrix for Kaldi archives, which need their type; sample for\n"
     "                tar,ext=*:)\n"
     "  --by=count|bytes  balance the shards by entries (default) or by bytes\n",
     shard},
    {"index-shards", "tablio index-shards [options] RSPECIFIER",
     "Writes the shard index of a TFRecord or tar table's files beside them (train-%06d.tar ->\n"
     "train.shardindex.json): the JSON WebDataset's wids reads, each shard's URL, entry count\n"
     "and size, with which datasets plan epochs without reading the shards. Writers of shards\n"
     "write one themselves; this is for shards written by other tools. Prints its name, the\n"
     "shards and the entries.\n\nOptions:\n"
     "  --type=TYPE   the values' type (default bytes); for tar, its extension is the members'\n"
     "                (or give ext=EXT in the specifier)\n",
     index_shards},
};

void print_usage(std::FILE* to) {
  std::fprintf(to,
               "tablio: tables of Kaldi, TensorFlow, Caffe and MNIST formats\n\n"
               "Usage: tablio COMMAND [options] ARGUMENTS   (tablio COMMAND --help for more)\n\n"
               "Commands:\n");
  for (const command& c : commands) std::fprintf(to, "  %s\n", c.usage);
  std::fprintf(to, "\n%s", cli::access_help);
  std::fprintf(
      to,
      "\nSpecifiers are Kaldi's (\"ark:f.ark\", \"scp:f.scp\", \"ark,t:-\", \"ark:gunzip -c f.gz |\")\n"
      "and tablio's (\"tfrecord:f.tfrecord\", \"lmdb:folder\", \"idx:file\", \"tar:shard-%%06d.tar\").\n");
}

}  // namespace

int main(int argc, char** argv) {
  tablio::detail::os::binary_standard_streams();                       // the same bytes out on every system
  std::vector<std::string> utf8 = tablio::utf8_arguments(argc, argv);  // names as tablio takes them
  std::vector<char*> utf8_argv;
  for (std::string& a : utf8) utf8_argv.push_back(a.data());
  utf8_argv.push_back(nullptr);
  argv = utf8_argv.data();
  if (argc < 2 || std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h") {
    print_usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  std::string_view name = argv[1];
  const command* found = nullptr;
  for (const command& c : commands)
    if (name == c.name) found = &c;
  if (!found) {
    std::fprintf(stderr, "tablio: unknown command '%s' (tablio --help lists them)\n", argv[1]);
    return 2;
  }
  try {
    arguments args(argc, argv, 2);
    if (args.has("help")) {
      std::printf("Usage: %s\n\n%s%s", found->usage, found->help, cli::access_help);
      return 0;
    }
    cli::apply_access_options(args);
    return found->run(args);
  } catch (const access_error& e) {  // what the input names, refused: bad input
    std::fprintf(stderr, "tablio %s: %s\n", found->name, cli::shown(e.what()).c_str());
    return 1;
  } catch (const usage_error& e) {
    std::fprintf(stderr, "tablio %s: %s\nUsage: %s\n", found->name, cli::shown(e.what()).c_str(),
                 found->usage);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tablio %s: %s\n", found->name, cli::shown(e.what()).c_str());
    if (dynamic_cast<const format_error*>(&e) && !cli::error_hint.empty())
      std::fprintf(stderr, "tablio %s: %s\n", found->name, cli::error_hint.c_str());
    return 1;
  }
}
