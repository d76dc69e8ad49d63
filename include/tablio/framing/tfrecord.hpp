// TFRecord framing: each record is
//   uint64 length (LE) | uint32 masked CRC32C of those 8 bytes | data | uint32 masked CRC32C of data
// with no header, index or footer. The reader checks both CRCs by default and reports
// TensorFlow's cases distinctly: a clean end; 1-11 header bytes at the end (TensorFlow ends
// silently: so does this reader, unless strict, and truncated_header() tells); a corrupted
// length ("corrupted record at <offset>"); truncated data; corrupted data ("corrupted record
// at <offset + 12>"). A length is never trusted beyond the bytes that remain.
//
// As a framing (tfrecord_framing), entries are records. tfrecord_output writes one file;
// tfrecord_input reads one file, a list "a,b", a glob or TensorFlow's "name@N" shards one after
// the other (each inflated if compressed), keyed by ordinal over all files or by a key the
// records keep in a bytes feature ("key=NAME"), optionally every shard_count-th record only.
#pragma once

#include <tablio/core/crc32c.hpp>
#include <tablio/framing/concepts.hpp>
#include <tablio/stream/compression.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/stream/reader.hpp>
#include <tablio/stream/shards.hpp>
#include <tablio/stream/writer.hpp>
#if defined(TABLIO_WITH_ZLIB)
#include <tablio/stream/zlib.hpp>
#endif

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// Writes TFRecord records, length and CRCs around each record's bytes, to one stream.
class tfrecord_writer {
 public:
  // Writes records to out, as it is (compress it first for a compressed file).
  explicit tfrecord_writer(writer out) : out_(std::move(out)) {}

  // Appends one record; returns the offset of its length field.
  std::uint64_t write(std::string_view data) {
    std::uint64_t offset = out_.tell();
    char header[12];
    store<std::endian::little>(header, static_cast<std::uint64_t>(data.size()));
    store<std::endian::little>(header + 8, mask_crc(crc32c(header, 8)));
    out_.write(header, 12);
    out_.write(data);
    char footer[4];
    store<std::endian::little>(footer, mask_crc(crc32c(data.data(), data.size())));
    out_.write(footer, 4);
    return offset;
  }
  // Pushes the records written so far to the OS.
  void flush() { out_.flush(); }
  // Flushes and closes the output; a failed write or output command throws here.
  void close() { out_.close(); }
  // The stream the records go to.
  writer& out() noexcept { return out_; }

 private:
  writer out_;
};

// How a tfrecord_reader takes records whose data CRC fails, and a file cut inside a header.
struct tfrecord_read_options {
  bool verify_crc = true;       // check the data CRC (the length CRC is always checked)
  bool skip_corrupted = false;  // skip records whose data CRC fails, counting them
  bool strict_end = false;      // a partial header at the end is an error, not an end
};

// What the reader learnt about the record it returned last.
struct tfrecord_record_info {
  std::uint64_t offset = 0;  // of the length field
  std::uint64_t length = 0;
  std::uint32_t masked_length_crc = 0;
  std::uint32_t masked_crc = 0;
  std::size_t truncated_header = 0;  // bytes of a partial header at the end
};

// Whether `header` (at least 12 bytes) is a TFRecord header: its length CRC matches.
inline bool is_tfrecord_header(std::span<const char> header) noexcept {
  return header.size() >= 12 &&
         unmask_crc(load<std::endian::little, std::uint32_t>(header.data() + 8)) == crc32c(header.data(), 8);
}

namespace detail {

[[noreturn]] inline void tfrecord_truncated(const reader& in, const tfrecord_record_info& info) {
  throw data_loss_error({in.name(), info.offset, {}}, std::to_string(info.length) + " record bytes and a CRC",
                        "truncated record at " + std::to_string(info.offset),
                        data_loss_error::cause::truncated_data);
}

// Reads one record at the current position of `in` into `record` (a view into the reader's
// window or into `scratch`). Returns false at a clean end or a partial header (noted in
// info.truncated_header). Throws data_loss_error for a bad length CRC or truncated data;
// the data CRC is the caller's to check (it may skip such records).
inline bool read_tfrecord(reader& in, std::string& scratch, std::string_view& record,
                          tfrecord_record_info& info) {
  info.offset = in.tell();
  if (!in.ensure(12)) {
    std::size_t have = in.window().size();
    info.truncated_header = have;
    in.advance(have);
    return false;
  }
  const char* h = in.window().data();
  if (!is_tfrecord_header({h, 12}))
    throw data_loss_error({in.name(), info.offset, {}}, "a record header whose CRC matches",
                          "corrupted record at " + std::to_string(info.offset) +
                              (info.offset == 0 ? " (Is this even a TFRecord file?)" : ""),
                          data_loss_error::cause::corrupted_header);
  info.length = load<std::endian::little, std::uint64_t>(h);
  info.masked_length_crc = load<std::endian::little, std::uint32_t>(h + 8);
  in.advance(12);
  if (auto rem = in.remaining(); rem && info.length + 4 > *rem) tfrecord_truncated(in, info);
  if (info.length > in.limits().max_record_bytes)
    in.fail_at(
        info.offset,
        {"a record of at most ", decimal(in.limits().max_record_bytes), " bytes (limits::max_record_bytes)"},
        {"one of ", decimal(info.length)});
  // Data and CRC in one view: reading the CRC separately could refill the window and
  // invalidate a view of data that ended exactly at the window's end.
  std::optional<std::string_view> read =
      in.try_read_view(static_cast<std::size_t>(info.length) + 4, scratch, "record bytes");
  if (!read) tfrecord_truncated(in, info);
  std::string_view data_and_crc = *read;
  record = data_and_crc.substr(0, data_and_crc.size() - 4);
  info.masked_crc = load<std::endian::little, std::uint32_t>(data_and_crc.data() + record.size());
  return true;
}

inline bool tfrecord_data_intact(std::string_view record, std::uint32_t masked_crc) noexcept {
  return unmask_crc(masked_crc) == crc32c(record.data(), record.size());
}
inline bool tfrecord_data_crc_matches(std::string_view record, const tfrecord_record_info& info) noexcept {
  return tfrecord_data_intact(record, info.masked_crc);
}

[[noreturn]] inline void tfrecord_corrupted_data(const reader& in, const tfrecord_record_info& info,
                                                 std::string_view key = {}) {
  throw_corrupted_record(in.name(), info.offset + 12, key);
}

}  // namespace detail

// Reads the one record that starts at the current position of `in` (e.g. after a seek to an
// offset from an index), checking both CRCs; throws data_loss_error if there is none, naming
// `key`, the record's where it is known.
inline std::string_view read_tfrecord_at(reader& in, std::string& scratch, std::string_view key = {}) {
  tfrecord_record_info info;
  std::string_view record;
  if (!detail::read_tfrecord(in, scratch, record, info))
    throw data_loss_error({in.name(), info.offset, std::string(key)}, "a TFRecord record",
                          info.truncated_header ? "a partial header" : "end of file",
                          data_loss_error::cause::truncated_data);
  if (!detail::tfrecord_data_crc_matches(record, info)) detail::tfrecord_corrupted_data(in, info, key);
  return record;
}

// Reads the records of one TFRecord stream in order (see tablio/framing/tfrecord.hpp for what it checks and
// reports). The framing over files is tfrecord_input.
class tfrecord_reader {
 public:
  // Reads records from in, as it is (inflated_tfrecord_input() inflates a compressed one).
  explicit tfrecord_reader(reader in, tfrecord_read_options options = {})
      : in_(std::move(in)), options_(options) {}

  // The next record, as a view valid until the next call; false at the end.
  bool next(std::string_view& record) {
    for (;;) {
      if (!detail::read_tfrecord(in_, buffer_, record, info_)) {
        if (info_.truncated_header && options_.strict_end)
          throw_format_error(in_.name(), info_.offset, {}, {"a 12-byte record header"},
                             {decimal(info_.truncated_header), " bytes of a 12-byte header at end of file"});
        return false;
      }
      if (options_.verify_crc && !detail::tfrecord_data_crc_matches(record, info_)) {
        if (options_.skip_corrupted) {
          ++skipped_;
          continue;
        }
        detail::tfrecord_corrupted_data(in_, info_);
      }
      return true;
    }
  }

  // Facts about the record next() returned last.
  const tfrecord_record_info& info() const noexcept { return info_; }
  // The offset of the record's length field: what an index or a script line points at.
  std::uint64_t offset() const noexcept { return info_.offset; }
  // The record's length in bytes, as its header gives it.
  std::uint64_t length() const noexcept { return info_.length; }
  // The masked CRC32C of the record's length field, as stored.
  std::uint32_t masked_length_crc() const noexcept { return info_.masked_length_crc; }
  // The masked CRC32C of the record's data, as stored (checked against the data unless
  // verify_crc is off).
  std::uint32_t masked_crc() const noexcept { return info_.masked_crc; }
  // Records skipped for a bad data CRC (skip_corrupted).
  std::uint64_t skipped() const noexcept { return skipped_; }
  // Bytes of a partial header found at the end (0 when the file ended cleanly).
  std::size_t truncated_header() const noexcept { return info_.truncated_header; }
  // The stream read: after next(), just past the record.
  reader& in() noexcept { return in_; }
  // Closes the input; a failed input command throws here.
  void close() { in_.close(); }

 private:
  reader in_;
  tfrecord_read_options options_;
  std::string buffer_;
  tfrecord_record_info info_;
  std::uint64_t skipped_ = 0;
};

namespace detail {

[[noreturn]] inline void needs_zlib(const std::string& name, compression c, bool writing = false) {
  throw_usage_error({"'", name, writing ? "' would be " : "' is ", compression_name(c),
                     "-compressed: TFRecord compression needs the tablio::zlib component"});
}

}  // namespace detail

// How the TFRecord stream `in` (at its start) is compressed. A plain file is recognised by
// its first header's CRC, so a record length that looks like a zlib header is no mistake.
inline compression tfrecord_compression(reader& in) {
  in.ensure(12);
  if (is_tfrecord_header(in.window())) return compression::none;
  return detect_compression(in.window());
}

// A TFRecord input as it is, or inflated when it is GZIP or ZLIB compressed.
inline reader inflated_tfrecord_input(reader in) {
  compression c = tfrecord_compression(in);
  if (c == compression::none) return in;
#if defined(TABLIO_WITH_ZLIB)
  std::string n = in.name();
  limits lim = in.limits();
  return reader(zlib_source(std::move(in)), n, lim);
#else
  detail::needs_zlib(in.name(), c);
#endif
}

// Opens a TFRecord file (any rxfilename) for reading, inflating it when it is compressed.
inline reader open_tfrecord_input(std::string_view name, const open_options& options = {}) {
  return inflated_tfrecord_input(open_input(name, options));
}

// Opens a wxfilename for TFRecord output, compressed as asked.
inline writer open_tfrecord_output(std::string_view name, compression c, const open_options& options = {}) {
#if !defined(TABLIO_WITH_ZLIB)
  if (c != compression::none) detail::needs_zlib(std::string(name), c, true);  // before the file is made
#endif
  writer out = open_output(name, options);
#if defined(TABLIO_WITH_ZLIB)
  if (c != compression::none) {
    std::string n = out.name();
    return writer(zlib_sink(std::move(out), c), n);
  }
#endif
  return out;
}

// How a tfrecord_output writes: the wspecifier's key= and f options, and the compression.
struct tfrecord_output_options {
  std::string key_name;                 // key=NAME: keep each entry's key in this bytes feature
  std::optional<compression> compress;  // none, gzip, zlib; by default as the name's suffix says
  bool flush_each = false;              // f: push every record to the OS as it is written
};

// Writes one TFRecord file: the output side of tfrecord_framing, a Framing of record entries.
// Its records keep no keys unless told where (key=NAME, or a script beside it), so entries must
// then come keyed by their number.
class tfrecord_output {
 public:
  // Opens wxfilename for writing, compressed as options.compress says, or else as its suffix
  // does (".gz": gzip; ".zz", ".zlib": zlib). Compression without the tablio::zlib component
  // is a usage_error.
  explicit tfrecord_output(std::string_view wxfilename, tfrecord_output_options options = {},
                           const open_options& open = {})
      : name_(wxfilename),
        options_(std::move(options)),
        compression_(options_.compress.value_or(compression_for_suffix(wxfilename))),
        records_(open_tfrecord_output(wxfilename, compression_, open)) {}

  // The Framing concept: appends the record. When its keys are kept nowhere, a key other than
  // the entry's number (ordinal_key) is a key_error, since reading would number it.
  void put(std::string_view key, std::string_view bytes) {
    if (options_.key_name.empty() && !keys_beside_)
      keys_.check(key, name_,
                  "keep keys in a script beside it ('tfrecord,scp:F.tfrecord,F.scp') or, in Example records, "
                  "in a bytes feature (key=NAME)");
    at_ = records_.write(bytes);
    if (options_.flush_each) records_.flush();
  }
  // The Framing concept: the bytes feature the records keep their key in (key=NAME); empty
  // for none.
  std::string_view key_name() const noexcept { return options_.key_name; }
  // Keeps keys in the bytes feature `name` from now on, as key=NAME does: the table puts each
  // key there, so any key is taken.
  void keep_keys_in(std::string_view name) { options_.key_name = name; }
  // Keys are kept beside the file (in a script), so any key is taken.
  void keep_keys_beside() noexcept { keys_beside_ = true; }
  // The record's offset: what a script line points at. Offsets into compressed data cannot be
  // read at, so a script beside a compressed file is refused.
  location entry_location() const noexcept { return {0, at_}; }
  // The Framing concept: the name script lines give the file: the wxfilename as given.
  const std::string& file_name(std::uint32_t /*file*/) const noexcept { return name_; }
  // The Framing concept: why a script cannot point at the records (a compressed file); empty
  // when it can.
  std::string_view script_refusal() const noexcept {
    return compression_ == compression::none ? std::string_view()
                                             : "a script cannot point into a compressed TFRecord file";
  }
  // The Framing concept: pushes the records written so far to the OS.
  void flush() { records_.flush(); }
  // The Framing concept: flushes and closes the file (ending a compressed stream); a failed
  // write or output command throws here.
  void close() { records_.close(); }

 private:
  std::string name_;
  tfrecord_output_options options_;
  compression compression_;
  tfrecord_writer records_;
  std::uint64_t at_ = 0;
  numbered_keys keys_;
  bool keys_beside_ = false;
};

// How a tfrecord_input reads: the rspecifier's key=, shard= and unended options.
struct tfrecord_input_options {
  std::string key_name;  // key=NAME: the records keep their key in this bytes feature
  std::uint64_t shard_index = 0, shard_count = 1;  // shard=I/N: records I, I+N, I+2N... of all files
  // A writer writes whole records, so a file that ends inside a record's header was cut: an
  // error, unless `unended` ends the file there quietly, as TensorFlow's readers do.
  bool unended = false;
};

// Reads TFRecord files one after the other: the input side of tfrecord_framing, a Framing of
// record entries, each also read again at its location in a plain, uncompressed file.
class tfrecord_input {
 public:
  static constexpr unsigned forms = entry_forms(entry_form::record);

  // `names`: a file, a comma-separated list, a glob or "name@N".
  explicit tfrecord_input(std::string_view names, tfrecord_input_options options = {},
                          const open_options& open = {})
      : name_(names),
        options_(std::move(options)),
        open_(open),
        files_(expand_shard_list(names, open), open) {
    detail::check_shard(options_.shard_index, options_.shard_count);
  }

  // The longest key read (the open options' limits::max_token_bytes), as records' own keys.
  std::size_t max_key_bytes() const noexcept { return open_.parse_limits.max_token_bytes; }
  // The next record of this shard; its key is its ordinal over all files until the table
  // takes the record's own key out (key=NAME).
  bool next(entry& e) {
    for (;;) {
      if (!in_) {
        if (files_.done()) return false;
        reader r = inflated_tfrecord_input(files_.open_next());
        // Only a file or a remote object can be read at an offset; an inflating stream has no
        // known size.
        plain_ = can_open_at(files_.files()[files_.current()]) && r.size_known();
        // The data CRC is checked where a record's value is read: a record whose data fails it
        // is handed out as one (its value is the error), since the next record starts where its
        // length says.
        in_.emplace(std::move(r),
                    tfrecord_read_options{.verify_crc = false, .strict_end = !options_.unended});
      }
      std::string_view record;
      if (!next_record(record)) {
        detail::close_and_reset(in_);
        continue;
      }
      std::uint64_t ordinal = next_ordinal_++;
      if (ordinal % options_.shard_count != options_.shard_index) continue;
      e.key = ordinal_key(ordinal);
      describe(e, record, files_.current(), in_->offset());
      e.intact = detail::tfrecord_data_intact;  // checked where the value is read
      e.expected_check = in_->info().masked_crc;
      return true;
    }
  }

  // Whether the record next() gave last can be read again at its location: its file is a
  // plain, uncompressed file.
  bool seekable() const noexcept { return plain_; }
  // The Framing concept: the record at `at`, read with a second reader so that reading in order
  // goes on undisturbed; both CRCs are checked, and a bad or missing record is a data_loss_error.
  bool read_at(const location& at, entry& e) {
    reader& in = lookup_.at(files_.files(), at, open_);
    describe(e, read_tfrecord_at(in, scratch_, e.key), at.file, at.offset);
    return true;
  }

  // The files read, in order: the names given, expanded (a list, a glob, "name@N").
  const std::vector<std::string>& files() const noexcept { return files_.files(); }
  // The Framing concept: the names as given, as errors call the table.
  const std::string& name() const noexcept { return name_; }
  // The Framing concept: closes the files open; a failed input command throws here.
  void close() {
    lookup_.close();
    files_.close();
    detail::close_and_reset(in_);
  }

 private:
  // The next record of the current file; a header that is damaged or cut, or compressed data
  // that is (where only the compressed offset is known), names the record by its number, the
  // key it has until the table takes its own out.
  bool next_record(std::string_view& record) {
    try {
      return in_->next(record);
    } catch (const data_loss_error& e) {
      error_location where = e.where();
      where.key = ordinal_key(next_ordinal_);
      throw data_loss_error(std::move(where), e.expected(), e.found(), e.cause());
    } catch (const format_error& e) {
      if (!e.key().empty()) throw;
      throw e.with_key(ordinal_key(next_ordinal_));
    }
  }

  void describe(entry& e, std::string_view record, std::uint32_t file, std::uint64_t offset) const {
    e.form = entry_form::record;
    e.bytes = record;
    e.intact = nullptr;  // (next() has it checked, read_at() has checked it)
    e.key_name = options_.key_name;
    e.provisional_key = !options_.key_name.empty();
    e.max_key_bytes = max_key_bytes();
    e.where = {file, offset};
    e.source = files_.files()[file];
    e.data_offset = offset + 12;
  }

  std::string name_;
  tfrecord_input_options options_;
  open_options open_;
  file_sequence files_;
  std::optional<tfrecord_reader> in_;
  bool plain_ = false;
  std::uint64_t next_ordinal_ = 0;
  detail::lookup_reader lookup_;
  std::string scratch_;
};

// TFRecord files as a framing family.
struct tfrecord_framing {
  using output = tfrecord_output;
  using input = tfrecord_input;
};

TABLIO_END_NAMESPACE
