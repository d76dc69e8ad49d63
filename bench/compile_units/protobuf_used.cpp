// A struct through the protobuf codec both ways.
#include <tablio/codec/protobuf.hpp>
struct sample {
  int id;
  std::string name;
  std::vector<float> values;
  std::optional<std::int64_t> extra;
};
int main(int argc, char**) {
  auto bytes = tablio::encode<tablio::protobuf>(sample{argc, "a", {1.f}, 7});
  return tablio::decode<tablio::protobuf, sample>(bytes.view()).id;
}
