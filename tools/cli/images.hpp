// copy --images: the options that decode each value's image into a raw Datum, with the same
// transforms Python's images= names (docs/images.md), spelled as options.
#pragma once

#include <tablio/core/parse_float.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/types/image_transform.hpp>
#include <tablio/types/image_types.hpp>
#include <tablio/types/mean_image.hpp>

#include <charconv>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "access.hpp"
#include "arguments.hpp"

namespace cli {

namespace detail {

inline double number(const std::string& name, std::string_view text) {
  double v = 0;
  const auto [end, ec] = tablio::detail::parse_float(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw tablio::usage_error("--" + name + " takes numbers, not '" + std::string(text) + "'");
  return v;
}

// "a,b,c" as numbers, `counts` of them.
inline std::vector<double> numbers(const std::string& name, const std::string& text,
                                   std::initializer_list<std::size_t> counts) {
  std::vector<double> out;
  std::size_t from = 0;
  for (;;) {
    const std::size_t comma = text.find(',', from);
    out.push_back(number(name, std::string_view(text).substr(from, comma - from)));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  for (std::size_t n : counts)
    if (out.size() == n) return out;
  throw tablio::usage_error("--" + name + " takes " +
                            (counts.size() == 1 ? std::to_string(*counts.begin()) : std::string("1 or 3")) +
                            " comma-separated numbers, not '" + text + "'");
}

inline std::vector<float> floats(const std::string& name, const std::string& text) {
  std::vector<float> out;
  for (double v : numbers(name, text, {1, 3})) out.push_back(static_cast<float>(v));
  return out;
}

// A size an option gives, 1 to 65535; 0 where it is not given.
inline std::uint32_t side(arguments& args, const std::string& name) {
  const int n = args.integer(name, 0);
  if (n < 0 || n > 65535 || (n == 0 && args.has(name)))
    throw tablio::usage_error("--" + name + " is a size in pixels, 1 to 65535");
  return static_cast<std::uint32_t>(n);
}

// A local or remote file's bytes, as the input's access allows.
inline std::string file_bytes(const std::string& name) {
  tablio::reader in = tablio::open_input(name, input_access());
  std::string bytes;
  char chunk[65536];
  while (std::size_t n = in.read_some(chunk, sizeof chunk)) bytes.append(chunk, n);
  return bytes;
}

}  // namespace detail

// The image options copy --images gives, or none without --images (where no image option is
// taken either).
inline std::optional<tablio::image_options> image_options_of(arguments& args) {
  static constexpr const char* torchvision[] = {"resize",     "center-crop", "random-resized-crop",
                                                "crop-scale", "crop-ratio",  "flip",
                                                "mean",       "std",         "dct-scaling"};
  static constexpr const char* caffe[] = {"crop-size", "mirror", "mean-value", "mean-file", "scale", "train"};
  const bool images = args.flag("images");
  std::string torchvision_given, caffe_given;
  for (const char* name : torchvision)
    if (args.has(name)) torchvision_given += std::string(torchvision_given.empty() ? "--" : ", --") + name;
  for (const char* name : caffe)
    if (args.has(name)) caffe_given += std::string(caffe_given.empty() ? "--" : ", --") + name;
  const bool gray = args.flag("gray");
  if (!images) {
    if (!torchvision_given.empty() || !caffe_given.empty() || gray || args.has("seed"))
      throw tablio::usage_error("image options apply with --images");
    return std::nullopt;
  }
  if (!torchvision_given.empty() && !caffe_given.empty())
    throw tablio::usage_error(
        "--images takes torchvision's transforms or Caffe's transform_param, not both (" + torchvision_given +
        " with " + caffe_given + ")");
  tablio::image_options options;
  options.channels = gray ? 1 : 3;
  auto t = std::make_shared<tablio::image_transform>();
  const std::string seed = args.get("seed", "0");
  {
    const auto [end, ec] = std::from_chars(seed.data(), seed.data() + seed.size(), t->seed);
    if (seed.empty() || ec != std::errc() || end != seed.data() + seed.size())
      throw tablio::usage_error("--seed takes an integer, 0 to 2^64 - 1, not '" + seed + "'");
  }
  if (!caffe_given.empty()) {
    t->caffe = true;
    t->crop_size = detail::side(args, "crop-size");
    t->mirror = args.flag("mirror");
    t->train = !args.has("train") || args.flag("train");
    if (args.has("mean-value") && args.has("mean-file"))
      throw tablio::usage_error("give --mean-file or --mean-value, not both (Caffe refuses both at once)");
    if (args.has("mean-value")) t->mean_value = detail::floats("mean-value", args.get("mean-value", ""));
    if (args.has("mean-file")) {
      const std::string path = args.get("mean-file", "");
      t->mean_file =
          std::make_shared<const tablio::mean_image>(tablio::read_mean_image(detail::file_bytes(path), path));
    }
    if (args.has("scale")) t->scale = static_cast<float>(detail::number("scale", args.get("scale", "")));
  } else {
    t->random_resized_crop.size = detail::side(args, "random-resized-crop");
    t->resize = detail::side(args, "resize");
    t->center_crop = detail::side(args, "center-crop");
    if (t->random_resized_crop.size && (t->resize || t->center_crop))
      throw tablio::usage_error(
          "--random-resized-crop (training) is not taken with --resize or --center-crop (evaluation)");
    if ((args.has("crop-scale") || args.has("crop-ratio")) && !t->random_resized_crop.size)
      throw tablio::usage_error("--crop-scale and --crop-ratio apply with --random-resized-crop");
    auto pair = [&](const char* name, double* into, double high) {
      if (!args.has(name)) return;
      const std::vector<double> v = detail::numbers(name, args.get(name, ""), {2});
      if (!(0 < v[0] && v[0] <= v[1] && v[1] <= high))
        throw tablio::usage_error(std::string("--") + name + " is LO,HI with 0 < LO <= HI" +
                                  (high == 1 ? " <= 1" : ""));
      into[0] = v[0];
      into[1] = v[1];
    };
    pair("crop-scale", t->random_resized_crop.scale, 1);
    pair("crop-ratio", t->random_resized_crop.ratio, 1e300);
    if (args.has("flip")) {
      t->flip = detail::number("flip", args.get("flip", ""));
      if (!(t->flip >= 0 && t->flip <= 1))
        throw tablio::usage_error("--flip is the probability of a horizontal flip, 0 to 1");
    }
    // As Python's images=: decoding at a DCT scale for training alone, by default.
    t->dct_scaling = args.has("dct-scaling") ? args.flag("dct-scaling") : t->random_resized_crop.size != 0;
    if (args.has("mean") != args.has("std"))
      throw tablio::usage_error("--mean and --std go together (Normalize(mean, std) after ToTensor())");
    if (args.has("mean")) {
      t->mean = detail::floats("mean", args.get("mean", ""));
      t->std = detail::floats("std", args.get("std", ""));
      for (float s : t->std)
        if (s == 0) throw tablio::usage_error("--std has no zero");
      if (gray && (t->mean.size() == 3 || t->std.size() == 3))
        throw tablio::usage_error("--mean and --std of 3 channels for gray images (--gray)");
    }
  }
  if (t->any()) options.transform = std::move(t);
  return options;
}

}  // namespace cli
