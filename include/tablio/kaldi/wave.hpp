// Kaldi's WaveData, WaveInfo and their holders over tablio's wave_data: RIFF/WAVE files as
// table entries, whole or only their headers (wav-to-duration).
#pragma once

#include <tablio/holder/holder.hpp>
#include <tablio/holder/wave.hpp>
#include <tablio/kaldi/holders.hpp>
#include <tablio/kaldi/matrix.hpp>
#include <tablio/types/wave.hpp>

#include <cstdint>
#include <istream>
#include <ostream>
#include <utility>

TABLIO_BEGIN_NAMESPACE

namespace kaldi {

// Kaldi's WaveData: a sample frequency and a channels x samples matrix, read from and written
// as a RIFF/WAVE file.
class WaveData {
 public:
  WaveData() = default;
  // The samples, one row per channel, at samp_freq samples a second (a copy of them: extract-
  // segments passes a SubMatrix).
  WaveData(BaseFloat samp_freq, const MatrixBase<BaseFloat>& data) : samp_freq_(samp_freq), data_(data) {}
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
  // Makes this a copy of other.
  void CopyFrom(const WaveData& other) { *this = other; }
  // Empties the samples and zeroes the frequency.
  void Clear() { *this = WaveData(); }
  // Exchanges the waves, without copying either.
  void Swap(WaveData* other) {
    std::swap(samp_freq_, other->samp_freq_);
    data_.Swap(&other->data_);
  }

 private:
  BaseFloat samp_freq_ = 0;
  Matrix<BaseFloat> data_;
};

// Kaldi's WaveInfo: what a RIFF/WAVE file's header says, for programs that need no samples
// (wav-to-duration). Reading one consumes the samples too, without keeping them, so that a
// table of them can be an archive; a streamed wave's samples are counted as they go by.
class WaveInfo {
 public:
  // Whether the header gave no sizes (a wave written to a pipe): the samples ran to the end.
  bool IsStreamed() const noexcept { return header_.streamed; }
  // Samples a second.
  BaseFloat SampFreq() const noexcept { return static_cast<BaseFloat>(header_.sample_rate); }
  // Samples per channel.
  uint32 SampleCount() const noexcept { return sample_count_; }
  // Length in seconds; 0 when the frequency is 0.
  BaseFloat Duration() const noexcept {
    return header_.sample_rate ? static_cast<BaseFloat>(sample_count_) / SampFreq() : 0;
  }
  // Channels.
  int32 NumChannels() const noexcept { return header_.channels; }
  // Bytes of one sample of every channel.
  int32 BlockAlign() const noexcept { return static_cast<int32>(header_.block_align); }
  // Bytes of samples.
  uint32 DataBytes() const noexcept { return sample_count_ * header_.block_align; }
  // Whether the samples are big-endian (RIFX), the reverse of every host Kaldi runs on.
  bool ReverseBytes() const noexcept { return header_.big_endian; }
  // Reads a wave's header and passes its samples; throws format_error as WaveData::Read.
  void Read(std::istream& is);
  // Read() from a tablio::reader (no Kaldi counterpart).
  void from(reader& r);

 private:
  wave_data::header header_;
  uint32 sample_count_ = 0;
};

namespace detail {

// WaveHolder as a tablio holder: one RIFF/WAVE file per entry, as wave_holder.
class wave_data_holder : public holder_storage<WaveData> {
 public:
  // The Holder concept: writes the wave as a RIFF/WAVE file; throws usage_error in text mode,
  // as Kaldi errors.
  static void write(writer& w, bool binary, const WaveData& wave);
  // The Holder concept: reads one RIFF/WAVE file into value().
  void read(reader& r);
};

// WaveInfoHolder as a tablio holder: the header of a RIFF/WAVE file per entry. Read only.
class wave_info_holder : public holder_storage<WaveInfo> {
 public:
  // The Holder concept: throws usage_error: a WaveInfo has no samples to write, as in Kaldi.
  [[noreturn]] static void write(writer& w, bool binary, const WaveInfo& info);
  // The Holder concept: reads one wave's header into value(), passing its samples.
  void read(reader& r) { value_.from(r); }
};

}  // namespace detail

// Kaldi's WaveHolder: a WaveData per entry.
using WaveHolder = detail::with_kaldi_names<detail::wave_data_holder>;
// Kaldi's WaveInfoHolder: a WaveInfo per entry, for reading only.
using WaveInfoHolder = detail::with_kaldi_names<detail::wave_info_holder>;

}  // namespace kaldi

TABLIO_END_NAMESPACE

#if TABLIO_HEADER_IMPLEMENTATION
TABLIO_BEGIN_NAMESPACE

namespace kaldi {

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

TABLIO_IMPL void WaveInfo::Read(std::istream& is) {
  detail::on_reader(is, [&](reader& r) { from(r); });
}
TABLIO_IMPL void WaveInfo::from(reader& r) {
  const std::uint64_t at = r.tell();
  header_ = wave_data::read_header(r);
  std::uint64_t bytes = header_.data_bytes;
  if (header_.streamed) {
    for (bytes = 0; r.fill();) {
      const std::size_t n = r.window().size();
      r.advance(n);
      bytes += n;
    }
  } else {
    r.skip(bytes);
  }
  if (bytes / header_.block_align > UINT32_MAX)
    r.fail_at(at, {"a wave of at most 2^32 - 1 samples"}, {decimal(bytes / header_.block_align)});
  sample_count_ = static_cast<uint32>(bytes / header_.block_align);
}

namespace detail {
TABLIO_IMPL void wave_data_holder::write(writer& w, bool binary, const WaveData& wave) {
  wave_holder::write(w, binary, wave.to_wave());
}
TABLIO_IMPL void wave_data_holder::read(reader& r) { value_.from(r); }
TABLIO_IMPL void wave_info_holder::write(writer&, bool, const WaveInfo&) {
  throw_usage_error({"a WaveInfo cannot be written: it has no samples (write a WaveData)"});
}
}  // namespace detail

}  // namespace kaldi

TABLIO_END_NAMESPACE
#endif  // TABLIO_HEADER_IMPLEMENTATION
