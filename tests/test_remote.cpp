// Remote objects from C++: tables over nginx and s3rver (started on loopback by
// tests/remote/with_servers.py, which CTest runs this under), read by many threads at once so
// that ThreadSanitizer (scripts/run-tests.sh) sees the threads that stream, open the next
// shard ahead and fetch batches of ranges. The Python tests cover the rest (faults, signing,
// listing, the cache) against the same servers.
#include <tablio/stream/remote.hpp>

#include <algorithm>
#include <random>

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
      records.write(key,
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
