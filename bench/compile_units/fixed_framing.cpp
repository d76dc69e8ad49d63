// The three table classes over one fixed framing, a Kaldi archive, and a user's struct.
#include <tablio/framing/ark.hpp>
#include <tablio/holder/holder.hpp>
#include <tablio/table/random_access_reader.hpp>
#include <tablio/table/sequential_reader.hpp>
#include <tablio/table/table_writer.hpp>
struct sample {
  int id;
  std::string name;
  std::vector<float> values;
};
int main(int argc, char** argv) {
  using entry = tablio::holder<sample>;
  tablio::table_writer<entry, tablio::ark_framing> out(argv[1]);
  out.write("a", {1, "a", {1.f}});
  out.close();
  int sum = 0;
  for (auto& [key, value] : tablio::sequential_table_reader<entry, tablio::ark_framing>(argv[1]))
    sum += value.id;
  tablio::random_access_table_reader<entry, tablio::ark_framing> by_key(argv[1]);
  return argc + sum + by_key.at("a").id;
}
