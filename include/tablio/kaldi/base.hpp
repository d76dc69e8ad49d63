// The facade's foundation: Kaldi's integer and float typedefs, and the bridges that let
// Kaldi-style std::iostream code run on tablio's readers and writers without a copy.
#pragma once

#include <tablio/core/error.hpp>
#include <tablio/stream/iostream.hpp>
#include <tablio/stream/reader.hpp>
#include <tablio/stream/writer.hpp>

#include <cstdint>
#include <istream>
#include <ostream>
#include <span>

TABLIO_BEGIN_NAMESPACE

namespace kaldi {

using int8 = std::int8_t;           // Kaldi's int8.
using int16 = std::int16_t;         // Kaldi's int16.
using int32 = std::int32_t;         // Kaldi's int32.
using int64 = std::int64_t;         // Kaldi's int64.
using uint8 = std::uint8_t;         // Kaldi's uint8.
using uint16 = std::uint16_t;       // Kaldi's uint16.
using uint32 = std::uint32_t;       // Kaldi's uint32.
using uint64 = std::uint64_t;       // Kaldi's uint64.
using BaseFloat = float;            // Kaldi's BaseFloat, float as Kaldi builds it by default.
using MatrixIndexT = std::int32_t;  // Kaldi's index of rows and columns.

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

}  // namespace kaldi

TABLIO_END_NAMESPACE
