// The cluster's call security (proto/rpc_security.h) over real gRPC on loopback: a
// Coordinator service whose one implemented call counts the calls that got past the
// token check (what a real handler would write), called with no token, a wrong token and
// the right one; the same over TLS and mutual TLS with throwaway certificates made by the
// openssl command; and the rules for tokens, files and listening addresses.
#include "proto/rpc_security.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>

#include "compiler_core/ir/error.h"
#include "proto/coordinator.grpc.pb.h"
#include "tests/client/shell.h"

namespace stipple::rpc {
namespace {

// Heartbeat is the one call implemented; `accepted` counts calls past the token check.
class CountingCoordinator final : public proto::Coordinator::Service {
 public:
  explicit CountingCoordinator(std::string token) : token_(std::move(token)) {}
  grpc::Status Heartbeat(grpc::ServerContext* context, const proto::HeartbeatRequest* request,
                         proto::HeartbeatResponse* response) override {
    if (grpc::Status st = check_token(*context, token_); !st.ok()) return st;
    ++accepted;
    response->set_known(request->worker_id() == "w1");
    return grpc::Status::OK;
  }
  std::atomic<int> accepted{0};

 private:
  std::string token_;
};

// A server on an ephemeral loopback port (taking messages up to `max_message_bytes`).
struct TestServer {
  TestServer(const SecurityOptions& options, const std::string& host = "127.0.0.1",
             int max_message_bytes = 4 << 20)
      : service(options.token) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort(host + ":0", server_credentials(host + ":0", options), &port);
    builder.SetMaxReceiveMessageSize(max_message_bytes);
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
  }
  ~TestServer() {
    if (server) server->Shutdown(std::chrono::system_clock::now());
  }
  CountingCoordinator service;
  int port = 0;
  std::unique_ptr<grpc::Server> server;
};

grpc::Status heartbeat(const std::string& address, const SecurityOptions& client,
                       proto::HeartbeatResponse* response = nullptr,
                       const std::string& worker_id = "w1") {
  auto stub =
      proto::Coordinator::NewStub(grpc::CreateChannel(address, channel_credentials(client)));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  authorize(context, client.token);
  proto::HeartbeatRequest request;
  request.set_worker_id(worker_id);
  proto::HeartbeatResponse ignored;
  return stub->Heartbeat(&context, request, response ? response : &ignored);
}

// A folder of its own per test, and certificates (the command-line tests' fixture).
using RpcSecurity = stipple::testing_cli::CommandTest;

TEST(RpcSecurityRules, LoopbackAddresses) {
  for (const char* a : {"127.0.0.1:50051", "127.1.2.3:0", "localhost:1", "[::1]:50051", "::1",
                        "unix:/tmp/coordinator.sock"}) {
    EXPECT_TRUE(is_loopback_address(a)) << a;
  }
  for (const char* a : {"0.0.0.0:50051", "[::]:50051", "10.0.0.7:50051", "coordinator:50051",
                        ":50051", "128.0.0.1:1", "[::2]:1"}) {
    EXPECT_FALSE(is_loopback_address(a)) << a;
  }
}

TEST_F(RpcSecurity, TokensComeFromTheFileElseTheEnvironment) {
  EXPECT_EQ(load_token(write("t1", "s3cret\n")), "s3cret");
  EXPECT_EQ(load_token(write("t2", "s3cret\r\nsecond line\n")), "s3cret");
  EXPECT_THROW(load_token(write("empty", "\n")), UserError);
  EXPECT_THROW(load_token(path("missing")), UserError);
  ::setenv("STIPPLE_TOKEN", "from-env", 1);
  EXPECT_EQ(load_token(""), "from-env");
  EXPECT_EQ(load_token(write("t3", "file-wins\n")), "file-wins");
  ::unsetenv("STIPPLE_TOKEN");
  EXPECT_EQ(load_token(""), "");
}

TEST_F(RpcSecurity, NoTokenMeansLoopbackOnlyUnlessInsecure) {
  SecurityOptions none;
  EXPECT_THROW(server_credentials("0.0.0.0:50051", none), UserError);
  EXPECT_THROW(server_credentials("[::]:50051", none), UserError);
  EXPECT_NE(server_credentials("127.0.0.1:50051", none), nullptr);
  SecurityOptions insecure;
  insecure.insecure = true;
  EXPECT_NE(server_credentials("0.0.0.0:50051", insecure), nullptr);
  SecurityOptions token;
  token.token = "t";
  EXPECT_NE(server_credentials("0.0.0.0:50051", token), nullptr);
  SecurityOptions half_tls;
  half_tls.token = "t";
  half_tls.tls.cert = write("cert.pem", "x");
  EXPECT_THROW(server_credentials("127.0.0.1:0", half_tls), UserError);  // no key
  SecurityOptions unreadable;
  unreadable.tls.ca = path("missing.pem");
  EXPECT_THROW(channel_credentials(unreadable), UserError);
}

TEST_F(RpcSecurity, EveryCallNeedsTheToken) {
  SecurityOptions server_side;
  server_side.token = "correct horse";
  TestServer server(server_side);
  ASSERT_TRUE(server.server);
  const std::string address = "127.0.0.1:" + std::to_string(server.port);

  SecurityOptions client;
  grpc::Status st = heartbeat(address, client);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED) << st.error_message();
  EXPECT_NE(st.error_message().find("needs a token"), std::string::npos) << st.error_message();
  client.token = "correct horsf";
  st = heartbeat(address, client);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(st.error_message(), "wrong token");
  client.token = "correct horse and more";
  EXPECT_EQ(heartbeat(address, client).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(server.service.accepted, 0);  // nothing got past the check

  client.token = "correct horse";
  proto::HeartbeatResponse response;
  st = heartbeat(address, client, &response);
  EXPECT_TRUE(st.ok()) << st.error_message();
  EXPECT_TRUE(response.known());
  EXPECT_EQ(server.service.accepted, 1);
}

// The token is judged on a call's headers, before its message is read: a message over the
// server's limit with a wrong token, or none, is UNAUTHENTICATED, where a server that took
// the message in first would answer RESOURCE_EXHAUSTED (as it does with the token).
// Plaintext and TLS alike.
TEST_F(RpcSecurity, TheTokenIsJudgedBeforeTheMessageIsRead) {
  make_ca();
  make_certificate("server");
  if (HasFatalFailure()) return;
  SecurityOptions plaintext;
  plaintext.token = "t";
  SecurityOptions tls = plaintext;
  tls.tls.cert = path("server.pem");
  tls.tls.key = path("server.key");
  const std::string oversize(2 << 20, 'w');
  for (const SecurityOptions& server_side : {plaintext, tls}) {
    SCOPED_TRACE(server_side.tls.enabled() ? "TLS" : "plaintext");
    TestServer server(server_side, "localhost", 1 << 20);
    ASSERT_TRUE(server.server);
    const std::string address = "localhost:" + std::to_string(server.port);
    SecurityOptions client;
    if (server_side.tls.enabled()) client.tls.ca = path("ca.pem");
    for (const char* token : {"", "not-t"}) {
      client.token = token;
      const grpc::Status st = heartbeat(address, client, nullptr, oversize);
      EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED) << st.error_message();
    }
    client.token = "t";
    EXPECT_EQ(heartbeat(address, client, nullptr, oversize).error_code(),
              grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_TRUE(heartbeat(address, client).ok());
    EXPECT_EQ(server.service.accepted, 1);
  }
}

TEST_F(RpcSecurity, WithoutATokenALoopbackServerTakesEveryCall) {
  TestServer server(SecurityOptions{});
  ASSERT_TRUE(server.server);
  EXPECT_TRUE(heartbeat("127.0.0.1:" + std::to_string(server.port), SecurityOptions{}).ok());
  EXPECT_EQ(server.service.accepted, 1);
}

TEST_F(RpcSecurity, TlsAndMutualTls) {
  make_ca();
  make_certificate("server");
  make_certificate("client");
  if (HasFatalFailure()) return;

  // TLS: the client trusts the CA; a client that does not, fails the handshake.
  SecurityOptions tls;
  tls.token = "t";
  tls.tls.cert = path("server.pem");
  tls.tls.key = path("server.key");
  {
    TestServer server(tls, "localhost");
    ASSERT_TRUE(server.server);
    const std::string address = "localhost:" + std::to_string(server.port);
    SecurityOptions client;
    client.token = "t";
    client.tls.ca = path("ca.pem");
    grpc::Status st = heartbeat(address, client);
    EXPECT_TRUE(st.ok()) << st.error_message();
    SecurityOptions plaintext;
    plaintext.token = "t";
    EXPECT_FALSE(heartbeat(address, plaintext).ok());
    EXPECT_EQ(server.service.accepted, 1);
  }

  // Mutual TLS: the server requires a client certificate signed by its CA.
  SecurityOptions mtls = tls;
  mtls.tls.ca = path("ca.pem");
  TestServer server(mtls, "localhost");
  ASSERT_TRUE(server.server);
  const std::string address = "localhost:" + std::to_string(server.port);
  SecurityOptions anonymous;
  anonymous.token = "t";
  anonymous.tls.ca = path("ca.pem");
  EXPECT_FALSE(heartbeat(address, anonymous).ok());
  SecurityOptions known = anonymous;
  known.tls.cert = path("client.pem");
  known.tls.key = path("client.key");
  grpc::Status st = heartbeat(address, known);
  EXPECT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(server.service.accepted, 1);
}

}  // namespace
}  // namespace stipple::rpc
