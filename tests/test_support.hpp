// Helpers shared by the tests: reading files, formatting values as the .expect files do,
// and reading/writing Kaldi archives entry by entry with a holder.
#pragma once

#include <tablio/tablio.hpp>
#include <tablio/types/matrix.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace test {

// The bytes codec C makes of v.
template <class C, class T>
std::string bytes_of(const T& v) {
  auto b = tablio::encode<C>(v);
  return std::string(b.data(), b.size());
}

// What a Kaldi-style object's Write(std::ostream&, binary) writes.
template <class T>
std::string written_by_kaldi(const T& t, bool binary) {
  std::ostringstream os;
  t.Write(os, binary);
  return os.str();
}

// Sends std::cerr to a string for its lifetime.
struct CerrCapture {
  std::ostringstream text;
  std::streambuf* previous = std::cerr.rdbuf(text.rdbuf());
  ~CerrCapture() { std::cerr.rdbuf(previous); }
  CerrCapture() = default;
  CerrCapture(const CerrCapture&) = delete;
  CerrCapture& operator=(const CerrCapture&) = delete;
  std::string str() const { return text.str(); }
};

// A fresh folder that is removed with everything in it at the end of the scope.
struct temp_dir {
  std::filesystem::path path;
  temp_dir() {
    std::random_device seed;
    for (int attempt = 0;; ++attempt) {  // create_directory: false when the name is taken
      path = std::filesystem::temp_directory_path() / ("tablio-test-" + std::to_string(seed()));
      if (std::filesystem::create_directory(path)) return;
      REQUIRE(attempt < 100);
    }
  }
  ~temp_dir() { std::filesystem::remove_all(path); }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

// Makes a symbolic link, where the system lets this process make one (wine cannot).
inline bool made_link(const std::filesystem::path& target, const std::filesystem::path& link) {
  std::error_code failed;
  std::filesystem::create_symlink(target, link, failed);
  return !failed;
}

// Runs in a folder for its lifetime: Kaldi's scripts name files relative to their folder.
struct in_folder {
  std::filesystem::path previous = std::filesystem::current_path();
  explicit in_folder(const std::filesystem::path& p) { std::filesystem::current_path(p); }
  ~in_folder() { std::filesystem::current_path(previous); }
  in_folder(const in_folder&) = delete;
  in_folder& operator=(const in_folder&) = delete;
};

// A command line that runs the tests' own command (command_helper.cpp) with `actions` through
// the system's shell, so that a pipe test runs alike on every system:
//   open_input(test::command("print \"hello world\" exit 3") + " |")
inline std::string command(const std::string& actions) {
  const std::string runner = TABLIO_TEST_COMMAND_RUNNER;  // an emulator, in a cross build
  return (runner.empty() ? "" : runner + " ") + "\"" + TABLIO_TEST_COMMAND + "\" " + actions;
}

inline std::string data_path(const std::string& relative) {
  return std::string(TABLIO_TEST_DATA) + "/" + relative;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The entry lines of an .expect file (status lines starting with '#' left out).
inline void write_file(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

inline std::vector<std::string> expect_entries(const std::string& path) {
  std::istringstream in(read_file(path));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  return lines;
}

// Formats like glibc printf("%a") with float widened to double, as the .expect files do.
inline std::string hex_float(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

inline std::string format_value(bool v) { return v ? "T" : "F"; }
inline std::string format_value(const std::string& v) { return v; }
template <class T>
requires std::is_arithmetic_v<T> std::string format_value(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return hex_float(static_cast<double>(v));
  else
    return std::to_string(v);
}
template <class A, class B>
std::string format_value(const std::pair<A, B>& p) {
  return format_value(p.first) + "," + format_value(p.second);
}

template <class T>
std::string join(const std::vector<T>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ' ';
    out += format_value(v[i]);
  }
  return out;
}

// "key\ttype\tdims\tvalues" for one entry.
template <class T>
std::string expect_line(const std::string& key, const std::string& type, const T& v) {
  if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, std::string>) {
    return key + "\t" + type + "\t-\t" + format_value(v);
  } else if constexpr (requires { v[0].size(); } && !std::is_same_v<typename T::value_type, std::string>) {
    std::string dims = std::to_string(v.size()) + ":";
    std::vector<typename T::value_type::value_type> flat;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) dims += ',';
      dims += std::to_string(v[i].size());
      flat.insert(flat.end(), v[i].begin(), v[i].end());
    }
    return key + "\t" + type + "\t" + dims + "\t" + join(flat);
  } else {
    return key + "\t" + type + "\t" + std::to_string(v.size()) + "\t" + join(v);
  }
}

// Reads every "key object" entry of an archive with holder H.
template <class H>
std::vector<std::pair<std::string, typename H::value_type>> read_archive(tablio::reader& r) {
  std::vector<std::pair<std::string, typename H::value_type>> out;
  tablio::archive_reader archive(std::move(r));
  std::string key;
  while (archive.next_key(key)) {
    H h;
    h.read(archive.in());
    out.emplace_back(key, std::move(h.value()));
  }
  r = std::move(archive.in());
  return out;
}

template <class H>
std::vector<std::pair<std::string, typename H::value_type>> read_archive_file(const std::string& path) {
  tablio::reader r(tablio::file_source(path), path);
  return read_archive<H>(r);
}

template <class H>
std::string write_archive(const std::vector<std::pair<std::string, typename H::value_type>>& entries,
                          bool binary) {
  std::string out;
  {
    tablio::writer w = tablio::memory_writer(out);
    for (const auto& [key, value] : entries) {
      w.write(key);
      w.put(' ');
      H::write(w, binary, value);
    }
    w.close();
  }
  return out;
}

// Matches an exception whose message holds `part`, for CHECK_THROWS_MATCHES, which checks the
// exception's type as well: CHECK_THROWS_MATCHES(f(), format_error, test::says("truncated")).
class says : public Catch::MatcherBase<std::exception> {
 public:
  explicit says(std::string part) : part_(std::move(part)) {}
  bool match(const std::exception& e) const override {
    return std::string_view(e.what()).find(part_) != std::string_view::npos;
  }
  std::string describe() const override { return "says \"" + part_ + "\""; }

 private:
  std::string part_;
};

// Runs f(t) for t in [0, count) in as many threads, started together, and waits for them.
template <class F>
void in_threads(int count, F f) {
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < count; ++t)
    threads.emplace_back([&, t] {
      ++ready;
      while (ready < count) std::this_thread::yield();
      f(t);
    });
  for (auto& t : threads) t.join();
}

}  // namespace test
