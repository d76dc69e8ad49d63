// decoded_datum_holder: tables of encoded images read as raw Datums, with a transform's draws
// following each entry's key, also where the record keeps it (keyed_decoding).
#include <tablio/holder/decoded_datum.hpp>
#include <tablio/holder/example.hpp>
#include <tablio/tablio.hpp>

#include "test_support.hpp"

#include <set>

using namespace tablio;

namespace {

image expected_image(const std::string& bytes, const std::shared_ptr<const image_transform>& t,
                     const std::string& key) {
  image_options o;
  o.channels_first = true;
  o.bgr = true;
  o.transform = t;
  image im;
  decode_image(bytes, im, o, "expected", key);
  return im;
}

}  // namespace

TEST_CASE("keyed_decoding waits for a key the record keeps, and only then") {
  keyed_decoding k;
  std::vector<std::string> ran;  // "source:key" of each run
  auto keyed = [&](const std::string& source) { ran.push_back(source + ":" + k.key()); };
  k.at_key("a", keyed);
  k.read("f", keyed);
  CHECK(ran == std::vector<std::string>{"f:a"});
  k.at_key("", keyed);
  k.read("g", keyed);
  CHECK(ran.size() == 1);  // waits for the key
  k.at_key("b", keyed);
  CHECK(ran.back() == "g:b");
  k.at_key("", keyed);
  k.read("h", keyed);
  k.at_key("", keyed);  // the next entry: what waited is gone with its record
  k.at_key("c", keyed);
  CHECK(ran.size() == 2);
}

TEST_CASE("Examples read as raw Datums: pixels, label and draws of the key the record keeps") {
  test::temp_dir dir;
  const std::string jpeg = test::read_file(test::data_path("images/q90.jpg"));
  const std::string spec = "tfrecord,key=key:" + (dir.path / "ex.tfrecord").string();
  {
    table_writer<example_holder> out(spec);
    for (int i = 0; i < 8; ++i) {
      example e;
      e.features["image/encoded"] = std::vector<std::string>{jpeg};
      e.features["image/class/label"] = std::vector<std::int64_t>{i + 100};
      out.write("photo" + std::to_string(i), e);
    }
  }
  auto t = std::make_shared<image_transform>();
  t->random_resized_crop.size = 20;
  t->flip = 0.5;
  t->seed = 7;
  for (unsigned threads : {0u, 2u}) {
    sequential_table_reader<decoded_datum_holder<example_holder>> in;
    in.holder().images.transform = t;
    open_options o;
    o.threads = threads;
    in.open(spec, o);
    int n = 0;
    std::set<std::string> different;
    for (auto& [key, d] : in) {
      CHECK(key == "photo" + std::to_string(n));
      const image want = expected_image(jpeg, t, key);
      CHECK((d.channels == 3 && d.height == 20 && d.width == 20 && !d.encoded));
      CHECK(d.data == std::string(want.pixels.begin(), want.pixels.end()));
      CHECK(d.label == n + 100);
      different.insert(d.data);
      ++n;
    }
    CHECK(n == 8);
    CHECK(different.size() > 1);  // the same image, drawn from each key
  }
}

TEST_CASE("A sample without one image, or with a label that is no number, is a format_error naming its key") {
  webdataset_sample two, none, label;
  const std::string jpeg = test::read_file(test::data_path("images/q90.jpg"));
  two.members = {{"left.jpg", jpeg}, {"right.jpg", jpeg}};
  none.members = {{"txt", "words"}};
  label.members = {{"jpg", jpeg}, {"cls", "cat"}};
  CHECK_THROWS_WITH(detail::image_held(two, "s.tar", "k2"),
                    Catch::Contains("s.tar") && Catch::Contains("'k2'") && Catch::Contains("right.jpg"));
  CHECK_THROWS_WITH(detail::image_held(none, "s.tar", "k0"),
                    Catch::Contains("'k0'") && Catch::Contains("an image member"));
  CHECK_THROWS_WITH(detail::image_held(label, "s.tar", "kl"),
                    Catch::Contains("'kl'") && Catch::Contains("cls"));
  label.members[1].data = "12\n";
  CHECK(detail::image_held(label, "s.tar", "kl").label == 12);
  label.members[1].data = " -3\r\n";  // as Python's int() reads it
  CHECK(detail::image_held(label, "s.tar", "kl").label == -3);
}
