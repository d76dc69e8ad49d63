// How many threads a table works in: its specifier's threads=N, else what its open options ask.
#pragma once

#include <tablio/core/version.hpp>

#include <cstddef>
#include <cstdint>

TABLIO_BEGIN_NAMESPACE

namespace detail {

// Entries in flight per thread: enough that every thread finds work while the table's own
// thread reads or writes the framing, few enough that memory stays bounded; and the bytes of
// read entries in flight per thread, which bound large entries sooner (their values, decoded,
// are more memory, first touched: fewer of them run faster).
inline constexpr std::size_t jobs_per_thread = 8;
inline constexpr std::size_t bytes_per_thread = std::size_t{1} << 22;

// What a table holds of its threads, and destroys through this: a program that only moves and
// destroys tables compiles none of their code (in the compiled mode, src/ has it).
class table_stage {
 public:
  virtual ~table_stage() = default;
};

template <class F>
unsigned table_threads(const F& f, unsigned asked) {
  if constexpr (requires { f.specifier().threads; })
    if (f.specifier().threads > 0) return f.specifier().threads;
  return asked > 0 ? asked : 1;
}

}  // namespace detail

TABLIO_END_NAMESPACE
