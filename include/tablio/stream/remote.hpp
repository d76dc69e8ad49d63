// Remote objects: http://, https:// and s3://bucket/key names, opened into the same reader
// and writer interfaces as files (the tablio::curl component). Reading streams ahead of the
// reader, and a seek fetches byte ranges over kept-alive connections; failures are retried,
// resuming at the exact byte, within deadlines per request and per opened object
// (remote_options), and an object replaced while it is read is an error. Writing
// an s3:// object uploads it in parts as it is written; it appears only when close() has
// succeeded. With a cache folder, whole objects are fetched once and read from disk after.
//
// These functions are compiled once per program, in src/remote.cpp (the tablio::curl CMake
// target adds it to what links it; without CMake, compile it with -DTABLIO_WITH_CURL and link
// libcurl). filename.hpp's open_input() and open_output() call them for remote names.
#pragma once

#if !defined(TABLIO_WITH_CURL)
#error \
    "<tablio/stream/remote.hpp> needs libcurl: link the tablio::curl CMake target (it defines TABLIO_WITH_CURL)"
#endif

#include <tablio/stream/open_options.hpp>
#include <tablio/stream/reader.hpp>
#include <tablio/stream/writer.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// Opens a remote object for reading from byte `offset`: streaming ahead of the reader for
// sequential access, fetching ranges for random access (which streams once reading goes on
// in order).
reader open_remote_input(std::string_view url, std::uint64_t offset, access_pattern access,
                         const open_options& options);

// A remote object opened for reading from its start, streaming from now on, to be taken
// later: a table reading shards in order starts the next one while it reads this one, so the
// round trip to its first byte passes meanwhile. take() gives the reader, or throws what the
// open met; dropping it untaken stops the transfer.
class remote_opening {
 public:
  // Starts streaming the object at url from its start; an error it meets waits for take(). With
  // a cache folder, it starts nothing, and take() fetches the object.
  remote_opening(std::string_view url, const open_options& options);
  remote_opening(remote_opening&&) noexcept;
  remote_opening& operator=(remote_opening&&) noexcept;
  ~remote_opening();
  // The reader of the object, once: throws what the open met.
  reader take();

 private:
  struct started;
  std::unique_ptr<started> s_;
};

// Opens an s3:// object for writing (http(s) objects are read-only).
writer open_remote_output(std::string_view url, const open_options& options);

// The s3:// names of the objects whose names start with `prefix`, in bytewise order
// (ListObjectsV2, every page). http(s) servers cannot be listed: a usage_error.
std::vector<std::string> list_remote(std::string_view prefix, const open_options& options);

// Whether a remote object exists.
bool remote_exists(std::string_view url, const open_options& options);

// A remote object's size (a HEAD request); an io_error when it cannot be had (404 included).
std::uint64_t remote_size(std::string_view url, const open_options& options);

// A local file holding the remote object, fetched into the cache (options.remote.cache, or
// TABLIO_CACHE) once, for what needs a local file (LMDB maps one); a usage_error without a cache.
std::string cached_remote_copy(std::string_view url, const open_options& options);

TABLIO_END_NAMESPACE
