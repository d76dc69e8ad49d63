// tablio's remote objects (the tablio::curl component): http://, https:// and s3:// names,
// opened for the stream layer's open_input() and open_output(). Compiled once per program,
// with TABLIO_WITH_CURL, and linked with libcurl; the tablio::curl CMake target adds this
// file to what links it.
#if !defined(TABLIO_WITH_CURL)
#error "src/remote.cpp is the tablio::curl component: compile it with TABLIO_WITH_CURL and link libcurl"
#endif

#include <tablio/stream/filename.hpp>
#include <tablio/stream/remote.hpp>
#include <tablio/stream/remote/cache.hpp>
#include <tablio/stream/remote/object.hpp>
#include <tablio/stream/remote/s3.hpp>
#include <tablio/stream/remote/source.hpp>
#include <tablio/stream/remote/upload.hpp>

#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <string>

TABLIO_BEGIN_NAMESPACE

namespace {

// The cache the options name, or TABLIO_CACHE's.
std::optional<remote::object_cache> cache_of(const open_options& options) {
  std::string folder = options.remote.cache;
  if (folder.empty())
    if (const char* v = std::getenv("TABLIO_CACHE")) folder = v;
  if (folder.empty()) return std::nullopt;
  std::uint64_t limit = options.remote.cache_limit;
  if (limit == 0)
    if (const char* v = std::getenv("TABLIO_CACHE_LIMIT")) limit = std::strtoull(v, nullptr, 10);
  return remote::object_cache(folder, limit);
}

reader cached_reader(tablio::detail::file_descriptor copy, const std::string& name, std::uint64_t offset,
                     const open_options& options) {
  remote::cached_source source(std::move(copy), name);
  if (offset > source.size().value_or(0))
    throw_io_error(name, 0, {"offset ", decimal(offset), " is past the end of"});
  source.seek(offset);
  return reader(std::move(source), name, options.parse_limits);
}

// An object to read or write: an s3:// name needs a key (s3://bucket alone is a bucket).
std::shared_ptr<remote::object> object_named(std::string_view url, const open_options& options) {
  auto obj = std::make_shared<remote::object>(url, options);
  if (obj->is_s3() && (obj->key().empty() || obj->key().back() == '/'))
    throw_usage_error({"'", obj->name(), "' names a bucket or a folder, not an object (s3://bucket/key)"});
  return obj;
}

}  // namespace

reader open_remote_input(std::string_view url, std::uint64_t offset, access_pattern access,
                         const open_options& options) {
  auto obj = object_named(url, options);
  std::optional<remote::object_cache> cache = cache_of(options);
  if (cache)
    if (auto copy = cache->open_copy(obj->name()))
      return cached_reader(std::move(*copy), obj->name(), offset, options);
  remote::connection c;
  if (cache) {
    obj->stat(c);
    return cached_reader(cache->fetch(*obj, c), obj->name(), offset, options);
  }
  // Its size and identity come with the first bytes: one round trip, not two.
  return reader(remote::remote_source(std::move(obj), offset, access == access_pattern::random, std::move(c)),
                std::string(remote::redacted(url)), options.parse_limits);
}

struct remote_opening::started {
  std::string url;
  open_options options;
  std::optional<remote::remote_source> source;  // none for a cached object: fetched whole when taken
  std::exception_ptr error;                     // what starting met, for take() to throw
};

remote_opening::remote_opening(std::string_view url, const open_options& options)
    : s_(std::make_unique<started>()) {
  s_->url = url;
  s_->options = options;
  if (cache_of(options)) return;
  try {
    s_->source.emplace(object_named(url, options), 0, false);
    s_->source->start_streaming();
  } catch (...) {
    s_->error = std::current_exception();
  }
}
remote_opening::remote_opening(remote_opening&&) noexcept = default;
remote_opening& remote_opening::operator=(remote_opening&&) noexcept = default;
remote_opening::~remote_opening() = default;

reader remote_opening::take() {
  started& s = *s_;
  if (s.error) std::rethrow_exception(s.error);
  if (!s.source) return open_remote_input(s.url, 0, access_pattern::sequential, s.options);
  return reader(std::move(*s.source), std::string(remote::redacted(s.url)), s.options.parse_limits);
}

writer open_remote_output(std::string_view url, const open_options& options) {
  if (!url.starts_with("s3://"))
    throw_usage_error({"'", remote::redacted(url),
                       "' cannot be written: http(s) objects are read-only (write s3:// "
                       "objects, or files)"});
  auto obj = object_named(url, options);
  return writer(remote::upload_sink(obj), obj->name());
}

std::vector<std::string> list_remote(std::string_view prefix, const open_options& options) {
  if (!prefix.starts_with("s3://"))
    throw_usage_error(
        {"'", remote::redacted(prefix),
         "': an http(s) server cannot be listed; name its objects (a list, name@N or numbered names)"});
  remote::object where(prefix, options);
  remote::connection c;
  std::vector<std::string> names;
  for (const std::string& key : remote::s3_list(c, where, where.key()))
    names.push_back("s3://" + where.bucket() + "/" + key);
  return names;
}

bool remote_exists(std::string_view url, const open_options& options) {
  remote::object obj(url, options);
  remote::connection c;
  return obj.exists(c);
}

std::uint64_t remote_size(std::string_view url, const open_options& options) {
  if (!options.allow_network) detail::no_network(url);
  std::shared_ptr<remote::object> obj = object_named(url, options);
  remote::connection c;
  obj->stat(c);
  return obj->size();
}

std::string cached_remote_copy(std::string_view url, const open_options& options) {
  std::optional<remote::object_cache> cache = cache_of(options);
  if (!cache)
    throw_usage_error({"'", remote::redacted(url),
                       "' must be read from a local copy: give a cache folder (cache=DIR, or TABLIO_CACHE)"});
  remote::object obj(url, options);
  if (!cache->open_copy(obj.name())) {
    remote::connection c;
    obj.stat(c);
    cache->fetch(obj, c);
  }
  return cache->path_of(obj.name());
}

TABLIO_END_NAMESPACE
