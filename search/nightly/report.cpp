#include "search/nightly/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace stipple::search::nightly {
namespace {

std::string evidence(const ChangeTest& t, double alpha) {
  return fmt::format("{} at {:g}% confidence, p = {:.2g}, A = {:.2f}, {} + {} samples",
                     ratio_text(t.ratio, t.ratio_low, t.ratio_high), 100 * (1 - alpha), t.p_value,
                     t.effect_size, t.before_n, t.after_n);
}

nlohmann::json night_json(const storage::NightRecord& n) {
  return {{"id", n.id},
          {"target", n.target},
          {"host", n.host},
          {"stipple_version", n.stipple_version},
          {"llvm_version", n.llvm_version},
          {"started_at", n.started_at},
          {"finished_at", n.finished_at},
          {"outcome", n.outcome}};
}

nlohmann::json variant_json(const storage::NightVariantRecord& v) {
  return {{"label", v.label},
          {"schedule", v.schedule},
          {"exact", v.exact},
          {"status", v.status},
          {"reason", v.reason},
          {"samples_ms", v.samples},
          {"baseline_samples_ms", v.baseline_samples},
          {"median_ms", median(v.samples)},
          {"error", v.error},
          {"output_digest", v.output_digest}};
}

}  // namespace

std::string text_report(const storage::NightlyRecord& reg, const NightOutcome& night,
                        const std::string& reproduce) {
  const std::string which =
      night.night.id > 0 ? fmt::format("night {}", night.night.id) : "a night not recorded";
  const std::string against =
      night.baseline
          ? fmt::format(" against night {} ({})", night.baseline->id, night.baseline->started_at)
          : std::string(" (the first on this host and setup: nothing to compare)");
  const std::string verdict =
      night.regressed() ? std::string("REGRESSED")
      : night.night.outcome == "unsure"
          ? std::string(
                "unsure (no regression seen, but a variant's answer is unknown: the "
                "next night compares with the last that passed)")
          : std::string("passed");
  std::string out = fmt::format("{}: {} on {} ({}), {}{}: {}\n", reg.name, reg.pipeline_name,
                                night.night.target, night.night.host, which, against, verdict);
  for (const VariantOutcome& o : night.variants) {
    const storage::NightVariantRecord& v = o.now;
    std::string line = fmt::format("  {:<9} {:<14}", v.label, v.verdict);
    if (v.status != "ok") {
      line += v.status + ": " + v.reason;
    } else if (o.change) {
      line += fmt::format("{:.3f} ms -> {:.3f} ms  {}", o.change->before_median,
                          o.change->after_median, evidence(*o.change, night.alpha));
      line += o.timed_beside ? ", beside the baseline night's code"
                             : ", against the baseline night's numbers" +
                                   (o.baseline_problem.empty() ? std::string()
                                                               : " (" + o.baseline_problem + ")");
    } else {
      line += fmt::format("{:.3f} ms, {} samples", median(v.samples), v.samples.size());
    }
    if (!o.why.empty()) line += "\n" + std::string(26, ' ') + o.why;
    out += line + "\n";
  }
  for (const VariantOutcome& o : night.variants) {
    if (!o.improvement) continue;
    out += fmt::format(
        "  improvement: {} dominates the shipped variant: {:.3f} ms against {:.3f} "
        "ms, {}, error {:g} <= {:g}\n",
        o.now.label, o.improvement->after_median, o.improvement->before_median,
        evidence(*o.improvement, night.alpha), o.now.error, night.variants[0].now.error);
  }
  if (night.regressed()) {
    out += fmt::format("  versions: stipple {}, LLVM {}", night.night.stipple_version,
                       night.night.llvm_version);
    if (night.baseline) {
      out += fmt::format(" (baseline night: stipple {}, LLVM {})", night.baseline->stipple_version,
                         night.baseline->llvm_version);
    }
    out += "\n  measure again: " + reproduce + "\n";
  }
  return out;
}

nlohmann::json json_report(const storage::NightlyRecord& reg, const NightOutcome& night,
                           const std::string& reproduce) {
  nlohmann::json variants = nlohmann::json::array();
  for (const VariantOutcome& o : night.variants) {
    nlohmann::json v = variant_json(o.now);
    v["verdict"] = o.now.verdict;
    v["regressed"] = o.regressed();
    v["stats"] = nlohmann::json::parse(o.now.stats);
    if (o.before) v["before"] = variant_json(*o.before);
    variants.push_back(std::move(v));
  }
  return {{"registration",
           {{"name", reg.name},
            {"pipeline", reg.pipeline_name},
            {"variant", reg.variant},
            {"photos", reg.images}}},
          {"night", night_json(night.night)},
          {"baseline", night.baseline ? night_json(*night.baseline) : nlohmann::json()},
          {"regressed", night.regressed()},
          {"rounds", night.rounds},
          {"seconds", night.seconds},
          {"retune_run",
           night.night.retune_run ? nlohmann::json(*night.night.retune_run) : nlohmann::json()},
          {"variants", variants},
          {"reproduce", reproduce}};
}

}  // namespace stipple::search::nightly
