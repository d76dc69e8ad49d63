// wav-durations.cc: the duration of each wave of a table, written in Kaldi's style against
// tablio's Kaldi facade (only the #include line differs from a program built in Kaldi's
// src/featbin). Reads only the waves' headers (WaveInfoHolder) unless told to read them whole.

#include <tablio/kaldi.hpp>

int main(int argc, char *argv[]) {
  try {
    using namespace kaldi;
    const char *usage =
        "Write the duration of each wave, in seconds, as a table\n"
        "Usage: wav-durations [options] <wav-rspecifier> <duration-wspecifier>\n"
        "e.g.: wav-durations scp:wav.scp ark,t:-\n";
    ParseOptions po(usage);
    bool read_entire_file = false;
    po.Register("read-entire-file", &read_entire_file,
                "Read whole waves rather than only their headers");
    po.Read(argc, argv);
    if (po.NumArgs() != 2) {
      po.PrintUsage();
      exit(1);
    }
    std::string wav_rspecifier = po.GetArg(1), duration_wspecifier = po.GetArg(2);
    BaseFloatWriter duration_writer(duration_wspecifier);
    int32 num_done = 0;
    double total = 0.0;
    if (read_entire_file) {
      SequentialTableReader<WaveHolder> wav_reader(wav_rspecifier);
      for (; !wav_reader.Done(); wav_reader.Next()) {
        BaseFloat duration = wav_reader.Value().Duration();
        duration_writer.Write(wav_reader.Key(), duration);
        total += duration;
        num_done++;
      }
    } else {
      SequentialTableReader<WaveInfoHolder> wav_reader(wav_rspecifier);
      for (; !wav_reader.Done(); wav_reader.Next()) {
        const WaveInfo &info = wav_reader.Value();
        KALDI_VLOG(1) << wav_reader.Key() << ": " << info.NumChannels() << " channels, "
                      << info.SampleCount() << " samples at " << info.SampFreq() << " Hz";
        duration_writer.Write(wav_reader.Key(), info.Duration());
        total += info.Duration();
        num_done++;
      }
    }
    KALDI_LOG << "Printed durations of " << num_done << " waves, total " << total << " seconds";
    return (num_done != 0 ? 0 : 1);
  } catch(const std::exception &e) {
    std::cerr << e.what();
    return -1;
  }
}
