// Any entry's raw bytes as a Python value: bytes.
#include "binding.hpp"
#include "tables.hpp"

#include <tablio/holder/bytes.hpp>

#include <string>

namespace tablio_python {
namespace {

struct bytes {
  using holder = tablio::bytes_holder;
  using value_type = std::string;
  static py::object to_python(value_type&& v, const value_options&) { return py::bytes(v); }
  static value_type from_python(py::handle h, const value_options&) {
    if (!py::isinstance<py::bytes>(h)) throw py::type_error("bytes: expected bytes");
    return std::string(py::reinterpret_borrow<py::bytes>(h));
  }
};

}  // namespace

void register_bytes_type() { register_value_type("bytes", entry_for<bytes>()); }

}  // namespace tablio_python
