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

namespace detail {
struct nothing {};
// Whether a codec's encoding of a value says where it ends (protobuf's messages do not).
template <class C>
constexpr bool self_delimiting() {
  if constexpr (requires { C::delimited; })
    return C::delimited;
  else
    return true;
}
}  // namespace detail

template <class T, class BinaryCodec = kaldi_binary, class TextCodec = kaldi_text>
class holder : public holder_storage<T> {
  static constexpr bool delimited = detail::self_delimiting<BinaryCodec>();

 public:
  // A text object ends its line, as Kaldi's text objects do, so that reading can check that
  // it took the whole object (read_text_line_end); a Kaldi-style class's text is what its
  // Write gives, byte for byte. An encoding that does not end itself (a protobuf message) is
  // an object as bytes_holder's bytes are, in binary and text mode alike: any reader of bytes
  // (Python's type="bytes", the tool) reads it, and a text archive keeps its field numbers.
  static void write(writer& w, bool binary, const T& v) {
    if constexpr (!delimited) {
      thread_local std::string bytes;
      encode_record(bytes, v);
      holder<std::string>::write(w, binary, bytes);
    } else if (binary) {
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
  // Takes one object off r into out undecoded, where T's codecs tell where it ends plainly,
  // for a table's threads to decode (table/read_ahead.hpp); false, having consumed nothing,
  // where they do not.
  static bool skim(reader& r, skimmed_object& out) requires(std::is_same_v<TextCodec, kaldi_text>&& requires {
    codec_traits<BinaryCodec, T>::skim_object(r, out);
  }) {
    return codec_traits<BinaryCodec, T>::skim_object(r, out);
  }

  // The Holder concept: reads one object written in either mode ("\0B" says binary); throws
  // format_error on bad input, or on text left on a text object's line.
  void read(reader& r) {
    if constexpr (!delimited) {
      read_encoding(r);
    } else if (kaldi_io::read_binary_header(r)) {
      decode_from<BinaryCodec>(r, this->value_);
    } else {
      decode_from<TextCodec>(r, this->value_);
      if constexpr (!kaldi_object<T>) kaldi_io::read_text_line_end(r);
    }
  }

  // Records of a codec whose encoding does not end itself are that encoding alone, as any
  // other reader of it (libprotobuf, Python's protobuf) reads it.
  static void encode_record(std::string& out, const T& v) requires(!delimited) {
    out.clear();  // written into the caller's string, which keeps its capacity across records
    writer w = memory_writer(out);
    encode_to<BinaryCodec>(w, v);
    w.close();
  }
  // Decodes a record that is the encoding alone; throws format_error, naming `name`, when the
  // bytes are not one whole encoding.
  void decode_record(std::string_view bytes, const std::string& name) requires(!delimited) {
    reader in = memory_reader(bytes, name);
    decode_from<BinaryCodec>(in, this->value_);
    if (!in.at_end())
      in.fail({"the end of the record after the value"}, {decimal(*in.remaining()), " more bytes"});
  }

 private:
  // Reads an object of bytes (as holder<std::string> does) and decodes them; errors give
  // offsets in the file, not in the bytes.
  void read_encoding(reader& r) requires(!delimited) {
    const bool binary = kaldi_io::read_binary_header(r);
    if (binary)
      decode_from<kaldi_binary>(r, bytes_);
    else
      decode_from<kaldi_text>(r, bytes_);
    const std::uint64_t start = r.tell() - bytes_.size();
    if (!binary) kaldi_io::read_text_line_end(r);
    try {
      decode_record(bytes_, r.name());
    } catch (const format_error& e) {
      error_location where = e.where();
      where.offset = start + where.offset.value_or(0);
      throw format_error(std::move(where), e.expected(), e.found());
    }
  }
  [[no_unique_address]] std::conditional_t<delimited, detail::nothing, std::string> bytes_;
};

// Kaldi's KaldiObjectHolder<T>, for classes with Kaldi-style Write/Read members.
template <kaldi_object T>
using kaldi_object_holder = holder<T>;

TABLIO_END_NAMESPACE
