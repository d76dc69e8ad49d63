// A WebDataset sample as a Python value: a dict of extension to bytes.
#include "binding.hpp"
#include "images.hpp"
#include "records.hpp"
#include "tables.hpp"

#include <tablio/core/keeper.hpp>
#include <tablio/holder/bytes.hpp>
#include <tablio/holder/sample.hpp>
#include <tablio/types/image.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tablio_python {
namespace {

// A sample's record (types/sample.hpp), checked whole.
void check_sample_record(std::string_view record, const std::string& name) {
  tablio::for_each_sample_member(record, name, 0, [](std::string_view, std::string_view) {});
}

// A sample's record, kept as its bytes: what is written, and what random access reads (taken
// over from a tar table, which builds it from the sample's members, rather than copied).
class sample_record_holder : public tablio::bytes_holder {
 public:
  static constexpr std::string_view extension = tablio::webdataset_sample::tar_extension;
  void read(tablio::reader& r) {
    bytes_holder::read(r);
    check_sample_record(value_, r.name());
  }
  void decode_record(std::string_view bytes, const std::string& name) {
    check_sample_record(bytes, name);
    bytes_holder::decode_record(bytes, name);
  }
  void take_record(std::string& record, const std::string& name) {
    check_sample_record(record, name);
    bytes_holder::take_record(record, name);
  }
};

// A sample read in order: its members' data as views into the reader's windows, which `keeper`
// keeps until the sample is converted, where the tar table gives them so; else its record.
struct sample_read {
  std::string record;
  std::vector<std::pair<std::string, std::string_view>> members;  // extension, data
  tablio::keeper keeper;
  decoded_images images;  // images=: the image members decoded

  void let_go() {  // of the windows: the views go with them
    members.clear();
    keeper.reset();
  }
};

// Decodes a sample's image members, for images=.
void decode_images(sample_read& v, const tablio::image_options& options, std::string_view source,
                   std::string_view key) {
  v.images.decode_all([&] {
    // An image's error names its member too: a sample may hold several.
    auto decode = [&](std::size_t ordinal, std::string_view extension, std::string_view data) {
      if (!tablio::is_image_extension(extension)) return;
      try {
        v.images.add(data, ordinal, options, source, key);
      } catch (const tablio::format_error& e) {
        throw tablio::format_error(
            e.where(), e.expected() + " in member " + tablio::quoted_excerpt(extension), e.found());
      }
    };
    if (!v.members.empty()) {
      for (std::size_t i = 0; i < v.members.size(); ++i) decode(i, v.members[i].first, v.members[i].second);
      return;
    }
    std::size_t at = 0;
    for (std::size_t i = 0; at < v.record.size(); ++i) {
      auto [extension, data] = tablio::detail::sample_member_at(v.record, at);
      decode(i, extension, data);
    }
  });
}

class sample_parts_holder : public tablio::holder_storage<sample_read> {
 public:
  static constexpr std::string_view extension = tablio::webdataset_sample::tar_extension;
  // images=: decode image members as they are read (in the table's threads, with threads=).
  std::optional<tablio::image_options> images;
  void at_key(std::string_view key) {
    if (images) key_.assign(key);
  }
  void at_offset(std::uint64_t offset) noexcept { value_.images.at_offset(offset); }
  static void write(tablio::writer& w, bool binary, const sample_read& v) {
    tablio::bytes_holder::write(w, binary, v.record);
  }
  void read(tablio::reader& r) {
    records_.read(r);
    take_record(records_.value(), r.name());
  }
  static void encode_record(std::string& out, const sample_read& v) { out = v.record; }
  void decode_record(std::string_view bytes, const std::string& name) {
    check_sample_record(bytes, name);
    value_.let_go();
    value_.record.assign(bytes);
    decoded(name);
  }
  void take_record(std::string& record, const std::string& name) {
    check_sample_record(record, name);
    value_.let_go();
    value_.record.swap(record);
    decoded(name);
  }
  template <class Parts>
  void take_parts(const Parts& parts, tablio::keeper keeper, const std::string& name) {
    value_.record.clear();
    value_.members.resize(parts.size());
    for (std::size_t i = 0; i < parts.size(); ++i) {
      tablio::check_sample_extension(parts[i].name, name);
      value_.members[i].first.assign(parts[i].name);
      value_.members[i].second = parts[i].bytes;
    }
    value_.keeper = std::move(keeper);
    decoded(name);
  }

 private:
  void decoded(const std::string& name) {
    if (images)
      decode_images(value_, *images, name, key_);
    else
      value_.images.clear();
  }

  tablio::bytes_holder records_;
  std::string key_;  // the entry's, for images' draws
};

// A sample as {extension: bytes}, in member order, converted straight from its members' views
// or its record: a member is copied once, into its bytes object. Written from a mapping whose
// values are bytes-like, or anything tablio.sample.encode_member makes bytes of (an int for
// "cls", a str, an object for "json", an ndarray for "npy"), as WebDataset's writer encodes them.
struct sample {
  using holder = sample_parts_holder;
  using owned_holder = sample_record_holder;
  static constexpr bool images_when_converted = true;  // random access: at conversion
  using value_type = std::string;

  // The extensions' str objects, made once each: samples repeat a few extensions.
  class extension_names {
   public:
    py::handle operator()(std::string_view extension) {
      for (auto& [name, object] : seen_)
        if (name == extension) return object;
      if (seen_.size() == 16) seen_.clear();
      seen_.emplace_back(std::string(extension),
                         key_to_python(extension));  // bytes not UTF-8, as keys have them
      return seen_.back().second;
    }

   private:
    std::vector<std::pair<std::string, py::str>> seen_;
  };

  static void set_member(py::dict& out, py::handle name, std::string_view data) {
    py::bytes member(data.data(), data.size());
    if (PyDict_SetItem(out.ptr(), name.ptr(), member.ptr()) != 0) throw py::error_already_set();
  }
  static py::object to_dict(std::string_view record, extension_names& names) {
    py::dict out;
    std::size_t at = 0;
    while (at < record.size()) {  // checked when it was read
      auto [extension, data] = tablio::detail::sample_member_at(record, at);
      set_member(out, names(extension), data);
    }
    return std::move(out);
  }
  // A sample's dict, with array_of(j) for its image j.
  template <class ArrayOf>
  static py::object to_dict(const sample_read& v, extension_names& names, ArrayOf array_of) {
    v.images.throw_error();
    if (v.members.empty() && v.images.size() == 0) return to_dict(v.record, names);
    py::dict out;
    std::size_t next = 0;  // image
    auto add = [&](std::size_t i, std::string_view extension, std::string_view data) {
      if (next < v.images.size() && v.images.from(next) == i) {
        if (PyDict_SetItem(out.ptr(), names(extension).ptr(), array_of(next++).ptr()) != 0)
          throw py::error_already_set();
      } else {
        set_member(out, names(extension), data);
      }
    };
    if (v.members.empty()) {
      std::size_t at = 0;
      for (std::size_t i = 0; at < v.record.size(); ++i) {
        auto [extension, data] = tablio::detail::sample_member_at(v.record, at);
        add(i, extension, data);
      }
    } else {
      for (std::size_t i = 0; i < v.members.size(); ++i) add(i, v.members[i].first, v.members[i].second);
    }
    return std::move(out);
  }
  static py::object to_dict(const sample_read& v, extension_names& names) {
    return to_dict(v, names, [&](std::size_t j) { return image_array(v.images[j]); });
  }
  static py::object to_python(std::string_view record, const value_options& o) {
    extension_names names;
    if (!o.images) return to_dict(record, names);
    thread_local sample_read looked_up;  // random access: images decoded here
    looked_up.let_go();
    looked_up.record.assign(record);
    looked_up.images.at_offset(looked_up_offset());
    {
      unlocked_gil unlocked;
      decode_images(looked_up, *o.images, "", looked_up_key());
    }
    return to_dict(looked_up, names);
  }
  // The holder decodes images= in the table's threads.
  static void configure(holder& h, const value_options& o) { h.images = o.images; }
  static bool failed(const sample_read& v) { return v.images.error() != nullptr; }
  static py::object to_python(sample_read&& v, const value_options&) {
    extension_names names;
    py::object out = to_dict(v, names);
    v.let_go();
    return out;
  }

  // A batch's samples, kept by swapping each with one of a pool each thread keeps (whose
  // record storage the table then reuses): no copy and, batch after batch, no allocation per
  // sample. The windows they view are let go of once they are converted: at the end, or, in a
  // batch so large that it keeps more than max_windows of them, as that many fill (the GIL is
  // taken for it). A batch read while another is converted (by Python code run meanwhile, such
  // as a garbage collector's callback) keeps its samples apart.
  class stacker {
   public:
    static constexpr std::size_t max_windows = 256;  // 64 MB of the reader's 256 KB windows

    stacker(const value_options&, std::size_t) {
      pool& shared = thread_pool();
      if (!shared.in_use) {
        shared.in_use = true;
        samples_ = &shared.samples;
      }
    }
    ~stacker() {
      for (std::size_t i = 0; i < size_; ++i) (*samples_)[i].let_go();
      if (samples_ != &own_) thread_pool().in_use = false;
    }
    stacker(const stacker&) = delete;
    stacker& operator=(const stacker&) = delete;

    void add(sample_read& v) {  // without the GIL
      if (v.keeper && v.keeper.get() != last_window_ && ++windows_ > max_windows) {
        py::gil_scoped_acquire locked;
        convert();
      }
      if (v.keeper) last_window_ = v.keeper.get();
      if (size_ == samples_->size()) samples_->emplace_back();
      std::swap((*samples_)[size_++], v);
    }
    py::object finish() {
      convert();
      std::size_t kept = 0;  // bounded: a batch of large samples is not kept
      for (sample_read& v : *samples_)
        if ((kept += v.record.capacity()) > (std::size_t{64} << 20)) std::string().swap(v.record);
      return std::move(out_);
    }

   private:
    // Converts the samples read since the last time, and lets their windows go.
    void convert() {
      const std::vector<py::array> rows = images_in_rows();
      for (std::size_t i = 0; i < size_; ++i) {
        const sample_read& v = (*samples_)[i];
        if (rows.empty())
          out_.append(to_dict(v, names_));
        else
          out_.append(to_dict(v, names_, [&](std::size_t j) { return row_of(rows[j], i); }));
        (*samples_)[i].let_go();
      }
      size_ = 0;
      windows_ = 0;
    }

    // Where the samples each have k images and the j-th are all of one shape and type: the
    // j-th in one array (n, dims...), whose rows are the samples' arrays, so that a dataset
    // stacks the batch without copying them (tablio.torch). Else none.
    std::vector<py::array> images_in_rows() const {
      const std::vector<sample_read>& s = *samples_;
      if (size_ < 2) return {};
      const std::size_t k = s[0].images.size();
      for (std::size_t i = 0; i < size_; ++i) {
        if (s[i].images.error() || s[i].images.size() != k) return {};
        for (std::size_t j = 0; j < k; ++j)
          if (!same_array(s[i].images[j], s[0].images[j])) return {};
      }
      std::vector<py::array> rows;
      for (std::size_t j = 0; j < k; ++j)
        rows.push_back(tablio_python::images_in_rows(
            size_, [&](std::size_t i) -> const tablio::image& { return s[i].images[j]; }));
      return rows;
    }

    struct pool {
      std::vector<sample_read> samples;
      bool in_use = false;
    };
    static pool& thread_pool() {
      thread_local pool shared;
      return shared;
    }
    std::vector<sample_read> own_;
    std::vector<sample_read>* samples_ = &own_;
    std::size_t size_ = 0;
    std::size_t windows_ = 0;  // windows the samples since the last conversion view
    const void* last_window_ = nullptr;
    py::list out_;
    extension_names names_;
  };

  static value_type from_python(py::handle h, const value_options&) {
    if (!py::isinstance<py::dict>(h) && !py::hasattr(h, "items"))
      throw py::type_error(
          "sample: expected a mapping of extension to value, such as {\"jpg\": data, \"cls\": 3}");
    tablio::webdataset_sample members;
    py::object encode;
    for (auto item : h.attr("items")()) {
      auto pair = py::reinterpret_borrow<py::tuple>(item);
      std::string extension = key_from_python(pair[0]);  // as keys: surrogates stand for bytes not UTF-8
      py::object value = pair[1];
      if (!PyBytes_Check(value.ptr())) {
        if (!encode) encode = py::module_::import("tablio.sample").attr("encode_member");
        value = encode(extension, value);
      }
      members.set(extension, std::string(py::reinterpret_borrow<py::bytes>(value)));
    }
    std::string record;
    tablio::encode_sample(members, record);  // refuses an empty extension, or one with '/'
    return record;
  }
};

}  // namespace

void register_sample_type() { register_value_type("sample", with_records<sample>(entry_for<sample>())); }

}  // namespace tablio_python
