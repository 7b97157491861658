// `stipple coordinator --listen ADDR --db PATH`: the tuning cluster's coordinator (issue
// #6). It serves the Coordinator gRPC service (proto/coordinator.proto) and
// grpc.health.v1, runs the tuning sessions of submitted runs with workers measuring their
// candidates (search/cluster_runs.h), and keeps everything in the SQLite database.
//
// - At start it resumes every cluster run the database has as "running": a coordinator
//   killed at any point loses nothing it had committed.
// - SIGTERM or SIGINT drains: no new runs, every run stops after its batch in hand (the
//   batch is not committed, so nothing half-measured is kept) and stays "running" to
//   resume at the next start, the health status turns NOT_SERVING, then the server stops.
// - Without a token it listens on loopback addresses only, unless --insecure. With one,
//   every call needs it, grpc.health.v1's too, and one without it is refused on its
//   headers, before its message is received (rpc_security.h).
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <thread>

#include "client/commands.h"
#include "compiler_core/ir/error.h"
#include "proto/rpc_security.h"
#include "search/coordinator/cluster_runs.h"
#include "search/coordinator/coordinator_service.h"
#include "search/coordinator/worker_pool.h"

namespace stipple::cli {

namespace {

struct CoordinatorOptions {
  std::string listen = "127.0.0.1:50051";
  std::string db = "stipple.db";
  std::string data;      // default: DB.files beside the database
  std::string datasets;  // named datasets: NAME/train, NAME/test
  std::string token_file;
  rpc::TlsFiles tls;
  bool insecure = false;
  double lease_s = 120;
  double heartbeat_timeout_s = 30;
  int max_message_mib = 64;
};

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop = true; }

int run_coordinator(const CoordinatorOptions& opt) {
  rpc::SecurityOptions security;
  security.token = rpc::load_token(opt.token_file);
  security.tls = opt.tls;
  security.insecure = opt.insecure;
  // Checks the address against the token before anything is opened.
  std::shared_ptr<grpc::ServerCredentials> credentials =
      rpc::server_credentials(opt.listen, security);

  coordinator::WorkerPoolOptions pool_options;
  pool_options.lease_duration = std::chrono::milliseconds(static_cast<int64_t>(opt.lease_s * 1000));
  pool_options.heartbeat_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(opt.heartbeat_timeout_s * 1000));
  coordinator::WorkerPool pool(pool_options);

  coordinator::CoordinatorServiceOptions service_options;
  service_options.token = security.token;
  service_options.pool = pool_options;
  service_options.max_lease_wait =
      std::min(std::chrono::milliseconds(10000),
               std::chrono::milliseconds(static_cast<int64_t>(opt.heartbeat_timeout_s * 1000 / 3)));
  coordinator::CoordinatorService service(pool, service_options);

  coordinator::ClusterRunsOptions runs_options;
  runs_options.db_path = opt.db;
  runs_options.data_dir = opt.data.empty() ? opt.db + ".files" : opt.data;
  runs_options.datasets_dir = opt.datasets;
  if (!opt.datasets.empty() && !std::filesystem::is_directory(opt.datasets)) {
    throw UserError("coordinator: --datasets " + opt.datasets + " is not a folder");
  }
  coordinator::ClusterRuns runs(pool, service, runs_options);
  service.set_client_calls(&runs);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(opt.listen, credentials, &port);
  coordinator::configure_server(builder, opt.max_message_mib << 20);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    throw std::runtime_error("cannot listen on " + opt.listen +
                             " (in use, or not an address of this host)");
  }
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  // The port as bound (ADDR may ask for port 0): scripts and tests read this line.
  const std::string host = opt.listen.substr(0, opt.listen.rfind(':'));
  std::cout << "listening on " << host << ":" << port << std::endl;
  spdlog::info("coordinator on {}:{}{}, database {}, files in {}", host, port,
               security.token.empty() ? " (no token)" : "", opt.db, runs_options.data_dir);

  const int resumed = runs.resume_unfinished();
  if (resumed > 0) spdlog::info("resumed {} unfinished run{}", resumed, resumed == 1 ? "" : "s");

  // Upkeep: end leases past their deadline and those of lost workers, so their jobs go to
  // other workers even when no call comes in.
  int64_t redispatched = 0;
  while (!g_stop) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    pool.expire_leases();
    // Leases also end lazily in the pool's calls; the counter sees them all.
    const int64_t now = pool.snapshot().counters.redispatched;
    if (now > redispatched) {
      spdlog::info(
          "{} job(s) whose lease ended (expired, or its worker was lost) went back to "
          "the queue",
          now - redispatched);
      redispatched = now;
    }
  }

  spdlog::info("draining: {} run(s) stop and resume at the next start", runs.active_runs());
  server->GetHealthCheckService()->SetServingStatus(false);
  runs.drain();
  pool.shut_down();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  server->Wait();
  spdlog::info("stopped");
  return kExitOk;
}

}  // namespace

CommandRunner add_coordinator_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "coordinator",
      "Serve the tuning cluster: take runs from clients, dispatch their candidates to "
      "workers, keep every measurement in SQLite");
  auto opt = std::make_shared<CoordinatorOptions>();
  cmd->add_option("--listen", opt->listen, "address to serve on, HOST:PORT (port 0: any free)")
      ->capture_default_str();
  cmd->add_option("--db", opt->db, "the SQLite database")->capture_default_str();
  cmd->add_option("--data", opt->data,
                  "folder for submitted pipelines and photos (default: DB.files)");
  cmd->add_option("--datasets", opt->datasets,
                  "folder of named datasets a submit may ask for: NAME/train/ and NAME/test/ "
                  "hold each one's photos");
  cmd->add_option("--token-file", opt->token_file,
                  "file whose first line is the token every call must carry (default: the "
                  "STIPPLE_TOKEN environment variable)");
  cmd->add_option("--tls-cert", opt->tls.cert, "PEM certificate chain: serve over TLS");
  cmd->add_option("--tls-key", opt->tls.key, "PEM private key of --tls-cert");
  cmd->add_option("--tls-ca", opt->tls.ca,
                  "PEM CA: require client certificates signed by it (mutual TLS)");
  cmd->add_flag("--insecure", opt->insecure,
                "allow listening on a non-loopback address without a token");
  cmd->add_option("--lease", opt->lease_s, "seconds a worker holds a job without a heartbeat")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  cmd->add_option("--heartbeat-timeout", opt->heartbeat_timeout_s,
                  "seconds after which a silent worker is lost and its jobs go elsewhere")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  cmd->add_option("--max-message-mib", opt->max_message_mib, "largest request or reply, in MiB")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  return [opt]() { return run_coordinator(*opt); };
}

}  // namespace stipple::cli
