// Kaldi's segments files over wav.scp (table/segments.hpp), against the arithmetic of Kaldi's
// extract-segments: samples are start * rate and end * rate truncated, a small overshoot is cut
// at the recording's end, short or out-of-range segments are skipped.
#include "test_support.hpp"

#include <tablio/table/object.hpp>
#include <tablio/table/segments.hpp>

#include <fstream>
#include <map>

using namespace tablio;

namespace {

std::vector<std::string> reports;
void keep_report(const char* message) noexcept { reports.emplace_back(message); }

// Captures what the library reports for the scope's lifetime.
struct captured_reports {
  captured_reports() {
    reports.clear();
    set_error_reporter(&keep_report);
  }
  ~captured_reports() { set_error_reporter(nullptr); }
};

// A recording whose sample s of channel c is (s % 20000) - 10000 + c: each sample says where
// it came from.
wave_data recording(float rate, std::int32_t channels, std::int32_t samples) {
  matrix<float> m(channels, samples);
  for (std::int32_t c = 0; c < channels; ++c)
    for (std::int32_t s = 0; s < samples; ++s) m(c, s) = float(s % 20000 - 10000 + c);
  return wave_data(rate, std::move(m));
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// A data folder: r1 (16 kHz mono, 1.25 s), r2 (8 kHz stereo, 1 s), wav.scp and `segments`.
struct data_folder {
  test::temp_dir dir;
  explicit data_folder(const std::string& segments) {
    write_object<wave_holder>(dir / "r1.wav", recording(16000, 1, 20000));
    write_object<wave_holder>(dir / "r2.wav", recording(8000, 2, 8000));
    write_text(dir / "wav.scp", "r1 " + (dir / "r1.wav") + "\nr2 " +
                                    test::command("file \"" + (dir / "r2.wav") + "\"") + " |\n");
    write_text(dir / "segments", segments);
  }
  std::string spec(const std::string& options = "") const {
    return "scp" + options + ",segments=" + (dir / "segments") + ":" + (dir / "wav.scp");
  }
};

// The samples [begin, end) of channel c of what recording() made.
std::vector<float> expected(std::int32_t c, std::int32_t begin, std::int32_t end) {
  std::vector<float> v;
  for (std::int32_t s = begin; s < end; ++s) v.push_back(float(s % 20000 - 10000 + c));
  return v;
}
std::vector<float> samples_of(const wave_data& w) {
  REQUIRE(w.num_channels() == 1);
  auto row = w.data().row(0);
  return {row.begin(), row.end()};
}

}  // namespace

TEST_CASE("segments lines are read as extract-segments reads them", "[segments]") {
  CHECK(parse_segment_line("u1 r1 0.5 1.10") == segment{"u1", "r1", 0.5, 1.10, -1});
  CHECK(parse_segment_line("\tu1  r1\t0 -1 1\r") == segment{"u1", "r1", 0, -1, 1});
  CHECK(parse_segment_line("u1 r1 +0.5 1e0") == segment{"u1", "r1", 0.5, 1, -1});
  std::string why;
  CHECK_FALSE(parse_segment_line("u1 r1 0.5 0.5", &why));
  CHECK(why == "empty or invalid segment");
  for (const char* bad : {"", "u1 r1 0.5", "u1 r1 0.5 1 0 x", "u1 r1 a 1", "u1 r1 0 1x", "u1 r1 -0.1 1",
                          "u1 r1 0 0", "u1 r1 0 -2", "u1 r1 2 1", "u1 r1 1 1", "u1 r1 0 1 -1",
                          "u1 r1 0 1 0.5", "u1 r1 0 inf", "u1 r1 nan 1"})
    CHECK_FALSE(parse_segment_line(bad));
}

TEST_CASE("segments= and extract-segments' options in rspecifiers", "[segments][specifier]") {
  rspecifier r =
      require_rspecifier("scp,p,segments=data/seg,max_overshoot=0,min_segment_length=0.25:wav.scp");
  CHECK(r.segments == "data/seg");
  CHECK(r.segmenting == segment_options{0.0f, 0.25f});
  CHECK(r.filename == "wav.scp");
  CHECK(require_rspecifier("ark,segments=s:w.ark").segmenting == segment_options{});
  for (const char* bad :
       {"scp,segments=:w.scp", "scp,max_overshoot=-1:w.scp", "scp,min_segment_length=x:w.scp"})
    CHECK_THROWS_MATCHES(require_rspecifier(bad), usage_error, test::says("invalid rspecifier"));
}

TEST_CASE("segments cut the samples extract-segments cuts", "[segments]") {
  using outcome = segment_samples::outcome;
  auto at = [](double start, double end, std::int32_t channel = -1, std::int32_t channels = 1) {
    return locate_segment(segment{"u", "r", start, end, channel}, 16000, 20000, channels);
  };
  auto kept = [](const segment_samples& s, std::int32_t channel, std::int32_t begin, std::int32_t end) {
    CHECK(s.result == outcome::kept);
    CHECK(s.channel == channel);
    CHECK(s.begin == begin);
    CHECK(s.end == end);
  };
  kept(at(0.5, 1.10), 0, 8000, 17600);              // 1.10 * 16000 = 17600.000000000004
  kept(at(1.001, 1.2), 0, 16015, 19200);            // 1.001 * 16000 = 16015.999999999998: truncated
  kept(at(1.0, 1.3), 0, 16000, 20000);              // ends 800 samples past the end: cut there
  kept(at(0.1, -1), 0, 1600, 20000);                // -1: to the end
  kept(at(0.0001, 0.2), 0, 1, 3200);                // 1.6 samples in: sample 1
  kept(at(0, 0.5, 1, 2), 1, 0, 8000);               // the channel asked for
  CHECK(at(0.2, 1.75).result == outcome::skipped);  // 8000 past the end: max_overshoot 0.5 s
  CHECK(at(0.2, 1.7499).result == outcome::kept);
  CHECK(at(1.3, 1.4).result == outcome::skipped);  // starts past the end
  CHECK(at(1.24, -1).result == outcome::skipped);  // 160 samples: not over 0.1 s
  CHECK(at(1.0, 1.1).result == outcome::skipped);  // exactly 0.1 s: not over it
  CHECK(at(1.0, 1.1001).result == outcome::kept);
  CHECK(at(0, 0.5, 2, 2).result == outcome::skipped);  // no such channel
  CHECK(at(0, 0.5, -1, 2).result == outcome::needs_channel);
  CHECK(at(1e12, 2e12).result == outcome::skipped);  // past int32, where Kaldi's cast is undefined
  segment_options strict{0.0f, 0.5f};
  CHECK(locate_segment(segment{"u", "r", 1.0, 1.3}, 16000, 20000, 1, strict).result == outcome::skipped);
  CHECK(locate_segment(segment{"u", "r", 0.5, 1.0}, 16000, 20000, 1, strict).result == outcome::skipped);
  CHECK(locate_segment(segment{"u", "r", 0.5, 1.01}, 16000, 20000, 1, strict).result == outcome::kept);
}

TEST_CASE("a segments file over wav.scp reads the utterances it names", "[segments][table]") {
  captured_reports captured;
  data_folder data(
      "u1 r1 0.5 1.10\n"
      "u2 r1 1.0 1.3\n"
      "u3 r1 0.2 2.0\n"
      "u4 r1 1.24 -1\n"
      "u5 r2 0 0.5 1\n"
      "u6 r1 1.001 1.2\n"
      "u7 r2 0.25 1 0\n");
  const std::map<std::string, std::vector<float>> want{{"u1", expected(0, 8000, 17600)},
                                                       {"u2", expected(0, 16000, 20000)},
                                                       {"u5", expected(1, 0, 4000)},
                                                       {"u6", expected(0, 16015, 19200)},
                                                       {"u7", expected(0, 2000, 8000)}};

  SECTION("in order, skipping what extract-segments skips, and saying so") {
    std::vector<std::string> keys;
    for (auto& [key, wave] : sequential_table_reader<wave_holder>(data.spec())) {
      keys.push_back(key);
      CHECK(wave.sample_frequency() == (key == "u5" || key == "u7" ? 8000 : 16000));
      CHECK(samples_of(wave) == want.at(key));
    }
    CHECK(keys == std::vector<std::string>{"u1", "u2", "u5", "u6", "u7"});
    REQUIRE(reports.size() == 2);
    CHECK_THAT(reports[0], Catch::Contains("'u3' skipped: it ends at sample 32000, too far past"));
    CHECK_THAT(reports[1], Catch::Contains("'u4' skipped: it is too short"));
  }
  SECTION("by utterance, with skipped ones absent") {
    random_access_table_reader<wave_holder> r(data.spec());
    CHECK(samples_of(r.at("u7")) == want.at("u7"));
    CHECK(samples_of(r.at("u1")) == want.at("u1"));
    CHECK_FALSE(r.contains("u3"));
    CHECK_FALSE(r.contains("r1"));
    CHECK(r.size() == 7);
    std::vector<std::string> keys;
    CHECK(r.for_each_key([&](std::string_view k) { keys.emplace_back(k); }));
    CHECK(keys.size() == 7);
    CHECK(keys.front() == "u1");
  }
  SECTION("each segment is the wave extract-segments writes") {
    sequential_table_reader<bytes_holder> r(data.spec());
    const std::string& u1 = r.value();
    REQUIRE(u1.size() == 44 + 2 * 9600);
    // Kaldi's WaveData::Write: a 44-byte header for one 16-bit channel, then the samples.
    std::string want_bytes = "RIFF";
    auto le = [&](std::uint32_t v, int bytes) {
      for (int i = 0; i < bytes; ++i) want_bytes.push_back(char((v >> (8 * i)) & 0xff));
    };
    le(36 + 19200, 4);
    want_bytes += "WAVEfmt ";
    le(16, 4), le(1, 2), le(1, 2), le(16000, 4), le(32000, 4), le(2, 2), le(16, 2);
    want_bytes += "data";
    le(19200, 4);
    for (float v : want.at("u1")) le(static_cast<std::uint16_t>(static_cast<std::int16_t>(v)), 2);
    CHECK(u1 == want_bytes);
  }
}

TEST_CASE("segments extract-segments skips are reported once and left out", "[segments][table]") {
  captured_reports captured;
  SECTION("a recording the table has not, and lines it cannot read") {
    data_folder data("u1 r1 0 1\nu2 r9 0 1\nu3 r1 1.0 1.0\n\nu4 r1 x 1\nu5 r2 0 0.5 0\nu6 r1 0 1 -1\n");
    std::vector<std::string> keys;
    for (auto& [key, wave] : sequential_table_reader<wave_holder>(data.spec())) keys.push_back(key);
    CHECK(keys == std::vector<std::string>{"u1", "u5"});
    REQUIRE(reports.size() == 5);
    CHECK_THAT(reports[0], Catch::Contains("line 3 ('u3 r1 1.0 1.0') skipped: empty or invalid segment"));
    CHECK_THAT(reports[1], Catch::Contains("line 4 ('') skipped: not 4 or 5 fields"));
    CHECK_THAT(reports[2], Catch::Contains("line 5 ('u4 r1 x 1') skipped: bad start"));
    CHECK_THAT(reports[3], Catch::Contains("line 7 ('u6 r1 0 1 -1') skipped: bad channel"));
    CHECK_THAT(reports[4], Catch::Contains("utterance 'u2' skipped: no entry for key 'r9' in '" +
                                           (data.dir / "wav.scp")));
    reports.clear();
    random_access_table_reader<wave_holder> r(data.spec());
    CHECK_FALSE(r.contains("u2"));
    CHECK_FALSE(r.find("u2"));
    CHECK(reports.size() == 5);  // the lines when read, u2 once
  }
  SECTION("a recording whose command fails: an error, or under p a skip that says why") {
    data_folder data("u1 r1 0 1\nu2 r2 0 0.5 1\n");
    write_text(data.dir / "wav.scp", "r1 " + (data.dir / "r1.wav") + "\nr2 exit 3 |\n");
    sequential_table_reader<wave_holder> r(data.spec());
    CHECK_THROWS_MATCHES(
        r.next(), io_error,
        test::says("utterance 'u2' of '" + (data.dir / "segments") + "', recording 'r2': ") &&
            test::says("command exited with status 3"));
    std::vector<std::string> keys;
    for (auto& [key, wave] : sequential_table_reader<wave_holder>(data.spec(",p"))) keys.push_back(key);
    CHECK(keys == std::vector<std::string>{"u1"});
    REQUIRE(reports.size() == 1);
    CHECK_THAT(reports[0], Catch::Contains("utterance 'u2' skipped: no entry for key 'r2'"));
    CHECK_THAT(reports[0], Catch::Contains("status 3"));
  }
  SECTION("a stereo recording with no channel given") {
    data_folder data("u1 r2 0 0.5\n");
    CHECK_THROWS_MATCHES(sequential_table_reader<wave_holder>(data.spec()), format_error,
                         test::says("segments' at byte 0 (key 'u1'): expected a channel for a segment of a "
                                    "recording of 2 channels, found none"));
  }
  SECTION("names that are no keys, and lines past the limits") {
    data_folder data("u1 r1 0 1\nu\x01x r1 0 1\n");
    CHECK_THROWS_MATCHES(
        sequential_table_reader<wave_holder>(data.spec()), format_error,
        test::says("segments' at byte 10: expected utterance and recording names that are keys "
                   "(line 2)"));
    write_text(data.dir / "segments", "u1 r1 0 " + std::string(300, '1') + "\n");
    limits tight;
    tight.max_record_bytes = 64;
    open_options small;
    small.parse_limits = tight;
    CHECK_THROWS_MATCHES(sequential_table_reader<wave_holder>(data.spec(), small), format_error,
                         test::says("a line of at most 64 bytes (limits::max_record_bytes)"));
  }
  SECTION("an utterance twice") {
    data_folder data("u1 r1 0 1\nu1 r1 0 0.5\n");
    CHECK_THROWS_MATCHES(sequential_table_reader<wave_holder>(data.spec()), format_error,
                         test::says("utterance 'u1' again (line 2)"));
  }
  SECTION("a segments file that is missing") {
    data_folder data("");
    CHECK_THROWS_MATCHES(sequential_table_reader<wave_holder>("scp,segments=" + (data.dir / "none") + ":" +
                                                              (data.dir / "wav.scp")),
                         io_error, test::says("none"));
  }
}
