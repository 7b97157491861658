// `stipple worker --coordinator ADDR`: a worker of the tuning cluster (issue #6). It
// registers this host's capabilities with the coordinator and measures the jobs it leases
// in crash-isolated children, compiling a batch at once and timing one job at a time per
// host (workers/worker_daemon.h); photos and reference outputs are cached by content hash. It
// outlives the coordinator: when that goes away it retries with backoff.
//
// SIGTERM or SIGINT: lease nothing more, report the jobs in hand, exit 0. A token the
// coordinator refuses: exit 2.
#include <spdlog/spdlog.h>

#include <atomic>
#include <csignal>
#include <cstdlib>

#include "client/cache_dir.h"
#include "client/commands.h"
#include "compiler_core/codegen/jit.h"
#include "compiler_core/ir/error.h"
#include "proto/rpc_security.h"
#include "workers/benchmark_lock.h"
#include "workers/host_capabilities.h"
#include "workers/worker_daemon.h"

namespace stipple::cli {

namespace {

struct WorkerCliOptions {
  std::string coordinator;
  std::string token_file;
  rpc::TlsFiles tls;
  std::string cache;
  double deadline = 60;
  std::string evaluator;
  std::string host;
  int compile_jobs = 0;
  int64_t cache_max_mib = 4096;
  std::string benchmark_lock = workers::kDefaultBenchmarkLock;
  bool emulated = false;
};

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop = true; }

int run_worker(const WorkerCliOptions& opt) {
  workers::WorkerDaemonOptions o;
  o.coordinator = opt.coordinator;
  o.security.token = rpc::load_token(opt.token_file);
  o.security.tls = opt.tls;
  if (!o.security.tls.cert.empty() != !o.security.tls.key.empty()) {
    throw UserError("worker: --tls-cert and --tls-key go together (mutual TLS)");
  }
  o.cache_dir = opt.cache.empty() ? default_cache_dir("worker") : opt.cache;
  o.evaluator.server_binary = opt.evaluator;
  o.evaluator.deadline_seconds = opt.deadline;
  o.evaluator.benchmark_lock = opt.benchmark_lock == "none" ? "" : opt.benchmark_lock;
  o.compile_jobs = opt.compile_jobs;
  o.cache_max_bytes = opt.cache_max_mib << 20;
  // Before anything asks (host_is_emulated reads it once), and inherited by the evaluators,
  // whose target keys must be the worker's.
  if (opt.emulated) setenv("STIPPLE_EMULATED", "1", 1);
  o.capabilities = workers::detect_host_capabilities();
  if (!opt.host.empty()) o.capabilities.host = opt.host;
  o.capabilities.stipple_version = STIPPLE_VERSION;
  o.capabilities.code_generator = codegen::code_generator_version();
  const HostCapabilities& c = o.capabilities;
  spdlog::info("worker on {}: {} {}, {} cores, L2 {} KiB, LLC {} KiB, {}-bit vectors; target {}",
               c.host, c.arch, c.cpu, c.cores, c.l2_bytes >> 10, c.llc_bytes >> 10, c.vector_bits,
               c.target);
  if (c.emulated) {
    spdlog::warn(
        "this {} worker runs under emulation (qemu-user on another architecture): "
        "its timings are the emulator's, kept apart under their own target",
        c.arch);
  }
  spdlog::info("coordinator {}, cache {}, {} jobs compiled at once, benchmark lock {}",
               o.coordinator, o.cache_dir, o.compile_jobs > 0 ? o.compile_jobs : c.cores,
               o.evaluator.benchmark_lock.empty() ? "none" : o.evaluator.benchmark_lock);

  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  workers::WorkerDaemon daemon(std::move(o));
  const int code = daemon.run(g_stop);
  std::signal(SIGTERM, SIG_DFL);
  std::signal(SIGINT, SIG_DFL);
  return code == workers::kWorkerBadInput ? kExitBadInput : code;
}

}  // namespace

CommandRunner add_worker_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "worker",
      "Measure candidates for a tuning coordinator: register this host, lease jobs, report "
      "results (compiled in parallel, timed one at a time per host, each in a "
      "crash-isolated child); reconnect when the coordinator goes away. SIGTERM or Ctrl-C: "
      "finish the jobs in hand, then exit");
  auto opt = std::make_shared<WorkerCliOptions>();
  cmd->add_option("--coordinator", opt->coordinator, "the coordinator's address, HOST:PORT")
      ->required();
  cmd->add_option("--token-file", opt->token_file,
                  "file whose first line is the cluster's token (default: the STIPPLE_TOKEN "
                  "environment variable)");
  cmd->add_option("--tls-ca", opt->tls.ca,
                  "PEM certificate(s) to trust for the coordinator (turns on TLS)");
  cmd->add_option("--tls-cert", opt->tls.cert,
                  "PEM certificate of this worker, for mutual TLS (with --tls-key)");
  cmd->add_option("--tls-key", opt->tls.key, "PEM private key of --tls-cert");
  cmd->add_flag("--emulated", opt->emulated,
                "this host is emulated (its timings are the emulator's): register under a target "
                "ending in -emulated. Told by itself under Debian 12's qemu-user; give it under "
                "an emulator that shows the emulated CPU in /proc/cpuinfo (QEMU 8.1 and later)");
  cmd->add_option("--host", opt->host,
                  "the host name to register (default: this machine's; on Kubernetes the "
                  "node's, which outlives a pod's name): the nightly run times a night on one "
                  "host and compares nights of the same host");
  cmd->add_option("--cache", opt->cache,
                  "folder for cached photos and reference outputs (default: "
                  "$XDG_CACHE_HOME/stipple, else "
                  "~/.cache/stipple)");
  cmd->add_option("--deadline", opt->deadline,
                  "seconds a candidate may take (compile and runs) before it is killed")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  cmd->add_option("--cache-max-mib", opt->cache_max_mib,
                  "size limit of the cache: least recently used photos and reference outputs "
                  "beyond it are removed")
      ->check(CLI::Range(int64_t(0), int64_t(1) << 30))
      ->capture_default_str();
  cmd->add_option("--compile-jobs", opt->compile_jobs,
                  "jobs compiled at once, each then timed alone (default: one per core)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--benchmark-lock", opt->benchmark_lock,
                  "lock file every evaluator of this host shares, so that one job at a time "
                  "is timed ('none': no lock)")
      ->capture_default_str();
  cmd->add_option("--evaluator", opt->evaluator,
                  "the stipple-evaluator executable (default: the one beside stipple)");
  return [opt]() { return run_worker(*opt); };
}

}  // namespace stipple::cli
