// Remote objects from C++: tables over nginx and s3rver (started on loopback by
// tests/remote/with_servers.py, which CTest runs this under), read by many threads at once so
// that ThreadSanitizer (scripts/run-tests.sh) sees the threads that stream, open the next
// shard ahead and fetch batches of ranges; and the deadlines, against servers that hold a
// reader (tests/remote/servers.py's fault proxy, run as a child process). The Python tests
// cover the rest (faults, signing, listing, the cache) against the same servers.
#include <tablio/stream/remote.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <optional>
#include <random>
#include <utility>

#include "test_support.hpp"

using namespace tablio;

namespace {

using matrices = std::vector<std::pair<std::string, matrix<float>>>;
using blobs = std::vector<std::pair<std::string, std::string>>;

// Whether the servers are up (run by with_servers.py); the test is skipped, saying so, if not.
bool servers_up() {
  if (std::getenv("TABLIO_TEST_HTTP_URL")) return true;
  WARN("skipped: no servers (run this under tests/remote/with_servers.py)");
  return false;
}
std::string http_root() { return std::getenv("TABLIO_TEST_HTTP_ROOT"); }
std::string http_url() { return std::getenv("TABLIO_TEST_HTTP_URL"); }
std::string bucket_url() { return std::string("s3://") + std::getenv("TABLIO_TEST_BUCKET"); }

template <class H>
std::vector<std::pair<std::string, typename H::value_type>> read_all(const std::string& rspec) {
  std::vector<std::pair<std::string, typename H::value_type>> out;
  for (auto& [key, value] : sequential_table_reader<H>(rspec)) out.emplace_back(key, value);
  return out;
}

matrix<float> numbered_matrix(int i) {
  std::vector<float> values(static_cast<std::size_t>(300 * 40));
  for (std::size_t j = 0; j < values.size(); ++j)
    values[j] = static_cast<float>(i) + 0.001f * static_cast<float>(j);
  return matrix<float>(300, 40, std::move(values));
}

// An archive with its script, a TFRecord file and three tar shards in nginx's folder, and a
// script naming the archive's entries by URL.
void write_tables() {
  const std::string root = http_root();
  {
    table_writer<holder<matrix<float>>> ark("ark,scp:" + root + "/feats.ark," + root + "/feats.scp");
    table_writer<bytes_holder> records("tfrecord:" + root + "/train.tfrecord");
    table_writer<bytes_holder> shards("tar,maxcount=40:" + root + "/shard-%06d.tar");
    for (int i = 0; i < 120; ++i) {
      std::string key = "utt" + std::to_string(1000 + i);
      if (i < 40) ark.write(key, numbered_matrix(i));
      records.write(ordinal_key(static_cast<std::uint64_t>(i)),  // a TFRecord file keeps no keys
                    std::string(static_cast<std::size_t>(100 + i * 37), static_cast<char>('a' + i % 26)));
      shards.write(key, std::string(static_cast<std::size_t>(500 + i), static_cast<char>('A' + i % 26)));
    }
    ark.close();
    records.close();
    shards.close();
  }
  std::string script = test::read_file(root + "/feats.scp");
  for (std::size_t at = 0; (at = script.find(root, at)) != std::string::npos; at += http_url().size())
    script.replace(at, root.size(), http_url());
  std::ofstream(root + "/remote.scp") << script;
}

}  // namespace

TEST_CASE("tables over http read as from files, by many threads at once", "[remote][threads]") {
  if (!servers_up()) return;
  write_tables();
  const std::string root = http_root(), url = http_url();
  const matrices feats = read_all<holder<matrix<float>>>("ark:" + root + "/feats.ark");
  const blobs records = read_all<bytes_holder>("tfrecord:" + root + "/train.tfrecord");
  const blobs shards = read_all<bytes_holder>("tar:" + root + "/shard-%06d.tar");
  REQUIRE(shards.size() == 120);
  std::vector<std::string> keys;
  for (const auto& [key, m] : feats) keys.push_back(key);

  std::vector<int> bad(4, 0);
  test::in_threads(4, [&](int t) {
    bad[t] += read_all<holder<matrix<float>>>("ark:" + url + "/feats.ark") != feats;
    bad[t] += read_all<bytes_holder>("tfrecord:" + url + "/train.tfrecord") != records;
    bad[t] +=
        read_all<bytes_holder>("tar:" + url + "/shard-%06d.tar") != shards;  // the next shard opens ahead
    // Random access: a batch of lookups fetched at once (several connections), then one by one.
    std::vector<std::string> order = keys;
    std::shuffle(order.begin(), order.end(), std::mt19937(static_cast<unsigned>(t)));
    random_access_table_reader<holder<matrix<float>>> by_key("scp:" + root + "/remote.scp");
    by_key.prefetch(std::span<const std::string>(order).first(20));
    for (const auto& [key, m] : feats) bad[t] += by_key.at(key) != m;
  });
  for (int b : bad) CHECK(b == 0);
}

TEST_CASE("a shard that cannot be opened is an error after the shards before it", "[remote]") {
  if (!servers_up()) return;
  write_tables();
  const std::string url = http_url();
  std::vector<std::string> got;
  auto read = [&] {
    for (auto& [key, bytes] : sequential_table_reader<bytes_holder>(
             "tar:" + url + "/shard-000000.tar," + url + "/missing.tar," + url + "/shard-000001.tar"))
      got.push_back(key);
  };
  CHECK_THROWS_WITH(read(), Catch::Contains(url + "/missing.tar") && Catch::Contains("404"));
  CHECK(got.size() == 40);
}

TEST_CASE("s3 objects written, read back, and not there when given up", "[remote]") {
  if (!servers_up()) return;
  const std::string name = bucket_url() + "/feats.ark";
  {
    table_writer<holder<matrix<float>>> out("ark:" + name);
    for (int i = 0; i < 30; ++i) out.write("utt" + std::to_string(i), numbered_matrix(i));
    out.close();
  }
  matrices back = read_all<holder<matrix<float>>>("ark:" + name);
  REQUIRE(back.size() == 30);
  CHECK(back[7].second == numbered_matrix(7));

  const std::string abandoned = bucket_url() + "/abandoned.ark";
  CHECK_THROWS_WITH(
      [&] {
        table_writer<holder<matrix<float>>> out("ark:" + abandoned);
        for (int i = 0; i < 30; ++i) out.write("utt" + std::to_string(i), numbered_matrix(i));
        throw std::runtime_error("the job failed");  // unwinding: the writer gives its object up
      }(),
      "the job failed");
  CHECK_FALSE(remote_exists(abandoned, {}));
  CHECK(remote_exists(name, {}));
}

// ---- Deadlines: servers that hold a reader or a writer by sending slowly, or by asking it to wait

namespace {

// A FaultProxy of tests/remote/servers.py in front of `upstream`, with the faults given as
// Python expressions ("Drip(0.05)"), run as a child process for the scope: it ends when its
// standard input closes (here, or when this program ends).
class fault_proxy {
 public:
  fault_proxy(const std::string& upstream, std::vector<std::string> faults) {
    std::vector<std::string> args = {"python3", std::string(TABLIO_TEST_DATA) + "/../remote/servers.py",
                                     "proxy", upstream};
    args.insert(args.end(), faults.begin(), faults.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int in[2], out[2];
    REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    int spawned = ::posix_spawnp(&pid_, "python3", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(in[0]);
    ::close(out[1]);
    input_ = in[1];
    char c;
    while (spawned == 0 && ::read(out[0], &c, 1) == 1 && c != '\n') url_ += c;
    ::close(out[0]);
    if (spawned != 0) pid_ = 0;
    if (!url_.starts_with("http://127.0.0.1:")) {
      stop();
      FAIL("the fault proxy did not start (python3 tests/remote/servers.py proxy)");
    }
  }
  ~fault_proxy() { stop(); }
  fault_proxy(const fault_proxy&) = delete;
  fault_proxy& operator=(const fault_proxy&) = delete;
  const std::string& url() const { return url_; }

 private:
  void stop() {
    if (input_ >= 0) ::close(std::exchange(input_, -1));
    if (pid_ <= 0) return;
    pid_t ended = 0;
    for (int i = 0; i < 250 && ended == 0; ++i) {  // 5 s, then it is killed
      ended = ::waitpid(pid_, nullptr, WNOHANG);
      if (ended == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (ended == 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    pid_ = 0;
  }
  pid_t pid_ = 0;
  int input_ = -1;
  std::string url_;
};

// Environment variables set for the scope, as they were after.
class environment {
 public:
  explicit environment(std::vector<std::pair<std::string, std::string>> values) {
    for (auto& [name, value] : values) {
      const char* was = std::getenv(name.c_str());
      saved_.push_back({name, was ? std::optional<std::string>(was) : std::nullopt});
      ::setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ~environment() {
    for (auto& [name, value] : saved_)
      if (value)
        ::setenv(name.c_str(), value->c_str(), 1);
      else
        ::unsetenv(name.c_str());
  }
  environment(const environment&) = delete;
  environment& operator=(const environment&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// The threads of this process now: a reader or a writer that ended leaves none behind.
std::ptrdiff_t threads_running() {
  return std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                       std::filesystem::directory_iterator());
}

std::string numbered_bytes(std::size_t n) {
  std::string out(n, '\0');
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<char>((i * 7 + i / 251) & 0xff);
  return out;
}

// A file of nginx's folder (at http_url() + "/" + name).
std::string served(const std::string& name, std::size_t size) {
  std::string bytes = numbered_bytes(size);
  std::ofstream(http_root() + "/" + name, std::ios::binary) << bytes;
  return bytes;
}

// What went wrong, and how long it took to go wrong, for a call expected to throw an io_error.
struct failure {
  std::string message;
  int error_number = 0;
  double seconds = 0;
};
template <class F>
failure failure_of(F f) {
  failure out;
  auto start = std::chrono::steady_clock::now();
  try {
    f();
    FAIL("no io_error");
  } catch (const io_error& e) {
    out.message = e.what();
    out.error_number = e.error_number();
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

// Reads the object from its start, in order, into `got`: byte by byte, so that all that came
// before an error is there.
void read_in_order(const std::string& url, const open_options& options, std::string& got) {
  reader in = open_remote_input(url, 0, access_pattern::sequential, options);
  for (int c; (c = in.get()) >= 0;) got.push_back(static_cast<char>(c));
}

// The byte offset a message names ("at byte N of").
std::uint64_t offset_in(const std::string& message) {
  std::size_t at = message.find(" at byte ");
  return at == std::string::npos ? UINT64_MAX : std::stoull(message.substr(at + 9));
}

}  // namespace

TEST_CASE("a server that drips bytes fails a stream at its deadline, and leaves nothing running",
          "[remote][deadlines]") {
  if (!servers_up()) return;
  const std::string bytes = served("drip.bin", 300000);
  const std::ptrdiff_t threads = threads_running();
  fault_proxy proxy(http_url(), {"Drip(0.05, after=100000, method='GET')"});  // then 20 bytes a second
  // A user and a query string, which no message may show.
  const std::string shown = proxy.url() + "/drip.bin";
  const std::string url = "http://someone:secret@" + shown.substr(7) + "?X-Amz-Signature=hidden";
  open_options options;
  options.remote.stream_deadline = 1.5;
  std::string got;
  failure f = failure_of([&] { read_in_order(url, options, got); });
  CHECK_THAT(f.message, Catch::StartsWith("the stream deadline of 1.5 s passed at byte ") &&
                            Catch::Contains("of '" + shown + "'"));
  CHECK(f.message.find("secret") == std::string::npos);
  CHECK(f.message.find("hidden") == std::string::npos);
  CHECK(f.error_number == ETIMEDOUT);
  // Everything before the offset named came, and no more; the reader was closed at once.
  std::uint64_t offset = offset_in(f.message);
  CHECK(offset > 100000);
  CHECK(offset < 100000 + 60);
  CHECK((got == bytes.substr(0, offset)));
  CHECK(f.seconds >= 1.4);  // timed from outside: a clock tick may fall either way
  CHECK(f.seconds < 3);
  CHECK(threads_running() == threads);
}

TEST_CASE("a server that asks to wait for good fails a request within its deadline", "[remote][deadlines]") {
  if (!servers_up()) return;
  served("busy.bin", 1000);
  open_options options;
  options.remote.request_deadline = 2.5;
  {  // A wait past the deadline is not waited.
    fault_proxy proxy(http_url(), {"Status(503, retry_after=60)"});
    failure f = failure_of([&] { remote_size(proxy.url() + "/busy.bin", options); });
    CHECK(f.message ==
          "HTTP 503 Service Unavailable, and the 60 s wait the server asks for (Retry-After) would "
          "pass the request deadline of 2.5 s, at byte 0 of '" +
              proxy.url() + "/busy.bin': " + std::strerror(ETIMEDOUT));
    CHECK(f.error_number == ETIMEDOUT);
    CHECK(f.seconds < 1);
  }
  {  // Waits that fit are waited, until the next would not: a range, at 0, 1 and 2 s.
    fault_proxy proxy(http_url(), {"Status(503, retry_after=1)"});
    failure f = failure_of(
        [&] { open_remote_input(proxy.url() + "/busy.bin", 10, access_pattern::random, options); });
    CHECK_THAT(f.message,
               Catch::StartsWith("HTTP 503 Service Unavailable after 3 attempts, and the 1 s wait the "
                                 "server asks for (Retry-After) would pass the request deadline of "
                                 "2.5 s, at byte 10 of"));
    CHECK(f.seconds >= 1.9);
    CHECK(f.seconds < 2.5);
  }
  {  // A reader given up while it waits ends at once, its thread with it.
    const std::ptrdiff_t threads = threads_running();
    fault_proxy proxy(http_url(), {"Status(503, retry_after=60)"});
    std::optional<remote_opening> opening(std::in_place, proxy.url() + "/busy.bin", open_options{});
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // answered at once: it waits a minute
    auto start = std::chrono::steady_clock::now();
    opening.reset();
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(500));
    CHECK(threads_running() == threads);
  }
}

TEST_CASE("by default, a server that drips bytes runs the attempts out", "[remote][deadlines]") {
  if (!servers_up()) return;
  served("drip.bin", 300000);
  environment quick({{"TABLIO_HTTP_TIMEOUT", "1"}, {"TABLIO_HTTP_RETRIES", "3"}});
  fault_proxy proxy(http_url(), {"Drip(0.05, method='GET')"});  // 20 bytes a second, from the first
  const std::ptrdiff_t threads = threads_running();
  std::string got;
  failure f = failure_of([&] { read_in_order(proxy.url() + "/drip.bin", {}, got); });
  // Each attempt stalls after a second (less than 1 KiB a second), and moves too little to
  // count as progress: three of them, and the delays between.
  CHECK_THAT(f.message,
             Catch::StartsWith("request failed (less than 1024 bytes moved in 1 s) after 3 attempts "
                               "at byte "));
  CHECK(offset_in(f.message) == got.size());
  CHECK(got.size() < 200);
  CHECK(f.seconds >= 2.9);
  CHECK(f.seconds < 5);
  CHECK(threads_running() == threads);
}

TEST_CASE("deadlines do not cut a large object read at the reader's own pace", "[remote][deadlines]") {
  if (!servers_up()) return;
  const std::string bytes = served("large.bin", std::size_t{40} << 20);
  environment quick({{"TABLIO_HTTP_TIMEOUT", "1"}, {"TABLIO_HTTP_RETRIES", "2"}});
  open_options options;
  options.remote.request_deadline = 0.5;  // not the GET that streams: it takes longer
  options.remote.stream_deadline = 30;
  const std::string url = http_url() + "/large.bin";
  {  // Pauses longer than the request deadline and than the stall window (the buffer full meanwhile).
    reader in = open_remote_input(url, 0, access_pattern::sequential, options);
    std::string got;
    char buffer[1 << 16];
    while (std::size_t n = in.read_some(buffer, sizeof buffer)) {
      got.append(buffer, n);
      if (got.size() % (std::size_t{12} << 20) < n)
        std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    }
    CHECK((got == bytes));
  }
  {  // Ranges, each a request within its deadline.
    reader in = open_remote_input(url, 0, access_pattern::random, options);
    for (std::uint64_t at : {std::uint64_t{30} << 20, std::uint64_t{123457}, std::uint64_t{39} << 20}) {
      in.seek(at);
      std::string got(100000, '\0');
      std::size_t n = 0;
      while (n < got.size()) n += in.read_some(got.data() + n, got.size() - n);
      CHECK((got == bytes.substr(at, got.size())));
    }
  }
}

TEST_CASE("a writer's upload ends at its deadlines, and leaves no object", "[remote][deadlines]") {
  if (!servers_up()) return;
  const std::string s3 = std::getenv("AWS_ENDPOINT_URL");
  const std::ptrdiff_t threads = threads_running();
  const std::string waited = bucket_url() + "/asked-to-wait.bin", held = bucket_url() + "/held.bin";
  {  // A small object, one PUT, which the server asks to retry a second later, each time.
    fault_proxy proxy(s3, {"Status(503, retry_after=1, method='PUT')"});
    environment through({{"AWS_ENDPOINT_URL", proxy.url()}});
    open_options options;
    options.remote.request_deadline = 1.5;
    writer out = open_remote_output(waited, options);
    out.write(numbered_bytes(1000));
    failure f = failure_of([&] { out.close(); });
    CHECK(f.message ==
          "HTTP 503 Service Unavailable after 2 attempts, and the 1 s wait the server asks for "
          "(Retry-After) would pass the request deadline of 1.5 s, at byte 0 of '" +
              waited + "': " + std::strerror(ETIMEDOUT));
    CHECK(f.seconds >= 0.9);
    CHECK(f.seconds < 1.5);
  }
  {  // In parts, the last request (CompleteMultipartUpload) held by the server.
    fault_proxy proxy(s3, {"Latency(60, method='POST', when=lambda r: 'uploadId=' in r.query)"});
    environment through({{"AWS_ENDPOINT_URL", proxy.url()}});
    open_options options;
    options.remote.stream_deadline = 3;
    auto start = std::chrono::steady_clock::now();
    writer out = open_remote_output(held, options);
    out.write(numbered_bytes((std::size_t{9} << 20)));
    failure f = failure_of([&] { out.close(); });
    CHECK(f.message ==
          "the stream deadline of 3 s passed at byte 0 of '" + held + "': " + std::strerror(ETIMEDOUT));
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(seconds >= 2.9);
    CHECK(seconds < 4);
  }
  CHECK_FALSE(remote_exists(waited, {}));
  CHECK_FALSE(remote_exists(held, {}));
  CHECK(threads_running() == threads);
}
