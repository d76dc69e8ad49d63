// The same three opened from specifiers, so that every format may be named at run time.
#include <tablio/tablio.hpp>
struct sample {
  int id;
  std::string name;
  std::vector<float> values;
};
int main(int argc, char** argv) {
  using entry = tablio::holder<sample>;
  tablio::table_writer<entry> out(argv[1]);
  out.write("a", {1, "a", {1.f}});
  out.close();
  int sum = 0;
  for (auto& [key, value] : tablio::sequential_table_reader<entry>(argv[2])) sum += value.id;
  tablio::random_access_table_reader<entry> by_key(argv[2]);
  return argc + sum + by_key.at("a").id;
}
