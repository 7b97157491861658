// The small images committed under datasets/fixtures for tests and examples, each cut from
// an opencv-doc photo by `stipple-dataset fixtures`. The table below is the single source
// of truth: the tool generates from it, and tests/datasets/fixtures_test.cpp checks every
// committed file against it.
#pragma once

#include <string>
#include <vector>

namespace stipple::dataset {

struct FixtureSpec {
  std::string file;    // name in datasets/fixtures
  std::string source;  // opencv-doc photo, relative to the examples folder
  std::string recipe;  // how it is made, for the README
  int width = 0;
  int height = 0;
  int channels = 0;  // 1 gray, 3 RGB
  int bits = 8;      // 8 or 16 per sample
};

const std::vector<FixtureSpec>& fixture_specs();

/// Writes every fixture into out_dir. Throws UserError.
void make_fixtures(const std::string& source_dir, const std::string& out_dir);

}  // namespace stipple::dataset
