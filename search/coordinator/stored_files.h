// What the coordinator keeps of its clients' files (ClusterRunsOptions::data_dir): photos,
// pipelines and schedules by content hash, written so that a crash never leaves half a
// file, and the refusal a client gets when what it sent cannot be kept.
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "proto/coordinator.pb.h"

namespace stipple::coordinator {

/// A request the coordinator refuses, with the status the client gets.
struct Refusal {
  grpc::Status status;
};

[[noreturn]] void refuse(grpc::StatusCode code, const std::string& message);

/// The file's extension in lower case if it is a photo's (.png, .jpg, .jpeg), else "".
std::string photo_extension(const std::filesystem::path& file);

/// The last part of a client's file name, reduced to safe characters: it names the
/// stored copy (and so the pipeline in messages), never a path of ours.
std::string safe_file_name(const std::string& name, const std::string& fallback);

/// Writes `bytes` to `path` unless it is there already (content-addressed: same name, same
/// bytes), through a temporary file renamed into place. A file the coordinator cannot
/// write (a full disk, a read-only data folder) is its own failure, not the client's:
/// refused UNAVAILABLE with the OS's reason, never INVALID_ARGUMENT.
void store_file(const std::filesystem::path& path, const std::string& bytes);

/// Keeps a photo a client sent as DATA/images/<sha256>.<ext> and returns its path, once
/// it decodes and has at most `max_pixels` (else refused INVALID_ARGUMENT, naming it as
/// `what`, and a file it wrote removed). `sha256` is of `bytes`.
std::string store_photo(const std::filesystem::path& data_dir, const proto::ImageRef& ref,
                        const std::string& bytes, const std::string& sha256, int64_t max_pixels,
                        const std::string& what);

/// The path of a photo kept before, by the SHA-256 of its bytes (checked), if there is one.
std::optional<std::string> stored_photo(const std::filesystem::path& data_dir,
                                        const std::string& sha256);

}  // namespace stipple::coordinator
