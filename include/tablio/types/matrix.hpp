// tablio::matrix<T> and tablio::vector<T> (T = float or double): contiguous, row-major, and
// stored exactly as Kaldi's Matrix and Vector objects by the Kaldi codecs. Reading accepts
// the other precision and, for matrices, compressed matrices (CM, CM2, CM3), decompressed
// bit-exactly. Other codecs store rows, columns and the data.
//
// A user's own matrix type becomes storable the same way any type does
// (docs/customization.md): a codec_traits specialization that reads into and writes from a
// tablio::matrix, or tablio_write/tablio_read members.
#pragma once

#include <tablio/codec/codec.hpp>
#include <tablio/types/compressed_matrix.hpp>
#include <tablio/types/kaldi_matrix_io.hpp>
#include <tablio/types/range.hpp>

#include <span>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// A Kaldi Matrix: rows x cols values of T, row-major and contiguous, or 0 x 0. The Kaldi codecs
// store it as Matrix<T>::Write does; every other codec as rows, columns and the values.
template <std::floating_point T>
class matrix {
 public:
  using value_type = T;

  matrix() = default;
  // A rows x cols matrix of zeros. Throws usage_error for a negative size, or rows or columns
  // alone zero (Kaldi would read such a matrix back as 0 x 0).
  matrix(std::int32_t rows, std::int32_t cols) { resize(rows, cols); }
  // A rows x cols matrix of the row-major values in data; throws usage_error when data does not
  // hold rows * cols values, or for a shape the constructor above refuses.
  matrix(std::int32_t rows, std::int32_t cols, std::vector<T> data)
      : data_(std::move(data)), rows_(rows), cols_(cols) {
    check_shape(rows, cols);
    if (data_.size() != static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols))
      throw_usage_error({"matrix data does not hold rows x cols values"});
  }

  // Rows (Kaldi's NumRows()).
  std::int32_t num_rows() const noexcept { return rows_; }
  // Columns (Kaldi's NumCols()).
  std::int32_t num_cols() const noexcept { return cols_; }
  // Elements: rows x cols.
  std::size_t size() const noexcept { return data_.size(); }
  // Whether it has no elements (0 x 0).
  bool empty() const noexcept { return data_.empty(); }
  // The elements, row after row, with no padding between rows (unlike Kaldi's stride).
  T* data() noexcept { return data_.data(); }
  const T* data() const noexcept { return data_.data(); }
  // The element at row r, column c, unchecked (Kaldi's m(r, c)).
  T& operator()(std::int32_t r, std::int32_t c) noexcept { return data_[index(r, c)]; }
  T operator()(std::int32_t r, std::int32_t c) const noexcept { return data_[index(r, c)]; }
  // Row r as num_cols() contiguous values, unchecked.
  std::span<T> row(std::int32_t r) noexcept {
    return {data_.data() + index(r, 0), static_cast<std::size_t>(cols_)};
  }
  std::span<const T> row(std::int32_t r) const noexcept {
    return {data_.data() + index(r, 0), static_cast<std::size_t>(cols_)};
  }
  // The std::vector of the elements, to move them in or out without a copy. Its size must stay
  // rows x cols: resize() changes the shape.
  std::vector<T>& storage() noexcept { return data_; }
  const std::vector<T>& storage() const noexcept { return data_; }

  // Resizes to rows x cols; values are zero. A matrix with no elements is 0 x 0, as in Kaldi.
  void resize(std::int32_t rows, std::int32_t cols) {
    check_shape(rows, cols);
    rows_ = rows;
    cols_ = cols;
    data_.assign(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols), T(0));
  }

  bool operator==(const matrix&) const = default;  // The same shape and values (NaN equals nothing).

  // Codecs other than Kaldi's: rows, columns, then the values as one array.
  template <class Codec>
  void tablio_write(writer& w, Codec) const {
    encode_to<Codec>(w, rows_);
    encode_to<Codec>(w, cols_);
    codec_primitives<Codec>::write_array(w, data_.data(), data_.size());
  }
  // Reads what tablio_write writes. Dimensions that are negative, or zero on one side only, or
  // more values than the input holds, throw format_error.
  template <class Codec>
  void tablio_read(reader& r, Codec) {
    std::uint64_t at = r.tell();
    std::int32_t rows, cols;
    decode_from<Codec>(r, rows);
    decode_from<Codec>(r, cols);
    if (rows < 0 || cols < 0 || (rows == 0) != (cols == 0))
      r.fail_at(at, {"matrix dimensions both positive or both zero"}, {decimal(rows), "x", decimal(cols)});
    r.check_available(static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(cols),
                      min_encoded_size<Codec, T>(), "matrix elements");
    rows_ = rows;
    cols_ = cols;
    detail::read_sized_array(r, data_, static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(cols),
                             [&](T* p, std::size_t k) { codec_primitives<Codec>::read_array(r, p, k); });
  }

  // Kaldi's object bodies (after "\0B" in binary): what Matrix<T>::Write/Read do.
  void write_kaldi(writer& w, bool binary) const {
    if (binary)
      kaldi_io::write_matrix_binary(w, rows_, cols_, data_.data());
    else
      kaldi_io::write_matrix_text(w, rows_, cols_, data_.data());
  }
  // Reads a Matrix object body: in binary "FM", "DM" (the other precision converted) or a
  // compressed matrix (CM, CM2, CM3, decompressed); in text Kaldi's bracketed rows. Anything
  // else throws format_error.
  void read_kaldi(reader& r, bool binary) {
    if (!binary) {
      kaldi_io::read_matrix_text(r, rows_, cols_, data_);
      return;
    }
    int c = kaldi_io::peek(r, true);
    std::uint64_t at = r.tell();
    if (c == 'C') {
      compressed_matrix::read_decompressed(r, rows_, cols_, data_);
      return;
    }
    std::string token;
    kaldi_io::read_token(r, token);
    if (token == kaldi_io::matrix_token<T>()) {
      kaldi_io::read_matrix_binary_body<T>(r, rows_, cols_, data_);
    } else if (token == kaldi_io::matrix_token<other_precision>()) {
      kaldi_io::read_matrix_binary_body<other_precision>(r, rows_, cols_, data_);
    } else {
      r.fail_at(
          at,
          {"token ", kaldi_io::matrix_token<T>(), ", ", kaldi_io::matrix_token<other_precision>(), " or CM"},
          {"'", token, "'"});
    }
  }

 private:
  using other_precision = std::conditional_t<sizeof(T) == 4, double, float>;
  static void check_shape(std::int32_t rows, std::int32_t cols) { kaldi_io::check_matrix_shape(rows, cols); }
  std::size_t index(std::int32_t r, std::int32_t c) const noexcept {
    return static_cast<std::size_t>(r) * static_cast<std::size_t>(cols_) + static_cast<std::size_t>(c);
  }

  std::vector<T> data_;
  std::int32_t rows_ = 0;
  std::int32_t cols_ = 0;
};

// A Kaldi Vector: std::vector's storage with Kaldi's accessors. Every codec stores it as it
// stores std::vector<T> (Kaldi: "FV "/"DV ", dim, data; text " [ a b ]\n").
template <std::floating_point T>
class vector {
 public:
  using value_type = T;
  vector() = default;
  // dim zeros; a negative dim gives an empty vector.
  explicit vector(std::int32_t dim) : data_(static_cast<std::size_t>(dim < 0 ? 0 : dim), T(0)) {}
  // The values listed.
  vector(std::initializer_list<T> values) : data_(values) {}
  // The values of a std::vector, moved in.
  explicit vector(std::vector<T> values) : data_(std::move(values)) {}

  // Elements, as Kaldi's Dim() counts them.
  std::int32_t dim() const noexcept { return static_cast<std::int32_t>(data_.size()); }
  // Elements, as a std::size_t.
  std::size_t size() const noexcept { return data_.size(); }
  // The elements, contiguous.
  T* data() noexcept { return data_.data(); }
  const T* data() const noexcept { return data_.data(); }
  // Element i, unchecked (Kaldi's v(i)).
  T& operator()(std::int32_t i) noexcept { return data_[static_cast<std::size_t>(i)]; }
  T operator()(std::int32_t i) const noexcept { return data_[static_cast<std::size_t>(i)]; }
  // Element i, unchecked.
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  T operator[](std::size_t i) const noexcept { return data_[i]; }
  // dim zeros, the old values dropped (Kaldi's Resize(dim) with kSetZero); negative gives none.
  void resize(std::int32_t dim) { data_.assign(static_cast<std::size_t>(dim < 0 ? 0 : dim), T(0)); }
  // The std::vector of the elements, to move them in or out without a copy.
  std::vector<T>& storage() noexcept { return data_; }
  const std::vector<T>& storage() const noexcept { return data_; }
  bool operator==(const vector&) const = default;  // The same values (NaN equals nothing).

  // Every codec: as the std::vector<T> it holds.
  template <class Codec>
  void tablio_write(writer& w, Codec) const {
    encode_to<Codec>(w, data_);
  }
  // Reads what tablio_write writes (Kaldi's codecs accept the other precision too).
  template <class Codec>
  void tablio_read(reader& r, Codec) {
    decode_from<Codec>(r, data_);
  }

 private:
  std::vector<T> data_;
};

// Applies a script-file range ("0:9", "0:9,2:5", ":,2:5") to a matrix, as Kaldi does.
template <std::floating_point T>
void apply_range(matrix<T>& m, std::string_view range) {
  auto [r, c] = parse_matrix_range(range, m.num_rows(), m.num_cols());
  std::int32_t rows = m.num_rows(), cols = m.num_cols();
  keep_submatrix(m.storage(), rows, cols, r, c);
  m = matrix<T>(rows, cols, std::move(m.storage()));
}

// Applies a script-file range ("3:10") to a vector.
template <std::floating_point T>
void apply_range(vector<T>& v, std::string_view range) {
  index_range r = parse_vector_range(range, v.dim());
  std::vector<T>& data = v.storage();
  data.assign(data.begin() + r.first, data.begin() + r.last + 1);
}

// The Kaldi codecs store a matrix as Kaldi's Matrix object.
template <std::floating_point T>
struct codec_traits<kaldi_binary, matrix<T>> {
  // Writes m as Matrix::Write(os, true) does.
  static void write(writer& w, const matrix<T>& m) { m.write_kaldi(w, true); }
  // Reads a binary matrix, plain or compressed (see matrix::read_kaldi).
  static void read(reader& r, matrix<T>& m) { m.read_kaldi(r, true); }
  // Takes a compressed or text matrix off r undecoded, for a table's threads to decode; false,
  // having consumed nothing, for a plain binary one (see kaldi_io::skim_matrix_object).
  static bool skim_object(reader& r, skimmed_object& out) { return kaldi_io::skim_matrix_object(r, out); }
};
// The Kaldi text codec stores a matrix as Matrix::Write(os, false) does.
template <std::floating_point T>
struct codec_traits<kaldi_text, matrix<T>> {
  // Writes m as Kaldi's bracketed text rows.
  static void write(writer& w, const matrix<T>& m) { m.write_kaldi(w, false); }
  // Reads a text matrix as Matrix::Read(is, false) does.
  static void read(reader& r, matrix<T>& m) { m.read_kaldi(r, false); }
};

// The Kaldi codecs store a compressed matrix as Kaldi's CompressedMatrix; text mode holds the
// decompressed values, recompressed with the automatic method when read.
template <>
struct codec_traits<kaldi_binary, compressed_matrix> {
  // Writes m's stored bytes as CompressedMatrix::Write(os, true) does.
  static void write(writer& w, const compressed_matrix& m) { m.write_binary(w); }
  // Takes a compressed matrix off r undecoded, for a table's threads (see the matrix's).
  static bool skim_object(reader& r, skimmed_object& out) { return kaldi_io::skim_matrix_object(r, out); }
  // Reads a compressed matrix as stored, or a plain one (FM, DM) and compresses it with the
  // automatic method; a plain one with NaN values throws format_error.
  static void read(reader& r, compressed_matrix& m) {
    if (kaldi_io::peek(r, true) == 'C') {
      m.read_binary(r);
      return;
    }
    // A plain matrix where a compressed one is expected is compressed, as Kaldi's holder does.
    m = compressed_from_read(r, true);
  }
  // A matrix read and compressed: one that cannot be (NaN) is bad input at its offset.
  static compressed_matrix compressed_from_read(reader& r, bool binary) {
    std::uint64_t at = r.tell();
    matrix<float> plain;
    plain.read_kaldi(r, binary);
    for (float v : std::span<const float>(plain.data(), plain.size()))
      if (v != v) r.fail_at(at, {"a matrix that can be compressed"}, {"one with NaN values"});
    return compressed_matrix(plain.data(), plain.num_rows(), plain.num_cols());
  }
};
// The Kaldi text codec stores a compressed matrix as Kaldi does: its decompressed values.
template <>
struct codec_traits<kaldi_text, compressed_matrix> {
  // Writes m decompressed, as a text matrix.
  static void write(writer& w, const compressed_matrix& m) {
    std::vector<float> values(static_cast<std::size_t>(m.num_rows()) *
                              static_cast<std::size_t>(m.num_cols()));
    m.decompress(values.data());
    kaldi_io::write_matrix_text(w, m.num_rows(), m.num_cols(), values.data());
  }
  // Reads a text matrix and compresses it with the automatic method (not bit for bit the one
  // written, which text does not keep); NaN values throw format_error.
  static void read(reader& r, compressed_matrix& m) {
    m = codec_traits<kaldi_binary, compressed_matrix>::compressed_from_read(r, false);
  }
};

// A float matrix written as compressed_matrix(values, method) writes it, compressed where it
// is written: in a table writer's threads, which so share copy-feats --compress's work. A
// matrix that cannot be compressed (NaN) fails its write, and its entry is taken back. It
// reads as the matrix decompressed (method left automatic).
struct matrix_to_compress {
  matrix<float> values;
  compression_method method = compression_method::automatic;

  // The values compressed by `method`; throws usage_error for NaN or infinite values.
  compressed_matrix compressed() const {
    return compressed_matrix(values.data(), values.num_rows(), values.num_cols(), method);
  }
};

// The Kaldi binary codec stores a matrix_to_compress as a CompressedMatrix.
template <>
struct codec_traits<kaldi_binary, matrix_to_compress> {
  // Compresses m.values and writes the result; throws usage_error for NaN or infinite values.
  static void write(writer& w, const matrix_to_compress& m) { m.compressed().write_binary(w); }
  // Reads any binary matrix into m.values, decompressed; m.method is left as it was.
  static void read(reader& r, matrix_to_compress& m) { m.values.read_kaldi(r, true); }
  // Takes a compressed or text matrix off r undecoded, for a table's threads (see the matrix's).
  static bool skim_object(reader& r, skimmed_object& out) { return kaldi_io::skim_matrix_object(r, out); }
};
// The Kaldi text codec stores a matrix_to_compress as a text matrix of the compressed values.
template <>
struct codec_traits<kaldi_text, matrix_to_compress> {
  // Compresses m.values and writes the decompressed result as a text matrix, as Kaldi does.
  static void write(writer& w, const matrix_to_compress& m) {
    codec_traits<kaldi_text, compressed_matrix>::write(w, m.compressed());
  }
  // Reads a text matrix into m.values; m.method is left as it was.
  static void read(reader& r, matrix_to_compress& m) { m.values.read_kaldi(r, false); }
};

TABLIO_END_NAMESPACE
