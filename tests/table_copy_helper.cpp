// tablio_test_table_copy TYPE RSPECIFIER WSPECIFIER: copies a table of TYPE's values as a C++
// program would, with the library's tables alone (no tool code): read with reading_holder_t
// under reading_rspec's keys, written with with_writing_holder. The differential tests set it beside the tool
// and Python. Exits 0, or 1 with the error's message on standard error.
#include <tablio/holder/holders.hpp>
#include <tablio/table/record_form.hpp>
#include <tablio/tablio.hpp>

#include <cstdio>
#include <string>
#include <string_view>

namespace {

using namespace tablio;

template <class H>
void copy(const std::string& named, const std::string& wspec) {
  const std::string rspec = reading_rspec<H>(named);
  sequential_table_reader<reading_holder_t<H>> in(rspec);
  with_writing_holder<H>(wspec, [&]<class W>() {
    table_writer<W> out(wspec);
    for (auto& [key, value] : in) out.write(key, value);
    out.close();
  });
}

// Calls copy<H> with the holder of the type named `type` (Python's type= names).
bool copy_type(std::string_view type, const std::string& rspec, const std::string& wspec) {
  if (type == "matrix")
    copy<holder<matrix<float>>>(rspec, wspec);
  else if (type == "vector")
    copy<holder<vector<float>>>(rspec, wspec);
  else if (type == "compressed-matrix")
    copy<holder<compressed_matrix>>(rspec, wspec);
  else if (type == "int-vector")
    copy<basic_vector_holder<std::int32_t>>(rspec, wspec);
  else if (type == "int-vector-vector")
    copy<basic_vector_vector_holder<std::int32_t>>(rspec, wspec);
  else if (type == "int-pair-vector")
    copy<basic_pair_vector_holder<std::int32_t>>(rspec, wspec);
  else if (type == "token")
    copy<token_holder>(rspec, wspec);
  else if (type == "token-vector")
    copy<token_vector_holder>(rspec, wspec);
  else if (type == "int32")
    copy<basic_holder<std::int32_t>>(rspec, wspec);
  else if (type == "float")
    copy<basic_holder<float>>(rspec, wspec);
  else if (type == "double")
    copy<basic_holder<double>>(rspec, wspec);
  else if (type == "bool")
    copy<basic_holder<bool>>(rspec, wspec);
  else if (type == "wave")
    copy<wave_holder>(rspec, wspec);
  else if (type == "datum")
    copy<datum_holder>(rspec, wspec);
  else if (type == "example")
    copy<example_holder>(rspec, wspec);
  else if (type == "bytes")
    copy<bytes_holder>(rspec, wspec);
  else
    return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: tablio_test_table_copy TYPE RSPECIFIER WSPECIFIER\n");
    return 2;
  }
  try {
    if (!copy_type(argv[1], argv[2], argv[3])) {
      std::fprintf(stderr, "unknown type '%s'\n", argv[1]);
      return 2;
    }
  } catch (const tablio::error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
