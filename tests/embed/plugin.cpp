// One framework plugin that embeds tablio, built twice with different compilers and options
// (tablio_plugin_a: g++ with zlib; tablio_plugin_b: clang++ without). Both keep default
// visibility, so every inline function of tablio is an exported symbol of both libraries.
#include <tablio/tablio.hpp>

#include <exception>
#include <string>

#define TABLIO_PLUGIN_FUNCTION_IMPL(name) tablio_##name##_count_records
#define TABLIO_PLUGIN_FUNCTION(name) TABLIO_PLUGIN_FUNCTION_IMPL(name)

// The number of records in a TFRecord file, or -1 with the error in `error`.
extern "C" long TABLIO_PLUGIN_FUNCTION(TABLIO_PLUGIN_NAME)(const char* path, char* error,
                                                           unsigned long size) {
  try {
    long n = 0;
    for (auto& entry :
         tablio::sequential_table_reader<tablio::bytes_holder>(std::string("tfrecord:") + path)) {
      (void)entry;
      ++n;
    }
    return n;
  } catch (const std::exception& e) {
    std::string what = e.what();
    what.resize(std::min<std::size_t>(what.size(), size - 1));
    what.copy(error, what.size());
    error[what.size()] = '\0';
    return -1;
  }
}
