#include "search/tuning_session.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "compiler_core/image/image_io.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_equality.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/schedule/schedule_printer.h"
#include "compiler_core/support/content_hash.h"
#include "compiler_core/support/files.h"
#include "search/reuse/reuse_model.h"
#include "search/strategy_registry.h"
#include "workers/measurement.h"

namespace stipple::search {

namespace {}  // namespace

std::string error_metric_name(storage::Database& db, int64_t pipeline_id) {
  std::optional<storage::PipelineRecord> p = db.pipeline(pipeline_id);
  if (!p) return "error";
  try {
    return metric_label(compile_pipeline(p->source, p->name + ".stp").output.metric);
  } catch (const UserError&) {
    return "error";
  }
}

std::vector<FrontEntry> load_front(storage::Database& db, int64_t run_id) {
  std::optional<storage::RunRecord> run = db.find_run(run_id);
  if (!run) throw UserError("no run " + std::to_string(run_id));
  std::vector<FrontEntry> out;
  bool baseline_seen = false;
  std::vector<storage::FrontPoint> points = db.front(run_id);
  if (run->state != "done") {
    // Not finished (running, interrupted, failed or cancelled): the front of what was
    // measured so far on the training photos, with the test measurement of each point
    // where one was taken.
    points.clear();
    std::vector<storage::EvaluationRecord> train;
    for (const storage::RunEvaluation& e : db.run_evaluations(run_id)) {
      if (e.evaluation.key.split == "train" && e.evaluation.ok()) train.push_back(e.evaluation);
    }
    std::vector<Objectives> objectives;
    for (const storage::EvaluationRecord& e : train) objectives.push_back({e.time_ms, e.error});
    for (size_t i : pareto_front(objectives)) {
      storage::EvaluationKey key = train[i].key;
      key.split = "test";
      std::optional<storage::EvaluationRecord> tested = db.find_evaluation(key);
      points.push_back({train[i].id, tested ? std::optional<int64_t>(tested->id) : std::nullopt});
    }
  }
  for (const storage::FrontPoint& p : points) {
    FrontEntry e;
    e.train = *db.evaluation(p.evaluation_id);
    if (p.test_evaluation_id) e.test = db.evaluation(*p.test_evaluation_id);
    e.baseline = run->baseline_evaluation_id == p.evaluation_id;
    baseline_seen = baseline_seen || e.baseline;
    out.push_back(std::move(e));
  }
  if (!baseline_seen && run->baseline_evaluation_id) {
    // The baseline is shown even when the front dominates it: it is what speedups are
    // against. Its test measurement is the one stored for the same schedule, if any.
    FrontEntry e;
    e.train = *db.evaluation(*run->baseline_evaluation_id);
    storage::EvaluationKey key = e.train.key;
    key.split = "test";
    e.test = db.find_evaluation(key);
    e.baseline = e.beside_front = true;
    out.push_back(std::move(e));
  }
  return out;
}

double baseline_time_ms(const std::vector<FrontEntry>& front) {
  for (const FrontEntry& e : front) {
    if (e.baseline) return e.train.time_ms;
  }
  return 0;
}

storage::EvaluationRecord front_variant(storage::Database& db, int64_t run_id, int variant) {
  std::vector<search::FrontEntry> front = load_front(db, run_id);
  const std::string run = "run " + std::to_string(run_id);
  if (front.empty()) throw UserError(run + " has no front yet");
  if (variant < 0 || variant >= static_cast<int>(front.size())) {
    throw UserError(run + " has variants 0.." + std::to_string(front.size() - 1) +
                    " (see `stipple front " + std::to_string(run_id) + " --db " + db.path() +
                    "`), not " + std::to_string(variant));
  }
  return std::move(front[static_cast<size_t>(variant)].train);
}

void check_run_pipeline(storage::Database& db, int64_t run_id, const Pipeline& pipeline,
                        const std::string& file) {
  const std::optional<storage::RunRecord> run = db.find_run(run_id);
  if (!run) throw UserError("no run " + std::to_string(run_id) + " in " + db.path());
  const std::optional<storage::PipelineRecord> tuned = db.pipeline(run->pipeline_id);
  if (!tuned || tuned->ir_hash != pipeline_ir_hash(pipeline)) {
    throw UserError("run " + std::to_string(run_id) + " of " + db.path() + " tuned pipeline '" +
                    (tuned ? tuned->name : std::string("?")) + "', a different program from '" +
                    pipeline.name + "' (" + file + ")");
  }
}

TuningSession::TuningSession(storage::Database& db, workers::Evaluator& evaluator,
                             const Pipeline& pipeline, std::string pipeline_source,
                             TuneOptions options)
    : db_(db),
      evaluator_(evaluator),
      pipeline_(pipeline),
      source_(std::move(pipeline_source)),
      options_(std::move(options)) {}

std::string pipeline_ir_hash(const Pipeline& pipeline) {
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(structural_hash(pipeline)));
  return hash;
}

int64_t store_pipeline(storage::Database& db, const Pipeline& pipeline, const std::string& source) {
  return db.put_pipeline(pipeline.name, pipeline_ir_hash(pipeline), source);
}

int64_t store_photos(storage::Database& db, const std::vector<std::string>& train,
                     const std::vector<std::string>& test) {
  std::vector<storage::ImageRecord> images;
  for (const auto* split : {&train, &test}) {
    for (const std::string& path : *split) {
      storage::ImageRecord r;
      r.path = path;
      r.sha256 = sha256_file(path);
      Buffer photo = read_image(path);
      r.width = int(photo.extent(0));
      r.height = int(photo.extent(1));
      r.split = split == &train ? "train" : "test";
      images.push_back(r);
    }
  }
  std::string name =
      train.empty() ? "images" : std::filesystem::path(train[0]).parent_path().filename().string();
  return db.put_dataset(name, images);
}

int64_t TuningSession::create_run() {
  pipeline_id_ = store_pipeline(db_, pipeline_, source_);
  dataset_id_ = store_photos(db_, options_.train_images, options_.test_images);
  storage::RunRecord r;
  r.pipeline_id = pipeline_id_;
  r.dataset_id = dataset_id_;
  r.target = evaluator_.target();
  r.strategy = options_.strategy;
  r.budget_evaluations = options_.budget;
  r.budget_seconds = options_.time_budget_s;
  r.seed = options_.seed;
  r.options_json = options_.to_json();
  r.state = "running";
  run_id_ = db_.create_run(r);
  return run_id_;
}

void TuningSession::attach(int64_t run_id) {
  std::optional<storage::RunRecord> r = db_.find_run(run_id);
  if (!r) throw UserError("no run " + std::to_string(run_id) + " in " + db_.path());
  if (r->target != evaluator_.target()) {
    throw UserError("run " + std::to_string(run_id) + " was measured on target " + r->target +
                    "; this machine is " + evaluator_.target() +
                    " (timings of different machines are never mixed in one front)");
  }
  check_run_pipeline(db_, run_id, pipeline_, options_.pipeline_file);
  run_id_ = run_id;
  pipeline_id_ = r->pipeline_id;
  dataset_id_ = r->dataset_id;
  db_.set_run_state(run_id_, "running");
}

std::vector<storage::EvaluationRecord> TuningSession::evaluate(const std::vector<Candidate>& batch,
                                                               const std::string& split) {
  std::vector<storage::RunEvaluation> records(batch.size());
  std::vector<std::string> to_measure;
  std::map<std::string, std::vector<size_t>> waiting;  // schedule -> records awaiting it
  for (size_t i = 0; i < batch.size(); ++i) {
    storage::RunEvaluation& r = records[i];
    r.evaluation.key = {pipeline_id_, dataset_id_, split, evaluator_.target(), batch[i].schedule};
    r.strategy = batch[i].strategy;
    r.seq = next_seq_++;
    if (waiting.count(batch[i].schedule)) {
      waiting[batch[i].schedule].push_back(i);
      continue;
    }
    // With remeasure, each schedule is measured again once per process, not each time a
    // strategy proposes it.
    const std::string key = split + "\n" + batch[i].schedule;
    std::optional<storage::EvaluationRecord> stored;
    if (!options_.remeasure || remeasured_.count(key))
      stored = db_.find_evaluation(r.evaluation.key);
    if (stored) {
      r.evaluation = *stored;
      r.origin = "stored";
      continue;
    }
    waiting[batch[i].schedule].push_back(i);
    to_measure.push_back(batch[i].schedule);
    remeasured_.insert(key);
  }
  if (!to_measure.empty()) {
    // A candidate 20 times slower than the baseline is timed by one run (Evaluator).
    const double give_up_ms = progress_.baseline_ms > 0 ? 20 * progress_.baseline_ms : 0;
    std::vector<workers::EvaluationResult> results =
        evaluator_.evaluate(to_measure, split, split == "train" ? give_up_ms : 0);
    std::vector<storage::ImageRecord> images = db_.dataset_images(dataset_id_, split);
    for (size_t k = 0; k < to_measure.size(); ++k) {
      const workers::EvaluationResult& res = results[k];
      for (size_t i : waiting[to_measure[k]]) {
        records[i].origin = res.shared ? "shared" : "measured";
        storage::EvaluationRecord& e = records[i].evaluation;
        e.status = res.status;
        e.reason = res.reason;
        e.host = evaluator_.host();
        e.compile_ms = res.compile_ms;
        e.time_ms = res.time_ms;
        e.error = res.error;
        e.psnr = res.psnr;
        for (size_t m = 0; m < res.images.size() && m < images.size(); ++m) {
          e.measurements.push_back(
              {images[m].id, res.images[m].time_ms, res.images[m].error, res.images[m].psnr});
        }
      }
      ++progress_.measured;
      if (!res.ok()) ++progress_.failures;
    }
  }
  for (auto& [schedule, indices] : waiting) {
    for (size_t k = 1; k < indices.size(); ++k) {
      records[indices[k]].evaluation = records[indices[0]].evaluation;
    }
  }
  db_.put_evaluations(run_id_, records, options_.remeasure && !to_measure.empty());
  std::vector<storage::EvaluationRecord> out;
  for (const storage::RunEvaluation& r : records) out.push_back(r.evaluation);
  return out;
}

std::unique_ptr<Strategy> TuningSession::make_strategy(const std::string& baseline_text) {
  const StrategyInfo& info = strategy_info(options_.strategy);
  std::vector<Schedule> seeds;
  if (!baseline_text.empty()) {
    seeds.push_back(compile_schedule(baseline_text, "<baseline>", pipeline_, ScheduleTarget::Cpu,
                                     machine_.vector_bytes));
  }
  for (const std::string& text : options_.warm_start) {
    seeds.push_back(compile_schedule(text, "<warm start>", pipeline_, ScheduleTarget::Cpu,
                                     machine_.vector_bytes));
  }
  // The reuse model's schedule, for the size of the first training photo's output: a
  // candidate of its own and a seed of the two searches (computed, not measured).
  std::string reuse_text;
  if (info.uses_reuse_model || options_.use_reuse_seed) {
    InputImages inputs = workers::inputs_for_photo(pipeline_, options_.train_images.at(0));
    ReuseModelResult r =
        reuse_model_schedule(pipeline_, machine_, output_extents(pipeline_, inputs, {}));
    reuse_model_ms_ = r.optimisation_ms;
    reuse_text = print_schedule(r.schedule, pipeline_);
    seeds.push_back(r.schedule);
  }
  SearchSpaceOptions so;
  so.allow_perforation = !options_.exact_only;
  so.vector_bytes = machine_.vector_bytes;
  space_ = std::make_unique<SearchSpace>(pipeline_, so);
  return info.make({*space_, options_, seeds, reuse_text});
}

void TuningSession::run(const ProgressCallback& report) {
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  // Seq numbers continue after what the run has (a resumed run's replayed links exist).
  std::set<int64_t> train_ids;
  for (const storage::RunEvaluation& e : db_.run_evaluations(run_id_)) {
    next_seq_ = std::max(next_seq_, e.seq + 1);
  }
  progress_ = {};
  progress_.metric = metric_label(pipeline_.output.metric);
  for (double t : options_.thresholds) {
    if (t > 0) progress_.thresholds.push_back(t);
  }
  progress_.speedup_at.assign(progress_.thresholds.size(), 0);
  progress_.budget = options_.budget;
  progress_.time_budget_s = options_.time_budget_s;
  auto publish = [&](const std::string& phase) {
    progress_.phase = phase;
    progress_.evaluations = int64_t(train_ids.size());
    progress_.elapsed_s = elapsed();
    progress_.per_second =
        progress_.elapsed_s > 0 ? double(progress_.measured) / progress_.elapsed_s : 0;
    progress_.eta_s = progress_.per_second > 0
                          ? double(std::max<int64_t>(0, options_.budget - progress_.evaluations)) /
                                progress_.per_second
                          : -1;
    if (options_.time_budget_s > 0) {
      // Both limits may hold (tune's default): the one that comes first.
      const double time_left = std::max(0.0, options_.time_budget_s - progress_.elapsed_s);
      progress_.eta_s = progress_.eta_s >= 0 && options_.budget < kNoBudget
                            ? std::min(progress_.eta_s, time_left)
                            : time_left;
    }
    if (phase == "test" || phase == "done") progress_.eta_s = 0;  // the search has ended
    if (report) report(progress_);
  };
  auto note = [&](const storage::EvaluationRecord& e) {
    train_ids.insert(e.id);
    if (!e.ok() || progress_.baseline_ms <= 0) return;
    for (size_t t = 0; t < progress_.thresholds.size(); ++t) {
      if (e.error <= progress_.thresholds[t]) {
        progress_.speedup_at[t] =
            std::max(progress_.speedup_at[t], progress_.baseline_ms / e.time_ms);
      }
    }
  };

  // The baseline: the hand schedule when there is one, else the default schedule.
  std::string baseline_text;
  if (!options_.baseline_schedule.empty()) {
    baseline_text = read_text_file(options_.baseline_schedule);
    compile_schedule(baseline_text, options_.baseline_schedule, pipeline_, ScheduleTarget::Cpu,
                     machine_.vector_bytes);  // a bad one is bad input
  }
  publish("baseline");
  storage::EvaluationRecord baseline =
      evaluate({{baseline_text, std::nullopt, "baseline"}}, "train")[0];
  if (stopped()) return;
  if (!baseline.ok()) {
    const std::string why = "the baseline schedule " +
                            (options_.baseline_schedule.empty() ? std::string("(the default)")
                                                                : options_.baseline_schedule) +
                            " failed: " + to_string(baseline.status) + ": " + baseline.reason;
    db_.set_run_state(run_id_, "failed", why);  // `stipple runs` and a status can say why
    throw UserError(why);
  }
  db_.set_run_baseline(run_id_, baseline.id);
  progress_.baseline_ms = baseline.time_ms;
  note(baseline);

  std::unique_ptr<Strategy> strategy = make_strategy(baseline_text);
  // The warm start's schedules, each once, within the budget: found in the store when
  // measured before (the nightly re-tune's stored front), so the search starts where
  // the last one ended at no cost.
  std::vector<Candidate> warm;
  for (const std::string& text : options_.warm_start) {
    const bool seen = text == baseline.key.schedule ||
                      std::any_of(warm.begin(), warm.end(),
                                  [&](const Candidate& c) { return c.schedule == text; });
    if (!seen && int64_t(train_ids.size() + warm.size()) < options_.budget) {
      warm.push_back({text, std::nullopt, "warm start"});
    }
  }
  if (!warm.empty()) {
    for (const storage::EvaluationRecord& e : evaluate(warm, "train")) note(e);
    publish("search");
    if (stopped()) return;
  }
  while (int64_t(train_ids.size()) < options_.budget &&
         (options_.time_budget_s <= 0 || elapsed() < options_.time_budget_s)) {
    const size_t room = size_t(options_.budget - int64_t(train_ids.size()));
    std::vector<Candidate> batch =
        strategy->propose(std::min<size_t>(size_t(std::max(1, options_.batch)), room));
    if (batch.empty()) break;
    std::vector<storage::EvaluationRecord> records = evaluate(batch, "train");
    std::vector<Outcome> outcomes;
    for (size_t i = 0; i < batch.size(); ++i) {
      Outcome o;
      o.candidate = batch[i];
      o.ok = records[i].ok();
      o.objectives = {records[i].time_ms, records[i].error};
      outcomes.push_back(o);
      note(records[i]);
    }
    strategy->observe(outcomes);
    publish("search");
    if (stopped()) return;
  }

  // The front on the training photos, re-measured on the test photos.
  std::vector<storage::EvaluationRecord> train;
  for (const storage::RunEvaluation& e : db_.run_evaluations(run_id_)) {
    if (e.evaluation.key.split == "train" && e.evaluation.ok()) train.push_back(e.evaluation);
  }
  std::vector<Objectives> points;
  for (const storage::EvaluationRecord& e : train) points.push_back({e.time_ms, e.error});
  std::vector<size_t> front = pareto_front(points);
  std::vector<Candidate> retest;
  for (size_t i : front) retest.push_back({train[i].key.schedule, std::nullopt, "front"});
  retest.push_back({baseline.key.schedule, std::nullopt, "front"});  // the baseline's test time
  publish("test");
  if (stopped()) return;  // a stop asked for at this report: before the test photos
  std::vector<storage::EvaluationRecord> tested = evaluate(retest, "test");
  std::vector<storage::FrontPoint> stored;
  for (size_t k = 0; k < front.size(); ++k) {
    stored.push_back({train[front[k]].id, tested[k].id});
  }
  db_.put_front(run_id_, stored);
  db_.set_run_state(run_id_, "done");
  publish("done");
}

}  // namespace stipple::search
