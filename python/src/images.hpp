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

// Copies an image's pixels (or a transform's float32 values) to `to`.
inline void copy_image(const tablio::image& im, void* to) {
  if (!im.values.empty())
    std::memcpy(to, im.values.data(), im.values.size() * sizeof(float));
  else if (!im.pixels.empty())
    std::memcpy(to, im.pixels.data(), im.pixels.size());
}

// A new array of `dims` of an image's type: bytes, or a transform's float32 values.
inline py::array array_for(const tablio::image& im, const std::vector<py::ssize_t>& dims) {
  return im.values.empty() ? py::array(new_array<std::uint8_t>(dims)) : py::array(new_array<float>(dims));
}

// Whether two images come out as arrays of one shape and type.
inline bool same_array(const tablio::image& a, const tablio::image& b) noexcept {
  return a.width == b.width && a.height == b.height && a.channels == b.channels &&
         a.channels_first == b.channels_first && a.values.empty() == b.values.empty();
}

// n images of one shape and type (image_at(i), all same_array), in one array (n, dims...).
template <class ImageAt>
py::array images_in_rows(std::size_t n, ImageAt image_at) {
  const tablio::image& first = image_at(0);
  std::vector<py::ssize_t> dims = image_dims(first);
  dims.insert(dims.begin(), static_cast<py::ssize_t>(n));
  py::array rows = array_for(first, dims);
  char* to = static_cast<char*>(rows.mutable_data());
  const auto row_bytes = static_cast<std::size_t>(rows.strides(0));
  for (std::size_t i = 0; i < n; ++i) copy_image(image_at(i), to + i * row_bytes);
  return rows;
}

// Row i of `rows`: a view of it, whose base is `rows`.
inline py::array row_of(const py::array& rows, std::size_t i) {
  std::vector<py::ssize_t> shape(rows.shape() + 1, rows.shape() + rows.ndim()),
      strides(rows.strides() + 1, rows.strides() + rows.ndim());
  return py::array(rows.dtype(), std::move(shape), std::move(strides),
                   static_cast<const char*>(rows.data()) + static_cast<py::ssize_t>(i) * rows.strides(0),
                   rows);
}

inline py::object image_array(const tablio::image& im, bool always_three = false) {
  py::array out = array_for(im, image_dims(im, always_three));
  copy_image(im, out.mutable_data());
  return std::move(out);
}

}  // namespace tablio_python
