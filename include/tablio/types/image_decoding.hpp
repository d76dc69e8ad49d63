// decode_image (types/image.hpp), over TurboJPEG and libpng: the tablio::jpeg component.
#pragma once

#include <tablio/types/image_transform.hpp>
#include <tablio/types/image_types.hpp>

#include <png.h>
#include <turbojpeg.h>
// libjpeg's API (libjpeg-turbo's), for what TurboJPEG 2 cannot do: decode a part of an image
#include <jerror.h>  // JWRN_JPEG_EOF
#include <jpeglib.h>
#include <cstdio>  // jpeglib.h uses FILE and size_t without including their headers

#include <algorithm>
#include <csetjmp>
#include <cstring>
#include <exception>

TABLIO_BEGIN_NAMESPACE

namespace detail {

[[noreturn]] TABLIO_COLD inline void bad_image(std::string_view source, std::string_view key,
                                               message expected, message found) {
  throw_format_error(source, std::nullopt, key, std::move(expected), std::move(found));
}

inline void check_image_size(std::uint64_t width, std::uint64_t height, std::string_view source,
                             std::string_view key) {
  if (width == 0 || height == 0 || width * height > max_image_pixels)
    bad_image(source, key, {"an image of 1 to ", decimal(max_image_pixels), " pixels"},
              {decimal(width), "x", decimal(height)});
}

// Reorders (H, W, 3) pixels as (3, H, W), in one pass. Through local pointers: stores of bytes
// may alias anything, so a loop over the vectors would reload them at every byte.
inline void to_channels_first(image& im) {
  if (im.channels != 3) return;
  thread_local std::vector<std::uint8_t> planes;
  const std::size_t area = std::size_t{im.height} * im.width;
  planes.resize(im.pixels.size());
  const std::uint8_t* __restrict from = im.pixels.data();
  std::uint8_t* __restrict first = planes.data();
  std::uint8_t* __restrict second = first + area;
  std::uint8_t* __restrict third = second + area;
  for (std::size_t i = 0; i < area; ++i, from += 3) {
    first[i] = from[0];
    second[i] = from[1];
    third[i] = from[2];
  }
  im.pixels.swap(planes);
}

// One TurboJPEG decompressor per thread, made on first use, and made again after an image it
// failed on (a handle that failed can give the next image no size).
class jpeg_decompressor {
 public:
  jpeg_decompressor() = default;
  ~jpeg_decompressor() { destroy(); }
  jpeg_decompressor(const jpeg_decompressor&) = delete;
  jpeg_decompressor& operator=(const jpeg_decompressor&) = delete;
  tjhandle get() noexcept {
    if (!handle_) handle_ = tjInitDecompress();
    return handle_;
  }
  void destroy() noexcept {
    if (handle_) tjDestroy(handle_);
    handle_ = nullptr;
  }
  static jpeg_decompressor& of_thread() {
    thread_local jpeg_decompressor d;
    return d;
  }

 private:
  tjhandle handle_ = nullptr;
};

// Pillow's draft: the largest of 8, 4, 2 that the image is at least that many times the size
// asked for, in both dimensions given.
inline int draft_scale(std::uint32_t width, std::uint32_t height, const image_options::size& at_least) {
  if (at_least.width == 0 && at_least.height == 0) return 1;
  std::uint32_t fits = ~std::uint32_t{0};
  if (at_least.width) fits = width / at_least.width;
  if (at_least.height) fits = std::min(fits, height / at_least.height);
  for (int s : {8, 4, 2})
    if (fits >= static_cast<std::uint32_t>(s)) return s;
  return 1;
}

// A part of a JPEG decoded through libjpeg, whose errors longjmp back here: their message is kept
// for the format_error thrown once it has; a warning that the data ended early is noted (the
// image is then refused, as Pillow refuses a truncated one), others are decoded past.
struct jpeg_reading {
  jpeg_error_mgr errors;  // first: libjpeg's pointer to it is one to this
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX] = {};
  bool cut_short = false;

  [[noreturn]] static void fail(j_common_ptr c) {
    auto* self = reinterpret_cast<jpeg_reading*>(c->err);
    (*c->err->format_message)(c, self->message);
    std::longjmp(self->jump, 1);
  }
  static void note(j_common_ptr c, int level) {
    auto* self = reinterpret_cast<jpeg_reading*>(c->err);
    if (level < 0 && c->err->msg_code == JWRN_JPEG_EOF) self->cut_short = true;
  }
};

// What decode_jpeg_part decodes: rows [y0, y1) and columns [x0, x1) of the image scaled by
// 1/scale, into `pixels` from its column `left` (at most x0: libjpeg crops at block edges).
struct jpeg_part {
  std::uint32_t scale = 1, x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  int color_space = JCS_RGB;
  std::uint32_t left = 0, stride = 0;  // set by the decoding
};

// Whether the JPEG being decoded has its end (EOI) in the data libjpeg has yet to read, so that
// decoding the rest could not find it cut short: the whole input already read (images of several
// scans are, at the start), the marker met by the entropy decoder, or a 0xFF 0xD9 further on,
// which in a scan's data (where 0xFF is followed by 0 or a restart marker) is only the end.
inline bool holds_its_end(jpeg_decompress_struct& cinfo) {
  if (jpeg_input_complete(&cinfo) || cinfo.unread_marker == 0xD9) return true;
  const std::string_view rest(reinterpret_cast<const char*>(cinfo.src->next_input_byte),
                              cinfo.src->bytes_in_buffer);
  return rest.rfind("\xFF\xD9") != std::string_view::npos;
}

// The libjpeg calls of decode_jpeg_part, apart: nothing here has a destructor for the jump to
// skip. Returns false with reading.message set on an error.
inline bool read_jpeg_part(jpeg_decompress_struct& cinfo, jpeg_reading& reading, std::string_view bytes,
                           jpeg_part& part, std::vector<std::uint8_t>& pixels) {
  if (setjmp(reading.jump)) return false;
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(bytes.data()),
               static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = static_cast<J_COLOR_SPACE>(part.color_space);
  cinfo.dct_method = JDCT_ISLOW;  // the accurate DCT, and smooth upsampling: Pillow's
  cinfo.scale_num = 1;
  cinfo.scale_denom = part.scale;
  jpeg_start_decompress(&cinfo);
  // Two columns either side: at the edge of a crop, smooth upsampling of 4:2:2 chroma lacks
  // its neighbour, and those columns would differ from the image decoded whole.
  JDIMENSION left = part.x0 >= 2 ? part.x0 - 2 : 0;
  JDIMENSION width = std::min<JDIMENSION>(part.x1 + 2, cinfo.output_width) - left;
  if (width < cinfo.output_width) jpeg_crop_scanline(&cinfo, &left, &width);
  part.left = left;
  part.stride = width * static_cast<std::uint32_t>(cinfo.output_components);
  pixels.resize(std::size_t{part.stride} * (part.y1 - part.y0));
  if (part.y0) jpeg_skip_scanlines(&cinfo, part.y0);
  while (cinfo.output_scanline < part.y1) {
    JSAMPROW row = pixels.data() + std::size_t{cinfo.output_scanline - part.y0} * part.stride;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  // The rows below are read only to find whether the image is cut short (Pillow refuses one):
  // not when the data is seen to hold its end further on.
  if (cinfo.output_scanline < cinfo.output_height && holds_its_end(cinfo)) return true;
  // Else they are skipped (entropy decoding alone) but for the last, which is decoded, since
  // libjpeg skips to the end without reading.
  if (cinfo.output_scanline + 1 < cinfo.output_height)
    jpeg_skip_scanlines(&cinfo, cinfo.output_height - cinfo.output_scanline - 1);
  if (cinfo.output_scanline < cinfo.output_height) {
    thread_local std::vector<std::uint8_t> last;
    last.resize(part.stride);
    JSAMPROW row = last.data();
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  return true;
}

// Decodes the part of a JPEG that `part` names, as TurboJPEG (and Pillow) decode it whole at
// that scale. Errors are format_errors naming source and key.
inline void decode_jpeg_part(std::string_view bytes, jpeg_part& part, std::vector<std::uint8_t>& pixels,
                             std::string_view source, std::string_view key) {
  jpeg_decompress_struct cinfo{};  // zeroed: destroying it before it is made frees nothing
  jpeg_reading reading;
  cinfo.err = jpeg_std_error(&reading.errors);
  reading.errors.error_exit = &jpeg_reading::fail;
  reading.errors.emit_message = &jpeg_reading::note;
  struct destroyed_on_exit {  // also when the part's storage cannot be had (bad_alloc)
    jpeg_decompress_struct& c;
    ~destroyed_on_exit() { jpeg_destroy_decompress(&c); }
  } destroy{cinfo};
  const bool read = read_jpeg_part(cinfo, reading, bytes, part, pixels);
  if (!read) bad_image(source, key, {"a whole JPEG image"}, {reading.message});
  if (reading.cut_short) bad_image(source, key, {"a whole JPEG image"}, {"Premature end of JPEG file"});
}

// Decodes a JPEG into out; with `transform`, only the part of it the transform reads (at a DCT
// scale where it allows one), transformed.
inline void decode_jpeg(std::string_view bytes, image& out, const image_options& options,
                        std::string_view source, std::string_view key,
                        const image_transform* transform = nullptr) {
  jpeg_decompressor& decompressor = jpeg_decompressor::of_thread();
  tjhandle tj = decompressor.get();
  if (!tj) bad_image(source, key, {"a JPEG decompressor"}, {tjGetErrorStr2(nullptr)});
  struct fresh_after_failure {
    jpeg_decompressor& d;
    int uncaught = std::uncaught_exceptions();
    ~fresh_after_failure() {
      if (std::uncaught_exceptions() > uncaught) d.destroy();
    }
  } fresh{decompressor};
  auto data = reinterpret_cast<const unsigned char*>(bytes.data());
  const auto size = static_cast<unsigned long>(bytes.size());
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  // A warning (stray bytes before a marker) leaves the header read: Pillow decodes past it.
  if (tjDecompressHeader3(tj, data, size, &width, &height, &subsampling, &colorspace) != 0 &&
      tjGetErrorCode(tj) != TJERR_WARNING)
    bad_image(source, key, {"a JPEG image"}, {tjGetErrorStr2(tj)});
  if (width <= 0 || height <= 0) bad_image(source, key, {"a JPEG image"}, {"no frame header"});
  check_image_size(static_cast<std::uint64_t>(width), static_cast<std::uint64_t>(height), source, key);
  if (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK)
    bad_image(source, key, {"a JPEG image in RGB, YCbCr or gray"},
              {"one in CMYK, which Pillow converts to RGB by its own formula"});
  const bool gray = colorspace == TJCS_GRAY;
  const unsigned channels = options.channels == 0 ? (gray ? 1 : 3) : options.channels;
  if (channels == 1 && !gray) bad_image(source, key, {"a gray JPEG image for channels=1"}, {"a colour one"});
  if (transform) {
    const auto w = static_cast<std::uint32_t>(width), h = static_cast<std::uint32_t>(height);
    check_transform(*transform, channels, w, h, source, key);
    const transform_plan p = plan_transform(*transform, w, h, key);
    jpeg_part part{p.scale,     p.source.x0,
                   p.source.y0, p.source.x1,
                   p.source.y1, channels == 1 ? JCS_GRAYSCALE : options.bgr ? JCS_EXT_BGR : JCS_RGB};
    thread_local std::vector<std::uint8_t> pixels;
    decode_jpeg_part(bytes, part, pixels, source, key);
    const pixel_region region{pixels.data() + std::size_t{p.source.x0 - part.left} * channels, part.stride,
                              p.source.x1 - p.source.x0, p.source.y1 - p.source.y0, channels};
    return apply_transform(*transform, p, region, options.channels_first, out, options.bgr && channels == 3);
  }
  const int s =
      draft_scale(static_cast<std::uint32_t>(width), static_cast<std::uint32_t>(height), options.at_least);
  const int w = (width + s - 1) / s, h = (height + s - 1) / s;
  out.width = static_cast<std::uint32_t>(w);
  out.height = static_cast<std::uint32_t>(h);
  out.channels = channels;
  out.bgr = options.bgr && channels == 3;
  out.pixels.resize(std::size_t{out.width} * out.height * channels);
  const int format = channels == 1 ? TJPF_GRAY : options.bgr ? TJPF_BGR : TJPF_RGB;
  // The accurate DCT and smooth upsampling (Pillow's). Of libjpeg's warnings, Pillow refuses
  // an image cut short ("image file is truncated") and decodes past the others (corrupt data
  // in a segment), as is done here.
  if (tjDecompress2(tj, data, size, out.pixels.data(), w, 0, h, format, TJFLAG_ACCURATEDCT) != 0) {
    const std::string_view why = tjGetErrorStr2(tj);
    if (tjGetErrorCode(tj) != TJERR_WARNING ||
        why.find("Premature end of JPEG file") != std::string_view::npos)
      bad_image(source, key, {"a whole JPEG image"}, {why});
  }
}

// libpng reports errors by longjmp: it reads from here, and its messages are kept for the
// format_error thrown once it has jumped back.
struct png_reading {
  std::string_view bytes;
  std::size_t at = 0;
  char message[160] = {};

  static void read(png_structp png, png_bytep out, png_size_t n) {
    auto* self = static_cast<png_reading*>(png_get_io_ptr(png));
    if (self->bytes.size() - self->at < n) png_error(png, "the image is cut short");
    std::memcpy(out, self->bytes.data() + self->at, n);
    self->at += n;
  }
  [[noreturn]] static void fail(png_structp png, png_const_charp text) {
    auto* self = static_cast<png_reading*>(png_get_error_ptr(png));
    std::snprintf(self->message, sizeof self->message, "%s", text);
    png_longjmp(png, 1);
  }
  static void warn(png_structp, png_const_charp) {}  // Pillow reads on past warnings too
};

struct png_structs {
  png_structp png = nullptr;
  png_infop info = nullptr;
  ~png_structs() { png_destroy_read_struct(&png, info ? &info : nullptr, nullptr); }
};

inline void decode_png(std::string_view bytes, image& out, const image_options& options,
                       std::string_view source, std::string_view key) {
  // Everything with a destructor is made before setjmp, which libpng's errors jump back to.
  png_reading reading{bytes};
  png_structs s;
  std::vector<png_bytep> rows;
  s.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &reading, &png_reading::fail, &png_reading::warn);
  if (!s.png || !(s.info = png_create_info_struct(s.png)))
    bad_image(source, key, {"memory to read a PNG image"}, {"none"});
  if (setjmp(png_jmpbuf(s.png))) bad_image(source, key, {"a whole PNG image"}, {reading.message});
  png_set_read_fn(s.png, &reading, &png_reading::read);
  png_read_info(s.png, s.info);
  png_uint_32 width, height;
  int depth, color, interlace;
  png_get_IHDR(s.png, s.info, &width, &height, &depth, &color, &interlace, nullptr, nullptr);
  check_image_size(width, height, source, key);
  const bool gray = (color & PNG_COLOR_MASK_COLOR) == 0;
  if (color == PNG_COLOR_TYPE_GRAY && depth == 16)
    bad_image(source, key, {"a PNG image of 8-bit gray or colour"},
              {"16-bit gray, which Pillow reads as 32-bit integers and clips"});
  const unsigned channels = options.channels == 0 ? (gray ? 1 : 3) : options.channels;
  if (channels == 1 && !gray) bad_image(source, key, {"a gray PNG image for channels=1"}, {"a colour one"});
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(s.png);  // transparency left out
  if (gray && depth < 8) png_set_expand_gray_1_2_4_to_8(s.png);
  if (depth == 16) png_set_strip_16(s.png);  // the high byte, as Pillow's ";16B" modes take
  png_set_strip_alpha(s.png);
  if (gray && channels == 3) png_set_gray_to_rgb(s.png);
  if (options.bgr && channels == 3) png_set_bgr(s.png);
  png_set_interlace_handling(s.png);
  png_read_update_info(s.png, s.info);
  if (png_get_rowbytes(s.png, s.info) != std::size_t{width} * channels)
    bad_image(source, key, {"a PNG image tablio can read"},
              {"colour type ", decimal(color), ", depth ", decimal(depth)});
  out.width = width;
  out.height = height;
  out.channels = channels;
  out.bgr = options.bgr && channels == 3;
  out.pixels.resize(std::size_t{width} * height * channels);
  rows.resize(height);
  for (std::size_t y = 0; y < height; ++y) rows[y] = out.pixels.data() + y * width * channels;
  png_read_image(s.png, rows.data());
}

}  // namespace detail

namespace detail {

inline void decode_pixels(std::string_view bytes, image& out, const image_options& options,
                          std::string_view source, std::string_view key) {
  if (is_jpeg(bytes))
    decode_jpeg(bytes, out, options, source, key);
  else if (is_png(bytes))
    decode_png(bytes, out, options, source, key);
  else
    bad_image(source, key, {"a JPEG or PNG image"}, {bytes.empty() ? "no bytes" : "other bytes"});
  out.values.clear();
  out.channels_first = false;
}

}  // namespace detail

// Decodes a JPEG or PNG image into out, as described in types/image.hpp, and applies the
// options' transform with the draws for `key`. Bad, cut or refused images, and images a
// transform cannot take (smaller than Caffe's crop), throw format_error naming source and key;
// channels other than 0, 1 or 3 throw usage_error. Images of more than twice Pillow's
// MAX_IMAGE_PIXELS are refused.
inline void decode_image(std::string_view bytes, image& out, const image_options& options,
                         std::string_view source, std::string_view key = {}) {
  if (options.channels != 0 && options.channels != 1 && options.channels != 3)
    throw_usage_error({"an image has 0 (as stored), 1 or 3 channels, not ", decimal(options.channels)});
  if (options.transform && options.transform->any()) {
    const bool drafted = options.at_least.width || options.at_least.height;
    if (is_jpeg(bytes) && !drafted)
      return detail::decode_jpeg(bytes, out, options, source, key, options.transform.get());
    thread_local image decoded;
    detail::decode_pixels(bytes, decoded, options, source, key);
    transform_image(decoded, *options.transform, options.channels_first, out, source, key);
    return;
  }
  detail::decode_pixels(bytes, out, options, source, key);
  out.channels_first = options.channels_first;
  if (options.channels_first) detail::to_channels_first(out);
}

TABLIO_END_NAMESPACE
