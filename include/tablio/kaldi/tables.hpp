// Kaldi's tables over tablio's: TableWriter, SequentialTableReader, RandomAccessTableReader
// and RandomAccessTableReaderMapped, and the typedefs of Kaldi's util/table-types.h.
#pragma once

#include <tablio/framing/scp.hpp>
#include <tablio/kaldi/holders.hpp>
#include <tablio/kaldi/htk.hpp>
#include <tablio/kaldi/logging.hpp>
#include <tablio/kaldi/matrix.hpp>
#include <tablio/kaldi/sparse.hpp>
#include <tablio/kaldi/wave.hpp>
#include <tablio/table/compiled_basic_tables.hpp>

#include <cstdlib>
#include <exception>
#include <string>
#include <utility>

TABLIO_BEGIN_NAMESPACE

namespace kaldi {

namespace detail {
// Closes a TableWriter's table by calling close(writer): a pipe whose command exits non-zero
// is a warning, as Kaldi's pipes report it; any other failure throws. Out of line, with the
// one below, so that no program compiles their handlers once per holder.
TABLIO_IMPL void close_table_writer(void (*close)(void*), void* writer);
// The same from a TableWriter's destructor: a failure is logged as Kaldi's KALDI_ERR would,
// then the program aborts; unless an exception is unwinding the stack already, which is then
// the error the program reports.
TABLIO_IMPL void close_table_writer_at_exit(void (*close)(void*), void* writer) noexcept;
// What a table made from an empty specifier (so never opened) does when it is used: Kaldi's
// error, logged and thrown as KaldiFatalError, naming the class.
[[noreturn]] TABLIO_RARELY_USED TABLIO_IMPL void empty_table_used(const char* table);
}  // namespace detail

// ----- tables
// Each table takes Kaldi's holders and holders written Kaldi's way (kaldi_style_holder). As in
// Kaldi, a table made from an empty specifier is not opened: programs build tables from
// options that default to "" and write to them only when the option was given.

// Kaldi's TableWriter<Holder>, over tablio::table_writer: a wspecifier ("ark:f.ark",
// "ark,scp:f.ark,f.scp", and tablio's own framings) and Kaldi's member names.
template <class Holder>
class TableWriter {
 public:
  using T = typename table_holder_t<Holder>::value_type;
  TableWriter() = default;
  // Opens the table unless wspecifier is empty; throws tablio::error when it cannot.
  explicit TableWriter(const std::string& wspecifier) {
    if (!wspecifier.empty()) w_.open(wspecifier);
  }
  TableWriter(const TableWriter&) = delete;
  TableWriter& operator=(const TableWriter&) = delete;
  // Closes the table if it is open. As in Kaldi, a table that cannot be written to its end is
  // fatal here: the error is logged and the program aborts (unless an exception is already
  // unwinding), so that no program exits 0 having lost its last entries.
  ~TableWriter() {
    if (w_.is_open()) detail::close_table_writer_at_exit(&close_writer, &w_);
  }
  // Opens the table, closing what was open; false, the error passed to report_error(), when
  // it cannot.
  bool Open(const std::string& wspecifier) {
    return detail::succeeded([&] { w_.open(wspecifier); });
  }
  // Whether a table is open.
  bool IsOpen() const { return w_.is_open(); }
  // Writes one entry; throws tablio::error (a key the output cannot hold, a failed write, a
  // table that is not open). const, as Kaldi's.
  void Write(const std::string& key, const T& value) const {
    if (!w_.is_open()) detail::empty_table_used("TableWriter");
    w_.write(key, value);
  }
  // Writes what threads still encode and flushes the output; a failure throws here, where
  // Kaldi's leaves it to the next Write or Close.
  void Flush() { w_.flush(); }
  // Flushes and closes the table: false, the error reported, when anything was lost. A pipe
  // whose command exits non-zero is a warning, as in Kaldi: its bytes were all handed over.
  bool Close() {
    return detail::succeeded([&] { detail::close_table_writer(&close_writer, &w_); });
  }

 private:
  using writer_type = table_writer<table_holder_t<Holder>>;
  static void close_writer(void* w) { static_cast<writer_type*>(w)->close(); }
  mutable writer_type w_;
};

// Kaldi's SequentialTableReader<Holder>, over tablio::sequential_table_reader: the entries of
// an rspecifier in order, with Kaldi's member names. As Kaldi's, an invalid line in a script
// ends the table with a warning; tablio's reader throws script_line_error there.
template <class Holder>
class SequentialTableReader {
 public:
  using T = typename table_holder_t<Holder>::value_type;
  SequentialTableReader() = default;
  // Opens the table, unless rspecifier is empty, and reads its first entry; throws
  // tablio::error when it cannot.
  explicit SequentialTableReader(const std::string& rspecifier) {
    if (!rspecifier.empty()) open(rspecifier);
  }
  // Opens the table; false, the error passed to report_error() and the reader closed, when it
  // cannot (including when the first entry cannot be read).
  bool Open(const std::string& rspecifier) {
    if (detail::succeeded([&] { open(rspecifier); })) return true;
    r_ = {};  // as in Kaldi, a table whose first entry cannot be read is not open
    open_ = false;
    return false;
  }
  // Whether a table is open: opened and not closed, read to its end or not, as in Kaldi.
  bool IsOpen() const { return open_; }
  // Whether every entry has been passed (or a script's invalid line ended the table): Key()
  // and Value() are then not to be called.
  // As in Kaldi, using a reader that is not open (made from an empty specifier) is an error:
  // KaldiFatalError, here and in the members below.
  bool Done() const { return ended_ || opened().done(); }
  // The current entry's key (a copy, as Kaldi returns).
  std::string Key() { return opened().key(); }
  // The current entry's value, decoded on first use; valid until Next(), FreeCurrent() or
  // Close(). Throws format_error when it cannot be read.
  T& Value() { return opened().value(); }
  // Moves to the next entry; throws usage_error when Done().
  void Next() {
    at_script_line([&] { opened().next(); });
  }
  // Frees the current value's memory, for a caller done with it before Next().
  void FreeCurrent() { opened().free_current(); }
  // Closes the table: false, the error reported, when it failed (a pipe's command, say, or a
  // script's invalid line, as in Kaldi).
  bool Close() {
    const bool ended = std::exchange(ended_, false);
    open_ = false;
    return detail::succeeded([&] { r_.close(); }) && !ended;
  }

 private:
  void open(const std::string& rspecifier) {
    ended_ = false;
    open_ = false;
    at_script_line([&] { r_.open(rspecifier); });
    open_ = true;
  }
  template <class F>
  void at_script_line(F&& f) {
    try {
      f();
    } catch (const script_line_error& e) {
      KALDI_WARN << e.what();
      ended_ = true;
    }
  }
  using reader_type = sequential_table_reader<table_holder_t<Holder>>;
  reader_type& opened() const {
    if (!open_) detail::empty_table_used("SequentialTableReader");
    return r_;
  }
  mutable reader_type r_;
  bool open_ = false;  // opened and not closed (r_ closes itself at the end of the table)
  bool ended_ = false;
};

// Kaldi's RandomAccessTableReader<Holder>, over tablio::random_access_table_reader: values
// looked up by key, with Kaldi's member names and its rule that a value is valid until the
// next call.
template <class Holder>
class RandomAccessTableReader {
 public:
  using T = typename table_holder_t<Holder>::value_type;
  RandomAccessTableReader() = default;
  // Opens the table unless rspecifier is empty; throws tablio::error when it cannot.
  explicit RandomAccessTableReader(const std::string& rspecifier) {
    if (!rspecifier.empty()) r_.open(rspecifier);
  }
  // Opens the table; false, the error passed to report_error(), when it cannot.
  bool Open(const std::string& rspecifier) {
    return detail::succeeded([&] { r_.open(rspecifier); });
  }
  // Whether a table is open.
  bool IsOpen() const { return r_.is_open(); }
  // Whether the table has the key; under the 'p' option, also whether its value can be read.
  bool HasKey(const std::string& key) { return opened().contains(key); }
  // The value for key, valid until the next call on this reader; throws missing_key_error when
  // the table has no such key, format_error when its value cannot be read.
  const T& Value(const std::string& key) { return opened().borrow_at(key); }
  // Closes the table: false, the error reported, when it failed.
  bool Close() {
    return detail::succeeded([&] { r_.close(); });
  }

 private:
  random_access_table_reader<table_holder_t<Holder>>& opened() {
    if (!r_.is_open()) detail::empty_table_used("RandomAccessTableReader");
    return r_;
  }
  random_access_table_reader<table_holder_t<Holder>> r_;
};

// Kaldi's RandomAccessTableReaderMapped<Holder>: a per-speaker table looked up by utterance
// through an utt2spk map.
template <class Holder>
class RandomAccessTableReaderMapped {
 public:
  using T = typename table_holder_t<Holder>::value_type;
  RandomAccessTableReaderMapped() = default;
  // Opens the table, unless table_rxfilename is empty, and the map (both rspecifiers, despite
  // the names Kaldi gives them); an empty utt2spk_rxfilename means no map. Throws
  // tablio::error when either cannot be opened.
  RandomAccessTableReaderMapped(const std::string& table_rxfilename, const std::string& utt2spk_rxfilename) {
    if (!table_rxfilename.empty()) r_.open(table_rxfilename, utt2spk_rxfilename);
  }
  // Opens as the constructor does, closing what was open; false, the error passed to
  // report_error(), when it cannot.
  bool Open(const std::string& table_rxfilename, const std::string& utt2spk_rxfilename) {
    return detail::succeeded([&] { r_.open(table_rxfilename, utt2spk_rxfilename); });
  }
  // Whether a table is open.
  bool IsOpen() const { return r_.is_open(); }
  // Whether the table has the key's speaker; an utterance missing from the map throws
  // missing_key_error, as Kaldi's errors.
  bool HasKey(const std::string& key) { return opened().contains(key); }
  // The value for the key's speaker, valid until the next call; throws missing_key_error when
  // the map or the table lacks it.
  const T& Value(const std::string& key) { return opened().borrow_at(key); }
  // Closes the table and the map: false, the error reported, when either failed.
  bool Close() {
    return detail::succeeded([&] { r_.close(); });
  }

 private:
  random_access_table_reader_mapped<table_holder_t<Holder>>& opened() {
    if (!r_.is_open()) detail::empty_table_used("RandomAccessTableReaderMapped");
    return r_;
  }
  random_access_table_reader_mapped<table_holder_t<Holder>> r_;
};

// ----- the common typedefs of Kaldi's table-types.h
#define TABLIO_KALDI_TABLE_TYPES(Name, Holder)                        \
  using Name##Writer = TableWriter<Holder>;                           \
  using Sequential##Name##Reader = SequentialTableReader<Holder>;     \
  using RandomAccess##Name##Reader = RandomAccessTableReader<Holder>; \
  using RandomAccess##Name##ReaderMapped = RandomAccessTableReaderMapped<Holder>;
TABLIO_KALDI_TABLE_TYPES(BaseFloatMatrix, KaldiObjectHolder<Matrix<BaseFloat>>)
TABLIO_KALDI_TABLE_TYPES(DoubleMatrix, KaldiObjectHolder<Matrix<double>>)
TABLIO_KALDI_TABLE_TYPES(CompressedMatrix, KaldiObjectHolder<CompressedMatrix>)
TABLIO_KALDI_TABLE_TYPES(GeneralMatrix, KaldiObjectHolder<GeneralMatrix>)
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
TABLIO_KALDI_TABLE_TYPES(WaveInfo, WaveInfoHolder)
#undef TABLIO_KALDI_TABLE_TYPES

}  // namespace kaldi

// The facade's tables of Kaldi's common types, compiled once in the compiled mode.
#if defined(TABLIO_SEPARATE_COMPILATION)
TABLIO_COMPILED_TABLES(holder<kaldi::Matrix<float>>)
TABLIO_COMPILED_TABLES(holder<kaldi::Matrix<double>>)
TABLIO_COMPILED_TABLES(holder<kaldi::Vector<float>>)
TABLIO_COMPILED_TABLES(holder<kaldi::CompressedMatrix>)
TABLIO_COMPILED_TABLES(holder<kaldi::GeneralMatrix>)
TABLIO_COMPILED_TABLES(kaldi::detail::wave_data_holder)
TABLIO_COMPILED_TABLES(kaldi::detail::wave_info_holder)
TABLIO_COMPILED_TABLES(kaldi::HtkMatrixHolder)
TABLIO_COMPILED_TABLES(kaldi::SphinxMatrixHolder<>)
#endif

TABLIO_END_NAMESPACE

#if TABLIO_HEADER_IMPLEMENTATION
TABLIO_BEGIN_NAMESPACE
namespace kaldi::detail {
TABLIO_IMPL void empty_table_used(const char* table) {
  KALDI_ERR << "Trying to use empty " << table
            << " (perhaps you passed the empty string as an argument to a program?)";
}
TABLIO_IMPL void close_table_writer(void (*close)(void*), void* writer) {
  try {
    close(writer);
  } catch (const command_error& e) {
    KALDI_WARN << e.what();
  }
}
TABLIO_IMPL void close_table_writer_at_exit(void (*close)(void*), void* writer) noexcept {
  try {
    close_table_writer(close, writer);
  } catch (const std::exception& e) {
    // Unwinding, the error on its way is the one the program reports, and it fails anyway.
    if (std::uncaught_exceptions() > 0) return;
    KALDI_WARN << e.what();
    MessageLogger message(LogMessageEnvelope::kError, "~TableWriter", __FILE__, __LINE__);
    message << "Error closing TableWriter [in destructor].";
    SendToLog(message.Envelope(), message.Text().c_str());
    std::abort();
  }
}
}  // namespace kaldi::detail
TABLIO_END_NAMESPACE
#endif  // TABLIO_HEADER_IMPLEMENTATION
