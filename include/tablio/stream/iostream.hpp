// Bridges between tablio streams and std::iostream, both ways:
// - istream_source / ostream_sink let tablio read from or write to any std::istream/ostream;
// - reader_streambuf / writer_streambuf let code written against std::istream/ostream (such as
//   Kaldi-style Read/Write members) run on a tablio reader/writer, sharing its buffer window
//   so no byte is copied twice.
#pragma once

#include <tablio/stream/reader.hpp>
#include <tablio/stream/writer.hpp>

#include <istream>
#include <ostream>
#include <streambuf>

TABLIO_BEGIN_NAMESPACE

// Reads a std::istream, which must outlive it: it models the Source concept.
class istream_source {
 public:
  // A source over is; `name` is what errors call it.
  explicit istream_source(std::istream& is, std::string name = "<istream>")
      : is_(&is), name_(std::move(name)) {}
  // The Source concept: reads up to n bytes into dst, fewer only at the end; io_error when the
  // stream goes bad.
  std::size_t read_some(char* dst, std::size_t n) {
    is_->read(dst, static_cast<std::streamsize>(n));
    std::size_t got = static_cast<std::size_t>(is_->gcount());
    if (is_->bad()) throw_io_error(name_, 0, {"cannot read from stream"});
    return got;
  }

 private:
  std::istream* is_;
  std::string name_;
};

// Writes to a std::ostream, which must outlive it: it models the Sink concept.
class ostream_sink {
 public:
  // A sink into os; `name` is what errors call it.
  explicit ostream_sink(std::ostream& os, std::string name = "<ostream>")
      : os_(&os), name_(std::move(name)) {}
  // The Sink concept: writes the n bytes at src; io_error when the stream fails.
  void write(const char* src, std::size_t n) {
    os_->write(src, static_cast<std::streamsize>(n));
    if (!*os_) throw_io_error(name_, 0, {"cannot write to stream"});
  }
  // The Sink concept: flushes the stream; io_error when it fails.
  void flush() {
    os_->flush();
    if (!*os_) throw_io_error(name_, 0, {"cannot flush stream"});
  }

 private:
  std::ostream* os_;
  std::string name_;
};

// A read-only streambuf whose get area is the reader's window. Bytes consumed through the
// streambuf are consumed from the reader when the streambuf is destroyed.
class reader_streambuf final : public std::streambuf {
 public:
  // A streambuf over r, which must outlive it, reading from r's current position.
  explicit reader_streambuf(reader& r) : r_(r) { take_window(); }
  ~reader_streambuf() override { r_.advance(static_cast<std::size_t>(gptr() - eback())); }

  // The reader, positioned where this streambuf has read to. Call resync() after using it
  // directly, before reading through the streambuf again.
  reader& underlying() {
    r_.advance(static_cast<std::size_t>(gptr() - eback()));
    setg(nullptr, nullptr, nullptr);
    return r_;
  }
  // Takes the reader's window again, after underlying() was used directly.
  void resync() { take_window(); }
  reader_streambuf(const reader_streambuf&) = delete;
  reader_streambuf& operator=(const reader_streambuf&) = delete;

 protected:
  int_type underflow() override {
    r_.advance(static_cast<std::size_t>(gptr() - eback()));
    if (!r_.fill()) {
      setg(nullptr, nullptr, nullptr);
      return traits_type::eof();
    }
    take_window();
    return traits_type::to_int_type(*gptr());
  }
  std::streamsize xsgetn(char* dst, std::streamsize n) override {
    r_.advance(static_cast<std::size_t>(gptr() - eback()));
    std::size_t got = r_.read_some(dst, static_cast<std::size_t>(n));
    take_window();
    return static_cast<std::streamsize>(got);
  }

 private:
  void take_window() {
    std::span<const char> w = r_.window();
    char* b = const_cast<char*>(w.data());  // never written: this streambuf has no put area
    setg(b, b, b + w.size());
  }
  reader& r_;
};

// A streambuf whose put area is the writer's window. Bytes written are committed to the
// writer on sync() and when the streambuf is destroyed.
class writer_streambuf final : public std::streambuf {
 public:
  // A streambuf over w, which must outlive it, writing where w writes next.
  explicit writer_streambuf(writer& w) : w_(w) { take_window(); }
  ~writer_streambuf() override { commit(); }

  // The writer, with everything written through this streambuf committed. Call resync()
  // after writing to it directly, before writing through the streambuf again.
  writer& underlying() {
    commit();
    return w_;
  }
  // Takes the writer's window again, after underlying() was used directly.
  void resync() { take_window(); }
  writer_streambuf(const writer_streambuf&) = delete;
  writer_streambuf& operator=(const writer_streambuf&) = delete;

 protected:
  int_type overflow(int_type c) override {
    commit();
    w_.reserve(1);
    take_window();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* src, std::streamsize n) override {
    commit();
    w_.write(src, static_cast<std::size_t>(n));
    take_window();
    return n;
  }
  int sync() override {
    commit();
    take_window();
    return 0;
  }

 private:
  void commit() {
    w_.advance(static_cast<std::size_t>(pptr() - pbase()));
    setp(nullptr, nullptr);
  }
  void take_window() {
    std::span<char> win = w_.window();
    setp(win.data(), win.data() + win.size());
  }
  writer& w_;
};

TABLIO_END_NAMESPACE
