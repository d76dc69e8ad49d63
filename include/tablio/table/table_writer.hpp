// table_writer<Holder>: writes a table to a Kaldi wspecifier.
//
//   "ark:f.ark"              an archive ("ark,t:" text objects; "ark,f:" flush every entry)
//   "ark,scp:f.ark,f.scp"    an archive and a script file pointing at each entry's offset
//   "scp:targets.scp"        each object to its own file, as listed in an existing script
//                            ("scp,p:" skips keys the script does not list)
//   "tfrecord:f.tfrecord"    a TFRecord file, one record per entry ("tfrecord,key=NAME:" keeps
//                            keys in the Example; ",gzip"/",zlib" or a .gz/.zz name compress)
//   "tfrecord,scp:f.tfrecord,f.scp"  and a script pointing at each record, for random access
//   "lmdb:folder"            an LMDB database (a Caffe dataset), one key per entry
//   "idx:file"               an IDX file; the n-th entry's key must be "%08d" of n
// Archives and scripts may be "-", "| command" or files. close() reports every failure (a
// full disk, a command that failed); the destructor closes and reports instead of throwing.
#pragma once

#include <tablio/framing/ark.hpp>
#include <tablio/framing/scp.hpp>
#include <tablio/framing/tfrecord.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/table/idx_table.hpp>
#include <tablio/table/lmdb_table.hpp>
#include <tablio/table/object_io.hpp>
#include <tablio/table/record_keys.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

TABLIO_BEGIN_NAMESPACE

template <holder_type H>
class table_writer {
 public:
  using value_type = typename H::value_type;

  table_writer() = default;
  explicit table_writer(std::string_view wspec, const open_options& options = {}) { open(wspec, options); }
  table_writer(table_writer&&) noexcept = default;
  table_writer& operator=(table_writer&& o) noexcept {
    if (this != &o) {
      close_quietly();
      spec_ = std::move(o.spec_);
      archive_ = std::move(o.archive_);
      records_ = std::move(o.records_);
      lmdb_ = std::move(o.lmdb_);
      idx_ = std::move(o.idx_);
      script_ = std::move(o.script_);
      targets_ = std::move(o.targets_);
      options_ = o.options_;
    }
    return *this;
  }
  ~table_writer() { close_quietly(); }

  void open(std::string_view wspec, const open_options& options = {}) {
    close();
    spec_ = require_wspecifier(wspec);
    options_ = options;
    bool records =
        spec_.kind == wspecifier_kind::tfrecord || spec_.kind == wspecifier_kind::tfrecord_and_script;
    if (records) {
      detail::check_record_key_option<H>(spec_.records, wspec);
      compression c = spec_.compression == output_compression::by_suffix
                          ? compression_for_suffix(spec_.archive)
                      : spec_.compression == output_compression::gzip ? compression::gzip
                      : spec_.compression == output_compression::zlib ? compression::zlib
                                                                      : compression::none;
      if (c != compression::none && spec_.kind == wspecifier_kind::tfrecord_and_script)
        throw usage_error("'" + std::string(wspec) +
                          "': a script cannot point into a compressed TFRecord file");
      records_.emplace(open_tfrecord_output(spec_.archive, c, options));
    } else if (spec_.kind == wspecifier_kind::lmdb) {
      lmdb_ = std::make_unique<lmdb_table_output>(spec_, options);
    } else if (spec_.kind == wspecifier_kind::idx) {
      idx_.emplace(spec_, options);
    } else if (spec_.kind != wspecifier_kind::script) {
      archive_.emplace(open_output(spec_.archive, options), spec_.flush);
    }
    if (spec_.kind == wspecifier_kind::archive_and_script ||
        spec_.kind == wspecifier_kind::tfrecord_and_script)
      script_.emplace(open_output(spec_.script, options));
    if (spec_.kind == wspecifier_kind::script) read_targets();
  }

  bool is_open() const noexcept {
    return archive_.has_value() || records_.has_value() || lmdb_ != nullptr || idx_.has_value() ||
           (spec_.kind == wspecifier_kind::script && !targets_.empty());
  }

  void write(std::string_view key, const value_type& value) {
    if (spec_.kind == wspecifier_kind::script) return write_to_target(key, value);
    if (records_ || lmdb_) return write_record(key, value);
    if (idx_) return idx_->write(key, value);
    if (!archive_) throw usage_error("table_writer::write on a writer that is not open");
    std::uint64_t offset = archive_->begin_entry(key);
    // The script line comes first, as Kaldi writes it: it points at the object.
    write_script_line(key, offset);
    H::write(archive_->out(), spec_.binary, value);
    archive_->end_entry();
  }

  void flush() {
    if (archive_) archive_->out().flush();
    if (records_) records_->flush();
    if (lmdb_) lmdb_->flush();
    if (idx_) idx_->flush();
    if (script_) script_->out().flush();
  }

  // Flushes and closes everything; throws io_error for any loss.
  void close() {
    auto archive = std::move(archive_);
    auto records = std::move(records_);
    auto lmdb = std::move(lmdb_);
    auto idx = std::move(idx_);
    idx_.reset();
    auto script = std::move(script_);
    archive_.reset();
    records_.reset();
    script_.reset();
    targets_.clear();
    if (archive) archive->close();
    if (records) records->close();
    if (lmdb) lmdb->close();
    if (idx) idx->close();
    if (script) script->close();
  }

 private:
  void write_script_line(std::string_view key, std::uint64_t offset) {
    if (!script_) return;
    script_->write(key, spec_.archive + ":" + std::to_string(offset));
    if (spec_.flush) script_->out().flush();
  }

  void write_record(std::string_view key, const value_type& value) {
    if (!kaldi_io::is_token(key)) throw usage_error("invalid key '" + std::string(key) + "'");
    detail::encode_keyed_record<H>(record_, spec_.records, key, value);
    if (lmdb_) return lmdb_->put(key, record_);
    write_script_line(key, records_->write(record_));
    if (spec_.flush) records_->flush();
  }

  void read_targets() {
    script_reader in(open_input(spec_.script, options_));
    script_entry e;
    while (in.next(e)) targets_.emplace_back(std::move(e.key), std::move(e.rxfilename));
    std::sort(targets_.begin(), targets_.end());
    for (std::size_t i = 1; i < targets_.size(); ++i)
      if (targets_[i].first == targets_[i - 1].first)
        throw format_error({spec_.script, std::nullopt, targets_[i].first}, "distinct keys in the script",
                           "key '" + targets_[i].first + "' twice");
    in.close();
  }

  void write_to_target(std::string_view key, const value_type& value) {
    auto it = std::lower_bound(targets_.begin(), targets_.end(), key,
                               [](const auto& entry, std::string_view k) { return entry.first < k; });
    if (it == targets_.end() || it->first != key) {
      if (spec_.permissive) return;  // scp,p: keys the script does not list are skipped
      throw usage_error("key '" + std::string(key) + "' is not in the script '" + spec_.script + "'");
    }
    writer out = open_output(it->second, options_);
    H::write(out, spec_.binary, value);
    out.close();
  }

  void close_quietly() noexcept {
    try {
      close();
    } catch (const std::exception& e) {
      report_error(e.what());
    }
  }

  wspecifier spec_;
  open_options options_;
  std::optional<archive_writer> archive_;
  std::optional<tfrecord_writer> records_;
  std::unique_ptr<lmdb_table_output> lmdb_;
  std::optional<idx_table_output> idx_;
  std::string record_;  // the encoded record, reused
  std::optional<script_writer> script_;
  std::vector<std::pair<std::string, std::string>> targets_;  // scp: key -> wxfilename
};

TABLIO_END_NAMESPACE
