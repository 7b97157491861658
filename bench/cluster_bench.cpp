// Issue #6's cluster benchmark, part 1 (part 2, real processes, is cluster_bench.sh):
//
// 1. Dispatch throughput: a WorkerPool and the CoordinatorService on a loopback gRPC
//    server in this process, and N threads playing trivial workers over real gRPC
//    (register, LeaseJobs, ReportResults with an immediate "ok" result). This is a
//    harness for the coordinator's own overhead: nothing is compiled or measured, so
//    jobs/s is the rate at which the pool and the service hand out and take back jobs.
//    Each trial submits all its jobs at once and times submit -> every result awaited.
//    The same workers calling the pool directly (no gRPC, no service) show the pool's share.
// 2. Added latency per job: the same schedule of a small real pipeline measured by a
//    LocalEvaluator in this process, and through RemoteEvaluator -> pool -> service ->
//    a real WorkerDaemon (on a thread here, with its own evaluator child) -> back. Each
//    remote repetition is a new run, so its job id is new and the pool cannot answer it
//    from its results. The two are interleaved so that load on the shared machine hits
//    both alike.
//
//   build/bench/cluster_bench [--jobs 5000] [--trials 3] [--reps 30] [--part dispatch|latency]
#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "proto/coordinator.grpc.pb.h"
#include "proto/rpc_security.h"
#include "search/coordinator/coordinator_service.h"
#include "search/coordinator/remote_evaluator.h"
#include "search/coordinator/worker_pool.h"
#include "workers/host_capabilities.h"
#include "workers/local_evaluator.h"
#include "workers/worker_daemon.h"

namespace stipple {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

const std::string kSource = STIPPLE_SOURCE_DIR;
const std::string kToken = "cluster-bench-token";
const std::string kPipeline = kSource + "/datasets/pipelines/two_pass_blur.stp";
const std::string kPhoto = kSource + "/datasets/fixtures/people-256x192.png";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

workers::EvaluationSetup blur_setup(int runs, int threads) {
  workers::EvaluationSetup s;
  s.pipeline_file = kPipeline;
  s.pipeline_source = read_file(kPipeline);
  s.images["train"] = {kPhoto};
  s.runs = runs;
  s.threads = threads;
  return s;
}

// The coordinator as `stipple coordinator` builds it (pool, service, configured server),
// minus the database and tuning sessions.
struct Coordinator {
  explicit Coordinator(const workers::EvaluationSetup& setup) {
    coordinator::WorkerPoolOptions po;  // defaults: 120 s leases, 30 s heartbeat timeout
    pool = std::make_unique<coordinator::WorkerPool>(po);
    coordinator::CoordinatorServiceOptions so;
    so.token = kToken;
    so.pool = po;
    service = std::make_unique<coordinator::CoordinatorService>(*pool, so);
    setup_id = service->add_setup(setup);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    coordinator::configure_server(builder);
    builder.RegisterService(service.get());
    server = builder.BuildAndStart();
    if (!server) throw std::runtime_error("cannot start the gRPC server on loopback");
  }
  ~Coordinator() {
    pool->shut_down();  // wakes the long polls so that Shutdown returns at once
    server->Shutdown(std::chrono::system_clock::now() + 2s);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port); }

  std::unique_ptr<coordinator::WorkerPool> pool;
  std::unique_ptr<coordinator::CoordinatorService> service;
  std::unique_ptr<grpc::Server> server;
  std::string setup_id;
  int port = 0;
};

// ---- 1. dispatch throughput ----

// A worker that reports "ok" for every job it leases, at once, with the image count the
// service checks (one photo in the train split). Its own channel and TCP connection, as a
// worker process would have (a local subchannel pool: channels do not share one).
class TrivialWorker {
 public:
  TrivialWorker(const std::string& address, const std::string& target, int max_jobs)
      : max_jobs_(max_jobs) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    stub_ = proto::Coordinator::NewStub(
        grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
    proto::RegisterWorkerRequest req;
    proto::Capabilities* c = req.mutable_capabilities();
    c->set_host("bench");
    c->set_arch("x86_64");
    c->set_cores(1);
    c->set_target(target);
    proto::RegisterWorkerResponse resp;
    auto ctx = context(10s);
    const grpc::Status st = stub_->RegisterWorker(ctx.get(), req, &resp);
    if (!st.ok()) throw std::runtime_error("register: " + st.error_message());
    id_ = resp.worker_id();
    thread_ = std::thread([this] { loop(); });
  }
  ~TrivialWorker() {
    stop_ = true;
    thread_.join();
  }
  int64_t rpcs() const { return rpcs_; }

 private:
  static std::unique_ptr<grpc::ClientContext> context(std::chrono::seconds deadline) {
    auto c = std::make_unique<grpc::ClientContext>();
    c->set_deadline(std::chrono::system_clock::now() + deadline);
    rpc::authorize(*c, kToken);
    return c;
  }
  void loop() {
    while (!stop_) {
      proto::LeaseJobsRequest lreq;
      lreq.set_worker_id(id_);
      lreq.set_max_jobs(max_jobs_);
      lreq.set_wait_seconds(0.2);  // short, so that the destructor returns quickly
      proto::LeaseJobsResponse lresp;
      auto lctx = context(10s);
      ++rpcs_;
      if (!stub_->LeaseJobs(lctx.get(), lreq, &lresp).ok()) return;  // pool shut down
      if (lresp.jobs_size() == 0) continue;
      proto::ReportResultsRequest rreq;
      rreq.set_worker_id(id_);
      for (const proto::Job& j : lresp.jobs()) {
        proto::JobResult* r = rreq.add_results();
        r->set_job_id(j.job_id());
        r->set_status("ok");
        proto::ImageMeasurement* m = r->add_images();
        m->set_time_ms(1);
        m->set_psnr(40);
      }
      proto::ReportResultsResponse rresp;
      auto rctx = context(10s);
      ++rpcs_;
      const grpc::Status st = stub_->ReportResults(rctx.get(), rreq, &rresp);
      if (!st.ok() || rresp.accepted() != lresp.jobs_size()) {
        std::fprintf(stderr, "report: %s (accepted %d of %d)\n", st.error_message().c_str(),
                     rresp.accepted(), lresp.jobs_size());
        std::exit(1);  // a harness that loses results measures nothing
      }
    }
  }

  std::unique_ptr<proto::Coordinator::Stub> stub_;
  std::string id_;
  int max_jobs_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> rpcs_{0};
  std::thread thread_;
};

// The same trivial worker calling the pool directly, without gRPC or the service: the
// pool's own share of the cost per job.
class DirectWorker {
 public:
  DirectWorker(coordinator::WorkerPool& pool, const std::string& target, int max_jobs)
      : pool_(pool), max_jobs_(max_jobs) {
    HostCapabilities c;
    c.host = "bench";
    c.arch = "x86_64";
    c.cores = 1;
    c.target = target;
    id_ = pool_.register_worker(c);
    thread_ = std::thread([this] { loop(); });
  }
  ~DirectWorker() {
    stop_ = true;
    thread_.join();
  }
  int64_t rpcs() const { return calls_; }

 private:
  void loop() {
    workers::EvaluationResult ok;
    workers::ImageMeasurement image;
    image.time_ms = image.min_time_ms = 1;
    image.psnr = 40;
    ok.images.push_back(image);
    ok.aggregate();
    while (!stop_) {
      ++calls_;
      const coordinator::LeaseReply reply = pool_.lease(id_, max_jobs_, 200ms);
      if (reply.leases.empty()) continue;
      ++calls_;  // one report call per lease, as ReportResults carries them all
      for (const coordinator::Lease& l : reply.leases) pool_.report(id_, l.job.id, ok);
    }
  }

  coordinator::WorkerPool& pool_;
  std::string id_;
  int max_jobs_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> calls_{0};
  std::thread thread_;
};

// One trial: `n` workers of type W lease `jobs` jobs submitted at once; returns jobs/s and
// the calls per job.
template <class W, class Make>
std::pair<double, double> trial(int jobs, int n, const std::string& target, Make make) {
  // A fresh coordinator per trial: no results or leases carried over.
  Coordinator c(blur_setup(1, 1));
  const std::string run = "bench";
  c.service->bind_run(run, c.setup_id);
  std::vector<std::unique_ptr<W>> ws;
  for (int i = 0; i < n; ++i) ws.push_back(make(c));
  std::vector<coordinator::PoolJob> batch(static_cast<size_t>(jobs));
  std::vector<std::string> ids;
  for (int i = 0; i < jobs; ++i) {
    coordinator::PoolJob& j = batch[size_t(i)];
    j.id = "j" + std::to_string(i);
    j.target = target;
    j.split = "train";
    j.schedule = "";  // the default schedule: the service parses it for every lease
    ids.push_back(j.id);
  }
  int64_t calls0 = 0, calls1 = 0;
  for (auto& w : ws) calls0 += w->rpcs();
  const auto t0 = Clock::now();
  c.pool->submit(run, batch);
  const coordinator::AwaitReply reply = c.pool->await(ids, nullptr, 120s);
  const double s = seconds_since(t0);
  if (reply.status != coordinator::AwaitStatus::Complete) {
    std::fprintf(stderr, "dispatch: trial did not complete (%s)\n", to_string(reply.status));
    std::exit(1);
  }
  for (auto& w : ws) calls1 += w->rpcs();
  return {jobs / s, double(calls1 - calls0) / jobs};
}

void dispatch_bench(int jobs, int trials) {
  const std::string target = "x86_64-bench-00000000";
  std::printf("## dispatch throughput: %d trivial jobs per trial, best and median of %d trials\n",
              jobs, trials);
  std::printf(
      "| path | workers | max_jobs per lease | jobs/s best | jobs/s median | calls per job |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (bool grpc : {true, false}) {
    for (int max_jobs : {1, 8, 64}) {
      for (int n : {1, 2, 4}) {
        std::vector<double> rates;
        double calls = 0;
        for (int t = 0; t < trials; ++t) {
          const auto [rate, per_job] =
              grpc ? trial<TrivialWorker>(jobs, n, target,
                                          [&](Coordinator& c) {
                                            return std::make_unique<TrivialWorker>(
                                                c.address(), target, max_jobs);
                                          })
                   : trial<DirectWorker>(jobs, n, target, [&](Coordinator& c) {
                       return std::make_unique<DirectWorker>(*c.pool, target, max_jobs);
                     });
          rates.push_back(rate);
          calls = per_job;
        }
        std::printf("| %s | %d | %d | %.0f | %.0f | %.2f |\n",
                    grpc ? "gRPC, service + pool" : "pool alone, in process", n, max_jobs,
                    *std::max_element(rates.begin(), rates.end()), median(rates), calls);
        std::fflush(stdout);
      }
    }
  }
}

// ---- 2. added latency per job ----

// A WorkerDaemon on its own thread, stopped and joined on destruction.
class DaemonThread {
 public:
  explicit DaemonThread(workers::WorkerDaemonOptions o) : daemon_(std::move(o)) {
    thread_ = std::thread([this] { code_ = daemon_.run(stop_); });
  }
  ~DaemonThread() {
    stop_ = true;
    thread_.join();
  }

 private:
  workers::WorkerDaemon daemon_;
  std::atomic<bool> stop_{false};
  int code_ = 0;
  std::thread thread_;
};

void latency_bench(int reps, int runs, int threads) {
  const workers::EvaluationSetup setup = blur_setup(runs, threads);
  const std::string schedule = read_file(kSource + "/datasets/pipelines/two_pass_blur.sched");
  workers::LocalEvaluatorOptions eo;
  eo.server_binary = STIPPLE_EVALUATOR;
  const HostCapabilities host = workers::detect_host_capabilities();

  workers::LocalEvaluator local(setup, eo);
  Coordinator c(setup);
  const fs::path cache =
      fs::temp_directory_path() / ("stipple-cluster-bench-" + std::to_string(::getpid()));
  workers::WorkerDaemonOptions wo;
  wo.coordinator = c.address();
  wo.security.token = kToken;
  wo.cache_dir = cache.string();
  wo.evaluator = eo;
  wo.capabilities = host;
  wo.lease_wait_seconds = 2;  // a submit wakes the long poll at once; this bounds the stop
  DaemonThread daemon(wo);

  // One job's wall time, and that time less the compile time the evaluator child reports:
  // compiling dominates a job and swings most with the machine's load, and the cluster
  // adds nothing to it, so the rest shows the added latency with less noise.
  struct Timing {
    double wall_ms = 0, rest_ms = 0;
  };
  auto timed = [](const char* what, auto&& evaluate) {
    const auto t0 = Clock::now();
    const std::vector<workers::EvaluationResult> r = evaluate();
    const double ms = seconds_since(t0) * 1e3;
    if (!r.at(0).ok())
      throw std::runtime_error(std::string(what) + ": " + to_string(r[0].status) + " " +
                               r[0].reason);
    return Timing{ms, ms - r[0].compile_ms};
  };
  // One remote job, as a new run (a new job id).
  int64_t next_run = 1;
  auto remote_once = [&] {
    const int64_t run = next_run++;
    c.service->bind_run(std::to_string(run), c.setup_id);
    coordinator::RemoteEvaluator remote(*c.pool, c.setup_id, run, host.target);
    const Timing t = timed("remote", [&] { return remote.evaluate({schedule}, "train", 0); });
    c.pool->release_run(std::to_string(run));
    c.service->unbind_run(std::to_string(run));
    return t;
  };
  auto local_once = [&] {
    return timed("local", [&] { return local.evaluate({schedule}, "train", 0); });
  };

  // The first remote job registers the setup with the worker, fetches the photo and
  // starts its evaluator child: reported apart, as the cold cost per worker and setup.
  const double cold = remote_once().wall_ms;
  local_once();  // the local child's first compile, likewise
  std::vector<double> lw, rw, lr, rr, dw, dr;
  for (int i = 0; i < reps; ++i) {
    const Timing l = local_once(), r = remote_once();
    lw.push_back(l.wall_ms);
    rw.push_back(r.wall_ms);
    lr.push_back(l.rest_ms);
    rr.push_back(r.rest_ms);
    // Neighbouring pairs share the machine's load of the moment.
    dw.push_back(r.wall_ms - l.wall_ms);
    dr.push_back(r.rest_ms - l.rest_ms);
  }
  fs::remove_all(cache);
  auto lo = [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); };
  auto hi = [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); };
  std::printf(
      "\n## added latency per job: two_pass_blur hand schedule on people-256x192, %d timed "
      "runs, threads %s, %d repetitions each, interleaved\n",
      runs, threads == 0 ? "one per core" : std::to_string(threads).c_str(), reps);
  std::printf(
      "| path | wall median ms | min | max | wall - compile median ms | min | max |\n"
      "|---|---|---|---|---|---|---|\n");
  std::printf("| LocalEvaluator in process | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
              median(lw), lo(lw), hi(lw), median(lr), lo(lr), hi(lr));
  std::printf(
      "| RemoteEvaluator -> gRPC -> WorkerDaemon | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
      median(rw), lo(rw), hi(rw), median(rr), lo(rr), hi(rr));
  std::printf(
      "added latency per job, median of the paired differences: wall %.2f ms, wall - compile "
      "%.2f ms (difference of the medians: %.2f and %.2f ms)\n",
      median(dw), median(dr), median(rw) - median(lw), median(rr) - median(lr));
  std::printf("first remote job (setup, photo fetch, evaluator start): %.0f ms\n", cold);
}

}  // namespace
}  // namespace stipple

int main(int argc, char** argv) {
  CLI::App app{"Issue #6: coordinator dispatch throughput and added latency per job"};
  int jobs = 5000, trials = 3, reps = 30, runs = 5, threads = 0;
  std::string part = "all";
  app.add_option("--jobs", jobs, "trivial jobs per dispatch trial")->check(CLI::PositiveNumber);
  app.add_option("--trials", trials, "dispatch trials per configuration")
      ->check(CLI::PositiveNumber);
  app.add_option("--reps", reps, "latency repetitions per path")->check(CLI::PositiveNumber);
  app.add_option("--runs", runs, "timed runs per photo in the latency part")
      ->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "threads of the latency part's candidates (0: per core)");
  app.add_option("--part", part, "all, dispatch or latency")
      ->check(CLI::IsMember({"all", "dispatch", "latency"}));
  CLI11_PARSE(app, argc, argv);
  // The worker daemon logs every job; the tables are the output.
  spdlog::set_level(spdlog::level::warn);
  try {
    if (part != "latency") stipple::dispatch_bench(jobs, trials);
    if (part != "dispatch") stipple::latency_bench(reps, runs, threads);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cluster_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
