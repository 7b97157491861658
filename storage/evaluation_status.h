// How a candidate's evaluation ended: measured ("ok") or one failure kind. The enum is
// what C++ code passes around; the string form exists for the edges that carry it as
// text: the `evaluations.status` column (its CHECK lists the same words), the JSON
// protocol between the evaluator and its child process (workers/wire.h), the
// coordinator's protobuf messages and the command line's output. The words never change:
// stored runs and the protocol depend on them.
//
// Here, in storage/, because the store's schema is where the vocabulary is fixed, and
// storage is the lowest layer that both the store's records and the workers' Evaluator
// interface can include (tests/layering/check_layers.py). Header only, so that the
// evaluator's child process uses it without linking SQLite.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stipple {

enum class EvaluationStatus : uint8_t {
  Ok,            // measured
  CompileError,  // the schedule was rejected, or did not lower or compile
  Crash,         // the candidate's process died (not of the limits below)
  Timeout,       // past the deadline, or past the CPU-time allowance
  OutOfMemory,   // an allocation failed under the memory limit, or the kernel's OOM killer
  NaN,           // the output has NaN or infinite values
  Error,         // anything else: the evaluator's own failure, an answer it could not read,
                 // a job no worker could run
};

namespace detail {
inline constexpr std::array<std::pair<EvaluationStatus, std::string_view>, 7> kStatusNames = {{
    {EvaluationStatus::Ok, "ok"},
    {EvaluationStatus::CompileError, "compile_error"},
    {EvaluationStatus::Crash, "crash"},
    {EvaluationStatus::Timeout, "timeout"},
    {EvaluationStatus::OutOfMemory, "out_of_memory"},
    {EvaluationStatus::NaN, "nan"},
    {EvaluationStatus::Error, "error"},
}};
}  // namespace detail

/// The stored word: "ok", "compile_error", "crash", "timeout", "out_of_memory", "nan",
/// "error". "?" for a value outside the enum (which the store's CHECK refuses).
inline std::string to_string(EvaluationStatus s) {
  for (const auto& [status, name] : detail::kStatusNames) {
    if (status == s) return std::string(name);
  }
  return "?";
}

/// The status a stored word names; nullopt for any other text. Each edge says what an
/// unknown word means there (an error, with the word in the message).
inline std::optional<EvaluationStatus> parse_evaluation_status(std::string_view text) {
  for (const auto& [status, name] : detail::kStatusNames) {
    if (name == text) return status;
  }
  return std::nullopt;
}

}  // namespace stipple
