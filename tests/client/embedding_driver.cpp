// A user's program of the embedding library (<stipple/stipple.h>), built out of tree
// against the installed package by install_package_test: it runs variant V of run R in a
// database on an interleaved RGB photo in its own memory, as OpenCV holds one, without a
// planar copy, and writes the output as `stipple run` quantises it for a 16-bit PNG.
//
//   embedding_driver PIPELINE.stp DATABASE RUN VARIANT IN.rgb WIDTH HEIGHT OUT.u16
//
// IN.rgb: width * height * 3 bytes, RGBRGB... row by row. OUT.u16: the output's values,
// interleaved likewise, as little-endian u16 (round(clamp(v, 0, 1) * 65535)).
#include <stipple/stipple.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 9) {
    std::cerr << "usage: embedding_driver PIPELINE.stp DATABASE RUN VARIANT IN.rgb WIDTH HEIGHT "
                 "OUT.u16\n";
    return 2;
  }
  const int64_t width = std::atoll(argv[6]), height = std::atoll(argv[7]);
  std::ifstream in_file(argv[5], std::ios::binary);
  std::vector<uint8_t> rgb((std::istreambuf_iterator<char>(in_file)),
                           std::istreambuf_iterator<char>());
  if (static_cast<int64_t>(rgb.size()) != width * height * 3) {
    std::cerr << "embedding_driver: " << argv[5] << " is not " << width << "x" << height
              << " RGB\n";
    return 2;
  }
  try {
    const stipple::Pipeline pipeline = stipple::Pipeline::load(argv[1]);
    const stipple::Function f =
        pipeline.compile(stipple::FrontVariant{argv[2], std::atoll(argv[3]), std::atoi(argv[4])});
    // The photo as an f32 input in [0, 1], still interleaved.
    std::vector<float> in(rgb.size());
    for (size_t i = 0; i < rgb.size(); ++i) in[i] = static_cast<float>(rgb[i] / 255.0);
    const auto input = stipple::BufferView::interleaved(in.data(), width, height, 3);
    const std::vector<int64_t> extents = f.output_extents(input);
    if (extents.size() != 3 || extents[2] != 3) {
      std::cerr << "embedding_driver: the output is not RGB\n";
      return 1;
    }
    std::vector<float> out(static_cast<size_t>(extents[0] * extents[1] * 3));
    f.realize(input, stipple::BufferView::interleaved(out.data(), extents[0], extents[1], 3));
    // Called again on the same buffers: the compiled code is kept, the result the same.
    std::vector<float> again(out.size());
    f.realize(input, stipple::BufferView::interleaved(again.data(), extents[0], extents[1], 3));
    if (again != out) {
      std::cerr << "embedding_driver: a second call computed something else\n";
      return 1;
    }
    std::ofstream out_file(argv[8], std::ios::binary);
    for (float v : out) {
      const double q = std::isnan(v) ? 0.0 : std::round(std::clamp<double>(v, 0.0, 1.0) * 65535.0);
      const auto u = static_cast<uint16_t>(q);
      const char bytes[2] = {static_cast<char>(u & 0xff), static_cast<char>(u >> 8)};
      out_file.write(bytes, 2);
    }
    std::cout << pipeline.name() << " " << extents[0] << "x" << extents[1] << "\n";
    return 0;
  } catch (const stipple::Error& e) {
    std::cerr << e.what() << "\n";
    return e.kind() == stipple::Error::Kind::BadInput ? 2 : 1;
  }
}
