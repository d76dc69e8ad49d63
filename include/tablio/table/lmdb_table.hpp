// The LMDB side of the table classes ("lmdb:folder"): with the tablio::lmdb component linked,
// records in key order (or a shard of them) and lookups by key; without it, the same classes,
// whose constructors say that the component is needed.
#pragma once

#include <tablio/stream/filename.hpp>
#include <tablio/stream/specifier.hpp>
#if defined(TABLIO_WITH_LMDB)
#include <tablio/framing/lmdb.hpp>
#endif

#include <optional>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

#if defined(TABLIO_WITH_LMDB)

class lmdb_table_input {
 public:
  lmdb_table_input(const rspecifier& spec, const open_options& /*options*/)
      : reader_(spec.filename, {}, {.shard_index = spec.shard_index, .shard_count = spec.shard_count}) {}
  bool next(std::string_view& key, std::string_view& value) { return reader_.next(key, value); }
  std::optional<std::string_view> get(std::string_view key) { return reader_.get(key); }
  const std::string& path() const noexcept { return reader_.path(); }

 private:
  lmdb_reader reader_;
};

class lmdb_table_output {
 public:
  lmdb_table_output(const wspecifier& spec, const open_options& /*options*/) : writer_(spec.archive) {}
  void put(std::string_view key, std::string_view value) { writer_.put(key, value); }
  void flush() { writer_.commit(); }
  void close() { writer_.close(); }

 private:
  lmdb_writer writer_;
};

#else

namespace detail {
[[noreturn]] inline void needs_lmdb(const std::string& name) {
  throw usage_error("'" + name +
                    "' is an LMDB database: link the tablio::lmdb CMake target (liblmdb) to use it");
}
}  // namespace detail

class lmdb_table_input {
 public:
  lmdb_table_input(const rspecifier& spec, const open_options&) { detail::needs_lmdb(spec.filename); }
  bool next(std::string_view&, std::string_view&) { return false; }
  std::optional<std::string_view> get(std::string_view) { return std::nullopt; }
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

class lmdb_table_output {
 public:
  lmdb_table_output(const wspecifier& spec, const open_options&) { detail::needs_lmdb(spec.archive); }
  void put(std::string_view, std::string_view) {}
  void flush() {}
  void close() {}
};

#endif

TABLIO_END_NAMESPACE
