// The grammar of Kaldi's table specifiers: wspecifiers ("ark,scp,t:a.ark,a.scp") and
// rspecifiers ("ark,s,cs:-"), exactly as Kaldi accepts and rejects them.
//
// It lives in the stream layer because classifying an extended filename needs it: Kaldi
// refuses an rxfilename such as "ark:foo" that looks like a specifier.
#pragma once

#include <tablio/core/error.hpp>

#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

TABLIO_BEGIN_NAMESPACE

enum class wspecifier_kind { archive, script, archive_and_script };
enum class rspecifier_kind { archive, script };

struct wspecifier {
  wspecifier_kind kind{};
  std::string archive;      // wxfilename of the archive (archive, archive_and_script)
  std::string script;       // wxfilename (archive_and_script) or rxfilename (script) of the scp
  bool binary = true;       // b (default) / t
  bool flush = false;       // f / nf (default)
  bool permissive = false;  // p
};

struct rspecifier {
  rspecifier_kind kind{};
  std::string filename;        // rxfilename of the archive or the script
  bool once = false;           // o / no
  bool sorted = false;         // s / ns
  bool called_sorted = false;  // cs / ncs
  bool permissive = false;     // p / np
  bool background = false;     // bg
};

namespace detail {

// Splits the options before the first ':' on ',' and ' ', keeping empty pieces as Kaldi
// does (so "o, s, ark:x" has empty options and is invalid).
inline std::optional<std::pair<std::vector<std::string_view>, std::string_view>> split_specifier(
    std::string_view spec) {
  std::size_t colon = spec.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  if (spec.empty() || std::isspace(static_cast<unsigned char>(spec.back()))) return std::nullopt;
  std::vector<std::string_view> options;
  std::string_view head = spec.substr(0, colon);
  std::size_t start = 0;
  for (std::size_t i = 0; i <= head.size(); ++i) {
    if (i == head.size() || head[i] == ',' || head[i] == ' ') {
      options.push_back(head.substr(start, i - start));
      start = i + 1;
    }
  }
  return std::pair{std::move(options), spec.substr(colon + 1)};
}

}  // namespace detail

// Parses a wspecifier; nullopt when Kaldi would classify it as kNoWspecifier.
inline std::optional<wspecifier> parse_wspecifier(std::string_view spec) {
  auto split = detail::split_specifier(spec);
  if (!split) return std::nullopt;
  wspecifier w;
  bool have_archive = false, have_script = false;
  for (std::string_view o : split->first) {
    if (o == "b")
      w.binary = true;
    else if (o == "t")
      w.binary = false;
    else if (o == "f")
      w.flush = true;
    else if (o == "nf")
      w.flush = false;
    else if (o == "p")
      w.permissive = true;
    else if (o == "ark") {
      if (have_archive || have_script) return std::nullopt;  // only "ark,scp", once
      have_archive = true;
    } else if (o == "scp") {
      if (have_script) return std::nullopt;
      have_script = true;
    } else {
      return std::nullopt;
    }
  }
  std::string_view rest = split->second;
  if (have_archive && have_script) {
    std::size_t comma = rest.find(',');
    if (comma == std::string_view::npos) return std::nullopt;
    w.kind = wspecifier_kind::archive_and_script;
    w.archive = rest.substr(0, comma);
    w.script = rest.substr(comma + 1);
  } else if (have_archive) {
    w.kind = wspecifier_kind::archive;
    w.archive = rest;
  } else if (have_script) {
    w.kind = wspecifier_kind::script;
    w.script = rest;
  } else {
    return std::nullopt;
  }
  return w;
}

// Parses an rspecifier; nullopt when Kaldi would classify it as kNoRspecifier.
inline std::optional<rspecifier> parse_rspecifier(std::string_view spec) {
  auto split = detail::split_specifier(spec);
  if (!split) return std::nullopt;
  rspecifier r;
  bool have_kind = false;
  for (std::string_view o : split->first) {
    if (o == "b" || o == "t") continue;  // accepted and ignored: objects say their own mode
    if (o == "o")
      r.once = true;
    else if (o == "no")
      r.once = false;
    else if (o == "s")
      r.sorted = true;
    else if (o == "ns")
      r.sorted = false;
    else if (o == "cs")
      r.called_sorted = true;
    else if (o == "ncs")
      r.called_sorted = false;
    else if (o == "p")
      r.permissive = true;
    else if (o == "np")
      r.permissive = false;
    else if (o == "bg")
      r.background = true;
    else if (o == "ark" || o == "scp") {
      if (have_kind) return std::nullopt;
      have_kind = true;
      r.kind = o == "ark" ? rspecifier_kind::archive : rspecifier_kind::script;
    } else {
      return std::nullopt;
    }
  }
  if (!have_kind) return std::nullopt;
  r.filename = split->second;
  return r;
}

// The same, throwing usage_error for a specifier Kaldi would not accept.
inline wspecifier require_wspecifier(std::string_view spec) {
  if (auto w = parse_wspecifier(spec)) return std::move(*w);
  throw usage_error("invalid wspecifier '" + std::string(spec) + "'");
}
inline rspecifier require_rspecifier(std::string_view spec) {
  if (auto r = parse_rspecifier(spec)) return std::move(*r);
  throw usage_error("invalid rspecifier '" + std::string(spec) + "'");
}

TABLIO_END_NAMESPACE
