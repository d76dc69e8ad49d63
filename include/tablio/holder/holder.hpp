// holder<T, BinaryCodec, TextCodec>: any value the codecs can encode, as one table object.
//
// Binary objects are "\0B" followed by the BinaryCodec encoding; text objects are the
// TextCodec encoding. With the default Kaldi codecs this is exactly Kaldi's
// KaldiObjectHolder: a Kaldi-style class (Write/Read members) is written as Kaldi writes it,
// and any user struct becomes a table entry with no code.
#pragma once

#include <tablio/codec/codec.hpp>
#include <tablio/codec/kaldi_object.hpp>
#include <tablio/holder/concepts.hpp>

TABLIO_BEGIN_NAMESPACE

template <class T, class BinaryCodec = kaldi_binary, class TextCodec = kaldi_text>
class holder : public holder_storage<T> {
 public:
  static void write(writer& w, bool binary, const T& v) {
    if (binary) {
      kaldi_io::write_binary_header(w);
      encode_to<BinaryCodec>(w, v);
    } else {
      encode_to<TextCodec>(w, v);
    }
  }
  void read(reader& r) {
    if (kaldi_io::read_binary_header(r))
      decode_from<BinaryCodec>(r, this->value_);
    else
      decode_from<TextCodec>(r, this->value_);
  }
};

// Kaldi's KaldiObjectHolder<T>, for classes with Kaldi-style Write/Read members.
template <kaldi_object T>
using kaldi_object_holder = holder<T>;

TABLIO_END_NAMESPACE
