// Parsing and formatting of categories.tsv and manifest.tsv.
#include "datasets/benchmark/manifest.h"

#include <charconv>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "compiler_core/ir/error.h"

namespace stipple::dataset {
namespace {

std::vector<std::string> split_tabs(std::string_view line) {
  std::vector<std::string> fields;
  size_t start = 0;
  while (true) {
    size_t tab = line.find('\t', start);
    fields.emplace_back(
        line.substr(start, tab == std::string_view::npos ? line.npos : tab - start));
    if (tab == std::string_view::npos) return fields;
    start = tab + 1;
  }
}

// Calls fn(line_number, line) for each line, without the newline and a trailing '\r'.
template <typename Fn>
void for_each_line(std::string_view text, Fn fn) {
  int number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    fn(++number, line);
    start = end + 1;
  }
}

std::string where(const std::string& origin, int line) {
  return origin + ":" + std::to_string(line) + ": ";
}

bool is_hex_digest(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool is_photo_category(std::string_view c) {
  return c == "man-made" || c == "natural" || c == "people";
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

}  // namespace

std::vector<CategoryEntry> parse_categories(std::string_view text, const std::string& origin) {
  std::vector<CategoryEntry> entries;
  std::set<std::string> seen;
  for_each_line(text, [&](int number, std::string_view line) {
    if (trim(line).empty() || line.front() == '#') return;
    std::vector<std::string> f = split_tabs(line);
    if (f.size() != 3) {
      throw UserError(where(origin, number) + "expected 3 tab-separated fields (source, " +
                      "category, description), found " + std::to_string(f.size()));
    }
    if (f[0].empty()) throw UserError(where(origin, number) + "empty source file name");
    if (!is_photo_category(f[1]) && f[1] != "excluded") {
      throw UserError(where(origin, number) + "unknown category '" + f[1] +
                      "' (expected man-made, natural, people or excluded)");
    }
    if (!seen.insert(f[0]).second) {
      throw UserError(where(origin, number) + "'" + f[0] + "' is listed twice");
    }
    entries.push_back({f[0], f[1], f[2], number});
  });
  return entries;
}

const std::vector<std::string>& manifest_columns() {
  static const std::vector<std::string> columns = {"source",     "source_sha256", "category",
                                                   "texture",    "level",         "split",
                                                   "resolution", "output",        "output_sha256"};
  return columns;
}

std::pair<int, int> parse_resolution(std::string_view text) {
  const size_t x = text.find('x');
  int w = 0, h = 0;
  auto parse = [](std::string_view s, int& out) {
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && ptr == s.data() + s.size() && out > 0;
  };
  if (x == std::string_view::npos || !parse(text.substr(0, x), w) ||
      !parse(text.substr(x + 1), h)) {
    throw UserError("bad resolution '" + std::string(text) + "' (expected WIDTHxHEIGHT)");
  }
  return {w, h};
}

Manifest parse_manifest(std::string_view text, const std::string& origin) {
  Manifest manifest;
  bool header_seen = false;
  std::set<std::string> outputs;
  for_each_line(text, [&](int number, std::string_view line) {
    if (trim(line).empty()) return;
    if (line.front() == '#') {
      std::string body = trim(line.substr(1));
      const size_t colon = body.find(": ");
      const bool is_key =
          colon != std::string::npos && colon > 0 && body.find(' ') > colon;  // a single-word key
      if (is_key) {
        manifest.meta[body.substr(0, colon)] = trim(std::string_view(body).substr(colon + 2));
      } else {
        manifest.notes.push_back(body);
      }
      return;
    }
    std::vector<std::string> f = split_tabs(line);
    if (!header_seen) {
      if (f != manifest_columns()) {
        throw UserError(where(origin, number) + "expected the column header line first");
      }
      header_seen = true;
      return;
    }
    if (f.size() != manifest_columns().size()) {
      throw UserError(where(origin, number) + "expected " +
                      std::to_string(manifest_columns().size()) + " fields, found " +
                      std::to_string(f.size()));
    }
    ManifestRow row;
    row.source = f[0];
    row.source_sha256 = f[1];
    row.category = f[2];
    row.level = f[4];
    row.split = f[5];
    row.resolution = f[6];
    row.output = f[7];
    row.output_sha256 = f[8];
    auto [ptr, ec] = std::from_chars(f[3].data(), f[3].data() + f[3].size(), row.texture);
    if (ec != std::errc() || ptr != f[3].data() + f[3].size() || row.texture < 0) {
      throw UserError(where(origin, number) + "bad texture value '" + f[3] + "'");
    }
    if (!is_hex_digest(row.source_sha256) || !is_hex_digest(row.output_sha256)) {
      throw UserError(where(origin, number) + "sha256 must be 64 lowercase hex digits");
    }
    if (!is_photo_category(row.category)) {
      throw UserError(where(origin, number) + "unknown category '" + row.category + "'");
    }
    if (row.level != "low" && row.level != "high") {
      throw UserError(where(origin, number) + "level must be low or high, not '" + row.level + "'");
    }
    if (row.split != "train" && row.split != "test") {
      throw UserError(where(origin, number) + "split must be train or test, not '" + row.split +
                      "'");
    }
    try {
      parse_resolution(row.resolution);
    } catch (const UserError& e) {
      throw UserError(where(origin, number) + e.what());
    }
    if (row.source.empty() || row.output.empty() || row.output.front() == '/' ||
        row.output.find("..") != std::string::npos) {
      throw UserError(where(origin, number) + "source and output must be relative paths");
    }
    if (!outputs.insert(row.output).second) {
      throw UserError(where(origin, number) + "output '" + row.output + "' is listed twice");
    }
    manifest.rows.push_back(std::move(row));
  });
  if (!header_seen) throw UserError(origin + ": no column header line");
  return manifest;
}

std::string format_manifest(const Manifest& manifest) {
  std::ostringstream out;
  for (const auto& [key, value] : manifest.meta) out << "# " << key << ": " << value << '\n';
  for (const std::string& note : manifest.notes) out << "# " << note << '\n';
  const auto& columns = manifest_columns();
  for (size_t i = 0; i < columns.size(); ++i) out << (i ? "\t" : "") << columns[i];
  out << '\n';
  for (const ManifestRow& r : manifest.rows) {
    char texture[32];
    std::snprintf(texture, sizeof texture, "%.3f", r.texture);
    out << r.source << '\t' << r.source_sha256 << '\t' << r.category << '\t' << texture << '\t'
        << r.level << '\t' << r.split << '\t' << r.resolution << '\t' << r.output << '\t'
        << r.output_sha256 << '\n';
  }
  return out.str();
}

}  // namespace stipple::dataset
