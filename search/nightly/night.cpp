#include "search/nightly/night.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "compiler_core/image/image_io.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/schedule/approximation.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/support/content_hash.h"
#include "compiler_core/support/files.h"
#include "search/tuning_session.h"

namespace stipple::search::nightly {
namespace {

bool measured(const storage::NightVariantRecord& v) { return v.status == "ok"; }

nlohmann::json to_json(const ChangeTest& t) {
  // Infinite bounds (too few samples for an interval) as null: JSON has no infinity.
  auto finite = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); };
  return {{"verdict", to_string(t.verdict)},
          {"before_n", t.before_n},
          {"after_n", t.after_n},
          {"before_median_ms", t.before_median},
          {"after_median_ms", t.after_median},
          {"ratio", t.ratio},
          {"ratio_low", finite(t.ratio_low)},
          {"ratio_high", finite(t.ratio_high)},
          {"p_value", t.p_value},
          {"effect_size", t.effect_size},
          {"exact_p", t.exact}};
}

/// The points of a run's front (load_front's entries less the baseline it shows beside).
std::vector<FrontEntry> front_points(storage::Database& db, int64_t run) {
  std::vector<FrontEntry> out = load_front(db, run);
  std::erase_if(out, [](const FrontEntry& e) { return e.beside_front; });
  return out;
}

/// The night's variants: the shipped one, then each point of the front whose schedule is
/// not the shipped one's.
std::vector<storage::NightVariantRecord> night_variants(storage::Database& db,
                                                        const storage::NightlyRecord& reg,
                                                        std::optional<int64_t> front_run,
                                                        const Pipeline& pipeline) {
  auto variant = [&](const std::string& label, const std::string& schedule) {
    storage::NightVariantRecord v;
    v.label = label;
    v.schedule = schedule;
    try {
      v.exact = !approximates(compile_schedule(schedule, label, pipeline));
    } catch (const UserError&) {
      // A stored schedule tonight's Stipple refuses: the measurement records it as a
      // compile error, the variant's failure (a regression of the shipped one).
      v.exact = false;
    }
    return v;
  };
  std::vector<storage::NightVariantRecord> out = {variant("shipped", reg.schedule)};
  if (!front_run) return out;
  std::vector<FrontEntry> front = front_points(db, *front_run);
  std::sort(front.begin(), front.end(), [](const FrontEntry& a, const FrontEntry& b) {
    return a.train.time_ms < b.train.time_ms;
  });
  std::set<std::string> seen = {reg.schedule};
  for (const FrontEntry& e : front) {
    if (!seen.insert(e.train.key.schedule).second) continue;
    out.push_back(variant("front " + std::to_string(out.size() - 1), e.train.key.schedule));
  }
  return out;
}

/// What a variant's samples are compared with: the baseline code's samples timed beside
/// it tonight, else the baseline night's own; null when there is no baseline.
const std::vector<double>* reference_samples(const VariantOutcome& o) {
  if (o.timed_beside) return &o.now.baseline_samples;
  if (o.before && measured(*o.before)) return &o.before->samples;
  return nullptr;
}

/// Tonight's samples from `from` on against the reference's from `reference_from` on.
std::optional<ChangeTest> test_of(const VariantOutcome& o, const ChangeTestOptions& options,
                                  size_t reference_from = 0, size_t from = 0) {
  const std::vector<double>* reference = reference_samples(o);
  if (!reference || !measured(o.now)) return std::nullopt;
  auto tail = [](const std::vector<double>& v, size_t k) {
    return std::vector<double>(v.begin() + std::ptrdiff_t(std::min(k, v.size())), v.end());
  };
  return compare_samples(tail(*reference, reference_from), tail(o.now.samples, from), options);
}

std::string combined_digest(const workers::EvaluationResult& r) {
  std::string digest;
  for (const workers::ImageMeasurement& m : r.images) digest += m.output_digest;
  return sha256_hex(digest);  // one digest for all the photos
}

/// Times each variant of `which` once more, and its baseline code beside it (a round):
/// one evaluation of them all, the order of each pair flipped every other round. The
/// first measurement of a variant sets its status, error, digest and code; a later one
/// that fails, or computes another output, is the variant's failure. Baseline code that
/// fails, or does not compute its own night's output, is not timed again (the variant is
/// then compared with the baseline night's samples).
void measure_round(workers::Evaluator& evaluator, std::vector<VariantOutcome>& variants,
                   const std::vector<size_t>& which, int round) {
  std::vector<workers::CodeRequest> requests;
  std::vector<std::pair<size_t, bool>> owner;  // variant, whether the request is its baseline's
  for (size_t i : which) {
    VariantOutcome& o = variants[i];
    workers::CodeRequest now{o.now.schedule, {}, {}, o.now.object.empty()};
    std::vector<std::pair<workers::CodeRequest, bool>> pair = {{now, false}};
    if (o.timed_beside) {
      pair.push_back({{o.before->schedule, o.before->object, o.before->symbol, false}, true});
      if (round % 2) std::swap(pair[0], pair[1]);
    }
    for (auto& [request, baseline] : pair) {
      request.group = int(i);  // a variant and its baseline in one process (evaluator.h)
      requests.push_back(std::move(request));
      owner.push_back({i, baseline});
    }
  }
  const std::vector<workers::EvaluationResult> results = evaluator.evaluate_code(requests, "train");
  for (size_t k = 0; k < results.size(); ++k) {
    VariantOutcome& o = variants[owner[k].first];
    const workers::EvaluationResult& r = results[k];
    if (owner[k].second) {
      if (!o.timed_beside) continue;  // gave up on it earlier in this round
      std::string problem;
      if (!r.ok()) {
        problem = "the baseline night's code failed here: " + to_string(r.status) + ": " + r.reason;
      } else if (combined_digest(r) != o.before->output_digest) {
        problem = "the baseline night's code computes another output here than it did then";
      }
      if (problem.empty()) {
        o.now.baseline_samples.push_back(r.min_time_ms);
      } else {
        o.timed_beside = false;
        o.baseline_problem = problem;
        o.now.baseline_samples.clear();
      }
      continue;
    }
    storage::NightVariantRecord& v = o.now;
    if (!r.ok()) {
      v.status = to_string(r.status);
      v.reason = r.reason;
      continue;
    }
    const std::string digest = combined_digest(r);
    if (v.samples.empty()) {
      v.status = "ok";
      v.error = r.error;
      v.output_digest = digest;
      v.object = r.object;
      v.symbol = r.symbol;
    } else if (digest != v.output_digest) {
      v.status = "nondeterministic";
      v.reason = "two runs of the same code computed different outputs";
      continue;
    }
    v.samples.push_back(r.min_time_ms);
  }
}

/// The verdict of a measured variant against `before` (also measured), except for
/// "unknown" which more samples may settle.
void decide(VariantOutcome& o, const NightOptions& options) {
  storage::NightVariantRecord& v = o.now;
  nlohmann::json stats = nlohmann::json::object();
  if (!measured(v)) {
    v.verdict = "failed";
  } else if (v.exact && v.error != 0) {
    v.verdict = "wrong output";
    o.why = "an exact schedule's output differs from the reference (error " +
            std::to_string(v.error) + ")";
  } else if (o.before && measured(*o.before) && v.exact && o.before->exact &&
             o.before->output_digest != v.output_digest) {
    v.verdict = "wrong output";
    o.why = "an exact schedule's output changed since the baseline night: digest " +
            v.output_digest.substr(0, 16) + ", was " + o.before->output_digest.substr(0, 16);
  } else if (o.before && measured(*o.before) && !v.exact &&
             v.error > o.before->error * (1 + options.max_error_growth) + 1e-12) {
    v.verdict = "less accurate";
    o.why =
        "its error grew to " + std::to_string(v.error) + " from " + std::to_string(o.before->error);
  }
  if (measured(v) && o.before && measured(*o.before)) {
    o.change = test_of(o, options.change);
    stats["change"] = to_json(*o.change);
    stats["compared_with"] = o.timed_beside ? "the baseline night's code, timed beside it"
                                            : "the baseline night's samples";
    if (!o.baseline_problem.empty()) stats["baseline_problem"] = o.baseline_problem;
    stats["error_before"] = o.before->error;
    if (o.confirmation) stats["confirmation"] = to_json(*o.confirmation);
    const bool moved =
        o.change->verdict == ChangeVerdict::Slower || o.change->verdict == ChangeVerdict::Faster;
    if (v.verdict.empty() && moved && o.confirmation &&
        o.confirmation->verdict != o.change->verdict) {
      v.verdict = "unknown";
      o.why = to_string(o.change->verdict) + " in all the rounds, " +
              to_string(o.confirmation->verdict) + " in the rounds that were to confirm it";
    }
    if (v.verdict.empty()) v.verdict = to_string(o.change->verdict);
  }
  if (v.verdict.empty()) v.verdict = "new";
  if (v.label == "shipped" && o.before && o.before->schedule != v.schedule) {
    o.why += std::string(o.why.empty() ? "" : "; ") +
             "the shipped schedule is not the one of the baseline night (registered again)";
  }
  if (!o.why.empty()) stats["why"] = o.why;
  if (o.improvement) stats["improves_on_shipped"] = to_json(*o.improvement);
  v.stats = stats.dump();
}

}  // namespace

std::string night_setup(const storage::NightlyRecord& reg) {
  return sha256_hex("pipeline " + std::to_string(reg.pipeline_id) + " photos " +
                    std::to_string(reg.dataset_id) + " size " + std::to_string(reg.width) + "x" +
                    std::to_string(reg.height));
}

bool VariantOutcome::regressed() const {
  const std::string& v = now.verdict;
  if (v == "slower" || v == "wrong output" || v == "less accurate") return true;
  // A failure is a regression of what measured before; a new variant that fails is the
  // night's news, not a regression (the re-tune records failures as it searches).
  return v == "failed" && (now.label == "shipped" || (before && measured(*before)));
}

bool NightOutcome::regressed() const {
  return std::any_of(variants.begin(), variants.end(),
                     [](const VariantOutcome& v) { return v.regressed(); });
}

std::vector<storage::ImageRecord> registration_photos(storage::Database& db,
                                                      const storage::NightlyRecord& registration) {
  std::vector<storage::ImageRecord> photos = db.dataset_images(registration.dataset_id);
  for (const storage::ImageRecord& im : photos) {
    // A photo edited since it was registered would compare two nights on other pixels.
    if (sha256_hex(read_text_file(im.path, "photo", kMaxImageFileBytes)) != im.sha256) {
      throw UserError("the photo " + im.path + " of '" + registration.name +
                      "' changed since it was registered (register it again with `stipple "
                      "nightly add --replace`)");
    }
  }
  return photos;
}

NightOutcome run_night(storage::Database& db, const storage::NightlyRecord& reg,
                       const Pipeline& pipeline, const std::string& source,
                       workers::Evaluator& evaluator, const NightOptions& options,
                       const NightProgress& progress) {
  const auto start = std::chrono::steady_clock::now();
  auto say = [&](const std::string& what) {
    if (progress) progress(reg.name + ": " + what);
  };
  NightOutcome out;
  out.night.nightly_id = reg.id;
  out.night.target = evaluator.target();
  out.night.host = options.host.empty() ? evaluator.host() : options.host;
  out.night.setup = night_setup(reg);
  out.night.stipple_version = options.stipple_version;
  out.night.llvm_version = options.llvm_version;
  // Not recorded: an id after every stored night's, for the baseline's lookup.
  out.night.id = options.record ? db.begin_night(out.night) : INT64_MAX;
  out.alpha = options.change.alpha;
  std::optional<int64_t> retune_run;
  try {
    std::optional<int64_t> front_run = reg.run_id;
    if (options.budget > 0 && options.record) {
      TuneOptions o = options.tune;
      // The shipped variant and the stored front, each once, as far as tonight's Stipple
      // still takes them (one it refuses is measured, and fails, as a variant below).
      std::vector<std::string> warm = {reg.schedule};
      if (front_run) {
        for (const FrontEntry& e : front_points(db, *front_run)) {
          warm.push_back(e.train.key.schedule);
        }
      }
      for (const std::string& text : warm) {
        if (std::find(o.warm_start.begin(), o.warm_start.end(), text) != o.warm_start.end()) {
          continue;
        }
        try {
          compile_schedule(text, "<warm start>", pipeline, ScheduleTarget::Cpu,
                           options.machine ? options.machine->vector_bytes : 0);
          o.warm_start.push_back(text);
        } catch (const UserError&) {
        }
      }
      o.seed = uint64_t(out.night.id);  // each night explores anew
      o.budget = 1 + int64_t(o.warm_start.size()) + options.budget;
      TuningSession session(db, evaluator, pipeline, source, o);
      if (options.machine) session.set_machine(*options.machine);
      retune_run = session.create_run();
      say("re-tuning (run " + std::to_string(*retune_run) + ", " + std::to_string(options.budget) +
          " evaluations past the warm start)");
      session.run();
      db.set_nightly_run(reg.id, *retune_run);
      front_run = retune_run;
    }

    for (storage::NightVariantRecord& v : night_variants(db, reg, front_run, pipeline)) {
      VariantOutcome o;
      o.now = std::move(v);
      out.variants.push_back(std::move(o));
    }
    out.baseline = db.baseline_night(out.night);
    if (out.baseline) {
      const std::vector<storage::NightVariantRecord> before = db.night_variants(out.baseline->id);
      for (VariantOutcome& o : out.variants) {
        for (const storage::NightVariantRecord& b : before) {
          const bool same = o.now.label == "shipped"
                                ? b.label == "shipped"
                                : b.label != "shipped" && b.schedule == o.now.schedule;
          if (same) o.before = b;
        }
        o.now.baseline_night = out.baseline->id;
        o.timed_beside = o.before && measured(*o.before) && !o.before->object.empty();
      }
    }

    // The first rounds: every variant.
    std::vector<size_t> all(out.variants.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    say("measuring " + std::to_string(all.size()) + " variant(s), " +
        std::to_string(options.samples) + " rounds" +
        (out.baseline ? ", against night " + std::to_string(out.baseline->id)
                      : std::string(" (the first night on this host)")));
    for (int r = 0; r < options.samples; ++r) {
      std::vector<size_t> still;
      for (size_t i : all) {
        if (measured(out.variants[i].now) || out.variants[i].now.status.empty()) still.push_back(i);
      }
      measure_round(evaluator, out.variants, still, out.rounds);
      ++out.rounds;
    }
    // More rounds for the variants whose answer is unknown, a few at a time (a test
    // needs several samples more to move), up to the cap.
    for (;;) {
      std::vector<size_t> unknown;
      for (size_t i = 0; i < out.variants.size(); ++i) {
        VariantOutcome& o = out.variants[i];
        const std::optional<ChangeTest> t = test_of(o, options.change);
        if (t && t->verdict == ChangeVerdict::Unknown &&
            int(o.now.samples.size()) < options.max_samples) {
          unknown.push_back(i);
        }
      }
      if (unknown.empty()) break;
      int more = 5;
      for (size_t i : unknown) {
        more = std::min(more, options.max_samples - int(out.variants[i].now.samples.size()));
      }
      say(std::to_string(unknown.size()) + " variant(s) unknown after " +
          std::to_string(out.rounds) + " rounds: " + std::to_string(more) + " more (at most " +
          std::to_string(options.max_samples) + ")");
      for (int r = 0; r < more; ++r) {
        measure_round(evaluator, out.variants, unknown, out.rounds);
        ++out.rounds;
      }
    }

    // Confirmation of each variant found slower or faster: as many rounds again, tested
    // alone, and while that test is unknown more rounds up to the cap.
    std::vector<size_t> changed;
    for (size_t i = 0; i < out.variants.size(); ++i) {
      const std::optional<ChangeTest> t = test_of(out.variants[i], options.change);
      if (t && (t->verdict == ChangeVerdict::Slower || t->verdict == ChangeVerdict::Faster)) {
        changed.push_back(i);
      }
    }
    if (!changed.empty()) {
      std::map<size_t, std::pair<size_t, size_t>> taken;  // samples so far: reference's, own
      int again = 0;
      for (size_t i : changed) {
        const VariantOutcome& o = out.variants[i];
        taken[i] = {o.timed_beside ? o.now.baseline_samples.size() : 0, o.now.samples.size()};
        again = std::max(again, int(o.now.samples.size()));
      }
      auto confirm = [&](size_t i) {
        VariantOutcome& o = out.variants[i];
        // Baseline code given up on meanwhile: its night's samples, all of them.
        o.confirmation =
            test_of(o, options.change, o.timed_beside ? taken[i].first : 0, taken[i].second);
      };
      say(std::to_string(changed.size()) + " variant(s) changed: " + std::to_string(again) +
          " rounds more to confirm");
      for (int r = 0; r < again; ++r) {
        // Each variant as many rounds again as it had: no more.
        std::vector<size_t> which;
        for (size_t i : changed) {
          if (out.variants[i].now.samples.size() < 2 * taken[i].second) which.push_back(i);
        }
        if (which.empty()) break;
        measure_round(evaluator, out.variants, which, out.rounds);
        ++out.rounds;
      }
      for (;;) {
        std::vector<size_t> unsure;
        for (size_t i : changed) {
          confirm(i);
          const VariantOutcome& o = out.variants[i];
          if (o.confirmation && o.confirmation->verdict == ChangeVerdict::Unknown &&
              int(o.now.samples.size()) < options.max_samples) {
            unsure.push_back(i);
          }
        }
        if (unsure.empty()) break;
        say(std::to_string(unsure.size()) + " confirmation(s) unknown: more rounds");
        measure_round(evaluator, out.variants, unsure, out.rounds);
        ++out.rounds;
      }
    }

    // Improvements: front points that dominate the shipped variant tonight.
    const storage::NightVariantRecord& shipped = out.variants[0].now;
    for (size_t i = 1; i < out.variants.size() && measured(shipped); ++i) {
      VariantOutcome& o = out.variants[i];
      if (!measured(o.now) || o.now.error > shipped.error) continue;
      ChangeTest t = compare_samples(shipped.samples, o.now.samples, options.change);
      if (t.verdict == ChangeVerdict::Faster) o.improvement = t;
    }
    for (VariantOutcome& o : out.variants) decide(o, options);
  } catch (const std::exception& e) {
    if (options.record) db.finish_night(out.night.id, {}, "failed", e.what(), retune_run);
    throw;
  }
  std::vector<storage::NightVariantRecord> records;
  for (const VariantOutcome& o : out.variants) records.push_back(o.now);
  // A night with an answer it could not give is no baseline for the next: it might be
  // slower by less than the noise let it say.
  const bool unsure =
      std::any_of(out.variants.begin(), out.variants.end(),
                  [](const VariantOutcome& o) { return o.now.verdict == "unknown"; });
  out.night.outcome = out.regressed() ? "regressed" : unsure ? "unsure" : "passed";
  if (options.record) {
    db.finish_night(out.night.id, records, out.night.outcome, "", retune_run);
    out.night = db.night(out.night.id).value();  // with its times
  } else {
    out.night.id = 0;
  }
  out.night.retune_run = retune_run;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace stipple::search::nightly
