// view=True: a record's arrays and byte strings as views into one buffer made for it, and the
// room that buffer needs.
#pragma once

#include "arrays.hpp"
#include "binding.hpp"

#include <tablio/types/example.hpp>
#include <tablio/types/example_view.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tablio_python {

// Where a record's arrays and bytes go: objects of their own, or under view=True read-only
// views into one buffer made for the record (one allocation, however many features; the
// views keep it alive, so they stay valid after the next record).
class record_values {
 public:
  record_values() = default;
  // Room for `arrays` arrays of `array_bytes` bytes in all, and `bytes` of byte strings.
  record_values(std::size_t arrays, std::size_t array_bytes, std::size_t bytes) {
    std::size_t size = array_bytes + 7 * arrays + bytes;  // each array starts 8-byte aligned
    buffer_ =
        py::reinterpret_steal<py::object>(PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(size)));
    if (!buffer_) throw py::error_already_set();
    data_ = PyBytes_AS_STRING(buffer_.ptr());
  }
  bool shared() const noexcept { return data_ != nullptr; }

  // An array of n T that fill(T*) writes.
  template <class T, class Fill>
  py::object array(std::size_t n, Fill fill) {
    if (!shared()) {
      py::array_t<T> out = new_array<T>({static_cast<py::ssize_t>(n)});
      fill(out.mutable_data());
      return std::move(out);
    }
    at_ = (at_ + 7) & ~std::size_t(7);
    T* p = reinterpret_cast<T*>(data_ + at_);
    fill(p);
    at_ += n * sizeof(T);
    auto& api = py::detail::npy_api::get();
    PyObject* descr = api.PyArray_DescrFromType_(py::detail::npy_format_descriptor<T>::value);
    if (!descr) throw py::error_already_set();
    Py_intptr_t shape[1] = {static_cast<Py_intptr_t>(n)};
    PyObject* a = api.PyArray_NewFromDescr_(api.PyArray_Type_, descr, 1, shape, nullptr, p,
                                            py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_ |
                                                py::detail::npy_api::NPY_ARRAY_ALIGNED_,  // not writeable
                                            nullptr);
    if (!a) throw py::error_already_set();
    py::object out = py::reinterpret_steal<py::object>(a);
    if (api.PyArray_SetBaseObject_(a, buffer_.inc_ref().ptr()) != 0) throw py::error_already_set();
    return out;
  }
  // A byte string: bytes, or a read-only memoryview.
  py::object bytes(std::string_view b) {
    if (!shared()) return py::bytes(b.data(), b.size());
    if (!view_) {
      view_ = py::reinterpret_steal<py::object>(PyMemoryView_FromObject(buffer_.ptr()));
      if (!view_) throw py::error_already_set();
    }
    if (!b.empty()) std::memcpy(data_ + at_, b.data(), b.size());
    PyObject* slice = PySequence_GetSlice(view_.ptr(), static_cast<Py_ssize_t>(at_),
                                          static_cast<Py_ssize_t>(at_ + b.size()));
    if (!slice) throw py::error_already_set();
    at_ += b.size();
    return py::reinterpret_steal<py::object>(slice);
  }

 private:
  py::object buffer_, view_;
  char* data_ = nullptr;
  std::size_t at_ = 0;
};

// What view=True makes room for: arrays and their bytes, byte strings.
struct record_room {
  std::size_t arrays = 0, array_bytes = 0, bytes = 0;
  void add(const tablio::feature_view& f, const value_options& o) {
    if (o.decodes_images(f.key)) return;
    if (f.kind == tablio::feature_kind::bytes && !o.raw(f.key)) {
      for (std::string_view b : f.bytes()) bytes += b.size();
    } else if (f.kind == tablio::feature_kind::floats || f.kind == tablio::feature_kind::int64s) {
      ++arrays;
      array_bytes += f.count * (f.kind == tablio::feature_kind::floats ? 4 : 8);
    }
  }
  void add(const tablio::feature& f, std::string_view name, const value_options& o) {
    if (o.decodes_images(name)) return;
    if (auto* b = std::get_if<std::vector<std::string>>(&f); b && !o.raw(name)) {
      for (const std::string& v : *b) bytes += v.size();
    } else if (auto* floats = std::get_if<std::vector<float>>(&f)) {
      ++arrays;
      array_bytes += 4 * floats->size();
    } else if (auto* ints = std::get_if<std::vector<std::int64_t>>(&f)) {
      ++arrays;
      array_bytes += 8 * ints->size();
    }
  }
  record_values values() const { return record_values(arrays, array_bytes, bytes); }
};

}  // namespace tablio_python
