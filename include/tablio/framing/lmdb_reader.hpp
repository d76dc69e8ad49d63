// Reading LMDB databases, as Caffe stores datasets in them (a folder holding data.mdb, or one
// file with no_subdir; keys in bytewise order, one value per key), with tablio's own checked
// reader of the file (framing/lmdb_file.hpp): no liblmdb, no lock file, nothing written into
// the database's folder. Writing is framing/lmdb.hpp's, with liblmdb.
#pragma once

#include <tablio/core/error.hpp>
#include <tablio/core/keeper.hpp>
#include <tablio/core/owned.hpp>
#include <tablio/framing/concepts.hpp>
#include <tablio/framing/lmdb_file.hpp>
#include <tablio/stream/open_options.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

// Where an LMDB database is, and how writers open it with liblmdb (most fields are theirs only).
struct lmdb_options {
  bool no_subdir = false;  // the database is one file, not a folder (MDB_NOSUBDIR)
  // Writers: no lock file (MDB_NOLOCK), for a database nobody else opens meanwhile. Readers
  // never take a lock, whatever this says.
  bool no_lock = false;
  std::size_t initial_map_size = 1 << 20;  // writers: liblmdb's default, as Caffe; grown as needed
  unsigned max_readers = 126;              // writers: the lock file's reader slots, for liblmdb's readers
  std::size_t batch_size = 1000;           // writers: puts per write transaction
  bool append = false;  // a writer keeps the records there are (goes on where another stopped)
};

// Which records an lmdb_reader gives, and whether it starts again after the last.
struct lmdb_read_options {
  bool wrap_around = false;  // after the last record, start again from the first (training loops)
  std::uint64_t shard_index = 0, shard_count = 1;  // keep records i with i % count == index
};

// A snapshot of a database held for a reader: its transaction, and what keeps writers off its
// pages while the reader lives (a read transaction in liblmdb's lock table: hold_lmdb_snapshot
// in framing/lmdb.hpp). Empty: the current snapshot, held by nothing.
struct lmdb_snapshot {
  std::uint64_t transaction = 0;
  keeper hold;
};

// Reads a database's snapshot: in key order, optionally wrapping around and keeping every n-th
// record, and by key with get(). Values are views into the map of the file, valid while the
// reader lives. next() belongs to one thread; get() may be called from many at once.
// By itself the reader takes no lock: a writer (in this process or another) may then reuse
// the snapshot's pages meanwhile, which makes reading fail with a format_error, never crash.
// Given a held snapshot (open_lmdb_reader() in framing/lmdb.hpp holds one for a database that
// may be written meanwhile), it reads one the hold keeps whatever writers do: that snapshot,
// or one committed between its hold and the reader's opening (lmdb_file).
class lmdb_reader {
 public:
  // Opens the data file of the database at path, checking its meta pages (a bad file is a
  // format_error), and reads the snapshot `snapshot` holds, or else the current one. A shard
  // index not below the shard count is a usage_error.
  explicit lmdb_reader(const std::string& path, const lmdb_options& options = {},
                       const lmdb_read_options& read = {}, const open_options& open = {},
                       lmdb_snapshot snapshot = {})
      : read_(checked(read)),
        snapshot_(std::move(snapshot)),
        file_(detail::lmdb_data_file(path, options.no_subdir), open, snapshot_.transaction),
        cursor_(file_) {}
  lmdb_reader(const lmdb_reader&) = delete;

  // The next record of this shard, in key order; views valid while the reader lives.
  bool next(std::string_view& key, std::string_view& value) {
    if (ended_) return false;
    for (;;) {
      if (!cursor_.next(key, value)) {
        // Each pass over the data gives this shard the same records; an empty shard ends.
        phase_ = 0;
        if (!read_.wrap_around || !kept_in_pass_) {
          ended_ = true;
          return false;
        }
        kept_in_pass_ = false;
        continue;
      }
      // The record's ordinal modulo shard_count, kept without a division per record.
      std::uint64_t phase = phase_;
      phase_ = phase + 1 == read_.shard_count ? 0 : phase + 1;
      if (phase == read_.shard_index) {
        kept_in_pass_ = true;
        return true;
      }
    }
  }

  // The value stored under key, or nothing.
  std::optional<std::string_view> get(std::string_view key) const { return file_.find(key); }

  // Records in the database (all shards).
  std::uint64_t size() const noexcept { return file_.entries(); }
  // The data file read.
  const std::string& path() const noexcept { return file_.path(); }
  // Where a value this reader gave is in the data file.
  std::uint64_t offset_of(std::string_view value) const noexcept { return file_.offset_of(value.data()); }

 private:
  static const lmdb_read_options& checked(const lmdb_read_options& read) {
    if (read.shard_count == 0 || read.shard_index >= read.shard_count)
      throw_usage_error(
          {"invalid LMDB shard ", decimal(read.shard_index), " of ", decimal(read.shard_count)});
    return read;
  }

  lmdb_read_options read_;
  lmdb_snapshot snapshot_;  // held while the file is read
  lmdb_file file_;
  lmdb_file::cursor cursor_;
  std::uint64_t phase_ = 0;  // the next record's ordinal modulo shard_count
  bool kept_in_pass_ = false, ended_ = false;
};

// LMDB databases as the input of a framing: record entries keyed by the database's keys, in
// key order or looked up by key. The reader lives on the heap, so that the framing moves.
class lmdb_input {
 public:
  static constexpr unsigned forms = entry_forms(entry_form::record);

  // Reads the database at folder with an lmdb_reader of its own, which holds no snapshot
  // (open_lmdb_reader() in framing/lmdb.hpp gives one that does).
  explicit lmdb_input(std::string_view folder, const lmdb_read_options& read = {},
                      const lmdb_options& options = {}, const open_options& open = {})
      : reader_(make_owned<lmdb_reader>(std::string(folder), options, read, open)) {}
  // Reads through a reader already open, such as open_lmdb_reader() gives.
  explicit lmdb_input(owned<lmdb_reader> reader) : reader_(std::move(reader)) {}
  // An LMDB key is any 1 to 511 bytes: Caffe's convert_imageset keeps file names in them.
  static constexpr bool keys_any_bytes() noexcept { return true; }
  // The Framing concept: the next record of the shard, in key order, its bytes a view into
  // the map of the file. False at the end (never, with wrap_around, for a shard that has one).
  bool next(entry& e) {
    std::string_view key, value;
    if (!reader_->next(key, value)) return false;
    e.key = key;
    describe(e, value);
    return true;
  }
  // The Framing concept: the record stored under key, in any shard; false when there is none.
  bool find(std::string_view key, entry& e) {
    std::optional<std::string_view> value = reader_->get(key);
    if (!value) return false;
    e.key = key;
    describe(e, *value);
    return true;
  }
  // The Framing concept: records in the database (all shards), as its meta page counts them.
  std::uint64_t size() const { return reader_->size(); }
  // The Framing concept: the data file read, as errors name it.
  const std::string& name() const noexcept { return reader_->path(); }
  // The Framing concept: nothing to do; the file stays mapped until the lmdb_input goes, so
  // the views it gave stay valid.
  void close() {}

 private:
  void describe(entry& e, std::string_view value) const {
    e.form = entry_form::record;
    e.bytes = value;
    e.source = reader_->path();
    e.data_offset = reader_->offset_of(value);  // so that a value's error names its place in the file
  }
  owned<lmdb_reader> reader_;
};

TABLIO_END_NAMESPACE
