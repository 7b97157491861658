// select and build: see benchmark.h.
#include "datasets/benchmark/benchmark.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "compiler_core/image/image_io.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/support/content_hash.h"
#include "compiler_core/support/files.h"
#include "datasets/benchmark/resample.h"

namespace stipple::dataset {
namespace fs = std::filesystem;
namespace {

const std::string kLarge = fmt::format("{}x{}", kLargeWidth, kLargeHeight);
const std::string kSmall = fmt::format("{}x{}", kSmallWidth, kSmallHeight);

std::string join(const std::string& dir, const std::string& rel) {
  return (fs::path(dir) / rel).string();
}

// Writes the image and returns the sha256 of the file written.
std::string write_and_hash(const Buffer& image, const std::string& path) {
  fs::create_directories(fs::path(path).parent_path());
  write_png(path, image);
  return sha256_file(path);
}

Buffer read_source(const std::string& source_dir, const std::string& source) {
  const std::string path = join(source_dir, source);
  if (!fs::is_regular_file(path)) {
    throw UserError("source photo '" + source + "' not found in '" + source_dir + "'");
  }
  return read_image(path);
}

void record_parameters(Manifest& m, const TextureParams& p) {
  m.meta["texture-measure"] = fmt::format(
      "Rec.601 luma of 8-bit RGB at {}; H = L - G(s1)*L; T = G(s2)*|H|; s1={} s2={} px; mean(T)",
      kLarge, p.sigma_highpass, p.sigma_average);
  m.meta["texture-levels"] =
      fmt::format("low < {}, high > {}, between excluded", kLowTextureBelow, kHighTextureAbove);
}

}  // namespace

Buffer render_benchmark_image(const Buffer& photo, int width, int height) {
  return crop_resize_rgb8(photo, width, height);
}

double photo_texturedness(const Buffer& photo, const TextureParams& params) {
  return mean_texturedness(luminance(render_benchmark_image(photo, kLargeWidth, kLargeHeight)),
                           params);
}

std::string output_name(const std::string& source, const std::string& resolution) {
  fs::path p(source);
  std::string stem = (p.parent_path() / p.stem()).generic_string();
  std::replace(stem.begin(), stem.end(), '/', '-');
  return resolution + "/" + stem + ".png";
}

int pick_training_image(const std::vector<Measured>& cell) {
  if (cell.empty()) return -1;
  std::vector<double> values;
  for (const Measured& m : cell) values.push_back(m.texture);
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  const double median = n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
  int best = 0;
  for (int i = 1; i < static_cast<int>(cell.size()); ++i) {
    const double d = std::abs(cell[i].texture - median);
    const double best_d = std::abs(cell[best].texture - median);
    if (d < best_d || (d == best_d && cell[i].source < cell[best].source)) best = i;
  }
  return best;
}

Manifest select_benchmark(const SelectOptions& o) {
  const std::vector<CategoryEntry> entries =
      parse_categories(read_text_file(o.categories_path), o.categories_path);
  Manifest manifest;
  manifest.meta["generator"] = "stipple-dataset select (datasets/benchmark)";
  manifest.meta["opencv-doc-version"] = o.package_version.empty() ? "unknown" : o.package_version;
  manifest.meta["source-root"] = "usr/share/doc/opencv-doc/examples in the opencv-doc .deb";
  record_parameters(manifest, TextureParams{});

  // Measure every photo; sort into the category x level cells.
  std::map<std::pair<std::string, std::string>, std::vector<Measured>> cells;
  std::map<std::string, std::string> source_hash;
  for (const CategoryEntry& e : entries) {
    if (e.category == "excluded") continue;
    const std::string path = join(o.source_dir, e.source);
    const Buffer photo = read_source(o.source_dir, e.source);
    source_hash[e.source] = sha256_file(path);
    const double t = photo_texturedness(photo);
    const TextureLevel level = classify_texture(t);
    spdlog::info("{:<34} {:>4}x{:<4} {:<9} texture {:6.2f}  {}", e.source, photo.extent(0),
                 photo.extent(1), e.category, t, to_string(level));
    if (level == TextureLevel::Mid) {
      manifest.notes.push_back(
          fmt::format("excluded (mid texture {:.3f}): {} ({})", t, e.source, e.category));
      continue;
    }
    cells[{e.category, to_string(level)}].push_back({e.source, e.category, t});
  }

  std::set<std::string> train;
  for (const std::string category : {"man-made", "natural", "people"}) {
    for (const std::string level : {"low", "high"}) {
      auto& cell = cells[{category, level}];
      std::sort(cell.begin(), cell.end(),
                [](const Measured& a, const Measured& b) { return a.source < b.source; });
      const int pick = pick_training_image(cell);
      if (pick < 0) {
        spdlog::warn("no {} photo with {} texture: that cell has no training image", category,
                     level);
        manifest.notes.push_back(fmt::format("cell {}/{}: empty", category, level));
        continue;
      }
      train.insert(cell[pick].source);
      manifest.notes.push_back(
          fmt::format("cell {}/{}: {} photos; train {} (texture {:.3f}, "
                      "closest to the cell median)",
                      category, level, cell.size(), cell[pick].source, cell[pick].texture));
    }
  }

  // Render, write and hash both resolutions, in a stable order (category, level, source).
  for (const auto& [key, cell] : cells) {
    for (const Measured& m : cell) {
      const Buffer photo = read_source(o.source_dir, m.source);
      for (const auto& [w, h, res] : {std::tuple{kLargeWidth, kLargeHeight, kLarge},
                                      std::tuple{kSmallWidth, kSmallHeight, kSmall}}) {
        ManifestRow row;
        row.source = m.source;
        row.source_sha256 = source_hash[m.source];
        row.category = m.category;
        row.texture = m.texture;
        row.level = key.second;
        row.split = train.count(m.source) ? "train" : "test";
        row.resolution = res;
        row.output = output_name(m.source, res);
        row.output_sha256 =
            write_and_hash(render_benchmark_image(photo, w, h), join(o.out_dir, row.output));
        manifest.rows.push_back(row);
      }
    }
  }
  write_text_file(o.manifest_path, format_manifest(manifest));
  spdlog::info("wrote {} ({} images from {} photos)", o.manifest_path, manifest.rows.size(),
               manifest.rows.size() / 2);
  return manifest;
}

int build_benchmark(const BuildOptions& o) {
  Manifest manifest = parse_manifest(read_text_file(o.manifest_path), o.manifest_path);
  if (manifest.rows.empty()) throw UserError("manifest '" + o.manifest_path + "' lists no images");
  int written = 0, up_to_date = 0, updated = 0;
  std::map<std::string, Buffer> photos;            // decoded sources, by name
  std::map<std::string, std::string> source_hash;  // verified source hashes
  for (ManifestRow& row : manifest.rows) {
    const std::string out_path = join(o.out_dir, row.output);
    if (!source_hash.count(row.source)) {
      const std::string path = join(o.source_dir, row.source);
      if (!fs::is_regular_file(path)) {
        throw UserError("source photo '" + row.source + "' not found in '" + o.source_dir + "'");
      }
      const std::string hash = sha256_file(path);
      if (hash != row.source_sha256) {
        const std::string msg =
            fmt::format("source photo '{}' has sha256 {} but the manifest records {}", row.source,
                        hash, row.source_sha256);
        if (!o.update_manifest) throw UserError(msg + " (a different opencv-doc version?)");
        spdlog::warn("{}; updating the manifest", msg);
      }
      source_hash[row.source] = hash;
    }
    if (row.source_sha256 != source_hash[row.source]) {
      row.source_sha256 = source_hash[row.source];
      ++updated;
    }
    if (!o.force && !o.update_manifest && fs::is_regular_file(out_path) &&
        sha256_file(out_path) == row.output_sha256) {
      ++up_to_date;
      spdlog::debug("{} is up to date", row.output);
      continue;
    }
    if (!photos.count(row.source)) photos[row.source] = read_source(o.source_dir, row.source);
    const Buffer& photo = photos[row.source];
    const auto [w, h] = parse_resolution(row.resolution);
    const Buffer image = render_benchmark_image(photo, w, h);
    const std::string hash = write_and_hash(image, out_path);
    ++written;
    spdlog::info("wrote {}", row.output);
    if (hash != row.output_sha256) {
      const std::string msg =
          fmt::format("generated '{}' has sha256 {} but the manifest records {}", row.output, hash,
                      row.output_sha256);
      if (!o.update_manifest) {
        throw UserError(msg +
                        " (different image decoder, resizer or PNG encoder? rerun with "
                        "--update-manifest to accept)");
      }
      spdlog::warn("{}; updating the manifest", msg);
      row.output_sha256 = hash;
      ++updated;
    }
    if (o.update_manifest && w == kLargeWidth && h == kLargeHeight) {
      const double t = mean_texturedness(luminance(image));
      if (std::abs(t - row.texture) >= 0.0005) {
        spdlog::warn("texture of '{}' is now {:.3f} (manifest: {:.3f})", row.source, t,
                     row.texture);
        if (to_string(classify_texture(t)) != row.level) {
          throw UserError(fmt::format(
              "'{}' now measures {:.3f}, outside its '{}' texture level: rerun `stipple-dataset "
              "select` to rebuild the manifest",
              row.source, t, row.level));
        }
        for (ManifestRow& other : manifest.rows) {
          if (other.source == row.source) other.texture = t;
        }
        ++updated;
      }
    }
  }
  if (o.update_manifest && updated > 0) {
    write_text_file(o.manifest_path, format_manifest(manifest));
    spdlog::info("rewrote {} ({} changes)", o.manifest_path, updated);
  }
  spdlog::info("{} images: {} written, {} already up to date; all hashes match the manifest",
               manifest.rows.size(), written, up_to_date);
  return written;
}

}  // namespace stipple::dataset
