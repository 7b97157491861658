#include "workers/worker_daemon.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>

#include "compiler_core/ir/error.h"
#include "compiler_core/support/content_hash.h"
#include "compiler_core/support/files.h"
#include "proto/capabilities_codec.h"
#include "proto/coordinator.grpc.pb.h"
#include "workers/benchmark_lock.h"
#include "workers/evaluation_codec.h"
#include "workers/file_cache.h"
#include "workers/host_capabilities.h"

namespace stipple::workers {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

/// The job cannot be finished for a reason that is not the candidate's (the coordinator
/// unreachable, the evaluator child cannot start): it is not reported, and goes elsewhere.
struct Abandon : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// The job's setup cannot be measured here by anyone (a pipeline that does not compile, a
/// photo the coordinator does not have, reference outputs that hang or die): reported with
/// this status ("error" unless said) and reason.
struct JobError : std::runtime_error {
  explicit JobError(const std::string& why, EvaluationStatus s = EvaluationStatus::Error)
      : std::runtime_error(why), status(s) {}
  EvaluationStatus status;
};
/// The coordinator refused our token: retrying cannot help.
struct Refused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// CANCELLED too: a coordinator shutting down cancels the calls in flight (this side never
// cancels its own).
bool unreachable(const grpc::Status& st) {
  return st.error_code() == grpc::StatusCode::UNAVAILABLE ||
         st.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
         st.error_code() == grpc::StatusCode::CANCELLED;
}

std::string describe(const grpc::Status& st) {
  return std::to_string(int(st.error_code())) + " " + st.error_message();
}

/// Exponential backoff with jitter: each delay is drawn from [d/2, d], d doubling from
/// `initial` up to `max`, so that workers a coordinator restart disconnected together do
/// not come back in step.
class Backoff {
 public:
  Backoff(milliseconds initial, milliseconds max)
      : initial_(std::max(initial, milliseconds(1))),
        max_(std::max(max, initial_)),
        current_(initial_),
        rng_(std::random_device{}()) {}
  milliseconds next() {
    std::uniform_real_distribution<double> jitter(0.5, 1.0);
    const milliseconds d(int64_t(double(current_.count()) * jitter(rng_)));
    current_ = std::min(current_ * 2, max_);
    return d;
  }
  void reset() { current_ = initial_; }

 private:
  milliseconds initial_, max_, current_;
  std::mt19937 rng_;
};

/// Sleeps `d`, waking early when `stop` is set (a signal handler's flag cannot notify).
void sleep_unless(const std::atomic<bool>& stop, Clock::duration d) {
  const Clock::time_point end = Clock::now() + d;
  while (!stop && Clock::now() < end) {
    std::this_thread::sleep_for(std::min<Clock::duration>(milliseconds(50), end - Clock::now()));
  }
}

std::chrono::system_clock::time_point deadline_in(double seconds) {
  return std::chrono::system_clock::now() +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(
             std::chrono::duration<double>(seconds));
}

bool is_sha256_hex(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

/// Writes `bytes` to `path` through a temporary file of this process and thread, renamed
/// into place: a reader never sees half a photo, and workers sharing the cache never write
/// the same temporary file (write_text_file's fixed ".tmp" name would collide).
void write_file_atomically(const fs::path& path, const std::string& bytes) {
  try {
    write_text_file(path.string(), bytes);  // a temporary file renamed into place
  } catch (const UserError& e) {
    throw Abandon(e.what());
  }
}

}  // namespace

// One run() of the daemon: the channel, the worker id and what was fetched.
class WorkerDaemon::Session {
 public:
  Session(const WorkerDaemonOptions& options, const std::atomic<bool>& stop,
          std::atomic<int64_t>& reported)
      : o_(with_reference_cache(options)),
        stop_(stop),
        reported_(reported),
        backoff_(options.backoff_initial, options.backoff_max) {}

  ~Session() {
    {
      std::lock_guard lock(mu_);
      quit_ = true;
      if (held_heartbeat_) held_heartbeat_->TryCancel();
    }
    cv_.notify_all();
    {
      std::lock_guard lock(slots_mu_);
      quit_slots_ = true;
    }
    slots_cv_.notify_all();
    if (heartbeat_.joinable()) heartbeat_.join();
    for (std::unique_ptr<Slot>& slot : slots_) {
      if (slot->thread.joinable()) slot->thread.join();
    }
  }

  int run() {
    caps_ = o_.capabilities.target.empty() ? detect_host_capabilities() : o_.capabilities;
    images_ = fs::path(o_.cache_dir) / "images";
    std::error_code ec;
    fs::create_directories(images_, ec);
    if (ec)
      throw UserError("cannot create the cache folder " + images_.string() + ": " + ec.message());
    if (!o_.evaluator.benchmark_lock.empty()) {
      require_benchmark_lock(o_.evaluator.benchmark_lock, "--benchmark-lock");
    }
    require_server_binary(o_.evaluator.server_binary, "--evaluator");

    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(o_.max_message_bytes);
    args.SetMaxSendMessageSize(o_.max_message_bytes);
    // gRPC's own reconnect attempts no slower than our backoff: a coordinator that comes
    // back is found within backoff_max, not gRPC's default two minutes.
    const int initial_ms = int(o_.backoff_initial.count()), max_ms = int(o_.backoff_max.count());
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, initial_ms);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, initial_ms);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, max_ms);
    stub_ = proto::Coordinator::NewStub(
        grpc::CreateCustomChannel(o_.coordinator, rpc::channel_credentials(o_.security), args));
    heartbeat_ = std::thread([this] { heartbeat_loop(); });
    const int slots = o_.compile_jobs > 0 ? o_.compile_jobs : std::max(1, caps_.cores);
    for (int i = 0; i < slots; ++i) {
      slots_.push_back(std::make_unique<Slot>(o_));
      Slot* slot = slots_.back().get();
      slot->thread = std::thread([this, slot] { slot_loop(*slot); });
    }

    int code = kWorkerStopped;
    try {
      while (!stop_ && !refused()) {
        if (current_worker().empty()) {
          if (!register_worker(backoff_)) {
            code = kWorkerBadInput;
            break;
          }
          continue;
        }
        // A batch: every slot's job compiles at once, then each is timed alone (the
        // host's benchmark lock orders them). Leasing only when the whole batch is done
        // keeps a new compile from holding up the batch's timed runs.
        wait_for_idle_slots();
        if (fetched_photos_.exchange(false) || ++batches_since_trim_ >= 50) trim();
        if (stop_ || refused()) break;
        std::string worker;
        std::vector<proto::Job> jobs = lease(int(slots_.size()), &worker);
        std::lock_guard lock(slots_mu_);
        for (size_t i = 0; i < jobs.size(); ++i) {
          slots_[i]->job = std::move(jobs[i]);
          slots_[i]->worker = worker;
          slots_[i]->cancel = false;
        }
        slots_cv_.notify_all();
      }
      wait_for_idle_slots();
      if (fetched_photos_.exchange(false)) trim();
      if (refused()) throw Refused(refusal_);
    } catch (const Refused& e) {
      spdlog::error("{}", e.what());
      return kWorkerBadInput;
    }
    if (code == kWorkerStopped) spdlog::info("worker stopped");
    return code;
  }

 private:
  enum class Link { Unknown, Up, Down };

  const WorkerDaemonOptions o_;

  static WorkerDaemonOptions with_reference_cache(WorkerDaemonOptions o) {
    if (o.evaluator.reference_cache.empty()) {
      o.evaluator.reference_cache = (fs::path(o.cache_dir) / "references").string();
    }
    return o;
  }
  const std::atomic<bool>& stop_;
  std::atomic<int64_t>& reported_;
  HostCapabilities caps_;
  fs::path images_;
  std::unique_ptr<proto::Coordinator::Stub> stub_;
  Backoff backoff_;  // the main thread's: registering and leasing
  std::mutex link_mu_;
  std::mutex register_mu_;     // one registration at a time (the main thread or a slot)
  Link link_ = Link::Unknown;  // for one log line per change

  // A slot measures one job at a time with its own evaluator children, beside the others.
  struct Slot {
    explicit Slot(const WorkerDaemonOptions& o)
        : backoff(o.backoff_initial, o.backoff_max),
          abandon_backoff(o.backoff_initial, o.backoff_max) {}
    std::thread thread;
    std::optional<proto::Job> job;  // guarded by slots_mu_; empty: idle
    std::string worker;             // the worker id the job was leased to
    // Set (under slots_mu_, for the job in hand) when the coordinator says the job's run
    // was cancelled; its evaluators kill their child and throw EvaluationCancelled.
    std::atomic<bool> cancel{false};
    Backoff backoff;  // its calls' (setup, photos, report)
    // Apart from backoff (reset by any answer): a slot that keeps abandoning jobs with the
    // coordinator up must still slow down. Reset by a reported job.
    Backoff abandon_backoff;
    std::list<std::pair<std::string, std::unique_ptr<LocalEvaluator>>> evaluators;  // MRU first
  };
  std::vector<std::unique_ptr<Slot>> slots_;
  std::mutex slots_mu_;
  std::condition_variable slots_cv_;  // a job handed out, a slot idle again, or quitting
  std::string refusal_;               // guarded by slots_mu_: a slot's call was refused
  bool quit_slots_ = false;           // guarded by slots_mu_

  // Shared with the heartbeat thread.
  std::mutex mu_;
  std::condition_variable cv_;
  bool quit_ = false;
  std::string worker_id_;  // empty: register (again)
  double heartbeat_seconds_ = 10;
  std::thread heartbeat_;
  grpc::ClientContext* held_heartbeat_ = nullptr;  // the heartbeat call open now

  // Shared by the slots.
  std::mutex setups_mu_;
  std::map<std::string, proto::EvaluationSetup> setups_;  // by setup id; never erased
  std::map<std::string, JobError> bad_setups_;            // why each cannot be measured
  std::atomic<bool> warned_target_{false};
  std::atomic<bool> fetched_photos_{true};  // true: trim once at the start
  int batches_since_trim_ = 0;              // the main thread's

  /// Keeps the cache under its limit (between batches: no slot is reading it then).
  void trim() {
    batches_since_trim_ = 0;
    const fs::path root(o_.cache_dir);
    const CacheTrim t = trim_cache({images_, fs::path(o_.evaluator.reference_cache)},
                                   std::max<int64_t>(0, o_.cache_max_bytes));
    if (t.files_removed > 0) {
      spdlog::info("cache {}: removed {} least recently used files, {:.1f} MiB -> {:.1f} MiB",
                   root.string(), t.files_removed, double(t.bytes_before) / (1 << 20),
                   double(t.bytes_after) / (1 << 20));
    }
  }

  bool refused() {
    std::lock_guard lock(slots_mu_);
    return !refusal_.empty();
  }
  void wait_for_idle_slots() {
    std::unique_lock lock(slots_mu_);
    slots_cv_.wait(lock, [&] {
      return std::none_of(slots_.begin(), slots_.end(),
                          [](const std::unique_ptr<Slot>& s) { return s->job.has_value(); });
    });
  }
  /// Stops the slots measuring any of `job_ids` (their runs were cancelled).
  void cancel_jobs(const google::protobuf::RepeatedPtrField<std::string>& job_ids) {
    std::lock_guard lock(slots_mu_);
    for (const std::string& id : job_ids) {
      for (const std::unique_ptr<Slot>& slot : slots_) {
        if (slot->job && slot->job->job_id() == id) slot->cancel = true;
      }
    }
  }
  void slot_loop(Slot& slot) {
    for (;;) {
      std::unique_lock lock(slots_mu_);
      slots_cv_.wait(lock, [&] { return slot.job.has_value() || quit_slots_; });
      if (!slot.job) return;
      const proto::Job job = *slot.job;
      const std::string worker = slot.worker;
      lock.unlock();
      try {
        handle(slot, worker, job);
      } catch (const Refused& e) {
        lock.lock();
        refusal_ = e.what();
        lock.unlock();
      } catch (const std::exception& e) {
        // Not the candidate's doing (that is a failed result) nor the link's (Abandon):
        // the job goes elsewhere, as an abandoned one does, and the worker goes on.
        spdlog::error("job {}: {}; registering again so that it goes elsewhere", job.job_id(),
                      e.what());
        forget_worker(worker);
      }
      lock.lock();
      slot.job.reset();
      slots_cv_.notify_all();
    }
  }

  std::string current_worker() {
    std::lock_guard lock(mu_);
    return worker_id_;
  }
  /// Forgets the worker id: the next turn registers again (and the old id, no longer
  /// heartbeating, loses its leases on the coordinator).
  void forget_worker(const std::string& id) {
    std::lock_guard lock(mu_);
    if (worker_id_ == id) worker_id_.clear();
  }

  std::unique_ptr<grpc::ClientContext> context(double seconds) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(deadline_in(seconds));
    rpc::authorize(*ctx, o_.security.token);
    return ctx;
  }

  void note_up(Backoff& backoff) {
    backoff.reset();
    std::lock_guard lock(link_mu_);
    if (link_ == Link::Down) spdlog::info("coordinator {} is reachable again", o_.coordinator);
    link_ = Link::Up;
  }
  /// Logs the first failure of a streak.
  void note_down(const grpc::Status& st) {
    std::lock_guard lock(link_mu_);
    if (link_ != Link::Down) {
      spdlog::warn("coordinator {} unreachable ({}); retrying with backoff up to {:.1f} s",
                   o_.coordinator, describe(st),
                   std::chrono::duration<double>(o_.backoff_max).count());
    }
    link_ = Link::Down;
  }
  /// Logs as note_down, then waits the next backoff delay (less when stopping).
  void note_down_and_wait(const grpc::Status& st, Backoff& backoff) {
    note_down(st);
    sleep_unless(stop_, backoff.next());
  }
  void check_refused(const grpc::Status& st) {
    if (st.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
      throw Refused("the coordinator " + o_.coordinator +
                    " refused this worker's token: " + st.error_message() +
                    " (give the coordinator's token with --token-file or STIPPLE_TOKEN)");
    }
  }

  /// Registers unless registered already (a slot may have done it: see reregister).
  /// False when the coordinator rejects us for good (bad token or capabilities).
  bool register_worker(Backoff& backoff) {
    std::lock_guard registering(register_mu_);
    if (!current_worker().empty()) return true;
    proto::RegisterWorkerRequest req;
    *req.mutable_capabilities() = stipple::to_proto(caps_);
    proto::RegisterWorkerResponse resp;
    const grpc::Status st = stub_->RegisterWorker(context(o_.call_seconds).get(), req, &resp);
    if (st.ok()) {
      note_up(backoff);
      {
        std::lock_guard lock(mu_);
        worker_id_ = resp.worker_id();
        if (resp.heartbeat_seconds() > 0) heartbeat_seconds_ = resp.heartbeat_seconds();
      }
      spdlog::info("registered with {} as {} (target {}, {} cores; {})", o_.coordinator,
                   resp.worker_id(), caps_.target, caps_.cores,
                   caps_.gpu_model.empty() ? "no GPU: " + caps_.gpu_absent
                                           : "GPU " + caps_.gpu_model + ", " + caps_.gpu_target);
      return true;
    }
    check_refused(st);
    if (st.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
      spdlog::error("the coordinator {} rejected this host's capabilities: {}", o_.coordinator,
                    st.error_message());
      return false;
    }
    if (!unreachable(st)) spdlog::warn("registering failed: {}", describe(st));
    note_down_and_wait(st, backoff);
    return true;
  }

  /// Whether the coordinator has forgotten worker `id` (it restarted): its heartbeat says so.
  bool forgotten(const std::string& id) {
    proto::HeartbeatRequest req;
    req.set_worker_id(id);
    proto::HeartbeatResponse resp;
    const grpc::Status st = stub_->Heartbeat(context(o_.call_seconds).get(), req, &resp);
    return (st.ok() && !resp.known()) || st.error_code() == grpc::StatusCode::NOT_FOUND;
  }

  /// A worker id the coordinator knows, registering anew in place of the forgotten `old`
  /// (the main thread waits for this slot's batch and cannot); empty if that fails by
  /// `give_up`.
  std::string reregister(const std::string& old, Backoff& backoff, Clock::time_point give_up) {
    forget_worker(old);
    while (!stop_ && Clock::now() < give_up) {
      if (!register_worker(backoff)) return {};
      if (std::string id = current_worker(); !id.empty()) return id;
    }
    return {};
  }

  /// Up to `max_jobs` jobs, leased to the worker id it sets `*leased_to` to.
  std::vector<proto::Job> lease(int max_jobs, std::string* leased_to) {
    const std::string id = current_worker();
    *leased_to = id;
    // Forgotten since the turn began (the heartbeat learnt the coordinator restarted): the
    // next turn registers; a lease under no id would only be refused (issue #25: the log
    // said "does not know worker  (it restarted?)", with no id).
    if (id.empty()) return {};
    proto::LeaseJobsRequest req;
    req.set_worker_id(id);
    req.set_max_jobs(max_jobs);
    req.set_wait_seconds(o_.lease_wait_seconds);
    proto::LeaseJobsResponse resp;
    // Not cancelled on stop: the coordinator may already have leased a job to the call,
    // and would wait for this worker to be lost before giving it to another. Stopping
    // waits out the poll (at most lease_wait_seconds) and measures what it brings.
    const grpc::Status st =
        stub_->LeaseJobs(context(o_.lease_wait_seconds + o_.call_seconds).get(), req, &resp);
    if (st.ok()) {
      note_up(backoff_);
      std::vector<proto::Job> jobs(resp.jobs().begin(), resp.jobs().end());
      // Were there more than asked for, the others' leases expire and they go elsewhere.
      if (int(jobs.size()) > max_jobs) jobs.resize(size_t(max_jobs));
      return jobs;
    }
    check_refused(st);
    if (st.error_code() == grpc::StatusCode::NOT_FOUND) {
      spdlog::info("the coordinator does not know worker {} (it restarted?): registering again",
                   id);
      forget_worker(id);
      return {};
    }
    if (!unreachable(st)) spdlog::warn("leasing failed: {}", describe(st));
    note_down_and_wait(st, backoff_);
    return {};
  }

  /// Calls `call` until it answers something other than unreachable; gives up (Abandon)
  /// when stopped or past `give_up`: by then the job has gone to another worker.
  template <typename Call>
  grpc::Status call_retrying(const std::string& what, Clock::time_point give_up, Backoff& backoff,
                             Call&& call) {
    for (;;) {
      const grpc::Status st = call();
      if (st.ok()) note_up(backoff);
      if (!unreachable(st)) return st;
      if (stop_ || Clock::now() >= give_up) throw Abandon(what + ": " + describe(st));
      note_down_and_wait(st, backoff);
    }
  }

  /// The setup, fetched once (two slots asking at once may both fetch it: harmless).
  const proto::EvaluationSetup& setup(const std::string& setup_id, Clock::time_point give_up,
                                      Backoff& backoff) {
    {
      std::lock_guard lock(setups_mu_);
      if (auto it = setups_.find(setup_id); it != setups_.end()) return it->second;
    }
    proto::GetSetupRequest req;
    req.set_setup_id(setup_id);
    proto::EvaluationSetup resp;
    const grpc::Status st = call_retrying("fetching setup " + setup_id, give_up, backoff, [&] {
      return stub_->GetSetup(context(o_.call_seconds).get(), req, &resp);
    });
    check_refused(st);
    if (st.error_code() == grpc::StatusCode::NOT_FOUND) {
      throw JobError("the coordinator has no setup " + setup_id);
    }
    if (!st.ok()) throw Abandon("fetching setup " + setup_id + ": " + describe(st));
    std::lock_guard lock(setups_mu_);
    return setups_.emplace(setup_id, std::move(resp)).first->second;
  }

  /// The photo's path in the cache, fetched when missing or not matching its hash.
  std::string photo(const proto::ImageRef& ref, Clock::time_point give_up, Backoff& backoff) {
    // The hash becomes a file name: only a hash may, never a path.
    if (!is_sha256_hex(ref.sha256())) {
      throw JobError("photo " + ref.name() + " has no valid SHA-256 ('" + ref.sha256() + "')");
    }
    const fs::path path = images_ / ref.sha256();
    std::error_code ec;
    if (fs::exists(path, ec)) {
      std::string bytes;
      try {
        bytes = read_text_file(path.string(), "photo", kMaxImageFileBytes);
      } catch (const UserError&) {
      }
      if (sha256_hex(bytes) == ref.sha256()) {
        touch_cache_file(path);
        return path.string();
      }
      spdlog::warn("cached photo {} does not match its hash: fetching it again", path.string());
      fs::remove(path, ec);
    }
    proto::GetImageRequest req;
    req.set_sha256(ref.sha256());
    proto::GetImageResponse resp;
    const grpc::Status st = call_retrying("fetching photo " + ref.name(), give_up, backoff, [&] {
      return stub_->GetImage(context(o_.image_call_seconds).get(), req, &resp);
    });
    check_refused(st);
    if (st.error_code() == grpc::StatusCode::NOT_FOUND) {
      throw JobError("the coordinator has no photo " + ref.name() + " (" + ref.sha256() + ")");
    }
    if (!st.ok()) throw Abandon("fetching photo " + ref.name() + ": " + describe(st));
    if (sha256_hex(resp.content()) != ref.sha256()) {
      throw Abandon("photo " + ref.name() + " arrived with another SHA-256 than its own");
    }
    write_file_atomically(path, resp.content());
    fetched_photos_ = true;
    spdlog::debug("cached photo {} as {}", ref.name(), path.string());
    return path.string();
  }

  /// The evaluator of the job's setup: kept, or started on the setup with cached photos.
  LocalEvaluator& evaluator(Slot& slot, const proto::Job& job, Clock::time_point give_up) {
    const std::string& id = job.setup_id();
    auto& evaluators = slot.evaluators;
    for (auto it = evaluators.begin(); it != evaluators.end(); ++it) {
      if (it->first != id) continue;
      evaluators.splice(evaluators.begin(), evaluators, it);
      return *evaluators.front().second;
    }
    {
      std::lock_guard lock(setups_mu_);
      if (auto bad = bad_setups_.find(id); bad != bad_setups_.end()) throw bad->second;
    }
    const proto::EvaluationSetup& m = setup(id, give_up, slot.backoff);
    EvaluationSetup local;
    local.pipeline_source = m.pipeline_source();
    local.pipeline_file = m.pipeline_file();
    for (const auto& [name, value] : m.params()) local.params[name] = value;
    for (const proto::ImageRef& ref : m.images()) {
      local.images[ref.split()].push_back(photo(ref, give_up, slot.backoff));
    }
    if (m.runs() > 0) local.runs = m.runs();
    local.threads = m.threads();
    local.min_timed_ms = m.min_timed_ms();
    local.output_digests = m.output_digests();
    // At most max_evaluators children a slot: each holds its setup's photos and references.
    while (!evaluators.empty() && int(evaluators.size()) >= std::max(1, o_.max_evaluators)) {
      evaluators.pop_back();
    }
    std::unique_ptr<LocalEvaluator> ev;
    LocalEvaluatorOptions options = o_.evaluator;
    options.cancel = &slot.cancel;
    try {
      ev = std::make_unique<LocalEvaluator>(local, options);
    } catch (const EvaluationCancelled&) {
      throw;  // computing the references: the job is no longer wanted
    } catch (const UserError& e) {
      // Bad on every host: each of its jobs is reported failed, none goes round forever.
      remember_bad_setup(id, JobError(std::string("the setup cannot be measured: ") + e.what()));
    } catch (const SetupFailed& e) {
      // Its references hang or die (a resource limit, the deadline): as above, with the
      // status that says how, rather than a job handed from worker to worker.
      remember_bad_setup(id, JobError(e.result.reason, e.result.status));
    } catch (const std::exception& e) {
      throw Abandon(std::string("cannot start the evaluator: ") + e.what());
    }
    if (ev->target() != caps_.target && !warned_target_.exchange(true)) {
      spdlog::error("the evaluator measures for target {} but this worker registered as {}",
                    ev->target(), caps_.target);
    }
    evaluators.emplace_front(id, std::move(ev));
    return *evaluators.front().second;
  }

  [[noreturn]] void remember_bad_setup(const std::string& id, const JobError& why) {
    {
      std::lock_guard lock(setups_mu_);
      bad_setups_.insert_or_assign(id, why);
    }
    throw why;
  }

  /// Measures the job in the slot's evaluator child: its compile beside the other slots',
  /// its timed runs alone (the host's benchmark lock, LocalEvaluatorOptions).
  /// A job's result: a code job's has one part per request (and its own status ok).
  struct Measured {
    EvaluationResult result;
    std::vector<EvaluationResult> parts;
  };
  Measured measure(Slot& slot, const proto::Job& job) {
    const double lease_s = job.lease_seconds() > 0 ? job.lease_seconds() : 60;
    const Clock::time_point give_up = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                         std::chrono::duration<double>(lease_s));
    try {
      if (slot.cancel) throw EvaluationCancelled();
      LocalEvaluator& ev = evaluator(slot, job, give_up);
      std::vector<EvaluationResult> r;
      std::vector<CodeRequest> code;
      for (const proto::CodeRequest& c : job.code()) code.push_back(from_proto(c));
      try {
        // The text is the storage key and prints from job.schedule(): the child parses it.
        // A code job's requests are measured in the one child, in order (evaluator.h).
        r = code.empty() ? ev.evaluate({job.schedule_text()}, job.split(), job.give_up_ms())
                         : ev.evaluate_code(code, job.split());
      } catch (const EvaluationCancelled&) {
        throw;  // the evaluator killed its child and starts another for the next job
      } catch (const std::exception& e) {
        // The evaluator itself cannot go on (not the candidate: that is a failed result).
        slot.evaluators.remove_if([&](const auto& entry) { return entry.first == job.setup_id(); });
        throw Abandon(std::string("the evaluator failed: ") + e.what());
      }
      if (code.empty()) {
        if (r.size() != 1) throw Abandon("the evaluator returned no result");
        return {r[0], {}};
      }
      if (r.size() != code.size()) throw Abandon("the evaluator returned too few results");
      return {EvaluationResult{}, std::move(r)};
    } catch (const JobError& e) {
      EvaluationResult failed;
      failed.status = e.status;
      failed.reason = e.what();
      return {failed, {}};
    }
  }

  void handle(Slot& slot, const std::string& worker, const proto::Job& job) {
    const Clock::time_point start = Clock::now();
    Measured measured;
    try {
      measured = measure(slot, job);
    } catch (const EvaluationCancelled&) {
      // Not reported: the coordinator no longer expects a result, and this worker is fine.
      spdlog::info("job {}: stopped, its run was cancelled ({:.1f} s)", job.job_id(),
                   std::chrono::duration<double>(Clock::now() - start).count());
      return;
    } catch (const Abandon& e) {
      spdlog::warn("job {} abandoned: {}; registering again so that it goes elsewhere",
                   job.job_id(), e.what());
      forget_worker(worker);
      sleep_unless(stop_, slot.abandon_backoff.next());
      return;
    }
    slot.abandon_backoff.reset();
    report(slot.backoff, worker, job, measured);
    const EvaluationResult& result = measured.result;
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (!measured.parts.empty()) {
      spdlog::info("job {}: {} code measurements ({:.1f} s)", job.job_id(), measured.parts.size(),
                   seconds);
    } else if (result.ok()) {
      spdlog::info("job {}: ok, {:.3f} ms, error {:.4g} ({:.1f} s)", job.job_id(), result.time_ms,
                   result.error, seconds);
    } else {
      spdlog::info("job {}: {} ({}) ({:.1f} s)", job.job_id(), to_string(result.status),
                   result.reason, seconds);
    }
  }

  /// Reports until the coordinator answers: reports are idempotent by job id, so a retry
  /// after a lost answer changes nothing. When stopping, gives up after the job's lease.
  void report(Backoff& backoff, const std::string& worker, const proto::Job& job,
              const Measured& measured) {
    proto::ReportResultsRequest req;
    req.set_worker_id(worker);
    proto::JobResult* m = req.add_results();
    *m = to_proto(job.job_id(), measured.result);
    for (const EvaluationResult& part : measured.parts) {
      *m->add_code_results() = to_proto(job.job_id(), part);
    }
    const double lease_s = job.lease_seconds() > 0 ? job.lease_seconds() : 60;
    const Clock::time_point stop_by = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                         std::chrono::duration<double>(lease_s));
    Clock::time_point resubmit_by;
    Backoff resubmit_wait(o_.backoff_initial, o_.backoff_max);  // not reset by each answer
    for (;;) {
      proto::ReportResultsResponse resp;
      const grpc::Status st = stub_->ReportResults(context(o_.call_seconds).get(), req, &resp);
      if (st.ok()) {
        note_up(backoff);
        if (resp.unknown() > 0 && !req.forgotten_lease() && forgotten(worker)) {
          // The coordinator restarted and forgot the id the job was leased under. Its
          // resumed run submits the job again: report it under a new registration, so that
          // the measurement is not repeated.
          resubmit_by = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(std::min(lease_s, 60.0)));
          const std::string id = reregister(worker, backoff, resubmit_by);
          if (!id.empty()) {
            spdlog::info("job {}: the coordinator restarted; reporting it again as {}",
                         job.job_id(), id);
            req.set_worker_id(id);
            req.set_forgotten_lease(true);
            continue;
          }
        }
        if (resp.unknown() > 0 && req.forgotten_lease() && !stop_ && Clock::now() < resubmit_by) {
          sleep_unless(stop_, resubmit_wait.next());  // until the resumed run submits it
          continue;
        }
        ++reported_;
        if (resp.unknown() > 0) {
          spdlog::info("job {}: the coordinator no longer expects this result", job.job_id());
        } else if (req.forgotten_lease()) {
          spdlog::info("job {}: accepted across the coordinator's restart", job.job_id());
        }
        return;
      }
      check_refused(st);
      if (!unreachable(st)) {
        spdlog::error("job {}: the coordinator refused the result: {}", job.job_id(), describe(st));
        return;
      }
      if (stop_ && Clock::now() >= stop_by) {
        spdlog::warn("job {}: stopping without reporting: {}", job.job_id(), describe(st));
        return;
      }
      note_down(st);
      // Stopping still reports the job in hand: the backoff is not cut short then.
      Clock::duration wait = backoff.next();
      if (stop_) wait = std::clamp<Clock::duration>(stop_by - Clock::now(), {}, wait);
      std::this_thread::sleep_for(wait);
    }
  }

  // Heartbeats at the coordinator's interval while registered.
  void heartbeat_loop() {
    std::unique_lock lock(mu_);
    Clock::time_point next = Clock::now();
    std::string last_id;
    while (!quit_) {
      // Polls for a new registration; notified to quit. Not past `next`: a held heartbeat
      // that was answered is followed at once, so that one is open nearly all the time.
      const Clock::time_point poll = Clock::now() + milliseconds(100);
      const bool due = !worker_id_.empty() && worker_id_ == last_id;
      cv_.wait_until(lock, due ? std::min(next, poll) : poll);
      if (quit_) break;
      if (worker_id_ != last_id) {  // registered anew: a held heartbeat open from now on
        last_id = worker_id_;
        next = Clock::now();
      }
      if (worker_id_.empty() || Clock::now() < next) continue;
      const std::string id = worker_id_;
      const double interval = heartbeat_seconds_;
      // The coordinator holds the call up to the interval, so that one is always open: if
      // this process dies, the transport cancels it and the coordinator ends its leases at
      // once. The next goes when the interval since this one was sent has passed.
      proto::HeartbeatRequest req;
      req.set_worker_id(id);
      req.set_hold_seconds(interval);
      proto::HeartbeatResponse resp;
      const Clock::time_point sent = Clock::now();
      auto ctx = context(interval + std::min(o_.call_seconds, std::max(1.0, interval)));
      held_heartbeat_ = ctx.get();
      lock.unlock();
      const grpc::Status st = stub_->Heartbeat(ctx.get(), req, &resp);
      if (st.ok() && resp.cancelled_jobs_size() > 0) cancel_jobs(resp.cancelled_jobs());
      lock.lock();
      held_heartbeat_ = nullptr;
      // Answered early with cancelled jobs: the next is held open at once, so that this
      // worker's death is still noticed at once and a second cancel still reaches it.
      next = st.ok() && resp.cancelled_jobs_size() > 0
                 ? Clock::now()
                 : sent + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(interval));
      const bool forgotten =
          (st.ok() && !resp.known()) || st.error_code() == grpc::StatusCode::NOT_FOUND;
      if (forgotten && worker_id_ == id) {
        spdlog::info("the coordinator does not know worker {} (it restarted?): registering again",
                     id);
        worker_id_.clear();
        last_id.clear();
      }
      // A missed heartbeat is made up by the next; the main loop logs the coordinator's state.
    }
  }
};

WorkerDaemon::WorkerDaemon(WorkerDaemonOptions options) : options_(std::move(options)) {}
WorkerDaemon::~WorkerDaemon() = default;

int WorkerDaemon::run(const std::atomic<bool>& stop) {
  Session session(options_, stop, jobs_reported_);
  return session.run();
}

}  // namespace stipple::workers
