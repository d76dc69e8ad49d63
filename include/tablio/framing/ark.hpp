// Kaldi archives: ( key ' ' object )* with no header or index. Objects describe themselves
// (binary ones start with "\0B"), so binary and text entries may mix. This layer deals in
// keys and byte offsets only; the table layer reads and writes the objects with a holder.
//
// archive_writer and archive_reader are the two sides of ark_framing: object entries, whose
// location is the offset of the object (what "ark,scp:" script lines point at). A reader
// opened on a plain file can also read the object at any such offset again (read_at).
#pragma once

#include <tablio/codec/kaldi_token.hpp>
#include <tablio/framing/concepts.hpp>
#include <tablio/stream/filename.hpp>

#include <optional>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

// How an archive_writer writes: Kaldi's wspecifier options b, t and f.
struct archive_options {
  bool binary = true;       // objects in binary mode (Kaldi's b, the default) or text (t)
  bool flush_each = false;  // push every entry to the OS as soon as it is written (Kaldi's f)
};

// Writes a Kaldi archive: the output side of ark_framing, a Framing of object entries. Each
// entry's location is its object's offset in the one file, which "ark,scp:" script lines name.
class archive_writer {
 public:
  explicit archive_writer(writer out, archive_options options = {})
      : out_(std::move(out)), name_(out_.name()), options_(options) {}
  // Opens a wxfilename ("f.ark", "-", "| gzip -c > f.ark.gz").
  explicit archive_writer(std::string_view wxfilename, archive_options options = {},
                          const open_options& open = {})
      : out_(open_output(wxfilename, open)), name_(wxfilename), options_(options) {}

  // Writes "key " and returns the offset where the entry's object starts. Keys must be
  // Kaldi tokens: non-empty, printable, no whitespace.
  std::uint64_t begin_entry(std::string_view key) {
    if (!kaldi_io::is_token(key) || key.size() > default_limits.max_token_bytes) bad_key(key);
    if (!cut_key_.empty()) cut_entry();
    entry_offset_ = out_.tell();
    out_.write(key);
    out_.put(' ');
    return object_offset_ = out_.tell();
  }
  // Ends the entry whose object was written to out().
  void end_entry() {
    if (options_.flush_each) out_.flush();
  }

  // The Framing concept: begins an entry for key, as begin_entry() does, and returns the writer
  // its object goes to. Entries are objects, located by their object's offset.
  writer& begin(std::string_view key) {
    begin_entry(key);
    return out_;
  }
  // The Framing concept: ends the entry begun last, as end_entry() does.
  void end() { end_entry(); }
  // The entry begun for key failed before its object was whole: it is taken back, or, when
  // part of it has reached the file already, the archive ends in it and takes no more entries.
  void abandon(std::string_view key) {
    if (!out_.take_back(entry_offset_)) cut_key_ = key;
  }
  // The Framing concept: false when objects are written in text mode (archive_options::binary).
  bool binary() const noexcept { return options_.binary; }
  // The Framing concept: where the entry just begun is, for scripts: file 0, at its object.
  location entry_location() const noexcept { return {0, object_offset_}; }
  // The Framing concept: the name script lines give the archive: the wxfilename as given.
  const std::string& file_name(std::uint32_t /*file*/) const noexcept { return name_; }
  // The Framing concept: pushes what was written so far to the OS.
  void flush() { out_.flush(); }

  // The stream the holder writes an entry's object to, between begin() and end().
  writer& out() noexcept { return out_; }
  // The output's name, as errors give it.
  const std::string& name() const noexcept { return out_.name(); }
  // The Framing concept: flushes and closes the output; a failed write or output command
  // throws here, and a second close() does nothing.
  void close() { out_.close(); }

 private:
  [[noreturn]] void bad_key(std::string_view key) const {
    throw_key_error({"invalid key ", quoted_excerpt(key), " for archive '", out_.name(),
                     "': keys are non-empty, have no whitespace or unprintable bytes, and are at most ",
                     decimal(default_limits.max_token_bytes), " bytes (limits::max_token_bytes)"});
  }

  [[noreturn]] void cut_entry() const {
    throw_usage_error({"archive '", out_.name(), "' ends in the object of key ", quoted_key(cut_key_),
                       ", whose writing failed after part of it reached the file: no entry can follow it"});
  }

  writer out_;
  std::string name_;  // as given: what script lines name
  archive_options options_;
  std::uint64_t entry_offset_ = 0, object_offset_ = 0;
  std::string cut_key_;  // of an entry abandoned with part of it written
};

// Reads a Kaldi archive in order: the input side of ark_framing, a Framing of object entries.
// Opened by name on a plain file or a remote object, it also reads the object at any offset that
// next() reported (read_at), as a script of the archive points at them.
class archive_reader {
 public:
  static constexpr unsigned forms = entry_forms(entry_form::object);

  explicit archive_reader(reader in) : in_(std::move(in)) {}
  // Opens an rxfilename; a plain file can also be read at any object's offset.
  explicit archive_reader(std::string_view rxfilename, const open_options& open = {})
      : in_(open_input(rxfilename, open)), open_(open) {
    if (can_open_at(rxfilename)) file_ = rxfilename;
  }

  // Reads the next key and the separator after it. Returns false at the end of the archive,
  // which includes input that ends inside a key: Kaldi treats that as a clean end too. Keys
  // are read as they are written: a value read with the wrong type leaves the reader inside
  // its bytes, and what it takes for the next key is no key.
  bool next_key(std::string& key) {
    if (!detail::read_archive_key(in_, key, key_offset_, /*after_object=*/false)) return false;
    if (in_.peek() != '\n') in_.advance(1);  // a newline is left for the object
    return true;
  }

  // The Framing concept: the next entry is an object to read from in().
  bool next(entry& e) {
    if (!next_key(e.key)) return false;
    e.form = entry_form::object;
    e.object = &in_;
    e.followed_by_key = false;  // the next next() reads the key
    e.read_in_sequence = true;
    e.where = {0, in_.tell()};
    return true;
  }
  // Points e at the object at `at` (an offset next() reported), read with a second reader so
  // that reading in order goes on undisturbed. Needs an archive opened from a file or a
  // remote object.
  bool read_at(const location& at, entry& e) {
    if (!seekable()) throw_usage_error({"cannot seek in archive '", in_.name(), "': it is not a plain file"});
    if (!lookup_) lookup_.emplace(open_input_at(file_, at.offset, open_));
    lookup_->seek(at.offset);
    e.form = entry_form::object;
    e.object = &*lookup_;
    e.where = at;
    e.followed_by_key = true;
    e.read_in_sequence = false;
    return true;
  }
  // The Framing concept: whether read_at() works: the archive was opened by name on a plain
  // file or a remote object, not on a reader or a command.
  bool seekable() const noexcept { return !file_.empty(); }
  // The Framing concept: the input's name, as errors give it.
  const std::string& name() const noexcept { return in_.name(); }

  // Offset of the last key read.
  std::uint64_t key_offset() const noexcept { return key_offset_; }
  // The stream read in order: after next(), at the entry's object.
  reader& in() noexcept { return in_; }
  // The Framing concept: releases the input and the reader read_at() opened; a failed input
  // command throws here.
  void close() {
    lookup_.reset();
    in_.close();
  }

 private:
  reader in_;
  std::uint64_t key_offset_ = 0;
  std::string file_;  // the file or remote object read_at() reopens, if any
  open_options open_;
  std::optional<reader> lookup_;
};

// Kaldi archives as a framing family.
struct ark_framing {
  using output = archive_writer;
  using input = archive_reader;
};

TABLIO_END_NAMESPACE
