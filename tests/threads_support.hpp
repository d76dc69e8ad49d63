// What the tests of tables with threads share: a table's entries and how its reading ended, as
// text to compare, and the switches that make tables use their threads whatever they measure,
// and read their files through windows of a given size.
#pragma once

#include <tablio/tablio.hpp>

#include <string>
#include <vector>

namespace test {

inline tablio::open_options with_threads(unsigned threads) {
  tablio::open_options o;
  o.threads = threads;
  return o;
}

// Every entry of a table: its key and its value as the holder writes it in binary; then, if
// reading stopped at an error, the error's message; and under 'p', error(). With
// `past_bad_values`, a value that fails is its key and its error's message, and reading goes on.
template <class H>
std::vector<std::string> entries(const std::string& rspec, unsigned threads, bool past_bad_values = false) {
  std::vector<std::string> out;
  try {
    tablio::sequential_table_reader<H> table(rspec, with_threads(threads));
    for (; !table.done(); table.next()) {
      std::string bytes;
      try {
        tablio::writer w = tablio::memory_writer(bytes);
        H::write(w, true, table.value());
        w.close();
      } catch (const tablio::format_error& e) {
        if (!past_bad_values) throw;
        bytes = std::string("failed: ") + e.what();
      }
      out.push_back(table.key() + " " + bytes);
    }
    out.push_back("error(): " + table.error());
  } catch (const tablio::error& e) {
    out.push_back(std::string("thrown: ") + e.what());
  }
  return out;
}

// Every entry the threads can take handed to them, whatever the table measures (else it reads
// those its threads would not read faster itself), for the scope's life.
struct all_to_threads {
  tablio::detail::thread_use was = tablio::detail::forced_thread_use;
  all_to_threads() { tablio::detail::forced_thread_use = tablio::detail::thread_use::always; }
  ~all_to_threads() { tablio::detail::forced_thread_use = was; }
  all_to_threads(const all_to_threads&) = delete;
  all_to_threads& operator=(const all_to_threads&) = delete;
};

// Files and commands read through windows of `bytes` at most, for the scope's life.
struct read_windows {
  std::size_t was = tablio::detail::default_read_buffer;
  explicit read_windows(std::size_t bytes) { tablio::detail::default_read_buffer = bytes; }
  ~read_windows() { tablio::detail::default_read_buffer = was; }
  read_windows(const read_windows&) = delete;
  read_windows& operator=(const read_windows&) = delete;
};

}  // namespace test
