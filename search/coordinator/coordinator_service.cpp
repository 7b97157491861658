#include "search/coordinator/coordinator_service.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <system_error>
#include <thread>

#include "compiler_core/image/image_io.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/schedule/schedule_parser.h"
#include "compiler_core/support/content_hash.h"
#include "proto/capabilities_codec.h"
#include "proto/pipeline_codec.h"
#include "proto/rpc_security.h"
#include "proto/schedule_codec.h"
#include "workers/evaluation_codec.h"

namespace stipple::coordinator {
namespace {

using std::chrono::duration;
using std::chrono::milliseconds;

/// How often a held heartbeat looks whether its call was cancelled.
constexpr milliseconds kHeldCallPoll{20};

// The failure kinds results are stored with (storage/README.md).
std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("cannot read photo " + path);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw UserError("cannot read photo " + path);
  return bytes;
}

// Map order in a protobuf's bytes is unspecified unless asked for; the setup id is a hash
// of them, so ask.
std::string deterministic_bytes(const google::protobuf::Message& m) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    m.SerializeToCodedStream(&coded);
  }
  return out;
}

/// invalid_result() of a result or of a code job's part, `what` naming it.
std::string invalid_measurement(const proto::JobResult& r, const std::string& what, int photos,
                                int parts) {
  const std::optional<EvaluationStatus> status = parse_evaluation_status(r.status());
  if (!status) return what + "unknown status '" + r.status() + "'";
  // A code job's ok result has a part per request; a failed one (its setup could not be
  // measured) may have none.
  const int n_parts = r.code_results_size();
  if (parts >= 0 && n_parts != parts && !(*status != EvaluationStatus::Ok && n_parts == 0)) {
    return what + std::to_string(n_parts) + " code results for a job of " + std::to_string(parts) +
           " requests";
  }
  if (parts < 0 && photos >= 0 && n_parts > 0) return what + "code results for a schedule's job";
  for (int k = 0; k < n_parts; ++k) {
    const proto::JobResult& part = r.code_results(k);
    const std::string part_what = what + "code result " + std::to_string(k + 1) + ": ";
    if (part.code_results_size() > 0) return part_what + "code results nested in it";
    if (std::string why = invalid_measurement(part, part_what, photos, -1); !why.empty())
      return why;
  }
  if (!std::isfinite(r.compile_ms()) || r.compile_ms() < 0)
    return what + "compile_ms is not a finite time";
  for (const proto::ImageMeasurement& m : r.images()) {
    if (!std::isfinite(m.time_ms()) || m.time_ms() < 0)
      return what + "time_ms is not a finite time";
    // An exact output has an infinite PSNR and a NaN output an infinite error (metrics.h);
    // NaN is never a measurement.
    if (std::isnan(m.error()) || m.error() < 0) return what + "error is NaN or negative";
    if (std::isnan(m.psnr())) return what + "psnr is NaN";
    if (!std::isfinite(m.min_time_ms()) || m.min_time_ms() < 0)
      return what + "min_time_ms is not a finite time";
  }
  const int n = r.images_size();
  // A code job's own result has no images: its parts have them.
  const bool code_job = r.code_results_size() > 0 || parts > 0;
  if (photos >= 0 && n != photos && !(*status != EvaluationStatus::Ok && n == 0) &&
      !(code_job && n == 0)) {
    return what + std::to_string(n) + " image measurements for a split of " +
           std::to_string(photos) + " photos";
  }
  if (photos < 0 && *status == EvaluationStatus::Ok && n == 0 && r.code_results_size() == 0)
    return what + "an ok result without images";
  return "";
}

/// Why a result cannot be stored, or "" when it can. `photos` < 0: the split's photo count
/// is not known here (a job this process never leased), so only the shape is checked.
/// `parts`: a code job's request count; -1 for a schedule's job or one not known here.
std::string invalid_result(const proto::JobResult& r, int photos, int parts) {
  if (r.job_id().empty()) return "a result without a job id";
  return invalid_measurement(r, "result of job " + r.job_id() + ": ", photos, parts);
}

grpc::Status unimplemented() {
  return {grpc::StatusCode::UNIMPLEMENTED, "this server does not serve runs"};
}

/// The request of a raw call: the token first (again: the server's credentials refused a
/// call without it before its body was received), then its bytes parsed (a body that does
/// not parse is INVALID_ARGUMENT naming the message it is not).
template <typename Request>
grpc::Status parse_raw(const grpc::CallbackServerContext& context, const std::string& token,
                       const grpc::ByteBuffer& in, Request* request) {
  if (grpc::Status st = rpc::check_token(context, token); !st.ok()) return st;
  std::string bytes;
  std::vector<grpc::Slice> slices;
  if (in.Dump(&slices).ok()) {
    for (const grpc::Slice& slice : slices) {
      bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
  }
  if (!request->ParseFromString(bytes)) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            "the request is not a " + Request::descriptor()->name() + " (its " +
                std::to_string(bytes.size()) + " bytes do not parse)"};
  }
  return grpc::Status::OK;
}

/// `call` on a parsed request, its response serialized into `out`. An exception from
/// `call` is INTERNAL with its message: nothing escapes into gRPC's (or our) thread.
template <typename Request, typename Response, typename Call>
grpc::Status answer_raw(const Request& request, grpc::ByteBuffer* out, Call& call) {
  Response response;
  grpc::Status st;
  try {
    st = call(request, &response);
  } catch (const std::exception& e) {
    st = {grpc::StatusCode::INTERNAL, e.what()};
  }
  if (st.ok()) {
    grpc::Slice slice(response.SerializeAsString());
    *out = grpc::ByteBuffer(&slice, 1);
  }
  return st;
}

/// Serves a unary call raw, on gRPC's callback thread: for calls that do not block.
template <typename Request, typename Response, typename Call>
grpc::ServerUnaryReactor* serve_raw(grpc::CallbackServerContext* context, const std::string& token,
                                    const grpc::ByteBuffer* in, grpc::ByteBuffer* out,
                                    Call&& call) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  Request request;
  grpc::Status st = parse_raw(*context, token, *in, &request);
  if (st.ok()) st = answer_raw<Request, Response>(request, out, call);
  reactor->Finish(st);
  return reactor;
}

/// WatchRun's stream, raw: the run's progress messages are written from a thread of the
/// service's (the watch blocks between them), one at a time, each waiting for gRPC to
/// take the last. gRPC deletes nothing: the reactor deletes itself when the call is done.
class RawProgressStream final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  /// Writes one message; false when the client has gone away.
  bool write(const proto::RunProgress& m) {
    std::unique_lock lock(mu_);
    grpc::Slice slice(m.SerializeAsString());
    buffer_ = grpc::ByteBuffer(&slice, 1);
    writing_ = true;
    StartWrite(&buffer_);
    written_.wait(lock, [&] { return !writing_; });
    return write_ok_;
  }
  void OnWriteDone(bool ok) override {
    std::lock_guard lock(mu_);
    writing_ = false;
    write_ok_ = ok;
    written_.notify_all();
  }
  void OnDone() override { delete this; }

 private:
  std::mutex mu_;
  std::condition_variable written_;
  grpc::ByteBuffer buffer_;
  bool writing_ = false;
  bool write_ok_ = true;
};

}  // namespace

void configure_server(grpc::ServerBuilder& builder, int max_message_bytes) {
  builder.SetMaxReceiveMessageSize(max_message_bytes);
  builder.SetMaxSendMessageSize(max_message_bytes);
}

CoordinatorService::CoordinatorService(coordinator::WorkerPool& pool,
                                       CoordinatorServiceOptions options)
    : pool_(pool), options_(std::move(options)) {}

// ---- the coordinator's side ----

std::string CoordinatorService::add_setup(const workers::EvaluationSetup& setup) {
  auto s = std::make_shared<Setup>();
  s->pipeline = std::make_shared<const Pipeline>(
      compile_pipeline(setup.pipeline_source, setup.pipeline_file));
  proto::EvaluationSetup& m = s->message;
  *m.mutable_pipeline() = stipple::to_proto(*s->pipeline);
  m.set_pipeline_source(setup.pipeline_source);
  m.set_pipeline_file(setup.pipeline_file);
  for (const auto& [name, value] : setup.params) (*m.mutable_params())[name] = value;
  std::map<std::string, std::string> path_by_hash;
  for (const auto& [split, paths] : setup.images) {
    s->photos[split] = int(paths.size());
    for (const std::string& path : paths) {
      std::string bytes = read_file_bytes(path);
      const Buffer photo = read_image(path);  // a photo that does not load is bad input now
      proto::ImageRef* ref = m.add_images();
      ref->set_name(std::filesystem::path(path).filename().string());
      ref->set_split(split);
      ref->set_sha256(sha256_hex(bytes));
      ref->set_width(photo.extent_or_one(0));
      ref->set_height(photo.extent_or_one(1));
      path_by_hash.emplace(ref->sha256(), path);
    }
  }
  m.set_runs(setup.runs);
  m.set_threads(setup.threads);
  m.set_min_timed_ms(setup.min_timed_ms);
  m.set_output_digests(setup.output_digests);
  const std::string id = "s" + sha256_hex(deterministic_bytes(m)).substr(0, 24);
  m.set_setup_id(id);

  std::lock_guard lock(mu_);
  setups_.emplace(id, std::move(s));
  for (const auto& [hash, path] : path_by_hash) images_.emplace(hash, path);
  return id;
}

void CoordinatorService::bind_run(const std::string& run_id, const std::string& setup_id) {
  std::lock_guard lock(mu_);
  if (!setups_.count(setup_id)) throw UserError("no setup " + setup_id);
  runs_[run_id] = setup_id;
}

void CoordinatorService::unbind_run(const std::string& run_id) {
  std::lock_guard lock(mu_);
  runs_.erase(run_id);
  std::erase_if(jobs_, [&](const auto& entry) { return entry.second.run_id == run_id; });
}

// ---- worker calls ----

grpc::Status CoordinatorService::register_worker(const proto::RegisterWorkerRequest& request,
                                                 proto::RegisterWorkerResponse* response) {
  const proto::Capabilities& c = request.capabilities();
  if (c.target().empty() || c.host().empty()) {
    return {grpc::StatusCode::INVALID_ARGUMENT, "capabilities need a host and a target key"};
  }
  // Names, shown and matched as they are (a job kept for a host is queued under the
  // target and the host): no control characters.
  auto printable = [](const std::string& s) {
    return std::none_of(s.begin(), s.end(),
                        [](char ch) { return std::iscntrl(static_cast<unsigned char>(ch)); });
  };
  if (!printable(c.target()) || !printable(c.host())) {
    return {grpc::StatusCode::INVALID_ARGUMENT, "the host or target key has control characters"};
  }
  if (c.cores() < 0 || c.l2_cache_bytes() < 0 || c.last_level_cache_bytes() < 0) {
    return {grpc::StatusCode::INVALID_ARGUMENT, "negative core count or cache size"};
  }
  response->set_worker_id(pool_.register_worker(stipple::from_proto(c)));
  // Three heartbeats per timeout: one lost or late one does not lose the worker.
  response->set_heartbeat_seconds(duration<double>(options_.pool.heartbeat_timeout).count() / 3);
  response->set_lease_seconds(duration<double>(options_.pool.lease_duration).count());
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::lease_jobs(const grpc::ServerContextBase& context,
                                            const proto::LeaseJobsRequest& request,
                                            proto::LeaseJobsResponse* response) {
  const int max_jobs = std::clamp(request.max_jobs(), 1, std::max(1, options_.max_jobs_per_lease));
  milliseconds wait{0};
  const double asked = request.wait_seconds();
  if (std::isfinite(asked) && asked > 0) {
    const milliseconds cap =
        std::min(options_.max_lease_wait, milliseconds(options_.pool.heartbeat_timeout / 3));
    wait = asked * 1000 >= double(cap.count()) ? cap : milliseconds(int64_t(asked * 1000));
  }
  coordinator::LeaseReply reply = pool_.lease(request.worker_id(), max_jobs, wait);
  if (reply.unknown_worker) {
    return {grpc::StatusCode::NOT_FOUND, "unknown worker id: register again"};
  }
  const double lease_seconds = duration<double>(options_.pool.lease_duration).count();
  for (const coordinator::Lease& lease : reply.leases) {
    const coordinator::PoolJob& pj = lease.job;
    std::shared_ptr<const Setup> setup;
    std::string setup_id;
    {
      std::lock_guard lock(mu_);
      auto run = runs_.find(pj.run_id);
      if (run != runs_.end()) {
        setup_id = run->second;
        setup = setups_.at(setup_id);
        auto photos = setup->photos.find(pj.split);
        jobs_[pj.id] = {pj.run_id, photos == setup->photos.end() ? 0 : photos->second,
                        pj.code.empty() ? -1 : int(pj.code.size())};
      }
    }
    // A job no worker could run is a recorded failure of the candidate, never a job that
    // goes round the workers forever (the design, "Evaluation protocol").
    workers::EvaluationResult failed;
    failed.status = EvaluationStatus::Error;
    if (!setup) {
      failed.reason = "run " + pj.run_id + " has no evaluation setup on the coordinator";
      pool_.report(request.worker_id(), pj.id, failed);
      continue;
    }
    proto::Job* job = response->add_jobs();
    try {
      // A code job's schedules were checked when it was asked for (Evaluate).
      if (pj.code.empty()) {
        // Checked here (vectors(k) is legal on every target), sent as written: a width in
        // registers is the worker's to resolve for its own (natural_vectors.h).
        const std::string name = "<job " + pj.id + ">";
        compile_schedule(pj.schedule, name, *setup->pipeline);
        *job->mutable_schedule() = stipple::to_proto(parse_schedule(pj.schedule, name));
      }
    } catch (const UserError& e) {
      response->mutable_jobs()->RemoveLast();
      failed.reason = std::string("the schedule does not fit the pipeline: ") + e.what();
      pool_.report(request.worker_id(), pj.id, failed);
      continue;
    }
    job->set_job_id(pj.id);
    int64_t run_number = 0;
    try {
      run_number = std::stoll(pj.run_id);
    } catch (const std::exception&) {
      run_number = 0;  // runs the database did not number (tests, benchmarks)
    }
    job->set_run_id(run_number);
    job->set_setup_id(setup_id);
    job->set_split(pj.split);
    if (pj.code.empty()) job->set_schedule_text(pj.schedule);
    for (const workers::CodeRequest& c : pj.code) *job->add_code() = workers::to_proto(c);
    job->set_give_up_ms(pj.give_up_ms);
    job->set_lease_seconds(lease_seconds);
  }
  // A long poll the worker gave up on (its deadline passed, it went away) cannot deliver
  // its jobs: give them back now rather than when their leases run out. The deadline is
  // checked too: IsCancelled() learns of an expired call only when gRPC has processed it.
  const bool expired = std::chrono::system_clock::now() >= context.deadline();
  if (context.IsCancelled() && !expired) {
    // Cancelled by the transport (the worker died, its connection broke): it will not
    // measure what it holds either.
    pool_.worker_gone(request.worker_id());
    return {grpc::StatusCode::CANCELLED, "the call was cancelled; the worker's jobs went back"};
  }
  const bool gone = context.IsCancelled() || expired;
  if (gone && response->jobs_size() > 0) {
    std::vector<std::string> ids;
    for (const proto::Job& job : response->jobs()) ids.push_back(job.job_id());
    pool_.give_back(request.worker_id(), ids);
    return {grpc::StatusCode::CANCELLED, "the call was cancelled; its jobs went back"};
  }
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::held_heartbeat(const grpc::ServerContextBase& context,
                                                const proto::HeartbeatRequest& request,
                                                proto::HeartbeatResponse* response) {
  const std::string& worker = request.worker_id();
  if (!pool_.heartbeat(worker)) {
    response->set_known(false);
    return grpc::Status::OK;
  }
  const double asked = request.hold_seconds();
  const milliseconds cap = milliseconds(options_.pool.heartbeat_timeout / 3);
  const milliseconds hold =
      std::isfinite(asked) && asked > 0
          ? std::min(cap, milliseconds(int64_t(std::min(asked, 3600.0) * 1000)))
          : milliseconds(0);
  // Answered early when a job of the worker's is cancelled: the answer is how the worker
  // learns to stop measuring it (issue #25: a cancel stops work in progress within a second).
  std::vector<std::string> cancelled = pool_.take_cancelled(worker);
  const auto end = std::chrono::steady_clock::now() + hold;
  while (cancelled.empty() && std::chrono::steady_clock::now() < end && !context.IsCancelled() &&
         !pool_.is_shut_down()) {
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        kHeldCallPoll, end - std::chrono::steady_clock::now()));
    cancelled = pool_.take_cancelled(worker);
  }
  // Cancelled before its deadline: not the worker's own time limit but the transport (the
  // process died, the connection broke) or the worker quitting. Either way it will not
  // report what it holds; a worker that is in fact alive is heard from again and its
  // results are still taken if first.
  if (context.IsCancelled()) {
    if (std::chrono::system_clock::now() < context.deadline()) {
      const int back = pool_.worker_gone(worker);
      spdlog::info("worker {} is gone (its heartbeat call was cancelled); {} job(s) went back",
                   worker, back);
    }
    return {grpc::StatusCode::CANCELLED, "the call was cancelled"};
  }
  response->set_known(pool_.heartbeat(worker));
  for (std::string& id : cancelled) response->add_cancelled_jobs(std::move(id));
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::report_results(const proto::ReportResultsRequest& request,
                                                proto::ReportResultsResponse* response) {
  // Everything is checked before anything is stored: a call with one bad result changes
  // nothing.
  {
    std::lock_guard lock(mu_);
    for (const proto::JobResult& r : request.results()) {
      auto job = jobs_.find(r.job_id());
      const std::string why = job == jobs_.end()
                                  ? invalid_result(r, -1, -1)
                                  : invalid_result(r, job->second.photos, job->second.parts);
      if (!why.empty()) return {grpc::StatusCode::INVALID_ARGUMENT, why};
    }
  }
  int accepted = 0, duplicates = 0, unknown = 0;
  for (const proto::JobResult& r : request.results()) {
    std::vector<workers::EvaluationResult> parts;
    for (const proto::JobResult& part : r.code_results())
      parts.push_back(workers::from_proto(part));
    switch (pool_.report(request.worker_id(), r.job_id(), workers::from_proto(r),
                         request.forgotten_lease(), std::move(parts))) {
      case coordinator::ReportOutcome::Accepted: ++accepted; break;
      case coordinator::ReportOutcome::Duplicate: ++duplicates; break;
      case coordinator::ReportOutcome::UnknownJob:
      case coordinator::ReportOutcome::UnknownWorker:
      case coordinator::ReportOutcome::NotLeased:
      case coordinator::ReportOutcome::Mismatched: ++unknown; break;
    }
  }
  response->set_accepted(accepted);
  response->set_duplicates(duplicates);
  response->set_unknown(unknown);
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::get_setup(const proto::GetSetupRequest& request,
                                           proto::EvaluationSetup* response) {
  std::shared_ptr<const Setup> setup;
  {
    std::lock_guard lock(mu_);
    auto it = setups_.find(request.setup_id());
    if (it == setups_.end()) return {grpc::StatusCode::NOT_FOUND, "no such setup"};
    setup = it->second;
  }
  *response = setup->message;
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::get_image(const proto::GetImageRequest& request,
                                           proto::GetImageResponse* response) {
  std::string path;
  {
    std::lock_guard lock(mu_);
    // Only photos of registered setups: the coordinator is no file server.
    auto it = images_.find(request.sha256());
    if (it == images_.end()) return {grpc::StatusCode::NOT_FOUND, "no photo with that hash"};
    path = it->second;
  }
  std::string bytes;
  try {
    bytes = read_file_bytes(path);
  } catch (const UserError& e) {
    return {grpc::StatusCode::NOT_FOUND, e.what()};
  }
  // A file changed since the setup was made is not the photo the setup names.
  if (sha256_hex(bytes) != request.sha256()) {
    return {grpc::StatusCode::NOT_FOUND, "photo " + path + " changed since the run began"};
  }
  response->set_content(std::move(bytes));
  return grpc::Status::OK;
}

// ---- client calls ----

grpc::ServerWriteReactor<grpc::ByteBuffer>* CoordinatorService::WatchRun(
    RawContext* c, const grpc::ByteBuffer* in) {
  auto* stream = new RawProgressStream;
  proto::WatchRunRequest request;
  grpc::Status st = parse_raw(*c, options_.token, *in, &request);
  if (st.ok() && !client_calls_) st = unimplemented();
  if (!st.ok()) {
    stream->Finish(st);
    return stream;
  }
  start_thread([this, c, stream, run_id = request.run_id()] {
    grpc::Status result;
    try {
      result = client_calls_->watch(run_id, *c,
                                    [&](const proto::RunProgress& m) { return stream->write(m); });
    } catch (const std::exception& e) {
      result = {grpc::StatusCode::INTERNAL, e.what()};
    }
    stream->Finish(result);
  });
  return stream;
}

grpc::Status CoordinatorService::list_workers(proto::ListWorkersResponse* response) {
  const coordinator::PoolSnapshot snapshot = pool_.snapshot();
  for (const coordinator::WorkerInfo& w : snapshot.workers) {
    proto::WorkerStatus* out = response->add_workers();
    out->set_worker_id(w.id);
    *out->mutable_capabilities() = stipple::to_proto(w.capabilities);
    out->set_busy(w.busy());
    out->set_lost(w.lost);
    out->set_seconds_since_heard(duration<double>(snapshot.taken_at - w.last_heard).count());
    out->set_jobs_completed(w.jobs_completed);
  }
  response->set_jobs_queued(snapshot.counters.queued);
  response->set_jobs_leased(snapshot.counters.leased);
  response->set_jobs_completed(snapshot.counters.completed);
  response->set_jobs_redispatched(snapshot.counters.redispatched);
  response->set_duplicate_results(snapshot.counters.duplicates);
  response->set_shared_results(snapshot.counters.shared);
  return grpc::Status::OK;
}

// ---- the raw unary calls ----

using Raw = grpc::ServerUnaryReactor*;

Raw CoordinatorService::RegisterWorker(RawContext* c, const grpc::ByteBuffer* in,
                                       grpc::ByteBuffer* out) {
  return serve_raw<proto::RegisterWorkerRequest, proto::RegisterWorkerResponse>(
      c, options_.token, in, out,
      [&](const auto& request, auto* response) { return register_worker(request, response); });
}

Raw CoordinatorService::ReportResults(RawContext* c, const grpc::ByteBuffer* in,
                                      grpc::ByteBuffer* out) {
  return serve_raw<proto::ReportResultsRequest, proto::ReportResultsResponse>(
      c, options_.token, in, out,
      [&](const auto& request, auto* response) { return report_results(request, response); });
}

Raw CoordinatorService::GetSetup(RawContext* c, const grpc::ByteBuffer* in, grpc::ByteBuffer* out) {
  return serve_raw<proto::GetSetupRequest, proto::EvaluationSetup>(
      c, options_.token, in, out,
      [&](const auto& request, auto* response) { return get_setup(request, response); });
}

Raw CoordinatorService::GetImage(RawContext* c, const grpc::ByteBuffer* in, grpc::ByteBuffer* out) {
  return serve_raw<proto::GetImageRequest, proto::GetImageResponse>(
      c, options_.token, in, out,
      [&](const auto& request, auto* response) { return get_image(request, response); });
}

Raw CoordinatorService::ListWorkers(RawContext* c, const grpc::ByteBuffer* in,
                                    grpc::ByteBuffer* out) {
  return serve_raw<proto::ListWorkersRequest, proto::ListWorkersResponse>(
      c, options_.token, in, out,
      [&](const auto&, auto* response) { return list_workers(response); });
}

// Short work each (files written and a thread started, a query): done on the callback
// thread rather than handed to another.
Raw CoordinatorService::SubmitRun(RawContext* c, const grpc::ByteBuffer* in,
                                  grpc::ByteBuffer* out) {
  return serve_raw<proto::SubmitRunRequest, proto::SubmitRunResponse>(
      c, options_.token, in, out, [&](const auto& request, auto* response) {
        return client_calls_ ? client_calls_->submit(request, response) : unimplemented();
      });
}

Raw CoordinatorService::ListRuns(RawContext* c, const grpc::ByteBuffer* in, grpc::ByteBuffer* out) {
  return serve_raw<proto::ListRunsRequest, proto::ListRunsResponse>(
      c, options_.token, in, out, [&](const auto&, auto* response) {
        return client_calls_ ? client_calls_->list(response) : unimplemented();
      });
}

Raw CoordinatorService::GetFront(RawContext* c, const grpc::ByteBuffer* in, grpc::ByteBuffer* out) {
  return serve_raw<proto::GetFrontRequest, proto::GetFrontResponse>(
      c, options_.token, in, out, [&](const auto& request, auto* response) {
        return client_calls_ ? client_calls_->front(request.run_id(), response) : unimplemented();
      });
}

// The blocking unary calls: parsed on gRPC's thread, then answered from one of ours.
Raw CoordinatorService::LeaseJobs(RawContext* c, const grpc::ByteBuffer* in,
                                  grpc::ByteBuffer* out) {
  grpc::ServerUnaryReactor* reactor = c->DefaultReactor();
  auto request = std::make_shared<proto::LeaseJobsRequest>();
  if (grpc::Status st = parse_raw(*c, options_.token, *in, request.get()); !st.ok()) {
    reactor->Finish(st);
    return reactor;
  }
  start_thread([this, c, reactor, request, out] {
    auto call = [&](const proto::LeaseJobsRequest& r, proto::LeaseJobsResponse* response) {
      return lease_jobs(*c, r, response);
    };
    reactor->Finish(
        answer_raw<proto::LeaseJobsRequest, proto::LeaseJobsResponse>(*request, out, call));
  });
  return reactor;
}

// Answered at once when not held; held on a thread of ours.
Raw CoordinatorService::Heartbeat(RawContext* c, const grpc::ByteBuffer* in,
                                  grpc::ByteBuffer* out) {
  grpc::ServerUnaryReactor* reactor = c->DefaultReactor();
  auto request = std::make_shared<proto::HeartbeatRequest>();
  if (grpc::Status st = parse_raw(*c, options_.token, *in, request.get()); !st.ok()) {
    reactor->Finish(st);
    return reactor;
  }
  auto call = [this, c](const proto::HeartbeatRequest& r, proto::HeartbeatResponse* response) {
    return held_heartbeat(*c, r, response);
  };
  const double hold = request->hold_seconds();
  if (!(std::isfinite(hold) && hold > 0)) {
    reactor->Finish(
        answer_raw<proto::HeartbeatRequest, proto::HeartbeatResponse>(*request, out, call));
    return reactor;
  }
  start_thread([reactor, request, out, call] {
    reactor->Finish(
        answer_raw<proto::HeartbeatRequest, proto::HeartbeatResponse>(*request, out, call));
  });
  return reactor;
}

Raw CoordinatorService::CancelRun(RawContext* c, const grpc::ByteBuffer* in,
                                  grpc::ByteBuffer* out) {
  grpc::ServerUnaryReactor* reactor = c->DefaultReactor();
  proto::CancelRunRequest request;
  grpc::Status st = parse_raw(*c, options_.token, *in, &request);
  if (st.ok() && !client_calls_) st = unimplemented();
  if (!st.ok()) {
    reactor->Finish(st);
    return reactor;
  }
  start_thread([this, reactor, request, out] {
    auto call = [&](const proto::CancelRunRequest& r, proto::CancelRunResponse* response) {
      return client_calls_->cancel(r.run_id(), response);
    };
    reactor->Finish(
        answer_raw<proto::CancelRunRequest, proto::CancelRunResponse>(request, out, call));
  });
  return reactor;
}

Raw CoordinatorService::Evaluate(RawContext* c, const grpc::ByteBuffer* in, grpc::ByteBuffer* out) {
  grpc::ServerUnaryReactor* reactor = c->DefaultReactor();
  auto request = std::make_shared<proto::EvaluateRequest>();
  grpc::Status st = parse_raw(*c, options_.token, *in, request.get());
  if (st.ok() && !client_calls_) st = unimplemented();
  if (!st.ok()) {
    reactor->Finish(st);
    return reactor;
  }
  // It waits for the workers: on a thread of its own, as the other blocking calls.
  start_thread([this, reactor, request, out, c] {
    auto call = [&](const proto::EvaluateRequest& r, proto::EvaluateResponse* response) {
      return client_calls_->evaluate(r, *c, response);
    };
    reactor->Finish(
        answer_raw<proto::EvaluateRequest, proto::EvaluateResponse>(*request, out, call));
  });
  return reactor;
}

void CoordinatorService::start_thread(std::function<void()> work) {
  {
    std::lock_guard lock(threads_mu_);
    ++threads_running_;
  }
  auto done = [this] {
    std::lock_guard lock(threads_mu_);
    if (--threads_running_ == 0) threads_done_.notify_all();
  };
  try {
    std::thread([work, done] {
      work();
      done();
    }).detach();
  } catch (const std::system_error&) {
    // No thread to be had (the process is at its limit): answer on gRPC's thread rather
    // than never.
    work();
    done();
  }
}

CoordinatorService::~CoordinatorService() {
  std::unique_lock lock(threads_mu_);
  threads_done_.wait(lock, [&] { return threads_running_ == 0; });
}

}  // namespace stipple::coordinator
