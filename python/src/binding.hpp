// What every part of the extension shares: the type-erased table objects the Python classes
// hold, the registry of value types (type="matrix", ...), and key and error conversion.
// The binding converts and nothing else: every format rule lives in the tablio headers.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <tablio/table/shard.hpp>
#include <tablio/tablio.hpp>
#include <tablio/types/image.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

namespace tablio_python {

namespace py = pybind11;

// The GIL let go for C++ work, taken back at the end of the scope. A daemon thread that asks
// for it back while the interpreter exits is ended by Python with pthread_exit, which unwinds
// the thread's stack through pybind11 and this extension. That works only where the C++
// runtime tells the unwinding apart (libstdc++; libc++ on glibc aborts or crashes), and runs
// destructors in an interpreter half torn down. So once the exit begins (an atexit function,
// let_threads_through_exit) any other thread never asks again and waits for the process to
// end, as Python 3.14 makes such threads do; one that was already asking is let through first.
// The exiting thread itself goes on (it destroys what is left, tables included).
class unlocked_gil {
 public:
  unlocked_gil() : state_(PyEval_SaveThread()) {}
  unlocked_gil(const unlocked_gil&) = delete;
  unlocked_gil& operator=(const unlocked_gil&) = delete;
  ~unlocked_gil() noexcept(false) {
    asking().fetch_add(1);
    if (exiting().load() && exiting_thread() != std::this_thread::get_id()) {
      asking().fetch_sub(1);
      for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
    }
    PyEval_RestoreThread(state_);  // (pybind11's gil_scoped_release, noexcept, would abort here)
    asking().fetch_sub(1);
  }

  // Called once as the interpreter starts to exit, holding the GIL: from now on other threads
  // wait rather than ask, and those asking get the GIL once more before Python ends them.
  static void let_threads_through_exit() {
    exiting_thread() = std::this_thread::get_id();
    exiting().store(true);
    PyThreadState* self = PyEval_SaveThread();
    for (int waited = 0; asking().load() > 0 && waited < 2000; ++waited)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    PyEval_RestoreThread(self);
  }

 private:
  static std::atomic<bool>& exiting() {
    static std::atomic<bool> flag{false};
    return flag;
  }
  static std::thread::id& exiting_thread() {  // written before exiting() is set, read after
    static std::thread::id id;
    return id;
  }
  static std::atomic<int>& asking() {
    static std::atomic<int> count{0};
    return count;
  }
  PyThreadState* state_;
};

// Keys are text in Kaldi and bytes in LMDB: a key that is not UTF-8 reaches Python with its
// bytes kept as surrogates (as os.fsdecode does), and goes back to the same bytes.
py::str key_to_python(std::string_view key);
std::string key_from_python(py::handle key);
// A name that recurs in every record (an Example's feature names): the same str object each
// time, so that it is decoded and hashed once rather than per record.
py::str name_to_python(std::string_view name);

// decode_raw={name: dtype}: an Example's bytes feature read as little-endian numbers of
// that type, as TensorFlow's decode_raw reads it; a subarray dtype, (numpy.uint8, (28, 28)),
// also gives each value's shape.
struct raw_feature {
  std::string name;
  char kind = 'u';                   // numpy's: 'u', 'i' or 'f'
  int size = 1;                      // bytes per number
  std::vector<py::ssize_t> shape{};  // of each value; empty: as many numbers as it holds
};

// How Python asked for values: the element type of float arrays, the writer's compression,
// the features to read and those to decode, the factor images are scaled by.
struct storage_pools;

struct value_options {
  bool double_precision = false;                           // dtype=numpy.float64
  bool dtype_given = false;                                // type="auto" converts only when asked
  bool int16_samples = false;                              // type="wave", dtype=numpy.int16: kaldiio's layout
  std::optional<int> compression_method;                   // writer(..., compression_method=N)
  std::optional<std::vector<std::string>> features;        // type="example": only these are read
  std::vector<raw_feature> decode_raw;                     // type="example"
  std::optional<float> scale;                              // images as float32 times scale (Caffe's)
  bool view = false;                                       // view=True: a record's values view one buffer
  tablio::open_options open;                               // allow_network=, allow_pipes=
  std::string segments;                                    // segments=: a segments file over the recordings
  std::optional<float> max_overshoot, min_segment_length;  // given: in place of the specifier's
  std::optional<tablio::image_options> images;             // images= decodes these
  std::vector<std::string> image_features;                 // type="example": images= decodes these
  std::shared_ptr<storage_pools> recycled;                 // a sequential table's (arrays.hpp)

  const raw_feature* raw(std::string_view feature) const {
    for (const raw_feature& r : decode_raw)
      if (r.name == feature) return &r;
    return nullptr;
  }
  // Whether images= decodes a record's feature.
  bool decodes_images(std::string_view feature) const {
    if (!images) return false;
    for (const std::string& f : image_features)
      if (f == feature) return true;
    return false;
  }
  // Whether a record's feature is read: all are unless features= names some. A handful of
  // names, compared in place, costs less than hashing each record's keys.
  bool keeps(std::string_view feature) const {
    if (!features) return true;
    for (const std::string& f : *features)
      if (f == feature) return true;
    return false;
  }
};

// The key of the value random access converts now, which its images' random draws come from
// (a sequential table's holders are told theirs by the table).
inline std::string& looked_up_key() {
  thread_local std::string key;
  return key;
}

// Where the entry random access converts now starts in its file, where known: what its images'
// errors name (a sequential table's holders are told theirs by the table).
inline std::optional<std::uint64_t>& looked_up_offset() {
  thread_local std::optional<std::uint64_t> offset;
  return offset;
}

// Runs f, which converts values of the table `path` (the value under `key`, when one): a
// value the conversion cannot take (decode_raw's lengths) is a format_error without a place,
// which leaves here naming the table and the key.
template <class F>
auto converted_in(const std::string& path, const std::string& key, F f) -> decltype(f()) {
  try {
    return f();
  } catch (const tablio::format_error& e) {
    if (!e.path().empty() && (!e.key().empty() || key.empty())) throw;
    throw tablio::format_error(
        {e.path().empty() ? path : e.path(), e.offset(), e.key().empty() ? key : e.key()}, e.expected(),
        e.found());
  }
}

// One thread at a time: a table object used from two Python threads at once (the GIL is
// released while it works) is a UsageError, not a data race.
class busy_guard {
 public:
  explicit busy_guard(bool& busy) : busy_(busy) {
    if (busy_)
      throw tablio::usage_error(
          "a tablio table is in use (by another thread, or by code run while it reads, such as a "
          "callback): give each thread its own, and read no table from code it runs");
    busy_ = true;
  }
  ~busy_guard() { busy_ = false; }
  busy_guard(const busy_guard&) = delete;
  busy_guard& operator=(const busy_guard&) = delete;

 private:
  bool& busy_;
};

// A sequential reader of some value type.
class sequential_base {
 public:
  virtual ~sequential_base() = default;
  // Moves to the next entry and reads its value; false at the end. Called without the GIL.
  virtual bool advance() = 0;
  // Moves to the next entry without reading a value it can skip (a script's); for keys().
  virtual bool advance_key() = 0;
  virtual const std::string& key() const = 0;
  // The current value as a Python object (with the GIL); the C++ value is given up.
  virtual py::object take_value() = 0;
  // Up to n entries: (keys, values) with values stacked where their shapes agree.
  virtual py::tuple batch(std::size_t n) = 0;
  virtual std::string error() const = 0;
  // Under 'p', the entries left out because they could not be read.
  virtual std::uint64_t left_out() const = 0;
  virtual void close() = 0;
};

class random_access_base {
 public:
  virtual ~random_access_base() = default;
  // The values for keys, in one call: the lookups without the GIL, then the conversions.
  // The index of the first key that is absent, when one is.
  virtual std::variant<py::list, std::size_t> get_all(const std::vector<std::string>& keys) = 0;
  virtual bool contains(const std::string& key) = 0;
  virtual std::optional<std::uint64_t> size() = 0;
  // Every key in table order, for a table that is read ahead (a repeated key is an error);
  // nothing for one with keyed lookup (scripts, LMDB, IDX). Called without the GIL.
  virtual std::optional<std::vector<std::string>> indexed_keys() = 0;
  virtual void close() = 0;
};

class writer_base {
 public:
  virtual ~writer_base() = default;
  virtual void write(const std::string& key, py::handle value) = 0;
  virtual void flush() = 0;
  virtual void close() = 0;
  // Gives the table up, as after an error: an object being uploaded never appears.
  virtual void abandon() = 0;
};

// What a value type offers: a table of each kind over a specifier.
struct value_type_entry {
  std::function<std::unique_ptr<sequential_base>(const std::string&, const value_options&)> sequential;
  std::function<std::unique_ptr<random_access_base>(const std::string&, const value_options&)> random_access;
  std::function<std::unique_ptr<writer_base>(const std::string&, const value_options&)> writer;
  // Splits a table into shards (tablio::shard_table with this type's holder).
  std::function<tablio::shard_plan(const std::string&, const std::string&, std::uint64_t,
                                   tablio::shard_balance, const tablio::open_options&)>
      shard;
  // Writes the shard index of a table's files (tablio::index_shards with this type's holder).
  std::function<tablio::shard_index(const std::string&, const tablio::open_options&)> index_shards;
  // The extension of the tar members it reads unless told (ext=): "*" for samples.
  std::string_view tar_extension;
  // One object with no key, as Kaldi's ReadKaldiObject / WriteKaldiObject (tablio::read_object).
  std::function<py::object(const std::string&, const value_options&)> load_object;
  std::function<void(const std::string&, py::handle, bool, const value_options&)> save_object;
  // Whether TFRecord tables hold its values as Examples of their form, keys in a "key" feature
  // (tablio::stored_as_example): what reading_rspec and writing_wspec do for it.
  bool stored_as_example = false;
  // For types whose values decode images: its tables read as their records, undecoded, and
  // those records decoded as its tables read them (records.hpp), for a smaller shuffle buffer.
  std::function<std::unique_ptr<sequential_base>(const std::string&, const value_options&)> records;
  std::function<py::tuple(const std::vector<std::string>&, const py::list&, const std::vector<std::string>&,
                          const std::vector<std::uint64_t>&, const std::vector<std::uint64_t>&,
                          const value_options&, unsigned)>
      decode_records;
};

void register_value_type(std::string name, value_type_entry entry);
const value_type_entry& find_value_type(std::string_view name);
std::vector<std::string> value_type_names();

// The value types, each compiled in its own file (Kaldi's together), registered by the module
// as it starts.
void register_kaldi_types();
void register_example_type();
void register_sequence_example_type();
void register_datum_type();
void register_bytes_type();
void register_sample_type();

}  // namespace tablio_python
