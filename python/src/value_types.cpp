// The registry of value types (type="matrix", ...): each type's file registers its own as the
// module starts (register_kaldi_types(), ...), and the tables find them here by name.
#include "binding.hpp"

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tablio_python {

namespace {
std::map<std::string, value_type_entry, std::less<>>& value_types() {
  static std::map<std::string, value_type_entry, std::less<>> types;
  return types;
}
}  // namespace

void register_value_type(std::string name, value_type_entry entry) {
  value_types()[std::move(name)] = std::move(entry);
}

const value_type_entry& find_value_type(std::string_view name) {
  auto it = value_types().find(name);
  if (it == value_types().end()) {
    std::string known;
    for (const auto& [n, e] : value_types()) known += (known.empty() ? "" : ", ") + n;
    throw tablio::usage_error("unknown type '" + std::string(name) + "': one of " + known);
  }
  return it->second;
}

std::vector<std::string> value_type_names() {
  std::vector<std::string> names;
  for (const auto& [n, e] : value_types()) names.push_back(n);
  return names;
}

}  // namespace tablio_python
