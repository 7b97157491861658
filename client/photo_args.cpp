#include "client/photo_args.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "compiler_core/ir/error.h"

namespace stipple::cli {

namespace {

namespace fs = std::filesystem;

bool is_image(const fs::path& p) {
  std::string ext = p.extension().string();
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg";
}

// The bundled photos: a file of datasets/fixtures in the working directory (a clone's
// root); else, for an installed Stipple, PREFIX/share/stipple/fixtures (cmake/install.cmake),
// found from the file this code is in (bin/stipple, or lib/libstipple.so for a program's
// tune); else the source tree this was built from.
std::string bundled(const std::string& name) {
  const std::string rel = "datasets/fixtures/" + name;
  if (fs::exists(rel)) return rel;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&bundled), &info) && info.dli_fname) {
    std::error_code ec;
    const fs::path self = fs::canonical(info.dli_fname, ec);
    for (const char* to_data : {STIPPLE_BINDIR_TO_DATADIR, STIPPLE_LIBDIR_TO_DATADIR}) {
      const fs::path installed = self.parent_path() / to_data / "stipple/fixtures" / name;
      if (!ec && fs::exists(installed)) return installed.lexically_normal().string();
    }
  }
  return std::string(STIPPLE_SOURCE_DIR) + "/" + rel;
}

}  // namespace

std::vector<std::string> expand_images(const std::vector<std::string>& specs,
                                       const std::string& option) {
  std::vector<std::string> out;
  for (const std::string& spec : specs) {
    if (fs::is_directory(spec)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::directory_iterator(spec)) {
        if (entry.is_regular_file() && is_image(entry.path()))
          found.push_back(entry.path().string());
      }
      std::sort(found.begin(), found.end());
      if (found.empty()) throw UserError(option + " " + spec + ": no .png or .jpg files in it");
      out.insert(out.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(spec)) {
      out.push_back(spec);
    } else {
      throw UserError(option + " " + spec + ": no such file or folder");
    }
  }
  return out;
}

PhotoSets choose_photos(const std::vector<std::string>& images,
                        const std::vector<std::string>& test_images,
                        const std::string& images_option, const std::string& test_images_option) {
  PhotoSets out;
  out.train = images.empty() ? std::vector<std::string>{bundled("natural-820x614.png")}
                             : expand_images(images, images_option);
  if (!test_images.empty()) out.test = expand_images(test_images, test_images_option);
  if (images.empty() && test_images.empty()) out.test = {bundled("people-256x192.png")};
  if (out.test.empty()) {
    std::vector<std::string> train;
    for (size_t i = 0; i < out.train.size(); ++i) {
      (i % 3 == 2 ? out.test : train).push_back(out.train[i]);
    }
    if (out.test.empty()) out.test = {out.train.back()};
    if (!train.empty()) out.train = train;
  }
  return out;
}

}  // namespace stipple::cli
