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
#include <tablio/stream/remote/object.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

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

// A copy in the cache, read through a descriptor that holds a shared lock on it (so that no
// eviction removes it from under a reader).
class cached_source {
 public:
  cached_source(tablio::detail::file_descriptor locked, std::string name)
      : fd_(std::move(locked)), file_(fd_.get(), std::move(name)) {}
  std::size_t read_some(char* dst, std::size_t n) { return file_.read_some(dst, n); }
  void seek(std::uint64_t offset) { file_.seek(offset); }
  std::uint64_t tell() const noexcept { return file_.tell(); }
  std::optional<std::uint64_t> size() const noexcept { return file_.size(); }
  void close() { fd_.close(); }

 private:
  tablio::detail::file_descriptor fd_;
  file_source file_;
};

class object_cache {
 public:
  object_cache(std::string folder, std::uint64_t limit) : folder_(std::move(folder)), limit_(limit) {
    if (::mkdir(folder_.c_str(), 0775) != 0 && errno != EEXIST)
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
      int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        if (errno == ENOENT) return std::nullopt;
        throw_io_error(path, errno, {"cannot open the cached copy"});
      }
      tablio::detail::file_descriptor file(fd, path, true);
      lock(fd, LOCK_SH, path);
      struct stat st;
      if (::fstat(fd, &st) != 0) throw_io_error(path, errno, {"cannot read the cached copy"});
      if (st.st_nlink == 0) continue;  // evicted between the open and the lock: look again
      ::futimens(fd, nullptr);         // used now: the last to be evicted
      return file;
    }
  }

  // The copy of the object (stat()ed), fetched now unless another process has it or is
  // fetching it (then this one waits for it).
  tablio::detail::file_descriptor fetch(object& obj, connection& c) {
    std::string path = path_of(obj.name());
    if (auto copy = open_copy(obj.name())) return std::move(*copy);
    tablio::detail::file_descriptor guard =
        tablio::detail::file_descriptor::open(path + ".lock", O_RDWR | O_CREAT, "cannot lock");
    lock(guard.get(), LOCK_EX, path + ".lock");  // one fetch per object; the others wait here
    if (auto copy = open_copy(obj.name())) return std::move(*copy);
    std::string part = path + ".part." + std::to_string(::getpid());
    {
      tablio::detail::file_descriptor out = tablio::detail::file_descriptor::open(
          part, O_WRONLY | O_CREAT | O_TRUNC, "cannot write the cached copy");
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
        ::unlink(part.c_str());
        throw;
      }
    }
    if (::rename(part.c_str(), path.c_str()) != 0) {
      int e = errno;
      ::unlink(part.c_str());
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
    if (DIR* dir = ::opendir(folder_.c_str())) {
      while (dirent* d = ::readdir(dir)) {
        std::string_view n = d->d_name;
        if (!is_cache_name(n) || n.ends_with(".lock") || n.find(".part.") != std::string_view::npos) continue;
        std::string path = folder_ + "/" + std::string(n);
        struct stat st;
        if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
        copies.push_back(
            {path, static_cast<std::uint64_t>(st.st_size), static_cast<std::int64_t>(st.st_mtime)});
        total += static_cast<std::uint64_t>(st.st_size);
      }
      ::closedir(dir);
    }
    std::sort(copies.begin(), copies.end(), [](const copy& a, const copy& b) { return a.used < b.used; });
    for (const copy& c : copies) {
      if (total <= limit_) break;
      int fd = ::open(c.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
      if (fd < 0) continue;
      if (::flock(fd, LOCK_EX | LOCK_NB) == 0 && ::unlink(c.path.c_str()) == 0) total -= c.size;
      ::close(fd);  // a copy someone reads (shared lock) is kept
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
    if (DIR* dir = ::opendir(folder_.c_str())) {
      while (dirent* d = ::readdir(dir)) {
        std::string_view n = d->d_name;
        // The tag itself may be one another process is writing at this moment: not foreign.
        if (n != "." && n != ".." && n != tag_name && !is_cache_name(n) && foreign.empty()) foreign = n;
      }
      ::closedir(dir);
    } else {
      throw_io_error(folder_, errno, {"cannot list the cache folder"});
    }
    if (!foreign.empty())
      throw_usage_error({"'", folder_, "' is not a tablio cache: it holds ", quoted_excerpt(foreign),
                         ", which tablio did not put there (a cache may remove its files); name a new or "
                         "empty folder"});
    tablio::detail::file_descriptor out = tablio::detail::file_descriptor::open(
        tag_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, "cannot tag the cache folder");
    out.write_all(tag.data(), tag.size());
    out.close();
  }
  static bool holds_tag(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return false;
    char text[256];
    ssize_t n = ::read(fd, text, sizeof text);
    ::close(fd);
    return n > 0 && std::string_view(text, static_cast<std::size_t>(n)) == tag;
  }

  static void lock(int fd, int how, const std::string& path) {
    while (::flock(fd, how) != 0)
      if (errno != EINTR) throw_io_error(path, errno, {"cannot lock"});
  }

  std::string folder_;
  std::uint64_t limit_;
};

}  // namespace remote

TABLIO_END_NAMESPACE
