// The Holder concept: what one table entry is, and how it is written and read.
//
// A holder writes a value as one self-contained object in binary or text mode and reads an
// object back, detecting the mode itself (Kaldi's binary objects start with "\0B"). The
// table layer pairs a holder with a framing (ark, scp, TFRecord...).
#pragma once

#include <tablio/stream/reader.hpp>
#include <tablio/stream/writer.hpp>

#include <concepts>

TABLIO_BEGIN_NAMESPACE

template <class H>
concept holder_type = std::default_initializable<H> &&
    requires(H& h, writer& w, reader& r, const typename H::value_type& v, bool binary) {
  typename H::value_type;
  H::write(w, binary, v);  // one object; throws on failure
  h.read(r);               // one object; throws format_error on bad input
  { h.value() } -> std::same_as<typename H::value_type&>;
  h.clear();
};

// Storage shared by every holder: the value read last.
template <class T>
class holder_storage {
  // Said here, where the class is made, so that it comes before the errors value_{} would give.
  static_assert(std::default_initializable<T>,
                "tablio: a table entry's value type needs a default constructor, since a holder reads "
                "each value into one it made; see docs/customization.md");

 public:
  using value_type = T;
  // The Holder concept: the value read last, which the caller may move from or modify.
  value_type& value() noexcept { return value_; }
  const value_type& value() const noexcept { return value_; }
  // The Holder concept: replaces the value with a default-made one, freeing its memory.
  void clear() { value_ = value_type{}; }
  // Exchanges the values of two holders, without copying either.
  void swap(holder_storage& other) noexcept {
    using std::swap;
    swap(value_, other.value_);
  }

 protected:
  value_type value_{};
};

TABLIO_END_NAMESPACE
