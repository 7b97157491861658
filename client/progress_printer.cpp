#include "client/progress_printer.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <iostream>

namespace stipple::cli {

std::string format_duration(double s) {
  if (s < 0) return "?";
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%.0fs", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%dm%02ds", int(s) / 60, int(s) % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%dh%02dm", int(s) / 3600, (int(s) % 3600) / 60);
  }
  return buf;
}

namespace {

std::string speedup_text(double s) {
  if (s <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", s);
  return buf;
}

}  // namespace

ProgressPrinter::ProgressPrinter() : terminal_(isatty(STDERR_FILENO) == 1) {}

ProgressPrinter::~ProgressPrinter() {
  if (terminal_ && drawn_) std::cerr << "\n";
}

void ProgressPrinter::operator()(const search::TuneProgress& p) {
  const auto now = std::chrono::steady_clock::now();
  const bool last = p.phase == "done" || p.phase == "test";
  if (!terminal_ && !last && now - last_line_ < std::chrono::seconds(5)) return;
  last_line_ = now;
  char buf[320];
  // With --time alone the evaluation budget is unbounded: show the count alone.
  const std::string budget =
      p.budget >= search::kNoBudget ? std::string() : "/" + std::to_string(p.budget);
  // "dE<=1 1.20x, <=2 1.50x, <=5 -": each level of interest in the pipeline's metric.
  std::string levels;
  for (size_t t = 0; t < p.thresholds.size() && t < p.speedup_at.size(); ++t) {
    char level[64];
    std::snprintf(level, sizeof level, "%s%s<=%g %s", t ? ", " : "", t ? "" : p.metric.c_str(),
                  p.thresholds[t], speedup_text(p.speedup_at[t]).c_str());
    levels += level;
  }
  std::snprintf(buf, sizeof buf,
                "[%s] %lld%s evaluations (%lld measured, %.2f/s), %lld failed; best "
                "speedup at %s; %s, ETA %s",
                p.phase.c_str(), static_cast<long long>(p.evaluations), budget.c_str(),
                static_cast<long long>(p.measured), p.per_second,
                static_cast<long long>(p.failures), levels.empty() ? "-" : levels.c_str(),
                format_duration(p.elapsed_s).c_str(), format_duration(p.eta_s).c_str());
  if (terminal_) {
    std::cerr << "\r" << buf << "\x1b[K" << std::flush;
    drawn_ = true;
  } else {
    std::cerr << buf << "\n";
  }
}

}  // namespace stipple::cli
