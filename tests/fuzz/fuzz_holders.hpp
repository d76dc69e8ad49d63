// Every Kaldi holder, chosen by a byte of the input, and the bytes a holder writes.
#pragma once

#include <tablio/holder/holders.hpp>
#include <tablio/stream/memory.hpp>
#include <tablio/types/compressed_matrix.hpp>
#include <tablio/types/matrix.hpp>

#include "fuzz_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

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

// True when v holds a NaN or an infinity. Kaldi's text readers refuse some of what its
// writers print for them ("-nan", "-inf"; any of them for basic types, which read with
// operator>>), so such values have no text round trip, in Kaldi either.
template <class T>
bool has_non_finite(const T& v) {
  auto finite = [](auto x) { return std::isfinite(x); };
  if constexpr (std::is_floating_point_v<T>) {
    return !std::isfinite(v);
  } else if constexpr (std::is_same_v<T, tablio::compressed_matrix>) {
    std::vector<float> values(static_cast<std::size_t>(v.num_rows()) *
                              static_cast<std::size_t>(v.num_cols()));
    if (!v.empty()) v.decompress(values.data());
    return !std::all_of(values.begin(), values.end(), finite);
  } else if constexpr (requires {
                         requires std::is_floating_point_v<std::remove_cvref_t<decltype(*v.data())>>;
                       }) {
    return !std::all_of(v.data(), v.data() + v.size(), finite);
  } else {
    return false;
  }
}

// False when v is a compressed matrix whose values cannot be compressed again. Its text form
// is those values, which reading compresses: when all of them are near float's limit, Kaldi's
// range (max - min, or 1 + |min| when they are equal) overflows float, and tablio refuses it.
template <class T>
bool recompressible(const T& v) {
  if constexpr (std::is_same_v<T, tablio::compressed_matrix>) {
    if (v.empty()) return true;
    std::vector<float> values(static_cast<std::size_t>(v.num_rows()) *
                              static_cast<std::size_t>(v.num_cols()));
    v.decompress(values.data());
    return accepts([&] { tablio::compressed_matrix again(values.data(), v.num_rows(), v.num_cols()); });
  } else {
    return true;
  }
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
