#include "search/coordinator/cluster_evaluations.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "compiler_core/ir/error.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/support/content_hash.h"
#include "search/coordinator/stored_files.h"
#include "workers/evaluation_codec.h"

namespace stipple::coordinator {
namespace {

/// Setups remembered (by content) at most: a coordinator serves a few nightly
/// registrations, each the same setup every round and every night.
constexpr size_t kMaxKnownSetups = 256;

/// How often a waiting call looks whether its client went away or the server drains.
constexpr std::chrono::milliseconds kPoll{200};

/// The pool's run and the service's binding of one call, forgotten when it ends however
/// it ends: its jobs are then cancelled (a worker measuring one is told to stop).
class CallRun {
 public:
  CallRun(WorkerPool& pool, CoordinatorService& service, std::string id,
          const std::string& setup_id)
      : pool_(pool), service_(service), id_(std::move(id)) {
    service_.bind_run(id_, setup_id);
  }
  ~CallRun() {
    pool_.release_run(id_);
    service_.unbind_run(id_);
  }
  CallRun(const CallRun&) = delete;
  CallRun& operator=(const CallRun&) = delete;
  const std::string& id() const { return id_; }

 private:
  WorkerPool& pool_;
  CoordinatorService& service_;
  std::string id_;
};

}  // namespace

ClusterEvaluations::ClusterEvaluations(WorkerPool& pool, CoordinatorService& service,
                                       ClusterEvaluationsOptions options)
    : pool_(pool), service_(service), options_(std::move(options)) {
  // Job ids unique across coordinator processes: a worker still reporting a job of a
  // process before a restart must never have its result taken for a new call's job.
  std::random_device random;
  const uint64_t nonce = (uint64_t(random()) << 32) | random();
  call_prefix_ = "evaluate-" + std::to_string(nonce) + "-";
}

ClusterEvaluations::KnownSetup ClusterEvaluations::known_setup(
    const proto::EvaluateRequest& request) {
  using grpc::StatusCode;
  // What the setup is made of, the call's jobs, target and photo bytes left out.
  proto::EvaluateRequest content;
  content.set_pipeline_source(request.pipeline_source());
  content.set_pipeline_file(request.pipeline_file());
  *content.mutable_params() = request.params();
  *content.mutable_images() = request.images();
  for (int i = 0; i < content.images_size(); ++i) {  // a photo sent without its hash
    if (content.images(i).sha256().empty())
      content.mutable_images(i)->set_sha256(sha256_hex(request.image_contents(i)));
  }
  content.set_runs(request.runs());
  content.set_min_timed_ms(request.min_timed_ms());
  content.set_threads(request.threads());
  content.set_output_digests(request.output_digests());
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);  // the params map in a stable order
    content.SerializeToCodedStream(&coded);
  }
  const std::string key = sha256_hex(bytes);
  {
    std::lock_guard lock(mu_);
    if (auto it = known_.find(key); it != known_.end()) return it->second;
  }

  KnownSetup known;
  known.pipeline = std::make_shared<const Pipeline>(
      compile_pipeline(request.pipeline_source(), request.pipeline_file()));
  // The photos: sent ones kept, the others found by hash.
  workers::EvaluationSetup setup;
  setup.pipeline_source = request.pipeline_source();
  setup.pipeline_file = request.pipeline_file();
  for (const auto& [name, value] : request.params()) setup.params[name] = value;
  setup.runs = request.runs();
  setup.min_timed_ms = request.min_timed_ms();
  setup.threads = request.threads();
  setup.output_digests = request.output_digests();
  std::vector<std::string> missing;
  for (int i = 0; i < request.images_size(); ++i) {
    const proto::ImageRef& ref = request.images(i);
    const std::string what = "photo " + std::to_string(i + 1) + " (" + ref.name() + ")";
    if (ref.split() != "train" && ref.split() != "test")
      refuse(StatusCode::INVALID_ARGUMENT, what + ": split must be train or test");
    const std::string& bytes = request.image_contents(i);
    std::string path;
    if (!bytes.empty()) {
      const std::string hash = sha256_hex(bytes);
      if (!ref.sha256().empty() && ref.sha256() != hash)
        refuse(StatusCode::INVALID_ARGUMENT, what + ": its bytes do not match its sha256");
      path = store_photo(options_.data_dir, ref, bytes, hash, options_.max_image_pixels, what);
    } else if (std::optional<std::string> kept = stored_photo(options_.data_dir, ref.sha256())) {
      path = *kept;
    } else {
      missing.push_back(ref.name() + " (" + ref.sha256() + ")");
      continue;
    }
    setup.images[ref.split()].push_back(path);
  }
  if (!missing.empty()) {
    std::string list;
    for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
    refuse(StatusCode::FAILED_PRECONDITION,
           "the coordinator does not have these photos: " + list + "; send their contents");
  }
  known.id = service_.add_setup(setup);
  std::lock_guard lock(mu_);
  if (known_.size() >= kMaxKnownSetups) known_.clear();  // a bound, not a policy: rare
  known_.emplace(key, known);
  return known;
}

grpc::Status ClusterEvaluations::evaluate(const proto::EvaluateRequest& request,
                                          const grpc::ServerContextBase& context,
                                          const std::atomic<bool>& draining,
                                          proto::EvaluateResponse* response) {
  using grpc::StatusCode;
  try {
    if (draining) refuse(StatusCode::UNAVAILABLE, "the coordinator is shutting down");
    // ---- the request, checked before anything is queued ----
    if (request.target().empty()) refuse(StatusCode::INVALID_ARGUMENT, "no target");
    if (request.split() != "train" && request.split() != "test")
      refuse(StatusCode::INVALID_ARGUMENT, "split must be train or test");
    if (request.jobs_size() == 0) refuse(StatusCode::INVALID_ARGUMENT, "no jobs");
    if (request.jobs_size() > options_.max_jobs) {
      refuse(StatusCode::INVALID_ARGUMENT, std::to_string(request.jobs_size()) +
                                               " jobs; the limit is " +
                                               std::to_string(options_.max_jobs) + " a call");
    }
    if (request.runs() < 1 || request.runs() > options_.max_runs_per_photo) {
      refuse(StatusCode::INVALID_ARGUMENT,
             "runs must be 1 to " + std::to_string(options_.max_runs_per_photo));
    }
    if (!std::isfinite(request.min_timed_ms()) || request.min_timed_ms() < 0 ||
        request.min_timed_ms() > options_.max_min_timed_ms) {
      refuse(StatusCode::INVALID_ARGUMENT,
             "min_timed_ms must be 0 to " + std::to_string(int(options_.max_min_timed_ms)));
    }
    if (!std::isfinite(request.give_up_ms()) || request.give_up_ms() < 0)
      refuse(StatusCode::INVALID_ARGUMENT, "give_up_ms must be a time >= 0");
    if (request.threads() < 0 || request.threads() > 1024)
      refuse(StatusCode::INVALID_ARGUMENT, "threads must be 0 to 1024");
    if (request.images_size() != request.image_contents_size())
      refuse(StatusCode::INVALID_ARGUMENT, "images and image_contents differ in length");
    if (request.images_size() > options_.max_images) {
      refuse(StatusCode::INVALID_ARGUMENT, std::to_string(request.images_size()) +
                                               " photos; the limit is " +
                                               std::to_string(options_.max_images));
    }
    if (std::none_of(request.images().begin(), request.images().end(),
                     [&](const proto::ImageRef& r) { return r.split() == request.split(); })) {
      refuse(StatusCode::INVALID_ARGUMENT, "no photo of split " + request.split());
    }
    // The setup first: once per content, not once per call (a night calls once a round).
    const KnownSetup setup = known_setup(request);
    const Pipeline& pipeline = *setup.pipeline;
    int requests = 0;  // each costs a compile check here and a measurement there
    for (const proto::EvaluateJob& j : request.jobs()) requests += std::max(1, j.code_size());
    if (requests > options_.max_jobs) {
      refuse(StatusCode::INVALID_ARGUMENT, std::to_string(requests) +
                                               " measurements; the limit is " +
                                               std::to_string(options_.max_jobs) + " a call");
    }
    std::vector<PoolJob> jobs;
    for (int i = 0; i < request.jobs_size(); ++i) {
      const proto::EvaluateJob& j = request.jobs(i);
      const std::string what = "job " + std::to_string(i + 1);
      PoolJob job;
      job.split = request.split();
      job.target = request.target();
      job.host = request.host();
      if (j.code_size() == 0) {
        compile_schedule(j.schedule_text(), what + ".sched", pipeline);
        job.schedule = j.schedule_text();
        job.give_up_ms = request.give_up_ms();
      }
      for (int k = 0; k < j.code_size(); ++k) {
        workers::CodeRequest c = workers::from_proto(j.code(k));
        compile_schedule(c.schedule, what + "." + std::to_string(k + 1) + ".sched", pipeline);
        if (c.object.empty() != c.symbol.empty())
          refuse(StatusCode::INVALID_ARGUMENT, what + ": stored code needs its object and symbol");
        job.code.push_back(std::move(c));
      }
      jobs.push_back(std::move(job));
    }

    // ---- someone to measure it ----
    // A code job needs a worker of this build or later: older ones do not know code jobs
    // (they register no version).
    const bool code_jobs =
        std::any_of(jobs.begin(), jobs.end(), [](const PoolJob& j) { return !j.code.empty(); });
    auto live = [&] {
      for (const WorkerInfo& w : pool_.snapshot().workers) {
        if (!w.lost && w.capabilities.target == request.target() &&
            (request.host().empty() || w.capabilities.host == request.host()) &&
            (!code_jobs || !w.capabilities.stipple_version.empty())) {
          return true;
        }
      }
      return false;
    };
    const std::string where =
        "target " + request.target() + (request.host().empty() ? "" : " on host " + request.host());
    if (!live()) {
      refuse(StatusCode::FAILED_PRECONDITION, "no worker of " + where +
                                                  (code_jobs ? " that measures code jobs" : "") +
                                                  " is registered; start one there");
    }

    // ---- measure ----
    CallRun run(pool_, service_, call_prefix_ + std::to_string(next_call_++), setup.id);
    std::vector<std::string> ids;
    for (size_t i = 0; i < jobs.size(); ++i) {
      jobs[i].id = run.id() + "/" + std::to_string(i + 1);
      ids.push_back(jobs[i].id);
    }
    pool_.submit(run.id(), jobs);
    AwaitReply reply;
    auto last_live = std::chrono::steady_clock::now();
    for (;;) {
      reply = pool_.await(ids, &draining, kPoll);
      if (reply.status != AwaitStatus::TimedOut) break;
      if (context.IsCancelled()) {
        return {StatusCode::CANCELLED, "the client went away; its jobs were cancelled"};
      }
      // Jobs kept for a host whose workers are gone have no other taker: say so rather
      // than keep the client waiting until its deadline.
      const auto now = std::chrono::steady_clock::now();
      if (live()) {
        last_live = now;
      } else if (now - last_live > options_.orphan_after) {
        refuse(StatusCode::UNAVAILABLE,
               "no live worker of " + where + " for " +
                   std::to_string(
                       std::chrono::duration_cast<std::chrono::seconds>(options_.orphan_after)
                           .count()) +
                   " s; its jobs were cancelled");
      }
    }
    if (reply.status == AwaitStatus::Cancelled)
      refuse(StatusCode::UNAVAILABLE, "the coordinator is shutting down; ask again");
    if (reply.status != AwaitStatus::Complete)
      refuse(StatusCode::INTERNAL, std::string("the jobs ended ") + to_string(reply.status));
    for (size_t i = 0; i < ids.size(); ++i) {
      const JobResult& r = *reply.results[i];
      proto::JobResult* m = response->add_results();
      *m = workers::to_proto(ids[i], r.result);
      for (const workers::EvaluationResult& part : r.code_results)
        *m->add_code_results() = workers::to_proto(ids[i], part);
      response->add_hosts(r.host);
    }
    spdlog::info("{}: {} job(s) of target {}{} measured", run.id(), ids.size(), request.target(),
                 request.host().empty() ? "" : " on " + request.host());
    return grpc::Status::OK;
  } catch (const Refusal& r) {
    return r.status;
  } catch (const UserError& e) {
    return {StatusCode::INVALID_ARGUMENT, e.what()};
  }
}

}  // namespace stipple::coordinator
