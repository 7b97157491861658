// The coordinator's worker-facing calls (search/coordinator_service.h) over real gRPC on
// a loopback ephemeral port, with the remote Evaluator (search/remote_evaluator.h) on the
// same worker pool. The "worker" here is the generated stub driven by the test: this is a
// protocol test of the service, so the test plays the worker's side of each call and
// checks what comes back (the schedule and pipeline decode, photo hashes match sha256sum,
// results reach evaluate() in order; duplicates, other targets, wrong tokens, malformed
// results and oversize messages change nothing).
#include "search/coordinator/coordinator_service.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <future>
#include <iterator>
#include <limits>
#include <thread>

#include "compiler_core/language/frontend.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/schedule/schedule_parser.h"
#include "proto/pipeline_codec.h"
#include "proto/rpc_security.h"
#include "proto/schedule_codec.h"
#include "search/coordinator/remote_evaluator.h"
#include "tests/search/coordinator/pool_waits.h"

namespace stipple::coordinator {
namespace {

using namespace std::chrono_literals;
using workers::EvaluationResult;

const std::string kSource = STIPPLE_SOURCE_DIR;
const std::string kToken = "test-token-1234";
const std::string kTarget = "x86_64-testcpu-00000001";
constexpr int kMaxMessageBytes = 1 << 20;  // small, so the oversize test is cheap

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The file's SHA-256 by coreutils, independent of the service's hashing.
std::string sha256sum(const std::string& path) {
  FILE* p = ::popen(("sha256sum '" + path + "'").c_str(), "r");
  if (!p) return "";
  char buf[65] = {};
  size_t n = std::fread(buf, 1, 64, p);
  ::pclose(p);
  return std::string(buf, n);
}

std::string fixture(const std::string& name) { return kSource + "/datasets/fixtures/" + name; }

// Declared after a test's pending evaluate(): shuts the pool down on every way out of the
// test, so that a failed assertion never leaves the future's destructor waiting forever.
struct ShutDownOnExit {
  coordinator::WorkerPool& pool;
  ~ShutDownOnExit() { pool.shut_down(); }
};

class CoordinatorServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    coordinator::WorkerPoolOptions po;
    po.lease_duration = 20s;
    po.heartbeat_timeout = 15s;
    pool_ = std::make_unique<coordinator::WorkerPool>(po);
    CoordinatorServiceOptions so;
    so.token = kToken;
    so.pool = po;
    so.max_lease_wait = 2s;
    service_ = std::make_unique<CoordinatorService>(*pool_, so);

    pipeline_file_ = kSource + "/datasets/pipelines/blur3x3.stp";
    setup_.pipeline_source = read_file(pipeline_file_);
    setup_.pipeline_file = pipeline_file_;
    setup_.images["train"] = {fixture("natural-high-64x48.png"), fixture("man-made-low-64x48.png")};
    setup_.images["test"] = {fixture("people-256x192.png")};
    setup_.runs = 3;
    setup_id_ = service_->add_setup(setup_);
    service_->bind_run("7", setup_id_);

    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    configure_server(builder, kMaxMessageBytes);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_TRUE(server_);
    ASSERT_GT(port_, 0);
    grpc::ChannelArguments args;
    args.SetMaxSendMessageSize(-1);  // let oversize requests reach the server
    stub_ = proto::Coordinator::NewStub(grpc::CreateCustomChannel(
        "127.0.0.1:" + std::to_string(port_), grpc::InsecureChannelCredentials(), args));
  }
  void TearDown() override {
    pool_->shut_down();  // wakes blocked lease/await calls
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + 2s);
  }

  // A call context with the token and a deadline (every call is bounded).
  std::unique_ptr<grpc::ClientContext> ctx(const std::string& token = kToken) {
    auto c = std::make_unique<grpc::ClientContext>();
    c->set_deadline(std::chrono::system_clock::now() + 10s);
    rpc::authorize(*c, token);
    return c;
  }

  std::string register_worker(const std::string& host, const std::string& target) {
    proto::RegisterWorkerRequest req;
    req.mutable_capabilities()->set_host(host);
    req.mutable_capabilities()->set_arch("x86_64");
    req.mutable_capabilities()->set_cores(2);
    req.mutable_capabilities()->add_isa_features("avx512f");
    req.mutable_capabilities()->set_target(target);
    proto::RegisterWorkerResponse resp;
    grpc::Status st = stub_->RegisterWorker(ctx().get(), req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    EXPECT_NEAR(resp.heartbeat_seconds(), 5.0, 1e-9);
    EXPECT_NEAR(resp.lease_seconds(), 20.0, 1e-9);
    return resp.worker_id();
  }

  // Leases until `n` jobs arrived (or 10 s passed).
  std::vector<proto::Job> lease(const std::string& worker, size_t n) {
    std::vector<proto::Job> jobs;
    const auto end = std::chrono::steady_clock::now() + 10s;
    while (jobs.size() < n && std::chrono::steady_clock::now() < end) {
      proto::LeaseJobsRequest req;
      req.set_worker_id(worker);
      req.set_max_jobs(int(n - jobs.size()));
      req.set_wait_seconds(1);
      proto::LeaseJobsResponse resp;
      grpc::Status st = stub_->LeaseJobs(ctx().get(), req, &resp);
      EXPECT_TRUE(st.ok()) << st.error_message();
      if (!st.ok()) break;
      for (const proto::Job& j : resp.jobs()) jobs.push_back(j);
    }
    return jobs;
  }

  static proto::JobResult ok_result(const std::string& job_id, int images, double base) {
    proto::JobResult r;
    r.set_job_id(job_id);
    r.set_status("ok");
    r.set_compile_ms(12.5);
    for (int i = 0; i < images; ++i) {
      proto::ImageMeasurement* m = r.add_images();
      m->set_time_ms(base + i);
      m->set_error(0.25 * i);
      m->set_psnr(i == 0 ? std::numeric_limits<double>::infinity() : 40.0);
    }
    return r;
  }

  grpc::Status report(const std::string& worker, const std::vector<proto::JobResult>& results,
                      proto::ReportResultsResponse* resp, const std::string& token = kToken) {
    proto::ReportResultsRequest req;
    req.set_worker_id(worker);
    for (const proto::JobResult& r : results) *req.add_results() = r;
    return stub_->ReportResults(ctx(token).get(), req, resp);
  }

  std::unique_ptr<coordinator::WorkerPool> pool_;
  std::unique_ptr<CoordinatorService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<proto::Coordinator::Stub> stub_;
  int port_ = 0;
  std::string pipeline_file_, setup_id_;
  workers::EvaluationSetup setup_;
};

// One batch of two candidates from evaluate() through lease, setup, image and report
// back to evaluate(), in order; then a duplicate report changes nothing.
TEST_F(CoordinatorServiceTest, RoundTripFromEvaluateToWorkerAndBack) {
  const std::string hand = read_file(kSource + "/datasets/pipelines/blur3x3.sched");
  const std::vector<std::string> schedules = {hand, ""};  // the hand and the default schedule
  RemoteEvaluator evaluator(*pool_, setup_id_, 7, kTarget);
  EXPECT_EQ(evaluator.target(), kTarget);
  auto pending =
      std::async(std::launch::async, [&] { return evaluator.evaluate(schedules, "train", 250.0); });
  ShutDownOnExit guard{*pool_};

  const std::string worker = register_worker("hostA", kTarget);
  std::vector<proto::Job> jobs = lease(worker, 2);
  ASSERT_EQ(jobs.size(), 2u);

  const Pipeline pipeline = compile_pipeline(setup_.pipeline_source, pipeline_file_);
  std::map<std::string, std::string> id_by_schedule;
  for (const proto::Job& j : jobs) {
    EXPECT_EQ(j.run_id(), 7);
    EXPECT_EQ(j.setup_id(), setup_id_);
    EXPECT_EQ(j.split(), "train");
    EXPECT_EQ(j.give_up_ms(), 250.0);
    EXPECT_EQ(j.lease_seconds(), 20.0);
    // The Schedule message is the schedule of the text, as written (a width in registers,
    // vectors(k), is the worker's to resolve), and the text is legal.
    EXPECT_EQ(from_proto(j.schedule()), parse_schedule(j.schedule_text(), "<text>"));
    EXPECT_NO_THROW(compile_schedule(j.schedule_text(), "<text>", pipeline));
    EXPECT_EQ(j.job_id(), RemoteEvaluator::job_id(7, setup_id_, "train", j.schedule_text()));
    id_by_schedule[j.schedule_text()] = j.job_id();
  }
  ASSERT_EQ(id_by_schedule.size(), 2u);
  ASSERT_TRUE(id_by_schedule.count(hand) && id_by_schedule.count(""));

  // The setup: the pipeline's IR, and each photo by the hash of its file's bytes.
  proto::GetSetupRequest sreq;
  sreq.set_setup_id(setup_id_);
  proto::EvaluationSetup s;
  ASSERT_TRUE(stub_->GetSetup(ctx().get(), sreq, &s).ok());
  EXPECT_EQ(s.setup_id(), setup_id_);
  EXPECT_EQ(serialize_pipeline(from_proto(s.pipeline())), serialize_pipeline(pipeline));
  EXPECT_EQ(s.pipeline_source(), setup_.pipeline_source);
  EXPECT_EQ(s.runs(), 3);
  ASSERT_EQ(s.images_size(), 3);
  std::vector<std::string> train_hashes;
  for (const proto::ImageRef& ref : s.images()) {
    const std::string path = fixture(ref.name());
    EXPECT_EQ(ref.sha256(), sha256sum(path)) << ref.name();
    if (ref.split() == "train") train_hashes.push_back(ref.sha256());
    if (ref.name() == "people-256x192.png") {
      EXPECT_EQ(ref.split(), "test");
      EXPECT_EQ(ref.width(), 256);
      EXPECT_EQ(ref.height(), 192);
    }
  }
  ASSERT_EQ(train_hashes.size(), 2u);
  EXPECT_EQ(train_hashes[0], sha256sum(fixture("natural-high-64x48.png")));  // split order

  // An image by its hash: the file's bytes.
  proto::GetImageRequest ireq;
  ireq.set_sha256(sha256sum(fixture("people-256x192.png")));
  proto::GetImageResponse image;
  ASSERT_TRUE(stub_->GetImage(ctx().get(), ireq, &image).ok());
  EXPECT_EQ(image.content(), read_file(fixture("people-256x192.png")));
  ireq.set_sha256(sha256sum(pipeline_file_));  // a file, but not a photo of a setup
  EXPECT_EQ(stub_->GetImage(ctx().get(), ireq, &image).error_code(), grpc::StatusCode::NOT_FOUND);

  // Results, reported in the opposite order of the schedules.
  proto::JobResult fail;
  fail.set_job_id(id_by_schedule[""]);
  fail.set_status("crash");
  fail.set_reason("killed by SIGSEGV");
  const proto::JobResult good = ok_result(id_by_schedule[hand], 2, 3.0);
  proto::ReportResultsResponse resp;
  ASSERT_TRUE(report(worker, {fail, good}, &resp).ok());
  EXPECT_EQ(resp.accepted(), 2);
  EXPECT_EQ(resp.duplicates(), 0);
  EXPECT_EQ(resp.unknown(), 0);

  ASSERT_EQ(pending.wait_for(10s), std::future_status::ready);
  std::vector<workers::EvaluationResult> results = pending.get();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].status, EvaluationStatus::Ok);
  ASSERT_EQ(results[0].images.size(), 2u);
  EXPECT_EQ(results[0].images[0].time_ms, 3.0);
  EXPECT_EQ(results[0].images[1].time_ms, 4.0);
  EXPECT_TRUE(std::isinf(results[0].images[0].psnr));
  EXPECT_EQ(results[0].compile_ms, 12.5);
  EXPECT_DOUBLE_EQ(results[0].time_ms, 3.5);
  EXPECT_DOUBLE_EQ(results[0].error, 0.125);
  EXPECT_EQ(results[1].status, EvaluationStatus::Crash);
  EXPECT_EQ(results[1].reason, "killed by SIGSEGV");
  EXPECT_TRUE(results[1].images.empty());
  EXPECT_EQ(evaluator.host(), "hostA");

  // A duplicate report changes nothing.
  const coordinator::PoolCounters before = pool_->snapshot().counters;
  proto::JobResult other = ok_result(id_by_schedule[hand], 2, 99.0);
  ASSERT_TRUE(report(worker, {other}, &resp).ok());
  EXPECT_EQ(resp.accepted(), 0);
  EXPECT_EQ(resp.duplicates(), 1);
  const coordinator::PoolCounters after = pool_->snapshot().counters;
  EXPECT_EQ(after.completed, before.completed);
  EXPECT_EQ(after.completed, 2);
  // The same batch again is answered from the pool, with the first results.
  std::vector<workers::EvaluationResult> again = evaluator.evaluate(schedules, "train", 250.0);
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].images[0].time_ms, 3.0);
  EXPECT_EQ(pool_->snapshot().counters.completed, 2);

  // Heartbeats: known, then unknown for an id never registered.
  proto::HeartbeatRequest hreq;
  hreq.set_worker_id(worker);
  proto::HeartbeatResponse hresp;
  ASSERT_TRUE(stub_->Heartbeat(ctx().get(), hreq, &hresp).ok());
  EXPECT_TRUE(hresp.known());
  hreq.set_worker_id("w999");
  ASSERT_TRUE(stub_->Heartbeat(ctx().get(), hreq, &hresp).ok());
  EXPECT_FALSE(hresp.known());
}

TEST_F(CoordinatorServiceTest, StableJobIdsAndSameSetupSameId) {
  EXPECT_EQ(RemoteEvaluator::job_id(7, setup_id_, "train", "out.parallel(y)\n"),
            RemoteEvaluator::job_id(7, setup_id_, "train", "out.parallel(y)\n"));
  EXPECT_NE(RemoteEvaluator::job_id(7, setup_id_, "train", "a"),
            RemoteEvaluator::job_id(7, setup_id_, "test", "a"));
  EXPECT_NE(RemoteEvaluator::job_id(7, setup_id_, "train", "a"),
            RemoteEvaluator::job_id(8, setup_id_, "train", "a"));
  // A restarted coordinator registers the same setup under the same id.
  coordinator::WorkerPool other_pool;
  CoordinatorService other(other_pool, {});
  EXPECT_EQ(other.add_setup(setup_), setup_id_);
  workers::EvaluationSetup changed = setup_;
  changed.runs = 4;
  EXPECT_NE(other.add_setup(changed), setup_id_);
  // The content key shared across runs: free of the run, but different when anything that
  // determines the result is (the photos, params, pipeline, runs and threads are in the
  // setup id).
  const std::string key = RemoteEvaluator::job_key(setup_id_, "t", "train", "a", 20);
  EXPECT_EQ(key, RemoteEvaluator::job_key(setup_id_, "t", "train", "a", 20));
  changed.params["radius"] = 2;
  for (const std::string& other_key :
       {RemoteEvaluator::job_key(other.add_setup(changed), "t", "train", "a", 20),
        RemoteEvaluator::job_key(setup_id_, "u", "train", "a", 20),
        RemoteEvaluator::job_key(setup_id_, "t", "test", "a", 20),
        RemoteEvaluator::job_key(setup_id_, "t", "train", "b", 20),
        RemoteEvaluator::job_key(setup_id_, "t", "train", "a", 20.000001)}) {
    EXPECT_NE(other_key, key);
  }
  other_pool.shut_down();
}

// A worker whose long poll gave up (its deadline passed) before a job came: the job the
// poll then takes cannot reach it, so it goes back to the queue at once, not when its lease
// runs out (20 s here).
//
// The server's deadline for the call runs from when the server received it, which may be
// later than the client sent it, so the job comes only once the server is in the poll
// (the pool says so) and its deadline has passed by the server's clock too. A job taken
// between the client's deadline and the server's is answered to a client that is gone and
// comes back when its lease runs out; that window is the call's transit time.
TEST_F(CoordinatorServiceTest, AJobLeasedToACancelledPollGoesBackAtOnce) {
  const std::string gone = register_worker("hostA", kTarget);
  proto::LeaseJobsRequest req;
  req.set_worker_id(gone);
  req.set_max_jobs(1);
  req.set_wait_seconds(2);  // the longest the service allows here (max_lease_wait)
  constexpr auto kDeadline = 300ms;
  auto short_poll = std::async(std::launch::async, [&] {
    grpc::ClientContext short_call;
    short_call.set_deadline(std::chrono::system_clock::now() + kDeadline);
    rpc::authorize(short_call, kToken);
    proto::LeaseJobsResponse resp;
    return stub_->LeaseJobs(&short_call, req, &resp).error_code();
  });
  ASSERT_NO_FATAL_FAILURE(coordinator::wait_until_polling(*pool_, gone));
  const auto in_poll = std::chrono::steady_clock::now();
  ASSERT_EQ(short_poll.get(), grpc::StatusCode::DEADLINE_EXCEEDED);
  std::this_thread::sleep_until(in_poll + kDeadline + 100ms);
  // The server is still blocked in that poll (2 s); the job comes while it waits.
  RemoteEvaluator evaluator(*pool_, setup_id_, 7, kTarget);
  auto pending =
      std::async(std::launch::async, [&] { return evaluator.evaluate({""}, "test", 0); });
  ShutDownOnExit guard{*pool_};
  for (int i = 0; i < 500 && pool_->snapshot().counters.redispatched == 0; ++i)
    std::this_thread::sleep_for(5ms);
  EXPECT_EQ(pool_->snapshot().counters.redispatched, 1);
  const std::string other = register_worker("hostB", kTarget);
  std::vector<proto::Job> jobs = lease(other, 1);
  ASSERT_EQ(jobs.size(), 1u);
  proto::ReportResultsResponse rr;
  ASSERT_TRUE(report(other, {ok_result(jobs[0].job_id(), 1, 3.0)}, &rr).ok());
  EXPECT_EQ(rr.accepted(), 1);
  ASSERT_EQ(pending.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(pending.get().at(0).images.at(0).time_ms, 3.0);
}

// A heartbeat with hold_seconds is held open (up to the heartbeat interval) and answered
// then; one cancelled before its deadline (the transport's doing when the worker dies) is
// the worker gone: its leases end at once, not at the heartbeat timeout (30 s here).
TEST_F(CoordinatorServiceTest, AHeldHeartbeatCancelledEndsTheWorkersLeasesAtOnce) {
  const std::string worker = register_worker("hostA", kTarget);
  proto::HeartbeatRequest req;
  req.set_worker_id(worker);
  req.set_hold_seconds(0.3);
  proto::HeartbeatResponse resp;
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(stub_->Heartbeat(ctx().get(), req, &resp).ok());
  EXPECT_TRUE(resp.known());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 250ms);

  RemoteEvaluator evaluator(*pool_, setup_id_, 7, kTarget);
  auto pending =
      std::async(std::launch::async, [&] { return evaluator.evaluate({""}, "test", 0); });
  ShutDownOnExit guard{*pool_};
  ASSERT_EQ(lease(worker, 1).size(), 1u);
  req.set_hold_seconds(60);  // capped at the interval, 10 s
  std::unique_ptr<grpc::ClientContext> held = ctx();
  auto cancel = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(200ms);
    held->TryCancel();
  });
  start = std::chrono::steady_clock::now();
  EXPECT_EQ(stub_->Heartbeat(held.get(), req, &resp).error_code(), grpc::StatusCode::CANCELLED);
  cancel.get();
  for (int i = 0; i < 200 && pool_->snapshot().counters.queued == 0; ++i)
    std::this_thread::sleep_for(5ms);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  EXPECT_EQ(pool_->snapshot().counters.redispatched, 1);
  EXPECT_TRUE(coordinator::info(pool_->snapshot(), worker).lost);
  const std::string other = register_worker("hostB", kTarget);
  std::vector<proto::Job> jobs = lease(other, 1);
  ASSERT_EQ(jobs.size(), 1u);
  proto::ReportResultsResponse rr;
  ASSERT_TRUE(report(other, {ok_result(jobs[0].job_id(), 1, 3.0)}, &rr).ok());
  ASSERT_EQ(pending.wait_for(10s), std::future_status::ready);
}

// Long polls run on threads of the service's: while many wait, every other call is
// answered at once (blocked on gRPC's callback threads, they would starve them), and each
// poll still ends after its wait with no job.
TEST_F(CoordinatorServiceTest, ManyLongPollsDoNotHoldUpOtherCalls) {
  constexpr int kPolls = 24;
  std::vector<std::string> workers;
  for (int i = 0; i < kPolls; ++i)
    workers.push_back(register_worker("host" + std::to_string(i), kTarget));
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::future<grpc::Status>> polls;
  for (const std::string& w : workers) {
    polls.push_back(std::async(std::launch::async, [&, w] {
      proto::LeaseJobsRequest req;
      req.set_worker_id(w);
      req.set_max_jobs(1);
      req.set_wait_seconds(2);
      proto::LeaseJobsResponse resp;
      grpc::Status st = stub_->LeaseJobs(ctx().get(), req, &resp);
      if (st.ok() && resp.jobs_size() != 0) return grpc::Status(grpc::StatusCode::UNKNOWN, "a job");
      return st;
    }));
  }
  std::this_thread::sleep_for(300ms);  // the polls are in
  for (int i = 0; i < 5; ++i) {
    const auto asked = std::chrono::steady_clock::now();
    proto::ListWorkersResponse list;
    ASSERT_TRUE(stub_->ListWorkers(ctx().get(), proto::ListWorkersRequest(), &list).ok());
    EXPECT_EQ(list.workers_size(), kPolls);
    proto::HeartbeatRequest hb;
    hb.set_worker_id(workers[i]);
    proto::HeartbeatResponse known;
    ASSERT_TRUE(stub_->Heartbeat(ctx().get(), hb, &known).ok());
    EXPECT_TRUE(known.known());
    EXPECT_LT(std::chrono::steady_clock::now() - asked, 500ms);
  }
  for (std::future<grpc::Status>& p : polls) {
    ASSERT_EQ(p.wait_for(10s), std::future_status::ready);
    const grpc::Status st = p.get();
    EXPECT_TRUE(st.ok()) << st.error_message();
  }
  EXPECT_GE(std::chrono::steady_clock::now() - start, 1900ms);  // each waited its 2 s
}

TEST_F(CoordinatorServiceTest, WorkerOfAnotherTargetGetsNoJob) {
  RemoteEvaluator evaluator(*pool_, setup_id_, 7, kTarget);
  auto pending =
      std::async(std::launch::async, [&] { return evaluator.evaluate({""}, "test", 0); });
  ShutDownOnExit guard{*pool_};
  const std::string arm = register_worker("armhost", "aarch64-neoverse-v1-12345678");
  // Wait until the job is queued, then a long poll of the other target comes back empty.
  for (int i = 0; i < 500 && pool_->snapshot().counters.queued == 0; ++i)
    std::this_thread::sleep_for(2ms);
  ASSERT_EQ(pool_->snapshot().counters.queued, 1);
  proto::LeaseJobsRequest req;
  req.set_worker_id(arm);
  req.set_max_jobs(4);
  req.set_wait_seconds(0.3);
  proto::LeaseJobsResponse resp;
  ASSERT_TRUE(stub_->LeaseJobs(ctx().get(), req, &resp).ok());
  EXPECT_EQ(resp.jobs_size(), 0);
  EXPECT_EQ(pool_->snapshot().counters.leased, 0);

  // The right target gets it; its result (one test photo) completes the evaluation.
  const std::string x86 = register_worker("hostB", kTarget);
  std::vector<proto::Job> jobs = lease(x86, 1);
  ASSERT_EQ(jobs.size(), 1u);
  proto::ReportResultsResponse rr;
  ASSERT_TRUE(report(x86, {ok_result(jobs[0].job_id(), 1, 8.0)}, &rr).ok());
  EXPECT_EQ(rr.accepted(), 1);
  // The other target's worker reporting the same job: never leased it, changes nothing.
  ASSERT_TRUE(report(arm, {ok_result(jobs[0].job_id(), 1, 1.0)}, &rr).ok());
  EXPECT_EQ(rr.accepted(), 0);
  EXPECT_EQ(rr.unknown() + rr.duplicates(), 1);
  ASSERT_EQ(pending.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(pending.get().at(0).images.at(0).time_ms, 8.0);
}

TEST_F(CoordinatorServiceTest, WrongTokenIsUnauthenticatedAndChangesNothing) {
  RemoteEvaluator evaluator(*pool_, setup_id_, 7, kTarget);
  const std::string worker = register_worker("hostA", kTarget);
  std::atomic<bool> stop{false};
  evaluator.set_stop_flag(&stop);
  auto pending =
      std::async(std::launch::async, [&] { return evaluator.evaluate({""}, "test", 0); });
  ShutDownOnExit guard{*pool_};
  std::vector<proto::Job> jobs = lease(worker, 1);
  ASSERT_EQ(jobs.size(), 1u);
  const coordinator::PoolSnapshot before = pool_->snapshot();

  for (const std::string& token : {std::string("wrong-token"), std::string()}) {
    proto::RegisterWorkerRequest reg;
    reg.mutable_capabilities()->set_host("intruder");
    reg.mutable_capabilities()->set_target(kTarget);
    proto::RegisterWorkerResponse reg_resp;
    EXPECT_EQ(stub_->RegisterWorker(ctx(token).get(), reg, &reg_resp).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
    proto::ReportResultsResponse rr;
    EXPECT_EQ(report(worker, {ok_result(jobs[0].job_id(), 1, 1.0)}, &rr, token).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
    proto::LeaseJobsRequest lreq;
    lreq.set_worker_id(worker);
    proto::LeaseJobsResponse lresp;
    EXPECT_EQ(stub_->LeaseJobs(ctx(token).get(), lreq, &lresp).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
    proto::GetSetupRequest sreq;
    sreq.set_setup_id(setup_id_);
    proto::EvaluationSetup s;
    EXPECT_EQ(stub_->GetSetup(ctx(token).get(), sreq, &s).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
    proto::GetImageRequest ireq;
    ireq.set_sha256(sha256sum(fixture("people-256x192.png")));
    proto::GetImageResponse iresp;
    EXPECT_EQ(stub_->GetImage(ctx(token).get(), ireq, &iresp).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_TRUE(iresp.content().empty());
    proto::SubmitRunRequest sub;
    proto::SubmitRunResponse sub_resp;
    EXPECT_EQ(stub_->SubmitRun(ctx(token).get(), sub, &sub_resp).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  const coordinator::PoolSnapshot after = pool_->snapshot();
  EXPECT_EQ(after.workers.size(), before.workers.size());
  EXPECT_EQ(after.counters.completed, before.counters.completed);
  EXPECT_EQ(after.counters.leased, before.counters.leased);
  EXPECT_EQ(after.counters.queued, before.counters.queued);
  EXPECT_EQ(pending.wait_for(0s), std::future_status::timeout);

  // With the token, and no runs behind the service, a client call answers UNIMPLEMENTED.
  proto::SubmitRunRequest sub;
  proto::SubmitRunResponse sub_resp;
  EXPECT_EQ(stub_->SubmitRun(ctx().get(), sub, &sub_resp).error_code(),
            grpc::StatusCode::UNIMPLEMENTED);

  // Stopping the run: evaluate() throws EvaluationStopped rather than return results.
  stop = true;
  ASSERT_EQ(pending.wait_for(10s), std::future_status::ready);
  EXPECT_THROW(pending.get(), EvaluationStopped);
}

TEST_F(CoordinatorServiceTest, MalformedResultsAreInvalidArgumentAndChangeNothing) {
  RemoteEvaluator evaluator(*pool_, setup_id_, 7, kTarget);
  auto pending =
      std::async(std::launch::async, [&] { return evaluator.evaluate({""}, "train", 0); });
  ShutDownOnExit guard{*pool_};
  const std::string worker = register_worker("hostA", kTarget);
  std::vector<proto::Job> jobs = lease(worker, 1);
  ASSERT_EQ(jobs.size(), 1u);
  const std::string id = jobs[0].job_id();
  const coordinator::PoolCounters before = pool_->snapshot().counters;

  std::vector<std::pair<std::string, proto::JobResult>> bad;
  bad.emplace_back("one image for two photos", ok_result(id, 1, 1.0));
  bad.emplace_back("three images for two photos", ok_result(id, 3, 1.0));
  proto::JobResult nan_time = ok_result(id, 2, 1.0);
  nan_time.mutable_images(1)->set_time_ms(std::nan(""));
  bad.emplace_back("NaN time", nan_time);
  proto::JobResult inf_time = ok_result(id, 2, 1.0);
  inf_time.mutable_images(0)->set_time_ms(std::numeric_limits<double>::infinity());
  bad.emplace_back("infinite time", inf_time);
  proto::JobResult nan_error = ok_result(id, 2, 1.0);
  nan_error.mutable_images(0)->set_error(std::nan(""));
  bad.emplace_back("NaN error", nan_error);
  proto::JobResult status = ok_result(id, 2, 1.0);
  status.set_status("fine");
  bad.emplace_back("unknown status", status);
  proto::JobResult no_id = ok_result("", 2, 1.0);
  bad.emplace_back("no job id", no_id);
  for (const auto& [what, result] : bad) {
    proto::ReportResultsResponse rr;
    grpc::Status st = report(worker, {result}, &rr);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << what;
    EXPECT_FALSE(st.error_message().empty()) << what;
  }
  // One bad result in a call with a good one: the good one is not stored either.
  proto::ReportResultsResponse rr;
  EXPECT_EQ(report(worker, {ok_result(id, 2, 1.0), status}, &rr).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  const coordinator::PoolCounters after = pool_->snapshot().counters;
  EXPECT_EQ(after.completed, before.completed);
  EXPECT_EQ(after.duplicates, before.duplicates);
  EXPECT_EQ(pending.wait_for(0s), std::future_status::timeout);

  // The well-formed result still goes through.
  ASSERT_TRUE(report(worker, {ok_result(id, 2, 5.0)}, &rr).ok());
  EXPECT_EQ(rr.accepted(), 1);
  ASSERT_EQ(pending.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(pending.get().at(0).images.at(0).time_ms, 5.0);
}

TEST_F(CoordinatorServiceTest, OversizeMessageIsRejectedAndServerStaysUp) {
  proto::RegisterWorkerRequest req;
  req.mutable_capabilities()->set_host(std::string(2 * kMaxMessageBytes, 'h'));
  req.mutable_capabilities()->set_target(kTarget);
  proto::RegisterWorkerResponse resp;
  grpc::Status st = stub_->RegisterWorker(ctx().get(), req, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << st.error_message();
  EXPECT_TRUE(pool_->snapshot().workers.empty());
  // The server is still up, on the same channel.
  EXPECT_FALSE(register_worker("hostA", kTarget).empty());
  EXPECT_EQ(pool_->snapshot().workers.size(), 1u);
}

// A schedule that does not fit the run's pipeline, and a run bound to no setup, cannot be
// sent to a worker: each becomes a failed result of its candidate, never a lost job.
TEST_F(CoordinatorServiceTest, UnsendableJobsBecomeFailedResults) {
  RemoteEvaluator evaluator(*pool_, setup_id_, 7, kTarget);
  // (Of a setup of its own: jobs of one setup's runs share their results, WorkerPool.)
  RemoteEvaluator unbound(*pool_, "s-unbound", 9, kTarget);
  auto pending = std::async(std::launch::async, [&] {
    return evaluator.evaluate({"nosuchfunc.parallel(y)\n", ""}, "test", 0);
  });
  auto orphan = std::async(std::launch::async, [&] { return unbound.evaluate({""}, "test", 0); });
  ShutDownOnExit guard{*pool_};
  const std::string worker = register_worker("hostA", kTarget);
  // All three jobs queued, then one lease of all: one is sent, two become failures.
  for (int i = 0; i < 500 && pool_->snapshot().counters.queued < 3; ++i)
    std::this_thread::sleep_for(2ms);
  ASSERT_EQ(pool_->snapshot().counters.queued, 3);
  proto::LeaseJobsRequest req;
  req.set_worker_id(worker);
  req.set_max_jobs(3);
  req.set_wait_seconds(1);
  proto::LeaseJobsResponse resp;
  ASSERT_TRUE(stub_->LeaseJobs(ctx().get(), req, &resp).ok());
  std::vector<proto::Job> jobs(resp.jobs().begin(), resp.jobs().end());
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].schedule_text(), "");
  EXPECT_EQ(jobs[0].run_id(), 7);
  proto::ReportResultsResponse rr;
  ASSERT_TRUE(report(worker, {ok_result(jobs[0].job_id(), 1, 2.0)}, &rr).ok());
  ASSERT_EQ(pending.wait_for(10s), std::future_status::ready);
  std::vector<workers::EvaluationResult> results = pending.get();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].status, EvaluationStatus::Error);
  EXPECT_NE(results[0].reason.find("nosuchfunc"), std::string::npos) << results[0].reason;
  EXPECT_EQ(results[1].status, EvaluationStatus::Ok);
  ASSERT_EQ(orphan.wait_for(10s), std::future_status::ready);
  std::vector<workers::EvaluationResult> lost = orphan.get();
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].status, EvaluationStatus::Error);
  EXPECT_NE(lost[0].reason.find("no evaluation setup"), std::string::npos) << lost[0].reason;
}

TEST_F(CoordinatorServiceTest, UnknownWorkerAndSetupAreNotFound) {
  proto::LeaseJobsRequest req;
  req.set_worker_id("w42");
  req.set_max_jobs(1);
  proto::LeaseJobsResponse resp;
  EXPECT_EQ(stub_->LeaseJobs(ctx().get(), req, &resp).error_code(), grpc::StatusCode::NOT_FOUND);
  proto::GetSetupRequest sreq;
  sreq.set_setup_id("s000");
  proto::EvaluationSetup s;
  EXPECT_EQ(stub_->GetSetup(ctx().get(), sreq, &s).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THROW(service_->bind_run("8", "s000"), UserError);
}

}  // namespace
}  // namespace stipple::coordinator
