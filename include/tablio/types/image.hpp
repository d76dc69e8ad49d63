// Images decoded to pixels: JPEG through libjpeg-turbo's TurboJPEG, PNG through libpng (the
// tablio::jpeg component), to 8-bit arrays with the pixels Pillow gives for the same image
// converted to RGB or L, so that a model trained on either sees the same input:
//
//   tablio::image im;
//   tablio::decode_image(bytes, im, {.channels = 3, .at_least = {224, 224}}, "shard-0.tar", key);
//
// JPEG: the accurate integer DCT and smooth chroma upsampling, as Pillow's decoder leaves them;
// at_least scales the decoding by 1/2, 1/4 or 1/8 in the DCT, as Pillow's Image.draft does for
// that size, so that a large photo is not decoded whole to be shrunk. PNG: palette, gray of
// 1, 2 or 4 bits and 16-bit color are expanded or reduced as Pillow reads them; alpha is
// dropped, as Pillow's convert("RGB") drops it. What Pillow converts by its own formulas
// (CMYK JPEG, 16-bit gray PNG) is refused rather than given other pixels. Bad or cut images are
// a format_error naming the file and key; a JPEG with corrupt data that libjpeg decodes past
// with a warning is decoded, as Pillow decodes it.
#pragma once

#include <tablio/types/image_types.hpp>

#if defined(TABLIO_WITH_JPEG)
#include <tablio/types/image_decoding.hpp>
#endif
