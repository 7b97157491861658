// The photos a tuning run takes from the command line (`stipple tune`, `stipple submit`):
// files or folders, and the bundled photos when none are given.
#pragma once

#include <string>
#include <vector>

namespace stipple::cli {

struct PhotoSets {
  std::vector<std::string> train, test;
};

/// Files as given; folders expand to their .png and .jpg photos, sorted by name.
/// UserError for a path that is neither, or a folder without photos.
std::vector<std::string> expand_images(const std::vector<std::string>& specs);

/// The training and test photos of a run. With neither given, the bundled ones
/// (natural-820x614 to train, people-256x192 to test); with test photos not given, every
/// third training photo is held out for the test (with one photo it is both).
PhotoSets choose_photos(const std::vector<std::string>& images,
                        const std::vector<std::string>& test_images);

}  // namespace stipple::cli
