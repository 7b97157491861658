// The live progress line of a tuning run (`stipple tune`, `stipple submit --wait`): on a
// terminal one line rewritten in place, otherwise a plain log line every few seconds.
#pragma once

#include <chrono>
#include <string>

#include "search/tuning_session.h"

namespace stipple::cli {

/// "42s", "3m05s", "1h02m"; "?" for a negative (unknown) duration.
std::string format_duration(double seconds);

class ProgressPrinter {
 public:
  ProgressPrinter();
  ~ProgressPrinter();
  void operator()(const search::TuneProgress& p);

 private:
  bool terminal_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_line_{};
};

}  // namespace stipple::cli
