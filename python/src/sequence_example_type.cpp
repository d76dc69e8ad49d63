// TensorFlow's SequenceExample as a Python value: (context, feature_lists).
#include "binding.hpp"
#include "features.hpp"
#include "record_values.hpp"
#include "tables.hpp"

#include <tablio/holder/example.hpp>
#include <tablio/types/example.hpp>

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

namespace tablio_python {
namespace {

// (context, feature_lists): feature_lists maps a name to a list of feature values.
struct sequence_example {
  using holder = tablio::sequence_example_holder;
  using value_type = tablio::sequence_example;
  // Taken over when an rvalue, copied when a table keeps it.
  template <class Sequence>
  requires std::is_same_v<std::remove_cvref_t<Sequence>, value_type>
  static py::object to_python(Sequence&& s, const value_options& o) {
    constexpr bool kept = std::is_const_v<std::remove_reference_t<Sequence>>;
    record_values values;
    if (o.view) {  // one buffer for the context and every list's values
      record_room room;
      for (const auto& [name, f] : s.context.features) room.add(f, name, o);
      for (const auto& [name, list] : s.feature_lists)
        for (const tablio::feature& f : list.features) room.add(f, name, o);
      values = room.values();
    }
    py::dict lists;
    for (auto& [name, list] : s.feature_lists) {
      py::list features(list.features.size());
      for (std::size_t i = 0; i < list.features.size(); ++i) {
        if constexpr (kept)
          features[i] = feature_to_python(list.features[i], name, o, values);
        else
          features[i] = feature_to_python(std::move(list.features[i]), name, o, values);
      }
      lists[name_to_python(name)] = std::move(features);
    }
    return py::make_tuple(features_to_python(std::forward<Sequence>(s).context, o, values), std::move(lists));
  }
  static value_type from_python(py::handle h, const value_options&) {
    auto pair = py::cast<py::tuple>(h);
    if (pair.size() != 2) throw py::value_error("sequence-example: expected (context, feature_lists)");
    value_type s;
    s.context = features_from_python(pair[0]);
    s.context_present = s.context.features_present;
    py::dict lists = py::cast<py::dict>(pair[1]);
    s.feature_lists_present = !lists.empty();
    for (auto [name, values] : lists) {
      std::string n = key_from_python(name);
      tablio::feature_list& list = s.feature_lists[n];
      for (py::handle f : py::iter(values)) list.features.push_back(feature_from_python(f, n));
    }
    return s;
  }
};

}  // namespace

void register_sequence_example_type() {
  register_value_type("sequence-example", entry_for<sequence_example>());
}

}  // namespace tablio_python
