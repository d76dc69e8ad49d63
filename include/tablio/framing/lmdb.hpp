// LMDB databases (component tablio::lmdb, linked with liblmdb), as Caffe stores datasets in
// them: a folder holding data.mdb and lock.mdb (or one file, with no_subdir), keys in bytewise
// order, one value per key.
//
// lmdb_writer batches puts into transactions (1000 by default). When the map is full, it
// aborts the batch, doubles the map and replays the batch, so nobody sizes maps by hand; any
// other LMDB error is an lmdb_error with LMDB's message. lmdb_reader reads in one read-only
// transaction (MDB_RDONLY | MDB_NOTLS, as Caffe's DataLayer): in key order with a cursor,
// optionally wrapping around and keeping every n-th record, and by key with get(); values
// are views into the map, valid while the reader lives.
//
// LMDB's own rules, which these classes enforce or document:
// - One environment per database per process: closing a second one would drop the first
//   one's locks. Readers and writers of one database in one process share its environment
//   (lmdb_environment::open); a writer for a database opened read-only is a usage_error.
// - No use after fork(): an environment is tied to the process that opened it, and using it
//   in a child is a usage_error that says so (open a new one in the child).
// - A read-only open needs a writable lock file. When the folder is not writable (a dataset
//   owned by someone else), the reader opens without locks (MDB_NOLOCK) instead, which is
//   safe as long as no process writes the database meanwhile; no_lock asks for it directly.
// - Transactions and cursors belong to the reader or writer that made them; share a reader
//   between threads only with your own locking. Readers in many threads share the
//   environment safely.
// - Growing the map remaps the file: a writer does it only while no other transaction of this
//   process is open (else a usage_error), so that no reader's pages move under it. A writer
//   running beside readers in one process needs an initial_map_size large enough.
#pragma once

#if !defined(TABLIO_WITH_LMDB)
#error \
    "<tablio/framing/lmdb.hpp> needs liblmdb: link the tablio::lmdb CMake target (it defines TABLIO_WITH_LMDB)"
#endif

#include <tablio/core/error.hpp>
#include <tablio/core/mutex.hpp>
#include <tablio/core/owned.hpp>
#include <tablio/framing/concepts.hpp>

#include <lmdb.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// An LMDB call that failed: the database, what was being done, and LMDB's message.
class lmdb_error : public io_error {
 public:
  lmdb_error(const std::string& path, int code, std::string_view what)
      : io_error(path, code > 0 ? code : 0, std::string(what) + " (" + mdb_strerror(code) + ") in"),
        code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

struct lmdb_options {
  bool no_subdir = false;                  // the database is one file, not a folder (MDB_NOSUBDIR)
  bool no_lock = false;                    // read without a lock file (MDB_NOLOCK): no concurrent writer
  std::size_t initial_map_size = 1 << 20;  // liblmdb's default, as Caffe; writers grow it as needed
  unsigned max_readers = 126;
  std::size_t batch_size = 1000;  // puts per write transaction
  bool append = false;            // a writer keeps the records there are (goes on where another stopped)
};

class lmdb_environment;

namespace detail {

// The environments this process has open (LMDB forbids opening a database twice), and the
// lock under which they are opened, shared and closed.
struct lmdb_registry {
  mutex guard;
  std::vector<lmdb_environment*> open;
};
inline lmdb_registry& lmdb_environments() {
  static lmdb_registry registry;
  return registry;
}

// Counts the fork()s this process came out of, so that a use after fork() is found with one
// load instead of a getpid() system call per record.
inline unsigned& fork_generation() {
  static unsigned generation = [] {
    ::pthread_atfork(nullptr, nullptr, [] { ++fork_generation(); });
    return 0u;
  }();
  return generation;
}

inline std::string canonical_path(const std::string& path) {
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) ? std::string(resolved) : path;
}

}  // namespace detail

// An open LMDB environment and its unnamed database.
class lmdb_environment {
 public:
  // A share of an environment: the last one to go closes it.
  class handle {
   public:
    explicit handle(lmdb_environment* env) noexcept : env_(env) {}
    handle(handle&& o) noexcept : env_(std::exchange(o.env_, nullptr)) {}
    handle& operator=(handle&&) = delete;
    ~handle() { release(env_); }
    lmdb_environment* operator->() const noexcept { return env_; }
    lmdb_environment& operator*() const noexcept { return *env_; }

   private:
    lmdb_environment* env_;
  };

  // The process's environment for the database at path: the one already open, or a new one.
  static handle open(const std::string& path, bool read_only, const lmdb_options& options) {
    if (!read_only && !options.no_subdir && ::mkdir(path.c_str(), 0775) != 0 && errno != EEXIST)
      throw_io_error(path, errno, {"cannot create the LMDB folder"});
    std::string key = detail::canonical_path(path);
    detail::lmdb_registry& registry = detail::lmdb_environments();
    detail::lock lock(registry.guard);
    for (lmdb_environment* env : registry.open) {
      // An environment a parent process opened is not this process's: open one of its own.
      if (env->key_ != key || env->generation_ != detail::fork_generation()) continue;
      if (!read_only && env->read_only_)
        throw_usage_error({"the LMDB database '", path,
                           "' is open for reading in this process; close its readers before writing it "
                           "(LMDB allows one environment per database per process)"});
      ++env->users_;
      return handle(env);
    }
    auto* env = new lmdb_environment(path, read_only, options);
    env->key_ = std::move(key);
    registry.open.push_back(env);
    return handle(env);
  }
  lmdb_environment(const lmdb_environment&) = delete;
  lmdb_environment& operator=(const lmdb_environment&) = delete;
  ~lmdb_environment() {
    // A child must not touch its parent's locks.
    if (env_ && generation_ == detail::fork_generation()) mdb_env_close(env_);
  }

  MDB_env* get() const {
    if (generation_ != detail::fork_generation()) [[unlikely]]
      throw_usage_error({"the LMDB database '", path_,
                         "' was opened before fork(): LMDB environments cannot be used in a child process; "
                         "open it again there"});
    return env_;
  }
  MDB_dbi dbi() const noexcept { return dbi_; }
  const std::string& path() const noexcept { return path_; }
  bool without_lock() const noexcept { return without_lock_; }
  bool read_only() const noexcept { return read_only_; }

  std::size_t map_size() const {
    MDB_envinfo info;
    check(mdb_env_info(get(), &info), "reading the map size");
    return info.me_mapsize;
  }
  // Growing the map remaps the file, which would pull the pages from under every other
  // transaction of this process: with any open, it is an error instead.
  void set_map_size(std::size_t bytes) {
    detail::lock lock(remap_mutex_);
    check_no_open_transactions("grow the map");
    check(mdb_env_set_mapsize(get(), bytes), "growing the map");
  }

  // Begins a transaction (end it with end_transaction). When another process has grown the
  // map, LMDB says MDB_MAP_RESIZED: adopt the new size and begin again.
  void begin_transaction(unsigned flags, MDB_txn*& txn) {
    detail::lock lock(remap_mutex_);
    int rc = mdb_txn_begin(get(), nullptr, flags, &txn);
    if (rc == MDB_MAP_RESIZED) {
      check_no_open_transactions("adopt the larger map another process made");
      check(mdb_env_set_mapsize(env_, 0), "adopting the map size another process set");
      rc = mdb_txn_begin(env_, nullptr, flags, &txn);
    }
    check(rc, flags & MDB_RDONLY ? "cannot start a read transaction" : "cannot start a write transaction");
    __atomic_add_fetch(&open_transactions_, 1, __ATOMIC_ACQ_REL);
  }
  // Commits (or aborts) a transaction begun here; returns LMDB's result of the commit.
  int end_transaction(MDB_txn*& txn, bool commit) noexcept {
    if (!txn) return MDB_SUCCESS;
    int rc = MDB_SUCCESS;
    if (commit)
      rc = mdb_txn_commit(txn);
    else
      mdb_txn_abort(txn);
    txn = nullptr;
    __atomic_sub_fetch(&open_transactions_, 1, __ATOMIC_ACQ_REL);
    return rc;
  }

  void check(int rc, std::string_view what) const {
    if (rc != MDB_SUCCESS) throw lmdb_error(path_, rc, what);
  }

 private:
  void check_no_open_transactions(const char* action) const {
    if (int n = __atomic_load_n(&open_transactions_, __ATOMIC_ACQUIRE); n != 0)
      throw_usage_error({"cannot ", action, " of the LMDB database '", path_, "' while ", decimal(n),
                         " other transactions of this process are open (a remap would move their pages): "
                         "close its readers first, or give the writer an initial_map_size large enough"});
  }

  void open_database(const lmdb_options& options) {
    unsigned flags = MDB_NOTLS | (options.no_subdir ? MDB_NOSUBDIR : 0);
    if (read_only_) flags |= MDB_RDONLY | (options.no_lock ? MDB_NOLOCK : 0);
    int rc = try_open(flags, options);
    // Read-only but the lock file cannot be written (someone else's dataset): read unlocked.
    if (read_only_ && !(flags & MDB_NOLOCK) && (rc == EACCES || rc == EROFS)) {
      rc = try_open(flags | MDB_NOLOCK, options);
      without_lock_ = rc == MDB_SUCCESS;
    }
    without_lock_ = without_lock_ || (read_only_ && options.no_lock);
    check(rc, read_only_ ? "cannot open the LMDB database for reading"
                         : "cannot open the LMDB database for writing");
    MDB_txn* txn = nullptr;
    check(mdb_txn_begin(env_, nullptr, read_only_ ? MDB_RDONLY : 0, &txn), "starting a transaction");
    rc = mdb_dbi_open(txn, nullptr, 0, &dbi_);
    if (rc != MDB_SUCCESS || read_only_)
      mdb_txn_abort(txn);  // a read-only handle stays valid after its transaction
    else
      rc = mdb_txn_commit(txn);
    check(rc, "opening the database");
  }

  int try_open(unsigned flags, const lmdb_options& options) {
    if (env_) mdb_env_close(env_);
    env_ = nullptr;
    int rc = mdb_env_create(&env_);
    if (rc != MDB_SUCCESS) return rc;
    if (!read_only_ && (rc = mdb_env_set_mapsize(env_, options.initial_map_size)) != MDB_SUCCESS) return rc;
    if ((rc = mdb_env_set_maxreaders(env_, options.max_readers)) != MDB_SUCCESS) return rc;
    rc = mdb_env_open(env_, path_.c_str(), flags, 0664);
    if (rc != MDB_SUCCESS) {
      mdb_env_close(env_);
      env_ = nullptr;
    }
    return rc;
  }

  lmdb_environment(const std::string& path, bool read_only, const lmdb_options& options)
      : path_(path), read_only_(read_only), generation_(detail::fork_generation()) {
    open_database(options);
  }

  // Gives up one share; the last closes the environment (outside the lock: closing waits for
  // nothing of the registry's).
  static void release(lmdb_environment* env) noexcept {
    if (!env) return;
    {
      detail::lmdb_registry& registry = detail::lmdb_environments();
      detail::lock lock(registry.guard);
      if (--env->users_ != 0) return;
      for (auto& open : registry.open)
        if (open == env) {
          open = registry.open.back();
          registry.open.pop_back();
          break;
        }
    }
    delete env;
  }

  std::string path_, key_;
  bool read_only_;
  bool without_lock_ = false;
  unsigned generation_;  // detail::fork_generation() when opened
  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
  int users_ = 1;              // handles to it, under the registry's lock
  detail::mutex remap_mutex_;  // orders beginning transactions and remapping
  int open_transactions_ = 0;  // begun and not yet ended, in this process (atomic access)
};

// Writes key/value pairs in batches, growing the map whenever it is full. A new writer
// replaces what the database held, as a file writer truncates its file, so that old and new
// records never mix (the file keeps its size: LMDB reuses its pages but never shrinks it),
// unless lmdb_options::append keeps them. Each key is written once. close() commits what is left; the
// destructor closes and reports instead of throwing.
class lmdb_writer {
 public:
  explicit lmdb_writer(const std::string& path, const lmdb_options& options = {})
      : env_(lmdb_environment::open(path, false, options)),
        batch_size_(options.batch_size ? options.batch_size : 1) {
    if (!options.append) empty_database();
  }
  lmdb_writer(const lmdb_writer&) = delete;
  ~lmdb_writer() {
    try {
      close();
    } catch (const std::exception& e) {
      report_error(e.what());
    }
  }

  // Stores value under key; a key written before is a usage_error (LMDB holds one value per
  // key, and replacing it would lose a record). The batch is kept until its commit, so that
  // it can be replayed into a larger map; data is durable once commit() or close() has
  // returned.
  void put(std::string_view key, std::string_view value) {
    if (closed_) throw_usage_error({"lmdb_writer::put after close"});
    if (key.empty() || key.size() > static_cast<std::size_t>(mdb_env_get_maxkeysize(env_->get())))
      throw_usage_error({"LMDB keys are 1 to ", decimal(mdb_env_get_maxkeysize(env_->get())), " bytes; '",
                         key.substr(0, 64), "' is ", decimal(key.size())});
    batch_.emplace_back(std::string(key), std::string(value));
    if (!txn_) begin();
    int rc = put_one(batch_.back());
    if (rc == MDB_KEYEXIST) {  // the transaction goes on without it
      batch_.pop_back();
      throw_usage_error({"key '", key.substr(0, 64), "' written twice to the LMDB database '", env_->path(),
                         "', which holds one value per key"});
    }
    if (rc == MDB_MAP_FULL) {
      grow_and_replay();
    } else {
      if (rc != MDB_SUCCESS) abort_batch();
      env_->check(rc, "cannot store key '" + std::string(key) + "'");
    }
    if (batch_.size() >= batch_size_) commit();
    ++written_;
  }

  // Commits the current batch.
  void commit() {
    if (!txn_) return;
    for (;;) {
      int rc = env_->end_transaction(txn_, true);
      if (rc == MDB_SUCCESS) break;
      if (rc != MDB_MAP_FULL) {
        batch_.clear();
        env_->check(rc, "cannot commit a transaction");
      }
      grow_and_replay();
    }
    batch_.clear();
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    commit();
    env_->check(mdb_env_sync(env_->get(), 1), "cannot flush the database to disk");
  }

  std::uint64_t written() const noexcept { return written_; }
  std::size_t map_size() const { return env_->map_size(); }
  lmdb_environment& environment() noexcept { return *env_; }

 private:
  void begin() { env_->begin_transaction(0, txn_); }
  int put_one(const std::pair<std::string, std::string>& kv) {
    MDB_val k{kv.first.size(), const_cast<char*>(kv.first.data())};
    MDB_val v{kv.second.size(), const_cast<char*>(kv.second.data())};
    return mdb_put(txn_, env_->dbi(), &k, &v, MDB_NOOVERWRITE);
  }
  // Drops every record the database holds, in a transaction of its own; one that is empty
  // (new) is not written at all, so that a new database has exactly the bytes Caffe writes.
  void empty_database() {
    for (;;) {
      begin();
      MDB_stat stat;
      int rc = mdb_stat(txn_, env_->dbi(), &stat);
      if (rc == MDB_SUCCESS && stat.ms_entries == 0) {
        env_->end_transaction(txn_, false);
        return;
      }
      if (rc == MDB_SUCCESS) rc = mdb_drop(txn_, env_->dbi(), 0);
      if (rc == MDB_SUCCESS)
        rc = env_->end_transaction(txn_, true);
      else
        env_->end_transaction(txn_, false);
      if (rc == MDB_SUCCESS) return;
      if (rc != MDB_MAP_FULL) env_->check(rc, "cannot empty the database");
      env_->set_map_size(2 * env_->map_size());
    }
  }
  void abort_batch() {
    env_->end_transaction(txn_, false);
    batch_.clear();
  }
  // A failed put leaves the transaction unusable: abort it, double the map, put it all again.
  void grow_and_replay() {
    for (;;) {
      env_->end_transaction(txn_, false);
      try {
        env_->set_map_size(env_->map_size() * 2);
      } catch (...) {
        batch_.clear();  // lost, and said so by the exception
        throw;
      }
      begin();
      int rc = MDB_SUCCESS;
      for (const auto& kv : batch_)
        if ((rc = put_one(kv)) != MDB_SUCCESS) break;
      if (rc == MDB_SUCCESS) return;
      if (rc != MDB_MAP_FULL) {
        abort_batch();
        env_->check(rc, "cannot store a batch");
      }
    }
  }

  lmdb_environment::handle env_;  // shared with the other readers and writers of the database
  std::size_t batch_size_;
  MDB_txn* txn_ = nullptr;
  std::vector<std::pair<std::string, std::string>> batch_;
  std::uint64_t written_ = 0;
  bool closed_ = false;
};

struct lmdb_read_options {
  bool wrap_around = false;  // after the last record, start again from the first (training loops)
  std::uint64_t shard_index = 0, shard_count = 1;  // keep records i with i % count == index
};

class lmdb_reader {
 public:
  explicit lmdb_reader(const std::string& path, const lmdb_options& options = {},
                       const lmdb_read_options& read = {})
      : env_(lmdb_environment::open(path, true, options)), read_(read) {
    if (read_.shard_count == 0 || read_.shard_index >= read_.shard_count)
      throw_usage_error(
          {"invalid LMDB shard ", decimal(read_.shard_index), " of ", decimal(read_.shard_count)});
    env_->begin_transaction(MDB_RDONLY, txn_);
    int rc = mdb_cursor_open(txn_, env_->dbi(), &cursor_);
    if (rc != MDB_SUCCESS) {
      env_->end_transaction(txn_, false);
      env_->check(rc, "cannot open a cursor");
    }
  }
  lmdb_reader(const lmdb_reader&) = delete;
  ~lmdb_reader() {
    if (cursor_) mdb_cursor_close(cursor_);
    env_->end_transaction(txn_, false);
  }

  // The next record of this shard, in key order; views valid while the reader lives.
  //
  // The cursor runs a few records ahead, and their first and last bytes are prefetched: their
  // cache misses then overlap with the caller's work on this one instead of stalling later
  // calls (a scan that decodes each value runs about 1.3x faster). An LMDB error met while
  // looking ahead is thrown by the call that would have returned that record.
  bool next(std::string_view& key, std::string_view& value) {
    checked_cursor();
    if (ahead_count_ == 0) {
      fill_ahead();
      if (ahead_count_ == 0) {
        if (ahead_rc_ == MDB_NOTFOUND) return false;
        int rc = ahead_rc_;
        ahead_rc_ = MDB_SUCCESS;  // a later call tries again
        env_->check(rc, "cannot read the next record");
      }
    }
    const auto& [k, v] = ahead_[ahead_first_];
    key = {static_cast<const char*>(k.mv_data), k.mv_size};
    value = {static_cast<const char*>(v.mv_data), v.mv_size};
    ahead_first_ = (ahead_first_ + 1) % lookahead;
    --ahead_count_;
    fill_ahead();
    return true;
  }

  // The value stored under key, or nothing.
  std::optional<std::string_view> get(std::string_view key) {
    checked_cursor();
    MDB_val k{key.size(), const_cast<char*>(key.data())}, v;
    int rc = mdb_get(txn_, env_->dbi(), &k, &v);
    if (rc == MDB_NOTFOUND) return std::nullopt;
    env_->check(rc, "cannot look up key '" + std::string(key) + "'");
    return std::string_view(static_cast<const char*>(v.mv_data), v.mv_size);
  }

  std::uint64_t size() const {
    MDB_stat stat;
    env_->check(mdb_stat(txn_, env_->dbi(), &stat), "cannot read the statistics");
    return stat.ms_entries;
  }
  const std::string& path() const noexcept { return env_->path(); }
  // Whether the database was opened without its lock file (see above).
  bool without_lock() const noexcept { return env_->without_lock(); }

 private:
  MDB_cursor* checked_cursor() {
    env_->get();  // refuses use after fork()
    return cursor_;
  }

  // Moves the cursor on to the next records of this shard until `lookahead` are waiting, and
  // prefetches them; stops at the end (MDB_NOTFOUND) or at an error, kept in ahead_rc_.
  void fill_ahead() noexcept {
    while (ahead_count_ < lookahead && ahead_rc_ == MDB_SUCCESS) {
      auto& [k, v] = ahead_[(ahead_first_ + ahead_count_) % lookahead];
      ahead_rc_ = mdb_cursor_get(cursor_, &k, &v, started_ ? MDB_NEXT : MDB_FIRST);
      started_ = true;
      if (ahead_rc_ == MDB_NOTFOUND) {
        // Each pass over the data gives this shard the same records; an empty shard ends.
        if (!read_.wrap_around || !kept_in_pass_) return;
        started_ = kept_in_pass_ = false;
        phase_ = 0;
        ahead_rc_ = MDB_SUCCESS;
        continue;
      }
      if (ahead_rc_ != MDB_SUCCESS) return;
      // The record's ordinal modulo shard_count, kept without a division per record.
      std::uint64_t phase = phase_;
      phase_ = phase + 1 == read_.shard_count ? 0 : phase + 1;
      if (phase != read_.shard_index) continue;
      kept_in_pass_ = true;
      prefetch_ends(static_cast<const char*>(v.mv_data), v.mv_size);
      // Records put in key order lie at a near-regular stride in the map: the next one is
      // likely a stride further on, and prefetching its node (8 bytes of header, then the key
      // and the value) spares the cursor a miss there too. A wrong guess costs nothing.
      const std::uintptr_t value_at = reinterpret_cast<std::uintptr_t>(v.mv_data);
      prefetch_ends(reinterpret_cast<const char*>(2 * value_at - last_value_at_ - k.mv_size - 8),
                    k.mv_size + 8 + v.mv_size);
      last_value_at_ = value_at;
      ++ahead_count_;
    }
  }

  // Where a decoder looks first: a message's header (which may cross into a second cache
  // line) and its end. A prefetch never faults, so the addresses need no bounds (an empty
  // value's "end" is the byte before it); they are computed as integers, and without a branch,
  // which GCC 12 takes as leave to drop the prefetches.
  static void prefetch_ends(const char* p, std::size_t size) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(p);
    __builtin_prefetch(p);
    __builtin_prefetch(reinterpret_cast<const char*>(first + 15));
    __builtin_prefetch(reinterpret_cast<const char*>(first + size - 1));
#else
    (void)p;
    (void)size;
#endif
  }

  lmdb_environment::handle env_;  // shared with the other readers and writers of the database
  lmdb_read_options read_;
  MDB_txn* txn_ = nullptr;
  MDB_cursor* cursor_ = nullptr;
  static constexpr std::size_t lookahead = 2;       // records; more gains nothing measurable
  std::pair<MDB_val, MDB_val> ahead_[lookahead]{};  // keys and values the next calls return
  std::size_t ahead_first_ = 0, ahead_count_ = 0;
  int ahead_rc_ = MDB_SUCCESS;        // how looking further ahead ended
  std::uintptr_t last_value_at_ = 0;  // where the last record fetched lies in the map
  bool started_ = false, kept_in_pass_ = false;
  std::uint64_t phase_ = 0;  // the next record's ordinal modulo shard_count
};

// LMDB databases as a framing: record entries keyed by the database's keys, in key order or
// looked up by key. The handles live on the heap, so that the framing moves (LMDB's do not).
class lmdb_output {
 public:
  explicit lmdb_output(std::string_view folder, const lmdb_options& options = {})
      : writer_(make_owned<lmdb_writer>(std::string(folder), options)) {}
  void put(std::string_view key, std::string_view bytes) { writer_->put(key, bytes); }
  void flush() { writer_->commit(); }
  void close() { writer_->close(); }

 private:
  owned<lmdb_writer> writer_;
};

class lmdb_input {
 public:
  static constexpr unsigned forms = entry_forms(entry_form::record);

  explicit lmdb_input(std::string_view folder, const lmdb_read_options& read = {},
                      const lmdb_options& options = {})
      : reader_(make_owned<lmdb_reader>(std::string(folder), options, read)) {}
  bool next(entry& e) {
    std::string_view key, value;
    if (!reader_->next(key, value)) return false;
    e.key = key;
    describe(e, value);
    return true;
  }
  bool find(std::string_view key, entry& e) {
    std::optional<std::string_view> value = reader_->get(key);
    if (!value) return false;
    e.key = key;
    describe(e, *value);
    return true;
  }
  std::uint64_t size() const { return reader_->size(); }
  const std::string& name() const noexcept { return reader_->path(); }
  void close() {}

 private:
  void describe(entry& e, std::string_view value) const {
    e.form = entry_form::record;
    e.bytes = value;
    e.source = reader_->path();
    e.data_offset = 0;
  }
  owned<lmdb_reader> reader_;
};

struct lmdb_framing {
  using output = lmdb_output;
  using input = lmdb_input;
};

TABLIO_END_NAMESPACE
