// TFRecord framing: each record is
//   uint64 length (LE) | uint32 masked CRC32C of those 8 bytes | data | uint32 masked CRC32C of data
// with no header, index or footer. The reader checks both CRCs by default and reports
// TensorFlow's cases distinctly: a clean end; 1-11 header bytes at the end (TensorFlow ends
// silently: so does this reader, unless strict, and truncated_header() tells); a corrupted
// length ("corrupted record at <offset>"); truncated data; corrupted data ("corrupted record
// at <offset + 12>"). A length is never trusted beyond the bytes that remain.
#pragma once

#include <tablio/core/crc32c.hpp>
#include <tablio/stream/compression.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/stream/reader.hpp>
#include <tablio/stream/writer.hpp>
#if defined(TABLIO_WITH_ZLIB)
#include <tablio/stream/zlib.hpp>
#endif

#include <span>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

// A TensorFlow DATA_LOSS condition: the file is not a valid TFRecord file from here on.
// found() is TensorFlow's message ("corrupted record at 115", "truncated record at 901").
class data_loss_error : public format_error {
 public:
  enum class cause { corrupted_header, truncated_data, corrupted_data };
  data_loss_error(error_location where, std::string expected, std::string found, enum cause c)
      : format_error(std::move(where), std::move(expected), std::move(found)), cause_(c) {}
  enum cause cause() const noexcept { return cause_; }

 private:
  enum cause cause_;
};

class tfrecord_writer {
 public:
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
  void flush() { out_.flush(); }
  void close() { out_.close(); }
  writer& out() noexcept { return out_; }

 private:
  writer out_;
};

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
  if (auto rem = in.remaining();
      (rem && info.length + 4 > *rem) || info.length > in.limits().max_record_bytes)
    tfrecord_truncated(in, info);
  // Data and CRC in one view: reading the CRC separately could refill the window and
  // invalidate a view of data that ended exactly at the window's end.
  std::string_view data_and_crc;
  try {
    data_and_crc = in.read_view(static_cast<std::size_t>(info.length) + 4, scratch, "record bytes");
  } catch (const format_error&) {
    tfrecord_truncated(in, info);
  }
  record = data_and_crc.substr(0, data_and_crc.size() - 4);
  info.masked_crc = load<std::endian::little, std::uint32_t>(data_and_crc.data() + record.size());
  return true;
}

inline bool tfrecord_data_crc_matches(std::string_view record, const tfrecord_record_info& info) noexcept {
  return unmask_crc(info.masked_crc) == crc32c(record.data(), record.size());
}

[[noreturn]] inline void tfrecord_corrupted_data(const reader& in, const tfrecord_record_info& info) {
  throw data_loss_error({in.name(), info.offset + 12, {}}, "record data whose CRC matches",
                        "corrupted record at " + std::to_string(info.offset + 12),
                        data_loss_error::cause::corrupted_data);
}

}  // namespace detail

// Reads the one record that starts at the current position of `in` (e.g. after a seek to an
// offset from an index), checking both CRCs; throws data_loss_error if there is none.
inline std::string_view read_tfrecord_at(reader& in, std::string& scratch) {
  tfrecord_record_info info;
  std::string_view record;
  if (!detail::read_tfrecord(in, scratch, record, info))
    throw data_loss_error({in.name(), info.offset, {}}, "a TFRecord record",
                          info.truncated_header ? "a partial header" : "end of file",
                          data_loss_error::cause::truncated_data);
  if (!detail::tfrecord_data_crc_matches(record, info)) detail::tfrecord_corrupted_data(in, info);
  return record;
}

class tfrecord_reader {
 public:
  explicit tfrecord_reader(reader in, tfrecord_read_options options = {})
      : in_(std::move(in)), options_(options) {}

  // The next record, as a view valid until the next call; false at the end.
  bool next(std::string_view& record) {
    for (;;) {
      if (!detail::read_tfrecord(in_, buffer_, record, info_)) {
        if (info_.truncated_header && options_.strict_end)
          throw format_error(
              {in_.name(), info_.offset, {}}, "a 12-byte record header",
              std::to_string(info_.truncated_header) + " bytes of a 12-byte header at end of file");
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
  std::uint64_t offset() const noexcept { return info_.offset; }
  std::uint64_t length() const noexcept { return info_.length; }
  std::uint32_t masked_length_crc() const noexcept { return info_.masked_length_crc; }
  std::uint32_t masked_crc() const noexcept { return info_.masked_crc; }
  // Records skipped for a bad data CRC (skip_corrupted).
  std::uint64_t skipped() const noexcept { return skipped_; }
  // Bytes of a partial header found at the end (0 when the file ended cleanly).
  std::size_t truncated_header() const noexcept { return info_.truncated_header; }
  reader& in() noexcept { return in_; }
  void close() { in_.close(); }

 private:
  reader in_;
  tfrecord_read_options options_;
  std::string buffer_;
  tfrecord_record_info info_;
  std::uint64_t skipped_ = 0;
};

namespace detail {

[[noreturn]] inline void needs_zlib(const std::string& name, compression c) {
  throw usage_error("'" + name + "' is " + compression_name(c) +
                    "-compressed: TFRecord compression needs the tablio::zlib component");
}

}  // namespace detail

// How the TFRecord stream `in` (at its start) is compressed. A plain file is recognised by
// its first header's CRC, so a record length that looks like a zlib header is no mistake.
inline compression tfrecord_compression(reader& in) {
  in.ensure(12);
  if (is_tfrecord_header(in.window())) return compression::none;
  return detect_compression(in.window());
}

// Opens a TFRecord file (any rxfilename) for reading, inflating it when it is GZIP or ZLIB
// compressed.
inline reader open_tfrecord_input(std::string_view name, const open_options& options = {}) {
  reader in = open_input(name, options);
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

// Opens a wxfilename for TFRecord output, compressed as asked.
inline writer open_tfrecord_output(std::string_view name, compression c, const open_options& options = {}) {
  writer out = open_output(name, options);
  if (c == compression::none) return out;
#if defined(TABLIO_WITH_ZLIB)
  std::string n = out.name();
  return writer(zlib_sink(std::move(out), c), n);
#else
  detail::needs_zlib(std::string(name), c);
#endif
}

TABLIO_END_NAMESPACE
