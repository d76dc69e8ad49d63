// Kaldi script files: one entry a line, "key <whitespace> rxfilename[range]". The value is
// trimmed of whitespace (so CRLF files work; inner spaces stay, as in "cmd args |"), and a
// value ending in ']' carries a range, e.g. "feats.ark:42[0:9,2:5]".
//
// As a framing (scp_framing):
// - script_input reads the entries a script points at: an object at an offset of a file
//   ("f.ark:1234"), a TFRecord record or a tar member at an offset (recognised by the CRC or
//   the checksum of their headers), a whole file, or a command's output ("cmd |"). Entries
//   are handed out pending: the value is loaded only when a table asks for it. For lookups by
//   key the script is read whole and sorted.
// - script_targets_output writes each object to the file an existing script lists for its key.
// - scripted_output<F> adds a script to any output framing with locations: "ark,scp:",
//   "tfrecord,scp:", "tar,scp:" write "key file:offset" for every entry.
#pragma once

#include <tablio/core/table_budget.hpp>
#include <tablio/framing/concepts.hpp>
#include <tablio/framing/tar.hpp>
#include <tablio/framing/tfrecord.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/stream/memory.hpp>
#include <tablio/stream/platform/file_io.hpp>
#include <tablio/types/range.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// One line of a script: its key, the rxfilename it names, and the range after that.
struct script_entry {
  std::string key;
  std::string rxfilename;
  std::string range;  // without the brackets; empty when the line has none
};

namespace detail {
inline constexpr std::string_view script_space = " \t\n\r\f\v";
}

// Parses one line as Kaldi does; nullopt for an invalid line (no key, no value, or a
// malformed range such as "a[" or "a[]").
inline std::optional<script_entry> parse_script_line(std::string_view line) {
  using detail::script_space;
  std::size_t key_begin = line.find_first_not_of(script_space);
  if (key_begin == std::string_view::npos) return std::nullopt;
  std::size_t key_end = line.find_first_of(script_space, key_begin);
  if (key_end == std::string_view::npos) return std::nullopt;
  std::size_t value_begin = line.find_first_not_of(script_space, key_end);
  if (value_begin == std::string_view::npos) return std::nullopt;
  std::size_t value_end = line.find_last_not_of(script_space) + 1;
  script_entry e{std::string(line.substr(key_begin, key_end - key_begin)),
                 std::string(line.substr(value_begin, value_end - value_begin)),
                 {}};
  if (e.rxfilename.back() == ']') {
    auto ranged = split_range_specifier(e.rxfilename);
    if (!ranged) return std::nullopt;
    e.range = std::string(ranged->range);
    e.rxfilename = std::string(ranged->rxfilename);
  }
  return e;
}

// A script line that is not "key rxfilename" (a blank one, say). A format_error of its own type
// because Kaldi's sequential readers end the table there with a warning, which the Kaldi
// facade does too, where every other reader stops with this error.
class script_line_error : public format_error {
 public:
  using format_error::format_error;
};

// Reads a script file line by line.
class script_reader {
 public:
  // Reads the script from in.
  explicit script_reader(reader in) : in_(std::move(in)) {}

  // The next entry; false at the end. An invalid line is a format_error naming its number.
  bool next(script_entry& entry) {
    std::string line;
    for (;;) {
      if (!read_line(line)) return false;
      ++line_number_;
      if (auto e = parse_script_line(line)) {
        if (e->key.size() > in_.limits().max_token_bytes)  // a key, as long as any table's may be
          in_.fail_at(line_offset_, {"a key of at most ", decimal(in_.limits().max_token_bytes), " bytes"},
                      {decimal(e->key.size()), " bytes (line ", decimal(line_number_), ")"});
        entry = std::move(*e);
        return true;
      }
      throw script_line_error(
          {in_.name(), line_offset_, {}},
          detail::join({"a script line 'key rxfilename' (line ", decimal(line_number_), ")"}),
          quoted_excerpt(line));
    }
  }
  // The number of the line next() read last (1 for the first).
  std::uint64_t line_number() const noexcept { return line_number_; }
  // The script's name, as errors give it.
  const std::string& name() const noexcept { return in_.name(); }
  // Closes the script; a failed input command throws here.
  void close() { in_.close(); }

 private:
  bool read_line(std::string& line) {
    line_offset_ = in_.tell();
    return in_.read_line(line);
  }

  reader in_;
  std::uint64_t line_number_ = 0;
  std::uint64_t line_offset_ = 0;
};

// Writes script lines "key value\n".
class script_writer {
 public:
  // Writes lines to out.
  explicit script_writer(writer out) : out_(std::move(out)) {}
  // Writes the line "key value". Neither is checked: a key with whitespace in it, or a value
  // with a newline, writes a line that reads back otherwise.
  void write(std::string_view key, std::string_view value) {
    out_.write(key);
    out_.put(' ');
    out_.write(value);
    out_.put('\n');
  }
  // The stream the lines go to.
  writer& out() noexcept { return out_; }
  // The script's name, as errors give it.
  const std::string& name() const noexcept { return out_.name(); }
  // Flushes and closes the script; a failed write or output command throws here.
  void close() { out_.close(); }

 private:
  writer out_;
};

namespace detail {

// Reads a whole script.
inline std::vector<script_entry> read_script(std::string_view rxfilename, const open_options& open) {
  script_reader in(open_input(rxfilename, open));
  std::vector<script_entry> entries;
  for (script_entry e; in.next(e);) entries.push_back(std::move(e));
  in.close();
  return entries;
}

// Reads a command's output to its end (at most limits::max_record_bytes) and closes it, so
// that the command's exit status is known before its output is trusted.
inline void read_command_output(reader& in, std::string& out) {
  out.clear();
  for (char buffer[65536];;) {
    std::size_t got = in.read_some(buffer, sizeof buffer);
    if (got == 0) break;
    if (out.size() + got > in.limits().max_record_bytes)
      in.fail({"at most ", decimal(in.limits().max_record_bytes), " bytes (limits::max_record_bytes)"},
              {"more"});
    out.append(buffer, got);
  }
  in.close();
}

// Sorts a script's entries by key, keeping the order of equal keys (qsort on their
// addresses, which instantiates no sorting template in every includer). Returns where each
// line went: the script's own order.
inline std::vector<std::size_t> sort_script(std::vector<script_entry>& entries) {
  std::vector<script_entry*> order(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) order[i] = &entries[i];
  std::qsort(order.data(), order.size(), sizeof(script_entry*), [](const void* a, const void* b) {
    auto* x = *static_cast<script_entry* const*>(a);
    auto* y = *static_cast<script_entry* const*>(b);
    int c = x->key.compare(y->key);
    return c != 0 ? c : (x < y ? -1 : x > y);
  });
  std::vector<script_entry> sorted;
  std::vector<std::size_t> moved_to(entries.size());
  sorted.reserve(entries.size());
  for (script_entry* e : order) {
    moved_to[static_cast<std::size_t>(e - entries.data())] = sorted.size();
    sorted.push_back(std::move(*e));
  }
  entries = std::move(sorted);
  return moved_to;
}

// Opens a name the line of `key` in a script gives, with open(); a failure's message quotes the
// name as input is quoted, at most max_quoted_bytes of it (a script that is not one, such as a
// credentials file, would otherwise show its lines' second fields whole), and says which line of
// which script gave it. Its path() is that excerpt too: Python shows an OSError's filename in
// its message.
template <class Open>
auto open_script_target(const std::string& name, std::string_view key, std::string_view script, Open open) {
  try {
    return open();
  } catch (const io_error& e) {
    std::string message = e.what();
    for (const std::string& shown : {name, without_credentials(name), printable(name)})  // as it was shown
      for (std::size_t at = message.find(shown); shown.size() > max_quoted_bytes && at != std::string::npos;
           at = message.find(shown, at + 1))
        message.replace(at, shown.size(), excerpt(shown));
    throw io_error(e, excerpt(without_credentials(name)),
                   join({message, " (named by the line of key ", quoted_key(key), " in '", script, "')"}));
  }
}

// A sorted script must not repeat a key.
inline void check_distinct_keys(const std::vector<script_entry>& entries, const std::string& script) {
  for (std::size_t i = 1; i < entries.size(); ++i)
    if (entries[i].key == entries[i - 1].key)
      throw_format_error(script, std::nullopt, entries[i].key, {"distinct keys in the script"},
                         {"key ", quoted_excerpt(entries[i].key), " twice"});
}

// For each entry "file:offset", the next larger offset into the same file that an entry names
// (where its object ends, for a script of an archive or a TFRecord file), or 0.
inline std::vector<std::uint64_t> entry_ends(const std::vector<script_entry>& entries) {
  std::vector<std::pair<std::string_view, std::uint64_t>> at;  // (file, offset) of each entry
  at.reserve(entries.size());
  for (const script_entry& s : entries) {
    std::size_t colon = offset_colon(s.rxfilename);
    std::string_view name = s.rxfilename;
    std::optional<offset_filename> f =
        colon == std::string_view::npos ? std::nullopt : parse_offset_filename(name);
    at.push_back(f ? std::pair{name.substr(0, colon), f->offset} : std::pair{name, std::uint64_t{0}});
  }
  std::vector<std::size_t> order(entries.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return at[a] < at[b]; });
  std::vector<std::uint64_t> ends(entries.size(), 0);
  for (std::size_t k = 0; k + 1 < order.size(); ++k)
    if (at[order[k]].first == at[order[k + 1]].first) ends[order[k]] = at[order[k + 1]].second;
  return ends;
}

// The first entry of `entries` (sorted) with `key`, or nullptr.
inline const script_entry* find_script_entry(const std::vector<script_entry>& entries, std::string_view key) {
  std::size_t lo = 0, hi = entries.size();
  while (lo < hi) {
    std::size_t mid = lo + (hi - lo) / 2;
    if (entries[mid].key < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < entries.size() && entries[lo].key == key ? &entries[lo] : nullptr;
}

}  // namespace detail

// How a script_input reads: the rspecifier's key= and s options.
struct script_input_options {
  std::string key_name;  // key=NAME: the records it points at keep their key in this feature
  bool sorted = false;   // s: the script is sorted (checked when it is read for lookups)
};

// Kaldi's "scp:" for reading: the input side of scp_framing, a Framing of object and record
// entries pending until load() (see tablio/framing/scp.hpp). In order it reads the script a line at a time; a
// lookup, size() or for_each_key() reads it whole first (prepare_lookups).
class script_input {
 public:
  static constexpr unsigned forms = entry_forms(entry_form::object) | entry_forms(entry_form::record);

  // Reads the script rxfilename, which is not opened before the first next() or lookup.
  explicit script_input(std::string_view rxfilename, script_input_options options = {},
                        const open_options& open = {})
      : name_(rxfilename),
        options_(std::move(options)),
        open_(open),
        budget_(open.parse_limits.max_table_expansion) {}

  // The next line's entry, pending: load() reads its value.
  bool next(entry& e) {
    if (!lines_) {
      if (indexed_) return next_indexed(e);
      lines_.emplace(open_input(name_, open_));
    }
    if (!lines_->next(line_)) return false;
    budget_.allow(line_.key.size() + line_.rxfilename.size() + 2);
    current_ = &line_;
    return hand_out(e);
  }

  // Reads the whole script for lookups: sorted here, or checked to be sorted under `s`.
  void prepare_lookups() {
    if (indexed_) return;
    entries_ = detail::read_script(name_, open_);
    if (options_.sorted) {
      for (std::size_t i = 1; i < entries_.size(); ++i)
        if (entries_[i].key < entries_[i - 1].key)
          throw_format_error(
              name_, std::nullopt, entries_[i].key, {"a sorted script (remove the s option or add ns)"},
              {quoted_excerpt(entries_[i - 1].key), " followed by ", quoted_excerpt(entries_[i].key)});
    } else {
      line_order_ = detail::sort_script(entries_);
    }
    detail::check_distinct_keys(entries_, name_);
    for (const script_entry& s : entries_) budget_.allow(s.key.size() + s.rxfilename.size() + 2);
    indexed_ = true;
  }
  // The Framing concept: the entry of key, pending; false when no line has that key. The
  // first lookup reads the whole script: a repeated key is a format_error, and so, under s, is
  // a script out of order.
  bool find(std::string_view key, entry& e) {
    prepare_lookups();
    current_ = detail::find_script_entry(entries_, key);
    return current_ && hand_out(e);
  }

  // Keys about to be looked up: the parts of files they point at are fetched now, at once (a
  // remote object's ranges, several at a time); each part ends where the script's next offset
  // into the same file begins, or at the file's end.
  void prefetch(std::span<const std::string> keys) {
    settle();
    prepare_lookups();
    if (ends_.empty()) ends_ = detail::entry_ends(entries_);
    struct wanted_range {
      std::string file;
      byte_range range;
      std::string_view key;
    };
    std::vector<wanted_range> wanted;
    for (const std::string& key : keys)
      if (const script_entry* s = detail::find_script_entry(entries_, key);
          s && is_remote_name(s->rxfilename) &&
          detail::offset_colon(s->rxfilename) != std::string_view::npos) {
        std::optional<offset_filename> at = parse_offset_filename(s->rxfilename);
        if (!at) continue;  // reading it says what is wrong
        const offset_filename& o = *at;
        std::uint64_t end = ends_[static_cast<std::size_t>(s - entries_.data())];
        wanted.push_back({o.file, {o.offset, end > o.offset ? end - o.offset : std::uint64_t{1} << 20}, key});
      }
    // Each file's ranges at once, the files in the order of their first key (a few files to a
    // batch: grouped by a scan, which compiles to a tenth of a sort).
    std::vector<byte_range> ranges;
    for (std::size_t i = 0; i < wanted.size(); ++i) {
      if (wanted[i].file.empty()) continue;  // fetched with an earlier key's file
      ranges.clear();
      for (std::size_t j = i; j < wanted.size(); ++j)
        if (wanted[j].file == wanted[i].file) {
          ranges.push_back(wanted[j].range);
          if (j != i) wanted[j].file.clear();
        }
      file(wanted[i].file, ranges.front().offset, wanted[i].key).prefetch(ranges);
    }
  }
  // The Framing concept: the number of lines, for which the whole script is read.
  std::uint64_t size() {
    prepare_lookups();
    return entries_.size();
  }
  // The script's keys in its order, reading no value: what a table looked up through it lists,
  // under 'p' too (where a value that cannot be read is then absent at lookup).
  template <class F>
  bool for_each_key(F f) {
    prepare_lookups();
    for (std::size_t i = 0; i < entries_.size(); ++i)
      f(entries_[line_order_.empty() ? i : line_order_[i]].key);
    return true;
  }

  // Loads the value of the entry next() or find() handed out last.
  void load(entry& e) {
    settle();
    const script_entry& s = *current_;
    e.pending = false;
    // A name no input has (a NUL, "|cmd", an offset past 2^63) is the script's fault, not the
    // caller's. "file:offset" is parsed once.
    const bool offset = detail::offset_colon(s.rxfilename) != std::string_view::npos;
    std::optional<offset_filename> at = offset ? parse_offset_filename(s.rxfilename) : std::nullopt;
    if (offset ? !at || !can_open_at(at->file) : classify_rxfilename(s.rxfilename) == input_kind::none)
      throw_format_error(name_, std::nullopt, s.key, {"the name of a file, an object or a command"},
                         {quoted_excerpt(s.rxfilename)});
    if (at) return load_at_offset(s, *at, e);
    reader in = detail::open_script_target(s.rxfilename, s.key, name_,
                                           [&] { return open_input(s.rxfilename, open_); });
    name_from_input(in);
    count_file(s.rxfilename, in);
    if (classify_rxfilename(s.rxfilename) != input_kind::pipe) {
      // A file (or a device): its object is read from it as it comes, as Kaldi reads it, so
      // that a file with no end costs what the object takes, not the record limit.
      whole_reader_.emplace(std::move(in));
      start_reading(*whole_reader_, whole_reader_->tell());
      e.form = entry_form::object;
      e.object = &*whole_reader_;
      e.followed_by_key = false;  // a file of one object, whatever follows it (a WAVE file's chunks)
      e.read_in_sequence = false;
      return;
    }
    detail::read_command_output(in, whole_);
    whole_reader_.emplace(memory_reader(std::string_view(whole_), in.name(), open_.parse_limits));
    start_reading(*whole_reader_, 0);
    e.form = entry_form::object;
    e.object = &*whole_reader_;
    e.followed_by_key = false;
    e.read_in_sequence = false;
  }

  // The Framing concept: the script's name, as errors give it.
  const std::string& name() const noexcept { return name_; }
  // The Framing concept: closes the files the lines named and the script; a failed script
  // command throws here.
  void close() {
    reading_ = nullptr;
    files_.clear();
    whole_reader_.reset();
    if (lines_) {
      auto lines = std::move(lines_);
      lines_.reset();
      lines->close();
    }
  }

 private:
  bool next_indexed(entry& e) {
    if (next_index_ == entries_.size()) return false;
    // In the script's order, as a script read line by line gives it, also after lookups sorted it.
    std::size_t i = next_index_++;
    current_ = &entries_[line_order_.empty() ? i : line_order_[i]];
    return hand_out(e);
  }

  bool hand_out(entry& e) const {
    e.key = current_->key;
    e.pending = true;
    e.object = nullptr;
    e.bytes = {};
    e.range = current_->range;
    e.origin = current_->rxfilename;
    e.key_name = options_.key_name;
    e.max_key_bytes = open_.parse_limits.max_token_bytes;
    e.provisional_key = false;
    return true;
  }

  // A file a script line names is input: under closed options (the untrusted policy), messages
  // quote 16 bytes of its name, as they quote any input (the key and the script find it).
  void name_from_input(reader& in) const {
    if (is_closed(open_)) in.set_name(excerpt(in.name()));
  }

  // limits::max_table_expansion: each file a line names adds its bytes, once, to what the
  // table may read (the script's own lines add theirs); what each entry read is counted when the
  // next one loads, so that lines pointing again and again at the same bytes end the table.
  // A local file is told apart by what it is (its device and inode: whatever name a line gives
  // it, through links too), a remote object by its name's hash; two that collide count once.
  void count_file(const std::string& name, const reader& in) {
    if (budget_.bounded()) count_new_file(name, in);
  }
  TABLIO_COLD void count_new_file(const std::string& name, const reader& in) {
    detail::os::file_status st;
    const std::uint64_t hash = !is_remote_name(name) && detail::os::status_of(name, true, st)
                                   ? st.identity
                                   : std::hash<std::string>{}(name);
    auto at = std::lower_bound(counted_files_.begin(), counted_files_.end(), hash);
    if (at != counted_files_.end() && *at == hash) return;
    counted_files_.insert(at, std::uint64_t{hash});
    budget_.allow(in.tell() + in.remaining().value_or(0));
  }
  // A line is counted the first time it is read: looked up again (a dataset's next epoch) it
  // is the caller's reading, not the upload's. Once spent, the budget refuses every later entry
  // (under p too, where the refusal leaves the entry out and the table goes on).
  void start_reading(const reader& in, std::uint64_t from) {
    if (!budget_.bounded() || !first_reading()) return;
    reading_ = &in;
    reading_from_ = from;
  }
  TABLIO_COLD bool first_reading() {
    if (!indexed_) return true;
    if (read_lines_.empty()) read_lines_ = std::vector<std::uint64_t>(entries_.size() / 64 + 1);
    const auto line = static_cast<std::size_t>(current_ - entries_.data());
    const std::uint64_t bit = std::uint64_t{1} << (line % 64);
    const bool before = (read_lines_[line / 64] & bit) != 0;
    read_lines_[line / 64] |= bit;
    return !before;
  }
  void settle() {
    if (reading_ || budget_.spent()) settle_read();
  }
  TABLIO_COLD void settle_read() {
    const std::uint64_t at = reading_ ? std::exchange(reading_, nullptr)->tell() : reading_from_;
    budget_.take(at > reading_from_ ? at - reading_from_ : 0, name_, std::nullopt, current_->key,
                 "bytes of the script and of the files it names");
  }

  // "f.ark:1234", "s3://bucket/f.ark:1234": an open file serves offsets into it (a seek, not an
  // open); a few stay open, for scripts that point into several files (shards).
  reader& file(const std::string& name, std::uint64_t offset, std::string_view key) {
    auto it = std::find_if(files_.begin(), files_.end(), [&](const open_file& f) { return f.name == name; });
    if (it == files_.end()) {
      if (files_.size() == max_open_files) files_.erase(files_.begin());
      files_.push_back({name, detail::open_script_target(
                                  name, key, name_, [&] { return open_input_at(name, offset, open_); })});
      it = files_.end() - 1;
      name_from_input(it->in);
      count_file(name, it->in);
    }
    std::rotate(it, it + 1, files_.end());  // the most recently used last
    return files_.back().in;
  }

  void load_at_offset(const script_entry& s, const offset_filename& o, entry& e) {
    reader& in = file(o.file, o.offset, s.key);
    if (indexed_ && is_remote_name(o.file)) {  // a lookup: fetch the entry's bytes, no more
      if (ends_.empty()) ends_ = detail::entry_ends(entries_);
      std::uint64_t end = ends_[static_cast<std::size_t>(&s - entries_.data())];
      if (end > o.offset) {
        byte_range whole{o.offset, end - o.offset};
        in.prefetch({&whole, 1});
      }
    }
    in.seek(o.offset);
    start_reading(in, o.offset);
    e.form = entry_form::record;
    e.source = in.name();
    if (in.ensure(12) && is_tfrecord_header(in.window())) {
      e.data_offset = in.tell() + 12;
      e.bytes = read_tfrecord_at(in, scratch_, s.key);
      return;
    }
    if (in.ensure(512) && detail::is_tar_header(in.window())) {
      detail::tar_member m;
      detail::read_tar_member(in, m, scratch_, true);
      e.data_offset = m.data_offset;
      e.bytes = detail::read_tar_data(in, m, scratch_);
      return;
    }
    e.form = entry_form::object;
    e.object = &in;
    e.followed_by_key = true;  // an archive's object, or a file's one object
    e.read_in_sequence = false;
  }

  std::string name_;
  script_input_options options_;
  open_options open_;
  std::optional<script_reader> lines_;
  script_entry line_;
  std::vector<script_entry> entries_;    // for lookups: the whole script, sorted
  std::vector<std::size_t> line_order_;  // where each line of the script went in entries_
  std::vector<std::uint64_t> ends_;      // entries_'s: where the next offset into its file is (0: none)
  bool indexed_ = false;
  std::size_t next_index_ = 0;
  const script_entry* current_ = nullptr;
  struct open_file {
    std::string name;
    reader in;
  };
  static constexpr std::size_t max_open_files = 8;
  std::vector<open_file> files_;  // least recently used first
  std::string scratch_;
  std::string whole_;                   // a command's output
  std::optional<reader> whole_reader_;  // the object being read: a file, or whole_
  detail::table_budget budget_;
  std::vector<std::uint64_t> counted_files_;  // sorted: the files the budget counts
  std::vector<std::uint64_t> read_lines_;     // lookups: a bit per line of entries_ the budget counted
  const reader* reading_ = nullptr;           // what the entry loaded last reads, from reading_from_
  std::uint64_t reading_from_ = 0;
};

namespace detail {
// Where the objects of keys a permissive script writer skips go.
struct discard_sink {
  void write(const char*, std::size_t) noexcept {}
  void flush() noexcept {}
};
}  // namespace detail

// How a script_targets_output writes: the wspecifier's b/t and p options.
struct script_output_options {
  bool binary = true;       // b / t
  bool permissive = false;  // p: keys the script does not list are skipped
};

// "scp:targets.scp" for writing: each object goes to the file the script lists for its key.
class script_targets_output {
 public:
  // Reads the script whole at once; a key it lists twice is a format_error.
  explicit script_targets_output(std::string_view script, script_output_options options = {},
                                 const open_options& open = {})
      : name_(script), options_(options), open_(open), targets_(detail::read_script(script, open)) {
    detail::sort_script(targets_);
    detail::check_distinct_keys(targets_, name_);
  }

  // The Framing concept: opens the file the script lists for key and returns its writer. A key
  // it does not list is a key_error, or under p an object written to nowhere.
  writer& begin(std::string_view key) {
    const script_entry* target = detail::find_script_entry(targets_, key);
    if (!target) {
      if (!options_.permissive)
        throw_key_error({"key ", quoted_key(key), " is not in the script '", name_, "'"});
      out_.emplace(detail::discard_sink{}, "<skipped>", 64);
    } else {
      // A line that names no output (an offset, a NUL, "cmd |") is the script's fault.
      if (classify_wxfilename(target->rxfilename) == output_kind::none)
        throw_format_error(name_, std::nullopt, target->key, {"the name of a file or a command to write"},
                           {quoted_excerpt(target->rxfilename)});
      out_.emplace(detail::open_script_target(target->rxfilename, target->key, name_,
                                              [&] { return open_output(target->rxfilename, open_); }));
    }
    return *out_;
  }
  // The Framing concept: closes the entry's file; a failed write or command throws here.
  void end() {
    auto out = std::move(out_);
    out_.reset();
    out->close();
  }
  // The Framing concept: false when objects are written in text mode (t).
  bool binary() const noexcept { return options_.binary; }
  // The Framing concept: each entry's file was closed at its end(); this lets go of one begun
  // and not ended.
  void close() { out_.reset(); }

 private:
  std::string name_;
  script_output_options options_;
  open_options open_;
  std::vector<script_entry> targets_;
  std::optional<writer> out_;
};

// An output framing F that also writes a script: a line "key file:offset" for every entry,
// written before the entry's object, as Kaldi's "ark,scp:" does.
template <class F>
requires positional_output<F>
class scripted_output {
 public:
  // Writes entries through inner and their lines to script. With flush_each (Kaldi's f) each
  // line is pushed to the OS once its entry is whole.
  scripted_output(F inner, writer script, bool flush_each = false)
      : inner_(std::move(inner)), script_(std::move(script)), flush_each_(flush_each) {
    detail::keep_keys_beside(inner_);
  }

  // The Framing concept: begins the entry in inner and writes its line. A usage_error when no
  // line may follow: an entry before failed with its line gone out, or inner refuses scripts.
  writer& begin(std::string_view key) requires object_output<F> {
    check_scriptable();
    writer& out = inner_.begin(key);
    line_offset_ = script_.out().tell();
    line(key);
    return out;
  }
  // The Framing concept: ends the entry in inner.
  void end() requires object_output<F> {
    inner_.end();
    if (flush_each_) script_.out().flush();  // the line, once its object is whole
  }
  // The entry's object failed: taken back from both (or, were its line gone to the script
  // already, the script takes no more entries).
  void abandon(std::string_view key) requires object_output<F> {
    detail::abandon_entry(inner_, key);
    if (!script_.out().take_back(line_offset_)) cut_key_ = key;
  }
  // The Framing concept: puts the record into inner, then writes its line.
  void put(std::string_view key, std::string_view bytes) requires record_output<F> {
    check_scriptable();
    inner_.put(key, bytes);
    line(key);
    if (flush_each_) script_.out().flush();
  }
  // The Framing concept: the form inner takes.
  entry_form form() const { return detail::output_form(inner_); }
  // The Framing concept: false when inner writes objects in text mode.
  bool binary() const { return detail::writes_binary(inner_); }
  // The Framing concept: the bytes feature inner's records keep their key in, if any.
  std::string_view key_name() const { return detail::output_key_name(inner_); }
  // Has inner keep keys in the bytes feature `name` (key=NAME), where it can.
  void keep_keys_in(std::string_view name) { detail::keep_keys_in(inner_, name); }
  // The Framing concept: where inner put the entry just begun or put.
  location entry_location() const { return inner_.entry_location(); }
  // The Framing concept: inner's name for its file number `file`, as the lines give it.
  decltype(auto) file_name(std::uint32_t file) const { return inner_.file_name(file); }
  // The Framing concept: hands the holder's file extension on to inner.
  void set_default_extension(std::string_view extension) { detail::suggest_extension(inner_, extension); }
  // The Framing concept: flushes inner, then the script.
  void flush() {
    if constexpr (requires { inner_.flush(); }) inner_.flush();
    script_.out().flush();
  }
  // Closes both, the framing first; throws the first failure.
  void close() {
    std::exception_ptr failure;
    try {
      inner_.close();
    } catch (...) {
      failure = std::current_exception();
    }
    try {
      script_.close();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
    if (failure) std::rethrow_exception(failure);
  }
  // The framing the entries are written through.
  F& inner() noexcept { return inner_; }

 private:
  // Checked per entry: what a framing writes may change once the holder's extension is known.
  void check_scriptable() const {
    if (!cut_key_.empty())
      throw_usage_error({"script '", script_.name(), "' lists key ", quoted_key(cut_key_),
                         ", whose object failed to be written: no entry can follow it"});
    if constexpr (requires { inner_.script_refusal(); }) {
      if (std::string_view why = inner_.script_refusal(); !why.empty()) throw_usage_error({why});
    }
  }
  void line(std::string_view key) {
    location at = inner_.entry_location();
    std::string_view file = inner_.file_name(at.file);
    char offset[24];
    int n = std::snprintf(offset, sizeof offset, ":%llu", static_cast<unsigned long long>(at.offset));
    writer& out = script_.out();
    out.write(key);
    out.put(' ');
    out.write(file);
    out.write(offset, static_cast<std::size_t>(n));
    out.put('\n');
  }

  F inner_;
  script_writer script_;
  bool flush_each_;
  std::uint64_t line_offset_ = 0;  // of the entry's line
  std::string cut_key_;            // of an entry abandoned with its line gone
};

// Kaldi scripts as a framing family.
struct scp_framing {
  using output = script_targets_output;
  using input = script_input;
};

TABLIO_END_NAMESPACE
