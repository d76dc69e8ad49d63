// Which holder a table of H's values writes with, so that every writer (the tool, Python, a
// C++ program) stores one type in one format one way: TFRecord files hold values that are not
// Examples in their Example form (holder/example_form.hpp), which TensorFlow reads; archives,
// LMDB and tar hold H's own objects. Readers take either form (reading_holder_t<H>).
//
//   with_writing_holder<holder<matrix<float>>>(wspec, [&]<class W>() {
//     table_writer<W> out(wspec);
//     ...
//   });
#pragma once

#include <tablio/holder/example_form.hpp>
#include <tablio/table/specifier.hpp>

#include <string_view>

TABLIO_BEGIN_NAMESPACE

// Calls `f.template operator()<W>()` with `W` the holder that writes H's values to wspec.
template <holder_type H, class F>
decltype(auto) with_writing_holder(std::string_view wspec, F&& f) {
  if constexpr (stored_as_example<H>) {
    if (require_wspecifier(wspec).writes_tfrecord()) return f.template operator()<example_record_holder<H>>();
  }
  return f.template operator()<H>();
}

TABLIO_END_NAMESPACE
