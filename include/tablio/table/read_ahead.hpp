// read_ahead<H, Forms>: a sequential table's entries decoded by N threads ahead of its reader
// and handed out in table order, so that what reads on (a shard's plan, an epoch's resume
// state) sees exactly the entries, keys and errors one thread gives.
//
// The table's own thread reads the framing (files, commands, remote objects, inflating) and
// hands each entry in with its bytes made the job's own; the threads decode records (an
// Example, a Datum, a sample's members) into the holder. Entries whose decoding is reading
// their bytes (archive objects, arrays) are decoded where they are read, in order. At most
// jobs_per_thread entries per thread are in flight, so memory stays a few entries per thread.
//
// An error, where it was met (reading the framing, or decoding), surfaces when its entry's
// turn comes, after the entries before it; the framing is not read past it.
#pragma once

#include <tablio/core/ordered_pipeline.hpp>
#include <tablio/table/entry_io.hpp>
#include <tablio/table/table_threads.hpp>

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
    bool decoded = false;        // where it was read (objects, arrays)
    std::exception_ptr failure;  // met reading the framing, at this entry
    bool skipped = false;        // under 'p': an entry the framing could not load
    std::string why_skipped;
  };

  explicit read_ahead(unsigned threads) : jobs_(threads, threads * jobs_per_thread, &decode, nullptr) {}

  // Once half of them are taken, reads entries from the framing until jobs_per_thread per
  // thread are in flight, the table ends, or an error ends the reading. `read_here` reads an entry's value
  // where it is read.
  template <class F, class ReadHere>
  void top_up(F& f, const read_options& options, ReadHere read_here) {
    // Half empty first, so that the threads are woken for many entries at once.
    if (jobs_.in_flight() > jobs_.depth() / 2) return;
    struct wake_on_exit {
      ordered_pipeline<job>& jobs;
      ~wake_on_exit() { jobs.wake(); }
    } wake{jobs_};
    while (!ended_ && !jobs_.full()) {
      job& j = jobs_.next_slot();
      j.decoded = j.skipped = false;
      j.failure = nullptr;
      try {
        if (!detail::next_entry(f, e_)) {
          ended_ = true;
          return;
        }
        bool pending = e_.pending;
        try {
          load_pending(f, e_);
        } catch (const tablio::error& err) {
          if (!pending || !options.permissive) throw;
          j.skipped = true;  // under p, an entry that cannot be loaded is left out
          j.why_skipped = err.what();
        }
        if (!j.skipped) capture(j, read_here);
      } catch (...) {
        j.failure = std::current_exception();
        ended_ = true;
      }
      jobs_.hand_in(false);
    }
  }

  bool empty() const noexcept { return jobs_.empty(); }
  // The oldest entry, decoded; rethrows its error. It stays until release().
  job& take() {
    job& j = jobs_.take();
    if (j.failure) std::rethrow_exception(j.failure);
    return j;
  }
  void release() noexcept { jobs_.release(); }

 private:
  // Makes e_ the job's own: its bytes moved or copied in, its views into the job's storage.
  template <class ReadHere>
  void capture(job& j, ReadHere& read_here) {
    entry& e = j.e;
    if (e_.form != entry_form::record) {
      // Reading is decoding here: in order, into the job's holder.
      read_here(j.holder, e_);
      e.key.assign(e_.key);
      e.form = e_.form;
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

  static void decode(void*, job& j) {
    if (j.decoded || j.failure || j.skipped) return;
    entry_reader<H, Forms>::read_alone(j.holder, j.e);
  }

  ordered_pipeline<job> jobs_;
  entry e_;  // the framing's entry being read
  bool ended_ = false;
};

}  // namespace detail

TABLIO_END_NAMESPACE
