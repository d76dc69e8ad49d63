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

using int8 = std::int8_t;
using int16 = std::int16_t;
using int32 = std::int32_t;
using int64 = std::int64_t;
using uint8 = std::uint8_t;
using uint16 = std::uint16_t;
using uint32 = std::uint32_t;
using uint64 = std::uint64_t;
using BaseFloat = float;
using MatrixIndexT = std::int32_t;
using KaldiFatalError = tablio::error;

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
template <class T>
void WriteBasicType(std::ostream& os, bool binary, T t) {
  detail::on_writer(os, [&](writer& w) { kaldi_io::write_basic_type(w, binary, t); });
}
template <class T>
void ReadBasicType(std::istream& is, bool binary, T* t) {
  detail::on_reader(is, [&](reader& r) { kaldi_io::read_basic_type(r, binary, *t); });
}
template <class T>
void ReadBasicType(std::istream& is, bool binary, T* t, bool add) {
  detail::on_reader(is, [&](reader& r) { kaldi_io::read_basic_type(r, binary, *t, add); });
}
TABLIO_IMPL void WriteToken(std::ostream& os, bool binary, const std::string& token);
TABLIO_IMPL void ReadToken(std::istream& is, bool binary, std::string* token);
TABLIO_IMPL void ExpectToken(std::istream& is, bool binary, const std::string& token);
TABLIO_IMPL int PeekToken(std::istream& is, bool binary);
TABLIO_IMPL int Peek(std::istream& is, bool binary);
template <class T>
void WriteIntegerVector(std::ostream& os, bool binary, const std::vector<T>& v) {
  detail::on_writer(os, [&](writer& w) { kaldi_io::write_integer_vector(w, binary, v); });
}
template <class T>
void ReadIntegerVector(std::istream& is, bool binary, std::vector<T>* v) {
  detail::on_reader(is, [&](reader& r) { kaldi_io::read_integer_vector(r, binary, *v); });
}
template <class T>
void WriteIntegerPairVector(std::ostream& os, bool binary, const std::vector<std::pair<T, T>>& v) {
  detail::on_writer(os, [&](writer& w) { kaldi_io::write_integer_pair_vector(w, binary, v); });
}
template <class T>
void ReadIntegerPairVector(std::istream& is, bool binary, std::vector<std::pair<T, T>>* v) {
  detail::on_reader(is, [&](reader& r) { kaldi_io::read_integer_pair_vector(r, binary, *v); });
}
TABLIO_IMPL void InitKaldiOutputStream(std::ostream& os, bool binary);
TABLIO_IMPL bool InitKaldiInputStream(std::istream& is, bool* binary);

// ----- extended filenames
enum InputType { kNoInput, kFileInput, kStandardInput, kOffsetFileInput, kPipeInput };
enum OutputType { kNoOutput, kFileOutput, kStandardOutput, kPipeOutput };
TABLIO_IMPL InputType ClassifyRxfilename(const std::string& name);
TABLIO_IMPL OutputType ClassifyWxfilename(const std::string& name);

// Input: an rxfilename as a std::istream; with contents_binary, reads the "\0B" header.
class Input {
 public:
  Input() = default;
  explicit Input(const std::string& rxfilename, bool* contents_binary = nullptr);
  bool Open(const std::string& rxfilename, bool* contents_binary = nullptr);
  bool IsOpen() const noexcept { return static_cast<bool>(stream_); }
  std::istream& Stream();
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
  Output(const std::string& wxfilename, bool binary, bool write_header = true);
  bool Open(const std::string& wxfilename, bool binary, bool write_header);
  bool IsOpen() const noexcept { return static_cast<bool>(stream_); }
  std::ostream& Stream();
  bool Close();
  ~Output();

 private:
  void open(const std::string& wxfilename, bool binary, bool write_header);
  owned<writer> writer_;
  owned<writer_streambuf> buffer_;
  owned<std::ostream> stream_;
};

// ----- value types with Kaldi's accessors
enum MatrixResizeType { kSetZero, kUndefined, kCopyData };
enum CompressionMethod {
  kAutomaticMethod = 1,
  kSpeechFeature = 2,
  kTwoByteAuto = 3,
  kTwoByteSignedInteger = 4,
  kOneByteAuto = 5,
  kOneByteUnsignedInteger = 6,
  kOneByteZeroOne = 7
};

template <class Real>
class Matrix : public tablio::matrix<Real> {
  using base = tablio::matrix<Real>;

 public:
  Matrix() = default;
  Matrix(MatrixIndexT rows, MatrixIndexT cols, MatrixResizeType = kSetZero) : base(rows, cols) {}
  Matrix(const base& m) : base(m) {}  // NOLINT: converts like Kaldi's copy constructors
  template <class Other>
  explicit Matrix(const Matrix<Other>& m) : base(m.NumRows(), m.NumCols()) {
    std::copy(m.Data(), m.Data() + m.size(), Data());
  }
  MatrixIndexT NumRows() const noexcept { return this->num_rows(); }
  MatrixIndexT NumCols() const noexcept { return this->num_cols(); }
  MatrixIndexT Stride() const noexcept { return this->num_cols(); }
  Real* Data() noexcept { return this->data(); }
  const Real* Data() const noexcept { return this->data(); }
  Real* RowData(MatrixIndexT r) noexcept { return this->data() + static_cast<std::size_t>(r) * NumCols(); }
  const Real* RowData(MatrixIndexT r) const noexcept {
    return this->data() + static_cast<std::size_t>(r) * NumCols();
  }
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
  void SetZero() { std::fill(Data(), Data() + this->size(), Real(0)); }
  void Set(Real v) { std::fill(Data(), Data() + this->size(), v); }
  void Write(std::ostream& os, bool binary) const {
    detail::on_writer(os, [&](writer& w) { this->write_kaldi(w, binary); });
  }
  void Read(std::istream& is, bool binary) {
    detail::on_reader(is, [&](reader& r) { this->read_kaldi(r, binary); });
  }
};

template <class Real>
class Vector : public tablio::vector<Real> {
  using base = tablio::vector<Real>;

 public:
  Vector() = default;
  explicit Vector(MatrixIndexT dim, MatrixResizeType = kSetZero) : base(dim) {}
  Vector(const base& v) : base(v) {}  // NOLINT
  MatrixIndexT Dim() const noexcept { return this->dim(); }
  Real* Data() noexcept { return this->data(); }
  const Real* Data() const noexcept { return this->data(); }
  void Resize(MatrixIndexT dim, MatrixResizeType type = kSetZero) {
    if (type == kCopyData)
      this->storage().resize(static_cast<std::size_t>(dim), Real(0));
    else
      this->resize(dim);
  }
  void SetZero() { std::fill(Data(), Data() + this->size(), Real(0)); }
  void Write(std::ostream& os, bool binary) const {
    detail::on_writer(os, [&](writer& w) { encode_with(w, binary); });
  }
  void Read(std::istream& is, bool binary) {
    detail::on_reader(is, [&](reader& r) { decode_with(r, binary); });
  }
  void encode_with(writer& w, bool binary) const {
    kaldi_io::with_codec(binary, [&](auto c) { encode_to<decltype(c)>(w, this->storage()); });
  }
  void decode_with(reader& r, bool binary) {
    kaldi_io::with_codec(binary, [&](auto c) { decode_from<decltype(c)>(r, this->storage()); });
  }
};

class CompressedMatrix : public compressed_matrix {
 public:
  CompressedMatrix() = default;
  CompressedMatrix(const compressed_matrix& m) : compressed_matrix(m) {}  // NOLINT
  template <class Real>
  explicit CompressedMatrix(const Matrix<Real>& m, CompressionMethod method = kAutomaticMethod)
      : compressed_matrix(m.Data(), m.NumRows(), m.NumCols(), static_cast<compression_method>(method)) {}
  MatrixIndexT NumRows() const noexcept { return num_rows(); }
  MatrixIndexT NumCols() const noexcept { return num_cols(); }
  template <class Real>
  void CopyToMat(Matrix<Real>* m) const {
    m->Resize(NumRows(), NumCols());
    if (!empty()) decompress(m->Data());
  }
  void Write(std::ostream& os, bool binary) const;
  void Read(std::istream& is, bool binary);
};

class WaveData {
 public:
  WaveData() = default;
  WaveData(BaseFloat samp_freq, const Matrix<BaseFloat>& data) : samp_freq_(samp_freq), data_(data) {}
  const Matrix<BaseFloat>& Data() const noexcept { return data_; }
  BaseFloat SampFreq() const noexcept { return samp_freq_; }
  BaseFloat Duration() const noexcept {
    return samp_freq_ > 0 ? static_cast<BaseFloat>(data_.NumCols()) / samp_freq_ : 0;
  }
  void Write(std::ostream& os) const;
  void Read(std::istream& is);
  void from(reader& r);
  wave_data to_wave() const { return wave_data(samp_freq_, data_); }

 private:
  BaseFloat samp_freq_ = 0;
  Matrix<BaseFloat> data_;
};

// ----- holders
template <class T>
using BasicHolder = basic_holder<T>;
template <class T>
using BasicVectorHolder = basic_vector_holder<T>;
template <class T>
using BasicVectorVectorHolder = basic_vector_vector_holder<T>;
template <class T>
using BasicPairVectorHolder = basic_pair_vector_holder<T>;
using TokenHolder = token_holder;
using TokenVectorHolder = token_vector_holder;
template <class T>
using KaldiObjectHolder = holder<T>;

class WaveHolder : public holder_storage<WaveData> {
 public:
  static void write(writer& w, bool binary, const WaveData& wave);
  void read(reader& r);
};

// ----- tables
template <class Holder>
class TableWriter {
 public:
  using T = typename Holder::value_type;
  TableWriter() = default;
  explicit TableWriter(const std::string& wspecifier) : w_(wspecifier) {}
  bool Open(const std::string& wspecifier) {
    return detail::succeeded([&] { w_.open(wspecifier); });
  }
  bool IsOpen() const { return w_.is_open(); }
  void Write(const std::string& key, const T& value) const { w_.write(key, value); }
  void Flush() { w_.flush(); }
  bool Close() {
    return detail::succeeded([&] { w_.close(); });
  }

 private:
  mutable table_writer<Holder> w_;
};

template <class Holder>
class SequentialTableReader {
 public:
  using T = typename Holder::value_type;
  SequentialTableReader() = default;
  explicit SequentialTableReader(const std::string& rspecifier) : r_(rspecifier) {}
  bool Open(const std::string& rspecifier) {
    if (detail::succeeded([&] { r_.open(rspecifier); })) return true;
    r_ = {};  // as in Kaldi, a table whose first entry cannot be read is not open
    return false;
  }
  bool IsOpen() const { return r_.is_open(); }
  bool Done() const { return r_.done(); }
  std::string Key() { return r_.key(); }
  T& Value() { return r_.value(); }
  void Next() { r_.next(); }
  void FreeCurrent() { r_.free_current(); }
  bool Close() {
    return detail::succeeded([&] { r_.close(); });
  }

 private:
  sequential_table_reader<Holder> r_;
};

template <class Holder>
class RandomAccessTableReader {
 public:
  using T = typename Holder::value_type;
  RandomAccessTableReader() = default;
  explicit RandomAccessTableReader(const std::string& rspecifier) : r_(rspecifier) {}
  bool Open(const std::string& rspecifier) {
    return detail::succeeded([&] { r_.open(rspecifier); });
  }
  bool IsOpen() const { return r_.is_open(); }
  bool HasKey(const std::string& key) { return r_.contains(key); }
  const T& Value(const std::string& key) { return r_.borrow_at(key); }  // valid until the next call
  bool Close() {
    return detail::succeeded([&] { r_.close(); });
  }

 private:
  random_access_table_reader<Holder> r_;
};

template <class Holder>
class RandomAccessTableReaderMapped {
 public:
  using T = typename Holder::value_type;
  RandomAccessTableReaderMapped(const std::string& table_rxfilename, const std::string& utt2spk_rxfilename)
      : r_(table_rxfilename, utt2spk_rxfilename) {}
  bool HasKey(const std::string& key) { return r_.contains(key); }
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
  static void write(writer& w, const kaldi::Matrix<Real>& m) { m.write_kaldi(w, C::binary); }
  static void read(reader& r, kaldi::Matrix<Real>& m) { m.read_kaldi(r, C::binary); }
};
template <class C, std::floating_point Real>
requires(std::same_as<C, kaldi_binary> ||
         std::same_as<C, kaldi_text>) struct codec_traits<C, kaldi::Vector<Real>> {
  static void write(writer& w, const kaldi::Vector<Real>& v) { v.encode_with(w, C::binary); }
  static void read(reader& r, kaldi::Vector<Real>& v) { v.decode_with(r, C::binary); }
};
template <class C>
requires(std::same_as<C, kaldi_binary> ||
         std::same_as<C, kaldi_text>) struct codec_traits<C, kaldi::CompressedMatrix> {
  static void write(writer& w, const kaldi::CompressedMatrix& m) {
    codec_traits<C, compressed_matrix>::write(w, m);
  }
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
