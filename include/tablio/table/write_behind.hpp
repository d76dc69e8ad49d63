// write_behind<H>: a table writer's values encoded by N threads (compressed, serialized) while
// the writer's own thread puts them into the framing in the order they were written. An entry's
// bytes are what the holder gives for it alone, so the table is byte for byte what one thread
// writes. At most `depth` values wait, copied, so memory stays bounded.
//
// A value that fails to encode is not written; its error, naming its key and table (a
// usage_error where it was one, as without threads, else a tablio::error), is thrown by a later
// write() or by drain() (close), once the entries before it are written, and the entries after
// it are written still. The framing's own errors (a full disk) are thrown where they happen.
#pragma once

#include <tablio/core/ordered_pipeline.hpp>
#include <tablio/stream/memory.hpp>
#include <tablio/table/entry_io.hpp>
#include <tablio/table/table_threads.hpp>

#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

namespace detail {

template <holder_type H>
class write_behind final : public table_stage {
 public:
  using value_type = typename H::value_type;

  // Entries of forms other than arrays (which take no encoding) can be written behind.
  template <class F>
  static bool takes(const F& f) {
    return output_form(f) != entry_form::array;
  }

  explicit write_behind(unsigned threads) : jobs_(threads, threads * jobs_per_thread, &encode, nullptr) {}

  // Copies or moves v in, as V is.
  template <class F, class V>
  void write(F& f, std::string_view key, V&& v) {
    std::exception_ptr failed;
    if (jobs_.full()) failed = put_oldest(f);
    job& j = jobs_.next_slot();
    j.key.assign(key);
    j.value = std::forward<V>(v);
    j.form = output_form(f);
    j.binary = j.form == entry_form::object && writes_binary(f);
    j.key_name = output_key_name(f);
    jobs_.hand_in(jobs_.in_flight() >= jobs_.depth() / 2);  // threads woken for many at once
    if (failed) std::rethrow_exception(failed);
  }

  // Puts every value in flight; throws the first error a value's encoding met.
  template <class F>
  void drain(F& f) {
    std::exception_ptr first;
    while (!jobs_.empty())
      if (auto failed = put_oldest(f); failed && !first) first = failed;
    if (first) std::rethrow_exception(first);
  }

 private:
  struct job {
    std::string key;
    value_type value{};
    std::string bytes;
    entry_form form = entry_form::record;
    bool binary = true;
    std::string_view key_name;
  };

  static void encode(void*, job& j) {
    j.bytes.clear();
    if (j.form == entry_form::object) {
      writer out = memory_writer(j.bytes);
      H::write(out, j.binary, j.value);
      out.close();
    } else {
      encode_keyed_record<H>(j.bytes, j.key_name, j.key, j.value);
    }
  }

  // What the error of the oldest value says, with its key and table.
  template <class F>
  std::string failed_value(F& f, const error& e) {
    return std::string(failed_value_prefix) + quoted_key(jobs_.oldest().key) + " for '" +
           std::string(table_name(f)) + "': " + e.what();
  }
  // Puts the oldest value into the framing; the error its encoding met, if it failed.
  template <class F>
  std::exception_ptr put_oldest(F& f) {
    struct release_on_exit {
      ordered_pipeline<job>& jobs;
      ~release_on_exit() { jobs.release(); }
    } release{jobs_};
    job* j;
    try {
      j = &jobs_.take();
    } catch (const usage_error& e) {  // as without threads: a value the output cannot take
      return std::make_exception_ptr(usage_error(failed_value(f, e)));
    } catch (const error& e) {
      return std::make_exception_ptr(error(failed_value(f, e)));
    } catch (...) {
      return std::current_exception();
    }
    if (j->form == entry_form::object) {
      if constexpr (object_output<F>) {
        f.begin(j->key).write(j->bytes);
        f.end();
      }
    } else {
      if constexpr (record_output<F>) f.put(j->key, std::string_view(j->bytes));
    }
    return nullptr;
  }

  ordered_pipeline<job> jobs_;
};

}  // namespace detail

TABLIO_END_NAMESPACE
