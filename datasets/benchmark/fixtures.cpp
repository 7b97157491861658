// Generates the fixtures of datasets/fixtures from opencv-doc photos (see fixtures.h).
#include "datasets/benchmark/fixtures.h"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "compiler_core/image/bayer.h"
#include "compiler_core/image/image_io.h"
#include "compiler_core/ir/error.h"
#include "datasets/benchmark/resample.h"

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#endif
#include <stb/stb_image_write.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

namespace stipple::dataset {
namespace fs = std::filesystem;
namespace {

// 8-bit RGB buffer to interleaved bytes, for stb_image_write.
std::vector<unsigned char> interleave(const Buffer& rgb) {
  const int64_t w = rgb.extent(0), h = rgb.extent(1);
  std::vector<unsigned char> out(static_cast<size_t>(w * h * 3));
  for (int64_t p = 0; p < w * h; ++p) {
    for (int c = 0; c < 3; ++c) out[p * 3 + c] = rgb.data_as<uint8_t>()[p + c * rgb.dim(2).stride];
  }
  return out;
}

void write_jpeg(const std::string& path, const Buffer& rgb) {
  const std::vector<unsigned char> pixels = interleave(rgb);
  // Quality 90: small, yet close enough to the PNG that tests comparing decodes stay tight.
  if (!stbi_write_jpg(path.c_str(), static_cast<int>(rgb.extent(0)),
                      static_cast<int>(rgb.extent(1)), 3, pixels.data(), 90)) {
    throw UserError("cannot write '" + path + "'");
  }
}

}  // namespace

const std::vector<FixtureSpec>& fixture_specs() {
  // Recipes name the operation make_fixtures performs for the file (first word).
  static const std::vector<FixtureSpec> specs = {
      {"man-made-low-64x48.png", "data/home.jpg", "rgb8: centre crop 4:3, resize", 64, 48, 3, 8},
      {"man-made-high-64x48.png", "data/board.jpg", "rgb8: centre crop 4:3, resize", 64, 48, 3, 8},
      {"natural-low-64x48.png", "data/orange.jpg", "rgb8: centre crop 4:3, resize", 64, 48, 3, 8},
      {"natural-high-64x48.png", "data/baboon.jpg", "rgb8: centre crop 4:3, resize", 64, 48, 3, 8},
      {"people-256x192.png", "data/messi5.jpg", "rgb8: centre crop 4:3, resize", 256, 192, 3, 8},
      {"natural-820x614.png", "data/squirrel_cls.jpg", "rgb8: centre crop 820:614, resize", 820,
       614, 3, 8},
      {"gray-64x48.png", "data/baboon.jpg", "gray8: rgb8 fixture, then Rec. 601 luma", 64, 48, 1,
       8},
      {"rgb16-64x48.png", "data/baboon.jpg", "rgb16: crop and resize filtered at 16 bits", 64, 48,
       3, 16},
      {"bayer-rggb-64x48.png", "data/baboon.jpg",
       "bayer: RGGB mosaic of natural-high-64x48.png (R at even x, even y; B at odd, odd)", 64, 48,
       1, 8},
      {"natural-high-64x48.jpg", "data/baboon.jpg",
       "jpeg: natural-high-64x48.png as JPEG, "
       "quality 90 (stb_image_write, 4:2:0 chroma)",
       64, 48, 3, 8},
  };
  return specs;
}

void make_fixtures(const std::string& source_dir, const std::string& out_dir) {
  fs::create_directories(out_dir);
  for (const FixtureSpec& spec : fixture_specs()) {
    const std::string src = (fs::path(source_dir) / spec.source).string();
    if (!fs::is_regular_file(src)) {
      throw UserError("fixture source '" + spec.source + "' not found in '" + source_dir + "'");
    }
    const Buffer photo = read_image(src);
    const std::string out = (fs::path(out_dir) / spec.file).string();
    const std::string kind = spec.recipe.substr(0, spec.recipe.find(':'));
    if (kind == "rgb8") {
      write_png(out, crop_resize_rgb8(photo, spec.width, spec.height));
    } else if (kind == "gray8") {
      write_png(out, rgb8_to_gray8(crop_resize_rgb8(photo, spec.width, spec.height)));
    } else if (kind == "rgb16") {
      write_png(out, crop_resize_rgb16(photo, spec.width, spec.height));
    } else if (kind == "bayer") {
      write_png(out, rgb8_to_bayer_rggb(crop_resize_rgb8(photo, spec.width, spec.height)));
    } else if (kind == "jpeg") {
      write_jpeg(out, crop_resize_rgb8(photo, spec.width, spec.height));
    } else {
      STIPPLE_INTERNAL_CHECK(false, "unknown fixture recipe '" + spec.recipe + "'");
    }
    spdlog::info("wrote {} from {} ({}x{}, {} channel(s), {} bit)", out, spec.source, spec.width,
                 spec.height, spec.channels, spec.bits);
  }
}

}  // namespace stipple::dataset
