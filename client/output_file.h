// Writing a command's output file: what `stipple compile` and `stipple export` share.
#pragma once

#include <string>

namespace stipple::cli {

/// Writes `contents` to `path` byte for byte, replacing the file; UserError naming the
/// path and the system's reason when it cannot.
void write_output_file(const std::string& path, const std::string& contents);

}  // namespace stipple::cli
