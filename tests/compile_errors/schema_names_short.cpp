// A schema asked of a type whose names do not name each of its fields: a static_assert, not a
// schema with a nameless field that protoc refuses.
// expected error: the field names a type gives must name each of its fields
#include <tablio/codec/protobuf_schema.hpp>

struct record {
#ifdef TABLIO_EXPECT_ERROR
  static constexpr std::array<std::string_view, 1> tablio_field_names{"id"};
#else
  static constexpr std::array<std::string_view, 2> tablio_field_names{"id", "count"};
#endif
  std::string id;
  std::int32_t count = 0;
};

int main() { return static_cast<int>(tablio::proto_schema<record>("records").size() == 0); }
