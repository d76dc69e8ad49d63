// The records a "tfrecord:" rspecifier names: one file, a comma-separated list, a glob
// pattern or TensorFlow's "name@N" shards, read one after the other (each one inflated if
// compressed), keeping every shard_count-th record from shard_index on, counted over all
// files.
#pragma once

#include <tablio/framing/tfrecord.hpp>
#include <tablio/stream/shards.hpp>
#include <tablio/stream/specifier.hpp>

#include <optional>
#include <string>
#include <vector>

TABLIO_BEGIN_NAMESPACE

class tfrecord_table_input {
 public:
  tfrecord_table_input(const rspecifier& spec, const open_options& options)
      : options_(options), shard_index_(spec.shard_index), shard_count_(spec.shard_count) {
    std::string_view names = spec.filename;
    for (std::size_t start = 0;;) {
      std::size_t comma = names.find(',', start);
      for (auto& f : expand_shards(names.substr(start, comma - start))) files_.push_back(std::move(f));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
  }

  // The next record of this shard, as a view valid until the next call; false at the end.
  bool next(std::string_view& record) {
    for (;;) {
      if (!in_) {
        if (next_file_ == files_.size()) return false;
        in_.emplace(open_tfrecord_input(files_[next_file_++], options_));
      }
      if (!in_->next(record)) {
        in_->close();
        in_.reset();
        continue;
      }
      ordinal_ = next_ordinal_++;
      if (ordinal_ % shard_count_ == shard_index_) return true;
    }
  }

  // About the record next() returned last: its ordinal over all files, its file, and the
  // offset of its data in that file.
  std::uint64_t ordinal() const noexcept { return ordinal_; }
  const std::string& file() const noexcept { return files_[next_file_ - 1]; }
  std::uint64_t data_offset() const noexcept { return in_->offset() + 12; }
  const std::vector<std::string>& files() const noexcept { return files_; }

  void close() {
    auto in = std::move(in_);
    in_.reset();
    next_file_ = files_.size();
    if (in) in->close();
  }

 private:
  open_options options_;
  std::vector<std::string> files_;
  std::size_t next_file_ = 0;
  std::optional<tfrecord_reader> in_;
  std::uint64_t shard_index_, shard_count_;
  std::uint64_t ordinal_ = 0, next_ordinal_ = 0;
};

TABLIO_END_NAMESPACE
