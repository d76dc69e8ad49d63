// Every Kaldi holder, chosen by a byte of the input, and the bytes a holder writes.
#pragma once

#include <tablio/holder/holders.hpp>
#include <tablio/stream/memory.hpp>
#include <tablio/types/compressed_matrix.hpp>
#include <tablio/types/matrix.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

namespace fuzz {

// Calls f.template operator()<H>() with the holder that `choice` selects.
template <class F>
void with_holder(std::uint8_t choice, F&& f) {
  using namespace tablio;
  switch (choice % 17) {
    case 0:
      return f.template operator()<holder<matrix<float>>>();
    case 1:
      return f.template operator()<holder<matrix<double>>>();
    case 2:
      return f.template operator()<holder<vector<float>>>();
    case 3:
      return f.template operator()<holder<vector<double>>>();
    case 4:
      return f.template operator()<holder<compressed_matrix>>();
    case 5:
      return f.template operator()<basic_holder<std::int32_t>>();
    case 6:
      return f.template operator()<basic_holder<float>>();
    case 7:
      return f.template operator()<basic_holder<double>>();
    case 8:
      return f.template operator()<basic_holder<bool>>();
    case 9:
      return f.template operator()<basic_holder<std::int64_t>>();
    case 10:
      return f.template operator()<basic_vector_holder<std::int32_t>>();
    case 11:
      return f.template operator()<basic_vector_holder<float>>();
    case 12:
      return f.template operator()<basic_vector_vector_holder<std::int32_t>>();
    case 13:
      return f.template operator()<basic_pair_vector_holder<std::int32_t>>();
    case 14:
      return f.template operator()<token_holder>();
    case 15:
      return f.template operator()<token_vector_holder>();
    default:
      return f.template operator()<wave_holder>();
  }
}

// False for the NaN and infinities that a basic holder's text form cannot read back.
template <class T>
bool basic_text_readable(const T& v) {
  if constexpr (std::is_floating_point_v<T>)
    return std::isfinite(v);
  else if constexpr (requires {
                       requires std::is_floating_point_v<typename T::value_type>;
                       v.begin();
                     })
    return std::all_of(v.begin(), v.end(), [](auto x) { return std::isfinite(x); });
  else
    return true;
}

// What holder H writes for v, binary or text.
template <class H>
std::string written(const typename H::value_type& v, bool binary) {
  std::string out;
  tablio::writer w = tablio::memory_writer(out);
  H::write(w, binary, v);
  w.close();
  return out;
}

}  // namespace fuzz
