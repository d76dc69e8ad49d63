// sequential_table_reader<Holder>: reads a table in order from a Kaldi rspecifier,
// "ark:f.ark" or "scp:f.scp" (with options such as "ark,p:", "scp,p:", "ark:gunzip -c f.gz |"),
// from TFRecord files: "tfrecord:f.tfrecord", "tfrecord,key=utt,shard=0/4:train@128", or from
// an LMDB database: "lmdb:train_lmdb", "lmdb,shard=1/8:train_lmdb", or from an IDX file:
// "idx:train-images-idx3-ubyte.gz".
//
//   for (auto& [key, value] : sequential_table_reader<basic_holder<int>>("ark:ali.ark")) ...
//   for (reader r("scp:feats.scp"); !r.done(); r.next()) use(r.key(), r.value());
//
// Bad input is a format_error naming the file, offset and key, thrown where it is met. With
// the permissive option 'p' a bad archive entry ends the table instead (the entries before
// it are kept) and an unreadable script entry is skipped; error() then says what happened.
#pragma once

#include <tablio/framing/ark.hpp>
#include <tablio/framing/scp.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/table/idx_table.hpp>
#include <tablio/table/lmdb_table.hpp>
#include <tablio/table/object_io.hpp>
#include <tablio/table/record_keys.hpp>
#include <tablio/table/script_loader.hpp>
#include <tablio/table/tfrecord_input.hpp>

#include <iterator>
#include <memory>
#include <optional>
#include <string>

TABLIO_BEGIN_NAMESPACE

template <holder_type H>
class sequential_table_reader {
 public:
  using value_type = typename H::value_type;

  sequential_table_reader() = default;
  explicit sequential_table_reader(std::string_view rspec, const open_options& options = {}) {
    open(rspec, options);
  }

  void open(std::string_view rspec, const open_options& options = {}) {
    close_quietly();
    spec_ = require_rspecifier(rspec);
    options_ = options;
    done_ = false;
    error_.clear();
    if (spec_.kind == rspecifier_kind::archive) {
      archive_.emplace(open_input(spec_.filename, options));
    } else if (spec_.kind == rspecifier_kind::tfrecord) {
      detail::check_record_key_option<H>(spec_.records, rspec);
      records_.emplace(spec_, options);
    } else if (spec_.kind == rspecifier_kind::lmdb) {
      lmdb_ = std::make_unique<lmdb_table_input>(spec_, options);
    } else if (spec_.kind == rspecifier_kind::idx) {
      if constexpr (!idx_item<value_type>) detail::not_idx_items(spec_.filename);
      idx_.emplace(spec_, options);
    } else {
      script_.emplace(open_input(spec_.filename, options));
      detail::check_record_key_option<H>(spec_.records, rspec);
      loader_.emplace(options, spec_.records);
    }
    advance();
  }

  bool is_open() const noexcept {
    return archive_.has_value() || script_.has_value() || records_.has_value() || lmdb_ != nullptr ||
           idx_.has_value();
  }
  bool done() const noexcept { return done_; }
  const std::string& key() const noexcept { return key_; }

  // The current value; for script tables it is read here, on first use.
  value_type& value() {
    if (done_) throw usage_error("sequential_table_reader::value() after the end of the table");
    if (!loaded_) {
      loader_->load(entry_, holder_.value());
      loaded_ = true;
    }
    return holder_.value();
  }

  void next() {
    if (done_) throw usage_error("sequential_table_reader::next() after the end of the table");
    advance();
  }

  // Frees the current value's memory (Kaldi's FreeCurrent).
  void free_current() { holder_.clear(); }

  // Under 'p', the error that ended or thinned the table; empty when all was well.
  const std::string& error() const noexcept { return error_; }

  // Closes the input; a pipe is drained and its command's exit status checked.
  void close() {
    done_ = true;
    auto archive = std::move(archive_);
    auto script = std::move(script_);
    auto records = std::move(records_);
    archive_.reset();
    script_.reset();
    records_.reset();
    lmdb_.reset();
    idx_.reset();
    loader_.reset();
    if (archive) archive->close();
    if (script) script->close();
    if (records) records->close();
  }

  ~sequential_table_reader() { close_quietly(); }
  sequential_table_reader(sequential_table_reader&&) noexcept = default;
  sequential_table_reader& operator=(sequential_table_reader&&) noexcept = default;

  // Range access: entries are (key, value) pairs, valid until the next step.
  struct entry {
    const std::string& key;
    value_type& value;
  };
  class iterator {
   public:
    using value_type = entry;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    explicit iterator(sequential_table_reader* r) : r_(r) {}
    // An lvalue, so that both `auto& [key, value]` and `auto [key, value]` bind.
    entry& operator*() const { return r_->view_.emplace(entry{r_->key(), r_->value()}); }
    iterator& operator++() {
      r_->next();
      return *this;
    }
    void operator++(int) { ++*this; }
    bool operator==(std::default_sentinel_t) const { return !r_ || r_->done(); }

   private:
    sequential_table_reader* r_ = nullptr;
  };
  iterator begin() { return iterator(this); }
  std::default_sentinel_t end() { return {}; }

 private:
  void advance() {
    loaded_ = false;
    if (script_) return advance_script();
    // Archives and record files: a bad entry is an error, or under 'p' the end of the table.
    try {
      bool more = archive_ ? next_archive_entry()
                  : lmdb_  ? next_lmdb_entry()
                  : idx_   ? idx_->next(key_, holder_.value())
                           : next_record();
      if (!more) {
        finish();
        return;
      }
      loaded_ = true;
    } catch (const format_error& e) {
      if (!spec_.permissive) {
        done_ = true;
        throw;
      }
      error_ = e.what();
      done_ = true;
    }
  }

  bool next_archive_entry() {
    if (!archive_->next_key(key_)) return false;
    detail::read_object(holder_, archive_->in(), key_);
    return true;
  }

  bool next_record() {
    std::string_view record;
    if (!records_->next(record)) return false;
    detail::decode_keyed_record(holder_, key_, spec_.records, records_->ordinal(), record, records_->file(),
                                records_->data_offset());
    return true;
  }

  bool next_lmdb_entry() {
    std::string_view key, value;
    if (!lmdb_->next(key, value)) return false;
    key_ = key;
    detail::with_key(key_, lmdb_->path(), [&] { decode_record(holder_, value, lmdb_->path()); });
    return true;
  }

  void advance_script() {
    for (;;) {
      if (!script_->next(entry_)) {
        finish();
        return;
      }
      key_ = entry_.key;
      if (!spec_.permissive) return;  // read on first use of value()
      try {
        loader_->load(entry_, holder_.value());
        loaded_ = true;
        return;
      } catch (const tablio::error& e) {
        error_ = e.what();  // p: an unreadable entry is skipped
      }
    }
  }

  // The natural end. The inputs are closed here, so that a command that failed is an error
  // now rather than a table that merely looks short (under 'p', error() says so).
  void finish() {
    done_ = true;
    key_.clear();
    try {
      close();
    } catch (const tablio::error& e) {
      if (!spec_.permissive) throw;
      error_ = e.what();
    }
  }

  void close_quietly() noexcept {
    try {
      close();
    } catch (const std::exception& e) {
      if (!spec_.permissive) report_error(e.what());
    }
  }

  std::optional<entry> view_;  // what the iterator hands out for the current entry
  rspecifier spec_;
  open_options options_;
  std::optional<archive_reader> archive_;
  std::optional<script_reader> script_;
  std::optional<script_loader<H>> loader_;
  std::optional<tfrecord_table_input> records_;
  std::unique_ptr<lmdb_table_input> lmdb_;  // a pointer: LMDB handles do not move
  std::optional<idx_table_input> idx_;
  H holder_;
  script_entry entry_;
  std::string key_;
  std::string error_;
  bool loaded_ = false;
  bool done_ = true;
};

TABLIO_END_NAMESPACE
