// Writing a command's output file: what `stipple compile` and `stipple export` share.
#pragma once

#include <string>

namespace stipple::cli {

/// `-o -`: standard output, for every command that writes one file.
inline bool is_standard_output(const std::string& path) { return path == "-"; }

/// Writes `contents` to `path` byte for byte, replacing the file, or to standard output
/// for "-"; UserError naming the path and the system's reason when it cannot.
void write_output_file(const std::string& path, const std::string& contents);

}  // namespace stipple::cli
