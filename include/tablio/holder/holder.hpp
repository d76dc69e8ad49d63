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
  // A text object ends its line, as Kaldi's text objects do, so that reading can check that
  // it took the whole object (read_text_line_end); a Kaldi-style class's text is what its
  // Write gives, byte for byte.
  static void write(writer& w, bool binary, const T& v) {
    if (binary) {
      kaldi_io::write_binary_header(w);
      encode_to<BinaryCodec>(w, v);
    } else if constexpr (kaldi_object<T>) {
      encode_to<TextCodec>(w, v);
    } else {
      std::string line;
      writer text = memory_writer(line);
      encode_to<TextCodec>(text, v);
      text.close();
      if (line.empty() || line.back() != '\n') line.push_back('\n');
      w.write(line);
    }
  }
  void read(reader& r) {
    if (kaldi_io::read_binary_header(r)) {
      decode_from<BinaryCodec>(r, this->value_);
    } else {
      decode_from<TextCodec>(r, this->value_);
      if constexpr (!kaldi_object<T>) kaldi_io::read_text_line_end(r);
    }
  }
};

// Kaldi's KaldiObjectHolder<T>, for classes with Kaldi-style Write/Read members.
template <kaldi_object T>
using kaldi_object_holder = holder<T>;

TABLIO_END_NAMESPACE
