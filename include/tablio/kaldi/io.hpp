// Kaldi's base/io-funcs.h and util/kaldi-io.h over tablio: WriteBasicType and its kin on
// std::iostreams, extended filenames (ClassifyRxfilename...) and Input/Output.
#pragma once

#include <tablio/codec/kaldi_io.hpp>
#include <tablio/core/owned.hpp>
#include <tablio/kaldi/base.hpp>
#include <tablio/stream/filename.hpp>

#include <istream>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

TABLIO_BEGIN_NAMESPACE

namespace kaldi {

// ----- basic I/O on iostreams, as in Kaldi's base/io-funcs.h

// Writes a bool, integer, float or double as Kaldi does: in binary mode a size marker and the
// raw bytes, in text mode the value and a space. Any std::ostream works; tablio's own
// (Output::Stream()) are written without a copy.
template <class T>
void WriteBasicType(std::ostream& os, bool binary, T t) {
  detail::on_writer(os, [&](writer& w) { kaldi_io::write_basic_type(w, binary, t); });
}
// Reads into *t a value WriteBasicType wrote, in the same mode; throws format_error (a
// KaldiFatalError) on a wrong marker or bad text. Bytes read past the value are put back.
template <class T>
void ReadBasicType(std::istream& is, bool binary, T* t) {
  detail::on_reader(is, [&](reader& r) { kaldi_io::read_basic_type(r, binary, *t); });
}
// The same, with Kaldi's `add`: when true the value read is added to *t (or'ed, for a bool).
template <class T>
void ReadBasicType(std::istream& is, bool binary, T* t, bool add) {
  detail::on_reader(is, [&](reader& r) { kaldi_io::read_basic_type(r, binary, *t, add); });
}
// Writes the token and a space, the same in both modes; throws usage_error for an empty token
// or one with whitespace.
TABLIO_IMPL void WriteToken(std::ostream& os, bool binary, const std::string& token);
// Reads a token (skipping whitespace before it) and the whitespace byte after it; throws
// format_error at the end of input.
TABLIO_IMPL void ReadToken(std::istream& is, bool binary, std::string* token);
// Reads a token and throws format_error unless it is `token` ("<Foo>" also accepts "Foo>").
TABLIO_IMPL void ExpectToken(std::istream& is, bool binary, const std::string& token);
// The first character of the next token, past whitespace and a '<', consuming neither the
// '<' nor the token; -1 at the end. Unlike Kaldi's, it skips whitespace in binary mode too.
TABLIO_IMPL int PeekToken(std::istream& is, bool binary);
// The next byte, left unread, after skipping whitespace in text mode; -1 at the end.
TABLIO_IMPL int Peek(std::istream& is, bool binary);
// Writes a std::vector of integers as Kaldi does: binary, the element size, an int32 count and
// the raw values; text "[ 1 2 3 ]" and a newline.
template <class T>
void WriteIntegerVector(std::ostream& os, bool binary, const std::vector<T>& v) {
  detail::on_writer(os, [&](writer& w) { kaldi_io::write_integer_vector(w, binary, v); });
}
// Reads what WriteIntegerVector wrote into *v; throws format_error when the binary element
// size is not sizeof(T), or the count exceeds the input or the limits.
template <class T>
void ReadIntegerVector(std::istream& is, bool binary, std::vector<T>* v) {
  detail::on_reader(is, [&](reader& r) { kaldi_io::read_integer_vector(r, binary, *v); });
}
// Writes a std::vector of integer pairs as Kaldi does: binary, the element size, an int32
// count and the raw pairs; text "[ 1,2 3,4 ]" and a newline.
template <class T>
void WriteIntegerPairVector(std::ostream& os, bool binary, const std::vector<std::pair<T, T>>& v) {
  detail::on_writer(os, [&](writer& w) { kaldi_io::write_integer_pair_vector(w, binary, v); });
}
// Reads what WriteIntegerPairVector wrote into *v; throws format_error as ReadIntegerVector.
template <class T>
void ReadIntegerPairVector(std::istream& is, bool binary, std::vector<std::pair<T, T>>* v) {
  detail::on_reader(is, [&](reader& r) { kaldi_io::read_integer_pair_vector(r, binary, *v); });
}
// Begins a Kaldi object on os: "\0B" in binary mode, and a precision of at least 7 digits.
TABLIO_IMPL void InitKaldiOutputStream(std::ostream& os, bool binary);
// Consumes a "\0B" header if there is one and sets *binary to whether there was; returns true.
// Where Kaldi returns false ("\0" without "B"), this throws format_error.
TABLIO_IMPL bool InitKaldiInputStream(std::istream& is, bool* binary);

// ----- extended filenames

// What ClassifyRxfilename finds an rxfilename to be (kNoInput: not a valid one).
enum InputType { kNoInput, kFileInput, kStandardInput, kOffsetFileInput, kPipeInput };
// What ClassifyWxfilename finds a wxfilename to be (kNoOutput: not a valid one).
enum OutputType { kNoOutput, kFileOutput, kStandardOutput, kPipeOutput };
// The kind of input name: "" or "-" standard input, "cmd |" a pipe, "file:123" a file at an
// offset, else a file; kNoInput for a specifier ("ark:x") or a malformed name. A remote name
// (s3://, http://), which Input opens, is kFileInput, as Kaldi classifies such a string.
TABLIO_IMPL InputType ClassifyRxfilename(const std::string& name);
// The kind of output name: "" or "-" standard output, "| cmd" a pipe, else a file (a remote
// name too, which Output opens, as Kaldi classifies such a string); kNoOutput for a specifier,
// a "file:offset" or a malformed name.
TABLIO_IMPL OutputType ClassifyWxfilename(const std::string& name);

// Input: an rxfilename as a std::istream; with contents_binary, reads the "\0B" header.
class Input {
 public:
  Input() = default;
  // Opens rxfilename (a file, "-", "cmd |", "file:offset", a remote name); throws tablio::error
  // when it cannot. With contents_binary, consumes a "\0B" header and says whether there was one.
  explicit Input(const std::string& rxfilename, bool* contents_binary = nullptr);
  // Opens as the constructor does, closing what was open; false, the error passed to
  // report_error(), where the constructor throws.
  bool Open(const std::string& rxfilename, bool* contents_binary = nullptr);
  // Whether an input is open.
  bool IsOpen() const noexcept { return static_cast<bool>(stream_); }
  // The input as a std::istream, valid until Close(); throws usage_error when none is open.
  std::istream& Stream();
  // Closes the input: 0 on success (and when none was open), 1 when closing failed (a pipe's
  // command that failed, for one), the error reported. Kaldi gives a pipe's exit status instead.
  int32 Close();
  ~Input();

 private:
  void open(const std::string& rxfilename, bool* contents_binary);
  owned<reader> reader_;
  owned<reader_streambuf> buffer_;
  owned<std::istream> stream_;
};

// Output: a wxfilename as a std::ostream; binary outputs start with "\0B".
class Output {
 public:
  Output() = default;
  // Opens wxfilename (a file, "-", "| cmd", a remote name) for writing, with "\0B" first when
  // binary and write_header; throws tablio::error when it cannot. Text is written with 7 digits.
  Output(const std::string& wxfilename, bool binary, bool write_header = true);
  // Opens as the constructor does, closing what was open; false, the error passed to
  // report_error(), where the constructor throws.
  bool Open(const std::string& wxfilename, bool binary, bool write_header);
  // Whether an output is open.
  bool IsOpen() const noexcept { return static_cast<bool>(stream_); }
  // The output as a std::ostream, valid until Close(); throws usage_error when none is open.
  std::ostream& Stream();
  // Flushes and closes the output: false when a write, the close or a pipe's command failed,
  // the error reported. Call it to know the bytes arrived: the destructor can only report.
  bool Close();
  ~Output();

 private:
  void open(const std::string& wxfilename, bool binary, bool write_header);
  owned<writer> writer_;
  owned<writer_streambuf> buffer_;
  owned<std::ostream> stream_;
};

}  // namespace kaldi

TABLIO_END_NAMESPACE

#if TABLIO_HEADER_IMPLEMENTATION
TABLIO_BEGIN_NAMESPACE

namespace kaldi {

TABLIO_IMPL void WriteToken(std::ostream& os, bool, const std::string& token) {
  detail::on_writer(os, [&](writer& w) { kaldi_io::write_token(w, token); });
}
TABLIO_IMPL void ReadToken(std::istream& is, bool, std::string* token) {
  detail::on_reader(is, [&](reader& r) { kaldi_io::read_token(r, *token); });
}
TABLIO_IMPL void ExpectToken(std::istream& is, bool, const std::string& token) {
  detail::on_reader(is, [&](reader& r) { kaldi_io::expect_token(r, token); });
}
TABLIO_IMPL int PeekToken(std::istream& is, bool) {
  return detail::on_reader(is, [&](reader& r) { return kaldi_io::peek_token(r); });
}
TABLIO_IMPL int Peek(std::istream& is, bool binary) {
  return detail::on_reader(is, [&](reader& r) { return kaldi_io::peek(r, binary); });
}
TABLIO_IMPL void InitKaldiOutputStream(std::ostream& os, bool binary) {
  if (binary) os.write("\0B", 2);
  if (os.precision() < 7) os.precision(7);
}
TABLIO_IMPL bool InitKaldiInputStream(std::istream& is, bool* binary) {
  *binary = detail::on_reader(is, [&](reader& r) { return kaldi_io::read_binary_header(r); });
  return true;
}

TABLIO_IMPL InputType ClassifyRxfilename(const std::string& name) {
  switch (classify_rxfilename(name)) {
    case input_kind::file:
    case input_kind::remote:
      return kFileInput;
    case input_kind::standard_input:
      return kStandardInput;
    case input_kind::offset_file:
      return kOffsetFileInput;
    case input_kind::pipe:
      return kPipeInput;
    default:
      return kNoInput;
  }
}
TABLIO_IMPL OutputType ClassifyWxfilename(const std::string& name) {
  switch (classify_wxfilename(name)) {
    case output_kind::file:
    case output_kind::remote:
      return kFileOutput;
    case output_kind::standard_output:
      return kStandardOutput;
    case output_kind::pipe:
      return kPipeOutput;
    default:
      return kNoOutput;
  }
}

TABLIO_IMPL Input::Input(const std::string& rxfilename, bool* contents_binary) {
  open(rxfilename, contents_binary);
}
TABLIO_IMPL bool Input::Open(const std::string& rxfilename, bool* contents_binary) {
  return detail::succeeded([&] { open(rxfilename, contents_binary); });
}
TABLIO_IMPL std::istream& Input::Stream() {
  if (!stream_) throw_usage_error({"Input::Stream() on an input that is not open"});
  return *stream_;
}
TABLIO_IMPL int32 Input::Close() {
  stream_.reset();
  buffer_.reset();
  if (!reader_) return 0;
  auto in = std::move(reader_);
  return detail::succeeded([&] { in->close(); }) ? 0 : 1;
}
TABLIO_IMPL Input::~Input() { Close(); }
TABLIO_IMPL void Input::open(const std::string& rxfilename, bool* contents_binary) {
  Close();
  reader_ = make_owned<reader>(open_input(rxfilename));
  if (contents_binary) *contents_binary = kaldi_io::read_binary_header(*reader_);
  buffer_ = make_owned<reader_streambuf>(*reader_);
  stream_ = make_owned<std::istream>(buffer_.get());
}

TABLIO_IMPL Output::Output(const std::string& wxfilename, bool binary, bool write_header) {
  open(wxfilename, binary, write_header);
}
TABLIO_IMPL bool Output::Open(const std::string& wxfilename, bool binary, bool write_header) {
  return detail::succeeded([&] { open(wxfilename, binary, write_header); });
}
TABLIO_IMPL std::ostream& Output::Stream() {
  if (!stream_) throw_usage_error({"Output::Stream() on an output that is not open"});
  return *stream_;
}
TABLIO_IMPL bool Output::Close() {
  stream_.reset();
  buffer_.reset();
  if (!writer_) return true;
  auto out = std::move(writer_);
  return detail::succeeded([&] { out->close(); });
}
TABLIO_IMPL Output::~Output() { Close(); }
TABLIO_IMPL void Output::open(const std::string& wxfilename, bool binary, bool write_header) {
  Close();
  writer_ = make_owned<writer>(open_output(wxfilename));
  if (binary && write_header) kaldi_io::write_binary_header(*writer_);
  buffer_ = make_owned<writer_streambuf>(*writer_);
  stream_ = make_owned<std::ostream>(buffer_.get());
  stream_->precision(7);
}

}  // namespace kaldi

TABLIO_END_NAMESPACE
#endif  // TABLIO_HEADER_IMPLEMENTATION
