#include "search/nightly/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "search/nightly/change_test.h"

namespace stipple::search::nightly {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

const char* const kColours[] = {"#1f4e9c", "#d08c00", "#2a9d8f", "#8e44ad",
                                "#6c757d", "#b5651d", "#17becf", "#7f7f00"};
constexpr size_t kMostSeries = 8;

/// "x1.150 (1.140 to 1.163)" from a verdict's stats, or "".
std::string ratio_of(const nlohmann::json& stats) {
  if (!stats.contains("change")) return "";
  const nlohmann::json& c = stats["change"];
  auto number = [](const nlohmann::json& v) { return v.is_number() ? v.get<double>() : NAN; };
  return ratio_text(number(c["ratio"]), number(c["ratio_low"]), number(c["ratio_high"]));
}

/// A number of the stats as text ("" when the JSON has none: null for NaN).
std::string number_text(const nlohmann::json& v, const char* format) {
  return v.is_number() ? fmt::format(fmt::runtime(format), v.get<double>()) : std::string();
}

struct Point {
  size_t x = 0;  // the night's position in the registration's history
  double ms = 0;
  double error = 0;
  std::string verdict, tooltip;
};

struct Series {
  std::string name;
  std::vector<Point> points;
};

struct Night {
  storage::NightRecord record;
  std::vector<storage::NightVariantRecord> variants;
};

// A plot's frame: the area inside the axes and the data ranges mapped onto it.
struct Frame {
  double left = 64, top = 16, width = 560, height = 220;
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  double px(double x) const { return left + (x1 > x0 ? (x - x0) / (x1 - x0) : 0.5) * width; }
  double py(double y) const {
    return top + height - (y1 > y0 ? (y - y0) / (y1 - y0) : 0.5) * height;
  }
};

std::string axes(const Frame& f, const std::string& x_label, const std::string& y_label) {
  std::string s = fmt::format(
      "<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>"
      "<line class=\"axis\" x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\"/>",
      f.left, f.top, f.top + f.height, f.left + f.width);
  for (int k = 0; k <= 4; ++k) {
    const double y = f.y0 + (f.y1 - f.y0) * k / 4;
    s += fmt::format(
        "<line class=\"grid\" x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\"/>"
        "<text class=\"tick\" x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:.3g}</text>",
        f.left, f.py(y), f.left + f.width, f.left - 6, f.py(y) + 4, y);
  }
  s += fmt::format("<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                   f.left + f.width / 2, f.top + f.height + 36, escape(x_label));
  s += fmt::format(
      "<text class=\"label\" transform=\"translate(14 {}) rotate(-90)\" "
      "text-anchor=\"middle\">{}</text>",
      f.top + f.height / 2, escape(y_label));
  return s;
}

// An <svg> of the plot kind `kind` ("time", "front") sized to `f`, with its axes.
std::string plot_start(const char* kind, const Frame& f, const std::string& x_label,
                       const std::string& y_label) {
  return fmt::format(
             "<svg class=\"plot {}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" "
             "height=\"{}\" role=\"img\">",
             kind, f.left + f.width + 16, f.top + f.height + 48) +
         axes(f, x_label, y_label);
}

std::string marker(const Point& p, double x, double y, const char* colour) {
  const std::string title = "<title>" + escape(p.tooltip) + "</title>";
  if (p.verdict == "slower") {
    return fmt::format(
        "<polygon class=\"change slower\" points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\">"
        "{}</polygon>",
        x, y - 7, x - 6, y + 5, x + 6, y + 5, title);
  }
  if (p.verdict == "faster") {
    return fmt::format(
        "<polygon class=\"change faster\" points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\">"
        "{}</polygon>",
        x, y + 7, x - 6, y - 5, x + 6, y - 5, title);
  }
  if (p.verdict == "wrong output" || p.verdict == "less accurate" || p.verdict == "failed") {
    return fmt::format(
        "<path class=\"change wrong\" d=\"M{0:.1f},{1:.1f}l10,10m0,-10l-10,10\">{2}</path>", x - 5,
        y - 5, title);
  }
  return fmt::format(
      "<circle class=\"point\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\">{}</circle>", x, y,
      colour, title);
}

std::string time_plot(const std::vector<Night>& nights, const std::vector<Series>& series) {
  Frame f;
  f.x0 = 0;
  f.x1 = double(std::max<size_t>(nights.size(), 2) - 1);
  double most = 0;
  for (const Series& s : series) {
    for (const Point& p : s.points) most = std::max(most, p.ms);
  }
  f.y1 = most > 0 ? most * 1.15 : 1;
  std::string svg = plot_start("time", f, "night", "time (ms, median of the night's samples)");
  const size_t step = std::max<size_t>(1, nights.size() / 10);
  for (size_t i = 0; i < nights.size(); i += step) {
    svg +=
        fmt::format("<text class=\"tick\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                    f.px(double(i)), f.top + f.height + 16, nights[i].record.id);
  }
  for (size_t k = 0; k < series.size(); ++k) {
    const char* colour = kColours[k % std::size(kColours)];
    std::string line;
    for (const Point& p : series[k].points) {
      line += fmt::format("{:.1f},{:.1f} ", f.px(double(p.x)), f.py(p.ms));
    }
    svg += fmt::format("<polyline class=\"series\" fill=\"none\" stroke=\"{}\" points=\"{}\"/>",
                       colour, line);
    for (const Point& p : series[k].points) {
      svg += marker(p, f.px(double(p.x)), f.py(p.ms), colour);
    }
  }
  return svg + "</svg>";
}

// The front's staircase through (ms, error) points: each point's error the lowest so far.
std::string staircase(const Frame& f, std::vector<Point> points) {
  std::sort(points.begin(), points.end(),
            [](const Point& a, const Point& b) { return a.ms < b.ms; });
  std::string path;
  double best = INFINITY;
  for (const Point& p : points) {
    if (p.error >= best) continue;
    path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " H", f.px(p.ms),
                        std::isfinite(best) ? f.py(best) : f.py(p.error));
    path += fmt::format(" V{:.1f}", f.py(p.error));
    best = p.error;
  }
  return path;
}

std::string front_plot(const std::vector<Point>& now, const std::vector<Point>& before) {
  Frame f;
  double most_ms = 0, most_error = 0;
  for (const auto* set : {&now, &before}) {
    for (const Point& p : *set) {
      most_ms = std::max(most_ms, p.ms);
      most_error = std::max(most_error, p.error);
    }
  }
  f.x1 = most_ms > 0 ? most_ms * 1.1 : 1;
  f.y1 = most_error > 0 ? most_error * 1.15 : 1;
  std::string svg = plot_start("front", f, "time (ms)", "error");
  for (int k = 0; k <= 4; ++k) {
    const double x = f.x0 + (f.x1 - f.x0) * k / 4;
    svg += fmt::format(
        "<text class=\"tick\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:.3g}</text>", f.px(x),
        f.top + f.height + 16, x);
  }
  svg += fmt::format("<path class=\"front-line before\" fill=\"none\" d=\"{}\"/>",
                     staircase(f, before));
  svg += fmt::format("<path class=\"front-line now\" fill=\"none\" d=\"{}\"/>", staircase(f, now));
  for (const Point& p : before) {
    svg += fmt::format(
        "<circle class=\"front-point before\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\"><title>{}</title>"
        "</circle>",
        f.px(p.ms), f.py(p.error), escape(p.tooltip));
  }
  for (const Point& p : now) {
    svg += fmt::format(
        "<circle class=\"front-point now\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\"><title>{}</title>"
        "</circle>",
        f.px(p.ms), f.py(p.error), escape(p.tooltip));
  }
  return svg + "</svg>";
}

std::string last_night_table(const Night& n) {
  std::string rows;
  for (const storage::NightVariantRecord& v : n.variants) {
    const nlohmann::json stats = nlohmann::json::parse(v.stats);
    std::string before, p;
    if (stats.contains("change")) {
      before = number_text(stats["change"]["before_median_ms"], "{:.3f}");
      p = number_text(stats["change"]["p_value"], "{:.2g}");
    }
    std::string why = stats.contains("why") ? stats["why"].get<std::string>() : "";
    if (stats.contains("improves_on_shipped")) {
      const nlohmann::json& t = stats["improves_on_shipped"];
      auto number = [](const nlohmann::json& v) { return v.is_number() ? v.get<double>() : NAN; };
      why += std::string(why.empty() ? "" : "; ") +
             "an improvement: dominates the shipped variant, " +
             ratio_text(number(t["ratio"]), number(t["ratio_low"]), number(t["ratio_high"])) +
             " of its time";
    }
    rows += fmt::format(
        "<tr class=\"verdict-{}\"><td>{}</td><td>{}</td><td>{}</td><td>{:.3f}</td><td>{}</td>"
        "<td>{}</td><td>{:g}</td><td>{}</td></tr>",
        escape(v.verdict == "wrong output" ? "wrong" : v.verdict), escape(v.label),
        escape(v.verdict), before, median(v.samples), escape(ratio_of(stats)), p, v.error,
        escape(why));
  }
  return "<table><tr><th>variant</th><th>verdict</th><th>before (ms)</th><th>now (ms)</th>"
         "<th>ratio (interval)</th><th>p</th><th>error</th><th>why</th></tr>" +
         rows + "</table>";
}

std::string registration_section(storage::Database& db, const storage::NightlyRecord& reg) {
  // The nights of the host, target and setup of the last one that measured: timings of
  // different hosts are not drawn on one line. Failed ones are listed under the plots.
  const std::vector<storage::NightRecord> all = db.list_nights(reg.id);
  const storage::NightRecord* latest = nullptr;
  for (const storage::NightRecord& n : all) {
    if (n.outcome != "running" && n.outcome != "failed") latest = &n;
  }
  std::vector<Night> nights;
  std::string failures;
  for (const storage::NightRecord& n : all) {
    if (n.outcome == "failed") {
      failures += fmt::format("<li>night {} ({}, {}): {}</li>", n.id, escape(n.started_at),
                              escape(n.host), escape(n.message));
    }
    if (!latest || n.outcome == "running" || n.outcome == "failed" || n.host != latest->host ||
        n.target != latest->target || n.setup != latest->setup) {
      continue;
    }
    nights.push_back({n, db.night_variants(n.id)});
  }
  std::string out =
      fmt::format("<section><h2>{}</h2><p>{}, shipping {}; targets:", escape(reg.name),
                  escape(reg.pipeline_name), escape(reg.variant));
  for (const std::string& t : reg.targets) out += " <code>" + escape(t) + "</code>";
  out += "</p>";
  if (!failures.empty())
    failures = "<h3>Nights that could not measure</h3><ul>" + failures + "</ul>";
  if (nights.empty()) return out + "<p>No night has measured it yet.</p>" + failures + "</section>";
  out += fmt::format("<p class=\"meta\">Nights on {} ({}).</p>", escape(latest->host),
                     escape(latest->target));

  // The series: the shipped variant, and the schedules of the last night's front.
  const Night& last = nights.back();
  std::map<std::string, size_t> index;  // "shipped" or a schedule -> series
  std::vector<Series> series;
  for (const storage::NightVariantRecord& v : last.variants) {
    if (series.size() == kMostSeries) break;
    index[v.label == "shipped" ? "shipped" : v.schedule] = series.size();
    series.push_back({v.label, {}});
  }
  for (size_t i = 0; i < nights.size(); ++i) {
    for (const storage::NightVariantRecord& v : nights[i].variants) {
      auto it = index.find(v.label == "shipped" ? "shipped" : v.schedule);
      if (it == index.end() || v.samples.empty()) continue;
      const nlohmann::json stats = nlohmann::json::parse(v.stats);
      Point p;
      p.x = i;
      p.ms = median(v.samples);
      p.error = v.error;
      p.verdict = v.verdict;
      p.tooltip =
          fmt::format("night {} ({}): {} {:.3f} ms, {} {}", nights[i].record.id,
                      nights[i].record.started_at, v.label, p.ms, v.verdict, ratio_of(stats));
      series[it->second].points.push_back(p);
    }
  }
  out += "<h3>Time over the nights</h3><div class=\"legend\">";
  for (size_t k = 0; k < series.size(); ++k) {
    out += fmt::format("<span><i style=\"background:{}\"></i>{}</span>",
                       kColours[k % std::size(kColours)], escape(series[k].name));
  }
  out +=
      "<span><b class=\"slower\">&#9650;</b>slower</span><span><b class=\"faster\">&#9660;"
      "</b>faster</span><span><b class=\"wrong\">&#10005;</b>wrong output, less accurate "
      "or failed</span></div>";
  out += time_plot(nights, series);

  // The front now against the baseline night's.
  std::vector<Point> now, before;
  for (const storage::NightVariantRecord& v : last.variants) {
    if (v.samples.empty()) continue;
    now.push_back({0, median(v.samples), v.error, v.verdict,
                   fmt::format("{}: {:.3f} ms, error {:g}", v.label, median(v.samples), v.error)});
  }
  std::optional<int64_t> baseline_id;
  for (const storage::NightVariantRecord& v : last.variants) {
    if (v.baseline_night) baseline_id = v.baseline_night;
  }
  for (const Night& n : nights) {
    if (!baseline_id || n.record.id != *baseline_id) continue;
    for (const storage::NightVariantRecord& v : n.variants) {
      if (v.samples.empty()) continue;
      before.push_back({0, median(v.samples), v.error, v.verdict,
                        fmt::format("night {}: {}: {:.3f} ms, error {:g}", n.record.id, v.label,
                                    median(v.samples), v.error)});
    }
  }
  out +=
      fmt::format("<h3>The front of night {} (filled) against night {}'s (hollow)</h3>",
                  last.record.id, baseline_id ? std::to_string(*baseline_id) : std::string("none"));
  out += front_plot(now, before);
  out += fmt::format("<h3>Night {}: {}</h3><p class=\"meta\">{} on {}, {}; Stipple {}, LLVM {}</p>",
                     last.record.id, escape(last.record.outcome), escape(last.record.started_at),
                     escape(last.record.host), escape(last.record.target),
                     escape(last.record.stipple_version), escape(last.record.llvm_version));
  out += last_night_table(last);
  return out + failures + "</section>";
}

constexpr const char* kStyle = R"css(
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 20px; } h2 { font-size: 17px; margin-top: 32px; } h3 { font-size: 14px; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: 3px 8px; }
tr.verdict-slower td, tr.verdict-wrong td, tr.verdict-failed td { background: #fde2e2; }
tr.verdict-faster td { background: #e2f5e2; }
.axis { stroke: #444; } .grid { stroke: #eee; } .tick, .label { font-size: 11px; fill: #444; }
.series { stroke-width: 1.5; } .slower { fill: #c0392b; color: #c0392b; }
.faster { fill: #27ae60; color: #27ae60; } .wrong { stroke: #c0392b; stroke-width: 2.5; color: #c0392b; }
.front-point.now { fill: #1f4e9c; } .front-point.before { fill: #fff; stroke: #888; stroke-width: 1.5; }
.front-line.now { stroke: #1f4e9c; } .front-line.before { stroke: #888; stroke-dasharray: 4 3; }
.legend span { margin-right: 14px; } .legend i { display: inline-block; width: 12px; height: 3px;
  margin-right: 4px; vertical-align: middle; } .legend b { margin-right: 4px; }
.meta { color: #555; }
)css";

}  // namespace

std::string html_report(storage::Database& db,
                        const std::vector<storage::NightlyRecord>& registrations) {
  std::string body;
  for (const storage::NightlyRecord& reg : registrations) body += registration_section(db, reg);
  return std::string(
             "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
             "<title>Stipple nightly regression tuning</title><style>") +
         kStyle + "</style></head><body><h1>Stipple nightly regression tuning</h1>" + body +
         "</body></html>\n";
}

}  // namespace stipple::search::nightly
