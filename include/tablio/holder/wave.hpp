// Kaldi's WaveHolder: one RIFF/WAVE file per entry, binary only (no "\0B"), for wav.scp
// ("utt1 sox in.flac -t wav - |") and wave archives.
#pragma once

#include <tablio/holder/concepts.hpp>
#include <tablio/types/wave.hpp>

TABLIO_BEGIN_NAMESPACE

// A Holder of wave_data: Kaldi's WaveHolder.
class wave_holder : public holder_storage<wave_data> {
 public:
  // The Holder concept: writes the wave as a RIFF/WAVE file; throws usage_error in text mode.
  static void write(writer& w, bool binary, const wave_data& wave) {
    if (!binary) throw_usage_error({"waves are binary only: write them with a binary ('b') table"});
    wave.write(w);
  }
  // The Holder concept: reads one RIFF/WAVE file; throws format_error on one it cannot.
  void read(reader& r) { value_.read(r); }
};

TABLIO_END_NAMESPACE
