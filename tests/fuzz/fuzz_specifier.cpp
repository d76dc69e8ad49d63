// Specifiers, extended filenames and script lines: any string is parsed or refused, never
// more.
#include <tablio/framing/scp.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/stream/shards.hpp>
#include <tablio/table/specifier.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tablio;
  std::string_view text = fuzz::as_chars(data, size);
  (void)parse_rspecifier(text);
  (void)parse_wspecifier(text);
  (void)classify_rxfilename(text);
  (void)classify_wxfilename(text);
  fuzz::accepts([&] {
    if (classify_rxfilename(text) == input_kind::offset_file) (void)split_offset_filename(text);
  });
  fuzz::accepts([&] { (void)parse_script_line(text); });
  return 0;
}
