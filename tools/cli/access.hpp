// What every command may open and read, from the options all commands take: the process's
// policy (stream/policy.hpp), set once before anything is opened, so that every table, script,
// shard and index the command reaches obeys it. And text from the input as it may be printed.
#pragma once

#include <tablio/core/error.hpp>
#include <tablio/stream/platform/process.hpp>
#include <tablio/stream/policy.hpp>

#include "arguments.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace cli {

inline constexpr const char* access_help =
    "Options of every command, for input from others (docs/reliability.md):\n"
    "  --untrusted        treat all input as untrusted (also TABLIO_UNTRUSTED=1): no commands, no\n"
    "                     network, no standard input, regular files only, no cache= in specifiers,\n"
    "                     tighter limits, and each table confined to its own folder\n"
    "  --no-pipes         refuse commands (\"cmd |\", \"| cmd\") wherever they are named\n"
    "  --no-network       refuse http://, https:// and s3:// names\n"
    "  --confine=DIR      every local name must resolve inside DIR, to a regular file\n"
    "  --max-record-bytes=N, --max-element-count=N, --max-token-bytes=N, --max-total-bytes=N,\n"
    "  --max-expansion=N, --max-table-expansion=N  lower the limits of what reading may take (bytes\n"
    "                     of one record, elements of one container, bytes of one key or word, bytes\n"
    "                     from one input, how many times its size a compressed input may inflate,\n"
    "                     and how many times the bytes of the files it names one table may read)\n"
    "  --request-deadline=S, --stream-deadline=S  seconds one remote request (with its retries) and\n"
    "                     all one remote object's transfers may take (0: none)\n"
    "  --threads=N        decode and encode entries in N threads, in table order (docs/threads.md)\n";

inline std::uint64_t limit_option(arguments& args, const std::string& name, std::uint64_t otherwise) {
  std::string v = args.get(name, "");
  if (v.empty()) return otherwise;
  if (v.size() > 19 || v.find_first_not_of("0123456789") != std::string::npos)
    throw tablio::usage_error("--" + name + " takes a number, not '" + v + "'");
  return std::stoull(v);
}

// The options the tool's outputs open with: --confine confines what it writes too (the process's
// policy confines only what is read, an output's name being the caller's).
inline tablio::open_options& output_access() {
  static tablio::open_options options;
  return options;
}

// The options the tool's inputs open with (the process's policy says what they may open).
inline tablio::open_options& input_access() {
  static tablio::open_options options;
  return options;
}

// Reads the access options and sets the process's policy from them.
inline void apply_access_options(arguments& args) {
  tablio::process_policy p;
  p.untrusted = args.flag("untrusted");
  p.allow_pipes = !args.flag("no-pipes");
  if (args.flag("no-network")) p.allow_network = false;  // else as the policy says (closed under --untrusted)
  p.confine = args.get("confine", "");
  if (p.confine == "true") throw tablio::usage_error("--confine takes a folder: --confine=DIR");
  output_access().confine = p.confine;
  if (std::string threads = args.get("threads", ""); !threads.empty()) {
    std::uint64_t n = limit_option(args, "threads", 1);
    if (n < 1 || n > 256) throw tablio::usage_error("--threads is 1 to 256, not '" + threads + "'");
    input_access().threads = output_access().threads = static_cast<unsigned>(n);
  }
  tablio::limits& l = p.parse_limits;
  l.max_record_bytes = limit_option(args, "max-record-bytes", l.max_record_bytes);
  l.max_element_count = limit_option(args, "max-element-count", l.max_element_count);
  l.max_token_bytes = static_cast<std::size_t>(limit_option(args, "max-token-bytes", l.max_token_bytes));
  l.max_total_bytes = limit_option(args, "max-total-bytes", l.max_total_bytes);
  l.max_expansion = limit_option(args, "max-expansion", l.max_expansion);
  l.max_table_expansion = limit_option(args, "max-table-expansion", l.max_table_expansion);
  tablio::set_process_policy(p);
  // Deadlines are the remote layer's, which takes them from the environment.
  for (const char* name : {"request-deadline", "stream-deadline"}) {
    std::string v = args.get(name, "");
    if (v.empty()) continue;
    char* end = nullptr;
    double seconds = std::strtod(v.c_str(), &end);
    if (*end != '\0' || !(seconds >= 0))
      throw tablio::usage_error("--" + std::string(name) + " takes a number of seconds, not '" + v + "'");
    std::string variable = std::string(name) == "request-deadline" ? "TABLIO_HTTP_REQUEST_DEADLINE"
                                                                   : "TABLIO_HTTP_STREAM_DEADLINE";
    tablio::detail::os::set_environment(variable.c_str(), v.c_str());
  }
}

// Text from the input as the tool prints it: control characters and bytes that are not UTF-8
// escaped (\xNN), so that nothing in a file moves a terminal's cursor or forges a line;
// `keep`: control bytes kept (a value's newlines).
inline std::string shown(std::string_view text, std::string_view keep = {}) {
  return tablio::detail::printable(text, keep);
}

}  // namespace cli
