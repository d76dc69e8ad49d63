// Kaldi's ReadKaldiObject and WriteKaldiObject: one object in one extended file name.
#pragma once

#include <tablio/kaldi/io.hpp>
#include <tablio/kaldi/matrix.hpp>
#include <tablio/types/range.hpp>

#include <string>

TABLIO_BEGIN_NAMESPACE

namespace kaldi {

// Kaldi's ReadKaldiObject / WriteKaldiObject. As Kaldi's, reading a Matrix takes a range,
// "m.ark:10[0:9,2:5]": the matrix at m.ark:10, cut to rows 0-9 and columns 2-5.
template <class C>
void ReadKaldiObject(const std::string& rxfilename, C* c) {
  if constexpr (std::same_as<C, Matrix<float>> || std::same_as<C, Matrix<double>>) {
    if (!rxfilename.empty() && rxfilename.back() == ']') {
      auto ranged = split_range_specifier(rxfilename);
      if (!ranged) throw_usage_error({"cannot make sense of the range in '", rxfilename, "'"});
      ReadKaldiObject(std::string(ranged->rxfilename), c);
      try {
        apply_range(*c, ranged->range);
      } catch (const format_error& e) {
        throw format_error({rxfilename, std::nullopt, {}}, e.expected(), e.found());
      }
      return;
    }
  }
  bool binary = false;
  Input in(rxfilename, &binary);
  c->Read(in.Stream(), binary);
}
// Writes c to wxfilename with c.Write(os, binary), "\0B" first in binary mode; throws
// tablio::error when the output cannot be opened or closed.
template <class C>
void WriteKaldiObject(const C& c, const std::string& wxfilename, bool binary) {
  Output out(wxfilename, binary);
  c.Write(out.Stream(), binary);
  if (!out.Close()) throw_io_error(wxfilename, 0, {"cannot write"});
}

}  // namespace kaldi

TABLIO_END_NAMESPACE
