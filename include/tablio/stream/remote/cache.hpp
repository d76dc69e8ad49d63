// The local cache of remote objects: a folder that processes on one machine share (DataLoader
// workers, DDP ranks, jobs). An object is fetched whole the first time it is opened, into a
// temporary file that becomes its copy only once its size is checked (the fetch is pinned to
// the object's ETag), by an atomic rename; a lock file per object makes the other processes
// wait for that one fetch instead of fetching it again. Opened again, the copy is read from
// disk with no request at all. With a size limit, the least recently opened copies that no
// process holds open (each holds a shared lock on the copies it reads) are removed.
//
// The cache touches only what it made: a folder is a cache once it holds the tag file tablio
// writes there (CACHEDIR.TAG, which backup tools also know), and only then; a folder that
// holds anything else is refused, and eviction removes only copies by the names it gives them.
#pragma once

#include <tablio/core/error.hpp>
#include <tablio/core/sha256.hpp>
#include <tablio/stream/file.hpp>
#include <tablio/stream/platform/file_io.hpp>
#include <tablio/stream/platform/folders.hpp>
#include <tablio/stream/platform/process.hpp>
#include <tablio/stream/remote/object.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

TABLIO_BEGIN_NAMESPACE

namespace remote {

namespace detail {
namespace os = tablio::detail::os;
}  // namespace detail

// A copy in the cache, read through a descriptor that holds a shared lock on it (so that no
// eviction removes it from under a reader).
// It models the Source concept: seekable, sized and closable.
class cached_source {
 public:
  // Reads the copy through `locked`, which holds its shared lock until close(); `name` is what
  // errors call it.
  cached_source(tablio::detail::file_descriptor locked, std::string name)
      : fd_(std::move(locked)), file_(fd_.get(), std::move(name)) {}
  // The Source concept: reads up to n bytes of the copy into dst; 0 at the end.
  std::size_t read_some(char* dst, std::size_t n) { return file_.read_some(dst, n); }
  // Moves to byte offset of the copy.
  void seek(std::uint64_t offset) { file_.seek(offset); }
  // The offset of the next byte read.
  std::uint64_t tell() const noexcept { return file_.tell(); }
  // The copy's size.
  std::optional<std::uint64_t> size() const noexcept { return file_.size(); }
  // Closes the copy, letting its lock go.
  void close() { fd_.close(); }

 private:
  tablio::detail::file_descriptor fd_;
  file_source file_;
};

// A cache folder, as the header's opening comment describes it: gives the copy of an object,
// fetching it first when no process has, and evicts copies past its size limit.
class object_cache {
 public:
  // Opens the cache in `folder`, creating it if need be, limited to `limit` bytes (0: no
  // limit); io_error when it cannot be made; usage_error for a folder that holds anything but
  // a cache's files.
  object_cache(std::string folder, std::uint64_t limit) : folder_(std::move(folder)), limit_(limit) {
    if (!detail::os::make_folder(folder_) && errno != EEXIST)
      throw_io_error(folder_, errno, {"cannot create the cache folder"});
    claim_folder();
  }

  // Whether a name in the folder is one the cache gives: its copies ("HASH-name"), their
  // lock files and the parts of fetches under way.
  static bool is_cache_name(std::string_view n) {
    if (n.size() < 34 || n[32] != '-') return false;
    for (char c : n.substr(0, 32))
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return true;
  }

  // Where the copy of the object named `name` is kept: a name of the URL's hash, with its
  // last part for people who look.
  std::string path_of(std::string_view name) const {
    std::string base(name.substr(name.find_last_of('/') + 1));
    for (char& c : base)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
    if (base.size() > 64) base.resize(64);
    return folder_ + "/" + sha256::of(name).substr(0, 32) + "-" + base;
  }

  // The copy of the object, if the cache has it: opened, locked against eviction, and marked
  // as used now. Makes no request.
  std::optional<tablio::detail::file_descriptor> open_copy(std::string_view name) const {
    std::string path = path_of(name);
    for (;;) {
      detail::os::native_file fd = detail::os::open_file(path, detail::os::file_use::read);
      if (fd == detail::os::no_file()) {
        if (errno == ENOENT) return std::nullopt;
        throw_io_error(path, errno, {"cannot open the cached copy"});
      }
      tablio::detail::file_descriptor file(fd, path, true);
      lock(fd, detail::os::file_lock::shared, path);
      detail::os::file_status st;
      if (!detail::os::status_of(fd, st)) throw_io_error(path, errno, {"cannot read the cached copy"});
      if (st.links == 0) continue;  // evicted between the open and the lock: look again
      detail::os::touch_file(fd);   // used now: the last to be evicted
      return file;
    }
  }

  // The copy of the object (stat()ed), fetched now unless another process has it or is
  // fetching it (then this one waits for it).
  tablio::detail::file_descriptor fetch(object& obj, connection& c) {
    std::string path = path_of(obj.name());
    if (auto copy = open_copy(obj.name())) return std::move(*copy);
    tablio::detail::file_descriptor guard =
        tablio::detail::file_descriptor::open(path + ".lock", detail::os::file_use::update, "cannot lock");
    lock(guard.get(), detail::os::file_lock::exclusive,
         path + ".lock");  // one fetch per object; the others wait
    if (auto copy = open_copy(obj.name())) return std::move(*copy);
    std::string part = path + ".part." + std::to_string(detail::os::current_process_id());
    {
      tablio::detail::file_descriptor out = tablio::detail::file_descriptor::open(
          part, detail::os::file_use::write, "cannot write the cached copy");
      try {
        std::uint64_t written = 0;
        std::string buffer;
        auto spill = [&] {
          out.write_all(buffer.data(), buffer.size());
          written += buffer.size();
          buffer.clear();
        };
        obj.get(c, 0, std::nullopt, [&](const char* data, std::size_t n) {
          buffer.append(data, n);
          if (buffer.size() >= (std::size_t{1} << 20)) spill();
          return true;
        });
        spill();
        if (written != obj.size())
          throw_io_error(obj.name(), 0,
                         {"fetched ", decimal(written), " bytes of ", decimal(obj.size()), " of"});
        out.close();
      } catch (...) {
        detail::os::remove_file(part);
        throw;
      }
    }
    if (!detail::os::replace_file(part, path)) {
      int e = errno;
      detail::os::remove_file(part);
      throw_io_error(path, e, {"cannot store the cached copy"});
    }
    auto copy = open_copy(obj.name());
    if (!copy) throw_io_error(path, ENOENT, {"the cached copy vanished:"});
    evict();
    return std::move(*copy);
  }

  // Removes the least recently used copies no process has open, until the cache holds at
  // most the limit.
  void evict() const {
    if (limit_ == 0) return;
    struct copy {
      std::string path;
      std::uint64_t size;
      std::int64_t used;
    };
    std::vector<copy> copies;
    std::uint64_t total = 0;
    std::vector<std::string> names;
    detail::os::list_folder(folder_, names);
    for (std::string_view n : names) {
      if (!is_cache_name(n) || n.ends_with(".lock") || n.find(".part.") != std::string_view::npos) continue;
      std::string path = folder_ + "/" + std::string(n);
      detail::os::file_status st;
      if (!detail::os::status_of(path, false, st) || st.kind != detail::os::file_kind::regular) continue;
      copies.push_back({path, st.size, st.modified});
      total += st.size;
    }
    std::sort(copies.begin(), copies.end(), [](const copy& a, const copy& b) { return a.used < b.used; });
    for (const copy& c : copies) {
      if (total <= limit_) break;
      detail::os::native_file fd =
          detail::os::open_file(c.path, detail::os::file_use::read, {.no_links = true});
      if (fd == detail::os::no_file()) continue;
      if (detail::os::lock_file(fd, detail::os::file_lock::exclusive, false) &&
          detail::os::remove_file(c.path))
        total -= c.size;
      detail::os::close_quietly(fd);  // a copy someone reads (shared lock) is kept
    }
  }

 private:
  static constexpr std::string_view tag_name = "CACHEDIR.TAG";
  static constexpr std::string_view tag =
      "Signature: 8a477f597d28d172789f06886806bc55\n"
      "# A cache of remote objects that tablio made: it removes only the files it put here.\n";

  // Makes sure the folder is a cache: it has the tag, or it is tagged now when it holds nothing
  // but what a cache holds (a new folder, or a cache made before tags). Any other folder is
  // refused: its files are not the cache's to evict.
  void claim_folder() const {
    std::string tag_path = folder_ + "/" + std::string(tag_name);
    if (holds_tag(tag_path)) return;
    std::string foreign;
    std::vector<std::string> names;
    if (!detail::os::list_folder(folder_, names))
      throw_io_error(folder_, errno, {"cannot list the cache folder"});
    for (std::string_view n : names)  // the tag may be one another process is writing now: not foreign
      if (n != tag_name && !is_cache_name(n) && foreign.empty()) foreign = n;
    if (!foreign.empty())
      throw_usage_error({"'", folder_, "' is not a tablio cache: it holds ", quoted_excerpt(foreign),
                         ", which tablio did not put there (a cache may remove its files); name a new or "
                         "empty folder"});
    tablio::detail::file_descriptor out = tablio::detail::file_descriptor::open(
        tag_path, detail::os::file_use::write, "cannot tag the cache folder", {.no_links = true});
    out.write_all(tag.data(), tag.size());
    out.close();
  }
  static bool holds_tag(const std::string& path) {
    detail::os::native_file fd = detail::os::open_file(path, detail::os::file_use::read, {.no_links = true});
    if (fd == detail::os::no_file()) return false;
    char text[256];
    std::int64_t n = detail::os::read_file(fd, text, sizeof text);
    detail::os::close_quietly(fd);
    return n > 0 && std::string_view(text, static_cast<std::size_t>(n)) == tag;
  }

  static void lock(detail::os::native_file fd, detail::os::file_lock how, const std::string& path) {
    if (!detail::os::lock_file(fd, how, true)) throw_io_error(path, errno, {"cannot lock"});
  }

  std::string folder_;
  std::uint64_t limit_;
};

}  // namespace remote

TABLIO_END_NAMESPACE
