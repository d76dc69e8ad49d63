// A framework's program linked with both plugins (in the order the build gives): each plugin
// must behave by its own options, whichever copy of tablio the loader saw first.
#include <cstdio>
#include <cstring>

extern "C" long tablio_a_count_records(const char* path, char* error, unsigned long size);
extern "C" long tablio_b_count_records(const char* path, char* error, unsigned long size);

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s PLAIN.tfrecord GZIP.tfrecord\n", argv[0]);
    return 2;
  }
  const char* plain = argv[1];
  const char* gzip = argv[2];
  char error[1024];
  int failures = 0;
  auto expect = [&](const char* what, bool ok) {
    std::printf("%s: %s\n", ok ? "ok" : "FAILED", what);
    failures += !ok;
  };
  // Plugin A (g++, zlib) reads both files.
  expect("plugin A reads the plain file", tablio_a_count_records(plain, error, sizeof error) == 10);
  long n = tablio_a_count_records(gzip, error, sizeof error);
  if (n < 0) std::printf("  plugin A: %s\n", error);
  expect("plugin A reads the GZIP file", n == 10);
  // Plugin B (clang++, no zlib) reads the plain file and says that GZIP needs zlib.
  expect("plugin B reads the plain file", tablio_b_count_records(plain, error, sizeof error) == 10);
  n = tablio_b_count_records(gzip, error, sizeof error);
  if (n >= 0) std::printf("  plugin B read %ld records\n", n);
  expect("plugin B refuses the GZIP file, naming zlib", n == -1 && std::strstr(error, "zlib") != nullptr);
  return failures == 0 ? 0 : 1;
}
