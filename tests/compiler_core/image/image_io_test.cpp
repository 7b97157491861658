// PNG and JPEG reading and writing, checked against stb_image and stb_image_write as
// independent encoders and decoders, and the photo <-> buffer conversions with their
// error messages.
#include "compiler_core/image/image_io.h"

#include <gtest/gtest.h>
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>
#include <unistd.h>

#include <cstdio>
// jpeglib.h needs FILE and size_t declared before it.
#include <jpeglib.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <string>

#include "compiler_core/ir/error.h"
#include "tests/common/user_error_message.h"

namespace stipple {
namespace {

namespace fs = std::filesystem;

class ImageIo : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() /
           ("stipple_image_test_" + std::to_string(getpid()) + "_" + std::to_string(rd()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

Buffer random_photo(ScalarType type, int64_t w, int64_t h, int64_t c, uint32_t seed) {
  Buffer b(type, {w, h, c});
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(0, type == ScalarType::UInt8 ? 255 : 65535);
  for (int64_t i = 0; i < b.element_count(); ++i) b.set_flat(i, value(rng));
  return b;
}

using testing_common::message_of;

InputDecl input(std::string name, Type type, std::vector<std::string> dims) {
  InputDecl d;
  d.name = std::move(name);
  d.type = type;
  d.dim_names = std::move(dims);
  return d;
}

TEST_F(ImageIo, PngRoundTripsExactly) {
  for (ScalarType type : {ScalarType::UInt8, ScalarType::UInt16}) {
    for (int64_t channels : {1, 2, 3, 4}) {
      SCOPED_TRACE(to_string(Type(type)) + " with " + std::to_string(channels) + " channels");
      Buffer photo = random_photo(type, 7, 5, channels, static_cast<uint32_t>(channels));
      std::string file = path("round_trip.png");
      write_png(file, photo);
      Buffer back = read_image(file);
      ASSERT_EQ(back.dimensions(), 3);
      EXPECT_TRUE(back.same_contents(photo));
    }
  }
}

TEST_F(ImageIo, TwoDimensionalImagesAreWrittenAsGray) {
  Buffer gray(ScalarType::UInt16, {3, 2});
  for (int64_t i = 0; i < 6; ++i) gray.set_flat(i, 1000 * i + 1);
  write_png(path("gray.png"), gray);
  Buffer back = read_image(path("gray.png"));
  ASSERT_EQ(back.dimensions(), 3);
  EXPECT_EQ(back.extent(0), 3);
  EXPECT_EQ(back.extent(1), 2);
  EXPECT_EQ(back.extent(2), 1);
  EXPECT_EQ(back.type(), ScalarType::UInt16);
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(back.get_flat(i), 1000 * i + 1);
}

TEST_F(ImageIo, WrittenPngIsWhatAnIndependentDecoderSees) {
  // A transposition bug shared by writer and reader would survive a round trip; stb_image
  // decoding our file catches it.
  Buffer rgb = random_photo(ScalarType::UInt8, 5, 4, 3, 11);
  write_png(path("rgb8.png"), rgb);
  int w, h, n;
  stbi_uc* pixels = stbi_load(path("rgb8.png").c_str(), &w, &h, &n, 0);
  ASSERT_NE(pixels, nullptr);
  EXPECT_EQ(stbi_is_16_bit(path("rgb8.png").c_str()), 0);
  ASSERT_EQ(w, 5);
  ASSERT_EQ(h, 4);
  ASSERT_EQ(n, 3);
  for (int64_t y = 0; y < 4; ++y) {
    for (int64_t x = 0; x < 5; ++x) {
      for (int64_t c = 0; c < 3; ++c) {
        EXPECT_EQ(pixels[(y * 5 + x) * 3 + c], rgb.get(std::vector<int64_t>{x, y, c}));
      }
    }
  }
  stbi_image_free(pixels);

  Buffer rgba = random_photo(ScalarType::UInt16, 3, 6, 4, 12);
  write_png(path("rgba16.png"), rgba);
  EXPECT_EQ(stbi_is_16_bit(path("rgba16.png").c_str()), 1);
  stbi_us* wide = stbi_load_16(path("rgba16.png").c_str(), &w, &h, &n, 0);
  ASSERT_NE(wide, nullptr);
  ASSERT_EQ(w, 3);
  ASSERT_EQ(h, 6);
  ASSERT_EQ(n, 4);
  for (int64_t y = 0; y < 6; ++y) {
    for (int64_t x = 0; x < 3; ++x) {
      for (int64_t c = 0; c < 4; ++c) {
        EXPECT_EQ(wide[(y * 3 + x) * 4 + c], rgba.get(std::vector<int64_t>{x, y, c}));
      }
    }
  }
  stbi_image_free(wide);
}

TEST_F(ImageIo, ReadsPngFromAnotherEncoder) {
  // 2x2 gray + alpha written by stb_image_write, interleaved: (value, alpha) per pixel.
  const unsigned char pixels[] = {10, 255, 20, 128, 30, 0, 40, 64};
  ASSERT_NE(stbi_write_png(path("ga.png").c_str(), 2, 2, 2, pixels, 4), 0);
  Buffer photo = read_image(path("ga.png"));
  EXPECT_EQ(photo.type(), ScalarType::UInt8);
  ASSERT_EQ(photo.extent(2), 2);
  EXPECT_EQ(photo.get(std::vector<int64_t>{1, 0, 0}), 20);
  EXPECT_EQ(photo.get(std::vector<int64_t>{1, 0, 1}), 128);
  EXPECT_EQ(photo.get(std::vector<int64_t>{0, 1, 0}), 30);
  EXPECT_EQ(photo.get(std::vector<int64_t>{1, 1, 1}), 64);
}

TEST_F(ImageIo, ReadsJpeg) {
  // A smooth colour gradient survives JPEG at quality 95 to within a few levels.
  const int w = 32, h = 16;
  std::vector<unsigned char> rgb(w * h * 3);
  auto expected = [&](int x, int y, int c) {
    return c == 0 ? 4 * x + 40 : c == 1 ? 8 * y + 60 : 128;
  };
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int c = 0; c < 3; ++c)
        rgb[(y * w + x) * 3 + c] = static_cast<unsigned char>(expected(x, y, c));
    }
  }
  ASSERT_NE(stbi_write_jpg(path("photo.jpg").c_str(), w, h, 3, rgb.data(), 95), 0);
  Buffer photo = read_image(path("photo.jpg"));
  EXPECT_EQ(photo.type(), ScalarType::UInt8);
  ASSERT_EQ(photo.dimensions(), 3);
  EXPECT_EQ(photo.extent(0), w);
  EXPECT_EQ(photo.extent(1), h);
  EXPECT_EQ(photo.extent(2), 3);
  double worst = 0;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int c = 0; c < 3; ++c) {
        double got = photo.get(std::vector<int64_t>{x, y, c});
        worst = std::max(worst, std::fabs(got - expected(x, y, c)));
      }
    }
  }
  EXPECT_LE(worst, 8.0);

  // stb_image_write stores even one-channel data as YCbCr, so a JPEG is read with the
  // channels it was encoded with: 3, all equal for gray input.
  std::vector<unsigned char> gray(w * h);
  for (int i = 0; i < w * h; ++i) gray[i] = static_cast<unsigned char>(100 + i % w);
  ASSERT_NE(stbi_write_jpg(path("ycc.jpg").c_str(), w, h, 1, gray.data(), 95), 0);
  Buffer g = read_image(path("ycc.jpg"));
  ASSERT_EQ(g.extent(2), 3);
  EXPECT_NEAR(g.get(std::vector<int64_t>{31, 5, 0}), 131, 4);
  EXPECT_EQ(g.get(std::vector<int64_t>{31, 5, 0}), g.get(std::vector<int64_t>{31, 5, 2}));
}

// A photo's JPEG is decoded as libjpeg(-turbo) decodes it (the decoder of OpenCV, Pillow
// and ImageMagick), not as stb_image does, which differs by a level or two a sample.
// Reference: the fixture decoded here with libjpeg's own API and defaults.
TEST_F(ImageIo, JpegPixelsAreLibjpegsNotStbImages) {
  const std::string file =
      std::string(STIPPLE_SOURCE_DIR) + "/datasets/fixtures/natural-high-64x48.jpg";
  FILE* in = std::fopen(file.c_str(), "rb");
  ASSERT_NE(in, nullptr);
  jpeg_decompress_struct cinfo;
  jpeg_error_mgr jerr;
  cinfo.err = jpeg_std_error(&jerr);
  jpeg_create_decompress(&cinfo);
  jpeg_stdio_src(&cinfo, in);
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = JCS_RGB;
  jpeg_start_decompress(&cinfo);
  const int w = int(cinfo.output_width), h = int(cinfo.output_height);
  std::vector<unsigned char> want(size_t(w) * h * 3);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = want.data() + size_t(cinfo.output_scanline) * w * 3;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  std::fclose(in);

  Buffer photo = read_image(file);
  ASSERT_EQ(photo.extent(0), w);
  ASSERT_EQ(photo.extent(1), h);
  ASSERT_EQ(photo.extent(2), 3);
  int x_stb = 0, y_stb = 0, n_stb = 0;
  stbi_uc* stb = stbi_load(file.c_str(), &x_stb, &y_stb, &n_stb, 3);
  ASSERT_NE(stb, nullptr);
  int differ_from_stb = 0;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int c = 0; c < 3; ++c) {
        const size_t i = (size_t(y) * w + x) * 3 + c;
        ASSERT_EQ(photo.get(std::vector<int64_t>{x, y, c}), want[i]) << x << "," << y << "," << c;
        differ_from_stb += stb[i] != want[i];
        EXPECT_LE(std::abs(int(stb[i]) - int(want[i])), 4);
      }
    }
  }
  stbi_image_free(stb);
  EXPECT_GT(differ_from_stb, 0);  // the decoders do differ: the switch is visible

  // A corrupt JPEG says which library refused it.
  std::ifstream whole(file, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(whole)), {});
  // Cut in its tables, and cut in its pixel data (which libjpeg alone would decode with
  // gray rows and a warning).
  for (size_t keep : {size_t{300}, bytes.size() * 3 / 4}) {
    std::ofstream(path("cut.jpg"), std::ios::binary | std::ios::trunc) << bytes.substr(0, keep);
    const std::string cut = message_of([&] { read_image(path("cut.jpg")); });
    EXPECT_EQ(cut.rfind("cannot read image '" + path("cut.jpg") +
                            "': corrupt or unsupported JPEG (libjpeg: ",
                        0),
              0u)
        << keep << ": " << cut;
  }
}

// Writes a true one-component JPEG with libjpeg, which stb_image_write cannot produce.
void write_gray_jpeg(const std::string& file, int w, int h, const unsigned char* pixels) {
  FILE* out = std::fopen(file.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  jpeg_compress_struct cinfo;
  jpeg_error_mgr jerr;
  cinfo.err = jpeg_std_error(&jerr);
  jpeg_create_compress(&cinfo);
  jpeg_stdio_dest(&cinfo, out);
  cinfo.image_width = static_cast<JDIMENSION>(w);
  cinfo.image_height = static_cast<JDIMENSION>(h);
  cinfo.input_components = 1;
  cinfo.in_color_space = JCS_GRAYSCALE;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, 95, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<unsigned char*>(pixels + cinfo.next_scanline * w);
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::fclose(out);
}

TEST_F(ImageIo, ReadsGrayJpegAsOneChannel) {
  const int w = 24, h = 8;
  std::vector<unsigned char> gray(w * h);
  for (int i = 0; i < w * h; ++i) gray[i] = static_cast<unsigned char>(50 + 5 * (i % w));
  write_gray_jpeg(path("gray.jpg"), w, h, gray.data());
  Buffer g = read_image(path("gray.jpg"));
  EXPECT_EQ(g.type(), ScalarType::UInt8);
  ASSERT_EQ(g.dimensions(), 3);
  EXPECT_EQ(g.extent(0), w);
  EXPECT_EQ(g.extent(1), h);
  EXPECT_EQ(g.extent(2), 1);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      EXPECT_NEAR(g.get(std::vector<int64_t>{x, y, 0}), 50 + 5 * x, 6) << x << "," << y;
    }
  }
}

TEST_F(ImageIo, ReadErrorsNameTheFile) {
  std::string missing = path("missing.png");
  EXPECT_EQ(message_of([&] { read_image(missing); }),
            "cannot read image '" + missing + "': No such file or directory");

  std::ofstream(path("notes.txt")) << "not an image at all";
  EXPECT_EQ(message_of([&] { read_image(path("notes.txt")); }),
            "cannot read image '" + path("notes.txt") + "': not a PNG or JPEG file");

  // A valid PNG cut short after its header.
  write_png(path("full.png"), random_photo(ScalarType::UInt8, 16, 16, 3, 5));
  std::string bytes;
  {
    std::ifstream in(path("full.png"), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::ofstream(path("cut.png"), std::ios::binary) << bytes.substr(0, 40);
  std::string cut = message_of([&] { read_image(path("cut.png")); });
  EXPECT_EQ(
      cut.rfind("cannot read image '" + path("cut.png") + "': corrupt or unsupported image", 0), 0u)
      << cut;

  EXPECT_EQ(message_of([&] { read_image(dir_.string()); }),
            "cannot read image '" + dir_.string() + "': it is a directory");
}

// The first 33 bytes of a PNG: signature and IHDR (with its CRC, computed here).
std::string png_header(uint32_t width, uint32_t height, int depth, int color) {
  std::string chunk = "IHDR";
  for (uint32_t v : {width, height}) {
    for (int shift = 24; shift >= 0; shift -= 8) chunk += static_cast<char>((v >> shift) & 0xff);
  }
  chunk += {static_cast<char>(depth), static_cast<char>(color), 0, 0, 0};
  uint32_t crc = 0xffffffffu;  // CRC-32 of the chunk type and data (PNG spec, annex D)
  for (char c : chunk) {
    crc ^= static_cast<unsigned char>(c);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
  }
  crc ^= 0xffffffffu;
  std::string out = "\x89PNG\r\n\x1a\n";
  out += std::string("\0\0\0\x0d", 4) + chunk;
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((crc >> shift) & 0xff);
  return out;
}

// A 20000x20000 RGB 16-bit PNG (what Stipple wrote for a large f32 output) was "stb_image:
// unknown image type" on reading; the size limit is now stated, and the writer refuses
// what the reader would.
TEST_F(ImageIo, ImagesOverTheDecodedLimitAreRefusedWithTheNumbers) {
  std::ofstream(path("huge.png"), std::ios::binary) << png_header(20000, 20000, 16, 2);
  EXPECT_EQ(message_of([&] { read_image(path("huge.png")); }),
            "cannot read image '" + path("huge.png") +
                "': 20000x20000 with 3 channel(s) of 16 bit(s) is 2400000000 bytes decoded, over "
                "the limit of 1 GiB for an image (width x height x channels x bytes per sample)");
  EXPECT_EQ(image_size_problem(20000, 20000, 3, 2),
            "20000x20000 with 3 channel(s) of 16 bit(s) is 2400000000 bytes decoded, over the "
            "limit of 1 GiB for an image (width x height x channels x bytes per sample)");
  EXPECT_EQ(image_size_problem(1 << 16, 1, 1, 1), "");

  // The rule against stb_image's own: whatever it accepts stb_image reads (its PNG
  // header scan: 2^30 / width / channels >= height; its 16-bit allocation: bytes < 2^31),
  // never more than the stated 1 GiB, and the tallest image of each width within it passes.
  std::mt19937_64 rng(11);
  for (int i = 0; i < 20000; ++i) {
    const int64_t w = 1 + int64_t(rng() % 100000), c = 1 + int64_t(rng() % 4);
    const int bytes = 1 + int(rng() % 2);
    const int64_t limit_h = (int64_t{1} << 30) / bytes / w / c;
    for (int64_t h : {limit_h - 1, limit_h, limit_h + 1}) {
      if (h < 1) continue;
      const bool ok = image_size_problem(w, h, c, bytes).empty();
      const bool stb_ok =
          (int64_t{1} << 30) / w / c >= h && w * h * c * bytes <= int64_t{INT32_MAX};
      if (ok) {
        EXPECT_TRUE(stb_ok) << w << "x" << h << "x" << c << "x" << bytes;
        EXPECT_LE(w * h * c * bytes, int64_t{1} << 30) << w << "x" << h << "x" << c;
      }
      if (h == limit_h) {
        EXPECT_TRUE(ok) << w << "x" << h << "x" << c << "x" << bytes;
      }
    }
  }
}

TEST_F(ImageIo, AnEndlessDeviceIsNotAnImageAndFailsAtOnce) {
  for (const char* device : {"/dev/zero", "/dev/urandom"}) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(message_of([&] { read_image(device); }),
              "cannot read image '" + std::string(device) + "': not a PNG or JPEG file");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  }
}

TEST_F(ImageIo, WriteErrors) {
  EXPECT_EQ(message_of([&] {
              write_png(path("f.png"), Buffer(ScalarType::Float32, {2, 2}));
            }),
            "cannot write image '" + path("f.png") + "': a PNG holds u8 or u16 samples, not f32");
  EXPECT_EQ(message_of([&] {
              write_png(path("c5.png"), Buffer(ScalarType::UInt8, {2, 2, 5}));
            }),
            "cannot write image '" + path("c5.png") +
                "': a PNG needs (x, y) or (x, y, c) with 1 to 4 channels, not u8 2x2x5");
  EXPECT_THROW(write_png(path("empty.png"), Buffer(ScalarType::UInt8, {0, 2, 3})), UserError);
  std::string nowhere = path("no/such/dir/x.png");
  EXPECT_EQ(message_of([&] {
              write_png(nowhere, Buffer(ScalarType::UInt8, {2, 2}));
            }),
            "cannot write image '" + nowhere + "': No such file or directory");
  EXPECT_FALSE(fs::exists(path("f.png")));
}

TEST(PhotoToInput, ScalesIntoFloatInputs) {
  Buffer photo8(ScalarType::UInt8, {2, 1, 3});
  photo8.set_flat(0, 255);
  photo8.set_flat(1, 128);
  photo8.set_flat(5, 1);
  Buffer f = photo_to_input(photo8, input("in", Float32(), {"x", "y", "c"}), "a.png");
  EXPECT_EQ(f.type(), ScalarType::Float32);
  ASSERT_EQ(f.dimensions(), 3);
  EXPECT_EQ(f.extent(2), 3);
  EXPECT_EQ(f.get_flat(0), 1.0);  // exactly 1.0f
  EXPECT_EQ(f.get_flat(1), static_cast<float>(128.0 / 255.0));
  EXPECT_EQ(f.get_flat(5), static_cast<float>(1.0 / 255.0));
  EXPECT_EQ(f.get_flat(2), 0.0);

  Buffer photo16(ScalarType::UInt16, {2, 2, 1});
  photo16.set_flat(0, 65535);
  photo16.set_flat(3, 32768);
  Buffer g = photo_to_input(photo16, input("in", Float32(), {"x", "y"}), "b.png");
  ASSERT_EQ(g.dimensions(), 2);  // a 2-D input takes a gray photo as (x, y)
  EXPECT_EQ(g.get_flat(0), 1.0);
  EXPECT_EQ(g.get_flat(3), static_cast<float>(32768.0 / 65535.0));
  Buffer d = photo_to_input(photo16, input("in", Float64(), {"x", "y", "c"}), "b.png");
  EXPECT_EQ(d.type(), ScalarType::Float64);
  EXPECT_EQ(d.get_flat(3), 32768.0 / 65535.0);
}

TEST(PhotoToInput, IntegerInputsKeepValues) {
  Buffer photo8(ScalarType::UInt8, {3, 1, 1});
  photo8.set_flat(0, 255);
  photo8.set_flat(1, 7);
  Buffer u8 = photo_to_input(photo8, input("in", UInt8(), {"x", "y"}), "a.png");
  EXPECT_EQ(u8.type(), ScalarType::UInt8);
  EXPECT_EQ(u8.get_flat(0), 255);
  EXPECT_EQ(u8.get_flat(1), 7);
  Buffer u16 = photo_to_input(photo8, input("in", UInt16(), {"x", "y", "c"}), "a.png");
  EXPECT_EQ(u16.type(), ScalarType::UInt16);
  EXPECT_EQ(u16.get_flat(0), 255);  // kept, not rescaled to 16 bits
  Buffer photo16(ScalarType::UInt16, {1, 1, 1});
  photo16.set_flat(0, 40000);
  EXPECT_EQ(photo_to_input(photo16, input("in", UInt16(), {"x", "y"}), "b.png").get_flat(0), 40000);
  EXPECT_EQ(photo_to_input(photo16, input("in", Int32(), {"x", "y"}), "b.png").get_flat(0), 40000);
}

TEST(PhotoToInput, Errors) {
  Buffer rgb(ScalarType::UInt8, {2, 2, 3});
  EXPECT_EQ(message_of([&] {
              photo_to_input(rgb, input("in", Float32(), {"x", "y"}), "photo.jpg");
            }),
            "input 'in' is 2-D but 'photo.jpg' has 3 channels; declare the input as [x, y, c] "
            "or pass a gray image");
  Buffer wide(ScalarType::UInt16, {2, 2, 1});
  EXPECT_EQ(message_of([&] {
              photo_to_input(wide, input("in", UInt8(), {"x", "y"}), "deep.png");
            }),
            "'deep.png' is 16-bit: a 16-bit image cannot go into u8 input 'in'; declare it u16 "
            "or f32");
  EXPECT_EQ(message_of([&] {
              photo_to_input(rgb, input("in", Float32(), {"x", "y", "c", "t"}), "p.png");
            }),
            "input 'in' is 4-D but a photo such as 'p.png' can only go into a 2-D or 3-D input");
  EXPECT_EQ(message_of([&] {
              photo_to_input(Buffer(ScalarType::Float32, {2, 2, 3}),
                             input("in", Float32(), {"x", "y", "c"}), "p.png");
            }),
            "'p.png' is not an 8- or 16-bit photo");
}

TEST(OutputToPhoto, FloatsClampAndRoundToSixteenBits) {
  Buffer out(ScalarType::Float32, {6, 1});
  const double values[] = {
      -0.5, 1.5, 0.5, 0.25, 1.0 / 65535.0 * 0.49, std::numeric_limits<double>::quiet_NaN()};
  for (int i = 0; i < 6; ++i) out.set_flat(i, values[i]);
  Buffer photo = output_to_photo(out);
  EXPECT_EQ(photo.type(), ScalarType::UInt16);
  ASSERT_EQ(photo.dimensions(), 3);
  EXPECT_EQ(photo.extent(2), 1);
  EXPECT_EQ(photo.get_flat(0), 0);      // -0.5 clamps to 0
  EXPECT_EQ(photo.get_flat(1), 65535);  // 1.5 clamps to 1
  // 0.5 * 65535 = 32767.5: round to nearest, halves away from zero (std::round) -> 32768.
  EXPECT_EQ(photo.get_flat(2), 32768);
  EXPECT_EQ(photo.get_flat(3), 16384);  // 16383.75 -> 16384
  EXPECT_EQ(photo.get_flat(4), 0);      // 0.49 of a level rounds down
  EXPECT_EQ(photo.get_flat(5), 0);      // NaN is written as black

  Buffer f64(ScalarType::Float64, {1, 1, 3});
  f64.set_flat(1, 1.0);
  EXPECT_EQ(output_to_photo(f64).get_flat(1), 65535);
}

TEST(OutputToPhoto, IntegersKeepOrClamp) {
  Buffer u8(ScalarType::UInt8, {2, 1, 3});
  u8.set_flat(3, 200);
  Buffer p8 = output_to_photo(u8);
  EXPECT_EQ(p8.type(), ScalarType::UInt8);
  EXPECT_TRUE(p8.same_contents(u8));
  Buffer i32(ScalarType::Int32, {3, 1});
  i32.set_flat(0, -5);
  i32.set_flat(1, 70000);
  i32.set_flat(2, 300);
  Buffer p = output_to_photo(i32);
  EXPECT_EQ(p.type(), ScalarType::UInt16);
  EXPECT_EQ(p.get_flat(0), 0);
  EXPECT_EQ(p.get_flat(1), 65535);
  EXPECT_EQ(p.get_flat(2), 300);
  EXPECT_EQ(message_of([] {
              output_to_photo(Buffer(ScalarType::UInt8, {2, 2, 5}));
            }),
            "cannot turn an output of u8 2x2x5 into an image: it needs (x, y) or (x, y, c) with 1 "
            "to 4 channels");
  EXPECT_THROW(output_to_photo(Buffer(ScalarType::Float32, {4})), UserError);
}

// f16 inputs are scaled like the other float types and rounded to f16; i16 and u32 inputs
// keep the values; where they may not fit, an error names the photo, the input and what
// would take it; outputs of the new types become 16-bit photos.
TEST(PhotoToInput, NewElementTypes) {
  Buffer photo8(ScalarType::UInt8, {2, 1, 1});
  photo8.set_flat(0, 255);
  photo8.set_flat(1, 85);
  Buffer h = photo_to_input(photo8, input("in", Float16(), {"x", "y"}), "a.png");
  EXPECT_EQ(h.type(), ScalarType::Float16);
  EXPECT_EQ(h.get_flat(0), 1.0);
  EXPECT_EQ(h.get_flat(1), 0.333251953125);  // 85 / 255 = 1/3, rounded to f16
  EXPECT_EQ(photo_to_input(photo8, input("in", Int16(), {"x", "y"}), "a.png").get_flat(0), 255);
  Buffer photo16(ScalarType::UInt16, {1, 1, 1});
  photo16.set_flat(0, 65535);
  EXPECT_EQ(photo_to_input(photo16, input("in", UInt32(), {"x", "y"}), "b.png").get_flat(0), 65535);
  EXPECT_EQ(message_of([&] {
              photo_to_input(photo8, input("in", Int8(), {"x", "y"}), "a.png");
            }),
            "'a.png' is 8-bit: its values up to 255 do not fit i8 input 'in'; declare it u8, i16 "
            "or f32");
  EXPECT_EQ(message_of([&] {
              photo_to_input(photo16, input("in", Int16(), {"x", "y"}), "b.png");
            }),
            "'b.png' is 16-bit: its values up to 65535 do not fit i16 input 'in'; declare it u16, "
            "i32 or f32");

  Buffer out(ScalarType::Float16, {2, 1});
  out.set_flat(0, 0.5);
  out.set_flat(1, 7.0);
  Buffer photo = output_to_photo(out);
  EXPECT_EQ(photo.type(), ScalarType::UInt16);
  EXPECT_EQ(photo.get_flat(0), 32768);  // round(0.5 * 65535), halves up
  EXPECT_EQ(photo.get_flat(1), 65535);
  Buffer ints(ScalarType::Int8, {2, 1});
  ints.set_flat(0, -5);
  ints.set_flat(1, 100);
  Buffer p8 = output_to_photo(ints);
  EXPECT_EQ(p8.type(), ScalarType::UInt16);
  EXPECT_EQ(p8.get_flat(0), 0);
  EXPECT_EQ(p8.get_flat(1), 100);
}

}  // namespace
}  // namespace stipple
