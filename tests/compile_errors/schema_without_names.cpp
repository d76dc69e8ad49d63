// A schema asked of a type whose fields have no names here (Boost.PFR before 1.84): a
// static_assert that says how to give them. Encoding the type needs no names.
// expected error: this type's fields have no names here
// flags with TABLIO_EXPECT_ERROR: -DBOOST_PFR_CORE_NAME_ENABLED=0
#include <tablio/codec/protobuf_schema.hpp>

struct record {
#ifndef TABLIO_EXPECT_ERROR
  static constexpr std::array<std::string_view, 2> tablio_field_names{"id", "count"};
#endif
  std::string id;
  std::int32_t count = 0;
};

int main() {
  auto bytes = tablio::encode<tablio::protobuf>(record{"a", 1});
  return static_cast<int>(tablio::proto_schema<record>().size() + bytes.size() == 0);
}
