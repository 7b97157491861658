// The Evaluate call (search/coordinator/cluster_evaluations.h) over real gRPC on a
// loopback port, the test playing the workers' side with the generated stub: a code job
// kept for one host reaches only that host's worker, with its requests and the setup's
// measuring protocol, and its parts come back in order with the host; photos are sent
// once and then named by hash, a setup registered once; bad requests are refused before anything is
// queued, with the reason; a client that goes away leaves no job behind.
#include "search/coordinator/cluster_evaluations.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <thread>

#include "compiler_core/support/content_hash.h"
#include "proto/rpc_security.h"

namespace stipple::coordinator {
namespace {

using namespace std::chrono_literals;

const std::string kSource = STIPPLE_SOURCE_DIR;
const std::string kTarget = "x86_64-testcpu-00000001";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!done() && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(20ms);
  return done();
}

/// The client calls of a coordinator that only evaluates.
class EvaluateOnly final : public ClientCalls {
 public:
  explicit EvaluateOnly(ClusterEvaluations& e) : evaluations_(e) {}
  grpc::Status submit(const proto::SubmitRunRequest&, proto::SubmitRunResponse*) override {
    return no();
  }
  grpc::Status watch(int64_t, const grpc::ServerContextBase&, const WriteProgress&) override {
    return no();
  }
  grpc::Status list(proto::ListRunsResponse*) override { return no(); }
  grpc::Status front(int64_t, proto::GetFrontResponse*) override { return no(); }
  grpc::Status cancel(int64_t, proto::CancelRunResponse*) override { return no(); }
  grpc::Status evaluate(const proto::EvaluateRequest& request,
                        const grpc::ServerContextBase& context,
                        proto::EvaluateResponse* response) override {
    return evaluations_.evaluate(request, context, draining, response);
  }
  std::atomic<bool> draining{false};

 private:
  static grpc::Status no() { return {grpc::StatusCode::UNIMPLEMENTED, "not here"}; }
  ClusterEvaluations& evaluations_;
};

class ClusterEvaluationsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = ::testing::TempDir() + "cluster_evaluations_" + std::to_string(::getpid());
    std::filesystem::remove_all(data_);
    WorkerPoolOptions po;
    po.lease_duration = 20s;
    po.heartbeat_timeout = 15s;
    pool_ = std::make_unique<WorkerPool>(po);
    CoordinatorServiceOptions so;
    so.pool = po;
    so.max_lease_wait = 1s;
    service_ = std::make_unique<CoordinatorService>(*pool_, so);
    ClusterEvaluationsOptions eo;
    eo.data_dir = data_;
    eo.orphan_after = 1s;
    evaluations_ = std::make_unique<ClusterEvaluations>(*pool_, *service_, eo);
    calls_ = std::make_unique<EvaluateOnly>(*evaluations_);
    service_->set_client_calls(calls_.get());
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    configure_server(builder);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_TRUE(server_);
    stub_ = proto::Coordinator::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port_),
                                                            grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    pool_->shut_down();
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + 2s);
    std::filesystem::remove_all(data_);
  }

  std::unique_ptr<grpc::ClientContext> ctx(std::chrono::milliseconds deadline = 10s) {
    auto c = std::make_unique<grpc::ClientContext>();
    c->set_deadline(std::chrono::system_clock::now() + deadline);
    return c;
  }
  /// A worker of this build (it says its version) unless `version` is empty.
  std::string register_worker(const std::string& host, const std::string& version = "0.1") {
    proto::RegisterWorkerRequest req;
    req.mutable_capabilities()->set_host(host);
    req.mutable_capabilities()->set_arch("x86_64");
    req.mutable_capabilities()->set_target(kTarget);
    req.mutable_capabilities()->set_stipple_version(version);
    proto::RegisterWorkerResponse resp;
    EXPECT_TRUE(stub_->RegisterWorker(ctx().get(), req, &resp).ok());
    return resp.worker_id();
  }
  std::vector<proto::Job> lease(const std::string& worker, double wait_s = 1) {
    proto::LeaseJobsRequest req;
    req.set_worker_id(worker);
    req.set_max_jobs(8);
    req.set_wait_seconds(wait_s);
    proto::LeaseJobsResponse resp;
    EXPECT_TRUE(stub_->LeaseJobs(ctx().get(), req, &resp).ok());
    return {resp.jobs().begin(), resp.jobs().end()};
  }
  /// blur3x3 on one photo, a code job of the hand schedule beside stored code, for `host`.
  proto::EvaluateRequest request(const std::string& host, bool with_photo = true) {
    proto::EvaluateRequest r;
    r.set_pipeline_file("blur3x3.stp");
    r.set_pipeline_source(read_file(kSource + "/datasets/pipelines/blur3x3.stp"));
    const std::string photo = read_file(kSource + "/datasets/fixtures/natural-high-64x48.png");
    proto::ImageRef* ref = r.add_images();
    ref->set_name("natural.png");
    ref->set_split("train");
    ref->set_sha256(sha256_hex(photo));
    r.add_image_contents(with_photo ? photo : "");
    r.set_runs(3);
    r.set_min_timed_ms(50);
    r.set_output_digests(true);
    r.set_target(kTarget);
    r.set_host(host);
    r.set_split("train");
    proto::EvaluateJob* job = r.add_jobs();
    proto::CodeRequest* now = job->add_code();
    now->set_schedule_text(read_file(kSource + "/datasets/pipelines/blur3x3.sched"));
    now->set_keep_code(true);
    proto::CodeRequest* before = job->add_code();
    before->set_schedule_text(now->schedule_text());
    before->set_object("stored object code");
    before->set_symbol("blur3x3_v1");
    return r;
  }
  static proto::JobResult part(double min_ms, const std::string& digest) {
    proto::JobResult r;
    r.set_status("ok");
    proto::ImageMeasurement* m = r.add_images();
    m->set_time_ms(min_ms + 0.1);
    m->set_min_time_ms(min_ms);
    m->set_output_digest(digest);
    return r;
  }
  grpc::Status report(const std::string& worker, const proto::JobResult& result) {
    proto::ReportResultsRequest req;
    req.set_worker_id(worker);
    *req.add_results() = result;
    proto::ReportResultsResponse resp;
    return stub_->ReportResults(ctx().get(), req, &resp);
  }
  grpc::Status evaluate(const proto::EvaluateRequest& r, proto::EvaluateResponse* out) {
    return stub_->Evaluate(ctx().get(), r, out);
  }

  std::string data_;
  std::unique_ptr<WorkerPool> pool_;
  std::unique_ptr<CoordinatorService> service_;
  std::unique_ptr<ClusterEvaluations> evaluations_;
  std::unique_ptr<EvaluateOnly> calls_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<proto::Coordinator::Stub> stub_;
  int port_ = 0;
};

TEST_F(ClusterEvaluationsTest, ACodeJobKeptForAHostGoesToItsWorkerAndComesBackInParts) {
  const std::string alpha = register_worker("alpha");
  proto::EvaluateResponse none;
  grpc::Status st = evaluate(request("beta"), &none);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(st.error_message().find("on host beta"), std::string::npos) << st.error_message();
  EXPECT_EQ(pool_->snapshot().counters.queued, 0);

  const std::string beta = register_worker("beta");
  proto::EvaluateResponse response;
  auto call = std::async(std::launch::async, [&] { return evaluate(request("beta"), &response); });
  EXPECT_TRUE(lease(alpha).empty());  // alpha is of the target, but not the host asked
  std::vector<proto::Job> jobs = lease(beta, 5);
  ASSERT_EQ(jobs.size(), 1u);
  const proto::Job& job = jobs[0];
  ASSERT_EQ(job.code_size(), 2);
  EXPECT_TRUE(job.schedule_text().empty());
  EXPECT_TRUE(job.code(0).keep_code());
  EXPECT_EQ(job.code(1).object(), "stored object code");
  EXPECT_EQ(job.code(1).symbol(), "blur3x3_v1");
  proto::GetSetupRequest sreq;
  sreq.set_setup_id(job.setup_id());
  proto::EvaluationSetup setup;
  ASSERT_TRUE(stub_->GetSetup(ctx().get(), sreq, &setup).ok());
  EXPECT_EQ(setup.min_timed_ms(), 50);
  EXPECT_TRUE(setup.output_digests());
  EXPECT_EQ(setup.runs(), 3);

  // One part short is refused, and changes nothing.
  proto::JobResult result;
  result.set_job_id(job.job_id());
  result.set_status("ok");
  *result.add_code_results() = part(0.30, "d1");
  EXPECT_EQ(report(beta, result).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  *result.add_code_results() = part(0.40, "d2");
  result.mutable_code_results(0)->set_object("new object code");
  ASSERT_TRUE(report(beta, result).ok());

  ASSERT_TRUE(call.get().ok());
  ASSERT_EQ(response.results_size(), 1);
  ASSERT_EQ(response.results(0).code_results_size(), 2);
  EXPECT_EQ(response.results(0).code_results(0).images(0).min_time_ms(), 0.30);
  EXPECT_EQ(response.results(0).code_results(0).object(), "new object code");
  EXPECT_EQ(response.results(0).code_results(1).images(0).output_digest(), "d2");
  EXPECT_EQ(response.hosts(0), "beta");
  EXPECT_EQ(pool_->snapshot().counters.queued, 0);
}

TEST_F(ClusterEvaluationsTest, PhotosAreSentOnceAndNamedByHashAfter) {
  const std::string worker = register_worker("alpha");
  proto::EvaluateResponse out;
  // Never sent: refused, naming it.
  grpc::Status st = evaluate(request("", /*with_photo=*/false), &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(st.error_message().find("natural.png"), std::string::npos) << st.error_message();

  for (bool with_photo : {true, false}) {
    proto::EvaluateResponse response;
    auto call = std::async(std::launch::async,
                           [&] { return evaluate(request("", with_photo), &response); });
    std::vector<proto::Job> jobs = lease(worker, 5);
    ASSERT_EQ(jobs.size(), 1u);
    proto::JobResult result;
    result.set_job_id(jobs[0].job_id());
    result.set_status("ok");
    *result.add_code_results() = part(0.3, "d");
    *result.add_code_results() = part(0.3, "d");
    ASSERT_TRUE(report(worker, result).ok());
    ASSERT_TRUE(call.get().ok()) << "with the photo's bytes: " << with_photo;
    EXPECT_EQ(response.hosts(0), "alpha");
    // The setup is known by its content from now on: later calls neither read nor hash
    // its photos again (a night calls once a round). With the kept copy gone, a call of
    // the same setup is still measured.
    if (with_photo) std::filesystem::remove_all(data_ + "/images");
  }
}

TEST_F(ClusterEvaluationsTest, BadRequestsAreRefusedBeforeAnythingIsQueued) {
  register_worker("alpha");
  proto::EvaluateResponse out;
  proto::EvaluateRequest bad = request("");
  bad.mutable_jobs(0)->mutable_code(0)->set_schedule_text("blur_y.vectorize(q, 8)\n");
  grpc::Status st = evaluate(bad, &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("job 1.1.sched:1:"), std::string::npos) << st.error_message();

  bad = request("");
  bad.set_split("validation");
  EXPECT_EQ(evaluate(bad, &out).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  bad = request("");
  bad.set_min_timed_ms(-1);
  EXPECT_EQ(evaluate(bad, &out).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  bad = request("");
  bad.mutable_jobs(0)->mutable_code(1)->clear_symbol();
  EXPECT_EQ(evaluate(bad, &out).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  bad = request("");
  bad.set_image_contents(0, "not a photo");
  bad.mutable_images(0)->clear_sha256();
  EXPECT_EQ(evaluate(bad, &out).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  bad = request("");
  bad.set_target("");
  EXPECT_EQ(evaluate(bad, &out).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(pool_->snapshot().counters.queued, 0);
}

TEST_F(ClusterEvaluationsTest, CodeJobsNeedAWorkerThatKnowsThemAndOneThatStaysUp) {
  // A worker of an older build (no version) does not know code jobs: refused at once.
  const std::string old = register_worker("alpha", "");
  proto::EvaluateResponse out;
  grpc::Status st = evaluate(request("alpha"), &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(st.error_message().find("measures code jobs"), std::string::npos) << st.error_message();

  // The host's worker goes away while its job waits: answered within the orphan time,
  // not at the client's deadline, and the job is gone.
  const std::string beta = register_worker("beta");
  auto call = std::async(std::launch::async, [&] { return evaluate(request("beta"), &out); });
  ASSERT_TRUE(wait_for([&] { return pool_->snapshot().counters.queued == 1; }, 5s));
  pool_->worker_gone(beta);
  const auto start = std::chrono::steady_clock::now();
  st = call.get();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAVAILABLE) << st.error_message();
  EXPECT_NE(st.error_message().find("host beta"), std::string::npos) << st.error_message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ(pool_->snapshot().counters.queued, 0);

  // Names with control characters would alias a host's queue: refused.
  proto::RegisterWorkerRequest req;
  req.mutable_capabilities()->set_host("alpha");
  req.mutable_capabilities()->set_target(kTarget + "\nbeta");
  proto::RegisterWorkerResponse resp;
  EXPECT_EQ(stub_->RegisterWorker(ctx().get(), req, &resp).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ClusterEvaluationsTest, AClientThatGoesAwayLeavesNoJobBehind) {
  const std::string worker = register_worker("alpha");
  proto::EvaluateResponse out;
  grpc::Status st = stub_->Evaluate(ctx(300ms).get(), request(""), &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  // The call's jobs are cancelled within its poll: nothing is left to lease.
  EXPECT_TRUE(wait_for([&] { return pool_->snapshot().counters.queued == 0; }, 5s));
  EXPECT_TRUE(lease(worker, 0.3).empty());
}

}  // namespace
}  // namespace stipple::coordinator
