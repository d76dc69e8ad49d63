// Single objects in files, as Kaldi's ReadKaldiObject and WriteKaldiObject keep them: one
// holder's object with no key ("cmvn.mat", written binary with its "\0B" header), read from any
// rxfilename (a file, an offset into an archive "feats.ark:15", with a range
// "feats.ark:15[0:9,2:5]", a command "cmd |") and written to any wxfilename. The object is read
// as it arrives: what follows it is never held.
#pragma once

#include <tablio/framing/scp.hpp>
#include <tablio/holder/concepts.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/table/entry_io.hpp>

#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

// The object at rxfilename, read by holder H; a range keeps the part it names.
template <holder_type H>
typename H::value_type read_object(std::string_view rxfilename, const open_options& open = {}) {
  std::string_view name = rxfilename, range;
  if (auto ranged = split_range_specifier(rxfilename)) {
    name = ranged->rxfilename;
    range = ranged->range;
  }
  if constexpr (!detail::has_range_support<typename H::value_type>)
    if (!range.empty()) throw_usage_error({"'", rxfilename, "': this type of object takes no range"});
  H h;
  reader in = open_input(name, open);
  try {
    h.read(in);
  } catch (const format_error&) {
    in.close();  // a command that failed explains its output better: its status is thrown here
    throw;
  }
  // A command is judged when its output ended there (closing looks a little further for the
  // end); one that goes on after the object (an endless one) is left, as Kaldi leaves it.
  in.close();
  if constexpr (detail::has_range_support<typename H::value_type>) {
    if (!range.empty()) {
      try {
        apply_range(h.value(), range);
      } catch (const format_error& e) {
        throw format_error({std::string(rxfilename), std::nullopt, {}}, e.expected(), e.found());
      }
    }
  }
  return std::move(h.value());
}

// Writes value as one object to wxfilename (binary, with its header, as Kaldi writes it, or
// text); throws if anything could not be written.
template <holder_type H>
void write_object(std::string_view wxfilename, const typename H::value_type& value, bool binary = true,
                  const open_options& open = {}) {
  writer out = open_output(wxfilename, open);
  H::write(out, binary, value);
  out.close();
}

TABLIO_END_NAMESPACE
