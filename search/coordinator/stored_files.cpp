#include "search/coordinator/stored_files.h"

#include <algorithm>
#include <cctype>

#include "compiler_core/image/image_io.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/support/content_hash.h"
#include "compiler_core/support/files.h"

namespace stipple::coordinator {
namespace fs = std::filesystem;

std::string photo_extension(const fs::path& file) {
  std::string ext = file.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg" ? ext : "";
}

void refuse(grpc::StatusCode code, const std::string& message) {
  throw Refusal{grpc::Status(code, message)};
}

std::string safe_file_name(const std::string& name, const std::string& fallback) {
  std::string base = fs::path(name).filename().string();
  std::string out;
  for (char c : base) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    out += ok ? c : '_';
  }
  if (out.empty() || out[0] == '.') return fallback;
  return out;
}

void store_file(const fs::path& path, const std::string& bytes) {
  if (fs::exists(path)) return;
  auto unavailable = [](const std::exception& e) {
    refuse(grpc::StatusCode::UNAVAILABLE,
           std::string("the coordinator cannot store the submitted files: ") + e.what());
  };
  try {
    fs::create_directories(path.parent_path());
    write_text_file(path.string(), bytes);
  } catch (const FileWriteError& e) {
    unavailable(e);
  } catch (const fs::filesystem_error& e) {
    unavailable(e);
  }
}

std::string store_photo(const fs::path& data_dir, const proto::ImageRef& ref,
                        const std::string& bytes, const std::string& sha256, int64_t max_pixels,
                        const std::string& what) {
  std::string ext = photo_extension(safe_file_name(ref.name(), "photo.png"));
  if (ext.empty()) ext = ".png";
  const fs::path path = data_dir / "images" / (sha256 + ext);
  const bool existed = fs::exists(path);
  store_file(path, bytes);
  try {
    const Buffer photo = read_image(path.string());
    if (photo.extent_or_one(0) * photo.extent_or_one(1) > max_pixels) {
      throw UserError(std::to_string(photo.extent_or_one(0)) + "x" +
                      std::to_string(photo.extent_or_one(1)) + " is over the limit of " +
                      std::to_string(max_pixels) + " pixels");
    }
  } catch (const UserError& e) {
    if (!existed) fs::remove(path);
    refuse(grpc::StatusCode::INVALID_ARGUMENT, what + ": " + e.what());
  }
  return path.string();
}

std::optional<std::string> stored_photo(const fs::path& data_dir, const std::string& sha256) {
  // The hash becomes a file name: only a hash may, never a path.
  if (sha256.size() != 64 || !std::all_of(sha256.begin(), sha256.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
      })) {
    return std::nullopt;
  }
  for (const char* ext : {".png", ".jpg", ".jpeg"}) {
    const fs::path path = data_dir / "images" / (sha256 + ext);
    std::error_code ec;
    if (!fs::exists(path, ec)) continue;
    try {
      if (sha256_hex(read_text_file(path.string(), "photo", kMaxImageFileBytes)) == sha256)
        return path.string();
    } catch (const UserError&) {
    }
  }
  return std::nullopt;
}

}  // namespace stipple::coordinator
