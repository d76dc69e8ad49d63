// Tar archives as WebDataset and PyTorch pipelines shard datasets: one entry is one member
// file "KEY.EXT" holding the entry's record.
//
// Members are 512-byte blocks: a header (name, octal size, type, checksum...), then the data
// padded to a block. tar_output writes POSIX ustar headers (mode 0644, owner 0, time 0, so
// that the same table gives the same bytes), a pax header "path=" before a name longer than
// 100 bytes and "size=" before 8 GiB or more, and ends each file as GNU tar does: two zero
// blocks, then zeros to a multiple of 10240 bytes. With a numbered name ("shard-%06d.tar") it
// starts a new file once one holds maxcount entries or maxsize bytes, as WebDataset's
// ShardWriter (100000 entries, 3 GB by default), and once all are complete, their shard index
// beside them (shard_index.hpp).
//
// tar_input reads ustar, GNU (long names, base-256 sizes) and pax archives (extended and
// global headers), as GNU tar and Python's tarfile write them; a member's key is its name up
// to the first '.' of its last path component, and its extension the rest (WebDataset's
// rule). Members of other extensions, directories, links and devices are skipped. A key with a
// leading '/' or a ".." component is a format_error, as the writer refuses it, unless the
// caller asks for such keys (tar_input_options::unsafe_keys, "unsafekeys"). Every
// header is checked (checksum, fields, sizes against what remains) before anything is
// allocated; a bad one is a format_error naming the file and its offset.
//
// The extension "*" reads and writes WebDataset samples (types/sample.hpp): consecutive
// members with one key are one entry, whose record is the sample record of their extensions
// and data, in member order. As WebDataset's grouping does, extensions read lowercased
// ("JPG" as "jpg"), members with no extension or in metadata ("__meta__/...") are skipped,
// and an extension twice among a key's members is a format_error. Writing such a record puts
// one member KEY.EXT per extension, and refuses one that would not read back as written.
#pragma once

#include <tablio/codec/kaldi_token.hpp>
#include <tablio/core/keeper.hpp>
#include <tablio/core/minmax.hpp>
#include <tablio/framing/concepts.hpp>
#include <tablio/stream/compression.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/stream/shard_index.hpp>
#include <tablio/stream/shards.hpp>
#include <tablio/types/sample.hpp>
#if defined(TABLIO_WITH_ZLIB)
#include <tablio/stream/zlib.hpp>
#endif

#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

TABLIO_BEGIN_NAMESPACE

namespace detail {

inline constexpr std::size_t tar_block = 512;
inline constexpr std::size_t tar_record = 20 * tar_block;       // GNU tar's default blocking
inline constexpr std::uint64_t tar_octal_limit = 077777777777;  // the largest 11-digit octal size

inline std::uint64_t tar_padding(std::uint64_t size) noexcept {
  return (tar_block - size % tar_block) % tar_block;
}

// An octal field (digits, then NUL or space; leading spaces allowed) or GNU's base-256 (the
// first byte's top bit set); nullopt when it is neither, or negative, or too large.
inline std::optional<std::uint64_t> parse_tar_number(const char* field, std::size_t n) {
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(field[i]); };
  std::uint64_t v = 0;
  if (byte(0) & 0x80) {
    if (byte(0) != 0x80) return std::nullopt;  // negative (0xff) or huge
    for (std::size_t i = 1; i < n; ++i) {
      if (v >> 55) return std::nullopt;
      v = (v << 8) | byte(i);
    }
    return v;
  }
  std::size_t i = 0;
  while (i < n && field[i] == ' ') ++i;
  for (; i < n && field[i] >= '0' && field[i] <= '7'; ++i) {
    if (v >> 60) return std::nullopt;
    v = v * 8 + static_cast<std::uint64_t>(field[i] - '0');
  }
  for (; i < n; ++i)
    if (field[i] != ' ' && field[i] != '\0') return std::nullopt;
  return v;
}

// The header's checksum matches: the sum of its bytes with the checksum field as spaces,
// unsigned (POSIX) or signed (some old writers). Every member's header is summed, so eight
// bytes are summed at once: byte pairs into 16-bit lanes (at most 64 x 2 x 255 each), and
// the bytes of 0x80 and over, which the signed sum counts 256 lower, into byte lanes.
inline bool tar_checksum_matches(const char* h, std::uint64_t stored) noexcept {
  constexpr std::uint64_t pairs = 0x00FF00FF00FF00FFull, ones = 0x0101010101010101ull;
  std::uint64_t lanes = 0, high_lanes = 0;
  for (std::size_t i = 0; i < tar_block; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, h + i, 8);
    lanes += (w & pairs) + (w >> 8 & pairs);
    high_lanes += w >> 7 & ones;
  }
  auto lane_total = [](std::uint64_t v) {
    return (v & 0xFFFF) + (v >> 16 & 0xFFFF) + (v >> 32 & 0xFFFF) + (v >> 48);
  };
  std::uint64_t sum = lane_total(lanes), high = lane_total((high_lanes & pairs) + (high_lanes >> 8 & pairs));
  for (std::size_t i = 148; i < 156; ++i) {  // the field itself counts as spaces
    auto c = static_cast<unsigned char>(h[i]);
    sum = sum - c + ' ';
    high -= c >> 7;
  }
  return sum == stored || sum - 256 * high == stored;  // the signed sum, modulo 2^64
}

// Whether `block` (at least 512 bytes) is a ustar or GNU tar header: its magic and checksum.
inline bool is_tar_header(std::span<const char> block) {
  if (block.size() < tar_block || std::memcmp(block.data() + 257, "ustar", 5) != 0) return false;
  auto checksum = parse_tar_number(block.data() + 148, 8);
  return checksum && tar_checksum_matches(block.data(), *checksum);
}

// A NUL-terminated (or full) text field.
inline std::string_view tar_field_text(const char* field, std::size_t n) {
  return {field, strnlen(field, n)};
}

// A member as its headers describe it.
struct tar_member {
  std::string name;
  char type = '0';
  std::uint64_t size = 0;
  std::uint64_t header_offset = 0;  // of its first header (a pax or long-name one, if any)
  std::uint64_t data_offset = 0;
};

[[noreturn]] inline void bad_tar(const reader& in, std::uint64_t offset, message expected, message found) {
  in.fail_at(offset, expected, found);
}

// The compression whose magic bytes start `head`, or empty: a compressed archive (a
// ".tar.gz" shard) is said to be one, rather than a block that is no tar header.
inline std::string_view compression_of_archive(std::string_view head) {
  if (head.starts_with("\x1f\x8b")) return "gzip";
  if (head.starts_with("BZh")) return "bzip2";
  if (head.starts_with("\xfd\x37\x7a\x58\x5a")) return "xz";
  if (head.starts_with("\x28\xb5\x2f\xfd")) return "zstd";
  return {};
}

// Fails at the start of an archive that is no tar: a compressed one is named as such.
[[noreturn]] inline void bad_tar_start(const reader& in, message expected, message found) {
  std::string_view head(in.window().data(), in.window().size());
  if (std::string_view c = compression_of_archive(head); !c.empty())
    bad_tar(in, 0, {"a tar archive, uncompressed or gzip-compressed (with the tablio::zlib component)"},
            {c, "-compressed data: decompress it, or read it through a command ('", c, " -dc FILE |')"});
  bad_tar(in, 0, expected, found);
}

// Applies a pax extended header's records "LENGTH key=value\n" (path and size) to m; whether
// one of them was the size.
inline bool apply_pax(const reader& in, std::uint64_t at, std::string_view records, tar_member& m) {
  bool sized = false;
  while (!records.empty()) {
    std::size_t space = records.find(' ');
    std::uint64_t length = 0;
    if (space == std::string_view::npos || !parse_number(records.substr(0, space), length) ||
        length <= space + 1 || length > records.size() || records[length - 1] != '\n')
      bad_tar(in, at, {"pax records \"LENGTH key=value\\n\""}, {quoted_excerpt(records)});
    std::string_view record = records.substr(space + 1, length - space - 2);
    records.remove_prefix(length);
    std::size_t eq = record.find('=');
    if (eq == std::string_view::npos) bad_tar(in, at, {"a pax record key=value"}, {quoted_excerpt(record)});
    std::string_view key = record.substr(0, eq), value = record.substr(eq + 1);
    if (key == "path") {
      m.name = value;
    } else if (key == "size") {
      if (!parse_number(value, m.size))
        bad_tar(in, at, {"a pax size of at most 18 decimal digits"}, {quoted_excerpt(value)});
      sized = true;
    }
  }
  return sized;
}

// The key and the extension of a member name: its last path component splits at its first '.'.
inline std::pair<std::string_view, std::string_view> tar_key_and_extension(std::string_view name) {
  std::size_t slash = name.rfind('/');
  std::size_t dot = name.find('.', slash == std::string_view::npos ? 0 : slash + 1);
  if (dot == std::string_view::npos) return {name, {}};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

// Whether a member is in WebDataset's metadata, which its grouping skips: a name whose first
// path component (or the whole name) begins and ends with "__", such as "__meta__/info.json".
inline bool is_webdataset_meta(std::string_view name) noexcept {
  std::string_view first = name.substr(0, name.find('/'));
  return first.size() >= 4 && first.starts_with("__") && first.ends_with("__");
}

// Data of `size` bytes (a member's, or an extended header's) and its padding must fit in
// what remains of a file of known size: else the archive is truncated, which is said at the
// header, naming the key of the member `name` (none for an extended header), before anything is
// read or allocated.
inline void check_tar_data_fits(const reader& in, std::uint64_t header, std::uint64_t size,
                                std::string_view what, std::string_view name) {
  if (auto left = in.remaining(); left && (size > *left || tar_padding(size) > *left - size))
    throw_format_error(in.name(), header, tar_key_and_extension(name).first,
                       {decimal(size + tar_padding(size)), " bytes of ", what, " (", decimal(size),
                        ") and its padding to a whole block"},
                       {"only ", decimal(*left), " bytes left (the archive is truncated)"});
}

inline bool all_zeros(const char* bytes, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (bytes[i] != 0) return false;
  return true;
}

// Reads the next member's headers, leaving `in` at its data; false at the end of the archive: a
// zero block, or the end of input at the start or, when `unended` (reading a member at an
// offset, or files known to lack them), on a block boundary. Every writer ends an archive with
// zero blocks, so a file that ends without one was cut, perhaps at a member boundary.
inline bool read_tar_member(reader& in, tar_member& m, std::string& scratch, bool unended = false) {
  m = {};
  m.header_offset = in.tell();
  std::optional<std::string> long_name;
  std::optional<std::uint64_t> pax_size;
  for (;;) {
    std::uint64_t at = in.tell();
    if (!in.ensure(tar_block)) {
      if (in.window().empty() && (at == 0 || unended)) return false;
      if (in.window().empty())
        bad_tar(in, at, {"a tar header, or the zero blocks that end an archive"},
                {"the end of the file: the archive is truncated (the specifier option unended reads files "
                 "whose writer left out the end blocks)"});
      if (at == 0)
        bad_tar_start(in, {"a 512-byte tar header"}, {decimal(in.window().size()), " bytes in all"});
      bad_tar(in, at, {"a 512-byte tar header"}, {decimal(in.window().size()), " bytes at the end"});
    }
    const char* h = in.window().data();
    if (all_zeros(h, tar_block)) {
      // The end, unless what follows is not zeros: a header zeroed inside the archive, whose
      // members after it would be lost quietly (GNU tar warns of "a lone zero block").
      in.ensure(2 * tar_block);
      std::span<const char> after = in.window().subspan(tar_block);
      if (!all_zeros(after.data(), min_of(after.size(), tar_block)))
        bad_tar(in, at, {"a tar header, or a second zero block ending the archive"},
                {"a lone zero block followed by more data (a header zeroed?)"});
      return false;
    }
    auto checksum = parse_tar_number(h + 148, 8);
    if (!checksum || !tar_checksum_matches(h, *checksum)) {
      if (at == 0)
        bad_tar_start(in, {"a tar header whose checksum matches"}, {"a block that is no tar header"});
      bad_tar(in, at, {"a tar header whose checksum matches"}, {"a block that is no tar header"});
    }
    char type = h[156];
    std::string name(tar_field_text(h, 100));
    if (std::memcmp(h + 257, "ustar", 5) == 0 && h[345] != '\0')
      name = detail::join({tar_field_text(h + 345, 155), "/", name});
    bool extended = type == 'x' || type == 'X' || type == 'g' || type == 'L' || type == 'K';
    auto size = parse_tar_number(h + 124, 12);
    if (!size)  // named by the member's key; an extended header's own name is none
      throw_format_error(in.name(), at + 124,
                         extended ? "" : tar_key_and_extension(long_name.value_or(name)).first,
                         {"a tar size field"}, {quoted_excerpt(tar_field_text(h + 124, 12))});
    in.advance(tar_block);
    if (extended) {
      // Metadata for the next member: read whole (bounded by what remains), then skip its padding.
      check_tar_data_fits(in, at, *size, "a tar extended header", {});
      std::string_view data =
          in.read_view(static_cast<std::size_t>(*size), scratch, "bytes of a tar extended header");
      tar_member meta;
      if (type == 'x' || type == 'X') {
        if (apply_pax(in, at, data, meta)) pax_size = meta.size;
        if (!meta.name.empty()) long_name = meta.name;
      } else if (type == 'g') {
        apply_pax(in, at, data, meta);  // checked; global names and sizes mean nothing here
      } else if (type == 'L') {
        long_name = std::string(data.substr(0, strnlen(data.data(), data.size())));
      }
      in.skip(tar_padding(*size));
      continue;
    }
    m.type = type == '\0' ? '0' : type;
    m.name = long_name ? *long_name : name;
    m.size = pax_size ? *pax_size : *size;
    m.data_offset = in.tell();
    check_tar_data_fits(in, m.header_offset, m.size, "member data", m.name);
    return true;
  }
}

// Runs read(), which reads member m's data; its errors name the member's key. An input of
// unknown size (a pipe) can end inside the data, where check_tar_data_fits could not tell
// ahead: that is said as it says it.
template <class Read>
decltype(auto) reading_tar_data(reader& in, const tar_member& m, Read&& read) {
  try {
    return read();
  } catch (const format_error& error) {
    if (!error.key().empty()) throw;
    std::string_view key = tar_key_and_extension(m.name).first;
    if (in.size_known() || !in.at_end()) throw error.with_key(std::string(key));
    throw_format_error(in.name(), m.header_offset, key,
                       {decimal(m.size + tar_padding(m.size)), " bytes of member data (", decimal(m.size),
                        ") and its padding to a whole block"},
                       {"the end of input inside them (the archive is truncated)"});
  }
}

// The member's data, which `in` is at (a view valid until `in` or `scratch` changes); its
// padding is consumed too, in one step, since skipping it afterwards could refill the window.
inline std::string_view read_tar_data(reader& in, const tar_member& m, std::string& scratch) {
  std::uint64_t padded = m.size + tar_padding(m.size);
  return reading_tar_data(in, m,
                          [&] {
                            return in.read_view(static_cast<std::size_t>(padded), scratch,
                                                "bytes of tar member data");
                          })
      .substr(0, m.size);
}

// Reads the member's data onto the end of `out`, and skips its padding: a member larger than
// the reader's window goes from the input straight there, with no copy in between.
inline void append_tar_data(reader& in, const tar_member& m, std::string& out) {
  std::uint64_t padded = m.size + tar_padding(m.size);
  if (in.window().size() >= padded) {  // appended from the window: resizing first would zero it all
    out.append(in.window().data(), static_cast<std::size_t>(m.size));
    in.advance(static_cast<std::size_t>(padded));
    return;
  }
  reading_tar_data(in, m, [&] {
    in.check_available(m.size, 1, "bytes of tar member data");  // before allocating for it
    std::size_t at = out.size();
    out.resize(at + static_cast<std::size_t>(m.size));
    in.read_exact(out.data() + at, static_cast<std::size_t>(m.size), "bytes of tar member data");
    in.skip(tar_padding(m.size));
  });
}

// Skips the member's data and its padding.
inline void skip_tar_data(reader& in, const tar_member& m) {
  reading_tar_data(in, m, [&] { in.skip(m.size + tar_padding(m.size)); });
}

// Whether a key, as a path, stays inside the folder an archive is extracted to: no leading
// '/' and no ".." component. Extracting refuses other names, and a program that makes paths
// of keys must not get them unchecked.
inline bool tar_key_stays_inside(std::string_view key) {
  bool parent = key == ".." || key.starts_with("../") || key.ends_with("/..") ||
                key.find("/../") != std::string_view::npos;
  return !key.empty() && key.front() != '/' && !parent;
}

// Writes a numeric header field: octal digits and a NUL, or base-256 when they do not fit.
inline void put_tar_number(char* field, std::size_t n, std::uint64_t v) {
  if (n == 12 && v > tar_octal_limit) {
    std::memset(field, 0, n);
    field[0] = static_cast<char>(0x80);
    for (std::size_t i = n - 1; i > 0 && v != 0; --i, v >>= 8) field[i] = static_cast<char>(v & 0xff);
    return;
  }
  std::snprintf(field, n, "%0*llo", static_cast<int>(n - 1), static_cast<unsigned long long>(v));
}

// Appends a header block for a regular file (or a pax header, type 'x') to out.
inline void put_tar_header(writer& out, std::string_view name, std::uint64_t size, char type) {
  char h[tar_block] = {};
  std::memcpy(h, name.data(), name.size() < 100 ? name.size() : 100);
  put_tar_number(h + 100, 8, 0644);
  put_tar_number(h + 108, 8, 0);
  put_tar_number(h + 116, 8, 0);
  put_tar_number(h + 124, 12, size);
  put_tar_number(h + 136, 12, 0);
  h[156] = type;
  std::memcpy(h + 257,
              "ustar\0"
              "00",
              8);
  put_tar_number(h + 329, 8, 0);
  put_tar_number(h + 337, 8, 0);
  std::uint32_t sum = 0;
  std::memset(h + 148, ' ', 8);
  for (char c : h) sum += static_cast<unsigned char>(c);
  std::snprintf(h + 148, 8, "%06o", sum);  // six digits, a NUL, and the space left in place
  out.write(h, tar_block);
}

inline void put_tar_padding(writer& out, std::uint64_t size) {
  static constexpr char zeros[tar_block] = {};
  out.write(zeros, static_cast<std::size_t>(tar_padding(size)));
}

// A pax record "LENGTH key=value\n", whose length counts its own digits.
inline void append_pax_record(std::string& out, std::string_view key, std::string_view value) {
  std::size_t rest = key.size() + value.size() + 3;  // ' ', '=', '\n'
  std::size_t length = rest + 1;
  while (std::string_view(decimal(length)).size() + rest != length) ++length;
  out += decimal(length);
  out += ' ';
  out += key;
  out += '=';
  out += value;
  out += '\n';
}

}  // namespace detail

namespace detail {
// Why a script cannot point at the entries of members of this extension; empty when it can.
inline std::string_view tar_script_refusal(std::string_view extension) noexcept {
  if (extension != webdataset_sample::tar_extension) return {};
  return "a script line points at one tar member, and a sample (ext=*) has several: samples are found by "
         "key through their shard index (tablio index-shards; random access to \"index:NAME\" in Python)";
}
}  // namespace detail

// How a tar_output names its members, and when, under a numbered name, it starts the next shard.
struct tar_output_options {
  std::string extension;                      // EXT of the members KEY.EXT (the holder's, if empty)
  std::uint64_t max_count = 0, max_size = 0;  // a numbered name's shards (0: WebDataset's defaults)
};

// Writes tar archives (see tablio/framing/tar.hpp): the output side of tar_framing, a Framing of record
// entries, each put as a member KEY.EXT (a sample as a member per extension), across numbered shards when the
// name is numbered.
class tar_output {
 public:
  // Writes one archive to a stream (no shards).
  explicit tar_output(writer out, tar_output_options options = {}) : options_(std::move(options)) {
    if (options_.max_count != 0 || options_.max_size != 0)
      throw_usage_error({"'", out.name(), "': shards need a numbered name, such as shard-%06d.tar"});
    names_.push_back(out.name());
    out_.emplace(std::move(out));
  }
  // Writes the file `name`, or, under a numbered name ("shard-%06d.tar"), its shards from 0 on.
  // Shard limits without a numbered name are a usage_error.
  explicit tar_output(std::string_view name, tar_output_options options = {}, const open_options& open = {})
      : options_(std::move(options)), open_(open), numbered_(parse_numbered_name(name)), pattern_(name) {
    if (numbered_) {
      if (options_.max_count == 0) options_.max_count = 100000;
      if (options_.max_size == 0) options_.max_size = 3000000000;
    } else if (options_.max_count != 0 || options_.max_size != 0) {
      throw_usage_error({"'", name, "': shards need a numbered name, such as shard-%06d.tar"});
    }
    open_file(numbered_ ? (*numbered_)(0) : std::string(name));
  }

  // The Framing concept: the holder's extension, for members when the options named none.
  void set_default_extension(std::string_view extension) {
    if (options_.extension.empty()) options_.extension = extension;
  }

  // The Framing concept: writes the record as member KEY.EXT, starting the next shard first
  // when this one is full. A key that would not read back as itself is a key_error; a sample
  // that would not read back as written (no member, one skipped as metadata, an extension not
  // in lowercase, the key of the sample just before), or a put() after close(), a usage_error.
  void put(std::string_view key, std::string_view bytes) {
    if (!out_) throw_usage_error({"tar_output::put after close"});
    check_key(key);
    bool sample = extension() == webdataset_sample::tar_extension;
    if (sample) check_sample(key, bytes);  // before a new file is begun for it
    if (numbered_ && shard_.samples != 0 &&
        (shard_.samples >= options_.max_count || out_->tell() >= options_.max_size)) {
      end_file();
      open_file((*numbered_)(names_.size()));
    }
    at_ = {static_cast<std::uint32_t>(names_.size() - 1), out_->tell()};
    if (sample) {
      if (shard_.samples != 0 && shard_.last_key == key)
        throw_usage_error({"two samples in a row of key '", key,
                           "': they would read back as one (write a sample's members in one entry)"});
      for_each_sample_member(
          bytes, out_->name(), out_->tell(),
          [&](std::string_view ext, std::string_view data) { put_member(key, ext, data); });
    } else {
      put_member(key, extension(), bytes);
    }
    shard_.add(key);
  }

  // Why a script cannot point at its entries (samples: a line points at one member); empty
  // when it can.
  std::string_view script_refusal() const noexcept { return detail::tar_script_refusal(extension()); }
  // The first header of the member put last: what a script line points at.
  location entry_location() const noexcept { return at_; }
  // The Framing concept: the name of file number `file` (the shards in order), as script lines
  // give it.
  const std::string& file_name(std::uint32_t file) const { return names_.at(file); }
  // The Framing concept: pushes what the current file holds so far to the OS.
  void flush() {
    if (out_) out_->flush();
  }
  // The Framing concept: ends the current file with zero blocks and closes it; under a
  // numbered name, then writes the shards' index beside them. A second close() does nothing.
  void close() {
    if (!out_) return;
    end_file();
    if (numbered_)
      write_shard_index(pattern_, {{}, "tar", std::string(extension()), std::move(written_), {}}, open_);
  }

 private:
  void put_member(std::string_view key, std::string_view ext, std::string_view bytes) {
    std::string name(key);
    name += '.';
    name += ext;
    if (name.size() > 100 || bytes.size() > detail::tar_octal_limit) {
      std::string records;
      if (name.size() > 100) detail::append_pax_record(records, "path", name);
      if (bytes.size() > detail::tar_octal_limit)
        detail::append_pax_record(records, "size", decimal(bytes.size()));
      detail::put_tar_header(*out_, "././@PaxHeader", records.size(), 'x');
      out_->write(records);
      detail::put_tar_padding(*out_, records.size());
    }
    detail::put_tar_header(*out_, name, bytes.size(), '0');
    out_->write(bytes);
    detail::put_tar_padding(*out_, bytes.size());
  }
  // What reads back as another sample than was written is refused: no member, a member that
  // WebDataset's grouping skips as metadata, or an extension that reads back lowercased. (So
  // is the key of the sample just before, whose members would read back as one sample.)
  void check_sample(std::string_view key, std::string_view record) const {
    if (record.empty())
      throw_usage_error({"the sample of key '", key, "' has no member: a sample needs one"});
    for_each_sample_member(record, out_->name(), out_->tell(), [&](std::string_view ext, std::string_view) {
      std::string name(key), lowered;
      name += '.';
      name += ext;
      if (detail::is_webdataset_meta(name))
        throw_usage_error({"the member '", name, "' would be skipped as WebDataset's metadata ('__NAME__')"});
      if (webdataset_extension(ext, lowered) != ext)
        throw_usage_error({"the member '", name, "' would read back as extension '", lowered,
                           "' (samples' extensions are read lowercased, as WebDataset groups them)"});
    });
  }
  // Keys become member names that read back as the same key: no '.' in the last path
  // component, and no absolute or parent paths, which extracting (and reading) would refuse.
  static void check_key(std::string_view key) {
    std::string_view last = key.substr(key.rfind('/') == std::string_view::npos ? 0 : key.rfind('/') + 1);
    if (last.empty() || last.find('.') != std::string_view::npos || !detail::tar_key_stays_inside(key))
      throw_key_error({"key ", quoted_key(key),
                       " cannot name a tar member: no '.' in its last component, no leading '/' or '..'"});
  }
  std::string_view extension() const {
    return options_.extension.empty() ? std::string_view("bin") : std::string_view(options_.extension);
  }
  void open_file(std::string name) {
    out_.emplace(open_output(name, open_));
    names_.push_back(std::move(name));
    shard_ = {};
  }
  // Two zero blocks, then zeros to a whole record, as GNU tar ends an archive.
  void end_file() {
    static constexpr char zeros[detail::tar_record] = {};
    out_->write(zeros, 2 * detail::tar_block);
    out_->write(zeros, static_cast<std::size_t>((detail::tar_record - out_->tell() % detail::tar_record) %
                                                detail::tar_record));
    auto out = std::move(out_);
    out_.reset();
    std::uint64_t size = out->tell();
    out->close();
    shard_.url = shard_index_url(shard_index_folder(pattern_), names_.back());
    shard_.bytes = size;
    written_.push_back(std::move(shard_));
  }

  tar_output_options options_;
  open_options open_;
  std::optional<numbered_name> numbered_;
  std::string pattern_;
  std::optional<writer> out_;
  std::vector<std::string> names_;
  shard_index_entry shard_;                 // the file being written, as its index lists it
  std::vector<shard_index_entry> written_;  // the files complete
  location at_;
};

// Which members a tar_input hands out as entries, and which of those (a shard of them).
struct tar_input_options {
  std::string extension;  // only members KEY.EXT are entries (the holder's, if empty)
  std::uint64_t shard_index = 0, shard_count = 1;  // entries I, I+N, I+2N... of all files
  bool unsafe_keys = false;  // give keys with a leading '/' or a ".." component too: the caller checks them
  bool unended = false;      // files may end without their end blocks (their writer left them out)
};

namespace detail {

// A tar file as it is, or inflated when it is gzip-compressed (.tar.gz, .tgz: WebDataset reads
// such shards), known by its magic bytes: a tar file starts with a member's name, never 1f 8b.
// Without zlib it is left as it is, for the reader to say what it is.
inline reader inflated_tar_input(reader in, bool* compressed = nullptr) {
#if defined(TABLIO_WITH_ZLIB)
  in.ensure(2);
  const bool gzip = detect_compression(in.window()) == compression::gzip;
  if (compressed) *compressed = gzip;
  if (!gzip) return in;
  std::string name = in.name();
  limits lim = in.limits();
  return reader(zlib_source(std::move(in)), name, lim);
#else
  (void)compressed;
  return in;
#endif
}

}  // namespace detail

// Reads tar archives (see tablio/framing/tar.hpp): the input side of tar_framing, a Framing of record entries
// (members KEY.EXT, or samples), read in order across one file or many, and again at a member's
// location in a plain, uncompressed file.
class tar_input {
 public:
  static constexpr unsigned forms = entry_forms(entry_form::record);

  // Reads one archive from a stream (read_at() needs files).
  explicit tar_input(reader in, tar_input_options options = {})
      : name_(in.name()), options_(std::move(options)), files_({in.name()}, open_, 1) {
    detail::check_shard(options_.shard_index, options_.shard_count);
    in_.emplace(detail::inflated_tar_input(std::move(in)));
  }
  // `names`: a file, a comma-separated list, a glob, "name@N" or a numbered name.
  explicit tar_input(std::string_view names, tar_input_options options = {}, const open_options& open = {})
      : name_(names),
        options_(std::move(options)),
        open_(open),
        files_(expand_shard_list(names, open), open) {
    detail::check_shard(options_.shard_index, options_.shard_count);
  }

  // The longest key read (the open options' limits::max_token_bytes).
  std::size_t max_key_bytes() const noexcept { return open_.parse_limits.max_token_bytes; }
  // The Framing concept: the holder's extension, for entries when the options named none.
  void set_default_extension(std::string_view extension) {
    if (options_.extension.empty()) options_.extension = extension;
  }
  // Samples read in order come as their members (entry::parts), views into the reader's
  // windows kept for them where it can keep them (else a record of copies, as otherwise).
  void give_parts() noexcept { parts_wanted_ = true; }

  // The Framing concept: the next entry of the shard, across the files in order; other members
  // are skipped. A bad header is a format_error, and so is a file with members none of which
  // is an entry (a wrong extension), or an empty file.
  bool next(entry& e) {
    if (deferred_) std::rethrow_exception(std::exchange(deferred_, nullptr));
    for (;;) {
      if (!in_) {
        if (files_.done()) return false;
        bool compressed = false;
        in_.emplace(detail::inflated_tar_input(files_.open_next(), &compressed));
        // A compressed file is read in order only: its members' offsets are not the file's.
        plain_ = !compressed && can_open_at(files_.files()[files_.current()]);
        files_members_ = files_entries_ = 0;
        example_named_ = false;
        pending_ = ended_ = false;
      }
      detail::tar_member& m = member_;
      if (ended_ || (!pending_ && !detail::read_tar_member(*in_, m, scratch_, options_.unended))) {
        if (!ended_ && in_->tell() == 0 && in_->window().empty())  // an empty archive is two zero blocks
          detail::bad_tar(
              *in_, 0, {"a tar archive (an empty one is two zero blocks)"},
              {"an empty file, which GNU tar and Python's tarfile refuse too (a shard not written?)"});
        check_some_entry();
        detail::close_and_reset(in_);
        continue;
      }
      bool an_entry = is_entry(m);
      if (!pending_) note_member(m, an_entry);
      pending_ = false;
      bool wanted = an_entry && ordinal_++ % options_.shard_count == options_.shard_index;
      if (grouping() && an_entry) {
        read_sample(*in_, m, files_.current(), wanted ? &e : nullptr, true);
        if (wanted) return true;
        continue;
      }
      if (!wanted) {
        detail::skip_tar_data(*in_, m);
        continue;
      }
      describe(*in_, m, files_.current(), e);
      return true;
    }
  }

  // Whether the member next() gave last can be read again at its location (a plain file).
  bool seekable() const noexcept { return plain_; }
  // Why a script cannot point at the entries read (samples: a line points at one member); empty
  // when it can.
  std::string_view script_refusal() const noexcept { return detail::tar_script_refusal(options_.extension); }
  // The Framing concept: the entry whose first header is at `at`, read with a second reader so
  // that reading in order goes on undisturbed. No entry there is a format_error.
  bool read_at(const location& at, entry& e) {
    reader& in = lookup_.at(files_.files(), at, open_);
    detail::tar_member m;
    if (!detail::read_tar_member(in, m, scratch_, true) || !is_entry(m))
      detail::bad_tar(in, at.offset, {"a member .", options_.extension}, {"none"});
    if (grouping())
      read_sample(in, m, at.file, &e, false);
    else
      describe(in, m, at.file, e);
    return true;
  }

  // The files read, in order: the names given, expanded (a list, a glob, "name@N"...).
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
  bool grouping() const noexcept { return options_.extension == webdataset_sample::tar_extension; }
  bool is_entry(const detail::tar_member& m) const {
    if (m.type != '0' && m.type != '7') return false;  // regular and contiguous files only
    auto [key, extension] = detail::tar_key_and_extension(m.name);
    if (grouping())  // any member KEY.EXT, as WebDataset groups them (no hidden ".name", no metadata)
      return !extension.empty() && !key.empty() && key.back() != '/' && !detail::is_webdataset_meta(m.name);
    std::string_view wanted = options_.extension.empty() ? std::string_view("bin") : options_.extension;
    return extension == wanted;
  }

  // Reads the headers of the next member that is an entry into m, skipping others; false at the end.
  bool next_entry_member(reader& in, detail::tar_member& m, bool sequential) {
    for (;;) {
      if (!detail::read_tar_member(in, m, scratch_, options_.unended)) return false;
      bool entry = is_entry(m);
      if (sequential) note_member(m, entry);
      if (entry) return true;
      detail::skip_tar_data(in, m);
    }
  }

  // next_entry_member after a member of the sample of `key`. Reading sequentially, the error of
  // a member of another key is the next call's: the sample, whole, is delivered first (and kept
  // under 'p'). A header too bad to tell whose it is may have been the sample's: the sample is
  // not delivered, rather than delivered short of a member, and the error names it.
  bool next_member_of_samples(reader& in, detail::tar_member& m, bool sequential, bool delivering,
                              std::string_view key) {
    try {
      return next_entry_member(in, m, sequential);
    } catch (const format_error& error) {
      if (error.key().empty() && delivering) throw error.with_key(std::string(key));
      if (!sequential || !delivering || error.key() == key) throw;
      deferred_ = std::current_exception();
      return false;
    }
  }

  // Reads the sample that starts with member m (its headers read): m and the members after it
  // with its key, into e's record (or past them, for no e). Reading sequentially, the headers of
  // the member after the sample stay read in m, for next(); at the end, ended_ is set.
  void read_sample(reader& in, detail::tar_member& m, std::uint32_t file, entry* e, bool sequential) {
    auto [first_key, first_extension] = detail::tar_key_and_extension(m.name);
    std::string& key = e ? e->key : skipped_key_;  // m.name changes as members are read
    key = first_key;
    std::string_view extension = webdataset_extension(first_extension, extension_);
    std::uint64_t header = m.header_offset, data_offset = m.data_offset;
    // As parts while every member's data is in a window the reader keeps, one window for all.
    bool as_parts = e && sequential && parts_wanted_;
    tablio::keeper keeper;
    std::uint64_t keeper_window = 0;  // the reader's window_number() for keeper's window
    if (e) {
      check_key(in, m, key);
      data_.clear();
      extensions_.clear();
      parts_.clear();
    }
    for (;;) {
      if (e) {
        // data_ holds the members' record, or (as parts) their extensions only, to check them.
        if (extensions_.repeats(data_, extension))
          throw_format_error(in.name(), m.header_offset, key, {"one member of each extension in a sample"},
                             {quoted_excerpt(m.name), " after another member ", key, ".", extension});
        if (as_parts) {  // a view, when the member's data is in the window the reader keeps
          bool in_window = in.window().size() >= m.size + detail::tar_padding(m.size);
          if (in_window && !keeper) {  // kept once per sample: sharing it costs atomic counts
            keeper = in.keep_window();
            keeper_window = in.window_number();
          }
          if (in_window && keeper && in.window_number() == keeper_window) {
            append_sample_member(data_, extension, {});
            parts_.push_back({{}, detail::read_tar_data(in, m, scratch_)});
          } else {  // a record of copies after all: of the members so far, from the kept window
            as_parts = false;
            part_names_.swap(data_);
            data_.clear();
            for (std::size_t i = 0, at = 0; i < parts_.size(); ++i)
              append_sample_member(data_, detail::sample_member_at(part_names_, at).first, parts_[i].bytes);
          }
        }
        if (!as_parts) {
          append_sample_member_header(data_, extension, m.size);
          detail::append_tar_data(in, m, data_);
        }
      } else {
        detail::skip_tar_data(in, m);
      }
      if (!next_member_of_samples(in, m, sequential, e != nullptr, key)) {
        if (sequential) ended_ = true;
        break;
      }
      auto [next_key, next_extension] = detail::tar_key_and_extension(m.name);
      if (next_key != key) {
        if (sequential) pending_ = true;
        break;
      }
      extension = webdataset_extension(next_extension, extension_);
    }
    if (!e) return;
    e->form = entry_form::record;
    if (as_parts) {
      for (std::size_t i = 0, at = 0; i < parts_.size(); ++i)
        parts_[i].name = detail::sample_member_at(data_, at).first;
      e->parts = parts_;
      e->keeper = std::move(keeper);
      e->bytes = {};
      e->lent = nullptr;
    } else {
      e->parts = {};
      e->keeper.reset();
      e->bytes = data_;
      e->lent = &data_;  // a holder that keeps records whole takes it instead of a copy
    }
    e->where = {file, header};
    e->source = files_.files()[file];
    e->data_offset = data_offset;
    e->key_name = {};
    e->provisional_key = false;
  }

  // A file with members, none of them KEY.EXT, was read with another extension than its
  // members have (a wrong ext=, or another value type): an error, not an empty table.
  // The member such an error shows: one named KEY.EXT (not metadata) if the file has one.
  void note_member(const detail::tar_member& m, bool entry) {
    if (m.type != '0' && m.type != '7') return;
    files_entries_ += entry;
    if (files_members_++ != 0 && (files_entries_ != 0 || example_named_)) return;
    bool named = !detail::tar_key_and_extension(m.name).second.empty() && !detail::is_webdataset_meta(m.name);
    if (files_members_ == 1 || named) {
      first_member_ = m.name;
      example_named_ = named;
    }
  }
  void check_some_entry() {
    if (files_members_ == 0 || files_entries_ != 0) return;
    std::string_view wanted = options_.extension.empty() ? std::string_view("bin") : options_.extension;
    if (grouping())
      detail::bad_tar(
          *in_, 0, {"members named KEY.EXT, grouped as samples"},
          {"none among its ", decimal(files_members_), " files, such as ", quoted_excerpt(first_member_),
           " (names with no extension, hidden ones and metadata __NAME__/ are skipped)"});
    detail::bad_tar(
        *in_, 0,
        {"members named KEY.", wanted,
         " (ext=EXT reads members of another extension; ext=*, or the sample type, WebDataset's "
         "samples)"},
        {"none among its ", decimal(files_members_), " files, such as ", quoted_excerpt(first_member_)});
  }

  void check_key(const reader& in, const detail::tar_member& m, std::string_view key) const {
    if (!kaldi_io::is_token(key))
      detail::bad_tar(in, m.header_offset, {"a member name whose key has no whitespace or unprintable bytes"},
                      {quoted_excerpt(m.name)});
    if (!options_.unsafe_keys && !detail::tar_key_stays_inside(key))
      detail::bad_tar(in, m.header_offset,
                      {"a member name inside the archive's folder, with no leading '/' or '..' (the option "
                       "unsafekeys gives such keys to a caller that checks them)"},
                      {quoted_excerpt(m.name)});
  }

  // The member's data as the entry's record; its key must be a table key.
  void describe(reader& in, const detail::tar_member& m, std::uint32_t file, entry& e) {
    std::string_view key = detail::tar_key_and_extension(m.name).first;
    check_key(in, m, key);
    e.key = key;
    e.form = entry_form::record;
    e.bytes = detail::read_tar_data(in, m, data_);
    e.lent = nullptr;
    if (e.bytes.data() == data_.data()) {  // copied already (larger than the window): the holder may take it
      data_.resize(e.bytes.size());
      e.lent = &data_;
    }
    e.where = {file, m.header_offset};
    e.source = files_.files()[file];
    e.data_offset = m.data_offset;
    e.key_name = {};
    e.provisional_key = false;
  }

  std::string name_;
  tar_input_options options_;
  open_options open_;
  file_sequence files_;
  std::optional<reader> in_;
  bool plain_ = false;
  std::uint64_t files_members_ = 0, files_entries_ = 0;  // of the file being read
  std::string first_member_;
  bool example_named_ = false;  // first_member_ is named KEY.EXT
  std::uint64_t ordinal_ = 0;
  detail::tar_member member_;               // the member next() reads
  bool pending_ = false, ended_ = false;    // samples: member_ is the next sample's first; the file ended
  std::string skipped_key_;                 // of a sample read past
  std::string extension_;                   // a member's extension lowercased
  detail::repeated_extensions extensions_;  // of the sample being read
  bool parts_wanted_ = false;
  std::vector<entry_part> parts_;  // the sample's members, when given as parts
  std::string part_names_;         // their extensions, when they turn into a record after all
  std::exception_ptr deferred_;    // the error after the sample next() gave last
  detail::lookup_reader lookup_;
  std::string scratch_, data_;
};

// Tar archives (WebDataset's shards) as a framing family.
struct tar_framing {
  using output = tar_output;
  using input = tar_input;
};

TABLIO_END_NAMESPACE
