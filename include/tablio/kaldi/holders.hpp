// Kaldi's holders (BasicHolder, TokenHolder, KaldiObjectHolder...) as tablio's, and holders
// written Kaldi's way (static Write on a std::ostream, Read from a std::istream, Value(), Clear,
// the typedef T: PosteriorHolder's shape), which the facade's tables take as they are.
#pragma once

#include <tablio/core/error.hpp>
#include <tablio/holder/concepts.hpp>
#include <tablio/holder/holders.hpp>
#include <tablio/kaldi/base.hpp>
#include <tablio/kaldi/logging.hpp>
#include <tablio/stream/iostream.hpp>

#include <concepts>
#include <istream>
#include <ostream>

TABLIO_BEGIN_NAMESPACE

namespace kaldi {

// ----- holders
// Each of Kaldi's holders is tablio's, with Kaldi's member names added (with_kaldi_names), so
// that a program can use one on its own (wav-copy reads a WaveHolder from an Input); tables
// take them as the tablio holders they are.

namespace detail {

// Runs f; a tablio::error becomes Kaldi's warning and false, as Kaldi's holders catch theirs.
template <class F>
bool kaldi_holder_call(F&& f) {
  try {
    f();
    return true;
  } catch (const tablio::error& e) {
    KALDI_WARN << "Exception caught reading or writing a table object: " << e.what();
    return false;
  }
}

// A tablio holder with Kaldi's member names too: Read from a std::istream, static Write to a
// std::ostream (both false, with a warning, on failure, as Kaldi's), Value(), Clear(), and T.
template <holder_type H>
class with_kaldi_names : public H {
 public:
  using T = typename H::value_type;
  // Writes t as one object ("\0B" first in binary mode); false, with a warning, on failure.
  static bool Write(std::ostream& os, bool binary, const T& t) {
    return kaldi_holder_call([&] { on_writer(os, [&](writer& w) { H::write(w, binary, t); }); }) && os.good();
  }
  // Reads one object, detecting the mode; false, with a warning, on failure.
  bool Read(std::istream& is) {
    return kaldi_holder_call([&] { on_reader(is, [&](reader& r) { this->read(r); }); });
  }
  // The value read last.
  T& Value() { return this->value(); }
  // Frees the value read last.
  void Clear() { this->clear(); }
  // Whether an input holding these objects is opened in binary mode: always, here.
  static bool IsReadInBinary() { return true; }
};

}  // namespace detail

// Kaldi's BasicHolder: one number or bool per entry.
template <class T>
using BasicHolder = detail::with_kaldi_names<basic_holder<T>>;
// Kaldi's BasicVectorHolder: a vector of numbers per entry.
template <class T>
using BasicVectorHolder = detail::with_kaldi_names<basic_vector_holder<T>>;
// Kaldi's BasicVectorVectorHolder: a vector of vectors of numbers per entry.
template <class T>
using BasicVectorVectorHolder = detail::with_kaldi_names<basic_vector_vector_holder<T>>;
// Kaldi's BasicPairVectorHolder: a vector of pairs of numbers per entry.
template <class T>
using BasicPairVectorHolder = detail::with_kaldi_names<basic_pair_vector_holder<T>>;
// Kaldi's TokenHolder: one token per entry.
using TokenHolder = detail::with_kaldi_names<token_holder>;
// Kaldi's TokenVectorHolder: tokens per entry.
using TokenVectorHolder = detail::with_kaldi_names<token_vector_holder>;
// Kaldi's KaldiObjectHolder: an object with Read and Write (a Matrix, a Vector...) per entry.
template <class T>
using KaldiObjectHolder = detail::with_kaldi_names<holder<T>>;

// A holder written Kaldi's way: `typedef ... T`, `static bool Write(std::ostream&, bool binary,
// const T&)` writing one object ("\0B" first in binary mode, as InitKaldiOutputStream does),
// `bool Read(std::istream&)` reading one (detecting the mode itself), `T& Value()` and
// `void Clear()`. IsReadInBinary, Swap and ExtractRange may be there; the tables do not need them.
template <class H>
concept kaldi_style_holder = std::default_initializable<H> &&
    requires(H& h, std::ostream& os, std::istream& is, const typename H::T& t) {
  { H::Write(os, true, t) } -> std::convertible_to<bool>;
  { h.Read(is) } -> std::convertible_to<bool>;
  { h.Value() } -> std::same_as<typename H::T&>;
  h.Clear();
};

namespace detail {

// A Kaldi-style holder as a tablio holder: its Write and Read run on std::iostreams over the
// table's own writer and reader, so its bytes go to (and come from) the table unbuffered and
// uncopied; a false from either becomes tablio's error, with the offset and the table's name.
template <kaldi_style_holder H>
class kaldi_holder_adapter {
 public:
  using value_type = typename H::T;
  // The Holder concept: H::Write on an ostream over w; throws format_error when it fails.
  static void write(writer& w, bool binary, const value_type& v) {
    bool written = false;
    {
      writer_streambuf buffer(w);
      std::ostream os(&buffer);
      written = H::Write(os, binary, v) && os.flush().good();
    }
    if (!written)
      throw_format_error(w.name(), w.tell(), {}, {"a value the holder's Write accepts"}, {"a failed Write"});
  }
  // The Holder concept: H::Read from an istream over r; throws format_error when it fails.
  void read(reader& r) {
    const std::uint64_t start = r.tell();
    bool read = false;
    {
      reader_streambuf buffer(r);
      std::istream is(&buffer);
      read = holder_.Read(is);
    }
    if (!read) r.fail_at(start, {"an object the holder's Read accepts"}, {"one it refused"});
  }
  // The Holder concept: the value read last.
  value_type& value() { return holder_.Value(); }
  // The Holder concept: frees the value read last.
  void clear() { holder_.Clear(); }

 private:
  H holder_;
};

template <class H>
struct table_holder {
  using type = H;
};
template <class H>
struct table_holder<with_kaldi_names<H>> {
  using type = H;  // the same tables as tablio's own, compiled once in the compiled mode
};
template <class H>
requires(!holder_type<H> && kaldi_style_holder<H>) struct table_holder<H> {
  using type = kaldi_holder_adapter<H>;
};

}  // namespace detail

// The holder a facade table uses for Holder: Holder itself when it is a tablio holder, and an
// adapter over it when it is written Kaldi's way.
template <class Holder>
using table_holder_t = typename detail::table_holder<Holder>::type;

}  // namespace kaldi

TABLIO_END_NAMESPACE
