// Kaldi's names over tablio, so that Kaldi-style table code compiles after
//
//   namespace kaldi = tablio::kaldi;
//   using namespace kaldi;
//
// with no Kaldi library: TableWriter, SequentialTableReader, RandomAccessTableReader(Mapped),
// the holders, the common typedefs (BaseFloatMatrixWriter, SequentialInt32VectorReader, ...),
// Input/Output, ReadBasicType/WriteBasicType/ReadToken/WriteToken/ExpectToken,
// ClassifyRxfilename/ClassifyWxfilename, and Matrix/Vector/CompressedMatrix/WaveData with
// Kaldi's basic accessors. Errors are tablio exceptions (KaldiFatalError is tablio::error).
#pragma once

#include <tablio/codec/kaldi_io.hpp>
#include <tablio/codec/kaldi_object.hpp>
#include <tablio/core/owned.hpp>
#include <tablio/holder/holders.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/stream/iostream.hpp>
#include <tablio/table/compiled_basic_tables.hpp>
#include <tablio/types/matrix.hpp>
#include <tablio/types/wave.hpp>

#include <istream>
#include <ostream>
#include <string>
#include <vector>

TABLIO_BEGIN_NAMESPACE

namespace kaldi {

using int8 = std::int8_t;               // Kaldi's int8.
using int16 = std::int16_t;             // Kaldi's int16.
using int32 = std::int32_t;             // Kaldi's int32.
using int64 = std::int64_t;             // Kaldi's int64.
using uint8 = std::uint8_t;             // Kaldi's uint8.
using uint16 = std::uint16_t;           // Kaldi's uint16.
using uint32 = std::uint32_t;           // Kaldi's uint32.
using uint64 = std::uint64_t;           // Kaldi's uint64.
using BaseFloat = float;                // Kaldi's BaseFloat, float as Kaldi builds it by default.
using MatrixIndexT = std::int32_t;      // Kaldi's index of rows and columns.
using KaldiFatalError = tablio::error;  // What Kaldi's KALDI_ERR throws: every tablio error.

namespace detail {

// Kaldi's bool-returning Open/Close: false, with the error reported, instead of an exception.
template <class F>
bool succeeded(F&& f) {
  try {
    f();
    return true;
  } catch (const tablio::error& e) {
    report_error(e.what());
    return false;
  }
}

// Runs f on a tablio::reader positioned where `is` is: the stream's own reader when it is one
// of tablio's streams, otherwise a one-byte-at-a-time reader whose unread bytes go back.
template <class F>
decltype(auto) on_reader(std::istream& is, F&& f) {
  if (auto* bridge = dynamic_cast<reader_streambuf*>(is.rdbuf())) {
    struct resync {
      reader_streambuf* b;
      ~resync() { b->resync(); }
    } guard{bridge};
    return f(bridge->underlying());
  }
  reader r(istream_source(is), "<istream>", default_limits, 1);
  struct put_back {
    reader& r;
    std::istream& is;
    ~put_back() {
      std::span<const char> left = r.window();
      is.clear();
      for (auto it = left.rbegin(); it != left.rend(); ++it) is.putback(*it);
    }
  } guard{r, is};
  return f(r);
}

template <class F>
decltype(auto) on_writer(std::ostream& os, F&& f) {
  if (auto* bridge = dynamic_cast<writer_streambuf*>(os.rdbuf())) {
    struct resync {
      writer_streambuf* b;
      ~resync() { b->resync(); }
    } guard{bridge};
    return f(bridge->underlying());
  }
  writer w(ostream_sink(os), "<ostream>", 4096);
  struct closer {
    writer& w;
    ~closer() noexcept(false) { w.close(); }
  } guard{w};
  return f(w);
}

}  // namespace detail

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

// ----- value types with Kaldi's accessors
// How Matrix and Vector resize: kCopyData keeps the values that still fit; the other two zero
// every value (kUndefined too, where Kaldi leaves them unset).
enum MatrixResizeType { kSetZero, kUndefined, kCopyData };
// Kaldi's compression methods for CompressedMatrix, with Kaldi's values.
enum CompressionMethod {
  kAutomaticMethod = 1,
  kSpeechFeature = 2,
  kTwoByteAuto = 3,
  kTwoByteSignedInteger = 4,
  kOneByteAuto = 5,
  kOneByteUnsignedInteger = 6,
  kOneByteZeroOne = 7
};

// Kaldi's Matrix<Real> (float or double): a tablio::matrix with Kaldi's accessors, stored in
// tables exactly as tablio::matrix is. Rows are contiguous, with no padding between them.
template <class Real>
class Matrix : public tablio::matrix<Real> {
  using base = tablio::matrix<Real>;

 public:
  Matrix() = default;
  // A rows x cols matrix of zeros, whatever the resize type; throws usage_error for a negative
  // size, or for one of the two zero and not the other (Kaldi asserts the same).
  Matrix(MatrixIndexT rows, MatrixIndexT cols, MatrixResizeType = kSetZero) : base(rows, cols) {}
  Matrix(const base& m) : base(m) {}  // NOLINT: converts like Kaldi's copy constructors
  // A copy of a matrix of the other precision, each value converted (double to float rounds).
  template <class Other>
  explicit Matrix(const Matrix<Other>& m) : base(m.NumRows(), m.NumCols()) {
    std::copy(m.Data(), m.Data() + m.size(), Data());
  }
  // Number of rows.
  MatrixIndexT NumRows() const noexcept { return this->num_rows(); }
  // Number of columns.
  MatrixIndexT NumCols() const noexcept { return this->num_cols(); }
  // Elements from one row's start to the next's: always NumCols() here, where Kaldi may pad.
  MatrixIndexT Stride() const noexcept { return this->num_cols(); }
  // The NumRows() * NumCols() values, row after row.
  Real* Data() noexcept { return this->data(); }
  const Real* Data() const noexcept { return this->data(); }
  // The first value of row r, which is not checked against NumRows().
  Real* RowData(MatrixIndexT r) noexcept { return this->data() + static_cast<std::size_t>(r) * NumCols(); }
  const Real* RowData(MatrixIndexT r) const noexcept {
    return this->data() + static_cast<std::size_t>(r) * NumCols();
  }
  // Makes the matrix rows x cols (sizes checked as the constructor's); kCopyData keeps the
  // values of the rows and columns both sizes share, and every other value is zero.
  void Resize(MatrixIndexT rows, MatrixIndexT cols, MatrixResizeType type = kSetZero) {
    if (type == kCopyData) {
      base old = *this;
      this->resize(rows, cols);
      for (MatrixIndexT r = 0; r < std::min(rows, old.num_rows()); ++r)
        for (MatrixIndexT c = 0; c < std::min(cols, old.num_cols()); ++c) (*this)(r, c) = old(r, c);
    } else {
      this->resize(rows, cols);
    }
  }
  // Sets every value to zero.
  void SetZero() { std::fill(Data(), Data() + this->size(), Real(0)); }
  // Sets every value to v.
  void Set(Real v) { std::fill(Data(), Data() + this->size(), v); }
  // Writes the matrix as Kaldi does: binary "FM "/"DM ", rows, columns, values; text " [",
  // a line per row, and "]". No "\0B": that is InitKaldiOutputStream's or Output's.
  void Write(std::ostream& os, bool binary) const {
    detail::on_writer(os, [&](writer& w) { this->write_kaldi(w, binary); });
  }
  // Reads a matrix in the mode given, resizing to fit: in binary mode one of either precision
  // or a compressed one, decompressed, as Kaldi does; throws format_error on bad input.
  void Read(std::istream& is, bool binary) {
    detail::on_reader(is, [&](reader& r) { this->read_kaldi(r, binary); });
  }
};

// Kaldi's Vector<Real> (float or double): a tablio::vector with Kaldi's accessors, stored in
// tables exactly as tablio::vector is.
template <class Real>
class Vector : public tablio::vector<Real> {
  using base = tablio::vector<Real>;

 public:
  Vector() = default;
  // dim zeros, whatever the resize type (a negative dim makes an empty vector).
  explicit Vector(MatrixIndexT dim, MatrixResizeType = kSetZero) : base(dim) {}
  Vector(const base& v) : base(v) {}  // NOLINT
  // Number of values.
  MatrixIndexT Dim() const noexcept { return this->dim(); }
  // The Dim() values, contiguous.
  Real* Data() noexcept { return this->data(); }
  const Real* Data() const noexcept { return this->data(); }
  // Makes the vector dim long; kCopyData keeps the first values and zeroes the new ones, the
  // other types zero them all.
  void Resize(MatrixIndexT dim, MatrixResizeType type = kSetZero) {
    if (type == kCopyData)
      this->storage().resize(static_cast<std::size_t>(dim), Real(0));
    else
      this->resize(dim);
  }
  // Sets every value to zero.
  void SetZero() { std::fill(Data(), Data() + this->size(), Real(0)); }
  // Writes the vector as Kaldi does: binary "FV "/"DV ", the size, the values; text " [ a b ]"
  // and a newline.
  void Write(std::ostream& os, bool binary) const {
    detail::on_writer(os, [&](writer& w) { encode_with(w, binary); });
  }
  // Reads a vector in the mode given, resizing to fit; throws format_error on bad input.
  void Read(std::istream& is, bool binary) {
    detail::on_reader(is, [&](reader& r) { decode_with(r, binary); });
  }
  // Write() on a tablio::writer, for codecs (no Kaldi counterpart).
  void encode_with(writer& w, bool binary) const {
    kaldi_io::with_codec(binary, [&](auto c) { encode_to<decltype(c)>(w, this->storage()); });
  }
  // Read() from a tablio::reader, for codecs (no Kaldi counterpart).
  void decode_with(reader& r, bool binary) {
    kaldi_io::with_codec(binary, [&](auto c) { decode_from<decltype(c)>(r, this->storage()); });
  }
};

// Kaldi's CompressedMatrix: a tablio::compressed_matrix (Kaldi's "CM", "CM2", "CM3" formats)
// with Kaldi's accessors.
class CompressedMatrix : public compressed_matrix {
 public:
  CompressedMatrix() = default;
  // A copy of m, with Kaldi's accessors.
  CompressedMatrix(const compressed_matrix& m) : compressed_matrix(m) {}  // NOLINT
  // m compressed by `method`, as Kaldi compresses it.
  template <class Real>
  explicit CompressedMatrix(const Matrix<Real>& m, CompressionMethod method = kAutomaticMethod)
      : compressed_matrix(m.Data(), m.NumRows(), m.NumCols(), static_cast<compression_method>(method)) {}
  // Number of rows.
  MatrixIndexT NumRows() const noexcept { return num_rows(); }
  // Number of columns.
  MatrixIndexT NumCols() const noexcept { return num_cols(); }
  // Decompresses into *m, resizing it to fit, where Kaldi's requires m to be of the right size
  // already (and can transpose).
  template <class Real>
  void CopyToMat(Matrix<Real>* m) const {
    m->Resize(NumRows(), NumCols());
    if (!empty()) decompress(m->Data());
  }
  // Writes the compressed bytes in binary mode, as Kaldi does; in text mode the decompressed
  // values, as a Matrix writes them.
  void Write(std::ostream& os, bool binary) const;
  // Reads what Write wrote; a plain matrix (in text mode, always) is compressed with the
  // automatic method, as Kaldi does. Throws format_error on bad input or NaN values.
  void Read(std::istream& is, bool binary);
};

// Kaldi's WaveData: a sample frequency and a channels x samples matrix, read from and written
// as a RIFF/WAVE file.
class WaveData {
 public:
  WaveData() = default;
  // The samples, one row per channel, at samp_freq samples a second.
  WaveData(BaseFloat samp_freq, const Matrix<BaseFloat>& data) : samp_freq_(samp_freq), data_(data) {}
  // The samples: one row per channel, one column per sample.
  const Matrix<BaseFloat>& Data() const noexcept { return data_; }
  // Samples a second.
  BaseFloat SampFreq() const noexcept { return samp_freq_; }
  // Length in seconds, samples over SampFreq(); 0 when the frequency is not positive.
  BaseFloat Duration() const noexcept {
    return samp_freq_ > 0 ? static_cast<BaseFloat>(data_.NumCols()) / samp_freq_ : 0;
  }
  // Writes the wave as a RIFF/WAVE file, as tablio::wave_data writes it.
  void Write(std::ostream& os) const;
  // Reads a RIFF/WAVE file, replacing the samples and frequency; throws format_error on a file
  // that is not one wave_data reads.
  void Read(std::istream& is);
  // Read() from a tablio::reader (no Kaldi counterpart).
  void from(reader& r);
  // A copy as tablio's own wave_data (no Kaldi counterpart).
  wave_data to_wave() const { return wave_data(samp_freq_, data_); }

 private:
  BaseFloat samp_freq_ = 0;
  Matrix<BaseFloat> data_;
};

// ----- holders
// Kaldi's BasicHolder: one number or bool per entry.
template <class T>
using BasicHolder = basic_holder<T>;
// Kaldi's BasicVectorHolder: a vector of numbers per entry.
template <class T>
using BasicVectorHolder = basic_vector_holder<T>;
// Kaldi's BasicVectorVectorHolder: a vector of vectors of numbers per entry.
template <class T>
using BasicVectorVectorHolder = basic_vector_vector_holder<T>;
// Kaldi's BasicPairVectorHolder: a vector of pairs of numbers per entry.
template <class T>
using BasicPairVectorHolder = basic_pair_vector_holder<T>;
using TokenHolder = token_holder;               // Kaldi's TokenHolder: one token per entry.
using TokenVectorHolder = token_vector_holder;  // Kaldi's TokenVectorHolder: tokens per entry.
// Kaldi's KaldiObjectHolder: an object with Read and Write (a Matrix, a Vector...) per entry.
template <class T>
using KaldiObjectHolder = holder<T>;

// Kaldi's WaveHolder, a Holder of WaveData: one RIFF/WAVE file per entry, as wave_holder.
class WaveHolder : public holder_storage<WaveData> {
 public:
  // The Holder concept: writes the wave as a RIFF/WAVE file; throws usage_error in text mode,
  // as Kaldi does.
  static void write(writer& w, bool binary, const WaveData& wave);
  // The Holder concept: reads one RIFF/WAVE file into value().
  void read(reader& r);
};

// ----- tables

// Kaldi's TableWriter<Holder>, over tablio::table_writer: a wspecifier ("ark:f.ark",
// "ark,scp:f.ark,f.scp", and tablio's own framings) and Kaldi's member names.
template <class Holder>
class TableWriter {
 public:
  using T = typename Holder::value_type;
  TableWriter() = default;
  // Opens the table; throws tablio::error when it cannot.
  explicit TableWriter(const std::string& wspecifier) : w_(wspecifier) {}
  // Opens the table; false, the error passed to report_error(), when it cannot.
  bool Open(const std::string& wspecifier) {
    return detail::succeeded([&] { w_.open(wspecifier); });
  }
  // Whether a table is open.
  bool IsOpen() const { return w_.is_open(); }
  // Writes one entry; throws tablio::error (a key the output cannot hold, a failed write).
  // const, as Kaldi's.
  void Write(const std::string& key, const T& value) const { w_.write(key, value); }
  // Writes what threads still encode and flushes the output; a failure throws here, where
  // Kaldi's leaves it to the next Write or Close.
  void Flush() { w_.flush(); }
  // Flushes and closes the table: false, the error reported, when anything was lost.
  bool Close() {
    return detail::succeeded([&] { w_.close(); });
  }

 private:
  mutable table_writer<Holder> w_;
};

// Kaldi's SequentialTableReader<Holder>, over tablio::sequential_table_reader: the entries of
// an rspecifier in order, with Kaldi's member names.
template <class Holder>
class SequentialTableReader {
 public:
  using T = typename Holder::value_type;
  SequentialTableReader() = default;
  // Opens the table and reads its first entry; throws tablio::error when it cannot.
  explicit SequentialTableReader(const std::string& rspecifier) : r_(rspecifier) {}
  // Opens the table; false, the error passed to report_error() and the reader closed, when it
  // cannot (including when the first entry cannot be read).
  bool Open(const std::string& rspecifier) {
    if (detail::succeeded([&] { r_.open(rspecifier); })) return true;
    r_ = {};  // as in Kaldi, a table whose first entry cannot be read is not open
    return false;
  }
  // Whether a table is open.
  bool IsOpen() const { return r_.is_open(); }
  // Whether every entry has been passed: Key() and Value() are then not to be called.
  bool Done() const { return r_.done(); }
  // The current entry's key (a copy, as Kaldi returns).
  std::string Key() { return r_.key(); }
  // The current entry's value, decoded on first use; valid until Next(), FreeCurrent() or
  // Close(). Throws format_error when it cannot be read.
  T& Value() { return r_.value(); }
  // Moves to the next entry; throws usage_error when Done().
  void Next() { r_.next(); }
  // Frees the current value's memory, for a caller done with it before Next().
  void FreeCurrent() { r_.free_current(); }
  // Closes the table: false, the error reported, when it failed (a pipe's command, say).
  bool Close() {
    return detail::succeeded([&] { r_.close(); });
  }

 private:
  sequential_table_reader<Holder> r_;
};

// Kaldi's RandomAccessTableReader<Holder>, over tablio::random_access_table_reader: values
// looked up by key, with Kaldi's member names and its rule that a value is valid until the
// next call.
template <class Holder>
class RandomAccessTableReader {
 public:
  using T = typename Holder::value_type;
  RandomAccessTableReader() = default;
  // Opens the table; throws tablio::error when it cannot.
  explicit RandomAccessTableReader(const std::string& rspecifier) : r_(rspecifier) {}
  // Opens the table; false, the error passed to report_error(), when it cannot.
  bool Open(const std::string& rspecifier) {
    return detail::succeeded([&] { r_.open(rspecifier); });
  }
  // Whether a table is open.
  bool IsOpen() const { return r_.is_open(); }
  // Whether the table has the key; under the 'p' option, also whether its value can be read.
  bool HasKey(const std::string& key) { return r_.contains(key); }
  // The value for key, valid until the next call on this reader; throws missing_key_error when
  // the table has no such key, format_error when its value cannot be read.
  const T& Value(const std::string& key) { return r_.borrow_at(key); }  // valid until the next call
  // Closes the table: false, the error reported, when it failed.
  bool Close() {
    return detail::succeeded([&] { r_.close(); });
  }

 private:
  random_access_table_reader<Holder> r_;
};

// Kaldi's RandomAccessTableReaderMapped<Holder>: a per-speaker table looked up by utterance
// through an utt2spk map. Opened only by its constructor: it has no Open, IsOpen or Close.
template <class Holder>
class RandomAccessTableReaderMapped {
 public:
  using T = typename Holder::value_type;
  // Opens the table and the map (both rspecifiers, despite the names Kaldi gives them); an
  // empty utt2spk_rxfilename means no map. Throws tablio::error when either cannot be opened.
  RandomAccessTableReaderMapped(const std::string& table_rxfilename, const std::string& utt2spk_rxfilename)
      : r_(table_rxfilename, utt2spk_rxfilename) {}
  // Whether the table has the key's speaker; an utterance missing from the map throws
  // missing_key_error, as Kaldi's errors.
  bool HasKey(const std::string& key) { return r_.contains(key); }
  // The value for the key's speaker, valid until the next call; throws missing_key_error when
  // the map or the table lacks it.
  const T& Value(const std::string& key) { return r_.borrow_at(key); }  // valid until the next call

 private:
  random_access_table_reader_mapped<Holder> r_;
};

// Kaldi's ReadKaldiObject / WriteKaldiObject. As Kaldi's, reading a Matrix takes a range,
// "m.ark:10[0:9,2:5]": the matrix at m.ark:10, cut to rows 0-9 and columns 2-5.
template <class C>
void ReadKaldiObject(const std::string& rxfilename, C* c) {
  if constexpr (std::same_as<C, Matrix<float>> || std::same_as<C, Matrix<double>>) {
    if (!rxfilename.empty() && rxfilename.back() == ']') {
      auto ranged = split_range_specifier(rxfilename);
      if (!ranged) throw_usage_error({"cannot make sense of the range in '", rxfilename, "'"});
      ReadKaldiObject(std::string(ranged->rxfilename), c);
      try {
        apply_range(*c, ranged->range);
      } catch (const format_error& e) {
        throw format_error({rxfilename, std::nullopt, {}}, e.expected(), e.found());
      }
      return;
    }
  }
  bool binary = false;
  Input in(rxfilename, &binary);
  c->Read(in.Stream(), binary);
}
// Writes c to wxfilename with c.Write(os, binary), "\0B" first in binary mode; throws
// tablio::error when the output cannot be opened or closed.
template <class C>
void WriteKaldiObject(const C& c, const std::string& wxfilename, bool binary) {
  Output out(wxfilename, binary);
  c.Write(out.Stream(), binary);
  if (!out.Close()) throw_io_error(wxfilename, 0, {"cannot write"});
}

// ----- the common typedefs of Kaldi's table-types.h
#define TABLIO_KALDI_TABLE_TYPES(Name, Holder)                        \
  using Name##Writer = TableWriter<Holder>;                           \
  using Sequential##Name##Reader = SequentialTableReader<Holder>;     \
  using RandomAccess##Name##Reader = RandomAccessTableReader<Holder>; \
  using RandomAccess##Name##ReaderMapped = RandomAccessTableReaderMapped<Holder>;
TABLIO_KALDI_TABLE_TYPES(BaseFloatMatrix, KaldiObjectHolder<Matrix<BaseFloat>>)
TABLIO_KALDI_TABLE_TYPES(DoubleMatrix, KaldiObjectHolder<Matrix<double>>)
TABLIO_KALDI_TABLE_TYPES(CompressedMatrix, KaldiObjectHolder<CompressedMatrix>)
TABLIO_KALDI_TABLE_TYPES(BaseFloatVector, KaldiObjectHolder<Vector<BaseFloat>>)
TABLIO_KALDI_TABLE_TYPES(DoubleVector, KaldiObjectHolder<Vector<double>>)
TABLIO_KALDI_TABLE_TYPES(Int32, BasicHolder<int32>)
TABLIO_KALDI_TABLE_TYPES(Int64, BasicHolder<int64>)
TABLIO_KALDI_TABLE_TYPES(BaseFloat, BasicHolder<BaseFloat>)
TABLIO_KALDI_TABLE_TYPES(Double, BasicHolder<double>)
TABLIO_KALDI_TABLE_TYPES(Bool, BasicHolder<bool>)
TABLIO_KALDI_TABLE_TYPES(Int32Vector, BasicVectorHolder<int32>)
TABLIO_KALDI_TABLE_TYPES(Int32VectorVector, BasicVectorVectorHolder<int32>)
TABLIO_KALDI_TABLE_TYPES(Int32PairVector, BasicPairVectorHolder<int32>)
TABLIO_KALDI_TABLE_TYPES(BaseFloatPairVector, BasicPairVectorHolder<BaseFloat>)
TABLIO_KALDI_TABLE_TYPES(Token, TokenHolder)
TABLIO_KALDI_TABLE_TYPES(TokenVector, TokenVectorHolder)
TABLIO_KALDI_TABLE_TYPES(Wave, WaveHolder)
#undef TABLIO_KALDI_TABLE_TYPES

}  // namespace kaldi

// The facade's value types are stored exactly like the tablio types they extend.
template <class C, std::floating_point Real>
requires(std::same_as<C, kaldi_binary> ||
         std::same_as<C, kaldi_text>) struct codec_traits<C, kaldi::Matrix<Real>> {
  /// The codec_traits interface: writes m in C's mode, as Matrix::Write.
  static void write(writer& w, const kaldi::Matrix<Real>& m) { m.write_kaldi(w, C::binary); }
  /// The codec_traits interface: reads m in C's mode, as Matrix::Read.
  static void read(reader& r, kaldi::Matrix<Real>& m) { m.read_kaldi(r, C::binary); }
};
// The Kaldi codecs' codec_traits for the facade's Vector: stored as tablio::vector<Real> is.
template <class C, std::floating_point Real>
requires(std::same_as<C, kaldi_binary> ||
         std::same_as<C, kaldi_text>) struct codec_traits<C, kaldi::Vector<Real>> {
  /// The codec_traits interface: writes v in C's mode, as Vector::Write.
  static void write(writer& w, const kaldi::Vector<Real>& v) { v.encode_with(w, C::binary); }
  /// The codec_traits interface: reads v in C's mode, as Vector::Read.
  static void read(reader& r, kaldi::Vector<Real>& v) { v.decode_with(r, C::binary); }
};
// The Kaldi codecs' codec_traits for the facade's CompressedMatrix: stored as
// tablio::compressed_matrix is.
template <class C>
requires(std::same_as<C, kaldi_binary> ||
         std::same_as<C, kaldi_text>) struct codec_traits<C, kaldi::CompressedMatrix> {
  /// The codec_traits interface: writes m as a compressed_matrix in C's mode.
  static void write(writer& w, const kaldi::CompressedMatrix& m) {
    codec_traits<C, compressed_matrix>::write(w, m);
  }
  /// The codec_traits interface: reads m as a compressed_matrix in C's mode (a plain matrix is
  /// compressed).
  static void read(reader& r, kaldi::CompressedMatrix& m) { codec_traits<C, compressed_matrix>::read(r, m); }
};

// The facade's tables of Kaldi's common types, compiled once in the compiled mode.
#if defined(TABLIO_SEPARATE_COMPILATION)
TABLIO_COMPILED_TABLES(holder<kaldi::Matrix<float>>)
TABLIO_COMPILED_TABLES(holder<kaldi::Matrix<double>>)
TABLIO_COMPILED_TABLES(holder<kaldi::Vector<float>>)
TABLIO_COMPILED_TABLES(holder<kaldi::CompressedMatrix>)
TABLIO_COMPILED_TABLES(kaldi::WaveHolder)
#endif

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

TABLIO_IMPL void CompressedMatrix::Write(std::ostream& os, bool binary) const {
  detail::on_writer(os, [&](writer& w) {
    if (binary)
      encode_to<kaldi_binary>(w, static_cast<const compressed_matrix&>(*this));
    else
      encode_to<kaldi_text>(w, static_cast<const compressed_matrix&>(*this));
  });
}
TABLIO_IMPL void CompressedMatrix::Read(std::istream& is, bool binary) {
  detail::on_reader(is, [&](reader& r) {
    if (binary)
      decode_from<kaldi_binary>(r, static_cast<compressed_matrix&>(*this));
    else
      decode_from<kaldi_text>(r, static_cast<compressed_matrix&>(*this));
  });
}

TABLIO_IMPL void WaveData::Write(std::ostream& os) const {
  detail::on_writer(os, [&](writer& w) { wave_data(samp_freq_, data_).write(w); });
}
TABLIO_IMPL void WaveData::Read(std::istream& is) {
  detail::on_reader(is, [&](reader& r) { from(r); });
}
TABLIO_IMPL void WaveData::from(reader& r) {
  wave_data w;
  w.read(r);
  samp_freq_ = w.sample_frequency();
  data_ = Matrix<BaseFloat>(w.data());
}

TABLIO_IMPL void WaveHolder::write(writer& w, bool binary, const WaveData& wave) {
  wave_holder::write(w, binary, wave.to_wave());
}
TABLIO_IMPL void WaveHolder::read(reader& r) { value_.from(r); }

}  // namespace kaldi

TABLIO_END_NAMESPACE
#endif  // TABLIO_HEADER_IMPLEMENTATION
