// decoded_datum_holder<In>: reads a table of encoded images as raw Caffe Datums of their
// pixels, the form Caffe's convert_imageset writes without --encoded, so that a data layer
// reads them without decoding:
//
//   sequential_table_reader<decoded_datum_holder<webdataset_sample_holder>> in;
//   in.holder().images.transform = std::make_shared<image_transform>(eval);  // Resize, CenterCrop
//   in.open("tar:train-000000.tar");
//   table_writer<datum_holder> out("lmdb:train_lmdb");
//   for (auto& [key, d] : in) out.write(key, d);
//
// In's values hold the image and the label: a Datum (datum_holder: its encoded image, or a raw
// one's pixels, and its label), a WebDataset sample (webdataset_sample_holder: its one jpg, jpeg
// or png member, and the integer text of its cls member) or an Example (example_holder: its
// "image/encoded" bytes and "image/class/label" int64, as TensorFlow's ImageNet records hold
// them); a label it lacks is 0. Images decode as `images` says (types/image.hpp), in the table's
// threads, with a transform's draws from each entry's key; channels first, in Caffe's B, G, R
// order. A transform's float32 values go to the Datum's float_data.
#pragma once

#include <tablio/holder/datum.hpp>
#include <tablio/holder/example_form.hpp>
#include <tablio/holder/keyed_decoding.hpp>
#include <tablio/holder/sample.hpp>
#include <tablio/types/datum_image.hpp>

#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

namespace detail {

// The image a value holds: its bytes (encoded), and for a raw Datum the Datum itself.
struct held_image {
  std::string_view encoded;
  const datum* raw = nullptr;
  std::int32_t label = 0;
};

inline held_image image_held(const datum& d, const std::string&, std::string_view) {
  return d.encoded ? held_image{d.data, nullptr, d.label} : held_image{{}, &d, d.label};
}

inline held_image image_held(const webdataset_sample& s, const std::string& name, std::string_view key) {
  held_image held;
  const std::string* found = nullptr;
  for (const webdataset_sample::member& m : s.members) {
    if (!is_image_extension(m.extension)) continue;
    if (found)
      throw_format_error(name, std::nullopt, key, {"a sample of one image member (jpg, jpeg or png)"},
                         {"a second, ", quoted_excerpt(m.extension)});
    found = &m.data;
  }
  if (!found)
    throw_format_error(name, std::nullopt, key, {"a sample with an image member (jpg, jpeg or png)"},
                       {"none"});
  held.encoded = *found;
  if (const std::string* cls = s.find("cls")) {
    // The integer, with the white space around it that Python's int() takes as WebDataset reads it.
    std::string_view text = *cls;
    auto space = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
    while (!text.empty() && space(text.back())) text.remove_suffix(1);
    while (!text.empty() && space(text.front())) text.remove_prefix(1);
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), held.label);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
      throw_format_error(name, std::nullopt, key, {"a cls member of an int32 label"}, {quoted_excerpt(*cls)});
  }
  return held;
}

inline held_image image_held(const example& e, const std::string& name, std::string_view key) {
  held_image held;
  auto image = e.features.find("image/encoded");
  const auto* bytes =
      image == e.features.end() ? nullptr : std::get_if<std::vector<std::string>>(&image->second);
  if (!bytes || bytes->size() != 1)
    throw_format_error(name, std::nullopt, key, {"an Example whose image/encoded feature holds one image"},
                       {image == e.features.end() ? "none" : "another feature"});
  held.encoded = bytes->front();
  auto label = e.features.find("image/class/label");
  if (label != e.features.end()) {
    const auto* ints = std::get_if<std::vector<std::int64_t>>(&label->second);
    if (!ints || ints->size() != 1 || ints->front() < std::numeric_limits<std::int32_t>::min() ||
        ints->front() > std::numeric_limits<std::int32_t>::max())
      throw_format_error(name, std::nullopt, key, {"an image/class/label feature of one int32"}, {"another"});
    held.label = static_cast<std::int32_t>(ints->front());
  }
  return held;
}

}  // namespace detail

template <holder_type In>
class decoded_datum_holder : public holder_storage<datum> {
 public:
  // The extension In reads tar members under (a sample's: every member of a key).
  static constexpr std::string_view extension = In::extension;

  // How the images decode: channels (3, or 1 for gray) and a transform. Channels first and
  // B, G, R order, as a Datum stores them, whatever is asked here.
  image_options images;

  // The entry's key, which a transform's draws follow (holder/keyed_decoding.hpp).
  void at_key(std::string_view key) {
    keyed_.at_key(key, [this](const std::string& name) { store(name); });
  }

  // The Holder concept: writes a Datum as datum_holder does.
  static void write(writer& w, bool binary, const datum& v) { datum_holder::write(w, binary, v); }
  // The Holder concept: reads In's value, then stores its image.
  void read(reader& r) {
    in_.read(r);
    stored(r.name());
  }
  // The record_holder concept: a record is a Datum's encoding.
  static void encode_record(std::string& out, const datum& v) { datum_holder::encode_record(out, v); }
  // The record_holder concept: decodes In's record, then stores its image.
  void decode_record(std::string_view bytes, const std::string& name) {
    in_.decode_record(bytes, name);
    stored(name);
  }
  // The part_taking_holder concept, where In takes a tar sample's members.
  template <class Parts, class Keeper>
  requires requires(reading_holder_t<In>& h, const Parts& p, Keeper k, const std::string& n) {
    h.take_parts(p, std::move(k), n);
  }
  void take_parts(const Parts& parts, Keeper k, const std::string& name) {
    in_.take_parts(parts, std::move(k), name);
    stored(name);
  }
  // The keyed_record_holder concept, where In's records keep their keys (an Example's feature).
  static void encode_record(std::string& out, const datum& v, std::string_view key_name,
                            std::string_view key) requires keyed_record_holder<reading_holder_t<In>> {
    example_record_holder<datum_holder>::encode_record(out, v, key_name, key);
  }
  // The keyed_record_holder concept: the key the record kept, as In takes it.
  std::string take_record_key(std::string_view key_name,
                              const std::string& name) requires keyed_record_holder<reading_holder_t<In>> {
    return in_.take_record_key(key_name, name);
  }

 private:
  // Stores In's value's image now, or once the record gave its key.
  void stored(const std::string& name) {
    keyed_.read(name, [this](const std::string& source) { store(source); });
  }
  void store(const std::string& name) {
    const std::string& key = keyed_.key();
    const detail::held_image held = detail::image_held(in_.value(), name, key);
    image_options options = images;
    options.channels_first = true;
    options.bgr = true;
    bool made;
#if defined(TABLIO_WITH_JPEG)
    if (held.raw)
      made = datum_image(*held.raw, options, image_, name, key);
    else
      made = (decode_image(held.encoded, image_, options, name, key), true);
#else
    if (!held.raw)
      throw_usage_error({"decoding images needs the tablio::jpeg component (libjpeg-turbo and libpng)"});
    made = options.transform && options.transform->any();
    if (made) transform_raw_datum(*held.raw, *options.transform, true, image_, name, key);
#endif
    if (made) {
      store_image(image_, value_);
    } else {
      value_ = *held.raw;  // raw already, and nothing to do
    }
    value_.label = held.label;
    value_.present.label = true;
  }

  reading_holder_t<In> in_;
  image image_;
  keyed_decoding keyed_;
};

TABLIO_END_NAMESPACE
