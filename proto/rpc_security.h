// How the cluster's processes trust each other (issue #6, the design's "Cluster
// principles"): a shared token on every call, and TLS or mutual TLS by certificate files.
// The coordinator, the workers and the clients all build their credentials here, so the
// rules are in one place:
//
//   rpc::SecurityOptions s;  s.token = rpc::load_token(token_file);  s.tls.cert = ...;
//   builder.AddListeningPort(addr, rpc::server_credentials(addr, s));   // coordinator
//   ... and in each handler, again:  if (auto st = rpc::check_token(*ctx, s.token); !st.ok()) ...
//   auto channel = grpc::CreateChannel(addr, rpc::channel_credentials(s));   // clients
//   grpc::ClientContext ctx;  rpc::authorize(ctx, s.token);
//
// - Without a token a server listens on a loopback address only, unless told `insecure`:
//   a coordinator on the network with no token would take jobs and pipelines from anyone.
// - With a token every call must carry it ("authorization: Bearer TOKEN"); one without it,
//   or with another, fails with UNAUTHENTICATED before anything is read or written. The
//   server's credentials judge it on the call's headers, before gRPC reads the call's
//   message (issue #25): a client without the token cannot make the server buffer a body
//   of up to its message limit, however many calls it sends. This covers every service of
//   the server, grpc.health.v1 included. check_token in the handlers is the same rule,
//   for servers built with other credentials.
// - TLS: the server's certificate and key; mutual TLS: a CA too, and the server then
//   requires and verifies client certificates. Clients pass the CA they trust, and their
//   own certificate and key for mutual TLS.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

namespace stipple::rpc {

struct TlsFiles {
  std::string cert;  // PEM certificate chain of this side
  std::string key;   // PEM private key of this side
  std::string ca;    // PEM roots this side trusts for the other side
  bool enabled() const { return !cert.empty() || !key.empty() || !ca.empty(); }
};

struct SecurityOptions {
  std::string token;  // empty: no token
  TlsFiles tls;
  bool insecure = false;  // allow a server without a token on a non-loopback address
};

/// The token a process uses: the first line of `token_file` when given, else the
/// environment variable STIPPLE_TOKEN, else "". UserError when the file cannot be read or
/// its first line is empty (a token file that yields no token is a mistake, not "none").
std::string load_token(const std::string& token_file);

/// Whether a listening address ("HOST:PORT", "[V6]:PORT", "unix:PATH") only accepts
/// connections from this machine: 127.0.0.0/8, ::1, "localhost" and Unix sockets.
bool is_loopback_address(const std::string& address);

/// The credentials for a server listening on `address`, plaintext or TLS. With a token
/// they refuse a call without it on its headers, before its message is read, with
/// check_token's status; without one they take every call. UserError when the options are
/// unsafe (no token on a non-loopback address without `insecure`) or incomplete (TLS
/// without both certificate and key), or a certificate file cannot be read.
std::shared_ptr<grpc::ServerCredentials> server_credentials(const std::string& address,
                                                            const SecurityOptions& options);

/// The credentials for a client or worker channel: TLS when any TLS file is given (the CA
/// to trust, and a certificate and key for mutual TLS), else plaintext. UserError when a
/// file cannot be read.
std::shared_ptr<grpc::ChannelCredentials> channel_credentials(const SecurityOptions& options);

/// Puts `token` (when not empty) on an outgoing call.
void authorize(grpc::ClientContext& context, const std::string& token);

/// OK when `expected` is empty or the call carries exactly that token; otherwise
/// UNAUTHENTICATED with a reason that does not echo what was sent.
grpc::Status check_token(const grpc::ServerContextBase& context, const std::string& expected);

}  // namespace stipple::rpc
