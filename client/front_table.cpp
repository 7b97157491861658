#include "client/front_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "compiler_core/ir/error.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/support/host_probe.h"
#include "search/tuning_session.h"

namespace stipple::cli {

namespace {

std::string fixed(double v, int digits) {
  if (std::isnan(v)) return "-";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// The schedule on one line: its directive lines joined by "; ", comments left out.
std::string one_line(const std::string& text) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos) continue;
    line = line.substr(start);
    if (line[0] == '.') {
      out += line;  // a continuation line of a chain
    } else {
      out += (out.empty() ? "" : "; ") + line;
    }
  }
  return out.empty() ? "(default schedule)" : out;
}

std::string csv_quote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

nlohmann::json number(double v) {
  if (!std::isfinite(v)) return nullptr;
  return v;
}

}  // namespace

FrontListing load_front_listing(storage::Database& db, int64_t run_id) {
  FrontListing f;
  std::optional<storage::RunRecord> run = db.find_run(run_id);
  if (!run) throw UserError("no run " + std::to_string(run_id) + " in " + db.path());
  f.run = *run;
  f.entries = search::load_front(db, run_id);
  f.metric = search::error_metric_name(db, run->pipeline_id);
  return f;
}

void print_front(std::ostream& out, storage::Database& db, int64_t run_id, FrontFormat format) {
  print_front(out, load_front_listing(db, run_id), format);
}

void write_front_svg(const std::string& path, storage::Database& db, int64_t run_id) {
  write_front_svg(path, load_front_listing(db, run_id));
}

void print_front(std::ostream& out, const FrontListing& h, FrontFormat format) {
  const std::vector<search::FrontEntry>& front = h.entries;
  const double base_ms = search::baseline_time_ms(h.entries);
  auto speedup = [&](double ms) { return base_ms > 0 && ms > 0 ? base_ms / ms : NAN; };

  if (format == FrontFormat::Json) {
    nlohmann::json j = {{"run", h.run.id},
                        {"pipeline", h.run.pipeline_name},
                        {"strategy", h.run.strategy},
                        {"state", storage::run_state_label(h.run)},
                        {"partial", search::front_is_partial(h.run)},
                        {"target", h.run.target},
                        {"emulated", target_is_emulated(h.run.target)},
                        {"metric", h.metric},
                        {"variants", nlohmann::json::array()}};
    int variant = 0;
    for (const search::FrontEntry& e : front) {
      auto side = [](const storage::EvaluationRecord& r) {
        return nlohmann::json{{"evaluation", r.id},
                              {"time_ms", number(r.time_ms)},
                              {"error", number(r.error)},
                              {"psnr", number(r.psnr)},
                              {"compile_ms", number(r.compile_ms)}};
      };
      nlohmann::json v = {{"variant", variant++},
                          {"baseline", e.baseline},
                          {"speedup", number(speedup(e.train.time_ms))},
                          {"train", side(e.train)},
                          {"schedule", e.train.key.schedule}};
      v["test"] = e.test ? side(*e.test) : nlohmann::json(nullptr);
      j["variants"].push_back(v);
    }
    out << j.dump(2) << "\n";
    return;
  }
  if (format == FrontFormat::Csv) {
    out << "variant,baseline,train_ms,train_" << h.metric << ",test_ms,test_" << h.metric
        << ",speedup,schedule\n";
    int variant = 0;
    for (const search::FrontEntry& e : front) {
      out << variant++ << "," << (e.baseline ? 1 : 0) << "," << fixed(e.train.time_ms, 4) << ","
          << fixed(e.train.error, 4) << "," << (e.test ? fixed(e.test->time_ms, 4) : "") << ","
          << (e.test ? fixed(e.test->error, 4) : "") << "," << fixed(speedup(e.train.time_ms), 3)
          << "," << csv_quote(e.train.key.schedule) << "\n";
    }
    return;
  }
  out << "run " << h.run.id << ": " << h.run.pipeline_name << ", " << h.run.strategy << ", "
      << h.run.evaluations << " evaluations, " << storage::run_state_label(h.run) << ", target "
      << h.run.target << "\n";
  if (target_is_emulated(h.run.target)) {
    out << "emulated: measured on an emulated CPU (qemu-user, or a worker started with "
           "--emulated); the times are the emulator's, not a real CPU's, and compare only with "
           "each other\n";
  }
  if (search::front_is_partial(h.run)) {
    out << "partial: the front of the evaluations measured so far (the run is not done); test "
           "columns where a test measurement exists\n";
  }
  char line[512];
  std::snprintf(line, sizeof line, "%4s %10s %9s %10s %9s %8s  %s\n", "#", "train ms",
                ("train " + h.metric).c_str(), "test ms", ("test " + h.metric).c_str(), "speedup",
                "schedule");
  out << line;
  int variant = 0;
  for (const search::FrontEntry& e : front) {
    std::string sched = one_line(e.train.key.schedule);
    if (sched.size() > 100) sched = sched.substr(0, 97) + "...";
    if (e.baseline) sched = "[baseline] " + sched;
    std::snprintf(line, sizeof line, "%4d %10s %9s %10s %9s %8s  %s\n", variant++,
                  fixed(e.train.time_ms, 3).c_str(), fixed(e.train.error, 3).c_str(),
                  e.test ? fixed(e.test->time_ms, 3).c_str() : "-",
                  e.test ? fixed(e.test->error, 3).c_str() : "-",
                  (fixed(speedup(e.train.time_ms), 2) + "x").c_str(), sched.c_str());
    out << line;
  }
}

void write_front_svg(const std::string& path, const FrontListing& h) {
  // Hand-written: a scatter plot of a few dozen points needs no plotting library (and
  // Debian has none for C++ that writes SVG without a display stack).
  const std::vector<search::FrontEntry>& front = h.entries;
  const double W = 720, H = 460, left = 70, right = 20, top = 40, bottom = 55;
  double max_t = 0, max_e = 0;
  for (const search::FrontEntry& e : front) {
    for (const storage::EvaluationRecord* r : {&e.train, e.test ? &*e.test : nullptr}) {
      if (!r) continue;
      if (std::isfinite(r->time_ms)) max_t = std::max(max_t, r->time_ms);
      if (std::isfinite(r->error)) max_e = std::max(max_e, r->error);
    }
  }
  max_t = max_t > 0 ? max_t * 1.1 : 1;
  max_e = max_e > 0 ? max_e * 1.1 : 1;
  auto X = [&](double t) { return left + (W - left - right) * t / max_t; };
  auto Y = [&](double e) { return H - bottom - (H - top - bottom) * e / max_e; };
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << W / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">run "
    << h.run.id << ": " << h.run.pipeline_name << " (" << h.run.strategy
    << "), front of time versus error</text>\n";
  s << "<line x1=\"" << left << "\" y1=\"" << H - bottom << "\" x2=\"" << W - right << "\" y2=\""
    << H - bottom << "\" stroke=\"black\"/>\n<line x1=\"" << left << "\" y1=\"" << top << "\" x2=\""
    << left << "\" y2=\"" << H - bottom << "\" stroke=\"black\"/>\n";
  for (int k = 0; k <= 5; ++k) {
    const double t = max_t * k / 5, e = max_e * k / 5;
    s << "<text x=\"" << X(t) << "\" y=\"" << H - bottom + 18 << "\" text-anchor=\"middle\">"
      << fixed(t, 2) << "</text>\n<text x=\"" << left - 8 << "\" y=\"" << Y(e) + 4
      << "\" text-anchor=\"end\">" << fixed(e, 2) << "</text>\n";
  }
  s << "<text x=\"" << (left + W - right) / 2 << "\" y=\"" << H - 12
    << "\" text-anchor=\"middle\">time (ms)</text>\n<text x=\"18\" y=\"" << (top + H - bottom) / 2
    << "\" text-anchor=\"middle\" transform=\"rotate(-90 18 " << (top + H - bottom) / 2
    << ")\">mean " << h.metric << "</text>\n";
  // The training front as a staircase, then the points.
  std::string stairs;
  for (const search::FrontEntry& e : front) {
    if (e.baseline || !std::isfinite(e.train.time_ms) || !std::isfinite(e.train.error)) continue;
    stairs += (stairs.empty() ? "" : " ") + fixed(X(e.train.time_ms), 1) + "," +
              fixed(Y(e.train.error), 1);
  }
  if (!stairs.empty()) {
    s << "<polyline points=\"" << stairs
      << "\" fill=\"none\" stroke=\"#1f77b4\" stroke-opacity=\"0.5\"/>\n";
  }
  for (const search::FrontEntry& e : front) {
    if (std::isfinite(e.train.time_ms) && std::isfinite(e.train.error)) {
      if (e.baseline) {
        s << "<rect x=\"" << X(e.train.time_ms) - 5 << "\" y=\"" << Y(e.train.error) - 5
          << "\" width=\"10\" height=\"10\" fill=\"#d62728\"/>\n<text x=\""
          << X(e.train.time_ms) + 8 << "\" y=\"" << Y(e.train.error) - 8 << "\">baseline</text>\n";
      } else {
        s << "<circle cx=\"" << X(e.train.time_ms) << "\" cy=\"" << Y(e.train.error)
          << "\" r=\"4\" fill=\"#1f77b4\"/>\n";
      }
    }
    if (e.test && std::isfinite(e.test->time_ms) && std::isfinite(e.test->error)) {
      s << "<circle cx=\"" << X(e.test->time_ms) << "\" cy=\"" << Y(e.test->error)
        << "\" r=\"4\" fill=\"none\" stroke=\"#ff7f0e\" stroke-width=\"1.5\"/>\n";
    }
  }
  s << "<circle cx=\"" << W - 150 << "\" cy=\"" << top + 10
    << "\" r=\"4\" fill=\"#1f77b4\"/><text x=\"" << W - 140 << "\" y=\"" << top + 14
    << "\">train</text>\n<circle cx=\"" << W - 150 << "\" cy=\"" << top + 28
    << "\" r=\"4\" fill=\"none\" stroke=\"#ff7f0e\" stroke-width=\"1.5\"/><text x=\"" << W - 140
    << "\" y=\"" << top + 32 << "\">test</text>\n</svg>\n";
  std::ofstream f(path);
  f << s.str();
  if (!f) throw UserError("cannot write '" + path + "'");
}

}  // namespace stipple::cli
