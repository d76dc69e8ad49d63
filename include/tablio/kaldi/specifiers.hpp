// Kaldi's classification of table specifiers (util/kaldi-table.h): ClassifyRspecifier and
// ClassifyWspecifier with their enums and option structs, over tablio's specifier grammar.
// A table of one of tablio's other formats ("tfrecord:a.tfrecord", "tar:a.tar") classifies as
// an archive, so that a program choosing between tables and single files picks tables for it.
#pragma once

#include <tablio/table/specifier.hpp>

#include <string>

TABLIO_BEGIN_NAMESPACE

namespace kaldi {

// What ClassifyRspecifier finds: no rspecifier (an rxfilename, say), an archive, a script.
enum RspecifierType { kNoRspecifier, kArchiveRspecifier, kScriptRspecifier };
// What ClassifyWspecifier finds: none, an archive, a script, or an archive with a script.
enum WspecifierType { kNoWspecifier, kArchiveWspecifier, kScriptWspecifier, kBothWspecifier };

// The options of an rspecifier, as ClassifyRspecifier reports them.
struct RspecifierOptions {
  bool once = false;           // o: each key is asked for once
  bool sorted = false;         // s: the keys are sorted
  bool called_sorted = false;  // cs: the keys are asked for in sorted order
  bool permissive = false;     // p: unreadable entries are skipped
  bool background = false;     // bg: read ahead in a thread
};
// The options of a wspecifier, as ClassifyWspecifier reports them.
struct WspecifierOptions {
  bool binary = true;       // b (the default) or t
  bool flush = false;       // f: flush after every entry
  bool permissive = false;  // p: a script writer skips keys its script lacks
};

// The kind of rspecifier; when it is one, *rxfilename (when given) receives the archive's or
// script's name and *opts (when given) its options; otherwise *rxfilename is emptied.
TABLIO_IMPL RspecifierType ClassifyRspecifier(const std::string& rspecifier, std::string* rxfilename,
                                              RspecifierOptions* opts);
// The kind of wspecifier; when it is one, *archive_wxfilename and *script_wxfilename (when
// given) receive the names it writes ("ark,scp:a,s": both; "scp:s": the script, which lists
// where each object goes) and *opts its options; otherwise both names are emptied.
TABLIO_IMPL WspecifierType ClassifyWspecifier(const std::string& wspecifier, std::string* archive_wxfilename,
                                              std::string* script_wxfilename, WspecifierOptions* opts);

}  // namespace kaldi

TABLIO_END_NAMESPACE

#if TABLIO_HEADER_IMPLEMENTATION
TABLIO_BEGIN_NAMESPACE

namespace kaldi {

TABLIO_IMPL RspecifierType ClassifyRspecifier(const std::string& rspecifier, std::string* rxfilename,
                                              RspecifierOptions* opts) {
  std::optional<tablio::rspecifier> spec = parse_rspecifier(rspecifier);
  if (rxfilename) *rxfilename = spec ? spec->filename : std::string();
  if (!spec) return kNoRspecifier;
  if (opts) *opts = {spec->once, spec->sorted, spec->called_sorted, spec->permissive, spec->background};
  return spec->kind == rspecifier_kind::script ? kScriptRspecifier : kArchiveRspecifier;
}

TABLIO_IMPL WspecifierType ClassifyWspecifier(const std::string& wspecifier, std::string* archive_wxfilename,
                                              std::string* script_wxfilename, WspecifierOptions* opts) {
  std::optional<tablio::wspecifier> spec = parse_wspecifier(wspecifier);
  if (archive_wxfilename) *archive_wxfilename = spec ? spec->archive : std::string();
  if (script_wxfilename) *script_wxfilename = spec ? spec->script : std::string();
  if (!spec) return kNoWspecifier;
  if (opts) *opts = {spec->binary, spec->flush, spec->permissive};
  switch (spec->kind) {
    case wspecifier_kind::script:
      return kScriptWspecifier;
    case wspecifier_kind::archive_and_script:
    case wspecifier_kind::tfrecord_and_script:
    case wspecifier_kind::other_and_script:
      return kBothWspecifier;
    default:
      return kArchiveWspecifier;
  }
}

}  // namespace kaldi

TABLIO_END_NAMESPACE
#endif  // TABLIO_HEADER_IMPLEMENTATION
