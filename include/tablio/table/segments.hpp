// Kaldi's segments files over a table of recordings: "scp,segments=data/segments:wav.scp" reads
// the table of utterances that extract-segments writes, each a part of one recording's
// channel, without writing it. A segments line is
//
//   utterance recording start end [channel]      (seconds; end -1: to the recording's end)
//
// The samples kept are extract-segments' to the sample: start and end are converted to sample
// numbers by truncation; a segment starting past the end is skipped; one ending past it is cut
// at the end when it overshoots by less than max_overshoot seconds and skipped otherwise; one
// no longer than min_segment_length is skipped; a channel the recording lacks is skipped; a
// recording of several channels needs the channel (an error otherwise, as in Kaldi). Where
// extract-segments warns and goes on, this reports (error_reporter, once per line) and goes
// on: a segment skipped for its times or channel, a line it cannot read, a recording the
// table has not (or cannot read, under 'p'). A skipped segment is absent from the table.
//
// A program that reads segments= specifiers includes this header (src/tablio.cpp does, for
// TABLIO_SEPARATE_COMPILATION builds); the others compile none of it.
//
// The recordings are looked up by key, as Kaldi's RandomAccessTableReader does: the last one
// read is kept, so the segments of one recording in a row read it once (run sort on the file
// when they are not in a row and the recordings come from commands).
#pragma once

#include <tablio/core/parse_float.hpp>
#include <tablio/core/table_budget.hpp>
#include <tablio/holder/record.hpp>
#include <tablio/holder/wave.hpp>
#include <tablio/table/erased_framing.hpp>
#include <tablio/table/formats.hpp>
#include <tablio/table/key_index.hpp>
#include <tablio/table/random_access_reader.hpp>

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// One line of a segments file.
struct segment {
  std::string utterance, recording;
  double start = 0, end = 0;  // seconds; end -1: to the end of the recording
  std::int32_t channel = -1;  // -1: not given (the recording must be mono)
  // Whether both lines say the same.
  bool operator==(const segment&) const = default;
};

namespace detail {
// A number as Kaldi's ConvertStringTo* reads one: the whole field, a sign allowed.
template <class T>
bool parse_segment_number(std::string_view field, T& value) {
  if (field.size() > 1 && field[0] == '+' && field[1] != '-') field.remove_prefix(1);
  std::from_chars_result r;
  if constexpr (std::is_floating_point_v<T>)
    r = parse_float(field.data(), field.data() + field.size(), value);
  else
    r = std::from_chars(field.data(), field.data() + field.size(), value);
  if (r.ec != std::errc() || r.ptr != field.data() + field.size()) return false;
  if constexpr (std::is_floating_point_v<T>) return value - value == 0;  // finite
  return true;
}
}  // namespace detail

// Parses a segments line as extract-segments does (fields split at spaces, tabs and carriage returns);
// nullopt for a line it rejects, with why in `why` (extract-segments' words): not 4 or 5
// fields, a time or channel that is no number ("bad start", "bad end", "bad channel"), a
// negative start, an end that is neither -1 nor after the start ("empty or invalid segment").
inline std::optional<segment> parse_segment_line(std::string_view line, std::string* why = nullptr) {
  auto rejected = [&](const char* reason) -> std::optional<segment> {
    if (why) *why = reason;
    return std::nullopt;
  };
  std::string_view fields[6];
  std::size_t n = 0;
  for (std::size_t at = 0; n < 6;) {
    at = line.find_first_not_of(" \t\r", at);
    if (at == std::string_view::npos) break;
    std::size_t end = line.find_first_of(" \t\r", at);
    if (end == std::string_view::npos) end = line.size();
    fields[n++] = line.substr(at, end - at);
    at = end;
  }
  if (n != 4 && n != 5) return rejected("not 4 or 5 fields");
  segment s{std::string(fields[0]), std::string(fields[1])};
  if (!detail::parse_segment_number(fields[2], s.start)) return rejected("bad start");
  if (!detail::parse_segment_number(fields[3], s.end)) return rejected("bad end");
  if (s.start < 0 || (s.end != -1 && s.end <= 0) || (s.start >= s.end && s.end > 0))
    return rejected("empty or invalid segment");
  if (n == 5 && (!detail::parse_segment_number(fields[4], s.channel) || s.channel < 0))
    return rejected("bad channel");
  return s;
}

// Where a segment lies in its recording: samples [begin, end) of one channel, as
// extract-segments computes them; or why extract-segments skips it, or that the recording has
// several channels and the segment names none.
struct segment_samples {
  enum class outcome { kept, skipped, needs_channel };
  outcome result = outcome::kept;
  std::int32_t channel = 0, begin = 0, end = 0;
  std::string reason;  // skipped: why
};

namespace detail {
// A number of samples as Kaldi's int32 conversions give it: truncated; past int32's range
// (undefined in Kaldi), or NaN, as its largest, which is past any recording's end.
inline std::int64_t samples_at(double samples) {
  if (!(samples < 2147483647.0)) return 2147483647;
  return samples > -2147483648.0 ? static_cast<std::int64_t>(samples) : -2147483648;
}
}  // namespace detail

// Where segment s lies in a recording of `samples` samples per channel at sample_frequency,
// computed as extract-segments does (the header's opening comment): kept, skipped with the
// reason, or needs_channel when the recording has several channels and s names none.
inline segment_samples locate_segment(const segment& s, float sample_frequency, std::int32_t samples,
                                      std::int32_t channels, const segment_options& options = {}) {
  using outcome = segment_samples::outcome;
  segment_samples out;
  const std::int64_t begin = detail::samples_at(s.start * sample_frequency);
  std::int64_t end = s.end != -1 ? detail::samples_at(s.end * sample_frequency) : samples;
  auto skip = [&](message why) {
    out.result = outcome::skipped;
    out.reason = detail::join(why);
    return out;
  };
  if (begin >= samples)
    return skip({"it starts at sample ", decimal(begin), ", past the recording's ", decimal(samples)});
  if (end > samples) {
    if (end >= samples + detail::samples_at(options.max_overshoot * sample_frequency))
      return skip({"it ends at sample ", decimal(end), ", too far past the recording's ", decimal(samples),
                   " (max_overshoot)"});
    end = samples;
  }
  if (end <= begin + detail::samples_at(options.min_segment_length * sample_frequency))
    return skip({"it is too short (min_segment_length)"});
  if (s.channel == -1 && channels != 1) {
    out.result = outcome::needs_channel;
    return out;
  }
  if (s.channel >= channels)
    return skip({"channel ", decimal(s.channel), " is not among the recording's ", decimal(channels)});
  out.channel = s.channel == -1 ? 0 : s.channel;
  out.begin = static_cast<std::int32_t>(begin);
  out.end = static_cast<std::int32_t>(end);
  return out;
}

// The samples a segment keeps (where locate_segment kept them), as a mono wave of the
// recording's sample rate.
inline wave_data cut_segment(const wave_data& recording, const segment_samples& where) {
  matrix<float> samples(1, where.end - where.begin);
  std::span<const float> from = recording.data().row(where.channel);
  std::copy(from.begin() + where.begin, from.begin() + where.end, samples.row(0).begin());
  return wave_data(recording.sample_frequency(), std::move(samples));
}

// The input framing (the Framing concept) of a table of segments: each entry is one segment's
// wave, a record as a wave archive holds it, keyed by its utterance, in the segments file's
// order; lookups by utterance. `recordings` is the table the segments cut, read with `options`
// (s and p).
class segmented_input {
 public:
  static constexpr unsigned forms = entry_forms(entry_form::record);

  // Reads the whole segments file now, opened with `open`, and reports the lines it skips; a
  // name that is no key, or an utterance given twice, is a format_error.
  segmented_input(std::string_view segments, const segment_options& cut, owned<any_input_base> recordings,
                  std::string recordings_name, read_options options, const open_options& open)
      : name_(segments), cut_(cut), budget_(open.parse_limits.max_table_expansion) {
    read_segments(open);
    recordings_.open(std::move(recordings), std::move(recordings_name),
                     read_options{options.sorted, false, false, options.permissive});
  }

  // The Framing concept: the next segment's wave, skipping (and reporting) segments the recording
  // cannot give; false at the end. A command that failed is an io_error naming the utterance.
  bool next(entry& e) {
    while (next_ < lines_.size())
      if (hand_out(lines_[next_++], e)) return true;
    return false;
  }
  // The Framing concept: the wave of utterance key; false when the segments have none or skip it.
  bool find(std::string_view key, entry& e) {
    detail::key_index::item* it = index_.find(key);
    return it && hand_out(lines_[it->where.offset], e);
  }
  // The Framing concept: the number of segments lines read, which counts segments skipped only
  // when their recording is read (times past its end, a missing recording).
  std::uint64_t size() const noexcept { return lines_.size(); }
  template <class F>
  // Calls f(utterance) for each segments line read, in order, reading no recording; true.
  bool for_each_key(F f) {
    for (const line& l : lines_) f(l.s.utterance);
    return true;
  }
  // The Framing concept: what errors call the table (the segments file).
  const std::string& name() const noexcept { return name_; }
  // The Framing concept: closes the recordings' table; throws when an input command failed.
  void close() { recordings_.close(); }

 private:
  struct line {
    segment s;
    std::uint64_t offset;
    bool reported = false;  // its skip was reported
  };
  // The recordings' table, read by key: a framing chosen at run time with the reading options
  // of the specifier that named it.
  class recordings_input : public any_input {
   public:
    recordings_input(owned<any_input_base> in, std::string name, read_options options)
        : any_input(std::move(in)), name_(std::move(name)), options_(options) {}
    const std::string& name() const noexcept { return name_; }
    read_options options() const noexcept { return options_; }

   private:
    std::string name_;
    read_options options_;
  };

  void read_segments(const open_options& open) {
    reader in = open_input(name_, open);
    std::string text, why;
    std::uint64_t number = 0;
    for (std::uint64_t at = in.tell(); in.read_line(text); at = in.tell()) {
      ++number;
      std::optional<segment> s = parse_segment_line(text, &why);
      if (!s) {
        report({"line ", decimal(number), " (", quoted_excerpt(text), ") skipped: ", why});
        continue;
      }
      if (!kaldi_io::is_token(s->utterance) || !kaldi_io::is_token(s->recording))
        in.fail_at(at, {"utterance and recording names that are keys (line ", decimal(number), ")"},
                   {quoted_excerpt(text)});
      if (index_.find(s->utterance))
        throw_format_error(
            name_, at, s->utterance, {"distinct utterances"},
            {"utterance ", quoted_excerpt(s->utterance), " again (line ", decimal(number), ")"});
      index_.insert(s->utterance).where.offset = lines_.size();
      lines_.push_back({std::move(*s), at, false});
    }
    in.close();
  }

  // Sets out to l's wave; false when the segment is skipped.
  bool hand_out(line& l, entry& out) {
    const wave_data* recording;
    try {
      recording = &recordings_.borrow_at(l.s.recording);
    } catch (const missing_key_error& e) {  // absent, or unreadable under 'p': why, in its words
      skip(l, {e.what()});
      return false;
    } catch (const io_error& e) {  // a command that failed: which utterance needed it
      throw io_error(e, e.path(),
                     detail::join({"utterance ", quoted_excerpt(l.s.utterance), " of '", name_,
                                   "', recording ", quoted_excerpt(l.s.recording), ": ", e.what()}));
    }
    segment_samples where = locate_segment(l.s, recording->sample_frequency(), recording->num_samples(),
                                           recording->num_channels(), cut_);
    if (where.result == segment_samples::outcome::needs_channel)
      throw_format_error(
          name_, l.offset, l.s.utterance,
          {"a channel for a segment of a recording of ", decimal(recording->num_channels()), " channels"},
          {"none"});
    if (where.result == segment_samples::outcome::skipped) {
      skip(l, {where.reason});
      return false;
    }
    if (budget_.bounded()) count(l, *recording, where);
    encode_record<wave_holder>(bytes_, cut_segment(*recording, where));
    out.key = l.s.utterance;
    out.form = entry_form::record;
    out.bytes = bytes_;
    out.source = name_;
    out.data_offset = 0;
    out.range = {};
    out.pending = false;
    return true;
  }

  // limits::max_table_expansion, in samples: each recording the segments name adds its samples,
  // once, to what they may cut in all, so that lines cutting the same recording again and again
  // end the table.
  void count(const line& l, const wave_data& recording, const segment_samples& where) {
    if (!counted_recordings_.find(l.s.recording)) {
      counted_recordings_.insert(l.s.recording);
      budget_.allow(static_cast<std::uint64_t>(recording.num_samples()) *
                    static_cast<std::uint64_t>(recording.num_channels()));
    }
    budget_.take(static_cast<std::uint64_t>(where.end - where.begin), name_, l.offset, l.s.utterance,
                 "samples of the recordings the segments name");
  }

  // Reports a skipped segment, once.
  void skip(line& l, message why) {
    if (l.reported) return;
    l.reported = true;
    report({"utterance ", quoted_excerpt(l.s.utterance), " skipped: ", detail::join(why)});
  }

  void report(message what) const {  // the line's bytes escaped, as every message's
    report_error(detail::printable(detail::join({"'", name_, "': ", detail::join(what)})).c_str());
  }

  std::string name_;
  segment_options cut_;
  std::vector<line> lines_;
  detail::key_index index_;
  std::size_t next_ = 0;
  random_access_table_reader<wave_holder, recordings_input> recordings_;
  std::string bytes_;
  detail::table_budget budget_;
  detail::key_index counted_recordings_;  // whose samples the budget counts
};

namespace detail {
inline owned<any_input_base> open_segmented(const rspecifier& r, owned<any_input_base> recordings,
                                            const open_options& options) {
  // The segments file is confined as the table's files are, under the untrusted policy.
  return make_owned<erased_input<segmented_input>>(
      r.segments, r.segmenting, std::move(recordings), r.filename,
      read_options{r.sorted, r.called_sorted, r.once, r.permissive}, table_open_options(options, r.filename));
}
// Programs that include this header read segments= specifiers.
inline const bool segments_readable = (open_segments = &open_segmented, true);
}  // namespace detail

TABLIO_END_NAMESPACE
