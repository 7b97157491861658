// What the cluster's commands share (`stipple submit`, `status`, `cancel`, `workers`,
// `front --coordinator`): the options that say which coordinator and how to reach it, and
// the conversion of its replies to what the local commands print.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "client/coordinator_client.h"
#include "client/front_table.h"
#include "search/tuning_session.h"

namespace stipple::cli {

struct ConnectionArgs {
  std::string coordinator;  // default: $STIPPLE_COORDINATOR, else 127.0.0.1:50051
  std::string token_file;
  rpc::TlsFiles tls;
  double timeout_s = 60;
};

/// --coordinator, --token-file, --tls-ca, --tls-cert, --tls-key, --timeout on `cmd`.
void add_connection_options(CLI::App* cmd, ConnectionArgs& args);

/// The client's options: the address resolved, the token loaded (UserError for an
/// unreadable token file).
client::ClientOptions client_options(const ConnectionArgs& args);

/// Runs a command body; a refusal of the coordinator's for bad input (invalid argument,
/// unknown run, wrong token...) becomes a UserError (exit 2) with its reason, and a failure
/// to reach it (unavailable, deadline) stays a failure (exit 1).
int with_coordinator(const std::function<int()>& body);

search::TuneProgress to_tune_progress(const proto::RunProgress& p);
FrontListing to_front_listing(const proto::GetFrontResponse& front);

}  // namespace stipple::cli
