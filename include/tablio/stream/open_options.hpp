// How names are opened: which kinds of name are allowed (pipes, remote objects, for names that
// come from untrusted input), the limits parsers keep to, and how remote objects are fetched.
#pragma once

#include <tablio/core/limits.hpp>

#include <cstdint>
#include <optional>
#include <string>

TABLIO_BEGIN_NAMESPACE

// Remote objects (http://, https://, s3://; the tablio::curl component).
struct remote_options {
  // A folder where whole objects are kept once read (cache=DIR in a specifier); empty: the
  // environment's TABLIO_CACHE, or no cache. Processes on one machine share it.
  std::string cache;
  // Least recently used objects no process has open are removed past this size (bytes; 0: no
  // limit); cache_limit=BYTES in a specifier.
  std::uint64_t cache_limit = 0;
  // A bundle of CA certificates for https (default: CURL_CA_BUNDLE, SSL_CERT_FILE, and for
  // s3:// AWS_CA_BUNDLE, else the system's).
  std::string ca_file;
  // Seconds one request of bounded size may take, its retries and their waits included: a HEAD,
  // a range, a part of an upload, a listing page (not the GET that streams an object in order).
  // 0: none; unset: TABLIO_HTTP_REQUEST_DEADLINE, else 600.
  std::optional<double> request_deadline;
  // Seconds everything one opened object does may take, from open to close: a reader's GETs, a
  // writer's upload, a glob's listing. 0: none; unset: TABLIO_HTTP_STREAM_DEADLINE, else none.
  std::optional<double> stream_deadline;
};

// How one open treats a name: what kinds of name it may open, where local files may be, the
// parsers' limits, remote fetching and table threads. The defaults trust the name.
struct open_options {
  // Run "cmd |" and "| cmd" names as shell commands. Turn off for names from untrusted input.
  bool allow_pipes = true;
  // Open http://, https:// and s3:// names. Turn off for names from untrusted input.
  bool allow_network = true;
  // Names come from untrusted input: as under the process's untrusted policy
  // (stream/policy.hpp), for this open only: no commands, no standard input, regular files
  // only, no cache named by a specifier, untrusted_limits, and a table confined to its folder.
  // The network stays as allow_network says (the process's untrusted policy closes it).
  bool untrusted = false;
  // A folder every local name must resolve to a regular file inside of (symbolic links
  // followed), with no command and no standard input; empty: anywhere.
  std::string confine;
  // Open local files at all. Off for what a remote table or index lists under untrusted options:
  // an upload served from a server reaches no file of the machine that reads it.
  bool allow_local = true;
  // Bounds for what parsers reading this input may allocate.
  limits parse_limits = default_limits;
  remote_options remote;
  // Threads a table decodes its entries in ahead of its reader, or encodes them in behind its
  // writer, handing them on in table order (docs/threads.md); 1: the caller's thread alone. A
  // specifier's threads=N says it for that table.
  unsigned threads = 1;
};

TABLIO_END_NAMESPACE
