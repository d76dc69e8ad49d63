// GZIP and ZLIB streams (component tablio::zlib, linked with zlib).
//
// zlib_source inflates any reader: gzip or zlib headers are recognised by their magic
// bytes, any gzip header is accepted, and concatenated gzip members are read one after the
// other, as `gunzip` and TensorFlow read them. zlib_sink deflates into any writer as
// TensorFlow's TFRecord writer does (level -1, memLevel 9, one stream over the whole file);
// close() finishes the stream and reports every failure.
#pragma once

#if !defined(TABLIO_WITH_ZLIB)
#error "<tablio/stream/zlib.hpp> needs zlib: link the tablio::zlib CMake target (it defines TABLIO_WITH_ZLIB)"
#endif

#include <tablio/core/minmax.hpp>
#include <tablio/core/owned.hpp>
#include <tablio/stream/compression.hpp>
#include <tablio/stream/reader.hpp>
#include <tablio/stream/writer.hpp>

#include <zlib.h>

#include <string>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// Inflates the gzip or zlib data of a reader, as the header's opening comment says: it models
// the Source concept (closable).
class zlib_source {
 public:
  // Inflates what `compressed` reads from its position on; io_error when zlib cannot start.
  explicit zlib_source(reader compressed) : in_(make_owned<reader>(std::move(compressed))) {
    stream_ = make_owned<z_stream>();
    // 15 + 32: a zlib or gzip header, detected by inflate itself.
    if (inflateInit2(stream_.get(), 15 + 32) != Z_OK)
      throw_io_error(in_->name(), 0, {"cannot start inflating"});
  }
  zlib_source(zlib_source&&) noexcept = default;
  zlib_source& operator=(zlib_source&&) noexcept = default;
  ~zlib_source() {
    if (stream_) inflateEnd(stream_.get());
  }

  // The Source concept: inflates into dst up to n bytes, at least one unless at the end; truncated
  // or invalid data, or data that inflates past limits::max_expansion, is a format_error.
  std::size_t read_some(char* dst, std::size_t n) {
    if (n == 0) return 0;  // else the loop below would wait for output that never comes
    z_stream& z = *stream_;
    z.next_out = reinterpret_cast<Bytef*>(dst);
    z.avail_out = static_cast<uInt>(detail::min_of<std::size_t>(n, 1u << 30));
    while (z.avail_out == static_cast<uInt>(detail::min_of<std::size_t>(n, 1u << 30))) {
      if (z.avail_in == 0) {
        in_->advance(consumed_);
        consumed_ = 0;
        if (!in_->fill()) {
          if (!ended_)
            throw_format_error(in_->name(), in_->tell(), {}, {"the end of the compressed stream"},
                               {"end of input (truncated gzip/zlib data)"});
          break;
        }
        std::span<const char> w = in_->window();
        z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(w.data()));
        z.avail_in = static_cast<uInt>(detail::min_of<std::size_t>(w.size(), 1u << 30));
        consumed_ = z.avail_in;
        if (ended_) {
          // Bytes after a finished member: another gzip member follows (or garbage).
          if (inflateReset(&z) != Z_OK) throw_io_error(in_->name(), 0, {"cannot restart inflating"});
          ended_ = false;
        }
      }
      int rc = inflate(&z, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        ended_ = true;
        // Give back what inflate did not use, and look for a following member.
        consumed_ -= z.avail_in;
        in_->advance(consumed_);
        consumed_ = 0;
        z.avail_in = 0;
        if (in_->at_end()) break;
        continue;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR)
        throw_format_error(in_->name(), in_->tell(), {}, {"valid gzip/zlib data"},
                           {"inflate() failed with error ", decimal(rc),
                            (z.msg ? std::string(": ") + z.msg : std::string())});
    }
    std::size_t produced = static_cast<std::size_t>(detail::min_of<std::size_t>(n, 1u << 30) - z.avail_out);
    check_expansion(produced);
    return produced;
  }
  // Closes the compressed input (a command's exit status is checked there).
  void close() { in_->close(); }

 private:
  // limits::max_expansion: past its first MiB, the output may be at most that many times the
  // compressed bytes read so far, so that a bomb fails before it fills memory or a disk.
  void check_expansion(std::size_t produced) {
    inflated_ += produced;
    const std::uint64_t ratio = in_->limits().max_expansion;
    if (ratio == 0 || inflated_ <= (std::uint64_t{1} << 20)) return;
    const std::uint64_t compressed = in_->tell() - in_start_ + consumed_ - stream_->avail_in;
    if (inflated_ - (std::uint64_t{1} << 20) > ratio * compressed)
      throw_format_error(in_->name(), in_start_ + compressed, {},
                         {"data that inflates at most ", decimal(ratio), " times (limits::max_expansion)"},
                         {decimal(inflated_), " bytes from ", decimal(compressed), " compressed"});
  }

  owned<reader> in_;
  owned<z_stream> stream_;
  std::size_t consumed_ = 0;    // bytes of the input window handed to inflate
  bool ended_ = false;          // the last member finished
  std::uint64_t inflated_ = 0;  // bytes produced in all
  std::uint64_t in_start_ = in_->tell();
};

// Deflates into a writer as TensorFlow's TFRecord writer does: it models the Sink concept
// (closable), and only close() finishes the stream.
class zlib_sink {
 public:
  // Deflates into `out` as `kind` (gzip or zlib) says, at zlib's `level`; io_error when zlib
  // cannot start.
  zlib_sink(writer out, compression kind, int level = Z_DEFAULT_COMPRESSION)
      : out_(make_owned<writer>(std::move(out))), buffer_(1 << 18) {
    stream_ = make_owned<z_stream>();
    int bits = kind == compression::gzip ? 15 + 16 : 15;
    if (deflateInit2(stream_.get(), level, Z_DEFLATED, bits, 9, Z_DEFAULT_STRATEGY) != Z_OK)
      throw_io_error(out_->name(), 0, {"cannot start deflating"});
    if (kind == compression::gzip) {
      // The header names the system as Unix (3), as zlib on Linux and macOS writes it, where
      // TensorFlow's files are made: the same bytes wherever they are written (zlib names
      // Windows 10 there).
      header_ = make_owned<gz_header>();
      header_->os = 3;
      deflateSetHeader(stream_.get(), header_.get());
    }
  }
  zlib_sink(zlib_sink&&) noexcept = default;
  zlib_sink& operator=(zlib_sink&&) noexcept = default;
  ~zlib_sink() {
    if (stream_) deflateEnd(stream_.get());
  }

  // The Sink concept: deflates the n bytes at src into the writer.
  void write(const char* src, std::size_t n) {
    if (n > (1u << 30)) return write_in_pieces(src, n);
    stream_->next_in = reinterpret_cast<Bytef*>(const_cast<char*>(src));
    stream_->avail_in = static_cast<uInt>(n);
    pump(Z_NO_FLUSH);
  }
  // A partial flush, as TensorFlow's Flush(): what was written so far can be inflated.
  void flush() {
    pump(Z_PARTIAL_FLUSH);
    out_->flush();
  }
  // Finishes the stream and closes the writer, throwing for any loss; a sink closed already does
  // nothing.
  void close() {
    if (!stream_) return;
    pump(Z_FINISH);
    deflateEnd(stream_.get());
    stream_.reset();
    out_->close();
  }

 private:
  // zlib counts input in 32 bits: a write of more than 1 GiB goes in pieces.
  TABLIO_COLD void write_in_pieces(const char* src, std::size_t n) {
    while (n != 0) {
      std::size_t piece = detail::min_of<std::size_t>(n, 1u << 30);
      write(src, piece);
      src += piece;
      n -= piece;
    }
  }
  void pump(int mode) {
    z_stream& z = *stream_;
    for (;;) {
      z.next_out = reinterpret_cast<Bytef*>(buffer_.data());
      z.avail_out = static_cast<uInt>(buffer_.size());
      int rc = deflate(&z, mode);
      if (rc == Z_STREAM_ERROR) throw_io_error(out_->name(), 0, {"deflate() failed on"});
      out_->write(buffer_.data(), buffer_.size() - z.avail_out);
      if (mode == Z_FINISH ? rc == Z_STREAM_END : (z.avail_in == 0 && z.avail_out != 0)) return;
    }
  }

  owned<writer> out_;
  owned<z_stream> stream_;
  owned<gz_header> header_;  // zlib keeps a pointer to it until the header is written
  std::vector<char> buffer_;
};

// A reader that inflates `in` when it starts with a gzip or zlib header, else `in` itself.
inline reader maybe_decompress(reader in) {
  in.ensure(2);
  if (detect_compression(in.window()) == compression::none) return in;
  std::string name = in.name();
  limits lim = in.limits();
  return reader(zlib_source(std::move(in)), name, lim);
}

TABLIO_END_NAMESPACE
