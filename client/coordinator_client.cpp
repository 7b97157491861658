#include "client/coordinator_client.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <thread>

#include "compiler_core/ir/error.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/support/content_hash.h"
#include "compiler_core/support/files.h"
#include "proto/pipeline_codec.h"

namespace stipple::client {

RpcError::RpcError(const std::string& call, const grpc::Status& status)
    : std::runtime_error(call + ": " +
                         (status.error_message().empty()
                              ? "status " + std::to_string(status.error_code())
                              : status.error_message())),
      code_(status.error_code()) {}

bool RpcError::bad_input() const {
  switch (code_) {
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::NOT_FOUND:
    case grpc::StatusCode::UNAUTHENTICATED:
    case grpc::StatusCode::PERMISSION_DENIED:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::OUT_OF_RANGE:
    case grpc::StatusCode::RESOURCE_EXHAUSTED:  // a request over the message size limit
      return true;
    default: return false;
  }
}

proto::SubmitRunRequest make_submit_request(const SubmitSpec& spec,
                                            std::vector<CompileWarning>* warnings) {
  proto::SubmitRunRequest r;
  const std::string source = read_text_file(spec.pipeline_file, "pipeline");
  const Pipeline pipeline = compile_pipeline(source, spec.pipeline_file, warnings);
  *r.mutable_pipeline() = to_proto(pipeline);
  r.set_pipeline_source(source);
  r.set_pipeline_file(std::filesystem::path(spec.pipeline_file).filename().string());
  auto add_photos = [&](const std::vector<std::string>& paths, const std::string& split) {
    for (const std::string& path : paths) {
      std::string bytes = read_text_file(path, "photo", kMaxImageFileBytes);
      proto::ImageRef* ref = r.add_images();
      ref->set_name(std::filesystem::path(path).filename().string());
      ref->set_split(split);
      ref->set_sha256(sha256_hex(bytes));
      r.add_image_contents(std::move(bytes));
    }
  };
  add_photos(spec.train_images, "train");
  add_photos(spec.test_images, "test");
  r.set_dataset(spec.dataset);
  if (!spec.baseline_file.empty()) {
    const std::string text = read_text_file(spec.baseline_file, "schedule");
    compile_schedule(text, spec.baseline_file, pipeline);  // a bad one fails here
    r.set_baseline_text(text);
  }
  r.set_target(spec.target);
  r.set_strategy(spec.strategy);
  r.set_budget(spec.budget);
  r.set_seed(spec.seed);
  r.set_exact(spec.exact);
  r.set_runs(spec.runs);
  r.set_population(spec.population);
  for (double t : spec.thresholds) r.add_thresholds(t);
  return r;
}

CoordinatorClient::CoordinatorClient(ClientOptions options) : options_(std::move(options)) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options_.max_message_bytes);
  args.SetMaxSendMessageSize(options_.max_message_bytes);
  stub_ = proto::Coordinator::NewStub(grpc::CreateCustomChannel(
      options_.address, rpc::channel_credentials(options_.security), args));
}

std::unique_ptr<grpc::ClientContext> CoordinatorClient::context(bool deadline) const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  rpc::authorize(*ctx, options_.security.token);
  if (deadline) {
    ctx->set_deadline(std::chrono::system_clock::now() +
                      std::chrono::milliseconds(int64_t(options_.call_timeout_s * 1000)));
  }
  return ctx;
}

int64_t CoordinatorClient::submit(const proto::SubmitRunRequest& request) {
  proto::SubmitRunResponse response;
  grpc::Status st = stub_->SubmitRun(context().get(), request, &response);
  if (!st.ok()) throw RpcError("submit", st);
  return response.run_id();
}

proto::RunProgress CoordinatorClient::watch(
    int64_t run_id, const std::function<void(const proto::RunProgress&)>& on_progress) {
  auto ctx = context(false);
  proto::WatchRunRequest request;
  request.set_run_id(run_id);
  std::unique_ptr<grpc::ClientReader<proto::RunProgress>> reader =
      stub_->WatchRun(ctx.get(), request);
  proto::RunProgress progress, last;
  bool any = false;
  while (reader->Read(&progress)) {
    any = true;
    last = progress;
    if (on_progress) on_progress(progress);
  }
  grpc::Status st = reader->Finish();
  if (!st.ok()) throw RpcError("watch run " + std::to_string(run_id), st);
  if (!any)
    throw RpcError("watch run " + std::to_string(run_id),
                   {grpc::StatusCode::INTERNAL, "the stream ended empty"});
  return last;
}

proto::RunProgress CoordinatorClient::watch_through_restarts(
    int64_t run_id, const std::function<void(const proto::RunProgress&)>& on_progress,
    std::chrono::milliseconds patience, const std::function<void(const std::string&)>& on_retry) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point heard = Clock::now();
  std::chrono::milliseconds delay(200);
  for (;;) {
    std::string why;
    std::optional<RpcError> failure;
    proto::RunProgress last;
    try {
      last = watch(run_id, [&](const proto::RunProgress& p) {
        heard = Clock::now();
        delay = std::chrono::milliseconds(200);
        if (on_progress) on_progress(p);
      });
      if (last.state() != "running") return last;
      why = "run " + std::to_string(run_id) + " is waiting to resume";
    } catch (const RpcError& e) {
      // Only a coordinator out of reach is waited for; a refusal (no such run, a bad
      // token) is final.
      if (e.code() != grpc::StatusCode::UNAVAILABLE) throw;
      why = e.what();
      failure = e;
    }
    if (Clock::now() - heard >= patience) {
      if (failure) throw *failure;
      return last;
    }
    if (on_retry) on_retry(why);
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, std::chrono::milliseconds(2000));
  }
}

proto::RunProgress CoordinatorClient::status(int64_t run_id) {
  auto ctx = context();
  proto::WatchRunRequest request;
  request.set_run_id(run_id);
  std::unique_ptr<grpc::ClientReader<proto::RunProgress>> reader =
      stub_->WatchRun(ctx.get(), request);
  proto::RunProgress progress;
  if (reader->Read(&progress)) {
    ctx->TryCancel();  // one update is all a status needs
    reader->Finish();
    return progress;
  }
  grpc::Status st = reader->Finish();
  throw RpcError("status of run " + std::to_string(run_id),
                 st.ok() ? grpc::Status(grpc::StatusCode::INTERNAL, "no update") : st);
}

std::vector<proto::RunSummary> CoordinatorClient::runs() {
  proto::ListRunsResponse response;
  grpc::Status st = stub_->ListRuns(context().get(), {}, &response);
  if (!st.ok()) throw RpcError("list runs", st);
  return {response.runs().begin(), response.runs().end()};
}

proto::GetFrontResponse CoordinatorClient::front(int64_t run_id) {
  proto::GetFrontRequest request;
  request.set_run_id(run_id);
  proto::GetFrontResponse response;
  grpc::Status st = stub_->GetFront(context().get(), request, &response);
  if (!st.ok()) throw RpcError("front of run " + std::to_string(run_id), st);
  return response;
}

std::string CoordinatorClient::cancel(int64_t run_id) {
  proto::CancelRunRequest request;
  request.set_run_id(run_id);
  proto::CancelRunResponse response;
  grpc::Status st = stub_->CancelRun(context().get(), request, &response);
  if (!st.ok()) throw RpcError("cancel run " + std::to_string(run_id), st);
  return response.state();
}

std::vector<proto::WorkerStatus> CoordinatorClient::workers() {
  const proto::ListWorkersResponse response = pool_status();
  return {response.workers().begin(), response.workers().end()};
}

proto::ListWorkersResponse CoordinatorClient::pool_status() {
  proto::ListWorkersResponse response;
  grpc::Status st = stub_->ListWorkers(context().get(), {}, &response);
  if (!st.ok()) throw RpcError("list workers", st);
  return response;
}

proto::EvaluateResponse CoordinatorClient::evaluate(const proto::EvaluateRequest& request,
                                                    double timeout_s) {
  auto ctx = context(false);
  ctx->set_deadline(std::chrono::system_clock::now() +
                    std::chrono::milliseconds(int64_t(timeout_s * 1000)));
  proto::EvaluateResponse response;
  grpc::Status st = stub_->Evaluate(ctx.get(), request, &response);
  if (!st.ok()) throw RpcError("evaluate", st);
  if (response.results_size() != request.jobs_size() ||
      response.hosts_size() != request.jobs_size()) {
    throw RpcError(
        "evaluate",
        grpc::Status(grpc::StatusCode::INTERNAL,
                     "the coordinator answered " + std::to_string(response.results_size()) +
                         " results for " + std::to_string(request.jobs_size()) + " jobs"));
  }
  return response;
}

}  // namespace stipple::client
