// random_access_table_reader<Holder>: looks values up by key in a table named by a Kaldi
// rspecifier, with Kaldi's option semantics:
//
//   "scp:f.scp"      the script is read at open (sorted here unless 's' says it already is);
//                    values are read when asked for
//   "ark:f.ark"      the archive is read ahead as far as needed to find a key
//   "s,ark:f.ark"    the archive is sorted: read-ahead stops past the key, disorder is an error
//   "s,cs,ark:f.ark" keys are also asked for in sorted order: only one value is held
//   'o'              each key is asked for once: values are freed after use
//   'p'              unreadable entries are absent instead of errors
//
//   "lmdb:folder"    values are looked up in the database when asked for
//   "idx:file"       item i has key "%08d" of i, and is read when asked for
//   "tfrecord:f.tfrecord"  the records are indexed at open (keys as for sequential reading)
//                    and read when asked for; as with scripts, values are never held
//
// Unlike Kaldi, an archive that is a seekable file is indexed by offset: memory holds keys and
// offsets, not every value read ahead, and a value is read again when it is asked for.
#pragma once

#include <tablio/framing/ark.hpp>
#include <tablio/framing/scp.hpp>
#include <tablio/holder/token.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/table/idx_table.hpp>
#include <tablio/table/lmdb_table.hpp>
#include <tablio/table/object_io.hpp>
#include <tablio/table/script_loader.hpp>
#include <tablio/table/tfrecord_index.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

TABLIO_BEGIN_NAMESPACE

template <holder_type H>
class random_access_table_reader {
 public:
  using value_type = typename H::value_type;

  random_access_table_reader() = default;
  explicit random_access_table_reader(std::string_view rspec, const open_options& options = {}) {
    open(rspec, options);
  }

  void open(std::string_view rspec, const open_options& options = {}) {
    close();
    spec_ = require_rspecifier(rspec);
    options_ = options;
    if (spec_.kind == rspecifier_kind::script) {
      open_script();
    } else if (spec_.kind == rspecifier_kind::lmdb) {
      lmdb_ = std::make_unique<lmdb_table_input>(spec_, options);
    } else if (spec_.kind == rspecifier_kind::idx) {
      if constexpr (!idx_item<value_type>) detail::not_idx_items(spec_.filename);
      idx_.emplace(spec_, options);
    } else if (spec_.kind == rspecifier_kind::tfrecord) {
      // Indexed at open: the records are then read like the entries of a script.
      detail::check_record_key_option<H>(spec_.records, rspec);
      script_ = index_tfrecord(rspec, options);
      spec_.kind = rspecifier_kind::script;
      index_script();
    } else {
      seekable_ = classify_rxfilename(spec_.filename) == input_kind::file;
      archive_.emplace(open_input(spec_.filename, options));
    }
    open_ = true;
  }

  bool is_open() const noexcept { return open_; }

  // Whether the table has the key. Under 'p', also whether its value can be read.
  bool contains(std::string_view key) { return lookup(key, spec_.permissive) != nullptr; }

  // The value for key; throws format_error naming the key when it is absent or unreadable.
  const value_type& at(std::string_view key) {
    const value_type* v = lookup(key, true);
    if (!v)
      throw format_error({spec_.filename, std::nullopt, std::string(key)}, "the key in the table",
                         "no entry" + (absent_reason_.empty() ? std::string() : " (" + absent_reason_ + ")"));
    return *v;
  }
  const value_type& value(std::string_view key) { return at(key); }

  // The value for key, or nullptr when the table has no such key. Data errors still throw
  // unless the 'p' option is given.
  const value_type* find(std::string_view key) { return lookup(key, true); }

  void close() {
    open_ = false;
    auto archive = std::move(archive_);
    archive_.reset();
    lmdb_.reset();
    idx_.reset();
    lookup_reader_.reset();
    loader_.reset();
    script_.clear();
    index_.clear();
    freed_.clear();
    current_.reset();
    eof_ = false;
    if (archive) archive->close();
  }

  ~random_access_table_reader() {
    try {
      close();
    } catch (const std::exception& e) {
      if (!spec_.permissive) report_error(e.what());
    }
  }

 private:
  struct slot {
    std::uint64_t offset = 0;
    std::optional<value_type> object;  // non-seekable archives keep what they read ahead
  };

  const value_type* lookup(std::string_view key, bool load) {
    if (!open_) throw usage_error("lookup in a random_access_table_reader that is not open");
    if (!kaldi_io::is_token(key)) throw usage_error("invalid key '" + std::string(key) + "'");
    absent_reason_.clear();
    release_previous_once();
    if (spec_.kind == rspecifier_kind::script) return lookup_script(key, load);
    if (lmdb_) return lookup_lmdb(key, load);
    if (idx_) return lookup_idx(key, load);
    return lookup_archive(key, load);
  }

  // ----- script tables
  void open_script() {
    script_reader in(open_input(spec_.filename, options_));
    script_entry e;
    while (in.next(e)) script_.push_back(std::move(e));
    in.close();
    index_script();
  }

  // Sorts the script's entries by key (or checks they are sorted) and refuses repeated keys.
  void index_script() {
    auto by_key = [](const script_entry& a, const script_entry& b) { return a.key < b.key; };
    if (spec_.sorted) {
      auto bad = std::is_sorted_until(script_.begin(), script_.end(),
                                      [](const auto& a, const auto& b) { return a.key < b.key; });
      if (bad != script_.end())
        throw format_error({spec_.filename, std::nullopt, bad->key},
                           "a sorted script (remove the s option or add ns)",
                           "'" + (bad - 1)->key + "' followed by '" + bad->key + "'");
    } else {
      std::stable_sort(script_.begin(), script_.end(), by_key);
    }
    for (std::size_t i = 1; i < script_.size(); ++i)
      if (script_[i].key == script_[i - 1].key)
        throw format_error({spec_.filename, std::nullopt, script_[i].key}, "distinct keys in the script",
                           "key '" + script_[i].key + "' twice");
    detail::check_record_key_option<H>(spec_.records, spec_.filename);
    loader_.emplace(options_, spec_.records);
  }

  const value_type* lookup_script(std::string_view key, bool load) {
    auto it = std::lower_bound(script_.begin(), script_.end(), key,
                               [](const script_entry& e, std::string_view k) { return e.key < k; });
    if (it == script_.end() || it->key != key) return nullptr;
    if (!load) return &placeholder();
    if (current_ && current_->first == key) return &current_->second;
    return hold_current(key, [&](value_type& v) { loader_->load(*it, v); });
  }

  // ----- LMDB databases
  const value_type* lookup_lmdb(std::string_view key, bool load) {
    if (current_ && current_->first == key) return &current_->second;
    std::optional<std::string_view> bytes = lmdb_->get(key);
    if (!bytes) return nullptr;
    if (!load) return &placeholder();
    return hold_current(key, [&](value_type& v) {
      H h;
      detail::with_key(key, lmdb_->path(), [&] { decode_record(h, *bytes, lmdb_->path()); });
      v = std::move(h.value());
    });
  }

  // ----- IDX files
  const value_type* lookup_idx(std::string_view key, bool load) {
    if (current_ && current_->first == key) return &current_->second;
    if (!idx_->contains(key)) return nullptr;
    if (!load) return &placeholder();
    return hold_current(
        key, [&](value_type& v) { detail::with_key(key, idx_->path(), [&] { idx_->get(key, v); }); });
  }

  // Reads key's value with read(value) into the one value held; under 'p' an unreadable
  // value is absent, with the reason kept.
  template <class Read>
  const value_type* hold_current(std::string_view key, Read read) {
    try {
      value_type v{};
      read(v);
      current_.emplace(std::string(key), std::move(v));
      note_once(current_->first);
      return &current_->second;
    } catch (const tablio::error& e) {
      if (!spec_.permissive) throw;
      absent_reason_ = e.what();
      return nullptr;
    }
  }

  // ----- archives
  const value_type* lookup_archive(std::string_view key, bool load) {
    if (freed_.count(std::string(key)))
      throw format_error({spec_.filename, std::nullopt, std::string(key)},
                         "each key asked for once (the o option)", "a second request");
    if (spec_.called_sorted) {
      if (!last_requested_.empty() && key < last_requested_)
        throw format_error({spec_.filename, std::nullopt, std::string(key)},
                           "keys asked for in sorted order (the cs option)",
                           "'" + std::string(key) + "' after '" + last_requested_ + "'");
      last_requested_ = key;
      drop_keys_before(key);
    }
    if (current_ && current_->first == key) return &current_->second;
    auto it = index_.find(std::string(key));
    if (it == index_.end()) {
      if (!scan_for(key)) return nullptr;
      it = index_.find(std::string(key));
      if (it == index_.end()) return current_ && current_->first == key ? &current_->second : nullptr;
    }
    if (!load) return &placeholder();
    return materialize(it);
  }

  // Reads ahead until the key is found (true), passed in a sorted archive, or the end.
  bool scan_for(std::string_view key) {
    if (spec_.sorted && !last_scanned_.empty() && key <= last_scanned_) return false;
    std::string k;
    while (!eof_) {
      std::uint64_t offset = 0;
      try {
        if (!archive_->next_key(k)) {
          eof_ = true;
          break;
        }
        offset = archive_->in().tell();
        check_order(k);
        if (index_.count(k) || (current_ && current_->first == k && !spec_.called_sorted))
          throw format_error({spec_.filename, archive_->key_offset(), k}, "distinct keys in the archive",
                             "duplicate key '" + k + "'");
        // One reused holder: a seekable archive keeps only offsets, so reading ahead need not
        // allocate per entry.
        detail::read_object(scan_holder_, archive_->in(), k);
        slot s{offset, std::nullopt};
        if (!seekable_)
          s.object = std::move(scan_holder_.value());
        else if (k == key)
          current_.emplace(k, scan_holder_.value());
        index_.emplace(k, std::move(s));
      } catch (const format_error& e) {
        if (!spec_.permissive) throw;
        absent_reason_ = e.what();
        eof_ = true;
        break;
      }
      last_scanned_ = k;
      if (k == key) return true;
      if (spec_.sorted && k > key) return false;
    }
    return false;
  }

  void check_order(const std::string& k) {
    if (spec_.sorted && !last_scanned_.empty() && k <= last_scanned_)
      throw format_error(
          {spec_.filename, archive_->key_offset(), k}, "keys in sorted order (the s option)",
          "keys in archive are not in sorted order: '" + last_scanned_ + "' is followed by '" + k + "'");
  }

  const value_type* materialize(typename std::unordered_map<std::string, slot>::iterator it) {
    if (current_ && current_->first == it->first) {
      note_once(it->first);
      return &current_->second;
    }
    if (it->second.object) {
      note_once(it->first);
      if (spec_.once || spec_.called_sorted) {
        current_.emplace(it->first, std::move(*it->second.object));
        it->second.object.reset();
        return &current_->second;
      }
      return &*it->second.object;
    }
    // Seekable archive: read the value again at its offset.
    if (!lookup_reader_)
      lookup_reader_.emplace(file_source(spec_.filename), spec_.filename, options_.parse_limits);
    lookup_reader_->seek(it->second.offset);
    H h;
    detail::read_object(h, *lookup_reader_, it->first);
    current_.emplace(it->first, std::move(h.value()));
    note_once(it->first);
    return &current_->second;
  }

  // cs: keys before the one asked for can never be asked for again.
  void drop_keys_before(std::string_view key) {
    if (current_ && current_->first < key) current_.reset();
    if (!spec_.sorted) return;  // an unsorted archive may still hold them later on
    for (auto it = index_.begin(); it != index_.end();) {
      if (it->first < key)
        it = index_.erase(it);
      else
        ++it;
    }
  }

  // o: the value handed out last is freed when the next request comes.
  void note_once(const std::string& key) {
    if (spec_.once) once_pending_ = key;
  }
  void release_previous_once() {
    if (once_pending_.empty()) return;
    index_.erase(once_pending_);
    if (current_ && current_->first == once_pending_) current_.reset();
    freed_.insert(std::move(once_pending_));
    once_pending_.clear();
  }

  static const value_type& placeholder() {
    static const value_type empty{};
    return empty;
  }

  rspecifier spec_;
  open_options options_;
  bool open_ = false;
  bool seekable_ = false;
  bool eof_ = false;
  std::optional<archive_reader> archive_;
  std::unique_ptr<lmdb_table_input> lmdb_;
  std::optional<idx_table_input> idx_;
  H scan_holder_;
  std::optional<reader> lookup_reader_;
  std::unordered_map<std::string, slot> index_;
  std::optional<std::pair<std::string, value_type>> current_;
  std::string last_scanned_;
  std::string last_requested_;
  std::string once_pending_;
  std::unordered_set<std::string> freed_;
  std::string absent_reason_;
  std::vector<script_entry> script_;
  std::optional<script_loader<H>> loader_;
};

// A table looked up through a map, Kaldi's RandomAccessTableReaderMapped: with utt2spk, a
// per-speaker table answers per-utterance keys. An utterance missing from the map is an
// error; a speaker missing from the table is absent. An empty map rspecifier means no map.
template <holder_type H>
class random_access_table_reader_mapped {
 public:
  using value_type = typename H::value_type;
  random_access_table_reader_mapped(std::string_view table_rspec, std::string_view map_rspec,
                                    const open_options& options = {})
      : table_(table_rspec, options) {
    if (!map_rspec.empty()) map_.emplace(map_rspec, options);
  }
  bool contains(std::string_view key) { return table_.contains(mapped(key)); }
  const value_type& at(std::string_view key) { return table_.at(mapped(key)); }
  const value_type& value(std::string_view key) { return at(key); }
  const value_type* find(std::string_view key) { return table_.find(mapped(key)); }

 private:
  std::string mapped(std::string_view key) {
    if (!map_) return std::string(key);
    return map_->at(key);
  }
  random_access_table_reader<H> table_;
  std::optional<random_access_table_reader<token_holder>> map_;
};

TABLIO_END_NAMESPACE
