// Times the reference evaluator on every benchmark pipeline at the photo's resolution
// (820x614 by default, the target: under 60 s each). Each pipeline gets inputs of
// the kind it declares, made from one RGB photo: RGB for 3-D inputs, luma for 2-D ones,
// a Bayer mosaic for the demosaicing pipelines and RGBA for interpolate.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "compiler_core/image/image_io.h"
#include "compiler_core/interp/evaluator.h"
#include "compiler_core/language/frontend.h"

namespace {

using namespace stipple;

enum class InputKind { Rgb, Rgba, Gray, BayerRggb, BayerGrbg10 };

InputKind input_kind(const std::string& pipeline, const InputDecl& in) {
  if (pipeline == "demosaic") return InputKind::BayerRggb;
  if (pipeline == "camera_pipe") return InputKind::BayerGrbg10;
  if (pipeline == "interpolate") return InputKind::Rgba;
  return in.dim_names.size() == 2 ? InputKind::Gray : InputKind::Rgb;
}

/// The photo's (x, y, channel) value in [0, 1].
double pixel(const Buffer& photo, int64_t x, int64_t y, int64_t c) {
  int64_t coords[3] = {x, y, std::min<int64_t>(c, photo.extent(2) - 1)};
  return photo.get(coords) / (photo.type() == ScalarType::UInt16 ? 65535.0 : 255.0);
}

Buffer make_input(const Buffer& photo, InputKind kind, const InputDecl& decl) {
  int64_t w = photo.extent(0), h = photo.extent(1);
  bool planar = decl.dim_names.size() == 2;
  int64_t channels = kind == InputKind::Rgba ? 4 : 3;
  Buffer b(decl.type.code,
           planar ? std::vector<int64_t>{w, h} : std::vector<int64_t>{w, h, channels});
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      if (planar) {
        double v = 0;
        if (kind == InputKind::Gray) {
          v = 0.299 * pixel(photo, x, y, 0) + 0.587 * pixel(photo, x, y, 1) +
              0.114 * pixel(photo, x, y, 2);
        } else {
          bool even_x = x % 2 == 0, even_y = y % 2 == 0;
          int c = 1;  // green
          if (kind == InputKind::BayerRggb) c = even_x && even_y ? 0 : (!even_x && !even_y ? 2 : 1);
          if (kind == InputKind::BayerGrbg10)
            c = !even_x && even_y ? 0 : (even_x && !even_y ? 2 : 1);
          v = pixel(photo, x, y, c);
        }
        if (kind == InputKind::BayerGrbg10) v = std::round(25 + v * (1023 - 25));
        int64_t coords[2] = {x, y};
        b.set(coords, v);
        continue;
      }
      for (int64_t c = 0; c < channels; ++c) {
        // Interpolate's alpha: a soft disc, so the pyramid has holes to fill.
        double v = c < 3 ? pixel(photo, x, y, c)
                         : (std::hypot(x - w / 2.0, y - h / 2.0) < 0.35 * h ? 1.0 : 0.0);
        int64_t coords[3] = {x, y, c};
        b.set(coords, v);
      }
    }
  }
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Times the reference evaluator on every benchmark pipeline"};
  std::string photo_path =
      std::string(STIPPLE_SOURCE_DIR) + "/datasets/fixtures/natural-820x614.png";
  std::string dir = std::string(STIPPLE_SOURCE_DIR) + "/datasets/pipelines";
  std::vector<std::string> only;
  app.add_option("--image", photo_path, "an RGB photo; its size is the size evaluated")
      ->capture_default_str();
  app.add_option("--pipelines", dir, "folder of .stp files")->capture_default_str();
  app.add_option("--only", only, "names of pipelines to run (default: all)");
  CLI11_PARSE(app, argc, argv);

  try {
    Buffer photo = read_image(photo_path);
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() == ".stp") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    std::printf("%-24s %-14s %10s\n", "pipeline", "input", "seconds");
    double worst = 0;
    for (const auto& file : files) {
      Pipeline p = load_pipeline_file(file.string());
      if (!only.empty() && std::find(only.begin(), only.end(), p.name) == only.end()) continue;
      InputImages inputs;
      std::string shape;
      for (const InputDecl& in : p.inputs) {
        inputs[in.name] = make_input(photo, input_kind(p.name, in), in);
        const Buffer& b = inputs[in.name];
        shape = std::to_string(b.extent(0)) + "x" + std::to_string(b.extent(1)) +
                (b.dimensions() > 2 ? "x" + std::to_string(b.extent(2)) : "");
      }
      auto start = std::chrono::steady_clock::now();
      Buffer out = evaluate_pipeline(p, inputs);
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      worst = std::max(worst, s);
      std::printf("%-24s %-14s %10.2f\n", p.name.c_str(), shape.c_str(), s);
      std::fflush(stdout);
    }
    std::printf("slowest: %.2f s (target: under 60 s)\n", worst);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
