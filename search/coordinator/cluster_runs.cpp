#include "search/coordinator/cluster_runs.h"

#include <google/protobuf/util/message_differencer.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>

#include "compiler_core/image/image_io.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/schedule/schedule_printer.h"
#include "compiler_core/support/content_hash.h"
#include "compiler_core/support/files.h"
#include "compiler_core/support/host_probe.h"
#include "proto/pipeline_codec.h"
#include "proto/schedule_codec.h"
#include "search/coordinator/remote_evaluator.h"
#include "search/coordinator/stored_files.h"
#include "search/strategy_registry.h"
#include "search/tuning_session.h"

namespace stipple::coordinator {
namespace {

namespace fs = std::filesystem;

/// What a run cancelled through CancelRun is stored and shown with.
constexpr const char* kCancelledByClient = "cancelled by a client";

proto::RunProgress to_message(int64_t run_id, const search::TuneProgress& p) {
  proto::RunProgress m;
  m.set_run_id(run_id);
  m.set_state("running");
  m.set_phase(p.phase);
  m.set_evaluations(p.evaluations);
  m.set_budget(p.budget);
  m.set_measured(p.measured);
  m.set_failures(p.failures);
  m.set_evaluations_per_second(p.per_second);
  for (size_t t = 0; t < p.thresholds.size(); ++t) {
    m.add_thresholds(p.thresholds[t]);
    m.add_best_speedups(p.speedup_at[t]);
  }
  m.set_metric(p.metric);
  if (p.speedup_at.size() > 0) m.set_best_speedup_de1(p.speedup_at[0]);
  if (p.speedup_at.size() > 1) m.set_best_speedup_de2(p.speedup_at[1]);
  if (p.speedup_at.size() > 2) m.set_best_speedup_de5(p.speedup_at[2]);
  m.set_elapsed_seconds(p.elapsed_s);
  m.set_eta_seconds(p.eta_s);
  return m;
}

void to_summary(const storage::RunRecord& run, proto::RunSummary* s) {
  s->set_run_id(run.id);
  s->set_pipeline(run.pipeline_name);
  s->set_strategy(run.strategy);
  s->set_budget(run.budget_evaluations);
  s->set_evaluations(run.evaluations);
  s->set_state(run.state);
  s->set_target(run.target);
  s->set_created_at(run.created_at);
  s->set_message(run.message);
}

// The machine a run's searches model (the reuse model's cores, caches and vector width,
// the vector widths drawn) is the target's, not the coordinator's: a registered worker
// of the target as it described itself. With none yet (a run given a target before its
// workers came), this host when the target is of its architecture, else the defaults
// with an AArch64 target's 128-bit vectors.
search::MachineModel machine_of_target(WorkerPool& pool, const std::string& target) {
  for (const WorkerInfo& w : pool.snapshot().workers) {
    if (w.capabilities.target == target) return search::MachineModel::of_worker(w.capabilities);
  }
  if (target.rfind(host_arch() + "-", 0) == 0) return search::MachineModel::host();
  search::MachineModel m;
  if (target.rfind("aarch64-", 0) == 0) m.vector_bytes = 16;
  return m;
}

}  // namespace

struct ClusterRuns::ActiveRun {
  int64_t id = 0;
  search::TuneOptions options;
  std::string source;
  Pipeline pipeline;
  std::string setup_id;
  std::unique_ptr<storage::Database> db;
  std::unique_ptr<RemoteEvaluator> evaluator;
  std::unique_ptr<search::TuningSession> session;  // refers to pipeline, db and evaluator
  std::atomic<bool> stop{false};
  std::thread thread;
  // Under ClusterRuns::mu_:
  bool cancelled = false;
  bool finished = false;  // the thread has nothing more to do
  proto::RunProgress progress;
  int64_t version = 0;  // bumped on every change of progress
};

ClusterRuns::ClusterRuns(coordinator::WorkerPool& pool, CoordinatorService& service,
                         ClusterRunsOptions options)
    : pool_(pool),
      service_(service),
      options_(std::move(options)),
      evaluations_(pool, service,
                   {options_.data_dir, options_.max_images, options_.max_image_pixels,
                    options_.max_runs_per_photo}) {
  query_db_ = storage::Database::open(options_.db_path);
  fs::create_directories(options_.data_dir);
}

ClusterRuns::~ClusterRuns() { drain(); }

int ClusterRuns::active_runs() {
  std::lock_guard lock(mu_);
  return int(
      std::count_if(runs_.begin(), runs_.end(), [](const auto& r) { return !r.second->finished; }));
}

std::string ClusterRuns::choose_target(const std::string& requested) {
  if (!requested.empty()) return requested;  // its jobs wait for such a worker
  std::set<std::string> targets;
  for (const coordinator::WorkerInfo& w : pool_.snapshot().workers) {
    if (!w.lost) targets.insert(w.capabilities.target);
  }
  if (targets.empty()) {
    refuse(grpc::StatusCode::FAILED_PRECONDITION,
           "no worker is registered to take the run's target from; start a worker or give "
           "the target");
  }
  if (targets.size() > 1) {
    std::string list;
    for (const std::string& t : targets) list += (list.empty() ? "" : ", ") + t;
    refuse(grpc::StatusCode::INVALID_ARGUMENT,
           "workers of several targets are registered (" + list + "); give the run's target");
  }
  return *targets.begin();
}

int64_t ClusterRuns::start(const search::TuneOptions& options, const std::string& target,
                           int64_t resume_run) {
  auto r = std::make_shared<ActiveRun>();
  r->options = options;
  r->source = read_text_file(options.pipeline_file);
  r->pipeline = compile_pipeline(r->source, options.pipeline_file);
  workers::EvaluationSetup setup;
  setup.pipeline_source = r->source;
  setup.pipeline_file = options.pipeline_file;
  setup.images = {{"train", options.train_images}, {"test", options.test_images}};
  setup.runs = options.runs;
  setup.threads = options.threads;
  r->setup_id = service_.add_setup(setup);
  r->db = storage::Database::open(options_.db_path);
  r->evaluator = std::make_unique<RemoteEvaluator>(pool_, r->setup_id, resume_run, target);
  r->session = std::make_unique<search::TuningSession>(*r->db, *r->evaluator, r->pipeline,
                                                       r->source, options);
  r->session->set_machine(machine_of_target(pool_, target));
  if (resume_run > 0) {
    r->session->attach(resume_run);
  } else {
    r->session->create_run();
  }
  r->id = r->session->run_id();
  r->evaluator->set_run_id(r->id);
  service_.bind_run(r->evaluator->pool_run_id(), r->setup_id);
  r->session->set_stop_flag(&r->stop);
  r->evaluator->set_stop_flag(&r->stop);
  r->progress.set_run_id(r->id);
  r->progress.set_state("running");
  r->progress.set_phase("baseline");
  r->progress.set_budget(options.budget);

  std::vector<std::shared_ptr<ActiveRun>> finished;
  {
    std::lock_guard lock(mu_);
    // Runs that ended answer from the database from now on; their threads have returned.
    for (auto it = runs_.begin(); it != runs_.end();) {
      if (it->second->finished) {
        finished.push_back(it->second);
        it = runs_.erase(it);
      } else {
        ++it;
      }
    }
    runs_[r->id] = r;
    r->thread = std::thread(&ClusterRuns::run_session, this, r);
  }
  for (auto& f : finished) f->thread.join();
  return r->id;
}

void ClusterRuns::run_session(std::shared_ptr<ActiveRun> r) {
  std::string state = "running", message;
  try {
    r->session->run([&](const search::TuneProgress& p) {
      {
        std::lock_guard lock(mu_);
        r->progress = to_message(r->id, p);
        ++r->version;
      }
      changed_.notify_all();
    });
    if (!r->session->stopped()) state = "done";
  } catch (const EvaluationStopped&) {
    // Stopped while measuring: the batch was not committed; the run resumes from there.
  } catch (const std::exception& e) {
    state = "failed";
    message = e.what();
  }
  bool cancelled;
  {
    std::lock_guard lock(mu_);
    cancelled = r->cancelled;
  }
  if (cancelled && state != "done") {
    state = "cancelled";
    message = kCancelledByClient;  // not the error the stop made the session throw
  }
  if (state == "running") {
    spdlog::info("run {}: stopped; it resumes when the coordinator starts again", r->id);
  } else {
    spdlog::info("run {}: {}{}{}", r->id, state, message.empty() ? "" : ": ", message);
    pool_.release_run(r->evaluator->pool_run_id());
    service_.unbind_run(r->evaluator->pool_run_id());
  }
  // The waiting clients hear the end now, with its reason; the database may take longer.
  {
    std::lock_guard lock(mu_);
    r->progress.set_state(state);
    if (state != "running") r->progress.set_phase("done");
    r->progress.set_message(message);
    ++r->version;
  }
  changed_.notify_all();
  if (state == "failed" || state == "cancelled") mark_ended(*r, state, message);
  {
    std::lock_guard lock(mu_);
    r->finished = true;
    ++r->version;
  }
  changed_.notify_all();
}

void ClusterRuns::mark_ended(ActiveRun& r, const std::string& state, const std::string& message) {
  // A run that failed because its database cannot be written (a full disk, a read-only or
  // immutable file) cannot be marked failed either, until the disk has room or the file is
  // writable again: it is tried again with backoff, so that the database does not say
  // "running" (and the next start resume it) for a run its clients were told had failed.
  auto delay = std::chrono::milliseconds(500);
  for (int attempt = 1;; ++attempt) {
    try {
      // The reason is the first failure's (the OS's, for a full disk), not this attempt's.
      r.db->set_run_state(r.id, state, message);
      if (attempt > 1) spdlog::info("run {}: marked {} in the database at last", r.id, state);
      return;
    } catch (const std::exception& e) {
      if (draining_) {
        spdlog::error(
            "run {}: cannot mark it {}: {}; the database says running, and the next start "
            "resumes it",
            r.id, state, e.what());
        return;
      }
      if (attempt == 1) {
        spdlog::error("run {}: cannot mark it {} yet: {}; trying again until it can", r.id, state,
                      e.what());
      }
    }
    std::unique_lock lock(mu_);
    changed_.wait_for(lock, delay, [&] { return draining_.load(); });
    delay = std::min(delay * 2, std::chrono::milliseconds(5000));
  }
}

int ClusterRuns::resume_unfinished() {
  std::vector<storage::RunRecord> runs;
  {
    std::lock_guard lock(query_mu_);
    runs = query_db_->list_runs();
  }
  int resumed = 0;
  std::reverse(runs.begin(), runs.end());  // oldest first
  for (const storage::RunRecord& run : runs) {
    if (run.state != "running") continue;
    search::TuneOptions options;
    try {
      options = search::TuneOptions::from_json(run.options_json);
    } catch (const std::exception&) {
      continue;  // not a run of ours
    }
    if (!options.cluster) continue;  // a `stipple tune` run: its owner resumes it
    try {
      start(options, run.target, run.id);
      ++resumed;
      spdlog::info("run {}: resumed ({} of {} evaluations committed)", run.id, run.evaluations,
                   run.budget_evaluations);
    } catch (const std::exception& e) {
      spdlog::error("run {}: cannot resume: {}", run.id, e.what());
      try {
        std::lock_guard lock(query_mu_);
        query_db_->set_run_state(run.id, "failed", std::string("cannot resume: ") + e.what());
      } catch (const std::exception& f) {
        // An unwritable database: the run stays "running" and is tried at the next start.
        spdlog::error("run {}: cannot mark it failed: {}", run.id, f.what());
      }
    }
  }
  return resumed;
}

void ClusterRuns::drain() {
  draining_ = true;
  std::vector<std::shared_ptr<ActiveRun>> runs;
  {
    std::lock_guard lock(mu_);
    for (auto& [id, r] : runs_) {
      r->stop = true;
      runs.push_back(r);
    }
  }
  pool_.wake_waiters();
  changed_.notify_all();
  for (auto& r : runs) {
    if (r->thread.joinable()) r->thread.join();
  }
}

grpc::Status ClusterRuns::submit(const proto::SubmitRunRequest& request,
                                 proto::SubmitRunResponse* response) {
  if (draining_) return {grpc::StatusCode::UNAVAILABLE, "the coordinator is shutting down"};
  try {
    // The pipeline: its source is what runs (the workers compile it); a bad one is the
    // client's error, with its file:line:col.
    const std::string& source = request.pipeline_source();
    if (source.empty()) refuse(grpc::StatusCode::INVALID_ARGUMENT, "no pipeline source");
    if (int64_t(source.size()) > options_.max_pipeline_bytes) {
      refuse(grpc::StatusCode::INVALID_ARGUMENT,
             "the pipeline is " + std::to_string(source.size()) + " bytes; the limit is " +
                 std::to_string(options_.max_pipeline_bytes));
    }
    const std::string file_name = safe_file_name(request.pipeline_file(), "pipeline.stp");
    Pipeline pipeline;
    try {
      pipeline = compile_pipeline(source, file_name);
    } catch (const UserError& e) {
      refuse(grpc::StatusCode::INVALID_ARGUMENT, e.what());
    }
    // The IR the client compiled from the same source, when it sent one: it must be what
    // the source means here too. A client of another version of the language is refused
    // rather than shown the front of a pipeline it did not write.
    if (request.has_pipeline()) {
      try {
        from_proto(request.pipeline());  // malformed IR: its own reason
      } catch (const UserError& e) {
        refuse(grpc::StatusCode::INVALID_ARGUMENT,
               std::string("the request's pipeline IR is malformed: ") + e.what());
      }
      if (!google::protobuf::util::MessageDifferencer::Equals(request.pipeline(),
                                                              to_proto(pipeline))) {
        refuse(grpc::StatusCode::INVALID_ARGUMENT,
               "the request's pipeline IR is not what its source compiles to on the "
               "coordinator (a client and coordinator of different stipple versions?)");
      }
    }

    // The search options, then the target, before anything is written: a refused
    // request leaves nothing behind.
    search::TuneOptions o;
    o.strategy = request.strategy().empty() ? search::kDefaultStrategy : request.strategy();
    if (!search::find_strategy(o.strategy)) {
      refuse(grpc::StatusCode::INVALID_ARGUMENT, "unknown strategy '" + o.strategy + "'");
    }
    o.budget = request.budget() == 0 ? 600 : request.budget();
    if (o.budget < 1 || o.budget > options_.max_budget) {
      refuse(grpc::StatusCode::INVALID_ARGUMENT, "budget " + std::to_string(request.budget()) +
                                                     " is outside 1.." +
                                                     std::to_string(options_.max_budget));
    }
    o.seed = request.seed();
    o.exact_only = request.exact();
    o.runs = request.runs() == 0 ? o.runs : request.runs();
    if (o.runs < 1 || o.runs > options_.max_runs_per_photo) {
      refuse(grpc::StatusCode::INVALID_ARGUMENT,
             "runs per photo must be in 1.." + std::to_string(options_.max_runs_per_photo));
    }
    if (request.population() < 0 || request.population() > 10000) {
      refuse(grpc::StatusCode::INVALID_ARGUMENT, "population must be in 0..10000");
    }
    if (request.population() > 0) o.population = request.population();
    if (request.thresholds_size() > 0) {
      try {
        o.thresholds = search::with_exact_threshold(
            std::vector<double>(request.thresholds().begin(), request.thresholds().end()));
      } catch (const UserError& e) {
        refuse(grpc::StatusCode::INVALID_ARGUMENT, e.what());
      }
    }
    o.cluster = true;

    // The stored copies: the run's options name them, so a restarted coordinator finds
    // them. The pipeline keeps its file name (messages and `stipple runs` show it).
    const fs::path pipeline_path =
        fs::path(options_.data_dir) / "pipelines" / sha256_hex(source).substr(0, 32) / file_name;
    // The baseline as the client wrote it: its text is its storage key, as in `tune`.
    std::string baseline_text = request.baseline_text();
    if (baseline_text.empty() && request.has_baseline()) {
      baseline_text = print_schedule(from_proto(request.baseline()), pipeline);
    }
    if (!baseline_text.empty()) {
      try {
        compile_schedule(baseline_text, "baseline.sched", pipeline);
      } catch (const UserError& e) {
        refuse(grpc::StatusCode::INVALID_ARGUMENT, e.what());
      }
      o.baseline_schedule = (fs::path(options_.data_dir) / "schedules" /
                             (sha256_hex(baseline_text).substr(0, 32) + ".sched"))
                                .string();
    }
    // The photos: all checked, then written to the data folder and decoded (one that does
    // not decode is removed again unless it was there before).
    std::vector<std::pair<std::string, std::string>> photos;  // (split, stored path)
    if (request.images_size() != request.image_contents_size()) {
      refuse(grpc::StatusCode::INVALID_ARGUMENT, "images and image_contents differ in length");
    }
    // A named dataset's photos go the way sent ones do: checked, stored by hash, decoded.
    proto::SubmitRunRequest from_dataset;
    if (!request.dataset().empty()) {
      if (request.images_size() > 0) {
        refuse(grpc::StatusCode::INVALID_ARGUMENT, "send photos or name a dataset, not both");
      }
      from_dataset = dataset_photos(request.dataset());
    }
    const proto::SubmitRunRequest& sent = request.dataset().empty() ? request : from_dataset;
    const std::string target = choose_target(request.target());
    if (sent.images_size() == 0) refuse(grpc::StatusCode::INVALID_ARGUMENT, "no photos");
    if (sent.images_size() > options_.max_images) {
      refuse(grpc::StatusCode::INVALID_ARGUMENT, std::to_string(sent.images_size()) +
                                                     " photos; the limit is " +
                                                     std::to_string(options_.max_images));
    }
    std::vector<std::string> hashes;
    bool any_train = false;
    for (int i = 0; i < sent.images_size(); ++i) {
      const proto::ImageRef& ref = sent.images(i);
      const std::string what = "photo " + std::to_string(i + 1) + " (" + ref.name() + ")";
      if (ref.split() != "train" && ref.split() != "test") {
        refuse(grpc::StatusCode::INVALID_ARGUMENT, what + ": split must be train or test");
      }
      any_train |= ref.split() == "train";
      hashes.push_back(sha256_hex(sent.image_contents(i)));
      if (!ref.sha256().empty() && ref.sha256() != hashes.back()) {
        refuse(grpc::StatusCode::INVALID_ARGUMENT, what + ": its bytes do not match its sha256");
      }
    }
    if (!any_train) refuse(grpc::StatusCode::INVALID_ARGUMENT, "no training photo");
    for (int i = 0; i < sent.images_size(); ++i) {
      const proto::ImageRef& ref = sent.images(i);
      const std::string& bytes = sent.image_contents(i);
      const std::string what = "photo " + std::to_string(i + 1) + " (" + ref.name() + ")";
      photos.emplace_back(ref.split(), store_photo(options_.data_dir, ref, bytes, hashes[size_t(i)],
                                                   options_.max_image_pixels, what));
    }

    for (const auto& [split, path] : photos) {
      (split == "train" ? o.train_images : o.test_images).push_back(path);
    }
    if (o.test_images.empty()) o.test_images = {o.train_images.back()};  // as `stipple tune`

    if (!baseline_text.empty()) store_file(o.baseline_schedule, baseline_text);
    store_file(pipeline_path, source);
    o.pipeline_file = pipeline_path.string();

    const int64_t id = start(o, target, 0);
    spdlog::info(
        "run {}: {} submitted ({} strategy, budget {}, {} training and {} test photos{}, "
        "target {})",
        id, pipeline.name, o.strategy, o.budget, o.train_images.size(), o.test_images.size(),
        request.dataset().empty() ? "" : " of dataset " + request.dataset(), target);
    response->set_run_id(id);
    return grpc::Status::OK;
  } catch (const Refusal& r) {
    return r.status;
  } catch (const UserError& e) {
    return {grpc::StatusCode::INVALID_ARGUMENT, e.what()};
  } catch (const std::exception& e) {
    spdlog::error("submit: {}", e.what());
    return {grpc::StatusCode::INTERNAL, e.what()};
  }
}

proto::SubmitRunRequest ClusterRuns::dataset_photos(const std::string& name) const {
  if (options_.datasets_dir.empty()) {
    refuse(grpc::StatusCode::FAILED_PRECONDITION,
           "this coordinator keeps no datasets (start it with --datasets DIR); send the photos");
  }
  // The name becomes a path: a plain name only, never a way out of the folder.
  const bool plain = name.size() <= 100 && name[0] != '.' &&
                     std::all_of(name.begin(), name.end(), [](unsigned char c) {
                       return std::isalnum(c) || c == '-' || c == '_' || c == '.';
                     });
  if (!plain) {
    refuse(grpc::StatusCode::INVALID_ARGUMENT,
           "'" + name + "' is not a dataset name (letters, digits, '-', '_' and '.')");
  }
  const fs::path root = fs::path(options_.datasets_dir) / name;
  std::error_code ec;
  if (!fs::is_directory(root / "train", ec)) {
    std::vector<std::string> known;
    for (const auto& e : fs::directory_iterator(options_.datasets_dir, ec)) {
      if (fs::is_directory(e.path() / "train")) known.push_back(e.path().filename().string());
    }
    std::sort(known.begin(), known.end());
    std::string list;
    for (size_t i = 0; i < known.size() && i < 20; ++i) list += (i ? ", " : "") + known[i];
    if (known.size() > 20) list += " and " + std::to_string(known.size() - 20) + " more";
    refuse(grpc::StatusCode::NOT_FOUND, "no dataset '" + name + "' on this coordinator (it has: " +
                                            (list.empty() ? "none" : list) + ")");
  }
  proto::SubmitRunRequest photos;
  for (const char* split : {"train", "test"}) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(root / split, ec)) {
      if (e.is_regular_file() && !photo_extension(e.path()).empty()) {
        files.push_back(e.path());
      }
    }
    std::sort(files.begin(), files.end());  // the photos' order is the results' order
    if (int(photos.images_size() + files.size()) > options_.max_images) {
      refuse(grpc::StatusCode::FAILED_PRECONDITION, "dataset '" + name + "' has more than " +
                                                        std::to_string(options_.max_images) +
                                                        " photos, the limit of a run");
    }
    for (const fs::path& f : files) {
      proto::ImageRef* ref = photos.add_images();
      ref->set_name(f.filename().string());
      ref->set_split(split);
      photos.add_image_contents(read_text_file(f.string(), "photo", kMaxImageFileBytes));
    }
  }
  if (photos.images_size() == 0) {
    refuse(grpc::StatusCode::FAILED_PRECONDITION,
           "dataset '" + name + "' has no photos in " + (root / "train").string());
  }
  return photos;
}

std::optional<proto::RunProgress> ClusterRuns::stored_progress(int64_t run_id) {
  std::lock_guard lock(query_mu_);
  std::optional<storage::RunRecord> run = query_db_->find_run(run_id);
  if (!run) return std::nullopt;
  proto::RunProgress m;
  m.set_run_id(run_id);
  m.set_state(run->state);
  m.set_phase(run->state == "running" ? "waiting" : "done");
  m.set_evaluations(run->evaluations);
  m.set_budget(run->budget_evaluations);
  m.set_eta_seconds(-1);
  m.set_message(run->message);  // why it failed, after a restart as before it
  return m;
}

grpc::Status ClusterRuns::watch(int64_t run_id, const grpc::ServerContextBase& context,
                                const WriteProgress& write) {
  std::shared_ptr<ActiveRun> r;
  {
    std::lock_guard lock(mu_);
    auto it = runs_.find(run_id);
    if (it != runs_.end()) r = it->second;
  }
  if (!r) {
    std::optional<proto::RunProgress> stored = stored_progress(run_id);
    if (!stored) return {grpc::StatusCode::NOT_FOUND, "no run " + std::to_string(run_id)};
    write(*stored);
    return grpc::Status::OK;
  }
  int64_t seen = -1;
  for (;;) {
    proto::RunProgress m;
    bool finished = false, changed = false;
    {
      std::unique_lock lock(mu_);
      changed_.wait_for(lock, std::chrono::milliseconds(500),
                        [&] { return r->version != seen || draining_; });
      changed = r->version != seen;
      seen = r->version;
      m = r->progress;
      finished = r->finished;
    }
    if (context.IsCancelled()) return {grpc::StatusCode::CANCELLED, "the client went away"};
    if (changed && !write(m)) return grpc::Status::OK;    // the client went away
    if (m.state() != "running") return grpc::Status::OK;  // its end, with the reason
    if (finished) {
      if (m.state() == "running") {
        return {grpc::StatusCode::UNAVAILABLE,
                "the coordinator is shutting down; the run resumes when it starts again"};
      }
      return grpc::Status::OK;
    }
  }
}

grpc::Status ClusterRuns::list(proto::ListRunsResponse* response) {
  std::lock_guard lock(query_mu_);
  for (const storage::RunRecord& run : query_db_->list_runs())
    to_summary(run, response->add_runs());
  return grpc::Status::OK;
}

grpc::Status ClusterRuns::front(int64_t run_id, proto::GetFrontResponse* response) {
  std::lock_guard lock(query_mu_);
  std::optional<storage::RunRecord> run = query_db_->find_run(run_id);
  if (!run) return {grpc::StatusCode::NOT_FOUND, "no run " + std::to_string(run_id)};
  std::vector<search::FrontEntry> front = search::load_front(*query_db_, run_id);
  if (front.empty()) {
    return {grpc::StatusCode::FAILED_PRECONDITION,
            "run " + std::to_string(run_id) + " is " + run->state +
                (run->message.empty() ? "" : " (" + run->message + ")") +
                (run->state == "running" ? "; its front is stored when it finishes"
                                         : " and has no front")};
  }
  for (const search::FrontEntry& e : front) {
    proto::FrontPoint* p = response->add_points();
    p->set_schedule_text(e.train.key.schedule);
    p->set_train_time_ms(e.train.time_ms);
    p->set_train_error(e.train.error);
    p->set_train_psnr(e.train.psnr);
    p->set_train_compile_ms(e.train.compile_ms);
    p->set_train_evaluation_id(e.train.id);
    p->set_has_test(e.test.has_value());
    if (e.test) {
      p->set_test_time_ms(e.test->time_ms);
      p->set_test_error(e.test->error);
      p->set_test_psnr(e.test->psnr);
      p->set_test_evaluation_id(e.test->id);
    }
    p->set_baseline(e.baseline);
  }
  to_summary(*run, response->mutable_run());
  response->set_metric(search::error_metric_name(*query_db_, run->pipeline_id));
  return grpc::Status::OK;
}

grpc::Status ClusterRuns::cancel(int64_t run_id, proto::CancelRunResponse* response) {
  std::shared_ptr<ActiveRun> r;
  {
    std::lock_guard lock(mu_);
    auto it = runs_.find(run_id);
    if (it != runs_.end() && !it->second->finished) {
      r = it->second;
      r->cancelled = true;
    }
  }
  if (r) {
    r->stop = true;
    pool_.cancel_run(r->evaluator->pool_run_id());
    std::unique_lock lock(mu_);
    // The session stops within one candidate's await poll; its thread marks the run.
    changed_.wait_for(lock, std::chrono::seconds(30),
                      [&] { return r->finished || r->progress.state() != "running"; });
    response->set_state(r->progress.state());
    return grpc::Status::OK;
  }
  std::lock_guard lock(query_mu_);
  std::optional<storage::RunRecord> run = query_db_->find_run(run_id);
  if (!run) return {grpc::StatusCode::NOT_FOUND, "no run " + std::to_string(run_id)};
  if (run->state == "running") {
    query_db_->set_run_state(run_id, "cancelled", kCancelledByClient);
    run->state = "cancelled";
  }
  response->set_state(run->state);  // done, failed and cancelled runs stay as they are
  return grpc::Status::OK;
}

grpc::Status ClusterRuns::evaluate(const proto::EvaluateRequest& request,
                                   const grpc::ServerContextBase& context,
                                   proto::EvaluateResponse* response) {
  return evaluations_.evaluate(request, context, draining_, response);
}

}  // namespace stipple::coordinator
