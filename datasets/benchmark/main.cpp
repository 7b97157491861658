// stipple-dataset: builds Stipple's image benchmark from the photographs in Debian's
// opencv-doc package and makes the small test fixtures. See datasets/benchmark/README.md.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "compiler_core/image/image_io.h"
#include "compiler_core/ir/error.h"
#include "datasets/benchmark/benchmark.h"
#include "datasets/benchmark/fixtures.h"

namespace {

using namespace stipple;
using namespace stipple::dataset;

int run_texture(const std::vector<std::string>& images, const TextureParams& params) {
  std::printf("# mean texturedness at %dx%d, 8-bit luma, s1=%g s2=%g; low < %g, high > %g\n",
              kLargeWidth, kLargeHeight, params.sigma_highpass, params.sigma_average,
              kLowTextureBelow, kHighTextureAbove);
  for (const std::string& path : images) {
    const double t = photo_texturedness(read_image(path), params);
    std::printf("%s\t%.3f\t%s\n", path.c_str(), t, to_string(classify_texture(t)));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "stipple-dataset: builds Stipple's image benchmark (3 categories x low/high texture x "
      "820x614 and 256x192) from the photographs of Debian's opencv-doc package, and the "
      "small fixtures under datasets/fixtures"};
  app.require_subcommand(1);
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "log every step");

  TextureParams params;
  std::vector<std::string> images;
  CLI::App* texture = app.add_subcommand(
      "texture", "print each image's mean texturedness (8-bit scale, at 820x614)");
  texture->add_option("images", images, "PNG or JPEG files")->required()->check(CLI::ExistingFile);
  texture
      ->add_option("--sigma-highpass", params.sigma_highpass,
                   "s1 of the high-pass, in pixels at 820x614 (for experiments; the "
                   "benchmark uses the default)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  texture->add_option("--sigma-average", params.sigma_average, "s2 of the local average")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);

  BuildOptions build;
  CLI::App* build_cmd = app.add_subcommand(
      "build", "render every image in the manifest, verifying source and output sha256");
  build_cmd->add_option("--source", build.source_dir, "the opencv-doc examples folder")
      ->required()
      ->check(CLI::ExistingDirectory);
  build_cmd->add_option("--manifest", build.manifest_path, "manifest.tsv")
      ->required()
      ->check(CLI::ExistingFile);
  build_cmd->add_option("--out", build.out_dir, "output folder")->required();
  build_cmd->add_flag("--update-manifest", build.update_manifest,
                      "accept new hashes and texture values and rewrite the manifest");
  build_cmd->add_flag("--force", build.force, "regenerate images that are already up to date");

  SelectOptions select;
  CLI::App* select_cmd =
      app.add_subcommand("select", "measure the photos of categories.tsv and write a new manifest");
  select_cmd->add_option("--source", select.source_dir, "the opencv-doc examples folder")
      ->required()
      ->check(CLI::ExistingDirectory);
  select_cmd->add_option("--categories", select.categories_path, "categories.tsv")
      ->required()
      ->check(CLI::ExistingFile);
  select_cmd->add_option("--manifest", select.manifest_path, "manifest.tsv to write")->required();
  select_cmd->add_option("--out", select.out_dir, "where to write the images it hashes")
      ->required();
  select_cmd->add_option("--package-version", select.package_version,
                         "opencv-doc version to record in the manifest");

  std::string fixture_source, fixture_out;
  CLI::App* fixtures_cmd =
      app.add_subcommand("fixtures", "regenerate the small test images of datasets/fixtures");
  fixtures_cmd->add_option("--source", fixture_source, "the opencv-doc examples folder")
      ->required()
      ->check(CLI::ExistingDirectory);
  fixtures_cmd->add_option("--out", fixture_out, "output folder (datasets/fixtures)")->required();

  CLI11_PARSE(app, argc, argv);
  spdlog::set_pattern("stipple-dataset: %^%l%$: %v");
  spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::info);

  try {
    if (*texture) return run_texture(images, params);
    if (*build_cmd) {
      build_benchmark(build);
      return 0;
    }
    if (*select_cmd) {
      select_benchmark(select);
      return 0;
    }
    if (*fixtures_cmd) {
      make_fixtures(fixture_source, fixture_out);
      return 0;
    }
  } catch (const UserError& e) {
    spdlog::error("{}", e.what());
    return 1;
  } catch (const std::exception& e) {
    spdlog::critical("internal error: {}", e.what());
    return 2;
  }
  return 0;
}
