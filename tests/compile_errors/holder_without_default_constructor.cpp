// A table of values without a default constructor: the holder's static_assert says so first,
// before the errors of the storage behind it.
// expected error: a table entry's value type needs a default constructor
#include <tablio/tablio.hpp>

class celsius {
 public:
#ifndef TABLIO_EXPECT_ERROR
  celsius() = default;
#endif
  explicit celsius(double degrees) : degrees_(degrees) {}
  template <class Codec>
  void tablio_write(tablio::writer& w, Codec) const {
    tablio::encode_to<Codec>(w, degrees_);
  }
  template <class Codec>
  void tablio_read(tablio::reader& r, Codec) {
    tablio::decode_from<Codec>(r, degrees_);
  }

 private:
  double degrees_ = 0;
};

int main() {
  tablio::table_writer<tablio::holder<celsius>> out("ark:/dev/null");
  out.write("a", celsius(21.5));
}
