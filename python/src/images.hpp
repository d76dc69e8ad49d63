// images=: the encoded images a value holds (a sample's jpg/png members, an encoded Datum, an
// Example's image/encoded feature) decoded where the value is read, in the table's threads
// under threads=, and handed to Python as uint8 arrays.
#pragma once

#include "arrays.hpp"
#include "binding.hpp"

#include <tablio/types/image.hpp>

#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tablio_python {

// A value's decoded images, each with the ordinal of the member or value it comes from. Storage
// is reused from value to value. An image that would not decode is kept as `error`, thrown when
// the value is converted, so that the table reads on past it (skip() and on_error="skip" leave
// out that value alone).
class decoded_images {
 public:
  void clear() noexcept {
    count_ = 0;
    from_.clear();
    error_ = nullptr;
  }
  // Decodes one image of the value of `key`, from its member or value `ordinal`.
  void add(std::string_view bytes, std::size_t ordinal, const tablio::image_options& options,
           std::string_view source, std::string_view key) {
#if defined(TABLIO_WITH_JPEG)
    if (count_ == images_.size()) images_.emplace_back();
    tablio::decode_image(bytes, images_[count_], options, source, key);
    ++count_;
    from_.push_back(ordinal);
#else
    (void)bytes, (void)ordinal, (void)options, (void)source, (void)key;
    throw tablio::usage_error("images= needs the tablio::jpeg component (libjpeg-turbo and libpng)");
#endif
  }
  // The storage of the value's next image, from its member or value `ordinal`, for an image
  // made other than by decoding (a raw Datum's, transformed).
  tablio::image& add_made(std::size_t ordinal) {
    if (count_ == images_.size()) images_.emplace_back();
    from_.push_back(ordinal);
    return images_[count_++];
  }
  // Where the entry of the value's images starts in its file (a table's entry_io tells the
  // holder), which a kept error names as the table's own errors name it.
  void at_offset(std::optional<std::uint64_t> offset) noexcept { entry_offset_ = offset; }
  // Runs decode (which calls add), keeping a bad image's error for the conversion.
  template <class Decode>
  void decode_all(Decode&& decode) {
    clear();
    try {
      decode();
    } catch (const tablio::format_error& e) {
      if (!entry_offset_) {
        error_ = std::current_exception();
        return;
      }
      tablio::error_location where = e.where();
      where.offset = *entry_offset_ + where.offset.value_or(0);
      error_ = std::make_exception_ptr(tablio::format_error(std::move(where), e.expected(), e.found()));
    }
  }
  const std::exception_ptr& error() const noexcept { return error_; }
  void throw_error() const {
    if (error_) std::rethrow_exception(error_);
  }

  std::size_t size() const noexcept { return count_; }
  const tablio::image& operator[](std::size_t i) const noexcept { return images_[i]; }
  std::size_t from(std::size_t i) const noexcept { return from_[i]; }

 private:
  std::vector<tablio::image> images_;  // the first count_ are this value's
  std::size_t count_ = 0;
  std::vector<std::size_t> from_;
  std::exception_ptr error_;
  std::optional<std::uint64_t> entry_offset_;
};

// An image's array dimensions: (H, W, C), (C, H, W), or (H, W) for one channel unless three
// are asked for (a Datum's images are (C, H, W) even in gray, as Caffe's).
inline std::vector<py::ssize_t> image_dims(const tablio::image& im, bool always_three = false) {
  auto h = static_cast<py::ssize_t>(im.height), w = static_cast<py::ssize_t>(im.width),
       c = static_cast<py::ssize_t>(im.channels);
  if (c == 1 && !always_three) return {h, w};
  return im.channels_first ? std::vector<py::ssize_t>{c, h, w} : std::vector<py::ssize_t>{h, w, c};
}

inline py::object image_array(const tablio::image& im, bool always_three = false) {
  if (!im.values.empty()) {  // a transform's float32 values
    py::array_t<float> out = new_array<float>(image_dims(im, always_three));
    std::memcpy(out.mutable_data(), im.values.data(), im.values.size() * sizeof(float));
    return std::move(out);
  }
  py::array_t<std::uint8_t> out = new_array<std::uint8_t>(image_dims(im, always_three));
  if (!im.pixels.empty()) std::memcpy(out.mutable_data(), im.pixels.data(), im.pixels.size());
  return std::move(out);
}

}  // namespace tablio_python
