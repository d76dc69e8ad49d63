// thread_choice: whether a table's threads take its entries or its own thread reads (writes)
// them, as it does without threads, chosen by measure. Threads cost the table's thread a
// hand-over per entry, memory in flight, and values made on another core; where an entry costs
// about that to decode (a float matrix, a small Example, compressed matrices on a fast core) one
// thread is faster. So a table measures what its entries cost over stretches of entries each
// way (a reader, the time from one entry to the next, its caller's work on the values included; a
// writer, its time in write(), not its caller's, which another table's threads change): one thread first,
// then, once the table has run long enough to win back what starting threads costs, its threads. It keeps the
// faster, by a margin in favour of one thread, and tries the other again now and then, less often each time
// it stays slower, since what entries cost can change along a table. A stretch's cost is its time over its
// entries, less the blocks (entries of at least 50 µs together) far above their median, so that a stall (a
// disk's writeback, a page of a file not yet cached, another process) does not decide for it. A table opened
// after another of its kind closed in its thread (a dataset's next shard) starts from what that one learned
// (thread_choice_memory), rather than measuring anew from one thread.
#pragma once

#include <tablio/core/monotonic_clock.hpp>

#include <cstdint>
#include <cstdlib>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

namespace detail {

// Tables that use their threads for every entry they can, or never, whatever they measure: for
// tests and benchmarks, set here, or else from the environment (TABLIO_THREAD_USE=always or
// never), read once.
enum class thread_use { measured, always, never };
inline thread_use forced_thread_use = thread_use::measured;
inline thread_use thread_use_asked() noexcept {
  if (forced_thread_use != thread_use::measured) return forced_thread_use;
  static const thread_use from_environment = [] {
    const char* asked = std::getenv("TABLIO_THREAD_USE");
    std::string_view use(asked ? asked : "");
    return use == "always" ? thread_use::always : use == "never" ? thread_use::never : thread_use::measured;
  }();
  return from_environment;
}

class thread_choice {
 public:
  // Whether the next entries go to the threads.
  bool threaded() const noexcept {
    if (thread_use use = thread_use_asked(); use != thread_use::measured) return use == thread_use::always;
    return way_ == threads_way;
  }

  // An entry the table spent `nanoseconds` on, by the way `threaded` says (an entry of the way
  // left, still in flight, counts for neither).
  void entry(bool threaded, std::uint64_t nanoseconds) noexcept {
    if (static_cast<int>(threaded) != way_) return;
    if (warming_ > 0) {  // a way's first entries and its first 2 ms (its start's stalls), or 20 ms
      warm_time_ += nanoseconds;
      if (warming_ > 1) --warming_;
      if ((warming_ == 1 && warm_time_ >= warm_nanoseconds) || warm_time_ >= 10 * warm_nanoseconds)
        warming_ = 0;
      return;
    }
    block_time_ += nanoseconds;
    ++block_entries_;
    if (block_time_ < block_nanoseconds) return;
    const block& ended = blocks_of_stretch_[blocks_++] = {block_time_, block_entries_};
    stretch_time_ += block_time_;
    block_time_ = block_entries_ = 0;
    if ((blocks_ >= stretch_blocks && stretch_time_ >= stretch_nanoseconds) || blocks_ == max_blocks)
      return end_stretch();
    // A try of the way not kept is over at once when two blocks cost twice the kept way's.
    if (way_ != best_ && measured_[best_] && blocks_ >= 2 &&
        blocks_of_stretch_[blocks_ - 2].cost() / 2 > cost_[best_] && ended.cost() / 2 > cost_[best_]) {
      measured(ended.cost());
      decide();
    }
  }
  // An entry handed out by the way `threaded` says, whose cost is the time since the one before:
  // a reader's, whose caller's work on its values is dearer where they were made on another core.
  void handed_out(bool threaded) noexcept {
    const std::uint64_t now = monotonic_nanoseconds();
    entry(threaded, now - last_);
    last_ = now;
  }
  // What a table has measured of both ways, for the next table of its kind to start from
  // (none, `measured` false, until both are).
  struct lesson {
    bool measured = false;
    int best = one_way;
    std::uint64_t cost[2] = {0, 0};
    std::uint64_t tries_apart = 0, stretches_left = 0;
  };
  lesson learned() const noexcept {
    if (!measured_[one_way] || !measured_[threads_way]) return {};
    return lesson{true, best_, {cost_[one_way], cost_[threads_way]}, tries_apart_, stretches_left_};
  }
  // Starts from an earlier table's lesson: its faster way first, the other tried as often as
  // there, and as soon as it would have been there. Tables shorter than the stretches between
  // tries (a dataset's shards) would otherwise never try the other way again, and keep one thread
  // for good after a stretch that a stall slowed.
  void start_from(const lesson& l) noexcept {
    best_ = l.best;
    for (int way : {one_way, threads_way}) {
      cost_[way] = recent_[way][0] = l.cost[way];
      measured_[way] = true;
    }
    tries_apart_ = l.tries_apart;
    stretches_left_ = l.stretches_left != 0 ? l.stretches_left : 1;
    start(best_);
  }

  // An entry the threads could not take (read where it was read: an array, a float matrix):
  // while the table's entries are of that kind, threads have nothing to gain.
  void untaken() noexcept {
    if (way_ != threads_way) return;
    cost_[threads_way] = ~std::uint64_t{0};
    measured_[threads_way] = true;
    decide();
  }

 private:
  static constexpr int one_way = 0, threads_way = 1;
  static constexpr std::uint64_t block_nanoseconds = 50000, stretch_nanoseconds = 2000000,
                                 warm_nanoseconds = 2000000;
  // Threads are first tried once the table has run this long, or sooner if its entries cost
  // this much: starting them (the threads, the memory their entries take, first touched, a
  // sleeping core woken) costs a few milliseconds, which a shorter table would not win back
  // where they turn out slower, and would win little of where they are faster.
  static constexpr std::uint64_t first_try_nanoseconds = 100000000, dear_entry_nanoseconds = 500000;
  static constexpr unsigned stretch_blocks = 5, max_blocks = 64;

  void end_stretch() noexcept {
    // The blocks' time over their entries, less the blocks far above the median cost (stalls):
    // an insertion sort of at most max_blocks for the median. Not the mean of the blocks' costs:
    // with threads, a block of one entry the table's thread decoded itself costs as much as a
    // block of that entry and the several a thread had ready, which would weigh it many times.
    for (unsigned i = 1; i < blocks_; ++i)
      for (unsigned j = i; j > 0 && blocks_of_stretch_[j - 1].cost() > blocks_of_stretch_[j].cost(); --j) {
        const block b = blocks_of_stretch_[j];
        blocks_of_stretch_[j] = blocks_of_stretch_[j - 1];
        blocks_of_stretch_[j - 1] = b;
      }
    const std::uint64_t median = blocks_of_stretch_[blocks_ / 2].cost();
    std::uint64_t time = 0, entries = 0;
    for (unsigned i = 0; i < blocks_ && blocks_of_stretch_[i].cost() <= 4 * median; ++i) {
      time += blocks_of_stretch_[i].time;
      entries += blocks_of_stretch_[i].entries;
    }
    measured(time / entries);
    decide();
  }

  // A stretch's cost. The kept way's is the least of its last few, so that one stretch slowed by
  // something else (another table's threads starting) does not trade it for the other; a try's is
  // what it measured now.
  void measured(std::uint64_t cost) noexcept {
    std::uint64_t* last = recent_[way_];
    last[2] = last[1];
    last[1] = last[0];
    last[0] = cost;
    cost_[way_] = cost;
    if (way_ == best_)
      for (int i = 1; i < 3; ++i)
        if (last[i] != 0 && last[i] < cost_[way_]) cost_[way_] = last[i];
    measured_[way_] = true;
  }

  void decide() noexcept {
    if (!measured_[threads_way]) {  // one thread measured: threads next, once they could pay
      const bool could_pay = monotonic_nanoseconds() - opened_ >= first_try_nanoseconds ||
                             cost_[one_way] >= dear_entry_nanoseconds;
      return start(could_pay ? threads_way : one_way);
    }
    // Threads must be faster by an eighth, so that noise does not trade one thread for them (and
    // the memory they touch, and their start again).
    int best = cost_[threads_way] < cost_[one_way] - cost_[one_way] / 8 ? threads_way : one_way;
    if (way_ != best_) {  // the other way, tried again
      tries_apart_ = best == best_ ? (tries_apart_ < 256 ? 2 * tries_apart_ : tries_apart_) : 8;
      best_ = best;
      stretches_left_ = tries_apart_;
      return start(best);
    }
    best_ = best;
    if (best != way_) return start(best);
    if (--stretches_left_ == 0) return start(1 - best);
    start(way_);
  }

  void start(int way) noexcept {
    // The first entries of a way are not counted: the threads starting, filling and touching
    // their memory, or emptying.
    if (way != way_) {
      warming_ = way == threads_way ? 16 : 2;
      warm_time_ = 0;
    }
    way_ = way;
    block_time_ = block_entries_ = stretch_time_ = 0;
    blocks_ = 0;
  }

  int way_ = one_way, best_ = one_way;
  std::uint64_t opened_ = monotonic_nanoseconds(), last_ = opened_;      // opened, and last handed out
  std::uint64_t block_time_ = 0, block_entries_ = 0, stretch_time_ = 0;  // of the current stretch
  struct block {
    std::uint64_t time, entries;  // nanoseconds in all, and its entries (at least one)
    std::uint64_t cost() const noexcept { return time / entries; }  // nanoseconds an entry
  };
  block blocks_of_stretch_[max_blocks] = {};  // ...its blocks
  unsigned blocks_ = 0;
  std::uint64_t warming_ = 2, warm_time_ = 0;  // entries not counted, at the start of a way
  std::uint64_t recent_[2][3] = {};            // nanoseconds an entry, by the last stretches each way
  std::uint64_t cost_[2] = {0, 0};             // ...and the least of them
  bool measured_[2] = {false, false};
  std::uint64_t tries_apart_ = 8, stretches_left_ = 8;  // stretches between tries of the other way
};

// The lesson of the last table of one kind (a holder and framing) to close in a thread, which
// the next one that thread opens starts from (a dataset's shards, opened one after another):
// whether its threads were faster, and how many entries in flight kept them busy.
class thread_choice_memory {
 public:
  // `depth`: the closing table's entries in flight at most, where its threads read (else 0).
  void keep(const thread_choice& closing, std::size_t depth = 0) noexcept {
    if (const thread_choice::lesson l = closing.learned(); l.measured) lesson_ = l;
    if (depth != 0) depth_ = depth;
  }
  void recall(thread_choice& opening) const noexcept {
    if (lesson_.measured) opening.start_from(lesson_);
  }
  // Entries in flight at most to start with (0: none learned).
  std::size_t depth() const noexcept { return depth_; }

 private:
  thread_choice::lesson lesson_;
  std::size_t depth_ = 0;
};

}  // namespace detail

TABLIO_END_NAMESPACE
