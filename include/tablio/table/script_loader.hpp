// Loads the object a script line points at: "f.ark:1234" (a file at an offset), a file,
// "cmd |" or "-". Consecutive offsets into the same file reuse one open file (a seek instead
// of an open), and consecutive ranged lines with the same rxfilename reuse the object read
// for the first, so "f.ark:42[0:9]" then "f.ark:42[10:19]" read the matrix once.
//
// An offset may also point at a TFRecord record ("tfrecord,scp:" writes such scripts): a
// record header is recognised by its CRC, and the record's value is read as a record table
// reads it (with its key feature taken out under "key=NAME").
#pragma once

#include <tablio/framing/scp.hpp>
#include <tablio/framing/tfrecord.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/table/object_io.hpp>
#include <tablio/table/record_keys.hpp>

#include <optional>
#include <string>

TABLIO_BEGIN_NAMESPACE

template <holder_type H>
class script_loader {
 public:
  using value_type = typename H::value_type;
  explicit script_loader(open_options options = {}, record_table_options records = {})
      : options_(std::move(options)), records_(std::move(records)) {}

  // Reads the entry's object (range applied) into out; throws with the key on failure.
  void load(const script_entry& e, value_type& out) {
    if (e.range.empty()) {
      // No range: read straight into out, with no cached copy to make.
      cached_.reset();
      cached_name_.clear();
      out = read_value(e);
      return;
    }
    if (e.rxfilename != cached_name_ || !cached_) {
      cached_.reset();
      cached_name_.clear();
      cached_ = read_value(e);
      cached_name_ = e.rxfilename;
    }
    out = *cached_;  // the range is cut from a copy: the next line may take another range
    detail::apply_script_range(out, e.range, e.key, e.rxfilename);
  }

  // Drops the cached object (e.g. before a long pause) and the open file.
  void release() {
    cached_.reset();
    cached_name_.clear();
    file_.reset();
    file_name_.clear();
  }

 private:
  value_type read_value(const script_entry& e) {
    H h;
    read(e, h);
    return std::move(h.value());
  }
  void read(const script_entry& e, H& h) {
    if (classify_rxfilename(e.rxfilename) == input_kind::offset_file) {
      offset_filename o = split_offset_filename(e.rxfilename);
      if (!file_ || file_name_ != o.file) {
        file_.reset();
        file_.emplace(file_source(o.file), o.file, options_.parse_limits);
        file_name_ = o.file;
      }
      file_->seek(o.offset);
      if (file_->ensure(12) && is_tfrecord_header(file_->window())) return read_record(e, h);
      detail::read_object(h, *file_, e.key);
      return;
    }
    reader in = open_input(e.rxfilename, options_);
    detail::read_object(h, in, e.key);
    in.close();  // a pipe is drained and its exit status checked
  }

  void read_record(const script_entry& e, H& h) {
    std::uint64_t data_offset = file_->tell() + 12;
    std::string_view record =
        detail::with_key(e.key, file_name_, [&] { return read_tfrecord_at(*file_, scratch_); });
    std::string key;
    detail::decode_keyed_record(h, key, records_, 0, record, file_name_, data_offset);
    if (!records_.key_feature.empty() && key != e.key)
      throw format_error({file_name_, data_offset, e.key}, "the record of key '" + e.key + "'",
                         "the record of key '" + key + "'");
  }

  open_options options_;
  record_table_options records_;
  std::string scratch_;
  std::optional<reader> file_;
  std::string file_name_;
  std::optional<value_type> cached_;
  std::string cached_name_;
};

TABLIO_END_NAMESPACE
