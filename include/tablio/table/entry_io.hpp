// Where a holder meets a framing: a value written as an entry in the framing's form (an object
// the holder writes, a record it encodes, a typed array), and an entry read back into a holder,
// with its range applied and the key it keeps in its record taken out. Errors name the table
// key, the file and the offset.
#pragma once

#include <tablio/codec/kaldi_token.hpp>
#include <tablio/core/keeper.hpp>
#include <tablio/framing/concepts.hpp>
#include <tablio/holder/concepts.hpp>
#include <tablio/holder/record.hpp>
#include <tablio/table/array_entry.hpp>

#include <concepts>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

// A holder that takes a record as its parts (entry::parts: a tar sample's members), views
// that stay valid while `k` is held, where the framing gives them so; it copies no bytes.
//   void take_parts(std::span<const entry_part> parts, keeper k, const std::string& name);
template <class H>
concept part_taking_holder = record_holder<H> &&
    requires(H& h, std::span<const entry_part> parts, keeper k, const std::string& name) {
  h.take_parts(parts, std::move(k), name);
};

namespace detail {

// Rethrows a format_error with the table key (and path, if the error had none).
template <class F>
decltype(auto) with_key(std::string_view key, std::string_view path, F&& f) {
  try {
    return f();
  } catch (const format_error& e) {
    error_location where = e.where();
    where.key = std::string(key);
    if (where.path.empty()) where.path = path;
    throw format_error(std::move(where), e.expected(), e.found());
  }
}

[[noreturn]] inline void no_such_form(std::string_view table, const char* what) {
  throw_usage_error({"'", table, "': ", what});
}

// Refuses key=NAME for a holder whose records cannot keep a key.
template <holder_type H>
void check_key_option(std::string_view key_name, std::string_view table) {
  if constexpr (!keyed_record_holder<H>) {
    if (!key_name.empty())
      throw_usage_error(
          {"'", table,
           "': key=NAME keeps keys in an Example feature; this holder's records cannot hold one"});
  }
}

template <class F>
std::string_view input_key_name(const F& f) {
  if constexpr (requires { f.key_name(); })
    return f.key_name();
  else
    return {};
}

// Sets out to the record for (key, v), with the key inside it when key_name asks for that.
template <holder_type H>
void encode_keyed_record(std::string& out, std::string_view key_name, std::string_view key,
                         const typename H::value_type& v) {
  if constexpr (keyed_record_holder<H>) {
    if (!key_name.empty()) {
      out.clear();
      H::encode_record(out, v, key_name, key);
      return;
    }
  }
  encode_record<H>(out, v);
}

// A value the output cannot take (a NaN matrix to compress): its error again, naming its key
// and table, as a writer's threads name it (table/write_behind.hpp).
inline constexpr std::string_view failed_value_prefix = "the value of key ";
template <class F>
[[noreturn]] TABLIO_COLD void fail_value(F& f, std::string_view key, const usage_error& e) {
  if (std::string_view(e.what()).starts_with(failed_value_prefix)) throw e;
  throw usage_error(std::string(failed_value_prefix) + quoted_key(key) + " for '" +
                    std::string(table_name(f)) + "': " + e.what());
}

// Writes v as the framing's entry for key, in the form the framing takes.
template <holder_type H, class F>
void write_entry(F& f, std::string_view key, const typename H::value_type& v, std::string& record) {
  using V = typename H::value_type;
  switch (output_form(f)) {
    case entry_form::object:
      if constexpr (object_output<F>) {
        writer& out = f.begin(key);
        try {
          H::write(out, writes_binary(f), v);
        } catch (const usage_error& e) {
          abandon_entry(f, key);  // a value that fails midway (a NaN to compress) leaves nothing
          fail_value(f, key, e);
        } catch (...) {
          abandon_entry(f, key);
          throw;
        }
        f.end();
        return;
      }
      break;
    case entry_form::record:
      if constexpr (record_output<F>) {
        try {
          encode_keyed_record<H>(record, output_key_name(f), key, v);
        } catch (const key_error&) {
          throw;
        } catch (const usage_error& e) {
          fail_value(f, key, e);
        }
        f.put(key, std::string_view(record));
        return;
      }
      break;
    case entry_form::array:
      if constexpr (array_output<F>) {
        if constexpr (writable_array_value<V>) {
          using traits = array_traits<V>;
          std::uint32_t dims[2];
          std::size_t rank = traits::dims(v, dims);
          f.put(key, array_view{element_type_of<typename traits::element>(),
                                {dims, rank},
                                static_cast<const char*>(traits::data(v)),
                                std::endian::native});
          return;
        } else {
          no_such_form(table_name(f),
                       "its entries are arrays of uint8, int8, int16, int32, float or double: numbers, "
                       "vectors or matrices of them, or bytes; this holder's values are none of those");
        }
      }
      break;
  }
  no_such_form(table_name(f), "the framing asks for an entry form it does not take");
}

// Loads an entry the framing handed out pending.
template <class F>
void load_pending(F& f, entry& e) {
  if constexpr (lazy_input<F>) {
    if (e.pending) f.load(e);
  }
}

// Runs f, which reads the bytes of an entry of `key` starting at `offset` of `source`: a
// format_error leaves naming the file, the key, and the offset in the file (f's offsets are
// within the entry).
template <class F>
void in_entry_at(std::string_view source, std::uint64_t offset, std::string_view key, F f) {
  try {
    f();
  } catch (const format_error& err) {
    error_location where = err.where();
    where.path = source;
    where.offset = offset + where.offset.value_or(0);
    if (where.key.empty()) where.key = key;
    throw format_error(std::move(where), err.expected(), err.found());
  }
}

// Runs f, which reads the bytes of a record or array entry, its errors naming the entry.
template <class F>
void in_entry(const entry& e, const std::string& source, F f) {
  in_entry_at(source, e.data_offset, e.key, std::move(f));
}

// Asks the framing for records as parts when the holder takes them so.
template <holder_type H, class F>
void offer_parts(F& f) {
  if constexpr (part_taking_holder<H>) ask_for_parts(f);
}

// Reads a record's value into h: takes its parts or the string the framing lent, where both
// can, and else decodes (copies) its bytes.
template <holder_type H>
void take_or_decode_record(H& h, entry& e, const std::string& source) {
  if (!e.parts.empty()) {
    if constexpr (part_taking_holder<H>) {
      h.take_parts(e.parts, std::move(e.keeper), source);
      e.parts = {};
      return;
    } else {
      no_such_form(source, "the framing gave a record as parts to a holder that does not take them");
    }
  }
  if constexpr (record_taking_holder<H>) {
    if (e.lent && e.lent->data() == e.bytes.data() && e.lent->size() == e.bytes.size()) {
      h.take_record(*e.lent, source);
      e.bytes = {};  // the holder's now
      e.lent = nullptr;
      return;
    }
  }
  decode_record(h, e.bytes, source);
}

// A holder whose decoding draws on the entry's key (images' random crops) is told the key first;
// where the record itself keeps the key (key=NAME), it is told "" first and the key once the
// record gave it (holder/keyed_decoding.hpp).
template <class H>
concept key_aware_holder = requires(H& h, std::string_view key) {
  h.at_key(key);
};

// A holder that keeps a value's error to throw it later (Python's images=, which reads on past a
// bad image) is told where the entry's bytes start, so that the error names the offset the
// table's own errors name (in_entry).
template <class H>
concept offset_aware_holder = requires(H& h, std::uint64_t offset) {
  h.at_offset(offset);
};

// Whether the entry's key is known only once its record is read (a key=NAME feature).
inline bool key_kept_by_record(const entry& e) noexcept {
  return e.form == entry_form::record && !e.key_name.empty() && e.provisional_key;
}

// Reads a record's value into h; with key_name, takes the key it keeps out of it, which then
// replaces a provisional key or must equal the entry's. Errors name the record's file and offset.
template <holder_type H>
void read_record(H& h, entry& e) {
  // A key the record keeps is lost with it: its stand-in (an ordinal) is no key of the table.
  if (e.corrupted()) [[unlikely]]
    throw_corrupted_record(e.source, e.data_offset, e.provisional_key ? std::string_view() : e.key);
  std::string source(e.source);
  in_entry(e, source, [&] {
    try {
      take_or_decode_record(h, e, source);
    } catch (const format_error& error) {
      // A value that fails once its record is read (an Example feature that does not fit a
      // struct's field) is named by the key the record keeps, not by its number.
      if constexpr (keyed_record_holder<H>) {
        if (!e.key_name.empty() && e.provisional_key && error.key().empty()) {
          std::optional<std::string> key;
          try {
            key = h.take_record_key(e.key_name, source);
          } catch (const tablio::error&) {  // the record itself is damaged: its number will do
          }
          if (key && kaldi_io::is_token(*key) && key->size() <= e.max_key_bytes)
            throw error.with_key(std::move(*key));
        }
      }
      throw;
    }
    if (!e.key_name.empty()) {
      if constexpr (keyed_record_holder<H>) {
        std::string key = h.take_record_key(e.key_name, source);
        if (!kaldi_io::is_token(key) || key.size() > e.max_key_bytes)
          bad_key_read(source, e.data_offset, key, e.max_key_bytes);
        if (e.provisional_key) {
          e.key = std::move(key);
          if constexpr (key_aware_holder<H>) h.at_key(e.key);
        } else if (key != e.key)
          throw_format_error(source, std::nullopt, e.key, {"the record of key ", quoted_excerpt(e.key)},
                             {"the record of key ", quoted_excerpt(key)});
      }
    }
  });
}

template <class T>
concept has_range_support = requires(T& v, std::string_view range) {
  apply_range(v, range);
};

// Keeps the part of a value a script's range names.
template <class T>
void apply_script_range(T& value, const entry& e) {
  if constexpr (has_range_support<T>) {
    with_key(e.key, e.origin, [&] { apply_range(value, e.range); });
  } else {
    throw_format_error(e.origin, std::nullopt, e.key, {"no range (this type does not support ranges)"},
                       {"'[", e.range, "]'"});
  }
}

// Arguments that name a table, with open options or without, for a framing opened from a
// name: tables open those through one non-template member, which the compiled mode
// (TABLIO_SEPARATE_COMPILATION) compiles once, in src/, for the common holders.
template <class... Args>
inline constexpr bool name_and_options = false;
template <class Name>
inline constexpr bool name_and_options<Name> = std::convertible_to<Name, std::string_view>;
template <class Name, class Options>
inline constexpr bool name_and_options<Name, Options> =
    std::convertible_to<Name, std::string_view>&& std::convertible_to<Options, const open_options&>;
template <class F, class... Args>
concept opened_by_name =
    name_and_options<Args...> && std::constructible_from<F, std::string_view, const open_options&>;

}  // namespace detail

// Reads entries into a holder. Consecutive ranged entries of one origin ("f.ark:42[0:9]",
// then "f.ark:42[10:19]") read the object once. Forms: the entry forms to expect (the
// framing's), for which alone code is compiled.
template <holder_type H, unsigned Forms = all_entry_forms>
class entry_reader {
 public:
  using value_type = typename H::value_type;

  // Reads e's value (loaded already) into h.value().
  void read(H& h, entry& e) {
    if (e.range.empty()) {
      decode(h, e);
      return;
    }
    if (!cached_ || cached_origin_ != e.origin) {
      cached_.reset();
      decode(h, e);
      cached_ = h.value();
      cached_origin_ = e.origin;
    } else {
      h.value() = *cached_;
    }
    detail::apply_script_range(h.value(), e);
  }
  // Drops the value kept for the ranges of one origin, so that the next ranged entry reads its
  // object again.
  void release() { cached_.reset(); }

  // Reads e's value into h.value() on its own, without the cache of ranged entries: for a
  // thread that decodes entries apart from the table's.
  static void read_alone(H& h, entry& e) {
    decode(h, e);
    if (!e.range.empty()) detail::apply_script_range(h.value(), e);
  }

 private:
  static void decode(H& h, entry& e) {
    if constexpr (detail::key_aware_holder<H>)
      h.at_key(detail::key_kept_by_record(e) ? std::string_view() : e.key);
    if constexpr (detail::offset_aware_holder<H>)
      h.at_offset(e.form == entry_form::object ? e.where.offset : e.data_offset);
    switch (e.form) {
      case entry_form::object:
        if constexpr ((Forms & entry_forms(entry_form::object)) != 0)
          return detail::with_key(e.key, e.object->name(), [&] {
            h.read(*e.object);
            if (e.followed_by_key) detail::check_key_follows(*e.object);
            // A user's struct in a positional codec says nothing of its length: read by another
            // release of it, it stops short or runs on, and what follows is then no key.
            if constexpr (std::is_class_v<value_type> && std::is_aggregate_v<value_type>)
              if (e.read_in_sequence) detail::check_buffered_key_follows(*e.object);
          });
        break;
      case entry_form::record:
        if constexpr ((Forms & entry_forms(entry_form::record)) != 0) return detail::read_record(h, e);
        break;
      case entry_form::array:
        if constexpr ((Forms & entry_forms(entry_form::array)) == 0) {
          break;
        } else if constexpr (array_value<value_type>) {
          std::string source(e.source);
          detail::in_entry(e, source, [&] { array_traits<value_type>::read(e.array, h.value(), source); });
        } else {
          detail::no_such_form(e.source,
                               "its entries are arrays of numbers: numbers, vectors, matrices or bytes, not "
                               "this holder's values");
        }
        return;
    }
    detail::no_such_form(e.source, "the framing handed out an entry of a form it does not declare");
  }

  std::optional<value_type> cached_;
  std::string cached_origin_;
};

TABLIO_END_NAMESPACE
