// Records that outlive the struct that wrote them: release 1 of a program writes utterances to
// a TFRecord file with tablio::protobuf; release 2, whose struct gained a field and widened
// another, reads them; and the .proto it emits lets any language read them (Python's protobuf
// does, in examples/python/read_evolving.py).
//
//   evolving_records FOLDER    writes FOLDER/utterances.{tfrecord,ark,scp} and FOLDER/utterance.proto,
//                              and reads FOLDER/from_python.tfrecord when Python has written it
#include <tablio/codec/protobuf.hpp>
#include <tablio/codec/protobuf_schema.hpp>
#include <tablio/tablio.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace release1 {
struct utterance {
  std::string id;
  std::int32_t speaker = 0;
  std::vector<float> feats;  // frames x 4, row by row
};
}  // namespace release1

namespace release2 {
struct utterance {
  static constexpr std::array<std::uint32_t, 4> tablio_field_numbers{1, 2, 4, 3};
  static constexpr std::array<std::string_view, 4> tablio_field_names{"id", "speaker", "transcript", "feats"};
  std::string id;
  std::int64_t speaker = 0;           // was an int32
  std::string transcript = "(none)";  // new in release 2, numbered after the others
  std::vector<float> feats;
};
}  // namespace release2

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: evolving_records FOLDER\n");
    return 2;
  }
  try {
    const std::filesystem::path folder = argv[1];
    std::filesystem::create_directories(folder);
    const std::string file = (folder / "utterances").string();
    {  // release 1 writes, to a TFRecord file and to a Kaldi archive with its script
      using release1_records = tablio::holder<release1::utterance, tablio::protobuf>;
      tablio::table_writer<release1_records> tfrecord("tfrecord:" + file + ".tfrecord");
      tablio::table_writer<release1_records> ark("ark,scp:" + file + ".ark," + file + ".scp");
      for (int i = 0; i < 3; ++i) {
        const release1::utterance u{"utt" + std::to_string(i), 100 + i,
                                    std::vector<float>(8, 0.5f * static_cast<float>(i))};
        tfrecord.write(tablio::ordinal_key(static_cast<std::uint64_t>(i)), u);
        ark.write(u.id, u);
      }
      tfrecord.close();
      ark.close();
    }
    // release 2 reads what release 1 wrote, and says how any language can.
    for (const std::string& table : {"tfrecord:" + file + ".tfrecord", "scp:" + file + ".scp"})
      for (auto& [key, u] :
           tablio::sequential_table_reader<tablio::holder<release2::utterance, tablio::protobuf>>(table))
        std::printf("%s: %s, speaker %lld, %zu values, transcript %s\n", key.c_str(), u.id.c_str(),
                    static_cast<long long>(u.speaker), u.feats.size(), u.transcript.c_str());
    std::ofstream(folder / "utterance.proto") << tablio::proto_schema<release2::utterance>("speech");

    // What Python's protobuf wrote from that schema (read_evolving.py), read back here.
    const auto from_python = folder / "from_python.tfrecord";
    if (std::filesystem::exists(from_python)) {
      for (auto& [key, u] :
           tablio::sequential_table_reader<tablio::holder<release2::utterance, tablio::protobuf>>(
               "tfrecord:" + from_python.string())) {
        std::printf("from Python %s: %s, speaker %lld, transcript %s\n", key.c_str(), u.id.c_str(),
                    static_cast<long long>(u.speaker), u.transcript.c_str());
        if (u.id != "py0" || u.speaker != -5 || u.transcript != "hello" ||
            u.feats != std::vector<float>{1.5f, -2.0f})
          return 1;
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "evolving_records: %s\n", e.what());
    return 1;
  }
}
