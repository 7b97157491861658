// The two halves of the benchmark builder:
//
//   select: categories.tsv + source photos  ->  manifest.tsv (texture levels, train/test,
//           hashes of sources and of the generated images)
//   build:  manifest.tsv + source photos    ->  the benchmark images, every hash verified
//
// Both render a photo the same way (render_benchmark_image), so the texture recorded by
// select is the texture of the 820x614 image that build writes.
#pragma once

#include <string>
#include <vector>

#include "compiler_core/runtime/buffer.h"
#include "datasets/benchmark/manifest.h"
#include "datasets/benchmark/texturedness.h"

namespace stipple::dataset {

/// The two benchmark resolutions of the perforation paper (§6).
inline constexpr int kLargeWidth = 820, kLargeHeight = 614;
inline constexpr int kSmallWidth = 256, kSmallHeight = 192;

/// Centre crop + resize to 8-bit RGB (see resample.h).
Buffer render_benchmark_image(const Buffer& photo, int width, int height);

/// Mean texturedness of a photo as the benchmark defines it: rendered at 820x614, 8-bit.
double photo_texturedness(const Buffer& photo, const TextureParams& params = {});

/// Output file of a source at a resolution: "820x614/data-baboon.png" for "data/baboon.jpg".
std::string output_name(const std::string& source, const std::string& resolution);

/// One photo's measurement, as select sees it.
struct Measured {
  std::string source;
  std::string category;
  double texture = 0.0;
};

/// The train pick of one category and texture level: the photo whose texture is closest to
/// the cell's median (mean of the two middle values for an even count); ties go to the
/// source name that sorts first. Returns the index into `cell`, or -1 for an empty cell.
int pick_training_image(const std::vector<Measured>& cell);

struct SelectOptions {
  std::string source_dir;       // the package's examples folder
  std::string categories_path;  // categories.tsv
  std::string manifest_path;    // manifest.tsv to write
  std::string out_dir;          // where to write the images (hashing needs them)
  std::string package_version;  // opencv-doc version, recorded in the manifest
};

/// Measures every categorised photo, labels and splits them, renders and hashes the
/// outputs and writes the manifest. Returns the manifest written.
Manifest select_benchmark(const SelectOptions& options);

struct BuildOptions {
  std::string source_dir;
  std::string manifest_path;
  std::string out_dir;
  bool update_manifest = false;  // rewrite hashes and textures instead of failing
  bool force = false;            // regenerate outputs that already match their hash
};

/// Builds every image in the manifest, verifying source and output hashes. Throws
/// UserError on the first mismatch unless update_manifest is set. Returns the number of
/// images written (outputs already up to date are skipped unless force is set).
int build_benchmark(const BuildOptions& options);

}  // namespace stipple::dataset
