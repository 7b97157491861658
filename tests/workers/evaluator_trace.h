// The evaluator child's trace (STIPPLE_EVALUATOR_TRACE, workers/evaluation_server_main.cpp),
// read back by the tests that check timed runs never overlap each other or a compile.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace stipple::workers {

/// One measured candidate: steady-clock nanoseconds from when each phase held its lock.
struct TraceRecord {
  long pid = 0;
  int64_t compile_start = 0, compile_end = 0, timing_start = 0, timing_end = 0;
};

inline std::vector<TraceRecord> read_evaluator_trace(const std::string& path) {
  std::ifstream in(path);
  std::vector<TraceRecord> out;
  TraceRecord r;
  while (in >> r.pid >> r.compile_start >> r.compile_end >> r.timing_start >> r.timing_end) {
    out.push_back(r);
  }
  return out;
}

/// Whether [a0, a1) and [b0, b1) share a moment.
inline bool intervals_overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  return a0 < b1 && b0 < a1;
}

}  // namespace stipple::workers
