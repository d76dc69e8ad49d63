// The bridge that runs Kaldi-style members — Write(std::ostream&, bool binary) const and
// Read(std::istream&, bool binary) — on tablio's writer and reader, through streambufs that
// share their buffers. A Read that sets failbit becomes a format_error at the object's offset.
#pragma once

#include <tablio/codec/dispatch.hpp>
#include <tablio/stream/iostream.hpp>

#include <istream>
#include <ostream>

TABLIO_BEGIN_NAMESPACE

// The bridge for a type with Kaldi-style members (step 3 of codec/concepts.hpp): what encode_to
// and decode_from call for it.
template <class T>
struct kaldi_object_bridge<T, std::enable_if_t<kaldi_object<T>>> {
  // Runs v.Write(os, binary) on a stream that writes to w. The writer's own io_error passes
  // through; a Write that leaves the stream failed throws io_error.
  static void write(writer& w, const T& v, bool binary) {
    writer_streambuf buf(w);
    std::ostream os(&buf);
    os.exceptions(std::ios::badbit);  // the writer's own io_error reaches the caller
    v.Write(os, binary);
    if (!os) throw_io_error(w.name(), 0, {"Write() of a Kaldi-style object failed on"});
  }
  // Runs v.Read(is, binary) on a stream that reads from r, so the object consumes what it reads;
  // a Read that sets failbit throws format_error at the offset where the object began.
  static void read(reader& r, T& v, bool binary) {
    std::uint64_t at = r.tell();
    reader_streambuf buf(r);
    std::istream is(&buf);
    is.exceptions(std::ios::badbit);
    v.Read(is, binary);
    if (is.fail()) r.fail_at(at, {"an object its Read() accepts"}, {"data it rejected"});
  }
};

TABLIO_END_NAMESPACE
