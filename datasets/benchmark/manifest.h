// The two committed tables of the benchmark: the hand-made category table (which source
// photos to use and what they show) and the manifest (what the build produces, with
// hashes so the set is reproducible). Both are tab-separated text; lines starting with
// '#' are comments, and the manifest keeps `# key: value` header lines as metadata.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace stipple::dataset {

/// One row of categories.tsv: `source <TAB> category <TAB> description`. Category is
/// man-made, natural or people for photos in the benchmark, or `excluded` (description
/// says why) for the package's images that are not usable photographs.
struct CategoryEntry {
  std::string source;  // path relative to the package's examples folder
  std::string category;
  std::string description;
  int line = 0;  // 1-based line in the file, for messages
};

/// Parses categories.tsv text; `origin` names the file in messages. Throws UserError on a
/// malformed line, an unknown category or a repeated source.
std::vector<CategoryEntry> parse_categories(std::string_view text, const std::string& origin);

/// One row of manifest.tsv: one output image.
struct ManifestRow {
  std::string source;         // relative to the examples folder
  std::string source_sha256;  // of the file in the package
  std::string category;       // man-made | natural | people
  double texture = 0.0;       // mean texturedness at 820x614, 8-bit scale
  std::string level;          // low | high
  std::string split;          // train | test
  std::string resolution;     // "820x614" or "256x192"
  std::string output;         // relative to the output folder
  std::string output_sha256;  // of the generated PNG
};

struct Manifest {
  /// `# key: value` header lines, e.g. "opencv-doc-version" -> "4.6.0+dfsg-12".
  std::map<std::string, std::string> meta;
  /// Other comment lines (without the leading "# "), kept in order; e.g. excluded photos.
  std::vector<std::string> notes;
  std::vector<ManifestRow> rows;
};

/// The manifest's column names, in order.
const std::vector<std::string>& manifest_columns();

/// Parses manifest.tsv text. Throws UserError naming `origin` and the line on bad input.
Manifest parse_manifest(std::string_view text, const std::string& origin);

/// Formats a manifest so that parse_manifest(format_manifest(m)) == m (texture is written
/// with 3 decimals, so values round-trip at that precision).
std::string format_manifest(const Manifest& manifest);

/// Parses "WxH" (e.g. "820x614"). Throws UserError.
std::pair<int, int> parse_resolution(std::string_view text);

}  // namespace stipple::dataset
