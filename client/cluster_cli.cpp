#include "client/cluster_cli.h"

#include <cmath>
#include <cstdlib>

#include "compiler_core/ir/error.h"

namespace stipple::cli {

void add_connection_options(CLI::App* cmd, ConnectionArgs& args) {
  cmd->add_option("--coordinator", args.coordinator,
                  "the coordinator's HOST:PORT (default: $STIPPLE_COORDINATOR, else "
                  "127.0.0.1:50051)");
  cmd->add_option("--token-file", args.token_file,
                  "file whose first line is the cluster's token (default: $STIPPLE_TOKEN)");
  cmd->add_option("--tls-ca", args.tls.ca, "PEM CA to trust: connect over TLS");
  cmd->add_option("--tls-cert", args.tls.cert, "PEM client certificate (mutual TLS)");
  cmd->add_option("--tls-key", args.tls.key, "PEM private key of --tls-cert");
  cmd->add_option("--timeout", args.timeout_s, "seconds to wait for each call")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
}

client::ClientOptions client_options(const ConnectionArgs& args) {
  client::ClientOptions o;
  o.address = args.coordinator;
  if (o.address.empty()) {
    const char* env = std::getenv("STIPPLE_COORDINATOR");
    o.address = env && *env ? env : "127.0.0.1:50051";
  }
  o.security.token = rpc::load_token(args.token_file);
  o.security.tls = args.tls;
  o.call_timeout_s = args.timeout_s;
  return o;
}

int with_coordinator(const std::function<int()>& body) {
  try {
    return body();
  } catch (const client::RpcError& e) {
    if (e.bad_input()) throw UserError(e.what());
    throw;
  }
}

search::TuneProgress to_tune_progress(const proto::RunProgress& p) {
  search::TuneProgress t;
  t.evaluations = p.evaluations();
  t.budget = p.budget();
  t.measured = p.measured();
  t.failures = p.failures();
  t.elapsed_s = p.elapsed_seconds();
  t.per_second = p.evaluations_per_second();
  t.eta_s = p.eta_seconds();
  t.metric = p.metric().empty() ? "dE" : p.metric();
  if (p.thresholds_size() > 0) {
    t.thresholds.assign(p.thresholds().begin(), p.thresholds().end());
    t.speedup_at.assign(p.best_speedups().begin(), p.best_speedups().end());
  } else {  // an older coordinator: its three fixed levels
    t.thresholds = {1, 2, 5};
    t.speedup_at = {p.best_speedup_de1(), p.best_speedup_de2(), p.best_speedup_de5()};
  }
  t.phase = p.phase();
  return t;
}

FrontListing to_front_listing(const proto::GetFrontResponse& front) {
  FrontListing f;
  f.run.id = front.run().run_id();
  f.run.pipeline_name = front.run().pipeline();
  f.run.strategy = front.run().strategy();
  f.run.state = front.run().state();
  f.run.target = front.run().target();
  f.run.evaluations = front.run().evaluations();
  f.run.budget_evaluations = front.run().budget();
  f.metric = front.metric().empty() ? "error" : front.metric();
  for (const proto::FrontPoint& p : front.points()) {
    search::FrontEntry e;
    e.baseline = p.baseline();
    e.train.id = p.train_evaluation_id();
    e.train.key.split = "train";
    e.train.key.target = f.run.target;
    e.train.key.schedule = p.schedule_text();
    e.train.time_ms = p.train_time_ms();
    e.train.error = p.train_error();
    e.train.psnr = p.train_psnr();
    e.train.compile_ms = p.train_compile_ms();
    if (p.has_test()) {
      storage::EvaluationRecord t = e.train;
      t.id = p.test_evaluation_id();
      t.key.split = "test";
      t.time_ms = p.test_time_ms();
      t.error = p.test_error();
      t.psnr = p.test_psnr();
      t.compile_ms = NAN;  // not sent: the test side compiles the same schedule again
      e.test = t;
    }
    f.entries.push_back(std::move(e));
  }
  return f;
}

}  // namespace stipple::cli
