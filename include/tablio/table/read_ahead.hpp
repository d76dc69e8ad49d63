// read_ahead<H, Forms>: a sequential table's entries decoded by N threads ahead of its reader
// and handed out in table order, so that what reads on (a shard's plan, an epoch's resume
// state) sees exactly the entries, keys and errors one thread gives.
//
// The table's own thread reads the framing (files, commands, remote objects, inflating) and
// hands each entry in with its bytes made the job's own; the threads decode records (an
// Example, a Datum, a sample's members) and the archive objects whose holder can tell where
// they end and costs more to decode than to copy (H::skim: Kaldi's compressed and text
// matrices) into the holder. Other entries, whose decoding is their reading (arrays, other
// objects), are decoded where they are read, in order. At most jobs_per_thread entries per
// thread, and past one each and one more, bytes_per_thread of their bytes, are in flight, so
// that memory stays a few entries per thread; the jobs last released are filled first, so that
// the memory they touch stays warm.
//
// Whether the table's entries go to the threads at all is the table's choice
// (table/thread_choice.hpp): it reads here what they would not read faster.
//
// An error, where it was met (reading the framing, or decoding), surfaces when its entry's
// turn comes, after the entries before it; the framing is not read past it.
#pragma once

#include <tablio/core/minmax.hpp>
#include <tablio/core/ordered_pipeline.hpp>
#include <tablio/table/entry_io.hpp>
#include <tablio/table/table_threads.hpp>

#include <optional>
#include <string>
#include <vector>

TABLIO_BEGIN_NAMESPACE

namespace detail {

template <holder_type H, unsigned Forms>
class read_ahead final : public table_stage {
 public:
  // One entry: its holder, and the entry with views into its own storage.
  struct job {
    H holder;
    entry e;
    std::string bytes, part_names, part_bytes, key_name, source, range, origin;
    std::vector<entry_part> parts;
    skimmed_object skimmed;          // an object's bytes, undecoded...
    std::optional<reader> object;    // ...for e.object...
    std::uint64_t object_at = 0;     // ...which start at this offset of its stream
    std::exception_ptr after;        // ...which is not followed by a key: thrown once it is decoded
    bool decoded = false;            // where it was read (objects its holder cannot skim, arrays)
    std::size_t counted = 0;         // its bytes, as counted against the budget
    std::exception_ptr failure;      // met reading the framing, at this entry
    std::exception_ptr value_error;  // a record that does not decode: its value's error alone
    bool skippable = false;          // under 'p', a pending entry: left out if it cannot be read
    bool skipped = false;            // ...as it was, by the framing, a skim or a thread
    std::string why_skipped;
  };

  // Each thread's holders start as copies of `prototype` (a holder's options). `depth`: the
  // entries in flight at most to start with, where an earlier table of the kind learned it (0:
  // one a thread and one more).
  read_ahead(unsigned threads, const H& prototype, std::size_t depth = 0)
      : jobs_(threads, threads * jobs_per_thread, &decode, nullptr),
        byte_budget_(threads * bytes_per_thread),
        threads_(threads),
        depth_(max_of<std::size_t>(threads + 1, min_of(depth, jobs_.depth()))) {
    if constexpr (std::is_copy_assignable_v<H>)
      for (std::size_t i = 0; i < jobs_.depth(); ++i) jobs_.job_at(i).holder = prototype;
  }

  // Once half of them are taken, reads entries from the framing until the budget is in
  // flight, the table ends, or an error ends the reading (ended()). `read_here` reads an entry's value
  // where it is read.
  template <class F, class ReadHere>
  void top_up(F& f, const read_options& options, ReadHere read_here) {
    // Half of what the last top-up left first, so that the threads are woken for many entries
    // at once.
    if (jobs_.in_flight() > filled_ / 2) return;
    struct wake_on_exit {
      read_ahead& self;
      ~wake_on_exit() {
        self.filled_ = self.jobs_.in_flight();
        if (self.for_threads_) self.jobs_.wake();  // else the table's thread ends the jobs itself
        self.for_threads_ = 0;
      }
    } wake{*this};
    // The table's thread waited for a thread with no job to run, or a thread ran out of jobs
    // while the table's thread was busy elsewhere (converting a batch): more in flight keeps both
    // at work.
    if ((jobs_.waits() != waits_seen_ || jobs_.starved() != starved_seen_) && depth_ < jobs_.depth())
      ++depth_;
    waits_seen_ = jobs_.waits();
    starved_seen_ = jobs_.starved();
    while (!ended_ && jobs_.in_flight() < depth_ &&
           (jobs_.in_flight() <= threads_ || bytes_in_flight_ < byte_budget_)) {
      job& j = jobs_.next_slot();
      j.decoded = j.skipped = false;
      j.failure = j.value_error = nullptr;
      try {
        if (!detail::next_entry(f, e_)) {
          ended_ = true;
          return;
        }
        j.skippable = e_.pending && options.permissive;
        try {
          load_pending(f, e_);
          capture(j, read_here);
        } catch (const tablio::error& err) {
          if (!j.skippable) throw;
          skip(j, err);
        }
      } catch (...) {
        j.failure = std::current_exception();
        ended_ = true;
      }
      const bool threaded = !j.decoded && !j.failure && !j.skipped;
      j.counted = 0;
      if (threaded) {
        j.counted = j.bytes.size() + j.skimmed.bytes.size();
        for (const entry_part& p : j.e.parts) j.counted += p.bytes.size();
      }
      for_threads_ += threaded;
      bytes_in_flight_ += j.counted;
      jobs_.hand_in(false);
      if (j.decoded) return;  // no thread takes such entries: no gain in reading further ahead
    }
  }

  bool empty() const noexcept { return jobs_.empty(); }
  // Entries in flight at most, as it has learned (for the next table of its kind).
  std::size_t depth() const noexcept { return depth_; }
  bool ended() const noexcept { return ended_; }
  // The oldest entry: decoded, skipped, or a record whose value's error it holds; rethrows an
  // error that ends the table. It stays until release().
  job& take() {
    try {
      job& j = jobs_.take();
      if (j.failure) std::rethrow_exception(j.failure);
      return j;
    } catch (const tablio::error& err) {
      job& j = jobs_.oldest();
      if (j.skippable) {
        skip(j, err);  // decoding failed in a thread: as where it is read, the entry is left out
        return j;
      }
      // A record that did not decode in a thread: the error of its value, as where it is read.
      if (!j.failure && j.e.form == entry_form::record && dynamic_cast<const format_error*>(&err)) {
        j.value_error = std::current_exception();
        return j;
      }
      throw;
    }
  }
  void release() noexcept {
    job& j = jobs_.oldest();
    bytes_in_flight_ -= j.counted;
    j.skimmed.clear();  // lets the reader's window go
    jobs_.release();
  }

 private:
  // Makes e_ the job's own: its bytes moved or copied in, its views into the job's storage.
  template <class ReadHere>
  void capture(job& j, ReadHere& read_here) {
    entry& e = j.e;
    j.object.reset();
    e.parts = {};
    const bool threaded = e_.form == entry_form::record || (e_.form == entry_form::object && skims);
    if (!threaded) {
      // Decoded here, in order, into the job's holder: entries whose decoding is their reading
      // (arrays, objects a holder cannot skim).
      read_here(j.holder, e_);
      e.key.assign(e_.key);
      e.form = e_.form;
      j.decoded = true;
      return;
    }
    if (e_.form == entry_form::object) {
      e.key.assign(e_.key);
      e.form = e_.form;
      if constexpr (skims) {
        if (skim(j)) return;
      }
      read_here(j.holder, e_);  // what its header does not end plainly
      j.decoded = true;
      return;
    }
    e.key.swap(e_.key);
    e.form = e_.form;
    e.object = nullptr;
    e.array = {};
    e.lent = nullptr;
    e.parts = {};
    e.keeper = std::move(e_.keeper);
    j.range.assign(e_.range);
    j.origin.assign(e_.origin);
    e.range = j.range;
    e.origin = j.origin;
    e.pending = false;
    if (e_.lent && e_.lent->data() == e_.bytes.data() && e_.lent->size() == e_.bytes.size())
      j.bytes.swap(*e_.lent);  // the framing reuses the job's old string
    else
      j.bytes.assign(e_.bytes);
    e.bytes = j.bytes;
    e.lent = &j.bytes;
    if (!e_.parts.empty()) capture_parts(j);
    j.key_name.assign(e_.key_name);
    j.source.assign(e_.source);
    e.key_name = j.key_name;
    e.source = j.source;
    e.provisional_key = e_.provisional_key;
    e.max_key_bytes = e_.max_key_bytes;
    e.data_offset = e_.data_offset;
    e.intact = e_.intact;  // checked in the thread that decodes it
    e.expected_check = e_.expected_check;
  }

  // An archive's object, its bytes moved into the job undecoded, where its holder can tell where
  // it ends; the checks of what follows it are made here, on the stream, in order.
  bool skim(job& j) {
    reader& in = *e_.object;
    if (!H::skim(in, j.skimmed)) return false;
    j.bytes.clear();
    j.object_at = in.tell() - j.skimmed.bytes.size();
    j.object.emplace(memory_reader(j.skimmed.bytes, in.name(), in.limits()));
    j.after = nullptr;
    if (e_.followed_by_key) {
      try {
        detail::with_key(e_.key, in.name(), [&] { detail::check_key_follows(in); });
      } catch (...) {
        j.after = std::current_exception();
      }
    }
    entry& e = j.e;
    e.object = &*j.object;
    e.followed_by_key = e.read_in_sequence = false;
    j.range.assign(e_.range);
    j.origin.assign(e_.origin);
    e.range = j.range;
    e.origin = j.origin;
    return true;
  }

  // A record's parts: their names copied, their bytes kept by the keeper or else copied.
  void capture_parts(job& j) {
    j.part_names.clear();
    j.part_bytes.clear();
    bool copy_bytes = !j.e.keeper;
    for (const entry_part& p : e_.parts) {
      j.part_names += p.name;
      if (copy_bytes) j.part_bytes += p.bytes;
    }
    j.parts.resize(e_.parts.size());
    std::size_t name_at = 0, bytes_at = 0;
    for (std::size_t i = 0; i < e_.parts.size(); ++i) {
      const entry_part& p = e_.parts[i];
      j.parts[i].name = std::string_view(j.part_names).substr(name_at, p.name.size());
      j.parts[i].bytes =
          copy_bytes ? std::string_view(j.part_bytes).substr(bytes_at, p.bytes.size()) : p.bytes;
      name_at += p.name.size();
      bytes_at += p.bytes.size();
    }
    j.e.parts = j.parts;
  }

  // Under 'p', a pending entry that cannot be read is left out, as one thread leaves it out.
  static void skip(job& j, const tablio::error& why) {
    j.skipped = true;
    j.why_skipped = why.what();
  }

  static constexpr bool skims = requires(reader & r, skimmed_object& out) { H::skim(r, out); };

  static void decode(void*, job& j) {
    if (j.decoded || j.failure || j.skipped) return;
    if (!j.object) return entry_reader<H, Forms>::read_alone(j.holder, j.e);
    try {
      entry_reader<H, Forms>::read_alone(j.holder, j.e);
    } catch (const format_error& error) {  // offsets in the stream, not in the bytes
      error_location where = error.where();
      if (where.offset) where.offset = j.object_at + *where.offset;
      throw format_error(std::move(where), error.expected(), error.found());
    }
    if (j.after) std::rethrow_exception(j.after);
  }

  ordered_pipeline<job> jobs_;
  std::size_t byte_budget_, bytes_in_flight_ = 0;  // of entries' bytes
  std::size_t threads_;                            // at least one entry each, and one more
  // Entries in flight at most: one a thread and one more at first (or what the last table of the
  // kind reached), more each time the table's thread waits for a thread with nothing to run or a
  // thread for an entry, up to the pipeline's depth. A short table touches little memory; a long
  // one soon has what keeps its threads busy, and so do the next of its kind (a dataset's shards).
  std::size_t depth_;
  std::uint64_t waits_seen_ = 0, starved_seen_ = 0;
  std::size_t filled_ = 0;       // entries in flight after the last top-up
  std::size_t for_threads_ = 0;  // entries of this top-up the threads decode
  entry e_;                      // the framing's entry being read
  bool ended_ = false;
};

}  // namespace detail

TABLIO_END_NAMESPACE
