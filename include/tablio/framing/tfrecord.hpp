// TFRecord framing: each record is
//   uint64 length (LE) | uint32 masked CRC32C of those 8 bytes | data | uint32 masked CRC32C of data
// with no header, index or footer. The reader checks both CRCs by default and reports
// TensorFlow's cases distinctly: a clean end; 1-11 header bytes at the end (TensorFlow ends
// silently: so does this reader, unless strict, and truncated_header() tells); a corrupted
// length ("corrupted record at <offset>"); truncated data; corrupted data ("corrupted record
// at <offset + 12>"). A length is never trusted beyond the bytes that remain.
#pragma once

#include <tablio/core/crc32c.hpp>
#include <tablio/stream/reader.hpp>
#include <tablio/stream/writer.hpp>

#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

// A TensorFlow DATA_LOSS condition: the file is not a valid TFRecord file from here on.
class data_loss_error : public format_error {
 public:
  using format_error::format_error;
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

class tfrecord_reader {
 public:
  explicit tfrecord_reader(reader in, tfrecord_read_options options = {})
      : in_(std::move(in)), options_(options) {}

  // The next record, as a view valid until the next call; false at the end.
  bool next(std::string_view& record) {
    for (;;) {
      offset_ = in_.tell();
      if (!in_.ensure(12)) {
        std::size_t have = in_.window().size();
        if (have == 0) return false;
        truncated_header_ = have;
        in_.advance(have);
        if (options_.strict_end)
          throw format_error({in_.name(), offset_, {}}, "a 12-byte record header",
                             std::to_string(have) + " bytes of a 12-byte header at end of file");
        return false;
      }
      const char* h = in_.window().data();
      length_ = load<std::endian::little, std::uint64_t>(h);
      length_crc_ = load<std::endian::little, std::uint32_t>(h + 8);
      if (unmask_crc(length_crc_) != crc32c(h, 8))
        throw data_loss_error({in_.name(), offset_, {}}, "a record header whose CRC matches",
                              "corrupted record at " + std::to_string(offset_) +
                                  (offset_ == 0 ? " (Is this even a TFRecord file?)" : ""));
      in_.advance(12);
      if (auto rem = in_.remaining(); (rem && length_ + 4 > *rem) || length_ > in_.limits().max_record_bytes)
        truncated();
      record = in_.read_view(static_cast<std::size_t>(length_), buffer_, "record bytes");
      char footer[4];
      if (in_.read_some(footer, 4) != 4) truncated();
      crc_ = load<std::endian::little, std::uint32_t>(footer);
      if (options_.verify_crc && unmask_crc(crc_) != crc32c(record.data(), record.size())) {
        if (options_.skip_corrupted) {
          ++skipped_;
          continue;
        }
        throw data_loss_error({in_.name(), offset_ + 12, {}}, "record data whose CRC matches",
                              "corrupted record at " + std::to_string(offset_ + 12));
      }
      return true;
    }
  }

  // Facts about the record next() returned last.
  std::uint64_t offset() const noexcept { return offset_; }
  std::uint64_t length() const noexcept { return length_; }
  std::uint32_t masked_length_crc() const noexcept { return length_crc_; }
  std::uint32_t masked_crc() const noexcept { return crc_; }
  // Records skipped for a bad data CRC (skip_corrupted).
  std::uint64_t skipped() const noexcept { return skipped_; }
  // Bytes of a partial header found at the end (0 when the file ended cleanly).
  std::size_t truncated_header() const noexcept { return truncated_header_; }
  reader& in() noexcept { return in_; }
  void close() { in_.close(); }

 private:
  [[noreturn]] void truncated() const {
    throw data_loss_error({in_.name(), offset_, {}}, std::to_string(length_) + " record bytes and a CRC",
                          "truncated record at " + std::to_string(offset_));
  }

  reader in_;
  tfrecord_read_options options_;
  std::string buffer_;
  std::uint64_t offset_ = 0;
  std::uint64_t length_ = 0;
  std::uint32_t length_crc_ = 0;
  std::uint32_t crc_ = 0;
  std::uint64_t skipped_ = 0;
  std::size_t truncated_header_ = 0;
};

TABLIO_END_NAMESPACE
