// Reading a whole file, and writing one so that a reader never sees half of it: the one
// home of both for programs, schedules, photos, caches and the coordinator's data folder.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "compiler_core/ir/error.h"

namespace stipple {

/// The most a program, schedule, manifest, key or certificate may be: far above any real
/// one, and enough to stop `stipple check /dev/zero` at once rather than after gigabytes.
inline constexpr size_t kMaxTextFileBytes = size_t{16} << 20;  // 16 MiB
/// The most a photo file (PNG or JPEG) may be: above the largest PNG of the decoded limit
/// (image_io.h, 1 GiB of samples) even when it does not compress, and under stb_image's
/// 2 GiB.
inline constexpr size_t kMaxImageFileBytes = size_t{1536} << 20;  // 1536 MiB
/// For the files Stipple wrote itself (cached reference outputs): no limit.
inline constexpr size_t kNoFileSizeLimit = static_cast<size_t>(-1);

/// "16 MiB", "1 GiB", "512 bytes": a limit as messages state it.
std::string byte_size_text(size_t bytes);

/// The bytes of a file of at most `limit` bytes. Throws UserError naming what the file is
/// and its path when it cannot be read ("cannot read pipeline 'blur.stp': No such file or
/// directory") or is larger than the limit ("cannot read pipeline '/dev/zero': it is
/// larger than the pipeline limit, 16 MiB"). Endless files (/dev/zero, a pipe) stop
/// at the limit. `check_head`, when given, is called once with the file's first
/// kFileHeadBytes bytes (all of it when shorter) before the rest is read: it throws to
/// refuse a file by its format at once (/dev/zero given as a photo).
inline constexpr size_t kFileHeadBytes = 16;
std::string read_text_file(const std::string& path, std::string_view what = "file",
                           size_t limit = kMaxTextFileBytes,
                           const std::function<void(std::string_view head)>& check_head = {});

/// A file that could not be written, with the OS's reason in the message. A UserError, as
/// a bad output path is the user's; a caller writing its own files (the coordinator's data
/// folder) tells a full disk from bad input by it.
class FileWriteError : public UserError {
 public:
  using UserError::UserError;
};

/// Writes `text` to `path` atomically: into a temporary file of this process and thread
/// beside it, then a rename, so a failed write never leaves half a file (nor its temporary
/// file) and concurrent writers of one content-addressed file never write into each other.
/// Throws FileWriteError with the OS's reason ("No space left on device").
void write_text_file(const std::string& path, const std::string& text);

}  // namespace stipple
