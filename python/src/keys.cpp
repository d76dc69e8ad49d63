// Keys and names between C++ and Python (binding.hpp): str with the bytes that are not UTF-8
// kept as surrogates, and back.
#include "binding.hpp"

#include <Python.h>

#include <array>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace tablio_python {

py::str key_to_python(std::string_view key) {
  PyObject* s = PyUnicode_DecodeUTF8(key.data(), static_cast<Py_ssize_t>(key.size()), "surrogateescape");
  if (!s) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

py::str name_to_python(std::string_view name) {
  // Names live as long as the module (Python's interned strings do too), bounded in number
  // so that tables whose names never repeat do not grow it. Used with the GIL held. Records
  // repeat a few names: a slot picked from a name's length and ends finds them with one
  // comparison, before the map's several.
  struct recent_name {
    std::string name;
    py::str str;
  };
  static auto& recent = *new std::array<recent_name, 64>;
  static auto& names = *new std::map<std::string, py::str, std::less<>>;
  std::size_t slot = name.empty() ? 0
                                  : (name.size() * 7 + static_cast<unsigned char>(name.front()) * 3 +
                                     static_cast<unsigned char>(name.back())) %
                                        recent.size();
  if (recent[slot].str && recent[slot].name == name) return recent[slot].str;
  py::str s;
  if (auto it = names.find(name); it != names.end()) {
    s = it->second;
  } else {
    s = key_to_python(name);
    if (names.size() < 4096) names.emplace(std::string(name), s);
  }
  recent[slot] = {std::string(name), s};
  return s;
}

std::string key_from_python(py::handle key) {
  if (py::isinstance<py::bytes>(key)) return std::string(py::reinterpret_borrow<py::bytes>(key));
  if (!py::isinstance<py::str>(key)) throw py::type_error("keys are str (or bytes)");
  PyObject* b = PyUnicode_AsEncodedString(key.ptr(), "utf-8", "surrogateescape");
  if (!b) throw py::error_already_set();
  return std::string(py::reinterpret_steal<py::bytes>(b));
}

}  // namespace tablio_python
