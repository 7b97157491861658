// The tuning cluster end to end (issue #6): a real `stipple coordinator` process and real
// `stipple worker` processes on loopback, driven by the `stipple` command line and the
// client library, with the coordinator's SQLite file read back to check what was stored.
// Every test bounds its waits and kills its processes' groups when it ends.
#include <grpcpp/generic/generic_stub.h>

#include <condition_variable>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "cluster_fixture.h"
#include "compiler_core/support/content_hash.h"

namespace stipple::testing_cli {
namespace {

using namespace std::chrono_literals;

// Timings differ between any two runs, so a cluster run and a `tune` run never measure the
// same numbers. The comparison is therefore made where it is exact: `stipple tune` with the
// same seed, budget and photos over the cluster's database proposes the same schedules
// (the strategies are deterministic given what they observe), finds every one of them
// stored, measures nothing, and stores the same front. A cluster search that proposed
// anything `tune` would not have would make `tune` measure it.
TEST_F(ClusterTest, ThreeWorkersFindTheFrontTuneFinds) {
  const std::string address = start_coordinator();
  for (int i = 0; i < 3; ++i) start_worker(address);
  auto c = client(address);
  ASSERT_TRUE(wait_until([&] { return c.workers().size() == 3; }, 20s));
  const int64_t run = submit(address, 24, "--seed 7 --wait");
  ASSERT_GT(run, 0);
  ASSERT_EQ(c.status(run).state(), "done");
  const std::vector<std::string> cluster_front = front_schedules(c, run);
  ASSERT_GE(cluster_front.size(), 1u);
  // The jobs were spread over the workers.
  int workers_with_jobs = 0;
  for (const proto::WorkerStatus& w : c.workers()) workers_with_jobs += w.jobs_completed() > 0;
  EXPECT_GE(workers_with_jobs, 2);
  kill_process(coordinator_, SIGTERM);

  Result tune = stipple("tune " + kPipeline + " --db " + db_path() + " --images " + kTrain +
                        " --test-images " + kTest + " --budget 24 --seed 7 2>&1");
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  EXPECT_NE(tune.output.find("24/24 evaluations (0 measured"), std::string::npos) << tune.output;
  auto db = storage::Database::open(db_path());
  std::vector<storage::RunRecord> runs = db->list_runs();
  ASSERT_EQ(runs.size(), 2u);
  const int64_t tune_run = runs.front().id;  // newest first
  ASSERT_NE(tune_run, run);
  std::vector<std::string> tune_front;
  for (const storage::FrontPoint& p : db->front(tune_run))
    tune_front.push_back(db->evaluation(p.evaluation_id)->key.schedule);
  std::vector<std::string> cluster_stored;
  for (const storage::FrontPoint& p : db->front(run))
    cluster_stored.push_back(db->evaluation(p.evaluation_id)->key.schedule);
  EXPECT_EQ(tune_front, cluster_stored);
  // And as users see them: `stipple front` of the tune run (the baseline included) lists
  // the schedules the coordinator's GetFront gave, in the same order.
  Result shown =
      stipple("front " + std::to_string(tune_run) + " --db " + db_path() + " --format json");
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  std::vector<std::string> tune_shown;
  const nlohmann::json listing = nlohmann::json::parse(shown.output);
  for (const auto& v : listing.at("variants")) tune_shown.push_back(v.at("schedule"));
  EXPECT_EQ(tune_shown, cluster_front);
}

// A dataset the coordinator keeps (--datasets DIR, NAME/train and NAME/test): a submit
// names it instead of sending photos and the run tunes on its photos, stored by hash like
// sent ones. An unknown name is NOT_FOUND with the names there are, a name that is a path
// is refused, photos and a dataset together are refused, and a coordinator without
// --datasets says to send the photos.
TEST_F(ClusterTest, ASubmitNamingADatasetTunesOnTheCoordinatorsPhotos) {
  namespace fs = std::filesystem;
  fs::create_directories(path("datasets/small/train"));
  fs::create_directories(path("datasets/small/test"));
  fs::create_directories(path("datasets/empty"));
  fs::copy_file(kTrain, path("datasets/small/train/people.png"));
  fs::copy_file(kTest, path("datasets/small/test/natural.png"));
  const std::string address = start_coordinator({"--datasets", path("datasets")});
  start_worker(address);
  auto c = client(address);
  ASSERT_TRUE(wait_until([&] { return c.workers().size() == 1; }, 20s));
  const std::string submit = "submit " + kPipeline + " --coordinator " + address + " --budget 6";
  Result r = stipple(submit + " --dataset small --wait");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const int64_t run = std::stoll(r.output.substr(r.output.find("run ") + 4));
  EXPECT_EQ(train_evaluations(run).size(), 6u);
  // Its photos as the coordinator stored them: by the hash of their bytes.
  const std::string stored = db_path() + ".files/images/";
  EXPECT_TRUE(fs::exists(stored + sha256_hex(read_file(kTrain)) + ".png"));
  EXPECT_TRUE(fs::exists(stored + sha256_hex(read_file(kTest)) + ".png"));

  r = stipple(submit + " --dataset nope");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no dataset 'nope' on this coordinator (it has: small)"),
            std::string::npos)
      << r.output;
  r = stipple(submit + " --dataset ../datasets/small");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("is not a dataset name"), std::string::npos) << r.output;
  r = stipple(submit + " --dataset small --images " + kTrain);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(c.runs().size(), 1u);  // the refused ones left no run

  kill_process(coordinator_, SIGTERM);
  const std::string plain = start_coordinator();
  r = stipple("submit " + kPipeline + " --coordinator " + plain + " --dataset small");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("keeps no datasets"), std::string::npos) << r.output;
}

// A benchmark lock file no evaluator could open is the host's problem, said at start (exit
// 2), not a failure of every candidate.
TEST_F(ClusterTest, AWorkerWhoseBenchmarkLockCannotBeOpenedExitsTwo) {
  const Result r = stipple("worker --coordinator 127.0.0.1:1 --cache " + path("cache") +
                           " --benchmark-lock " + path("no/such/folder/lock"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("cannot open the benchmark lock"), std::string::npos) << r.output;
}

// An evaluator that cannot run is said at start (exit 2), not found by every job leased,
// each abandoned and handed back round again.
TEST_F(ClusterTest, AWorkerWhoseEvaluatorCannotRunExitsTwo) {
  const std::string not_executable = write("evaluator.txt", "not a program\n");
  Result r = stipple("worker --coordinator 127.0.0.1:1 --benchmark-lock none --cache " +
                     path("cache") + " --evaluator " + not_executable);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("the evaluator " + not_executable +
                          " (--evaluator) cannot be started: Permission denied"),
            std::string::npos)
      << r.output;
  r = stipple("worker --coordinator 127.0.0.1:1 --benchmark-lock none --cache " + path("cache") +
              " --evaluator /bin/false");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("does not run: for --help it exited with status 1"), std::string::npos)
      << r.output;
}

// A worker told it is emulated (`--emulated`, for an emulator that cannot be told from the
// inside: tests/client/arm_worker_test.cpp has qemu-user tell itself) registers, and its
// evaluator measures, under a target of its own, which `stipple workers` and `stipple
// front` name as emulated: its timings never join a real host's.
TEST_F(ClusterTest, AnEmulatedWorkersTimingsAreKeptApart) {
  const std::string address = start_coordinator();
  client::CoordinatorClient c = client(address);
  Process worker = start_worker(address, {"--emulated", "--benchmark-lock", "none"});
  ASSERT_TRUE(wait_until([&] { return c.workers().size() == 1; }, 20s)) << read_file(worker.err);
  const proto::Capabilities caps = c.workers()[0].capabilities();
  EXPECT_TRUE(caps.emulated());
  ASSERT_GT(caps.target().size(), 9u);
  EXPECT_EQ(caps.target().substr(caps.target().size() - 9), "-emulated") << caps.target();
  const Result listed = stipple("workers --coordinator " + address);
  EXPECT_NE(listed.output.find("emulated: "), std::string::npos) << listed.output;

  const int64_t run = submit(address, 2);
  ASSERT_EQ(wait_for_run(c, run), "done") << read_file(worker.err);
  // The evaluator (a child, told by the environment) measured under the worker's target.
  EXPECT_EQ(read_file(worker.err).find("the evaluator measures for target"), std::string::npos)
      << read_file(worker.err);
  auto db = storage::Database::open(db_path());
  int evaluations = 0;
  for (const storage::RunEvaluation& e : db->run_evaluations(run)) {
    EXPECT_EQ(e.evaluation.key.target, caps.target());
    ++evaluations;
  }
  EXPECT_GE(evaluations, 2);
  const Result front = stipple("front " + std::to_string(run) + " --db " + db_path());
  EXPECT_NE(front.output.find("emulated: measured on an emulated CPU"), std::string::npos)
      << front.output;
}

TEST_F(ClusterTest, KilledCoordinatorRestartsAndTheRunResumes) {
  const std::string address = start_coordinator();
  const int port = std::stoi(address.substr(address.rfind(':') + 1));
  start_worker(address);
  auto c = client(address);
  ASSERT_TRUE(wait_until([&] { return c.workers().size() == 1; }, 20s));
  const int64_t run = submit(address, 30);
  ASSERT_GT(run, 0);
  ASSERT_TRUE(wait_until([&] { return c.status(run).evaluations() >= 8; }, 60s));
  kill_process(coordinator_, SIGKILL);
  const std::map<int64_t, std::string> committed = train_evaluations(run);
  ASSERT_GE(committed.size(), 8u);
  ASSERT_LT(committed.size(), 30u);

  start_coordinator({}, port);  // the worker reconnects to the same address
  EXPECT_EQ(wait_for_run(c, run), "done") << read_file(coordinator_.err);
  EXPECT_NE(read_file(coordinator_.err).find("run " + std::to_string(run) + ": resumed"),
            std::string::npos);
  const std::map<int64_t, std::string> after = train_evaluations(run);
  EXPECT_EQ(after.size(), 30u);
  for (const auto& [id, created] : committed) {
    ASSERT_TRUE(after.count(id)) << id;
    EXPECT_EQ(after.at(id), created) << "evaluation " << id << " was measured again";
  }
}

TEST_F(ClusterTest, KilledWorkersJobsAreRunElsewhere) {
  const std::string address = start_coordinator({"--lease", "4", "--heartbeat-timeout", "2"});
  auto c = client(address);
  Process doomed = start_two_workers(address, c);
  ASSERT_EQ(c.workers().size(), 2u);
  const int64_t run = submit(address, 24);
  ASSERT_TRUE(freeze_while_busy(c, 0, doomed));
  kill_process(doomed, SIGKILL);  // with a job leased that it never reports
  EXPECT_EQ(wait_for_run(c, run), "done") << read_file(coordinator_.err);
  // Nothing is lost: the budget is spent, every evaluation measured and ok.
  int failed = -1;
  EXPECT_EQ(train_evaluations(run, &failed).size(), 24u);
  EXPECT_EQ(failed, 0);
  // The lease of the killed worker ended and its job went to the other worker.
  const std::vector<proto::WorkerStatus> w = c.workers();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_TRUE(w[0].lost());
  EXPECT_GT(w[1].jobs_completed(), 0);
  EXPECT_GE(c.pool_status().jobs_redispatched(), 1);
  EXPECT_NE(read_file(coordinator_.err).find("went back to the queue"), std::string::npos);
}

// Runs of the same pipeline, photos and settings submitted together propose the same
// schedules (the same seed): each evaluation is measured once, by one run's job, and the
// other runs share its result (issue #25). SQLite says which links were measured.
TEST_F(ClusterTest, ConcurrentRunsOfOneSetupMeasureEachEvaluationOnce) {
  const std::string address = start_coordinator();
  for (int i = 0; i < 2; ++i) start_worker(address);
  auto c = client(address);
  ASSERT_TRUE(wait_until([&] { return c.workers().size() == 2; }, 20s));
  std::vector<int64_t> runs;
  for (int i = 0; i < 4; ++i) runs.push_back(submit(address, 12, "--seed 5"));
  for (int64_t run : runs) {
    ASSERT_GT(run, 0);
    EXPECT_EQ(wait_for_run(c, run, 180s), "done") << read_file(coordinator_.err);
  }
  for (int64_t run : runs) EXPECT_EQ(train_evaluations(run).size(), 12u) << "run " << run;

  auto db = storage::Database::open(db_path());
  std::map<int64_t, int> measured;  // evaluation id -> links that measured it
  int links = 0, shared = 0;
  for (int64_t run : runs) {
    for (const storage::RunEvaluation& e : db->run_evaluations(run)) {
      ++links;
      EXPECT_TRUE(e.origin == "measured" || e.origin == "shared" || e.origin == "stored")
          << e.origin;
      measured[e.evaluation.id] += e.origin == "measured";
      shared += e.origin == "shared";
    }
  }
  int measurements = 0;
  for (const auto& [id, n] : measured) {
    EXPECT_EQ(n, 1) << "evaluation " << id << " measured " << n << " times";
    measurements += n;
  }
  EXPECT_GT(shared, 0);
  EXPECT_LT(measurements, links);
  // The workers measured exactly that many jobs; the pool shared the rest.
  const proto::ListWorkersResponse pool = c.pool_status();
  int64_t completed = 0;
  for (const proto::WorkerStatus& w : pool.workers()) completed += w.jobs_completed();
  EXPECT_EQ(completed, measurements);
  EXPECT_EQ(pool.duplicate_results(), 0);
  EXPECT_GT(pool.shared_results(), 0);
}

// A worker killed while it holds a lease, under the default heartbeat timeout (30 s): its
// open heartbeat call is cancelled by the transport, the coordinator takes it for gone at
// once and its job goes to the other worker within seconds (issue #25).
TEST_F(ClusterTest, AKilledWorkersJobIsRedispatchedWithinSecondsNotAtTheHeartbeatTimeout) {
  const std::string address = start_coordinator();
  auto c = client(address);
  Process doomed = start_two_workers(address, c);
  ASSERT_EQ(c.workers().size(), 2u);
  const int64_t run = submit(address, 24);
  ASSERT_TRUE(freeze_while_busy(c, 0, doomed));  // holding a lease it will never report
  const int64_t before = c.pool_status().jobs_redispatched();
  const auto killed = std::chrono::steady_clock::now();
  kill_process(doomed, SIGKILL);
  ASSERT_TRUE(wait_until(
      [&] {
        const proto::ListWorkersResponse s = c.pool_status();
        return s.workers(0).lost() && s.jobs_redispatched() > before;
      },
      5s))
      << read_file(coordinator_.err);
  EXPECT_LT(std::chrono::steady_clock::now() - killed, 5s);
  EXPECT_EQ(wait_for_run(c, run), "done") << read_file(coordinator_.err);
  int failed = -1;
  EXPECT_EQ(train_evaluations(run, &failed).size(), 24u);
  EXPECT_EQ(failed, 0);
  EXPECT_NE(read_file(coordinator_.err).find("is gone (its heartbeat call was cancelled)"),
            std::string::npos);
}

TEST_F(ClusterTest, AWorkerStoppedPastItsLeaseChangesNothingWhenItComesBack) {
  const std::string address = start_coordinator({"--lease", "3", "--heartbeat-timeout", "2"});
  auto c = client(address);
  Process sleeper = start_two_workers(address, c);
  ASSERT_EQ(c.workers().size(), 2u);
  const int64_t run = submit(address, 20);
  ASSERT_TRUE(freeze_while_busy(c, 0, sleeper));
  // Past the lease and the heartbeat timeout its job goes back to the queue, and the other
  // worker finishes the run.
  EXPECT_TRUE(wait_until([&] { return c.pool_status().jobs_redispatched() >= 1; }, 15s));
  EXPECT_EQ(wait_for_run(c, run), "done");
  const int64_t rows = evaluation_rows();
  const std::vector<std::string> front = front_schedules(c, run);
  const size_t lines_before = read_file(sleeper.err).size();
  // It wakes up and reports the job it held: a duplicate, or a job the coordinator has
  // forgotten. Either way nothing changes.
  kill(-sleeper.pid, SIGCONT);
  EXPECT_TRUE(wait_until(
      [&] { return read_file(sleeper.err).find("job ", lines_before) != std::string::npos; }, 20s))
      << read_file(sleeper.err);
  std::this_thread::sleep_for(1s);
  EXPECT_EQ(evaluation_rows(), rows);
  EXPECT_EQ(front_schedules(c, run), front);

  int failed = -1;
  EXPECT_EQ(train_evaluations(run, &failed).size(), 20u);
  EXPECT_EQ(failed, 0);
}

TEST_F(ClusterTest, CallsWithoutTheTokenAreRefusedAndWriteNothing) {
  write("token", "s3cret-token\n");
  write("wrong", "not-the-token\n");
  const std::string address = start_coordinator({"--token-file", path("token")});
  auto none = client(address);
  auto wrong = client(address, "not-the-token");
  for (client::CoordinatorClient* c : {&none, &wrong}) {
    try {
      c->runs();
      ADD_FAILURE() << "a call without the token was served";
    } catch (const client::RpcError& e) {
      EXPECT_EQ(e.code(), grpc::StatusCode::UNAUTHENTICATED);
    }
  }
  // The command line: exit 2 (bad input), the reason, and no run in the database.
  for (const std::string& token : {std::string(), " --token-file " + path("wrong")}) {
    Result r = stipple("submit " + kPipeline + " --coordinator " + address + " --images " + kTrain +
                       " --budget 4" + token + " 2>&1");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("token"), std::string::npos) << r.output;
  }
  // A worker with the wrong token stops with exit 2 instead of retrying forever.
  Process w = start_worker(address, {"--token-file", path("wrong")});
  int status = 0;
  ASSERT_TRUE(wait_until([&] { return waitpid(w.pid, &status, WNOHANG) == w.pid; }, 20s));
  for (Process& p : processes_) {
    if (p.pid == w.pid) p.pid = -1;  // reaped
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << read_file(w.err);
  auto db = storage::Database::open(db_path());
  EXPECT_TRUE(db->list_runs().empty());
  EXPECT_EQ(evaluation_rows(), 0);
  // With the token everything works.
  auto right = client(address, "s3cret-token");
  EXPECT_TRUE(right.runs().empty());
  Result r = stipple("submit " + kPipeline + " --coordinator " + address + " --images " + kTrain +
                     " --budget 4 --target x86_64-none-0 --token-file " + path("token"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// A run for a target no registered worker has (here another architecture's key) is never
// dispatched to the x86 worker; a run for the worker's own target is. Cancelled, it says why.
TEST_F(ClusterTest, AWorkerOfAnotherTargetNeverGetsTheRunsJobs) {
  const std::string address = start_coordinator();
  start_worker(address);
  auto c = client(address);
  ASSERT_TRUE(wait_until([&] { return c.workers().size() == 1; }, 20s));
  const std::string own_target = c.workers()[0].capabilities().target();
  const int64_t arm_run = submit(address, 8, "--target aarch64-cortex-a76-0badc0de");
  std::this_thread::sleep_for(3s);
  proto::RunProgress p = c.status(arm_run);
  EXPECT_EQ(p.state(), "running");
  EXPECT_EQ(p.evaluations(), 0);
  EXPECT_EQ(c.workers()[0].jobs_completed(), 0);
  const int64_t own_run = submit(address, 6, "--target " + own_target);
  EXPECT_EQ(wait_for_run(c, own_run, 60s), "done");
  EXPECT_EQ(c.status(arm_run).evaluations(), 0);
  EXPECT_EQ(c.cancel(arm_run), "cancelled");
  EXPECT_EQ(c.status(arm_run).state(), "cancelled");
  EXPECT_EQ(c.status(arm_run).message(), "cancelled by a client");
  // The reason is stored with the state, for a coordinator started again.
  EXPECT_TRUE(wait_until(
      [&] { return storage::Database::open(db_path())->find_run(arm_run)->message != ""; }, 10s));
  EXPECT_EQ(storage::Database::open(db_path())->find_run(arm_run)->message,
            "cancelled by a client");
}

TEST_F(ClusterTest, MalformedTruncatedAndOversizeRequestsAreRefused) {
  const std::string address = start_coordinator({"--max-message-mib", "4"});
  auto c = client(address);
  // Bytes that are not the call's request, sent through a generic stub to every call:
  // INVALID_ARGUMENT naming the message. (WatchRun streams its answer; a status alone is
  // what a unary call reads of it.)
  const std::vector<std::pair<std::string, std::string>> calls = {
      {"SubmitRun", "SubmitRunRequest"},
      {"ListRuns", "ListRunsRequest"},
      {"GetFront", "GetFrontRequest"},
      {"ListWorkers", "ListWorkersRequest"},
      {"RegisterWorker", "RegisterWorkerRequest"},
      {"ReportResults", "ReportResultsRequest"},
      {"Heartbeat", "HeartbeatRequest"},
      {"GetSetup", "GetSetupRequest"},
      {"GetImage", "GetImageRequest"},
      {"LeaseJobs", "LeaseJobsRequest"},
      {"WatchRun", "WatchRunRequest"},
      {"CancelRun", "CancelRunRequest"}};
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  grpc::GenericStub generic(channel);
  for (const auto& [call, message] : calls) {
    SCOPED_TRACE(call);
    const std::string garbage = "\xff\xff\xff\xff\x0f not a protobuf";
    grpc::Slice slice(garbage);
    grpc::ByteBuffer request(&slice, 1), response;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 10s);
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    grpc::Status status;
    generic.UnaryCall(&ctx, "/stipple.proto.Coordinator/" + call, grpc::StubOptions(), &request,
                      &response, [&](grpc::Status s) {
                        std::lock_guard lock(mu);
                        status = s;
                        done = true;
                        cv.notify_all();
                      });
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, 15s, [&] { return done; }));
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
    EXPECT_NE(status.error_message().find("not a " + message), std::string::npos)
        << status.error_message();
  }
  // A truncated pipeline: INVALID_ARGUMENT with the file:line:col of the error.
  client::SubmitSpec spec;
  spec.pipeline_file = kPipeline;
  spec.train_images = {kTrain};
  spec.budget = 4;
  spec.target = "x86_64-none-0";
  proto::SubmitRunRequest request = client::make_submit_request(spec);
  const std::string source = request.pipeline_source();
  request.set_pipeline_source(source.substr(0, source.size() / 2));
  try {
    c.submit(request);
    ADD_FAILURE() << "a truncated pipeline was accepted";
  } catch (const client::RpcError& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("two_pass_blur.stp:"), std::string::npos) << e.what();
  }
  // Pipeline IR that is not what the source compiles to (a client of another version).
  request = client::make_submit_request(spec);
  request.mutable_pipeline()->set_name("another_pipeline");
  try {
    c.submit(request);
    ADD_FAILURE() << "a pipeline IR that does not match its source was accepted";
  } catch (const client::RpcError& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("is not what its source compiles to"), std::string::npos)
        << e.what();
  }
  // A photo whose bytes are not an image.
  request = client::make_submit_request(spec);
  request.set_image_contents(0, "not a png");
  request.mutable_images(0)->clear_sha256();
  try {
    c.submit(request);
    ADD_FAILURE() << "a broken photo was accepted";
  } catch (const client::RpcError& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT) << e.what();
  }
  // A request over the message limit.
  request = client::make_submit_request(spec);
  request.set_image_contents(0, std::string(6 << 20, 'x'));
  try {
    c.submit(request);
    ADD_FAILURE() << "an oversize request was accepted";
  } catch (const client::RpcError& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << e.what();
  }
  // The coordinator is still up, says so on grpc.health.v1, and stored nothing.
  {
    auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
    grpc::GenericStub generic(channel);
    grpc::ByteBuffer request, response;  // HealthCheckRequest{service: ""}: no bytes
    grpc::Slice empty("");
    request = grpc::ByteBuffer(&empty, 1);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 10s);
    std::promise<grpc::Status> done;
    generic.UnaryCall(&ctx, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request,
                      &response, [&](grpc::Status s) { done.set_value(s); });
    const grpc::Status st = done.get_future().get();
    ASSERT_TRUE(st.ok()) << st.error_message();
    std::vector<grpc::Slice> slices;
    ASSERT_TRUE(response.Dump(&slices).ok());
    std::string bytes;
    for (const grpc::Slice& sl : slices)
      bytes.append(reinterpret_cast<const char*>(sl.begin()), sl.size());
    EXPECT_EQ(bytes, std::string("\x08\x01", 2));  // HealthCheckResponse{status: SERVING}
  }
  EXPECT_TRUE(c.runs().empty());
  EXPECT_EQ(waitpid(coordinator_.pid, nullptr, WNOHANG), 0);
  EXPECT_EQ(evaluation_rows(), 0);
  // ... neither in the database nor in its folder of submitted files.
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(db_path() + ".files"))
    files += entry.is_regular_file();
  EXPECT_EQ(files, 0);
}

// Mutual TLS and a token on every hop: the worker and the client present certificates the
// coordinator's CA signed; a client that speaks plaintext does not get through.
TEST_F(ClusterTest, ARunOverMutualTls) {
  make_ca();
  make_certificate("coordinator");
  make_certificate("worker");
  make_certificate("client");
  write("token", "tls-token\n");
  const std::string address =
      start_coordinator({"--token-file", path("token"), "--tls-cert", path("coordinator.pem"),
                         "--tls-key", path("coordinator.key"), "--tls-ca", path("ca.pem")});
  start_worker(address, {"--token-file", path("token"), "--tls-ca", path("ca.pem"), "--tls-cert",
                         path("worker.pem"), "--tls-key", path("worker.key")});
  const std::string tls = " --token-file " + path("token") + " --tls-ca " + path("ca.pem") +
                          " --tls-cert " + path("client.pem") + " --tls-key " + path("client.key");
  ASSERT_TRUE(wait_until(
      [&] {
        return stipple("workers --coordinator " + address + tls).output.find(" idle ") !=
               std::string::npos;
      },
      20s));
  const int64_t run = submit(address, 6, "--wait" + tls);
  ASSERT_GT(run, 0);
  Result front = stipple("front " + std::to_string(run) + " --coordinator " + address + tls);
  EXPECT_EQ(front.exit_code, 0) << front.output;
  EXPECT_NE(front.output.find("[baseline]"), std::string::npos) << front.output;
  // Plaintext, or TLS without a client certificate: refused before any call is served.
  Result plain = stipple("status --coordinator " + address + " --token-file " + path("token") +
                         " --timeout 5 2>&1");
  EXPECT_EQ(plain.exit_code, 1) << plain.output;
  Result no_cert = stipple("status --coordinator " + address + " --token-file " + path("token") +
                           " --tls-ca " + path("ca.pem") + " --timeout 5 2>&1");
  EXPECT_EQ(no_cert.exit_code, 1) << no_cert.output;
}

}  // namespace
}  // namespace stipple::testing_cli
