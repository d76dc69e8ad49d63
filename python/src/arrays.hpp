// numpy arrays over C++ memory and back.
#pragma once

#include "binding.hpp"

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>

namespace tablio_python {

// An array that takes over a vector's memory: no copy, freed when the array is.
template <class T>
py::array_t<T> adopt(std::vector<T>&& values, std::vector<py::ssize_t> shape) {
  auto* owned = new std::vector<T>(std::move(values));
  py::capsule free_it(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(std::move(shape), owned->data(), free_it);
}

// The memory of a table's arrays, taken back when numpy frees them (and of a batch's values
// once stacked), for the table's next values to be read into: memory already touched. A value
// read into fresh memory has every page of it faulted in, which costs about what decoding it
// does, and in a table's threads, whose memory the allocator keeps apart, more. Arrays are freed
// with the GIL held, batches are read without it: a mutex guards the spares.
template <class T>
class storage_pool {
 public:
  // An array over the memory of `values`, which comes back to `pool` when the array is freed.
  static py::array_t<T> adopt(const std::shared_ptr<storage_pool>& pool, std::vector<T>&& values,
                              std::vector<py::ssize_t> shape) {
    if (!pool || values.capacity() < least) return tablio_python::adopt(std::move(values), std::move(shape));
    auto* owned = new lent{std::move(values), pool};
    py::capsule free_it(owned, [](void* p) {
      auto* l = static_cast<lent*>(p);
      l->pool->give(std::move(l->values));
      delete l;
    });
    return py::array_t<T>(std::move(shape), owned->values.data(), free_it);
  }
  // Keeps the memory of values no longer used, if it is worth keeping and there is room.
  void give(std::vector<T>&& values) {
    std::lock_guard<std::mutex> held(mutex_);
    if (spares_.size() < most && values.capacity() >= least) spares_.push_back(std::move(values));
  }
  // Gives a vector whose memory went to an array a spare's, if there is one: its old values are
  // there still, for the next read to overwrite (a resize to its size writes nothing).
  void refill(std::vector<T>& v) {
    if (v.capacity() != 0) return;
    std::lock_guard<std::mutex> held(mutex_);
    if (spares_.empty()) return;
    v.swap(spares_.back());
    spares_.pop_back();
  }

 private:
  struct lent {
    std::vector<T> values;
    std::shared_ptr<storage_pool> pool;
  };
  static constexpr std::size_t most = 8;                                     // spares kept
  static constexpr std::size_t least = (std::size_t{64} << 10) / sizeof(T);  // elements worth it
  std::mutex mutex_;
  std::vector<std::vector<T>> spares_;
};

// A table's pools, one an element type of the arrays it hands out whole.
struct storage_pools {
  std::shared_ptr<storage_pool<float>> floats = std::make_shared<storage_pool<float>>();
  std::shared_ptr<storage_pool<double>> doubles = std::make_shared<storage_pool<double>>();
  std::shared_ptr<storage_pool<std::int32_t>> int32s = std::make_shared<storage_pool<std::int32_t>>();
  std::shared_ptr<storage_pool<std::uint8_t>> bytes = std::make_shared<storage_pool<std::uint8_t>>();
  template <class T>
  const std::shared_ptr<storage_pool<T>>& of() const {
    if constexpr (std::is_same_v<T, float>)
      return floats;
    else if constexpr (std::is_same_v<T, double>)
      return doubles;
    else if constexpr (std::is_same_v<T, std::uint8_t>)
      return bytes;
    else
      return int32s;
  }
};

// adopt() with the table's pool, where value_options have one (a sequential table's).
template <class T>
py::array_t<T> adopt(std::vector<T>&& values, std::vector<py::ssize_t> shape, const value_options& o) {
  if (!o.recycled) return adopt(std::move(values), std::move(shape));
  return storage_pool<T>::adopt(o.recycled->template of<T>(), std::move(values), std::move(shape));
}
// Gives a value whose memory went to an array a spare's from the table's pool, if it has one.
template <class T>
void reuse(std::vector<T>& values, const value_options& o) {
  if (o.recycled) o.recycled->template of<T>()->refill(values);
}
// Gives the table's pool the memory of a value no longer used.
template <class T>
void recycle(std::vector<T>&& values, const value_options& o) {
  if (o.recycled) o.recycled->template of<T>()->give(std::move(values));
}

// A new C-contiguous array of the shape, uninitialized, for C++ to fill. Made by numpy's
// own constructor: one is made per feature of every record, where pybind11's general path
// (shape and stride vectors, a dtype lookup) showed.
template <class T>
py::array_t<T> new_array(const py::ssize_t* shape, int ndim) {
  auto& api = py::detail::npy_api::get();
  PyObject* descr = api.PyArray_DescrFromType_(py::detail::npy_format_descriptor<T>::value);
  if (!descr) throw py::error_already_set();
  PyObject* a = api.PyArray_NewFromDescr_(api.PyArray_Type_, descr, ndim,
                                          reinterpret_cast<Py_intptr_t*>(const_cast<py::ssize_t*>(shape)),
                                          nullptr, nullptr, 0, nullptr);
  if (!a) throw py::error_already_set();
  return py::reinterpret_steal<py::array_t<T>>(a);
}
template <class T>
py::array_t<T> new_array(std::initializer_list<py::ssize_t> shape) {
  return new_array<T>(shape.begin(), static_cast<int>(shape.size()));
}
template <class T>
py::array_t<T> new_array(const std::vector<py::ssize_t>& shape) {
  return new_array<T>(shape.data(), static_cast<int>(shape.size()));
}

// A C-contiguous array of T with ndim dimensions from any array-like (converting when
// needed); a ValueError naming `what` otherwise.
template <class T>
py::array_t<T, py::array::c_style | py::array::forcecast> as_array(py::handle h, py::ssize_t ndim,
                                                                   const char* what) {
  auto a = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(h);
  if (!a) throw py::type_error(std::string(what) + ": expected an array-like of numbers");
  if (a.ndim() != ndim) {
    // The value type a Kaldi user meant, when the array has its number of dimensions.
    std::string_view kind = what;
    const char* hint = kind.ends_with("matrix") && a.ndim() == 1 ? " (type=\"vector\" takes one)"
                       : kind == "vector" && a.ndim() == 2       ? " (type=\"matrix\" takes two)"
                                                                 : "";
    throw py::value_error(std::string(what) + ": expected " + std::to_string(ndim) + " dimensions, got " +
                          std::to_string(a.ndim()) + hint);
  }
  return a;
}

template <class T>
std::vector<T> to_vector(const py::array_t<T, py::array::c_style | py::array::forcecast>& a) {
  const T* p = a.data();
  return std::vector<T>(p, p + a.size());
}

// Elements of T to reserve for `expected` values of `each` elements, as a batch starts:
// room for them all, but no more than 16 MB, so that one large first value cannot make a
// batch allocate far more than the table holds.
template <class T>
std::size_t reservation(std::size_t each, std::size_t expected) {
  constexpr std::size_t most = (std::size_t{16} << 20) / sizeof(T);
  return each != 0 && expected > most / each ? most : each * expected;
}

// A 32-bit dimension from an array's extent.
inline std::int32_t dimension(py::ssize_t n, const char* what) {
  if (n < 0 || n > INT32_MAX)
    throw py::value_error(std::string("too many ") + what + " for Kaldi's 32-bit sizes");
  return static_cast<std::int32_t>(n);
}

// Values of equal shape stacked into one array of shape (N, shape...), each copied once by
// copy(value, destination) without the GIL; None when the shapes differ.
template <class T, class Values, class ShapeOf, class Copy>
py::object stack_equal_shapes(Values& values, ShapeOf shape_of, Copy copy) {
  if (values.empty()) return py::none();
  std::vector<py::ssize_t> shape = shape_of(values.front());
  for (auto& v : values)
    if (shape_of(v) != shape) return py::none();
  py::ssize_t each = 1;
  for (py::ssize_t d : shape) each *= d;
  shape.insert(shape.begin(), static_cast<py::ssize_t>(values.size()));
  py::array_t<T> out = new_array<T>(shape);
  T* p = out.mutable_data();
  {
    unlocked_gil unlocked;
    for (std::size_t i = 0; i < values.size(); ++i) copy(values[i], p + i * each);
  }
  return std::move(out);
}

}  // namespace tablio_python
