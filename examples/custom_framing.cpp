// A storage format of one's own, used by tablio's table classes with no change to the
// library: a folder that holds one file per entry, KEY.bin. The framing is defined here; the
// table classes take it as a template argument, and once registered, specifiers name it too
// ("folder:points"), so that it copies to and from every other format.
//
//   custom_framing WORK_DIR
#include <tablio/framing/ark.hpp>
#include <tablio/holder/holder.hpp>
#include <tablio/table/any_framing.hpp>
#include <tablio/table/random_access_reader.hpp>
#include <tablio/table/sequential_reader.hpp>
#include <tablio/table/table_writer.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace fs = std::filesystem;

// The framing: how entries sit in storage, in keys and bytes. It never sees a value: the table
// classes turn values into records with the holder (here, its binary object).
struct folder_framing {
  // Writing: record entries (put), each written whole to a file of its own.
  class output {
   public:
    explicit output(std::string folder) : folder_(std::move(folder)) { fs::create_directories(folder_); }
    void put(std::string_view key, std::string_view bytes) {
      if (key.find('/') != std::string_view::npos)
        throw tablio::usage_error("a folder entry's key names one file: '" + std::string(key) + "'");
      // Written beside, then renamed: a reader never sees half an entry.
      fs::path file = fs::path(folder_) / (std::string(key) + ".bin"), partial = file;
      partial += ".partial";
      std::ofstream out(partial, std::ios::binary);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      out.close();
      if (!out) throw tablio::io_error(partial.string(), errno, "cannot write");
      fs::rename(partial, file);
    }
    void close() {}  // every entry is on disk once put() has returned

   private:
    std::string folder_;
  };

  // Reading: entries in key order (next), and by key (find), each a view of the file's bytes
  // valid until the next call.
  class input {
   public:
    explicit input(std::string folder) : folder_(std::move(folder)) {
      for (const auto& file : fs::directory_iterator(folder_))
        if (file.path().extension() == ".bin") keys_.push_back(file.path().stem().string());
      std::sort(keys_.begin(), keys_.end());
    }
    bool next(std::string& key, std::string_view& bytes) {
      if (next_ == keys_.size()) return false;
      key = keys_[next_++];
      bytes = load(key);
      return true;
    }
    std::optional<std::string_view> find(std::string_view key) {
      if (!std::binary_search(keys_.begin(), keys_.end(), key)) return std::nullopt;
      return load(key);
    }
    std::uint64_t size() const { return keys_.size(); }
    const std::string& name() const { return folder_; }
    void close() {}

   private:
    std::string_view load(std::string_view key) {
      std::string path = folder_ + "/" + std::string(key) + ".bin";
      std::ifstream in(path, std::ios::binary);
      if (!in) throw tablio::io_error(path, errno, "cannot open for reading");
      bytes_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      return bytes_;
    }
    std::string folder_;
    std::vector<std::string> keys_;
    std::size_t next_ = 0;
    std::string bytes_;
  };
};

static_assert(tablio::output_framing<folder_framing::output> && tablio::input_framing<folder_framing::input>);
static_assert(tablio::keyed_input<folder_framing::input> && tablio::counted_input<folder_framing::input>);

// A value with no serialization code: Boost.PFR reflects its fields.
struct point {
  std::string label;
  double x, y;
  std::vector<std::int32_t> tags;
  bool operator==(const point&) const = default;
};

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: custom_framing WORK_DIR\n");
    return 2;
  }
  fs::path work = argv[1];
  fs::remove_all(work);
  fs::create_directories(work);
  const std::string folder = (work / "points").string();
  const std::vector<std::pair<std::string, point>> points = {
      {"a", {"origin", 0, 0, {}}}, {"b", {"east", 1.5, 0, {1, 2}}}, {"c", {"north", 0, -2.25, {7}}}};

  // 1. The table classes over the framing, chosen at compile time.
  using entry = tablio::holder<point>;
  {
    tablio::table_writer<entry, folder_framing> out(folder);
    for (const auto& [key, p] : points) out.write(key, p);
    out.close();
  }
  std::size_t n = 0;
  for (auto& [key, p] : tablio::sequential_table_reader<entry, folder_framing>(folder)) {
    if (key != points[n].first || p != points[n].second) return 1;
    ++n;
  }
  tablio::random_access_table_reader<entry, folder_framing> by_key(folder);
  if (n != points.size() || by_key.at("c").label != "north" || by_key.contains("z") || by_key.size() != 3u)
    return 1;

  // 2. Registered, the format is one more that specifiers name, for every table class of any
  //    holder; here a folder of points becomes a Kaldi archive and back.
  tablio::register_format({
      .name = "folder",
      .open_output = [](const tablio::wspecifier& spec,
                        const tablio::open_options&) -> tablio::owned<tablio::any_output_base> {
        return tablio::make_owned<tablio::erased_output<folder_framing::output>>(spec.archive);
      },
      .open_input = [](const tablio::rspecifier& spec,
                       const tablio::open_options&) -> tablio::owned<tablio::any_input_base> {
        return tablio::make_owned<tablio::erased_input<folder_framing::input>>(spec.filename);
      },
  });
  const std::string ark = (work / "points.ark").string(), copy = (work / "copy").string();
  {
    tablio::table_writer<entry> out("ark:" + ark);
    for (auto& [key, p] : tablio::sequential_table_reader<entry>("folder:" + folder)) out.write(key, p);
  }
  {
    tablio::table_writer<entry> out("folder:" + copy);
    for (auto& [key, p] : tablio::sequential_table_reader<entry>("ark:" + ark)) out.write(key, p);
  }
  for (const auto& [key, p] : points) {
    std::ifstream a(folder + "/" + key + ".bin", std::ios::binary),
        b(copy + "/" + key + ".bin", std::ios::binary);
    if (std::string(std::istreambuf_iterator<char>(a), {}) !=
        std::string(std::istreambuf_iterator<char>(b), {}))
      return 1;
  }
  std::printf("%zu points through a folder framing, a Kaldi archive and back, byte for byte\n",
              points.size());
  return 0;
}
