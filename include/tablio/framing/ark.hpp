// Kaldi archives: ( key ' ' object )* with no header or index. Objects describe themselves
// (binary ones start with "\0B"), so binary and text entries may mix. This layer deals in
// keys and byte offsets only; the table layer reads and writes the objects with a holder.
#pragma once

#include <tablio/codec/kaldi_token.hpp>
#include <tablio/stream/reader.hpp>
#include <tablio/stream/writer.hpp>

#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

class archive_writer {
 public:
  // flush_each: push every entry to the OS as soon as it is written (Kaldi's `f` option).
  explicit archive_writer(writer out, bool flush_each = false)
      : out_(std::move(out)), flush_each_(flush_each) {}

  // Writes "key " and returns the offset where the entry's object starts. Keys must be
  // Kaldi tokens: non-empty, printable, no whitespace.
  std::uint64_t begin_entry(std::string_view key) {
    if (!kaldi_io::is_token(key))
      throw usage_error("invalid key '" + std::string(key) + "' for archive '" + out_.name() +
                        "': keys are non-empty and have no whitespace or unprintable bytes");
    out_.write(key);
    out_.put(' ');
    return out_.tell();
  }
  // Ends the entry whose object was written to out().
  void end_entry() {
    if (flush_each_) out_.flush();
  }
  writer& out() noexcept { return out_; }
  const std::string& name() const noexcept { return out_.name(); }
  void close() { out_.close(); }

 private:
  writer out_;
  bool flush_each_;
};

class archive_reader {
 public:
  explicit archive_reader(reader in) : in_(std::move(in)) {}

  // Reads the next key and the separator after it. Returns false at the end of the archive,
  // which includes input that ends inside a key: Kaldi treats that as a clean end too.
  bool next_key(std::string& key) {
    in_.skip_whitespace();
    key_offset_ = in_.tell();
    key.clear();
    in_.read_until_space(key);
    int c = in_.peek();
    if (c < 0) return false;
    if (c == ' ' || c == '\t')
      in_.advance(1);  // a newline is left for the object
    else if (c != '\n')
      in_.fail("a space after key '" + key + "'", "byte " + std::to_string(c));
    return true;
  }
  // Offset of the last key read.
  std::uint64_t key_offset() const noexcept { return key_offset_; }
  reader& in() noexcept { return in_; }
  const std::string& name() const noexcept { return in_.name(); }
  void close() { in_.close(); }

 private:
  reader in_;
  std::uint64_t key_offset_ = 0;
};

TABLIO_END_NAMESPACE
