// IDX files (MNIST's format): a 4-byte magic 00 00 TYPE NDIMS, NDIMS big-endian uint32
// dimensions, then the values, big-endian, in C order. Dimension 0 counts the items; item i
// starts at header + i * item_bytes, so access to any item is arithmetic.
//
// idx_file reads a whole file: mapped into memory when it is a plain file, inflated into
// memory when it is GZIP-compressed (with the tablio::zlib component), or read from a pipe.
// Every header field is checked (the two zero bytes, the type, the dimensions, products that
// overflow, the size of the file) before anything is allocated. idx_writer writes one, and
// patches the item count in the header at close when it was not given up front.
//
// As a framing (idx_framing), item i is an array entry with key "%08d" of i: idx_input reads
// them in order (or every shard_count-th) and by key; idx_output appends them, each of the
// first one's type and shape, keyed in order.
#pragma once

#include <tablio/core/endian.hpp>
#include <tablio/core/error.hpp>
#include <tablio/core/minmax.hpp>
#include <tablio/framing/concepts.hpp>
#include <tablio/stream/compression.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/stream/memory.hpp>
#include <tablio/stream/mmap.hpp>
#include <tablio/stream/reader.hpp>
#include <tablio/stream/writer.hpp>
#if defined(TABLIO_WITH_ZLIB)
#include <tablio/stream/zlib.hpp>
#endif

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// The IDX value types, by their code in byte 2 of the magic number.
enum class idx_type : std::uint8_t { u8 = 0x08, i8 = 0x09, i16 = 0x0B, i32 = 0x0C, f32 = 0x0D, f64 = 0x0E };

// Whether byte 2 of a magic number is one of the six IDX type codes.
inline bool is_idx_type(std::uint8_t code) noexcept {
  return code == 0x08 || code == 0x09 || (code >= 0x0B && code <= 0x0E);
}
// Bytes of one value of type t.
inline std::size_t idx_type_size(idx_type t) noexcept {
  switch (t) {
    case idx_type::u8:
    case idx_type::i8:
      return 1;
    case idx_type::i16:
      return 2;
    case idx_type::i32:
    case idx_type::f32:
      return 4;
    case idx_type::f64:
      return 8;
  }
  return 0;
}
// The type's short name ("u8", "i32", "f64"...), as messages and listings give it.
inline const char* idx_type_name(idx_type t) noexcept {
  switch (t) {
    case idx_type::u8:
      return "u8";
    case idx_type::i8:
      return "i8";
    case idx_type::i16:
      return "i16";
    case idx_type::i32:
      return "i32";
    case idx_type::f32:
      return "f32";
    case idx_type::f64:
      return "f64";
  }
  return "?";
}

// The element type of array entries that hold values of IDX type t.
inline element_type element_type_of(idx_type t) noexcept {
  switch (t) {
    case idx_type::u8:
      return element_type::u8;
    case idx_type::i8:
      return element_type::i8;
    case idx_type::i16:
      return element_type::i16;
    case idx_type::i32:
      return element_type::i32;
    case idx_type::f32:
      return element_type::f32;
    case idx_type::f64:
      break;
  }
  return element_type::f64;
}
// The IDX type that stores elements of type t.
constexpr idx_type idx_type_of(element_type t) noexcept {
  constexpr idx_type types[] = {idx_type::u8,  idx_type::i8,  idx_type::i16,
                                idx_type::i32, idx_type::f32, idx_type::f64};
  return types[static_cast<int>(t)];
}

// The IDX type that stores T (uint8_t, int8_t, int16_t, int32_t, float, double).
template <class T>
constexpr idx_type idx_type_of() {
  return idx_type_of(element_type_of<T>());
}

// An IDX file's header: the value type and the dimensions, of which the first counts the items.
struct idx_header {
  idx_type type = idx_type::u8;
  std::vector<std::uint32_t> dims;  // dims[0] counts the items
  // Under recover_unfinished, the count a header gave that the data fell short of (a file cut
  // after it was written whole, not one whose writer was killed before patching its 0); else 0.
  std::uint32_t claimed_items = 0;

  // Bytes of the header in the file: the magic number and 4 per dimension.
  std::size_t size_bytes() const noexcept { return 4 + 4 * dims.size(); }
  // The number of items: dims[0], or 0 for a header of no dimensions.
  std::uint64_t items() const noexcept { return dims.empty() ? 0 : dims[0]; }
  // Values per item: the product of the other dimensions (checked not to overflow on parsing).
  std::uint64_t item_values() const noexcept {
    std::uint64_t n = 1;
    for (std::size_t i = 1; i < dims.size(); ++i) n *= dims[i];
    return n;
  }
  // Bytes of one item in the file.
  std::uint64_t item_bytes() const noexcept { return item_values() * idx_type_size(type); }
  // Bytes of every item: what follows the header in a whole file.
  std::uint64_t data_bytes() const noexcept { return items() * item_bytes(); }
  // The shape of one item: the dimensions after the first (a view into dims).
  std::span<const std::uint32_t> item_dims() const noexcept {
    return dims.empty() ? std::span<const std::uint32_t>() : std::span(dims).subspan(1);
  }
  // The magic number, as its four bytes read big-endian: type code << 8 | number of dimensions.
  std::uint32_t magic() const noexcept {
    return (static_cast<std::uint32_t>(type) << 8) | static_cast<std::uint32_t>(dims.size());
  }
  bool operator==(const idx_header&) const = default;  // the same type, dimensions and claimed_items
};

// How idx_file (and parse_idx_header) take a file that is not exactly as a writer finishes one.
struct idx_read_options {
  // Caffe ignores bytes after the data; strict readers (and tablio by default) refuse them.
  bool allow_trailing_bytes = false;
  // Reads what an interrupted writer left: a count of 0 (not yet patched) or one larger than
  // the data becomes the number of whole items present, and a partial last item is ignored.
  bool recover_unfinished = false;
};

namespace detail {
// The item count an unfinished file supports: its whole items, capped by a non-zero count.
inline void recover_idx_count(idx_header& h, std::uint64_t data_bytes_present) {
  std::uint64_t item = h.item_bytes();
  if (item == 0) return;
  std::uint64_t whole = data_bytes_present / item;
  if (h.dims[0] > whole) h.claimed_items = h.dims[0];
  if (h.dims[0] == 0 || h.dims[0] > whole)
    h.dims[0] = static_cast<std::uint32_t>(detail::min_of<std::uint64_t>(whole, UINT32_MAX));
}
}  // namespace detail

// Parses and checks a header from its first bytes; `file_bytes` (the whole file's size) is
// checked against it when known.
inline idx_header parse_idx_header(std::span<const char> bytes, const std::string& name,
                                   std::optional<std::uint64_t> file_bytes,
                                   const idx_read_options& options = {}) {
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
  auto fail = [&](std::uint64_t offset, message expected, message found) {
    throw_format_error(name, offset, {}, expected, found);
  };
  if (bytes.size() < 4) fail(0, {"a 4-byte IDX magic number"}, {decimal(bytes.size()), " bytes"});
  if (byte(0) != 0 || byte(1) != 0) {
    if (detect_compression(bytes) == compression::gzip)
      fail(0, {"an IDX file (magic 00 00 TT DD)"},
           {"gzip data: decompress it first, or read it with tablio::zlib"});
    char found[32];
    std::snprintf(found, sizeof found, "bytes %02x %02x", byte(0), byte(1));
    fail(0, {"00 00, the start of an IDX magic number"}, {found});
  }
  if (!is_idx_type(byte(2))) {
    char found[32];
    std::snprintf(found, sizeof found, "type code 0x%02x", byte(2));
    fail(2, {"an IDX type code (08, 09, 0B, 0C, 0D, 0E)"}, {found});
  }
  idx_header h;
  h.type = static_cast<idx_type>(byte(2));
  std::size_t ndims = byte(3);
  if (ndims == 0) fail(3, {"at least one dimension"}, {"0 dimensions"});
  if (bytes.size() < 4 + 4 * ndims)
    fail(bytes.size(), {decimal(4 + 4 * ndims), " header bytes for ", decimal(ndims), " dimensions"},
         {decimal(bytes.size()), " bytes"});
  h.dims.resize(ndims);
  // a * b, unless it would not fit in 64 bits.
  auto fits_product = [](std::uint64_t a, std::uint64_t b) { return b == 0 || a <= UINT64_MAX / b; };
  std::uint64_t values = 1;
  for (std::size_t i = 0; i < ndims; ++i) {
    h.dims[i] = load<std::endian::big, std::uint32_t>(bytes.data() + 4 + 4 * i);
    if (!fits_product(values, h.dims[i]))
      fail(4 + 4 * i, {"dimensions whose product fits in 64 bits"}, {"a product of 2^64 or more"});
    values *= h.dims[i];
  }
  if (!fits_product(values, idx_type_size(h.type)))
    fail(4, {"a data size that fits in 64 bits"}, {"2^64 bytes or more"});
  std::uint64_t data = values * idx_type_size(h.type);
  // Items of no values would be billions of entries read from a 12-byte file.
  if (h.items() != 0 && h.item_values() == 0)
    fail(8, {"items that hold values (no dimension after the first is 0)"},
         {decimal(h.items()), " items of 0 values"});
  if (file_bytes) {
    std::uint64_t have = *file_bytes - h.size_bytes();
    if (options.recover_unfinished) {
      detail::recover_idx_count(h, have);
      data = h.data_bytes();
    }
    std::uint64_t need = data;
    if (have < need)
      fail(*file_bytes, {decimal(need), " data bytes"}, {"only ", decimal(have), " (the file is truncated)"});
    if (have > need && !options.allow_trailing_bytes && !options.recover_unfinished)
      fail(h.size_bytes() + need, {"the end of the file after ", decimal(need), " data bytes"},
           {decimal(have - need), " more bytes"});
  }
  return h;
}

// Converts n values of type `stored` (big-endian, at src, which is at `offset` in the file
// `name`) to T; one that T does not hold is a format_error.
template <class T>
void convert_idx_values(idx_type stored, const char* src, std::size_t n, T* out, std::string_view name,
                        std::uint64_t offset) {
  if constexpr (sizeof(T) == 1 && std::is_unsigned_v<T>) {
    if (stored == idx_type::u8) {  // images: a plain copy, without the type dispatch
      std::memcpy(out, src, n);
      return;
    }
  }
  convert_elements_checked(array_view{element_type_of(stored), {}, src, std::endian::big}, out, n, name,
                           offset);
}

// An IDX file read whole and checked at open (see tablio/framing/idx.hpp), whose items are then read by index
// at no more cost than a copy or a conversion. Opening throws format_error for a bad or cut file.
class idx_file {
 public:
  // Opens an IDX file (any rxfilename; GZIP is inflated when the zlib component is linked).
  explicit idx_file(const std::string& name, const idx_read_options& options = {},
                    const open_options& open = {})
      : name_(name) {
    if (classify_rxfilename(name) == input_kind::file) {
      mmap_source mapped(
          detail::file_descriptor(detail::open_local_file(name, detail::os::file_use::read, governed(open),
                                                          "cannot open for reading"),
                                  name, true),
          access_pattern::random);
      std::span<const char> all = mapped.contiguous();
      if (detect_compression(all) != compression::gzip) {
        mapped_.emplace(std::move(mapped));
        bytes_ = mapped_->contiguous();
        header_ = parse_idx_header(bytes_, name_, bytes_.size(), options);
        cache_sizes();
        return;
      }
    }
    reader in = open_input(name, open);
    in.ensure(2);
    if (detect_compression(in.window()) == compression::gzip) {
#if defined(TABLIO_WITH_ZLIB)
      limits lim = in.limits();
      in = reader(zlib_source(std::move(in)), name, lim);
#else
      throw_format_error(name, 0, {}, {"an IDX file"},
                         {"gzip data: decompress it first, or link the tablio::zlib component to read it"});
#endif
    }
    read_all(in, options);
  }

  // Reads an IDX file from a stream (a pipe, a decompressor) into memory.
  explicit idx_file(reader in, const idx_read_options& options = {}) : name_(in.name()) {
    read_all(in, options);
  }

  // Reads an IDX file held in memory (which must outlive this object).
  idx_file(std::span<const char> bytes, std::string name, const idx_read_options& options = {})
      : name_(std::move(name)), bytes_(bytes) {
    header_ = parse_idx_header(bytes_, name_, bytes_.size(), options);
    cache_sizes();
  }

  // The checked header; under recover_unfinished, with the count of the items present.
  const idx_header& header() const noexcept { return header_; }
  // The file's name, as errors give it.
  const std::string& name() const noexcept { return name_; }
  // The number of items.
  std::uint64_t size() const noexcept { return header_.items(); }

  // Item i's stored bytes (big-endian values).
  std::span<const char> item_bytes(std::uint64_t i) const {
    check_index(i);
    return {bytes_.data() + header_bytes_ + static_cast<std::size_t>(i) * item_bytes_, item_bytes_};
  }
  // Item i's values converted to T; out must hold header().item_values() values.
  template <class T>
  void read_item(std::uint64_t i, std::span<T> out) const {
    if (out.size() < item_values_) [[unlikely]]
      throw_usage_error({"idx_file::read_item: room for ", decimal(out.size()), " values, item has ",
                         decimal(item_values_)});
    check_index(i);
    std::size_t at = header_bytes_ + static_cast<std::size_t>(i) * item_bytes_;
    convert_idx_values(header_.type, bytes_.data() + at, item_values_, out.data(), name_, at);
  }
  // Item i's values converted to T, in a new vector. An index past the end is a usage_error,
  // and a value that T does not hold a format_error.
  template <class T>
  std::vector<T> item(std::uint64_t i) const {
    std::vector<T> v(static_cast<std::size_t>(header_.item_values()));
    read_item<T>(i, v);
    return v;
  }
  // Every value of the file, converted to T.
  template <class T>
  std::vector<T> values() const {
    std::vector<T> v(static_cast<std::size_t>(header_.items() * header_.item_values()));
    convert_idx_values(header_.type, bytes_.data() + header_.size_bytes(), v.size(), v.data(), name_,
                       header_.size_bytes());
    return v;
  }

 private:
  void check_index(std::uint64_t i) const {
    if (i >= header_.items()) [[unlikely]]
      throw_usage_error({"item ", decimal(i), " of '", name_, "', which has ", decimal(size())});
  }

  // A stream of unknown length: read the header, then exactly the data it announces (the
  // allocation bounded by the bytes that actually arrive).
  void read_all(reader& in, const idx_read_options& options) {
    char head[4 + 4 * 255];
    std::size_t got = in.read_some(head, 4);
    if (got == 4 && head[0] == 0 && head[1] == 0)
      got += in.read_some(head + 4, 4 * static_cast<unsigned char>(head[3]));
    // When the stream knows its size (memory, a decompressed file does not), a header whose
    // data is not there fails here, before anything is allocated.
    std::optional<std::uint64_t> file_bytes;
    if (auto left = in.remaining()) file_bytes = got + *left;
    header_ = parse_idx_header({head, got}, name_, file_bytes, options);
    owned_.assign(head, head + got);
    std::uint64_t need = header_.data_bytes();
    if (options.recover_unfinished) {
      // The count may be a placeholder: read to the end (bounded by what arrives).
      need = UINT64_MAX;
    }
    bool broke = false;  // under recover_unfinished, compressed data that broke off ended the file
    while (owned_.size() - got < need) {
      // Steps that start small and double with the data read, up to 1 MiB: a short stream
      // costs little, a long one few calls.
      std::uint64_t have = owned_.size() - got;
      std::uint64_t step =
          detail::min_of<std::uint64_t>(detail::max_of<std::uint64_t>(have, 1 << 16), 1 << 20);
      std::size_t chunk = static_cast<std::size_t>(detail::min_of<std::uint64_t>(need - have, step));
      std::size_t at = owned_.size();
      // Room doubles with what arrived, up to the claim: memory follows the data, not the header.
      if (at + chunk > owned_.capacity())
        owned_.reserve(static_cast<std::size_t>(
            detail::grown_capacity(need == UINT64_MAX ? need : got + need, at + chunk)));
      owned_.resize(at + chunk);
      std::size_t n = broke ? 0 : read_data(in, owned_.data() + at, chunk, have, options, broke);
      owned_.resize(at + n);
      if (n == 0 && options.recover_unfinished) {
        detail::recover_idx_count(header_, owned_.size() - got);
        owned_.resize(got + header_.data_bytes());
        if (broke) {  // the stream cannot be read to its end, nor closed as a whole one
          bytes_ = owned_;
          cache_sizes();
          return;
        }
        break;
      }
      if (n == 0)
        throw_format_error(name_, owned_.size(), {}, {decimal(need), " data bytes"},
                           {"only ", decimal(owned_.size() - got), " (the file is truncated)"});
    }
    if (!options.allow_trailing_bytes && !in.at_end())
      throw_format_error(name_, owned_.size(), {},
                         {"the end of the file after ", decimal(need), " data bytes"}, {"more bytes"});
    in.close();
    bytes_ = owned_;
    cache_sizes();
  }

  // Up to n data bytes from a stream whose first `have` data bytes are read. Compressed data
  // that ends or breaks inside the data is, under recover_unfinished, the end of what a killed
  // writer left; else its error names the item it broke in, where only the compressed offset
  // is known.
  std::size_t read_data(reader& in, char* out, std::size_t n, std::uint64_t have,
                        const idx_read_options& options, bool& broke) {
    const std::uint64_t before = in.tell();
    try {
      return in.read_some(out, n);
    } catch (const format_error& e) {
      // What arrived before the break is in `out`, as far as the stream went.
      const auto arrived = static_cast<std::size_t>(in.tell() - before);
      if (options.recover_unfinished) {
        broke = true;
        return arrived;
      }
      if (!e.key().empty() || header_.item_bytes() == 0) throw;
      throw e.with_key(ordinal_key((have + arrived) / header_.item_bytes()));
    }
  }

  // The header's sizes, checked to fit when it was parsed, computed once.
  void cache_sizes() noexcept {
    header_bytes_ = header_.size_bytes();
    item_values_ = static_cast<std::size_t>(header_.item_values());
    item_bytes_ = static_cast<std::size_t>(header_.item_bytes());
  }

  std::string name_;
  std::optional<mmap_source> mapped_;
  std::vector<char> owned_;
  std::span<const char> bytes_;
  idx_header header_;
  std::size_t header_bytes_ = 0, item_values_ = 0, item_bytes_ = 0;
};

// Writes an IDX file item by item. With the item count given up front the output may be a
// pipe; without it, the count is patched into the header at close, which needs a seekable
// file. close() checks that the items written match a count given up front.
class idx_writer {
 public:
  // Writes the header to out at once: items of type and of shape item_dims, and the item
  // count when given (else 0, patched at close). More than 255 dimensions is a usage_error.
  idx_writer(writer out, idx_type type, std::vector<std::uint32_t> item_dims,
             std::optional<std::uint32_t> items = std::nullopt)
      : out_(std::move(out)), items_(items) {
    header_.type = type;
    header_.dims.push_back(items.value_or(0));
    header_.dims.insert(header_.dims.end(), item_dims.begin(), item_dims.end());
    if (header_.dims.size() > 255) throw_usage_error({"IDX files have at most 255 dimensions"});
    char head[4 + 4 * 255] = {0, 0, static_cast<char>(type), static_cast<char>(header_.dims.size())};
    for (std::size_t i = 0; i < header_.dims.size(); ++i)
      store<std::endian::big>(head + 4 + 4 * i, header_.dims[i]);
    out_.write(head, header_.size_bytes());
    values_per_item_ = header_.item_values();
  }
  idx_writer(idx_writer&&) noexcept = default;
  ~idx_writer() {
    if (detail::giving_up(uncaught_)) return;  // the output goes with its writer, given up
    try {
      close();
    } catch (const std::exception& e) {
      report_error(e.what());
    }
  }

  // Appends one item of item_values() values, converted to the file's type (big-endian).
  template <class T>
  void write_item(std::span<const T> values) {
    check_item(values.size());
    std::size_t size = idx_type_size(header_.type);
    scratch_.resize(values.size() * size);
    char* p = scratch_.data();
    auto each = [&]<class S>(S) {
      for (std::size_t i = 0; i < values.size(); ++i) {
        // A value the file's type cannot hold would wrap, or be undefined behaviour (a float
        // out of an integer's range): refused, as reading refuses it.
        bool fits;
        if constexpr (std::is_integral_v<T> && std::is_integral_v<S>)
          fits = std::in_range<S>(values[i]);
        else if constexpr (std::is_floating_point_v<T> && std::is_floating_point_v<S>)
          fits = !is_finite_number(values[i]) || holds_number<S>(values[i]);  // NaN and inf stay NaN and inf
        else
          fits = holds_number<S>(values[i]);
        if (!fits) not_held(i, idx_type_name(header_.type));
        store<std::endian::big>(p + i * sizeof(S), static_cast<S>(values[i]));
      }
    };
    visit_element_type(element_type_of(header_.type), each);
    out_.write(scratch_.data(), scratch_.size());
    ++written_;
  }
  // Appends one item given as values of the file's type in native byte order.
  void write_native_item(const char* values, std::size_t count) {
    check_item(count);
    std::size_t size = idx_type_size(header_.type);
    scratch_.resize(count * size);
    if (size == 1 || std::endian::native == std::endian::big) {
      if (count != 0) std::memcpy(scratch_.data(), values, count * size);
    } else {
      for (std::size_t i = 0; i < count * size; i += size)
        for (std::size_t b = 0; b < size; ++b) scratch_[i + b] = values[i + size - 1 - b];
    }
    out_.write(scratch_.data(), scratch_.size());
    ++written_;
  }
  // Values in one item: the product of item_dims.
  std::uint64_t item_values() const noexcept { return values_per_item_; }
  // Items written so far.
  std::uint64_t written() const noexcept { return written_; }
  // Pushes the items written so far to the OS (the header's count is still patched at close).
  void flush() { out_.flush(); }

  // Patches the item count into the header when it was not given, and closes the output. A
  // count given up front that the items written do not match is a format_error; an output
  // that cannot seek back to patch the count (a pipe) is a usage_error. A second close() does
  // nothing; the destructor closes a writer not given up, reporting (not throwing) what fails.
  void close() {
    if (!out_.is_open()) return;
    if (items_ && *items_ != written_) {
      out_.close();
      throw_format_error(out_.name(), std::nullopt, {}, {decimal(*items_), " items, as the header says"},
                         {decimal(written_), " written"});
    }
    if (!items_) {
      char count[4];
      store<std::endian::big>(count, static_cast<std::uint32_t>(written_));
      try {
        out_.seek(4);
      } catch (const usage_error&) {
        out_.close();
        throw_usage_error({"'", out_.name(), "' cannot seek back to patch the item count: give it up front"});
      }
      out_.write(count, 4);
    }
    out_.close();
  }

 private:
  [[noreturn]] TABLIO_COLD void not_held(std::size_t value, const char* type) const {
    throw_usage_error({"value ", decimal(std::uint64_t(value)), " of item ", decimal(std::uint64_t(written_)),
                       " of '", out_.name(), "' does not fit the file's type, ", type});
  }
  void check_item(std::size_t values) const {
    if (values != values_per_item_)
      throw_usage_error({"an IDX item of '", out_.name(), "' has ", decimal(values_per_item_),
                         " values, not ", decimal(values)});
    if (written_ == UINT32_MAX) throw_usage_error({"IDX files hold at most 2^32-1 items"});
    if (values == 0)
      throw_usage_error({"an IDX item of '", out_.name(), "' holds no values: readers refuse items of none"});
  }

  writer out_;
  std::optional<std::uint32_t> items_;
  idx_header header_;
  std::uint64_t values_per_item_ = 0;
  std::uint64_t written_ = 0;
  std::vector<char> scratch_;
  int uncaught_ = std::uncaught_exceptions();
};

namespace detail {
// The item index a key names ("00000042" is item 42), or nothing.
inline std::optional<std::uint64_t> idx_index_of(std::string_view key) {
  if (key.empty() || key.size() > 19) return std::nullopt;
  std::uint64_t i = 0;
  for (char c : key) {
    if (c < '0' || c > '9') return std::nullopt;
    i = i * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return ordinal_key(i) == key ? std::optional(i) : std::nullopt;
}
}  // namespace detail

// Which items an idx_input reads, and whether it reads what a killed writer left.
struct idx_input_options {
  std::uint64_t shard_index = 0, shard_count = 1;  // items I, I+N, I+2N...
  bool recover_unfinished = false;                 // what a killed writer left (Kaldi's p)
};

// An IDX file as a table. A local file is mapped, and a stream read whole; a remote object
// (not compressed) is read item by item where each item is: in order it streams, and a lookup
// fetches just its item's bytes.
class idx_input {
 public:
  static constexpr unsigned forms = entry_forms(entry_form::array);

  // Opens an IDX file (any rxfilename) and checks its header: a bad one is a format_error, and
  // a shard index not below the shard count a usage_error.
  explicit idx_input(std::string_view name, idx_input_options options = {}, const open_options& open = {})
      : name_(name), next_(options.shard_index), step_(options.shard_count) {
    detail::check_shard(options.shard_index, options.shard_count);
    idx_read_options read{.recover_unfinished = options.recover_unfinished};
    if (can_open_at(name) && is_remote_name(name)) {
      reader in = open_input_at(name, 0, open);
      if (!in.ensure(2) || detect_compression(in.window()) != compression::gzip) {
        open_remote(std::move(in), read);
        return;
      }
    }
    file_.emplace(name_, read, open);
  }

  // The Framing concept: the next item of the shard as an array entry, keyed by its index.
  // Under recover_unfinished, a file cut short of its header's count gives its whole items and
  // then, once, a format_error where they end; false after that.
  bool next(entry& e) {
    if (next_ >= size()) {
      if (header().claimed_items > size() && !cut_said_) {  // said once, where the items end
        cut_said_ = true;
        throw_format_error(name_, header().size_bytes() + size() * header().item_bytes(), ordinal_key(size()),
                           {decimal(header().claimed_items), " items, as the header says"},
                           {decimal(size()), " whole ones (the file is truncated)"});
      }
      return false;
    }
    describe(next_, e);
    next_ += step_;
    return true;
  }
  // The Framing concept: the item a key names ("00000042" is item 42), in any shard. False for
  // a key that names no item of the file; a remote file fetches just the item's bytes.
  bool find(std::string_view key, entry& e) {
    auto i = detail::idx_index_of(key);
    if (!i || *i >= size()) return false;
    if (remote_) {  // a lookup: fetch the item's bytes, no more
      byte_range item{offset_of(*i), item_bytes_};
      remote_->prefetch({&item, 1});
    }
    describe(*i, e);
    return true;
  }
  // Keys about to be found: a remote file's items are fetched at once.
  void prefetch(std::span<const std::string> keys) {
    if (!remote_) return;
    std::vector<byte_range> ranges;
    for (const std::string& key : keys)
      if (auto i = detail::idx_index_of(key); i && *i < size())
        ranges.push_back({offset_of(*i), item_bytes_});
    remote_->prefetch(ranges);
  }
  // The Framing concept: the number of items in the file (all shards).
  std::uint64_t size() const noexcept { return file_ ? file_->size() : header_.items(); }
  // The Framing concept: the name the file was opened by, as errors give it.
  const std::string& name() const noexcept { return name_; }
  // The file's checked header.
  const idx_header& header() const noexcept { return file_ ? file_->header() : header_; }
  // The Framing concept: releases a remote object's stream. A file read whole stays in memory
  // (or mapped) until the idx_input goes.
  void close() { remote_.reset(); }

 private:
  void open_remote(reader in, const idx_read_options& read) {
    in.ensure(4);
    std::size_t ndims = in.window().size() >= 4 ? static_cast<unsigned char>(in.window()[3]) : 0;
    in.ensure(4 + 4 * ndims);
    std::uint64_t total = in.tell() + in.remaining().value_or(0);
    std::span<const char> head = in.window();
    header_ = parse_idx_header(head.subspan(0, std::min<std::size_t>(head.size(), 4 + 4 * ndims)), name_,
                               total, read);
    item_bytes_ = static_cast<std::size_t>(header_.item_bytes());
    item_.resize(item_bytes_);
    remote_.emplace(std::move(in));
  }
  std::uint64_t offset_of(std::uint64_t i) const noexcept { return header_.size_bytes() + i * item_bytes_; }

  void describe(std::uint64_t i, entry& e) {
    std::span<const char> bytes;
    if (file_) {
      bytes = file_->item_bytes(i);
    } else {
      std::uint64_t at = offset_of(i);
      if (remote_->tell() != at) remote_->seek(at);  // in order: the stream goes on
      remote_->read_exact(item_.data(), item_bytes_);
      bytes = {item_.data(), item_bytes_};
    }
    e.key = ordinal_key(i);
    e.form = entry_form::array;
    e.array = {element_type_of(header().type), header().item_dims(), bytes.data(), std::endian::big};
    e.source = name_;
    e.data_offset = header().size_bytes() + i * bytes.size();
  }

  std::string name_;
  std::optional<idx_file> file_;  // a local file, or a stream read whole
  std::optional<reader> remote_;  // a remote object, read item by item
  idx_header header_;             // the remote object's
  std::size_t item_bytes_ = 0;
  std::vector<char> item_;
  std::uint64_t next_, step_;
  bool cut_said_ = false;
};

// Appends items in key order: the n-th entry written must have key "%08d" of n, and every item
// the first one's type and shape.
class idx_output {
 public:
  // Writes the IDX file `name` (a wxfilename). It is opened at the first put(), whose item
  // gives every item's type and shape, or at close() for an empty table.
  explicit idx_output(std::string_view name, const open_options& open = {}) : name_(name), open_(open) {}

  // The Framing concept: appends an item, whose values are taken in native byte order. A key
  // other than the next index ("%08d") is a key_error; an item of another type or shape than
  // the first, or of no values, a usage_error.
  void put(std::string_view key, const array_view& item) {
    keys_.check(key, name_, "IDX items are keyed by their index");
    if (!out_) {
      dims_.assign(item.dims.begin(), item.dims.end());
      out_.emplace(open_output(name_, open_), idx_type_of(item.type), dims_);
    } else if (!same_shape(item) || idx_type_of(item.type) != type_) {
      throw_usage_error({"every item of the IDX file '", name_, "' must have the first item's shape"});
    }
    type_ = idx_type_of(item.type);
    out_->write_native_item(item.data, static_cast<std::size_t>(item.values()));
    ++written_;
  }
  // The Framing concept: pushes the items written so far to the OS.
  void flush() {
    if (out_) out_->flush();
  }
  // The Framing concept: patches the item count and closes the file (idx_writer::close), which
  // must therefore be seekable. An empty table becomes a file of 0 items of type u8.
  void close() {
    // An empty table is an empty file of single bytes: the shape of no item is known.
    if (!out_) out_.emplace(open_output(name_, open_), idx_type::u8, std::vector<std::uint32_t>{});
    out_->close();
  }

 private:
  bool same_shape(const array_view& item) const noexcept {
    if (item.dims.size() != dims_.size()) return false;
    for (std::size_t i = 0; i < dims_.size(); ++i)
      if (item.dims[i] != dims_[i]) return false;
    return true;
  }

  std::string name_;
  open_options open_;
  std::optional<idx_writer> out_;
  std::vector<std::uint32_t> dims_;
  idx_type type_ = idx_type::u8;
  std::uint64_t written_ = 0;
  numbered_keys keys_;
};

// IDX files as a framing family: idx_output writes them, idx_input reads them.
struct idx_framing {
  using output = idx_output;
  using input = idx_input;
};

TABLIO_END_NAMESPACE
