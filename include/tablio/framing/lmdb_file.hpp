// LMDB's data file (data.mdb), read by tablio itself: no liblmdb, no lock file, nothing written.
// liblmdb trusts its file, and a damaged or hostile one makes it read outside its map. Here every
// page number, offset, size and count is checked against the file before it is used, so that a
// bad file is a format_error naming the file, the byte offset and, where known, the key.
//
// The layout, as liblmdb 0.9 writes it on 64-bit little-endian machines:
//   page      a 16-byte header: its own number (8), pad (2), flags (2), then the bounds of the
//             free space, lower and upper (2 + 2), or on the first page of an overflow run the
//             run's page count (4). Branch and leaf pages go on with the 2-byte offsets of their
//             nodes, in key order; the nodes themselves fill the page from its end.
//   meta      pages 0 and 1: magic 0xBEEFC0DE (4), version 1 (4), address (8), map size (8), the
//             free and main databases (48 each), last page used (8), transaction id (8). Each
//             commit rewrites one of the two; the valid one with the larger id is current.
//   database  pad (4; in the free database, the page size), flags (2), depth (2), branch, leaf
//             and overflow page counts (8 each), entries (8), root page (8; all ones when empty).
//   node      the value's size, or on a branch page the child's page number, as two 16-bit
//             halves (2 + 2), flags (2; on branch pages the page number's top bits), key size
//             (2), the key, then the value; with F_BIGDATA, the number of the overflow run
//             holding the value (8).
#pragma once

#include <tablio/core/atomics.hpp>
#include <tablio/core/config.hpp>
#include <tablio/core/endian.hpp>
#include <tablio/core/error.hpp>
#include <tablio/core/table_budget.hpp>
#include <tablio/stream/open_options.hpp>
#include <tablio/stream/platform/memory_map.hpp>
#include <tablio/stream/policy.hpp>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

TABLIO_BEGIN_NAMESPACE

namespace detail {

// The data file of the database at path: FOLDER/data.mdb, or path itself (no_subdir).
inline std::string lmdb_data_file(std::string_view path, bool no_subdir) {
  std::string file(path);
  if (!no_subdir) file += "/data.mdb";
  return file;
}

// Every read of an LMDB database opens its data file here and nowhere else: read-only, with no
// lock file, without blocking on a FIFO (lmdb_file refuses anything but a regular file), and
// as the options and the process's policy allow (a confining folder, stream/policy.hpp).
inline os::native_file open_lmdb_data_file(const std::string& file, const open_options& options) {
  return open_local_file(file, os::file_use::read, governed(options), "cannot open the LMDB database",
                         {.no_blocking = true});
}

// Sizes, offsets and flags of LMDB's format (see tablio/framing/lmdb_file.hpp).
namespace lmdb_layout {
inline constexpr std::uint32_t magic = 0xBEEFC0DE, version = 1;
inline constexpr std::uint32_t min_page_size = 512, max_page_size = 32768;  // liblmdb: at most 32 KiB
inline constexpr unsigned page_header = 16, node_header = 8;
inline constexpr std::uint16_t branch_page = 0x01, leaf_page = 0x02, overflow_page = 0x04, meta_page = 0x08,
                               fixed_leaf_page = 0x20, sub_page = 0x40;
inline constexpr std::uint16_t page_kinds =
    branch_page | leaf_page | overflow_page | meta_page | fixed_leaf_page | sub_page;
inline constexpr std::uint16_t big_data = 0x01, sub_database = 0x02, duplicate_data = 0x04;  // node flags
inline constexpr std::uint16_t reverse_key = 0x02, duplicate_sort = 0x04,
                               integer_key = 0x08;  // database flags
inline constexpr unsigned meta_magic = 16, meta_version = 20, meta_free_db = 40, meta_main_db = 88,
                          meta_last_page = 136, meta_transaction = 144, meta_end = 152;
inline constexpr unsigned db_pad = 0, db_flags = 4, db_depth = 6, db_entries = 32, db_root = 40;
inline constexpr std::uint64_t no_page = ~std::uint64_t{0};
inline constexpr unsigned max_depth = 32;  // liblmdb's cursor stack: deeper trees are damaged ones
// The smallest leaf node: its offset, a header and a 1-byte key.
inline constexpr unsigned min_leaf_node = 2 + node_header + 1;
}  // namespace lmdb_layout

}  // namespace detail

// A database's data file, mapped read-only, and the snapshot its current meta page describes.
// find() reads from any number of threads at once, and so do cursors, one per thread; each
// reads only the pages it needs, checked as it meets them. What they return views the map,
// valid while the lmdb_file lives. Another process that writes the database meanwhile may reuse the
// snapshot's pages: what is read then is checked as any file is, and may be a format_error, never a crash.
class lmdb_file {
 public:
  // Opens, maps and checks the data file (a folder's data.mdb, or the file of a no_subdir
  // database): its meta pages and its main database's description. `held`: the transaction of
  // a snapshot held for the reader in the lock table (framing/lmdb.hpp). The current snapshot
  // is read all the same, that one or a later one: the writer may have committed twice since,
  // rewriting both meta pages, and liblmdb reuses only the pages freed by transactions older
  // than its oldest reader's, which no later snapshot uses either: the hold keeps those too. A
  // format_error when the file holds only older snapshots (written anew outside the lock table).
  explicit lmdb_file(const std::string& file, const open_options& options = {}, std::uint64_t held = 0)
      : path_(file), table_expansion_(options.parse_limits.max_table_expansion) {
    detail::os::native_file fd = detail::open_lmdb_data_file(file, options);
    try {
      map(fd);
      read_meta_pages(fd, held);
    } catch (...) {
      unmap();
      detail::os::close_quietly(fd);
      throw;
    }
    detail::os::close_quietly(fd);
  }
  lmdb_file(const lmdb_file&) = delete;  // cursors point to it
  lmdb_file& operator=(const lmdb_file&) = delete;
  ~lmdb_file() { unmap(); }

  // The value stored under key, or nothing.
  std::optional<std::string_view> find(std::string_view key) const {
    if (root_ == detail::lmdb_layout::no_page) return std::nullopt;
    std::uint64_t number = root_, named_at = meta_offset_;
    for (unsigned level = 0;; ++level) {
      page_view p = tree_page(number, level, named_at);
      if (p.leaf) {
        unsigned low = 0, high = p.count;  // the key is in [low, high) if anywhere
        while (low < high) {
          unsigned middle = low + (high - low) / 2;
          node_view n = node_at(p, middle);
          int order = compare_keys(n.key, key);
          if (order == 0) return value_of(p, n);
          if (order < 0)
            low = middle + 1;
          else
            high = middle;
        }
        return std::nullopt;
      }
      // The child whose range holds key: the last whose separator is at most key (the first
      // child's separator is no key, below every other).
      unsigned low = 1, high = p.count;
      while (low < high) {
        unsigned middle = low + (high - low) / 2;
        if (compare_keys(node_at(p, middle).key, key) <= 0)
          low = middle + 1;
        else
          high = middle;
      }
      node_view n = node_at(p, low - 1);
      number = child_of(n);
      named_at = n.offset;
    }
  }

  // Records in the snapshot, as its meta page says (a full pass of a cursor checks it).
  std::uint64_t entries() const noexcept { return entries_; }
  // The transaction that wrote the snapshot.
  std::uint64_t transaction() const noexcept { return transaction_; }
  // The database's page size in bytes, as its meta page gives it.
  std::uint32_t page_size() const noexcept { return page_size_; }
  // The data file's path, as errors name it.
  const std::string& path() const noexcept { return path_; }
  // Where bytes the map holds (a value find() or a cursor gave) are in the file.
  std::uint64_t offset_of(const char* p) const noexcept {
    return static_cast<std::uint64_t>(reinterpret_cast<const unsigned char*>(p) - map_);
  }

  // LMDB's default key order: bytewise, a key before the longer keys it begins. Eight bytes
  // at a time, with no library call for the short keys datasets have.
  static int compare_keys(std::string_view a, std::string_view b) noexcept {
    const std::size_t common = a.size() < b.size() ? a.size() : b.size();
    std::size_t i = 0;
    for (; i + 8 <= common; i += 8) {
      auto x = load<std::endian::big, std::uint64_t>(a.data() + i);
      auto y = load<std::endian::big, std::uint64_t>(b.data() + i);
      if (x != y) return x < y ? -1 : 1;
    }
    for (; i < common; ++i)
      if (a[i] != b[i]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]) ? -1 : 1;
    return a.size() == b.size() ? 0 : a.size() < b.size() ? -1 : 1;
  }

  class cursor;

 private:
  struct page_view {
    const unsigned char* at;
    std::uint64_t offset;  // in the file
    unsigned count;        // nodes
    unsigned upper;        // where the nodes begin
    bool leaf;
  };
  struct node_view {
    std::string_view key;
    const unsigned char* data;  // after the key
    std::uint32_t size;         // of the value; on branch pages, the low 32 bits of the child's number
    std::uint16_t flags;        // on branch pages, the child's number's top 16 bits
    std::uint64_t offset;       // in the file
  };

  static std::uint16_t u16(const unsigned char* p) noexcept {
    return load<std::endian::little, std::uint16_t>(p);
  }
  static std::uint32_t u32(const unsigned char* p) noexcept {
    return load<std::endian::little, std::uint32_t>(p);
  }
  static std::uint64_t u64(const unsigned char* p) noexcept {
    return load<std::endian::little, std::uint64_t>(p);
  }

  [[noreturn]] TABLIO_COLD void fail(std::uint64_t offset, message expected, message found,
                                     std::string_view key = {}) const {
    throw_format_error(path_, offset, key, expected, found);
  }

  void map(detail::os::native_file fd) {
    detail::os::file_status st;
    if (!detail::os::status_of(fd, st))
      throw_io_error(path_, errno, {"cannot read the size of the LMDB database"});
    if (st.kind != detail::os::file_kind::regular)
      throw_io_error(path_, 0, {"an LMDB database's data file must be a regular file, unlike"});
    if (st.size < detail::lmdb_layout::meta_end || st.size > std::uint64_t{SIZE_MAX})
      fail(0, {"an LMDB data file (two meta pages at least)"}, {decimal(st.size), " bytes"});
    const char* p = detail::os::map_file(fd, static_cast<std::size_t>(st.size));
    if (!p) throw_io_error(path_, errno, {"cannot map the LMDB database"});
    map_ = reinterpret_cast<const unsigned char*>(p);
    size_ = static_cast<std::size_t>(st.size);
  }
  void unmap() noexcept {
    if (map_) detail::os::unmap_file(reinterpret_cast<const char*>(map_), size_);
    map_ = nullptr;
  }
  void map_again_if_grown(detail::os::native_file fd) {
    detail::os::file_status st;
    if (!detail::os::status_of(fd, st) || st.size <= size_) return;
    unmap();
    map(fd);
  }

  // The page size comes from meta page 0, as liblmdb takes it; then of the two meta pages, the
  // one with the larger transaction id describes the snapshot.
  void read_meta_pages(detail::os::native_file fd, std::uint64_t held) {
    namespace l = detail::lmdb_layout;
    std::uint32_t magic = u32(map_ + l::meta_magic);
    if (magic != l::magic)
      fail(l::meta_magic, {"LMDB's magic number 0xBEEFC0DE"},
           {magic == byteswap(l::magic) ? "it in the other byte order (a big-endian machine's database)"
                                        : "other bytes (not an LMDB data file)"});
    std::uint32_t size = u32(map_ + l::meta_free_db + l::db_pad);
    if (size < l::min_page_size || size > l::max_page_size || (size & (size - 1)) != 0)
      fail(l::meta_free_db, {"a page size that is a power of two from 512 to 32768"}, {decimal(size)});
    page_size_ = size;
    if (size_ / size < 2)
      fail(size_, {"two meta pages of ", decimal(size), " bytes"}, {"the end of the file"});
    // A commit rewrites the older meta page in place, under the map. So the newer one is
    // copied, and the copy kept once neither page's transaction id has moved meanwhile: the
    // newer page is rewritten only after a commit to the other one, so the copy is never half
    // old, half new. liblmdb's readers check the lock table's transaction id the same way.
    unsigned char meta[l::meta_end];
    std::uint64_t current;
    for (;;) {
      const std::uint64_t ids[2] = {transaction_id(0), transaction_id(1)};
      current = ids[1] > ids[0] ? 1 : 0;
      copy_meta_page(current, meta);
      if (transaction_id(0) == ids[0] && transaction_id(1) == ids[1]) break;
    }
    // liblmdb takes the newer page whatever else it holds, its page size included: a damaged
    // newer page is an error, never a fall back to the older snapshot (data silently lost) nor
    // a database handed to liblmdb to map with a wrong page size.
    check_meta_page(current, meta);
    if (std::uint64_t transaction = u64(meta + l::meta_transaction); transaction < held)
      fail(current * size + l::meta_transaction,
           {"transaction ", decimal(held), " (the snapshot held) or a later one"},
           {"transaction ", decimal(transaction), ": the file was written anew outside the lock table"});
    // A snapshot's pages are written before its meta page: those of one committed since the
    // file's size was read lie past the map, and in the file now.
    if (u64(meta + l::meta_last_page) >= size_ / size) map_again_if_grown(fd);
    use_meta_page(current, meta);
  }

  // The transaction id of meta page `number`.
  std::uint64_t transaction_id(std::uint64_t number) const noexcept {
    std::uint64_t id = load_acquire(map_ + number * page_size_ + detail::lmdb_layout::meta_transaction);
    return std::endian::native == std::endian::little ? id : byteswap(id);
  }
  // Meta page `number` up to meta_end, as the file has it.
  void copy_meta_page(std::uint64_t number,
                      unsigned char (&to)[detail::lmdb_layout::meta_end]) const noexcept {
    const unsigned char* from = map_ + number * page_size_;
    for (std::size_t at = 0; at < sizeof to; at += 8) {
      std::uint64_t word = load_acquire(from + at);
      std::memcpy(to + at, &word, 8);
    }
  }
  // Eight aligned bytes of the map, read before this thread's later reads: the copy of a meta
  // page after the ids that choose it, and the ids that check it after the copy.
  static std::uint64_t load_acquire(const unsigned char* p) noexcept {
    return detail::atomic_load<detail::order::acquire>(*reinterpret_cast<const std::uint64_t*>(p));
  }

  // What liblmdb checks of a meta page (`meta`, its copy), and that it is page `number`.
  void check_meta_page(std::uint64_t number, const unsigned char* meta) const {
    namespace l = detail::lmdb_layout;
    const std::uint64_t offset = number * page_size_;
    if (u64(meta) != number || (u16(meta + 10) & l::page_kinds) != l::meta_page)
      fail(offset, {"meta page ", decimal(number)}, {kind_of(meta), " numbered ", decimal(u64(meta))});
    if (u32(meta + l::meta_magic) != l::magic || u32(meta + l::meta_version) != l::version)
      fail(offset + l::meta_magic, {"LMDB's magic number and data version 1"},
           {"version ", decimal(u32(meta + l::meta_version))});
    if (u32(meta + l::meta_free_db + l::db_pad) != page_size_)
      fail(offset + l::meta_free_db, {"the page size of meta page 0, ", decimal(page_size_)},
           {decimal(u32(meta + l::meta_free_db + l::db_pad))});
  }

  // Takes the snapshot meta page `number` describes (`meta`, its copy), once its description is
  // checked.
  void use_meta_page(std::uint64_t number, const unsigned char* meta) {
    namespace l = detail::lmdb_layout;
    const std::uint64_t offset = number * page_size_;
    const unsigned char* db = meta + l::meta_main_db;
    const std::uint64_t db_offset = offset + l::meta_main_db;
    if (std::uint16_t flags = u16(db + l::db_flags); flags != 0)
      fail(db_offset + l::db_flags,
           {"a database of one value per key in bytewise key order, as Caffe writes"},
           {flags & l::duplicate_sort                   ? "one of duplicate keys (MDB_DUPSORT)"
            : flags & (l::reverse_key | l::integer_key) ? "one of keys in another order (MDB_REVERSEKEY or "
                                                          "MDB_INTEGERKEY)"
                                                        : "database flags LMDB does not define"});
    // Pages after the last one the snapshot uses belong to no snapshot; the file may end
    // before it (when its last pages are free).
    std::uint64_t last = u64(meta + l::meta_last_page);
    if (last < 1) fail(offset + l::meta_last_page, {"a last page of 1 at least"}, {decimal(last)});
    std::uint64_t pages = size_ / page_size_;
    if (last < pages) pages = last + 1;
    std::uint64_t root = u64(db + l::db_root), entries = u64(db + l::db_entries);
    unsigned depth = u16(db + l::db_depth);
    if (root == l::no_page ? depth != 0 || entries != 0 : root < 2 || root >= pages)
      fail(db_offset + l::db_root,
           {"a root page from 2 to ", decimal(pages - 1), " (or none, with no entries)"},
           {"root ", decimal(root), " with ", decimal(entries), " entries"});
    if (root != l::no_page && (depth == 0 || depth > l::max_depth))
      fail(db_offset + l::db_depth, {"a tree depth from 1 to ", decimal(l::max_depth)}, {decimal(depth)});
    if (entries > (pages - 2) * ((page_size_ - l::page_header) / l::min_leaf_node))
      fail(db_offset + l::db_entries, {"at most as many entries as ", decimal(pages), " pages can hold"},
           {decimal(entries)});
    meta_offset_ = offset;
    transaction_ = u64(meta + l::meta_transaction);
    root_ = root;
    entries_ = entries;
    depth_ = depth;
    pages_ = pages;
  }

  TABLIO_COLD static std::string kind_of(const unsigned char* p) {
    namespace l = detail::lmdb_layout;
    switch (u16(p + 10) & l::page_kinds) {
      case l::branch_page:
        return "a branch page";
      case l::leaf_page:
        return "a leaf page";
      case l::overflow_page:
        return "an overflow page";
      case l::meta_page:
        return "a meta page";
      case l::leaf_page | l::fixed_leaf_page:
        return "a leaf page of fixed-size values (MDB_DUPFIXED)";
      default:
        return "page flags " + std::string(decimal(unsigned{u16(p + 10)}));
    }
  }

  // Page `number` of the tree, at `level` from the root (0): a branch page, or on the last
  // level a leaf page, with its free space's bounds in order. named_at: where its number was
  // found.
  page_view tree_page(std::uint64_t number, unsigned level, std::uint64_t named_at) const {
    namespace l = detail::lmdb_layout;
    if (number < 2 || number >= pages_)
      fail(named_at, {"a page number from 2 to ", decimal(pages_ - 1)}, {"page ", decimal(number)});
    page_view p{map_ + number * page_size_, number * page_size_, 0, u16(map_ + number * page_size_ + 14),
                level + 1 == depth_};
    unsigned lower = u16(p.at + 12);
    p.count = (lower - l::page_header) / 2;
    if (u64(p.at) != number || (u16(p.at + 10) & l::page_kinds) != (p.leaf ? l::leaf_page : l::branch_page) ||
        lower < l::page_header || (lower & 1) != 0 || lower > p.upper || p.upper > page_size_ ||
        (p.count == 0 && !(p.leaf && level == 0)))  // only a root leaf may be empty
      bad_tree_page(p, number, level);
    return p;
  }
  [[noreturn]] TABLIO_COLD void bad_tree_page(const page_view& p, std::uint64_t number,
                                              unsigned level) const {
    namespace l = detail::lmdb_layout;
    if (u64(p.at) != number)
      fail(p.offset, {"page ", decimal(number), " to say so"}, {"page number ", decimal(u64(p.at))});
    if ((u16(p.at + 10) & l::page_kinds) != (p.leaf ? l::leaf_page : l::branch_page))
      fail(p.offset + 10,
           {p.leaf ? "a leaf page" : "a branch page", " at depth ", decimal(level + 1), " of ",
            decimal(depth_)},
           {kind_of(p.at)});
    unsigned lower = u16(p.at + 12);
    if (lower < l::page_header || (lower & 1) != 0 || lower > p.upper || p.upper > page_size_)
      fail(p.offset + 12, {"the free space's bounds in order within the page"},
           {decimal(lower), " to ", decimal(p.upper)});
    fail(p.offset + 12, {"a page with nodes"}, {"none"});
  }

  // Node i of page p (i < p.count), with its key inside the page.
  node_view node_at(const page_view& p, unsigned i) const {
    namespace l = detail::lmdb_layout;
    unsigned at = u16(p.at + l::page_header + 2 * i);
    if (at < p.upper || at > page_size_ - l::node_header) bad_node(p, i);
    const unsigned char* header = p.at + at;
    unsigned key_size = u16(header + 6);
    if (key_size > page_size_ - at - l::node_header) bad_node(p, i);
    return {{reinterpret_cast<const char*>(header + l::node_header), key_size},
            header + l::node_header + key_size,
            u32(header),
            u16(header + 4),
            p.offset + at};
  }
  [[noreturn]] TABLIO_COLD void bad_node(const page_view& p, unsigned i) const {
    namespace l = detail::lmdb_layout;
    unsigned at = u16(p.at + l::page_header + 2 * i);
    if (at < p.upper || at > page_size_ - l::node_header)
      fail(p.offset + l::page_header + 2 * i,
           {"a node offset from ", decimal(p.upper), " to ", decimal(page_size_ - l::node_header)},
           {decimal(at)});
    fail(p.offset + at,
         {"a key of at most ", decimal(page_size_ - at - l::node_header), " bytes (the rest of its page)"},
         {decimal(unsigned{u16(p.at + at + 6)}), " bytes"});
  }

  static std::uint64_t child_of(const node_view& n) noexcept { return n.size | std::uint64_t{n.flags} << 32; }

  // The value of leaf node n of page p: a plain record's, inside the page or in an overflow
  // run inside the file.
  std::string_view value_of(const page_view& p, const node_view& n) const {
    if (n.flags == 0 && n.size <= static_cast<std::size_t>(p.at + page_size_ - n.data))
      return {reinterpret_cast<const char*>(n.data), n.size};
    return big_value_of(p, n);
  }
  std::string_view big_value_of(const page_view& p, const node_view& n) const {
    namespace l = detail::lmdb_layout;
    const std::size_t room = static_cast<std::size_t>(p.at + page_size_ - n.data);
    if (n.flags != l::big_data)
      fail(n.offset + 4, {"a record (one value per key, as Caffe writes)"},
           {n.flags & l::sub_database     ? "a named database (mdb_dbi_open with a name)"
            : n.flags & l::duplicate_data ? "duplicate values (MDB_DUPSORT)"
            : n.flags == 0                ? "a value past the end of its page"
                                          : "node flags LMDB does not define"},
           n.key);
    if (room < 8) fail(n.offset, {"an overflow page number inside the page"}, {"the end of the page"}, n.key);
    std::uint64_t first = u64(n.data);
    if (first < 2 || first >= pages_)
      fail(n.offset, {"an overflow page from 2 to ", decimal(pages_ - 1)}, {"page ", decimal(first)}, n.key);
    const unsigned char* run = map_ + first * page_size_;
    std::uint64_t count = u32(run + 12);
    if (u64(run) != first || (u16(run + 10) & l::page_kinds) != l::overflow_page || count == 0 ||
        count > pages_ - first || n.size > count * page_size_ - l::page_header)
      fail(first * page_size_,
           {"an overflow run of ", decimal(n.size), " bytes inside the file's first ", decimal(pages_),
            " pages"},
           {kind_of(run), " of ", decimal(count), " pages"}, n.key);
    return {reinterpret_cast<const char*>(run + l::page_header), n.size};
  }

  std::string path_;
  const unsigned char* map_ = nullptr;
  std::size_t size_ = 0;
  std::uint32_t page_size_ = 0;
  std::uint64_t pages_ = 0;  // the snapshot's pages that are in the file: 0 to pages_ - 1
  std::uint64_t meta_offset_ = 0, transaction_ = 0, root_ = 0, entries_ = 0;
  unsigned depth_ = 0;
  std::uint64_t table_expansion_ = 0;  // limits::max_table_expansion: records that share pages
};

// Every record of an lmdb_file in key order. It checks what a lookup relies on: keys increase
// from record to record, and those of each page lie within the range its parent gives it; and a
// full pass meets as many records as the meta page counts. So a damaged tree cannot hand out a
// record twice or out of order, and every record it hands out find() finds. Views are valid
// while the lmdb_file lives.
class lmdb_file::cursor {
 public:
  // A cursor before the first record of file, which must outlive it. Reads nothing yet.
  explicit cursor(const lmdb_file& file) noexcept : file_(&file) {}

  // The next record; false after the last one, and then the next call starts from the first.
  bool next(std::string_view& key, std::string_view& value) {
    if (height_ == 0) {
      if (file_->root_ == detail::lmdb_layout::no_page) return false;
      enter(file_->root_, file_->meta_offset_, std::nullopt, std::nullopt);
      descend();
      if (stack_[height_ - 1].page.count == 0) return finish();
    } else if (++stack_[height_ - 1].index == stack_[height_ - 1].page.count && !climb()) {
      return finish();
    }
    const level& leaf = stack_[height_ - 1];
    node_view n = file_->node_at(leaf.page, leaf.index);
    // In order, and within the page's range (checked at its ends: the keys between increase).
    if (leaf.index == 0 ? leaf.low && compare_keys(n.key, *leaf.low) < 0
                        : compare_keys(previous_, n.key) >= 0)
      out_of_order(leaf.page, leaf.index);
    if (leaf.index + 1 == leaf.page.count && leaf.high && compare_keys(n.key, *leaf.high) >= 0)
      out_of_order(leaf.page, leaf.index);
    key = previous_ = n.key;
    value = file_->value_of(leaf.page, n);
    ++seen_;
    if (file_->table_expansion_ != 0) [[unlikely]]
      count(n, value.size());
    prefetch_ahead(leaf);
    return true;
  }

 private:
  using bound = std::optional<std::string_view>;
  struct level {
    page_view page;
    unsigned index;   // of the node the cursor is at
    bound low, high;  // the keys of the page lie in [low, high)
  };

  // Enters the next page of the path; a branch page after checking its keys, which must
  // increase and lie in [low, high) (its first node has none). next() checks a leaf's.
  void enter(std::uint64_t number, std::uint64_t named_at, bound low, bound high) {
    page_view p = file_->tree_page(number, height_, named_at);
    bound previous = low;
    for (unsigned i = 1; !p.leaf && i < p.count; ++i) {
      std::string_view key = file_->node_at(p, i).key;
      int order = previous ? compare_keys(key, *previous) : 1;
      if (order < 0 || (order == 0 && i > 1) || (high && compare_keys(key, *high) >= 0)) out_of_order(p, i);
      previous = key;
    }
    stack_[height_++] = {p, 0, low, high};
  }
  // Down to the leaf, through the child the cursor is at on each branch page.
  void descend() {
    while (!stack_[height_ - 1].page.leaf) {
      const level& top = stack_[height_ - 1];
      node_view n = file_->node_at(top.page, top.index);
      bound low = top.index == 0 ? top.low : bound(n.key);
      bound high =
          top.index + 1 < top.page.count ? bound(file_->node_at(top.page, top.index + 1).key) : top.high;
      enter(child_of(n), n.offset, low, high);
    }
  }
  // Up to the nearest branch page with a child to the right, and down that child's first
  // records; false when there is none.
  bool climb() {
    for (unsigned h = height_ - 1; h > 0; --h) {
      level& parent = stack_[h - 1];
      if (parent.index + 1 < parent.page.count) {
        ++parent.index;
        height_ = h;
        descend();
        return true;
      }
    }
    return false;
  }
  // limits::max_table_expansion: the values of one pass read at most that many times the file,
  // however many records point at the same overflow pages.
  TABLIO_COLD void count(const node_view& n, std::uint64_t bytes) {
    if (!budget_.bounded()) {  // the first record counted
      budget_ = detail::table_budget(file_->table_expansion_);
      budget_.allow(file_->size_);
    }
    budget_.take(bytes, file_->path_, n.offset, n.key, "bytes of the data file in one pass's values");
  }
  // The end of a pass, which must have met every record the meta page counts.
  bool finish() {
    budget_.restart();
    std::uint64_t seen = std::exchange(seen_, 0);
    height_ = 0;
    if (seen != file_->entries_)
      file_->fail(file_->meta_offset_ + detail::lmdb_layout::meta_main_db + detail::lmdb_layout::db_entries,
                  {"as many records in the tree as its meta page counts, ", decimal(file_->entries_)},
                  {decimal(seen)});
    return false;
  }
  [[noreturn]] TABLIO_COLD void out_of_order(const page_view& p, unsigned i) const {
    node_view n = file_->node_at(p, i);
    file_->fail(n.offset, {"keys in increasing order, within the range their parent page gives"},
                {"a key out of order"}, n.key);
  }

  // Starts loading the record after next while the caller works on this one, so that its
  // cache misses overlap with the caller's work: its node, and its value's end, which lies
  // just below the node before it when records were put in key order (a new page's first
  // node ends the page). When that record is on the next leaf, the leaf's header is loaded
  // from its first record on. A prefetch never faults, so its addresses are integers that
  // need no bounds; what is read to find them lies inside the file.
  TABLIO_ALWAYS_INLINE void prefetch_ahead(const level& leaf) const noexcept {
    namespace l = detail::lmdb_layout;
    const unsigned char* page = leaf.page.at;
    unsigned ahead = leaf.index + 2;
    const unsigned char* next_leaf = leaf.index == 0 || ahead >= leaf.page.count ? next_sibling() : nullptr;
    if (leaf.index == 0 && next_leaf) prefetch(next_leaf);
    if (ahead >= leaf.page.count) {
      if (!next_leaf) return;
      page = next_leaf;
      ahead -= leaf.page.count;
      if (ahead >= (u16(page + 12) - l::page_header) / 2u) return;
    }
    const auto base = reinterpret_cast<std::uintptr_t>(page);
    const std::uintptr_t node = base + u16(page + l::page_header + 2 * ahead);
    prefetch(node);
    prefetch(node + 64);
    prefetch(ahead == 0 ? base + file_->page_size_ - 1
                        : base + u16(page + l::page_header + 2 * (ahead - 1)) - 1);
  }
  // The leaf after this one when they share a parent, unchecked but inside the file; or null.
  const unsigned char* next_sibling() const noexcept {
    if (height_ < 2) return nullptr;
    const level& parent = stack_[height_ - 2];
    if (parent.index + 1 >= parent.page.count) return nullptr;
    unsigned at = u16(parent.page.at + detail::lmdb_layout::page_header + 2 * (parent.index + 1));
    if (at > file_->page_size_ - detail::lmdb_layout::node_header) return nullptr;
    std::uint64_t number = u32(parent.page.at + at) | std::uint64_t{u16(parent.page.at + at + 4)} << 32;
    return number < file_->pages_ ? file_->map_ + number * file_->page_size_ : nullptr;
  }
  // The prefetching functions are inlined by force: GCC takes a function that only prefetches
  // for one without effects, and drops its calls.
  TABLIO_ALWAYS_INLINE static void prefetch(std::uintptr_t address) noexcept { TABLIO_PREFETCH(address); }
  TABLIO_ALWAYS_INLINE static void prefetch(const unsigned char* p) noexcept {
    prefetch(reinterpret_cast<std::uintptr_t>(p));
  }

  const lmdb_file* file_;
  level stack_[detail::lmdb_layout::max_depth];
  unsigned height_ = 0;             // levels on the stack; 0 before a pass
  std::uint64_t seen_ = 0;          // records of this pass
  detail::table_budget budget_{0};  // their values' bytes
  std::string_view previous_;       // the last record's key
};

TABLIO_END_NAMESPACE
