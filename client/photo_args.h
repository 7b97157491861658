// The photos a tuning run takes from its caller (`stipple tune`, `stipple submit`, `stipple
// nightly`, the embedding library's Pipeline::tune): files or folders, and the bundled
// photos when none are given.
#pragma once

#include <string>
#include <vector>

namespace stipple::cli {

struct PhotoSets {
  std::vector<std::string> train, test;
};

/// Files as given; folders expand to their .png and .jpg photos, sorted by name.
/// UserError for a path that is neither, or a folder without photos, naming `option`.
std::vector<std::string> expand_images(const std::vector<std::string>& specs,
                                       const std::string& option = "--images");

/// The training and test photos of a run. With neither given, the bundled ones
/// (natural-820x614 to train, people-256x192 to test); with test photos not given, every
/// third training photo is held out for the test (with one photo it is both). Errors name
/// the photos as the caller's options do (the command line's, or the embedding API's
/// TuneOptions fields).
PhotoSets choose_photos(const std::vector<std::string>& images,
                        const std::vector<std::string>& test_images,
                        const std::string& images_option = "--images",
                        const std::string& test_images_option = "--test-images");

}  // namespace stipple::cli
