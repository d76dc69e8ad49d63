// The Framing concept: how a table's entries sit in a file or a store. A framing deals in keys
// and bytes and never knows a holder; the table layer joins a holder to any framing
// (table_writer<H, F>, sequential_table_reader<H, F>, random_access_table_reader<H, F>).
//
// Writing: an output framing takes each entry in one of three forms, and close() flushes and
// reports any loss as an exception:
//   object  writer& begin(key) ... end()  the holder writes one self-delimiting object (ark)
//   record  put(key, std::string_view)    the entry's bytes, whole (TFRecord, LMDB, tar)
//   array   put(key, const array_view&)   a typed array of one shape for every entry (IDX)
// Reading: an input framing's next(entry&) fills in the next entry and returns false at the
// end; close() releases it (and reports a failed input command). A simple record framing may
// offer next(std::string& key, std::string_view& bytes) instead.
//
// Optional capabilities, which the tables detect at compile time and use when present:
//   output  form()                   which form it takes, when it models several
//           binary()                 false: objects in text mode
//           key_name()               records keep their key in this bytes feature ("key=NAME")
//           entry_location(), file_name(file)   where the entry just begun or put is, for scripts
//           script_refusal()         why a script cannot point at its entries now (empty: it can)
//           flush()                  push what was written to the OS
//   input   read_at(location, entry&)   read the entry at a location next() reported (positions)
//           seekable()               whether read_at works for the entry next() gave last
//           find(key, entry&), or find(key) -> std::optional<std::string_view>   keyed lookup
//           prepare_lookups()        what find() needs, done when a random-access table opens
//           prefetch(std::span<const std::string> keys)   keys about to be found: fetch what
//                                    they read at once (a script into remote objects)
//           load(entry&)             fills in an entry next() or find() left pending
//           size()                   the number of entries
//           options()                read_options: how a table reads it (Kaldi's s, cs, o, p)
//           static constexpr unsigned forms   the entry_forms() it hands out, so that tables
//                                    compile nothing for the others (by default: all)
//           name()                   what errors call the table
//           give_parts()             next() may give records as parts (entry::parts), for a
//                                    holder that takes them
//   both    set_default_extension(ext)   the holder's natural file extension, given at open
// A framing family groups the two sides: a type with nested `output` and `input` types.
// Tables take a family or a side.
#pragma once

#include <tablio/codec/kaldi_token.hpp>
#include <tablio/core/endian.hpp>
#include <tablio/core/keeper.hpp>
#include <tablio/stream/file.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/stream/reader.hpp>
#include <tablio/stream/writer.hpp>

#include <bit>
#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// The three forms an entry takes between a table and a framing (see tablio/framing/concepts.hpp).
enum class entry_form : std::uint8_t { object, record, array };

// A set of entry forms, as a framing's `forms` member names them.
constexpr unsigned entry_forms(entry_form f) noexcept { return 1u << static_cast<unsigned>(f); }
// Every form: what an input framing without `forms` may hand out.
constexpr unsigned all_entry_forms = 7;

// The numbers a typed array entry holds.
enum class element_type : std::uint8_t { u8, i8, i16, i32, f32, f64 };

// Bytes of one element of type t.
inline constexpr std::size_t element_size(element_type t) noexcept {
  return t == element_type::u8 || t == element_type::i8 ? 1
         : t == element_type::i16                       ? 2
         : t == element_type::f64                       ? 8
                                                        : 4;
}

// An entry that is a typed array: the shape of one entry, and its values in `order`.
struct array_view {
  element_type type = element_type::u8;
  std::span<const std::uint32_t> dims;
  const char* data = nullptr;
  std::endian order = std::endian::native;

  // The number of values in the entry: the product of dims (1 for no dims).
  std::uint64_t values() const noexcept {
    std::uint64_t n = 1;
    for (std::uint32_t d : dims) n *= d;
    return n;
  }
};

// The element type that stores T (uint8_t, int8_t, int16_t, int32_t, float, double).
template <class T>
constexpr element_type element_type_of() {
  if constexpr (std::is_same_v<T, std::uint8_t>)
    return element_type::u8;
  else if constexpr (std::is_same_v<T, std::int8_t>)
    return element_type::i8;
  else if constexpr (std::is_same_v<T, std::int16_t>)
    return element_type::i16;
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return element_type::i32;
  else if constexpr (std::is_same_v<T, float>)
    return element_type::f32;
  else {
    static_assert(std::is_same_v<T, double>, "arrays hold uint8, int8, int16, int32, float or double");
    return element_type::f64;
  }
}
// The C++ types an array entry's elements can be read into or written from.
template <class T>
concept array_element =
    std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::int16_t> ||
    std::is_same_v<T, std::int32_t> || std::is_same_v<T, float> || std::is_same_v<T, double>;

// Calls f(T{}) with the type T that stores elements of type t.
template <class F>
decltype(auto) visit_element_type(element_type t, F&& f) {
  switch (t) {
    case element_type::u8:
      return f(std::uint8_t{});
    case element_type::i8:
      return f(std::int8_t{});
    case element_type::i16:
      return f(std::int16_t{});
    case element_type::i32:
      return f(std::int32_t{});
    case element_type::f32:
      return f(float{});
    case element_type::f64:
      break;
  }
  return f(double{});
}

// Whether the floating-point v is a number other than infinity; spelled out rather than
// std::isfinite because <cmath> would add thousands of lines to every unit that reads a table.
template <class S>
constexpr bool is_finite_number(S v) noexcept {
  return v == v && v != std::numeric_limits<S>::infinity() && v != -std::numeric_limits<S>::infinity();
}

// Whether T holds the number v exactly enough: an integer T holds a whole number in its
// range (no float that is not whole, out of range, infinite or NaN), a float T an integer it
// holds exactly (a float does not hold 2^24 + 1: it would round it) and a float of no greater
// magnitude than its largest (casting any other is undefined behaviour).
template <class T, class S>
constexpr bool holds_number(S v) noexcept {
  if constexpr (std::is_same_v<T, bool>) {
    return v == S(0) || v == S(1);
  } else if constexpr (std::is_floating_point_v<T>) {
    if constexpr (std::is_floating_point_v<S> && sizeof(S) > sizeof(T))
      return !(v > std::numeric_limits<T>::max() || v < std::numeric_limits<T>::lowest());
    else if constexpr (std::is_integral_v<S> &&
                       std::numeric_limits<S>::digits > std::numeric_limits<T>::digits)
      return static_cast<double>(static_cast<T>(v)) == static_cast<double>(v);  // not rounded
    else
      return true;
  } else if constexpr (std::is_floating_point_v<S>) {
    constexpr S top = S(2) * static_cast<S>(std::numeric_limits<T>::max() / 2 + 1);  // 2^digits
    constexpr S bottom = std::is_signed_v<T> ? -top : S(0);
    return v >= bottom && v < top && static_cast<S>(static_cast<T>(v)) == v;
  } else {
    std::int64_t x = v;  // stored integers have at most 32 bits
    if constexpr (std::is_signed_v<T>)
      return x >= std::numeric_limits<T>::min() && x <= std::numeric_limits<T>::max();
    else
      return x >= 0 && static_cast<std::uint64_t>(x) <= std::numeric_limits<T>::max();
  }
}

// Converts the first n values of `a` to T; returns how many it converted before one that T
// does not hold (holds_number), which is left unconverted: n when all were.
template <class T>
std::size_t convert_elements(const array_view& a, T* out, std::size_t n) noexcept {
  auto each = [&]<class S>(S) -> std::size_t {
    if constexpr (std::is_same_v<S, T>) {  // a copy, and a byte swap at most
      if (sizeof(S) == 1 || a.order == std::endian::native)
        load_array<std::endian::native>(out, a.data, n);
      else if (a.order == std::endian::big)
        load_array<std::endian::big>(out, a.data, n);
      else
        load_array<std::endian::little>(out, a.data, n);
      return n;
    } else {
      for (std::size_t i = 0; i < n; ++i) {
        S v = a.order == std::endian::big ? load<std::endian::big, S>(a.data + i * sizeof(S))
                                          : load<std::endian::little, S>(a.data + i * sizeof(S));
        if (!holds_number<T>(v)) return i;
        out[i] = static_cast<T>(v);
      }
      return n;
    }
  };
  return visit_element_type(a.type, each);
}

// Value i of `a` as text, for errors.
TABLIO_COLD inline std::string element_text(const array_view& a, std::size_t i) {
  return visit_element_type(a.type, [&]<class S>(S) {
    S v = a.order == std::endian::big ? load<std::endian::big, S>(a.data + i * sizeof(S))
                                      : load<std::endian::little, S>(a.data + i * sizeof(S));
    char text[32];
    int size = std::is_floating_point_v<S>
                   ? std::snprintf(text, sizeof text, "%.9g", static_cast<double>(v))
                   : std::snprintf(text, sizeof text, "%lld", static_cast<long long>(v));
    return std::string(text, static_cast<std::size_t>(size));
  });
}

// What T is, for errors: "32-bit signed integers".
template <class T>
constexpr const char* number_kind() noexcept {
  if constexpr (std::is_same_v<T, bool>)
    return "bools (0 or 1)";
  else if constexpr (std::is_floating_point_v<T>)
    return sizeof(T) == 4 ? "32-bit floats" : "64-bit floats";
  else if constexpr (std::is_signed_v<T>)
    return sizeof(T) == 1   ? "8-bit signed integers"
           : sizeof(T) == 2 ? "16-bit signed integers"
           : sizeof(T) == 4 ? "32-bit signed integers"
                            : "64-bit signed integers";
  else
    return sizeof(T) == 1   ? "8-bit unsigned integers"
           : sizeof(T) == 2 ? "16-bit unsigned integers"
           : sizeof(T) == 4 ? "32-bit unsigned integers"
                            : "64-bit unsigned integers";
}

// Converts the first n values of `a` to T, or throws the format_error of `source` for the
// first one that T does not hold, at its offset (a.data being at `offset` in source).
template <class T>
void convert_elements_checked(const array_view& a, T* out, std::size_t n, std::string_view source,
                              std::uint64_t offset = 0) {
  std::size_t done = convert_elements(a, out, n);
  if (done != n) [[unlikely]]
    throw_format_error(source, offset + done * element_size(a.type), {},
                       {"numbers that fit in ", number_kind<T>()},
                       {element_text(a, done), " (value ", decimal(done), " of the entry)"});
}

// Where an entry is: which of the framing's files, and a byte offset in it.
struct location {
  std::uint32_t file = 0;
  std::uint64_t offset = 0;
};

// A named part of a record that a framing can give apart: a tar sample's member (its extension
// and data).
struct entry_part {
  std::string_view name, bytes;
};

// One entry as an input framing hands it to a table. The views stay valid until the next
// call on the framing.
struct entry {
  std::string key;
  entry_form form = entry_form::record;
  reader* object = nullptr;           // object: the stream, at the object
  std::string_view bytes;             // record: the bytes
  std::string* lent = nullptr;        // record: a string of the framing's that holds exactly `bytes`,
                                      // which a holder may take (it leaves its own for reuse)
  std::span<const entry_part> parts;  // record: its parts in place of `bytes`, where the table
                                      // asked for them (give_parts()) for a holder that takes them
  tablio::keeper keeper;              // parts: keeps their bytes valid past the next entry
  array_view array;                   // array
  std::string_view range;             // a part of the value to keep (a script's "[0:9]"); empty: all
  std::string_view origin;            // scripts: where the value comes from; consecutive entries of
                                      // one origin hold the same object (ranges of it)
  std::string_view key_name;          // record: the record keeps its key in this bytes feature...
  bool provisional_key = false;       // ...and `key` (an ordinal) stands in for it until taken out
  std::size_t max_key_bytes = default_limits.max_token_bytes;  // ...which is at most this long
  bool followed_by_key = false;   // object: read at an offset into an archive, so the next
                                  // entry's key (or the end) must follow it (check_key_follows)
  bool read_in_sequence = false;  // object: read in an archive's order, the next key after it
  bool pending = false;           // the value is still to be loaded (framings with load())
  // record: the check of its bytes (a TFRecord's data CRC), made where its value is read, so
  // that a count touches none of them; bytes that fail it make the value a data_loss_error,
  // and the next entry follows
  bool (*intact)(std::string_view bytes, std::uint32_t expected) = nullptr;
  std::uint32_t expected_check = 0;
  location where;                 // for read_at() and for scripts
  std::string_view source;        // record, array: what errors name (the file)
  std::uint64_t data_offset = 0;  // record, array: offset of the bytes in source

  // Whether a record's bytes fail the check the framing left (intact): its value is then a
  // data_loss_error. Costs a pass over the bytes; false when there is no check.
  bool corrupted() const { return intact && !intact(bytes, expected_check); }
};

// How a table reads: Kaldi's rspecifier options.
struct read_options {
  bool sorted = false;         // s: keys in order; random access stops reading ahead past a key
  bool called_sorted = false;  // cs: keys are asked for in order
  bool once = false;           // o: each key is asked for once
  bool permissive = false;     // p: a bad entry ends the table or is absent, never an error
};

namespace detail {
// A shard I of N reads entries I, I+N, I+2N...: I < N.
inline void check_shard(std::uint64_t index, std::uint64_t count) {
  if (count == 0 || index >= count)
    throw_usage_error({"shard ", decimal(index), " of ", decimal(count), ": a shard is 0 to N-1 of N"});
}
}  // namespace detail

namespace detail {
// A second reader, which reads entries again at their locations in a framing's files while
// the first reads on in order; it reopens only when the file changes.
// Files are local or remote objects (a remote one is read by ranges).
class lookup_reader {
 public:
  reader& at(const std::vector<std::string>& files, const location& where, const open_options& open) {
    if (!in_ || file_ != where.file) {
      in_.reset();
      in_.emplace(open_input_at(files.at(where.file), where.offset, open));
      file_ = where.file;
    }
    in_->seek(where.offset);
    return *in_;
  }
  void close() { in_.reset(); }

 private:
  std::optional<reader> in_;
  std::uint32_t file_ = 0;
};
}  // namespace detail

namespace detail {
// Closes what `o` holds (a failed command throws) and leaves it empty either way.
template <class T>
void close_and_reset(std::optional<T>& o) {
  if (!o) return;
  struct reset_on_exit {
    std::optional<T>& o;
    ~reset_on_exit() { o.reset(); }
  } reset{o};
  o->close();
}
}  // namespace detail

// Keys of tables whose entries have none of their own: the ordinal, zero-padded to eight
// digits (more when needed), so that bytewise order is entry order.
// Written digit by digit: it runs once per entry, where snprintf's format parsing showed.
inline std::string ordinal_key(std::uint64_t ordinal) {
  char digits[20];
  char* end = digits + sizeof digits;
  char* p = end;
  do {
    *--p = static_cast<char>('0' + ordinal % 10);
    ordinal /= 10;
  } while (ordinal != 0);
  while (end - p < 8) *--p = '0';
  return std::string(p, end);
}

// The keys a framing that stores none (TFRecord without key=, IDX) can take: reading numbers a
// file's entries from 00000000, so any other key would be lost, and is refused at the first
// write (`remedy` says where keys can be kept instead).
class numbered_keys {
 public:
  // Counts the next entry written to `file`, whose key must be its ordinal_key: any other is
  // a key_error that names `file` and ends with `remedy`.
  void check(std::string_view key, std::string_view file, std::string_view remedy) {
    if (number_of(key) == written_) [[likely]] {
      ++written_;
      return;
    }
    throw_key_error({"'", file, "' keeps no keys: reading it numbers its entries, so entry ",
                     decimal(written_), " must have key ", ordinal_key(written_), ", not ",
                     quoted_excerpt(key), ", which would be lost; ", remedy});
  }

 private:
  static std::optional<std::uint64_t> number_of(std::string_view key) {
    if (key.size() < 8 || key.size() > 20) return std::nullopt;
    std::uint64_t n = 0;
    for (char c : key) {
      if (c < '0' || c > '9') return std::nullopt;
      if (n > (std::numeric_limits<std::uint64_t>::max() - 9) / 10) return std::nullopt;
      n = n * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (ordinal_key(n) != key) return std::nullopt;  // "000000001" is not how 1 reads back
    return n;
  }

  std::uint64_t written_ = 0;
};

// An output framing that takes object entries: begin(key) gives the writer the holder writes
// the object to, and end() ends it.
template <class F>
concept object_output = requires(F& f, std::string_view key) {
  { f.begin(key) } -> std::same_as<writer&>;
  f.end();
};
// An output framing that takes record entries: put(key, bytes).
template <class F>
concept record_output = requires(F& f, std::string_view key, std::string_view bytes) {
  f.put(key, bytes);
};
// An output framing that takes typed array entries: put(key, array_view).
template <class F>
concept array_output = requires(F& f, std::string_view key, const array_view& a) {
  f.put(key, a);
};
// The output side of the Framing concept: it takes entries in at least one form, and close()
// flushes and reports any loss.
template <class F>
concept output_framing = (object_output<F> || record_output<F> || array_output<F>)&&requires(F& f) {
  f.close();
};

// An input framing that fills in whole entries: next(entry&).
template <class F>
concept entry_input = requires(F& f, entry& e) {
  { f.next(e) } -> std::same_as<bool>;
};
// An input framing that hands out records as a key and bytes: next(key, bytes).
template <class F>
concept simple_record_input = requires(F& f, std::string& key, std::string_view& bytes) {
  { f.next(key, bytes) } -> std::same_as<bool>;
};
// The input side of the Framing concept: next() in either style, and close().
template <class F>
concept input_framing = (entry_input<F> || simple_record_input<F>)&&requires(F& f) {
  f.close();
};

// Capabilities of input framings.
// An input framing that reads an entry again at a location next() reported: read_at().
template <class F>
concept positional_input = requires(F& f, const location& at, entry& e) {
  { f.read_at(at, e) } -> std::same_as<bool>;
};
// An input framing that finds an entry by key: find(key, entry&), or find(key) giving the
// record's bytes or nothing.
template <class F>
concept keyed_input = requires(F& f, std::string_view key, entry& e) {
  { f.find(key, e) } -> std::same_as<bool>;
}
|| requires(F& f, std::string_view key) {
  { f.find(key) } -> std::same_as<std::optional<std::string_view>>;
};
// An input framing that knows its number of entries: size().
template <class F>
concept counted_input = requires(F& f) {
  { f.size() } -> std::convertible_to<std::uint64_t>;
};
// An input framing whose next() or find() may leave an entry pending, for load() to fill in.
template <class F>
concept lazy_input = requires(F& f, entry& e) {
  f.load(e);
};

// Capabilities of output framings.
// An output framing that tells where the entry just begun or put is, for script lines:
// entry_location() and file_name(file).
template <class F>
concept positional_output = requires(const F& f) {
  { f.entry_location() } -> std::same_as<location>;
  { f.file_name(std::uint32_t{}) } -> std::convertible_to<std::string_view>;
};

// A framing family's two sides (nested `output` and `input` types); a type that is not a
// family is its own side.
namespace detail {
template <class F>
struct output_side_of {
  using type = F;
};
template <class F>
requires requires { typename F::output; }
struct output_side_of<F> {
  using type = typename F::output;
};
template <class F>
struct input_side_of {
  using type = F;
};
template <class F>
requires requires { typename F::input; }
struct input_side_of<F> {
  using type = typename F::input;
};
}  // namespace detail
// The output side of a framing family F, or F itself when it is not a family.
template <class F>
using output_side = typename detail::output_side_of<F>::type;
// The input side of a framing family F, or F itself when it is not a family.
template <class F>
using input_side = typename detail::input_side_of<F>::type;

// The optional capabilities, with their defaults when a framing lacks them.
namespace detail {

template <class F>
concept complete_framing = requires {
  sizeof(F);
};

template <class F>
entry_form output_form(const F& f) {
  if constexpr (requires { f.form(); })
    return f.form();
  else if constexpr (object_output<F>)
    return entry_form::object;
  else if constexpr (record_output<F>)
    return entry_form::record;
  else
    return entry_form::array;
}
template <class F>
bool writes_binary(const F& f) {
  if constexpr (requires { f.binary(); })
    return f.binary();
  else
    return true;
}
// The object entry begun for key failed before it was whole: a framing that can takes it back
// (abandon(key)), so that it leaves nothing.
template <class F>
void abandon_entry(F& f, std::string_view key) {
  if constexpr (requires { f.abandon(key); }) f.abandon(key);
}
template <class F>
std::string_view output_key_name(const F& f) {
  if constexpr (requires { f.key_name(); })
    return f.key_name();
  else
    return {};
}
template <class F>
void suggest_extension(F& f, std::string_view extension) {
  if constexpr (requires { f.set_default_extension(extension); }) f.set_default_extension(extension);
}
// Tells a framing that the keys of what it writes are kept beside it (in a script), so it
// need not refuse keys it cannot store itself.
template <class F>
void keep_keys_beside(F& f) {
  if constexpr (requires { f.keep_keys_beside(); }) f.keep_keys_beside();
}

// Tells a framing whose records keep no keys unless told (TFRecord) to keep them in the bytes
// feature `name`, as key=NAME does, before its first record; others keep keys already.
template <class F>
void keep_keys_in(F& f, std::string_view name) {
  if constexpr (requires { f.keep_keys_in(name); }) f.keep_keys_in(name);
}

// Asks a framing that can give records as parts (entry::parts) to do so.
template <class F>
void ask_for_parts(F& f) {
  if constexpr (requires { f.give_parts(); }) f.give_parts();
}

// A key read that a writer would refuse (empty, whitespace or unprintable bytes): damaged or
// misread input, never a key to hand on, print or compare.
[[noreturn]] TABLIO_COLD inline void bad_key_read(std::string_view source,
                                                  std::optional<std::uint64_t> offset, std::string_view key,
                                                  std::size_t most) {
  throw_format_error(
      source, offset, {},
      {"a key (non-empty, no whitespace or unprintable bytes, at most ", decimal(most),
       " bytes: limits::max_token_bytes)"},
      {key.empty()          ? std::string("an empty key")
       : key.size() <= most ? quoted_excerpt(key)
                            : join({decimal(key.size()), " bytes from ", quoted_excerpt(key)})});
}
// Whether `key`, followed by byte `after`, is an archive entry's key as a writer writes it: a
// token, then a space, a tab or a newline. Bytes that are not are damaged input, or the rest of
// an object before them read as another type than wrote it (another release of a struct).
inline bool is_archive_key(std::string_view key, int after) {
  return kaldi_io::is_token(key) && (after == ' ' || after == '\t' || after == '\n');
}
// `after_object`: the key was looked for after an object read at an offset, else as the next entry's.
[[noreturn]] TABLIO_COLD inline void no_archive_key(const reader& in, std::uint64_t at, std::string_view key,
                                                    int after, bool after_object) {
  // A token is a key followed by the wrong byte, which is then named.
  const bool token = kaldi_io::is_token(key);
  const decimal byte(after);
  throw_format_error(
      in.name(), at, {},
      {after_object ? "the next entry's key or the end, after the object"
                    : "a key (non-empty, no whitespace or unprintable bytes), then a space or a newline"},
      {quoted_excerpt(key), token ? " followed by byte " : "", token ? byte : std::string_view()});
}
// Whether `key`, read at `at` and followed by byte `after` (-1: the end), is a key rather than
// the end; bytes that are no key are a format_error (no_archive_key).
inline bool key_or_end(const reader& in, std::uint64_t at, std::string_view key, int after,
                       bool after_object) {
  if (after < 0) return false;
  if (!is_archive_key(key, after)) no_archive_key(in, at, key, after, after_object);
  return true;
}
// Reads the key of an archive's next entry, as Kaldi's reader reads it: whitespace, then the
// bytes up to a space, from offset `at`; leaves the reader at the byte after the key. False
// at the end, which includes input that ends inside a key (Kaldi takes that for a clean end
// too). Bytes that are no key (is_archive_key) are a format_error.
inline bool read_archive_key(reader& in, std::string& key, std::uint64_t& at, bool after_object) {
  in.skip_whitespace();
  at = in.tell();
  key.clear();
  in.read_until_space(key);
  return key_or_end(in, at, key, in.peek(), after_object);
}
// What must follow an object read at an offset into an archive: the next entry's key, as the
// archive's own reader reads keys (framing/ark.hpp), or the end. An object read as another
// type than wrote it stops short or runs on, and what follows it is then no key: an error here
// rather than a value misread in silence.
inline void check_key_follows(reader& in) {
  std::uint64_t at;
  std::string key;
  read_archive_key(in, key, at, /*after_object=*/true);
}
// The same as far as the input is read already, for an object read in sequence: it never
// waits for more input (a pipe's next entry may be written only once this one is used), and
// leaves the key to the framing's next().
inline void check_buffered_key_follows(const reader& in) {
  const std::span<const char> w = in.window();
  std::size_t i = 0;
  while (i < w.size() && reader::is_space(w[i])) ++i;
  const std::size_t start = i;
  while (i < w.size() && !reader::is_space(w[i])) ++i;
  if (i == w.size()) return;  // the end, or a key not in view yet: nothing to tell
  key_or_end(in, in.tell() + start, std::string_view(w.data() + start, i - start),
             static_cast<unsigned char>(w[i]), /*after_object=*/true);
}

template <class F>
std::string table_name(const F& f);
// The longest key a framing reads (its limits::max_token_bytes, as an archive's tokens).
template <class F>
std::size_t max_key_bytes(const F& f) {
  if constexpr (requires { f.max_key_bytes(); })
    return f.max_key_bytes();
  else
    return default_limits.max_token_bytes;
}
// Whether a framing's keys may be any bytes (an LMDB database's: Caffe makes them from file
// names, spaces included) rather than Kaldi tokens, as the other tables' are.
template <class F>
bool keys_any_bytes(const F& f) {
  if constexpr (requires { f.keys_any_bytes(); })
    return f.keys_any_bytes();
  else
    return false;
}
// Whether a table of framing f may hold key.
template <class F>
bool valid_key(const F& f, std::string_view key) {
  return keys_any_bytes(f) ? !key.empty() : kaldi_io::is_token(key);
}
template <class F>
void check_key_read(const entry& e, const F& f) {
  if (!valid_key(f, e.key) || e.key.size() > max_key_bytes(f)) [[unlikely]]
    bad_key_read(e.source.empty() ? table_name(f) : std::string(e.source),
                 e.form == entry_form::object ? e.where.offset : e.data_offset, e.key, max_key_bytes(f));
}

template <input_framing F>
bool next_entry(F& f, entry& e) {
  e.lent = nullptr;    // only a framing that lends sets it, or gives parts
  e.intact = nullptr;  // ...or has a record's bytes to check
  e.parts = {};
  e.keeper.reset();
  bool more;
  if constexpr (entry_input<F>) {
    more = f.next(e);
  } else {
    e.form = entry_form::record;
    more = f.next(e.key, e.bytes);
  }
  if (more && !e.provisional_key) check_key_read(e, f);
  return more;
}
// The forms an input framing hands out.
template <class F>
constexpr unsigned input_forms() {
  if constexpr (requires { F::forms; })
    return F::forms;
  else if constexpr (!entry_input<F>)
    return entry_forms(entry_form::record);
  else
    return all_entry_forms;
}

template <class F>
bool can_read_at(const F& f) {
  if constexpr (!positional_input<F>)
    return false;
  else if constexpr (requires { f.seekable(); })
    return f.seekable();
  else
    return true;
}
template <class F>
bool can_find(const F& f) {
  if constexpr (!keyed_input<F>)
    return false;
  else if constexpr (requires { f.can_find(); })
    return f.can_find();
  else
    return true;
}
template <keyed_input F>
bool find_entry(F& f, std::string_view key, entry& e) {
  e.lent = nullptr;
  e.parts = {};
  e.keeper.reset();
  if constexpr (requires { f.find(key, e); }) {
    return f.find(key, e);
  } else {
    std::optional<std::string_view> bytes = f.find(key);
    if (!bytes) return false;
    e.key = key;
    e.form = entry_form::record;
    e.bytes = *bytes;
    return true;
  }
}
template <class F>
read_options reading_options(const F& f) {
  if constexpr (requires { f.options(); })
    return f.options();
  else
    return {};
}
template <class F>
std::string table_name(const F& f) {
  if constexpr (requires { f.name(); })
    return std::string(f.name());
  else
    return "<table>";
}

}  // namespace detail

TABLIO_END_NAMESPACE
