// Faults of disk, pipe and process: a full disk or a file size limit is an I/O error naming
// the file; a failed output command is an error at close; a writer killed mid-table leaves a
// file a permissive reader recovers every whole entry from; a dying input pipe is an error,
// never a short table; signals interrupting reads and writes lose nothing.
#include <tablio/framing/lmdb.hpp>

#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <thread>

#include "test_support.hpp"

using namespace tablio;

namespace {

using matrix_holder = holder<matrix<float>>;

// The i-th entry of every table written here (one shape, as IDX needs; 7,680 bytes of
// values, so that buffers end inside entries); its values name it.
matrix<float> entry_value(std::uint64_t i) {
  matrix<float> m(48, 40);
  for (std::size_t k = 0; k < m.size(); ++k)
    m.data()[k] = static_cast<float>(i) + static_cast<float>(k) * 0.5f;
  return m;
}

void write_entries(table_writer<matrix_holder>& out, std::uint64_t from, std::uint64_t to) {
  for (std::uint64_t i = from; i < to; ++i) out.write(ordinal_key(i), entry_value(i));
}

std::string write_and_close(const std::string& wspec, std::uint64_t n) {
  table_writer<matrix_holder> out(wspec);
  write_entries(out, 0, n);
  out.close();
  return "no error";
}

// Runs f in a child process; its return value is the exit status (an exception: 99).
pid_t start_child(const std::function<int()>& f) {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int status = 99;
    try {
      status = f();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: %s\n", e.what());
    }
    ::_exit(status);
  }
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

// A pipe the child uses to say "ready" once.
struct ready_signal {
  int fds[2];
  ready_signal() { REQUIRE(::pipe(fds) == 0); }
  ~ready_signal() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
  void send() const { (void)!::write(fds[1], "r", 1); }
  bool wait() const {
    char c;
    return ::read(fds[0], &c, 1) == 1;
  }
};

// Every entry a permissive reader finds, which must be entries 0, 1, ... in order.
std::uint64_t recovered_prefix(const std::string& rspec) {
  std::uint64_t n = 0;
  for (auto& [key, value] : sequential_table_reader<matrix_holder>(rspec)) {
    INFO("entry " << n);
    REQUIRE(key == ordinal_key(n));
    REQUIRE(value == entry_value(n));
    ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("a full disk is an I/O error naming the file, at write or at close", "[faults][disk]") {
  for (std::string spec : {"ark:/dev/full", "ark,t:/dev/full", "ark,f:/dev/full", "tfrecord:/dev/full",
                           "tfrecord,gzip:/dev/full", "idx:/dev/full"}) {
    INFO(spec);
    CHECK_THROWS_WITH(write_and_close(spec, 3),
                      Catch::Contains("'/dev/full'") && Catch::Contains("No space left on device"));
  }
  test::temp_dir dir;
  // The archive is fine; its script is not.
  CHECK_THROWS_WITH(write_and_close("ark,scp:" + (dir / "a.ark") + ",/dev/full", 3),
                    Catch::Contains("'/dev/full'") && Catch::Contains("No space left on device"));
  // Large entries fail at the write itself, before close.
  table_writer<matrix_holder> out("ark:/dev/full");
  CHECK_THROWS_WITH(write_entries(out, 0, 100), Catch::Contains("No space left on device"));
}

TEST_CASE("a file size limit stops every writer with an error naming the file", "[fork][faults][disk]") {
  test::temp_dir dir;
  // LMDB reports the short write the limit causes as EIO.
  auto limited = [&](const std::string& path, const std::function<void()>& write) {
    return start_child([&] {
      ::signal(SIGXFSZ, SIG_IGN);  // the write then fails with EFBIG
      rlimit limit{256 * 1024, 256 * 1024};
      if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return 3;
      try {
        write();
      } catch (const error& e) {
        std::string what = e.what();
        bool named =
            what.find(path) != std::string::npos && (what.find("File too large") != std::string::npos ||
                                                     what.find("Input/output error") != std::string::npos);
        if (!named) std::fprintf(stderr, "child: unexpected message: %s\n", e.what());
        return named ? 0 : 2;
      }
      return 1;  // no error: data lost silently
    });
  };
  for (std::string kind : {"ark", "tfrecord", "idx"}) {
    INFO(kind);
    std::string path = dir / ("limited." + kind);
    CHECK(wait_for(limited(path, [&] { write_and_close(kind + ":" + path, 200); })) == 0);
  }
  std::string db = dir / "limited-lmdb";
  CHECK(wait_for(limited(db, [&] {
          lmdb_writer w(db, {.batch_size = 10});
          std::string value(4000, 'v');
          for (int i = 0; i < 1000; ++i) w.put(ordinal_key(static_cast<std::uint64_t>(i)), value);
          w.close();
        })) == 0);
}

TEST_CASE("an output command that fails is an error at close", "[faults][pipe][unix-tools]") {
  test::temp_dir dir;
  CHECK_THROWS_WITH(write_and_close("ark:| exit 3", 3),
                    Catch::Contains("exit 3") && Catch::Contains("status 3"));
  // The command dies while data is still coming: EPIPE gives way to its exit status.
  CHECK_THROWS_WITH(write_and_close("ark:| false", 200), Catch::Contains("status 1"));
  CHECK_THROWS_WITH(write_and_close("ark:| cat > " + (dir / "no/such/folder"), 3), Catch::Contains("status"));
  CHECK_THROWS_WITH(write_and_close("tfrecord:| gzip -c > " + (dir / "no/such/folder"), 3),
                    Catch::Contains("status"));
  CHECK_THROWS_WITH(write_and_close("ark:| kill -9 $$", 3), Catch::Contains("killed by signal 9"));
  CHECK(write_and_close("ark:| cat > " + (dir / "fine.ark"), 3) == "no error");
  CHECK(recovered_prefix("ark:" + (dir / "fine.ark")) == 3);
}

TEST_CASE("an input command that dies is an error, not a short table", "[fork][faults][pipe]") {
  test::temp_dir dir;
  std::string ark = dir / "a.ark", tfrecord = dir / "a.tfrecord", idx = dir / "a.idx";
  write_and_close("ark:" + ark, 40);
  write_and_close("tfrecord:" + tfrecord, 40);
  write_and_close("idx:" + idx, 40);
  for (const auto& [kind, path] : {std::pair{"ark", ark}, {"tfrecord", tfrecord}, {"idx", idx}}) {
    INFO(kind);
    std::string prefix = std::string(kind) + ":";
    // All the data arrives, then the command fails: only its status tells.
    CHECK_THROWS_WITH(recovered_prefix(prefix + "cat " + path + "; exit 4 |"), Catch::Contains("status 4"));
    CHECK_THROWS_WITH(recovered_prefix(prefix + "cat " + path + "; kill -9 $$ |"),
                      Catch::Contains("killed by signal 9"));
    // It dies part way.
    CHECK_THROWS_AS(recovered_prefix(prefix + "head -c 30000 " + path + "; kill -9 $$ |"), tablio::error);
    CHECK(recovered_prefix(prefix + "cat " + path + " |") == 40);
  }
}

namespace {

// Writes entries with a table writer in a child until it is killed with SIGKILL at a moment
// after the first `flushed` entries were flushed; returns the file left behind.
void kill_writer_midway(const std::string& wspec, std::uint64_t flushed, int delay_ms) {
  ready_signal ready;
  pid_t child = start_child([&] {
    table_writer<matrix_holder> out(wspec);
    write_entries(out, 0, flushed);
    out.flush();
    ready.send();
    write_entries(out, flushed, 1'000'000);
    return 0;
  });
  REQUIRE(ready.wait());
  std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  ::kill(child, SIGKILL);
  CHECK(wait_for(child) == 128 + SIGKILL);
}

// The bytes a complete table of the first n entries has.
std::string complete_table(const std::string& kind, const test::temp_dir& dir, std::uint64_t n) {
  std::string path = dir / ("complete-" + std::to_string(n) + "." + kind);
  write_and_close(kind + ":" + path, n);
  return test::read_file(path);
}

}  // namespace

TEST_CASE("a writer killed mid-table leaves every whole entry recoverable", "[fork][faults][kill]") {
  test::temp_dir dir;
  for (std::string kind : {"ark", "tfrecord", "idx"}) {
    for (int delay_ms : {0, 3, 20}) {
      INFO(kind << ", killed " << delay_ms << " ms after the first flush");
      std::string path = dir / ("killed." + kind);
      kill_writer_midway(kind + ":" + path, 30, delay_ms);
      std::uint64_t n = recovered_prefix(kind + ",p:" + path);
      CHECK(n >= 30);
      CHECK(recovered_prefix(kind + ",p:cat " + path + " |") == n);  // and from a stream
      // The file is n complete entries and less than one more: nothing whole was missed.
      std::string left = test::read_file(path), whole = complete_table(kind, dir, n),
                  one_more = complete_table(kind, dir, n + 1);
      if (kind == "idx") left.replace(4, 4, whole.substr(4, 4));  // the count is patched at close
      CHECK(left.compare(0, whole.size(), whole) == 0);
      CHECK(left.size() < one_more.size());
      // A strict reader says a file with a partial entry is damaged (IDX: any file whose count
      // was never written).
      if (left.size() > whole.size() || kind == "idx")
        CHECK_THROWS_AS(recovered_prefix(kind + ":" + path), tablio::error);
      std::filesystem::remove(path);
    }
  }
}

TEST_CASE("an LMDB writer killed mid-batch loses only the batch it had not committed",
          "[fork][faults][kill][lmdb]") {
  test::temp_dir dir;
  auto value_of = [](std::uint64_t i) { return std::string(100 + i % 300, static_cast<char>('a' + i % 26)); };
  for (int delay_ms : {-1, 0, 5, 30}) {
    INFO("killed " << delay_ms << " ms after the first commit");
    std::string db = dir / ("killed" + std::to_string(delay_ms));
    ready_signal ready;
    pid_t child = start_child([&]() -> int {
      lmdb_writer w(db, {.initial_map_size = 64 * 1024, .batch_size = 50});
      for (std::uint64_t i = 0;; ++i) {
        w.put(ordinal_key(i), value_of(i));
        if (i == 124) {
          ready.send();  // two batches committed, 25 puts in the open transaction
          if (delay_ms < 0) ::pause();
        }
      }
    });
    REQUIRE(ready.wait());
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms < 0 ? 5 : delay_ms));
    ::kill(child, SIGKILL);
    CHECK(wait_for(child) == 128 + SIGKILL);
    std::uint64_t n = 0;
    {
      lmdb_reader r(db);
      std::string_view key, value;
      while (r.next(key, value)) {
        REQUIRE(key == ordinal_key(n));
        REQUIRE(value == value_of(n));
        ++n;
      }
    }
    CHECK(n % 50 == 0);
    if (delay_ms < 0) CHECK(n == 100);
    CHECK(n >= 100);
    // The dead writer's lock is released: another writer goes on where it stopped.
    {
      lmdb_writer w(db, {.batch_size = 50, .append = true});
      for (std::uint64_t i = n; i < n + 10; ++i) w.put(ordinal_key(i), value_of(i));
      w.close();
    }
    lmdb_reader again(db);
    CHECK(again.size() == n + 10);
  }
}

namespace {

// SIGALRM every 50 microseconds, with a handler installed without SA_RESTART: reads and
// writes on pipes return EINTR or transfer part of what was asked.
struct interrupting_timer {
  struct sigaction old_action {};
  interrupting_timer() {
    struct sigaction action {};
    action.sa_handler = [](int) {};
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;
    REQUIRE(::sigaction(SIGALRM, &action, &old_action) == 0);
    itimerval every{{0, 50}, {0, 50}};
    REQUIRE(::setitimer(ITIMER_REAL, &every, nullptr) == 0);
  }
  ~interrupting_timer() {
    itimerval off{};
    ::setitimer(ITIMER_REAL, &off, nullptr);
    ::sigaction(SIGALRM, &old_action, nullptr);
  }
};

}  // namespace

TEST_CASE("signals interrupting pipe reads and writes lose nothing", "[faults][eintr][unix-tools]") {
  test::temp_dir dir;
  interrupting_timer timer;
  for (std::string kind : {"ark", "tfrecord", "idx"}) {
    INFO(kind);
    std::string path = dir / ("through-pipes." + kind);
    // IDX patches its count at close: its output must be seekable.
    std::string output = kind == "idx" ? path : "| cat > " + path;
    CHECK(write_and_close(kind + ":" + output, 400) == "no error");
    CHECK(recovered_prefix(kind + ":cat " + path + " |") == 400);
    CHECK(recovered_prefix(kind + ":" + path) == 400);
  }
  CHECK(write_and_close("ark:| gzip -c > " + (dir / "a.ark.gz"), 400) == "no error");
  CHECK(recovered_prefix("ark:gunzip -c " + (dir / "a.ark.gz") + " |") == 400);
}

TEST_CASE("a child process that drops its parent's input command leaves it to the parent", "[faults][fork]") {
  test::temp_dir dir;
  std::string ark = dir / "a.ark";
  {
    table_writer<basic_holder<std::int32_t>> out("ark:" + ark);
    for (std::int32_t i = 0; i < 5000; ++i) out.write("k" + std::to_string(i), i);
  }
  sequential_table_reader<basic_holder<std::int32_t>> in("ark:cat " + ark + " |");
  CHECK(in.value() == 0);
  // The child closes its copy of the reader: it must neither read the rest of the command's
  // output (the parent's) nor wait for a command that is not its child.
  pid_t child = start_child([&]() -> int {
    sequential_table_reader<basic_holder<std::int32_t>> inherited = std::move(in);
    inherited.close();
    return 0;
  });
  CHECK(wait_for(child) == 0);
  std::int32_t expected = 0;
  for (; !in.done(); in.next()) REQUIRE(in.value() == expected++);
  CHECK(expected == 5000);
  in.close();  // the command's exit status is the parent's to see
}

TEST_CASE("a reader that stops early closes its end and lets the command end", "[faults][pipe][unix-tools]") {
  test::temp_dir dir;
  std::string ark = dir / "a.ark";
  write_and_close("ark:" + ark, 3);
  // Endless and huge commands whose output is no archive: the error comes at once, and the
  // reader's end with it (they ran until a timeout).
  CHECK_THROWS_MATCHES(recovered_prefix("ark:yes |"), format_error,
                       test::says("format error in 'yes |' at byte 2 (key 'y')"));
  CHECK_THROWS_MATCHES(recovered_prefix("ark:yes | head -c 4000000000 |"), format_error,
                       test::says("'yes | head -c 4000000000 |' at byte 2"));
  // Left after one entry of an endless command and of a huge one, by close() and by the
  // destructor: the command's status (SIGPIPE) is no failure, since its output was not wanted.
  for (std::string producer :
       {"while cat " + ark + "; do :; done", "cat " + ark + "; head -c 4000000000 /dev/zero"}) {
    INFO(producer);
    sequential_table_reader<matrix_holder> closed("ark:" + producer + " |");
    CHECK(closed.key() == ordinal_key(0));
    CHECK_NOTHROW(closed.close());
    sequential_table_reader<matrix_holder> destroyed("ark:" + producer + " |");
    CHECK(destroyed.key() == ordinal_key(0));
  }
  // Python ignores SIGPIPE, and commands inherit what is ignored: a command started with it
  // ignored must still end when its reader goes.
  {
    struct sigaction ignore {
    }, previous{};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore, &previous);
    {
      // With SIGPIPE ignored, the shell's own echo would fail and go on for ever.
      sequential_table_reader<matrix_holder> in("ark:cat " + ark + "; while :; do echo; done 2>/dev/null |");
      CHECK(in.key() == ordinal_key(0));
    }
    ::sigaction(SIGPIPE, &previous, nullptr);
  }
  // Read to the end, a command's status is still judged, also when the table ends before its
  // bytes (a tar file's padding).
  std::string tar = dir / "a.tar";
  write_and_close("tar:" + tar, 3);
  CHECK(recovered_prefix("tar:cat " + tar + " |") == 3);
  CHECK_THROWS_WITH(recovered_prefix("tar:cat " + tar + "; exit 5 |"), Catch::Contains("status 5"));
  CHECK_THROWS_WITH(recovered_prefix("ark:cat " + ark + "; exit 6 |"), Catch::Contains("status 6"));
}
