// Records kept undecoded, and decoded later: what a dataset's shuffle buffer holds when a value's
// record is smaller than its decoded value (an encoded image against its transform's output).
// The records come from a table of C's values as C's table reads them (a tar sample's members
// as the sample's record), and decode_records turns those a batch picks into C's values, in
// threads, with the images= of each record's table, stacked as C's batches are.
#pragma once

#include "binding.hpp"
#include "tables.hpp"

#include <tablio/core/ordered_pipeline.hpp>
#include <tablio/holder/bytes.hpp>
#include <tablio/types/sample.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tablio_python {

// An entry's record, and where the entry starts in its file (what a value decoded from it later
// names in its errors, as the table would).
struct kept_record {
  std::string bytes;
  std::uint64_t offset = 0;
};

// Reads the tables H reads, keeping each entry's record: the bytes H decodes it from.
template <class H>
class record_keeping_holder : public tablio::holder_storage<kept_record> {
 public:
  static constexpr std::string_view extension = H::extension;
  static void write(tablio::writer& w, bool binary, const kept_record& v) {
    tablio::bytes_holder::write(w, binary, v.bytes);
  }
  void at_offset(std::uint64_t offset) noexcept { value_.offset = offset; }
  void read(tablio::reader& r) {
    bytes_.read(r);
    value_.bytes.swap(bytes_.value());
  }
  static void encode_record(std::string& out, const kept_record& v) { out = v.bytes; }
  void decode_record(std::string_view bytes, const std::string&) { value_.bytes.assign(bytes); }
  // A tar sample's members, as the sample's record.
  template <class Parts>
  requires tablio::part_taking_holder<H>
  void take_parts(const Parts& parts, tablio::keeper, const std::string& name) {
    value_.bytes.clear();
    for (const auto& part : parts) {
      tablio::check_sample_extension(part.name, name);
      tablio::append_sample_member(value_.bytes, part.name, part.bytes);
    }
  }

 private:
  tablio::bytes_holder bytes_;
};

// C's tables read as their records, each (bytes, the entry's offset in its file).
template <class C>
struct records_of {
  using holder = record_keeping_holder<typename C::holder>;
  using owned_holder = holder;
  using value_type = kept_record;
  static py::object to_python(value_type&& v, const value_options&) {
    return py::make_tuple(py::bytes(v.bytes), v.offset);
  }
};

// A record to decode, into a holder of its own (its images=), in a thread of the decoding.
template <class H>
struct record_job {
  H holder;
  std::string_view record;
  const std::string* key = nullptr;
  const std::string* source = nullptr;
  std::uint64_t offset = 0;  // of its entry in source
  // Reads the record as a table reads it, errors naming the table, key and offset.
  void run() {
    tablio::detail::in_entry_at(*source, offset, *key, [&] {
      if constexpr (tablio::detail::key_aware_holder<H>) holder.at_key(*key);
      if constexpr (tablio::detail::offset_aware_holder<H>) holder.at_offset(offset);
      holder.decode_record(record, *source);
    });
  }
  // What a thread of the pipeline runs.
  static void run_one(void*, record_job*& job) { job->run(); }
};

// Decodes `records` (bytes objects, with their keys, the tables they come from, whose images=
// seeds are `seeds`, and their entries' offsets there) as C's sequential tables read them, in
// `threads` threads, into (keys, values) stacked as C's batches are. A record that fails is a
// FormatError naming its table, key and offset.
template <class C>
py::tuple decode_records(const std::vector<std::string>& keys, const py::list& records,
                         const std::vector<std::string>& sources, const std::vector<std::uint64_t>& seeds,
                         const std::vector<std::uint64_t>& offsets, const value_options& options,
                         unsigned threads) {
  using H = typename C::holder;
  const std::size_t n = keys.size();
  if (records.size() != n || sources.size() != n || seeds.size() != n || offsets.size() != n)
    throw tablio::usage_error("decode_records: keys, records, sources, seeds and offsets of one length");
  // One holder per record, configured with its table's images= (its seed).
  std::map<std::uint64_t, value_options> by_seed;
  std::vector<record_job<H>> jobs(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto placed = by_seed.try_emplace(seeds[i], options);
    value_options& table_options = placed.first->second;
    if (placed.second && table_options.images && table_options.images->transform) {
      auto t = std::make_shared<tablio::image_transform>(*table_options.images->transform);
      t->seed = seeds[i];
      table_options.images->transform = std::move(t);
    }
    if constexpr (requires(H & h, const value_options& o) { C::configure(h, o); })
      C::configure(jobs[i].holder, table_options);
    char* data = nullptr;
    Py_ssize_t size = 0;
    if (PyBytes_AsStringAndSize(py::handle(records[i]).ptr(), &data, &size) != 0)
      throw py::error_already_set();
    jobs[i].record = std::string_view(data, static_cast<std::size_t>(size));
    jobs[i].key = &keys[i];
    jobs[i].source = &sources[i];
    jobs[i].offset = offsets[i];
  }
  std::vector<std::string> decoded_keys;
  py::object values = stacked_batch<C>(options, decoded_keys, n, [&](auto&& add) {
    if (threads < 2 || n < 2) {
      for (record_job<H>& j : jobs) {
        j.run();
        add(*j.key, j.holder.value());
      }
      return;
    }
    tablio::detail::ordered_pipeline<record_job<H>*> pipeline(threads, n, &record_job<H>::run_one, nullptr);
    for (record_job<H>& j : jobs) {
      pipeline.next_slot() = &j;
      pipeline.hand_in();
    }
    for (std::size_t i = 0; i < n; ++i) {
      record_job<H>* j = pipeline.take();
      pipeline.release();
      add(*j->key, j->holder.value());
    }
  });
  return py::make_tuple(keys_to_python(decoded_keys), std::move(values));
}

// C's entry, with its records' table and decoding.
template <class C>
value_type_entry with_records(value_type_entry entry) {
  entry.records = [](const std::string& rspec, const value_options& o) -> std::unique_ptr<sequential_base> {
    return std::make_unique<sequential_table<records_of<C>>>(rspec, o);
  };
  entry.decode_records = decode_records<C>;
  return entry;
}

}  // namespace tablio_python
