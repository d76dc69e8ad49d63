// Writing LMDB databases (component tablio::lmdb, linked with liblmdb), as Caffe stores datasets
// in them: a folder holding data.mdb and lock.mdb (or one file, with no_subdir), keys in
// bytewise order, one value per key. Reading is framing/lmdb_reader.hpp's, which needs neither
// liblmdb nor a lock file: liblmdb trusts the file it maps, and a damaged or hostile data.mdb
// would crash it, so tablio reads the format itself and checks it (framing/lmdb_file.hpp).
//
// lmdb_writer batches puts into transactions (1000 by default). When the map is full, it
// aborts the batch, doubles the map and replays the batch, so nobody sizes maps by hand; any
// other LMDB error is an lmdb_error with LMDB's message.
//
// LMDB's own rules, which these classes enforce or document:
// - One environment per database per process: closing a second one would drop the first
//   one's locks. The writers of one database in one process share its environment
//   (lmdb_environment::open).
// - No use after fork(): an environment is tied to the process that opened it, and using it
//   in a child is a usage_error that says so (open a new one in the child).
// - A writer keeps a lock file (lock.mdb) beside the data, which liblmdb's readers in other
//   processes use; no_lock writes without one, for a database nobody else opens meanwhile.
// - Transactions belong to the writer that made them; share a writer between threads only
//   with your own locking.
// - Growing the map remaps the file: a writer does it only while no other transaction of this
//   process is open in the environment (else a usage_error), so that no pages move under it.
#pragma once

#if !defined(TABLIO_WITH_LMDB)
#error \
    "<tablio/framing/lmdb.hpp> needs liblmdb: link the tablio::lmdb CMake target (it defines TABLIO_WITH_LMDB)"
#endif

#include <tablio/core/atomics.hpp>
#include <tablio/core/error.hpp>
#include <tablio/core/mutex.hpp>
#include <tablio/core/owned.hpp>
#include <tablio/framing/concepts.hpp>
#include <tablio/framing/lmdb_reader.hpp>
#include <tablio/stream/platform/file_io.hpp>
#include <tablio/stream/platform/process.hpp>

#include <lmdb.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

TABLIO_BEGIN_NAMESPACE

// An LMDB call that failed: the database, what was being done, and LMDB's message.
class lmdb_error : public io_error {
 public:
  // What failed (`what`) in the database at path, with the code the LMDB call returned.
  lmdb_error(const std::string& path, int code, std::string_view what)
      : io_error(path, code > 0 ? code : 0, std::string(what) + " (" + mdb_strerror(code) + ") in"),
        code_(code) {}
  // The code the call returned: an errno value (positive) or one of LMDB's own MDB_* codes
  // (negative), which error_number() gives as 0.
  int code() const noexcept { return code_; }

 private:
  int code_;
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
    os::call_in_forked_children([] { ++fork_generation(); });
    return 0u;
  }();
  return generation;
}

inline std::string canonical_path(const std::string& path) {
  std::string resolved = os::resolved_path(path);
  return resolved.empty() ? path : resolved;
}

}  // namespace detail

// An open LMDB environment and its unnamed database.
class lmdb_environment {
 public:
  // A share of an environment: the last one to go closes it.
  class handle {
   public:
    // Takes a share already counted in env (open() counts it); nullptr holds none.
    explicit handle(lmdb_environment* env) noexcept : env_(env) {}
    handle(handle&& o) noexcept : env_(std::exchange(o.env_, nullptr)) {}
    handle& operator=(handle&&) = delete;
    ~handle() { release(env_); }
    // The environment shared.
    lmdb_environment* operator->() const noexcept { return env_; }
    // The environment shared.
    lmdb_environment& operator*() const noexcept { return *env_; }

   private:
    lmdb_environment* env_;
  };

  // The process's environment for the database at path: the one already open, or a new one,
  // for writing or (read_only) for holding readers' snapshots.
  static handle open(const std::string& path, const lmdb_options& options, bool read_only = false) {
    if (!read_only && !options.no_subdir && !detail::os::make_folder(path) && errno != EEXIST)
      throw_io_error(path, errno, {"cannot create the LMDB folder"});
    std::string key = detail::canonical_path(path);
    detail::lmdb_registry& registry = detail::lmdb_environments();
    detail::lock lock(registry.guard);
    for (lmdb_environment* env : registry.open) {
      // An environment a parent process opened is not this process's: open one of its own.
      if (env->key_ != key || env->generation_ != detail::fork_generation()) continue;
      if (!read_only && env->read_only_)
        throw_usage_error({"the LMDB database '", path,
                           "' is read in this process, by readers holding their snapshots: close them before "
                           "writing it (LMDB allows one environment per database per process)"});
      ++env->users_;
      return handle(env);
    }
    auto* env = new lmdb_environment(path, options, read_only);
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

  // The MDB_env, for liblmdb's calls. In a child process after fork(), a usage_error.
  MDB_env* get() const {
    if (generation_ != detail::fork_generation()) [[unlikely]]
      throw_usage_error({"the LMDB database '", path_,
                         "' was opened before fork(): LMDB environments cannot be used in a child process; "
                         "open it again there"});
    return env_;
  }
  // The unnamed database, which records go to (not opened, 0, in a read-only environment).
  MDB_dbi dbi() const noexcept { return dbi_; }
  // The database's path, as it was opened and as errors name it.
  const std::string& path() const noexcept { return path_; }
  // Opened without a lock file (lmdb_options::no_lock).
  bool without_lock() const noexcept { return without_lock_; }
  // Whether this process is the one that opened it (not a child after fork()).
  bool in_opening_process() const noexcept { return generation_ == detail::fork_generation(); }

  // The map's size in bytes now (LMDB's mdb_env_info); an lmdb_error if LMDB cannot say.
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
    detail::atomic_add<detail::order::acq_rel>(open_transactions_, 1);
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
    detail::atomic_subtract<detail::order::acq_rel>(open_transactions_, 1);
    return rc;
  }

  // Throws an lmdb_error for what when rc, an LMDB call's result, is not MDB_SUCCESS.
  void check(int rc, std::string_view what) const {
    if (rc != MDB_SUCCESS) throw lmdb_error(path_, rc, what);
  }

 private:
  void check_no_open_transactions(const char* action) const {
    if (int n = detail::atomic_load<detail::order::acquire>(open_transactions_); n != 0)
      throw_usage_error(
          {"cannot ", action, " of the LMDB database '", path_, "' while ", decimal(n),
           " other transactions of this process are open (a remap would move their pages): "
           "close its other writers first, or give the writer an initial_map_size large enough"});
  }

  void open_database(const lmdb_options& options) {
    unsigned flags = MDB_NOTLS | (options.no_subdir ? MDB_NOSUBDIR : 0) | (without_lock_ ? MDB_NOLOCK : 0);
    if (read_only_) {  // for read transactions in the lock table only: tablio reads the pages itself
      check(try_open(flags | MDB_RDONLY, options), "cannot open the LMDB database's lock file for reading");
      return;
    }
    check(try_open(flags, options), "cannot open the LMDB database for writing");
    MDB_txn* txn = nullptr;
    check(mdb_txn_begin(env_, nullptr, 0, &txn), "starting a transaction");
    int rc = mdb_dbi_open(txn, nullptr, 0, &dbi_);
    if (rc != MDB_SUCCESS)
      mdb_txn_abort(txn);
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

  lmdb_environment(const std::string& path, const lmdb_options& options, bool read_only)
      : path_(path),
        read_only_(read_only),
        without_lock_(options.no_lock && !read_only),
        generation_(detail::fork_generation()) {
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
  bool without_lock_;
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
  // Opens the database at path for writing (creating its folder when needed) and, unless
  // options.append, empties it. LMDB's failures are lmdb_errors; a database whose readers hold
  // snapshots in this process is a usage_error.
  explicit lmdb_writer(const std::string& path, const lmdb_options& options = {})
      : env_(lmdb_environment::open(path, options)),
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
      throw_usage_error({"LMDB keys are 1 to ", decimal(mdb_env_get_maxkeysize(env_->get())), " bytes; ",
                         quoted_excerpt(key), " is ", decimal(key.size())});
    batch_.emplace_back(std::string(key), std::string(value));
    if (!txn_) begin();
    int rc = put_one(batch_.back());
    if (rc == MDB_KEYEXIST) {  // the transaction goes on without it
      batch_.pop_back();
      throw_key_error({"key ", quoted_excerpt(key), " written twice to the LMDB database '", env_->path(),
                       "', which holds one value per key"});
    }
    if (rc == MDB_MAP_FULL) {
      grow_and_replay();
    } else {
      if (rc != MDB_SUCCESS) abort_batch();
      env_->check(rc, "cannot store key " + quoted_excerpt(key));
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

  // Commits what is left and syncs the database to disk. A second close() does nothing, and a
  // put() after it is a usage_error.
  void close() {
    if (closed_) return;
    closed_ = true;
    commit();
    env_->check(mdb_env_sync(env_->get(), 1), "cannot flush the database to disk");
  }

  // Records put so far.
  std::uint64_t written() const noexcept { return written_; }
  // The map's size in bytes now, which doubles whenever puts fill it.
  std::size_t map_size() const { return env_->map_size(); }
  // The environment, shared with the database's other writers in this process.
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

  lmdb_environment::handle env_;  // shared with the other writers of the database in this process
  std::size_t batch_size_;
  MDB_txn* txn_ = nullptr;
  std::vector<std::pair<std::string, std::string>> batch_;
  std::uint64_t written_ = 0;
  bool closed_ = false;
};

// LMDB databases as a framing: record entries keyed by the database's keys, written by
// lmdb_writer and read by lmdb_input. The writer lives on the heap, so that the framing moves
// (LMDB's handles do not).
class lmdb_output {
 public:
  // Writes the database at folder, as lmdb_writer does (emptying it unless options.append).
  explicit lmdb_output(std::string_view folder, const lmdb_options& options = {})
      : writer_(make_owned<lmdb_writer>(std::string(folder), options)) {}
  // The Framing concept: stores a record (lmdb_writer::put: a key written twice is a key_error).
  void put(std::string_view key, std::string_view bytes) { writer_->put(key, bytes); }
  // Keys may be any bytes, not only Kaldi tokens, as the reader's (lmdb_input::keys_any_bytes).
  static constexpr bool keys_any_bytes() noexcept { return true; }  // as the reader's
  // The Framing concept: commits the current batch, which makes what was put durable.
  void flush() { writer_->commit(); }
  // The Framing concept: commits what is left and syncs it to disk (lmdb_writer::close).
  void close() { writer_->close(); }

 private:
  owned<lmdb_writer> writer_;
};

// LMDB databases as a framing family: lmdb_output writes them (with liblmdb), lmdb_input reads
// them (without).
struct lmdb_framing {
  using output = lmdb_output;
  using input = lmdb_input;
};

namespace detail {

// A read transaction in liblmdb's lock table, which every writer of the database (in this
// process or another) respects: it keeps the pages of its snapshot.
class held_lmdb_snapshot final : public kept_storage {
 public:
  explicit held_lmdb_snapshot(lmdb_environment::handle env) : env_(std::move(env)) {
    env_->begin_transaction(MDB_RDONLY, txn_);
  }
  ~held_lmdb_snapshot() override {
    if (env_->in_opening_process()) env_->end_transaction(txn_, false);  // a child leaves the parent's slot
  }
  std::uint64_t transaction() const noexcept { return mdb_txn_id(txn_); }

 private:
  lmdb_environment::handle env_;
  MDB_txn* txn_ = nullptr;
};

inline std::string lmdb_lock_file(const std::string& path, bool no_subdir) {
  return no_subdir ? path + "-lock" : path + "/lock.mdb";
}

}  // namespace detail

// Refuses, for an untrusted or confined output, a database liblmdb would write outside its
// folder: a folder that is a link, or a data.mdb or lock.mdb that is a link (symbolic or hard)
// planted for a file elsewhere. liblmdb opens them by name: a link swapped in after this
// check is a race this cannot close.
inline void check_lmdb_output(const std::string& path, const open_options& governed_options) {
  detail::os::file_status st;
  if (!detail::os::status_of(path, false, st)) {
    if (errno != ENOENT) throw_io_error(path, errno, {"cannot open the LMDB folder"});
    detail::checked_local_path(path, governed_options, local_use::write);  // its parent: inside
    return;
  }
  if (st.kind != detail::os::file_kind::directory)
    throw access_error(detail::printable(detail::join({quoted_excerpt(path),
                                                       " is not a folder (a link to one is not followed "
                                                       "for untrusted or confined output)"})));
  for (const char* file : {"data.mdb", "lock.mdb"}) {
    std::string name = path + "/" + file;
    detail::checked_local_path(name, governed_options, local_use::write);
    detail::check_plain_output(name);
  }
}

// Holds the current snapshot of the database at `path` for a reader (lmdb_reader's last
// argument), when it may be written meanwhile: its lock file exists (a regular file, never a
// link), so some process opens it with liblmdb, and the reader takes a slot in it as liblmdb's
// readers do (a database nobody has open has none, and is read with no lock, writing nothing). Never for
// untrusted or confined input, whose lock file is not for liblmdb to map, nor for a database whose meta pages
// are damaged (the reader then reports them): liblmdb reads only the meta pages tablio has checked, never a
// page of the tree.
inline lmdb_snapshot hold_lmdb_snapshot(const std::string& path, const lmdb_options& options = {},
                                        const open_options& open = {}) {
  if (is_closed(governed(open))) return {};
  // liblmdb opens the lock file for writing, following links: only a regular file of its own.
  detail::os::file_status st;
  if (!detail::os::status_of(detail::lmdb_lock_file(path, options.no_subdir), false, st) ||
      st.kind != detail::os::file_kind::regular || st.links != 1)
    return {};
  try {
    lmdb_file checked(detail::lmdb_data_file(path, options.no_subdir), open);
  } catch (const format_error&) {
    return {};
  }
  try {
    auto* held = new detail::held_lmdb_snapshot(lmdb_environment::open(path, options, true));
    keeper hold = keeper::adopt(held);
    return {held->transaction(), std::move(hold)};
  } catch (const lmdb_error&) {
    return {};  // a lock file this process may not write (someone else's dataset): read unheld
  }
}

// A reader of the database at `path` that reads one snapshot whatever writers do meanwhile
// (hold_lmdb_snapshot); a snapshot overwritten before the reader found it is held anew.
inline owned<lmdb_reader> open_lmdb_reader(const std::string& path, const lmdb_options& options = {},
                                           const lmdb_read_options& read = {},
                                           const open_options& open = {}) {
  for (int attempt = 1;; ++attempt) {
    lmdb_snapshot snapshot = hold_lmdb_snapshot(path, options, open);
    bool held = static_cast<bool>(snapshot.hold);
    try {
      return make_owned<lmdb_reader>(path, options, read, open, std::move(snapshot));
    } catch (const format_error&) {
      if (!held || attempt == 3) throw;
    }
  }
}

TABLIO_END_NAMESPACE
