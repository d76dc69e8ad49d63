// Audio for wav.scp and wave archives: RIFF/WAVE 16-bit PCM as Kaldi reads and writes it.
//
// Samples are held as floats, one row per channel (Kaldi's WaveData). Reading accepts RIFF
// and RIFX (big-endian), skips chunks before "fmt " and between "fmt " and "data", takes
// PCM and WAVE_FORMAT_EXTENSIBLE PCM, and treats a RIFF or data size of 0 or 0xFFFFFFFF (or
// SoX's 0x7FFFF000) as a stream that runs to the end of the input, as pipes from sox or
// sph2pipe produce. Writing gives Kaldi's 44-byte header and samples truncated and clipped
// to int16.
#pragma once

#include <tablio/core/endian.hpp>
#include <tablio/core/float_math.hpp>
#include <tablio/core/minmax.hpp>
#include <tablio/stream/reader.hpp>
#include <tablio/stream/writer.hpp>
#include <tablio/types/matrix.hpp>

#include <cstring>
#include <limits>

TABLIO_BEGIN_NAMESPACE

// Kaldi's WaveData: a sample rate and the samples, one row per channel, as floats on int16's
// scale. Read from and written to RIFF/WAVE bytes (see tablio/types/wave.hpp).
class wave_data {
 public:
  wave_data() = default;
  // A wave of `samples` (channels x samples) at sample_frequency samples a second; nothing is
  // checked until it is written.
  wave_data(float sample_frequency, matrix<float> samples)
      : sample_frequency_(sample_frequency), samples_(std::move(samples)) {}

  // Samples a second (Kaldi's SampFreq()); 0 for a default-constructed wave.
  float sample_frequency() const noexcept { return sample_frequency_; }
  // channels x samples
  const matrix<float>& data() const noexcept { return samples_; }
  // A sample as a WAVE file stores it, as Kaldi's WaveData::Write stores it: truncated toward
  // zero and cut to int16's range (NaN as 0).
  static std::int16_t pcm16(float sample) noexcept {
    const double v = detail::truncated(sample);
    return v != v       ? std::int16_t(0)
           : v < -32768 ? std::int16_t(-32768)
           : v > 32767  ? std::int16_t(32767)
                        : static_cast<std::int16_t>(v);
  }
  matrix<float>& data() noexcept { return samples_; }
  // Channels: the rows of data().
  std::int32_t num_channels() const noexcept { return samples_.num_rows(); }
  // Samples in each channel: the columns of data().
  std::int32_t num_samples() const noexcept { return samples_.num_cols(); }
  // Seconds of audio (Kaldi's Duration()); 0 when the sample rate is not positive.
  double duration() const noexcept {
    return sample_frequency_ > 0 ? num_samples() / double(sample_frequency_) : 0;
  }
  bool operator==(const wave_data&) const = default;  // The same rate and samples.

  // Writes a 44-byte RIFF header and 16-bit little-endian PCM, as WaveData::Write does. Throws
  // usage_error for no channel, 4 GiB of samples or more, or a rate not in [1, 2^32).
  void write(writer& w) const {
    const std::uint32_t channels = static_cast<std::uint32_t>(num_channels());
    const std::uint64_t data_bytes = 2ull * channels * static_cast<std::uint64_t>(num_samples());
    if (channels == 0 || data_bytes > 0xFFFFFFFFull - 36)
      throw_usage_error({"a wave needs at least one channel and less than 4 GiB of samples"});
    if (!(sample_frequency_ >= 1 && sample_frequency_ < 4294967296.0f))  // NaN too
      throw_usage_error({"a wave's sample rate is a number of samples a second, from 1 to 2^32 - 1"});
    const std::uint32_t rate = static_cast<std::uint32_t>(sample_frequency_);
    char h[44];
    std::memcpy(h, "RIFF", 4);
    store<std::endian::little>(h + 4, static_cast<std::uint32_t>(36 + data_bytes));
    std::memcpy(h + 8, "WAVEfmt ", 8);
    store<std::endian::little>(h + 16, std::uint32_t{16});
    store<std::endian::little>(h + 20, std::uint16_t{1});
    store<std::endian::little>(h + 22, static_cast<std::uint16_t>(channels));
    store<std::endian::little>(h + 24, rate);
    store<std::endian::little>(h + 28, rate * channels * 2);
    store<std::endian::little>(h + 32, static_cast<std::uint16_t>(channels * 2));
    store<std::endian::little>(h + 34, std::uint16_t{16});
    std::memcpy(h + 36, "data", 4);
    store<std::endian::little>(h + 40, static_cast<std::uint32_t>(data_bytes));
    w.write(h, 44);
    for (std::int32_t s = 0; s < num_samples(); ++s) {
      char* p = w.reserve(2 * channels);
      for (std::uint32_t c = 0; c < channels; ++c) {
        store<std::endian::little>(p + 2 * c, pcm16(samples_(static_cast<std::int32_t>(c), s)));
      }
      w.advance(2 * channels);
    }
  }

  // Reads a RIFF or RIFX wave of 16-bit PCM, replacing the rate and samples. Other formats, a
  // data chunk shorter than its header says, or more than limits::max_record_bytes of samples
  // throw format_error.
  void read(reader& r) {
    header h = read_header(r);
    std::uint64_t at = r.tell();
    // The announced bytes (a streamed header's: all of them), read as they arrive, so that a
    // lying size cannot force a large allocation. Fewer than announced is a truncated file:
    // an error, where Kaldi warns and keeps the samples that came (what the file lost would
    // go unseen).
    const std::uint64_t limit = r.limits().max_record_bytes;
    std::uint64_t want = h.streamed ? limit + 1 : h.data_bytes;
    if (auto left = r.remaining()) want = detail::min_of(want, *left);
    std::string bytes;
    while (bytes.size() < want) {
      std::size_t have = bytes.size();
      std::size_t step = static_cast<std::size_t>(
          detail::min_of<std::uint64_t>(want - have, detail::max_of<std::size_t>(have, 1 << 16)));
      bytes.resize(have + step);
      std::size_t got = r.read_some(bytes.data() + have, step);
      bytes.resize(have + got);
      if (got == 0) break;
    }
    if (bytes.size() > limit) r.fail({"a wave of at most limits::max_record_bytes"}, {"more"});
    if (!h.streamed && bytes.size() < h.data_bytes)
      r.fail_at(at, {decimal(h.data_bytes), " bytes of wave data, as its header says"},
                {"only ", decimal(bytes.size()), ": a truncated file"});
    if (bytes.size() < h.block_align)  // Kaldi would build a channels x 0 matrix and abort
      r.fail_at(at, {"wave samples"}, {bytes.empty() ? "no data" : "less than one sample"});
    const std::int32_t samples = static_cast<std::int32_t>(bytes.size() / h.block_align);
    samples_ = matrix<float>(h.channels, samples);
    sample_frequency_ = static_cast<float>(h.sample_rate);
    const char* p = bytes.data();
    for (std::int32_t s = 0; s < samples; ++s)
      for (std::int32_t c = 0; c < h.channels; ++c, p += 2)
        samples_(c, s) = h.big_endian ? load<std::endian::big, std::int16_t>(p)
                                      : load<std::endian::little, std::int16_t>(p);
  }

  // What a wave's header says, up to its samples (Kaldi's WaveInfo).
  struct header {
    bool big_endian = false;        // RIFX rather than RIFF
    bool streamed = false;          // the sizes are placeholders: the samples run to the end
    std::int32_t channels = 0;      // samples at a time, one per channel
    std::uint32_t sample_rate = 0;  // samples a second, per channel
    std::uint32_t block_align = 0;  // bytes of one sample of every channel
    std::uint32_t data_bytes = 0;   // bytes of samples (unless streamed)
  };

  // Reads a RIFF or RIFX header up to the first byte of the samples; throws format_error for
  // a wave read() would refuse.
  static header read_header(reader& r) {
    header h;
    std::uint64_t start = r.tell();
    char tag[4];
    auto read_tag = [&] { r.read_exact(tag, 4, "bytes of a RIFF chunk tag"); };
    auto u32 = [&] {
      char b[4];
      r.read_exact(b, 4, "bytes of a RIFF field");
      return h.big_endian ? load<std::endian::big, std::uint32_t>(b)
                          : load<std::endian::little, std::uint32_t>(b);
    };
    auto u16 = [&] {
      char b[2];
      r.read_exact(b, 2, "bytes of a RIFF field");
      return h.big_endian ? load<std::endian::big, std::uint16_t>(b)
                          : load<std::endian::little, std::uint16_t>(b);
    };
    read_tag();
    if (std::memcmp(tag, "RIFX", 4) == 0)
      h.big_endian = true;
    else if (std::memcmp(tag, "RIFF", 4) != 0)
      r.fail_at(start, {"a RIFF or RIFX wave header"}, {"'", std::string(tag, 4), "'"});
    std::uint32_t riff_size = u32();
    read_tag();
    if (std::memcmp(tag, "WAVE", 4) != 0) r.fail_at(start + 8, {"'WAVE'"}, {"'", std::string(tag, 4), "'"});
    read_tag();
    while (std::memcmp(tag, "fmt ", 4) != 0) {
      r.skip(u32());
      read_tag();
    }
    std::uint64_t fmt_at = r.tell();
    std::uint32_t fmt_size = u32();
    std::uint16_t format = u16();
    h.channels = u16();
    h.sample_rate = u32();
    std::uint32_t byte_rate = u32();
    h.block_align = u16();
    std::uint16_t bits = u16();
    std::uint32_t fmt_read = 16;
    if (format == 1) {
      if (fmt_size < 16) r.fail_at(fmt_at, {"a PCM fmt chunk of at least 16 bytes"}, {decimal(fmt_size)});
    } else if (format == 0xFFFE) {
      std::uint16_t extra = u16();
      if (fmt_size < 40 || extra < 22)
        r.fail_at(fmt_at, {"a WAVE_FORMAT_EXTENSIBLE fmt chunk"}, {"a short one"});
      u16();
      u32();
      std::uint32_t guid[4] = {u32(), u32(), u32(), u32()};
      if (guid[0] != 0x00000001 || guid[1] != 0x00100000 || guid[2] != 0xAA000080 || guid[3] != 0x719B3800)
        r.fail_at(fmt_at, {"WAVE_FORMAT_EXTENSIBLE with PCM samples"}, {"another sub-format"});
      fmt_read = 40;
    } else {
      r.fail_at(fmt_at, {"PCM data (format 1)"}, {"format ", decimal(format)});
    }
    if (fmt_size > fmt_read) r.skip(fmt_size - fmt_read);
    if (h.channels == 0) r.fail_at(fmt_at, {"at least one channel"}, {"none"});
    if (bits != 16) r.fail_at(fmt_at, {"16 bits per sample"}, {decimal(bits)});
    if (byte_rate != h.sample_rate * 2 * static_cast<std::uint32_t>(h.channels))
      r.fail_at(fmt_at, {"byte rate ", decimal(h.sample_rate * 2 * static_cast<std::uint32_t>(h.channels))},
                {decimal(byte_rate)});
    if (h.block_align != 2u * static_cast<std::uint32_t>(h.channels))
      r.fail_at(fmt_at, {"block align ", decimal(2 * h.channels)}, {decimal(h.block_align)});
    read_tag();
    while (std::memcmp(tag, "data", 4) != 0) {
      r.skip(u32());
      read_tag();
    }
    h.data_bytes = u32();
    h.streamed = riff_size == 0 || riff_size == 0xFFFFFFFF || h.data_bytes == 0 ||
                 h.data_bytes == 0xFFFFFFFF || h.data_bytes == 0x7FFFF000;
    return h;
  }

 private:
  float sample_frequency_ = 0;
  matrix<float> samples_;
};

TABLIO_END_NAMESPACE
