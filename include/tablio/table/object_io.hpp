// What the table classes share: reading one object with a holder (with the key added to any
// error), applying a script-file range to it, and naming holders in messages.
#pragma once

#include <tablio/core/error.hpp>
#include <tablio/holder/concepts.hpp>

#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

namespace detail {

// Rethrows a format_error with the table key (and path, if the error had none).
template <class F>
decltype(auto) with_key(std::string_view key, const std::string& path, F&& f) {
  try {
    return f();
  } catch (const format_error& e) {
    error_location where = e.where();
    where.key = std::string(key);
    if (where.path.empty()) where.path = path;
    throw format_error(std::move(where), e.expected(), e.found());
  }
}

// Reads one object into h.
template <holder_type H>
void read_object(H& h, reader& r, std::string_view key) {
  with_key(key, r.name(), [&] { h.read(r); });
}

template <class T>
concept has_range_support = requires(T& v, std::string_view range) {
  apply_range(v, range);
};

// Applies a range from a script line to the value just read.
template <class T>
void apply_script_range(T& value, std::string_view range, std::string_view key, const std::string& path) {
  if (range.empty()) return;
  if constexpr (has_range_support<T>) {
    with_key(key, path, [&] { apply_range(value, range); });
  } else {
    throw format_error({path, std::nullopt, std::string(key)}, "no range (this type does not support ranges)",
                       "'[" + std::string(range) + "]'");
  }
}

}  // namespace detail

TABLIO_END_NAMESPACE
