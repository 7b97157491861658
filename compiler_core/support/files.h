// Reading a whole file, and writing one so that a reader never sees half of it: the one
// home of both for programs, schedules, photos, caches and the coordinator's data folder.
#pragma once

#include <string>
#include <string_view>

namespace stipple {

/// The bytes of a file. Throws UserError naming what the file is and its path when it
/// cannot be read: "cannot read pipeline 'blur.stp': no such file or not readable".
std::string read_text_file(const std::string& path, std::string_view what = "file");

/// Writes `text` to `path` atomically: into a temporary file of this process and thread
/// beside it, then a rename, so a failed write never leaves half a file and concurrent
/// writers of one content-addressed file never write into each other. Throws UserError.
void write_text_file(const std::string& path, const std::string& text);

}  // namespace stipple
