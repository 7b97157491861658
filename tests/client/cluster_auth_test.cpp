// The coordinator under a flood of unauthenticated oversize calls (issue #25, item 4): a
// real `stipple coordinator` process with a token on loopback (cluster_fixture.h), sent
// rounds of concurrent SubmitRun calls of about 60 MB each, every one on a connection of
// its own, with a wrong token or none. Every call must be refused with UNAUTHENTICATED and
// the coordinator's peak resident memory (VmHWM) must stay within kFloodBound of what it
// was before the flood: the token is judged on the call's headers, before its body is
// read, so no body is buffered.
#include <grpcpp/generic/generic_stub.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "cluster_fixture.h"
#include "proto/rpc_security.h"

namespace stipple::testing_cli {
namespace {

/// The flood: kRounds rounds of kConcurrent calls of kBodyBytes each (under the 64 MiB
/// message limit, so that only the token can refuse them).
constexpr int kRounds = 3;
constexpr int kConcurrent = 8;
constexpr size_t kBodyBytes = 60'000'000;
/// How much the coordinator's peak resident memory may grow under the flood: about half
/// of one body, where buffering them would take kConcurrent bodies (480 MB).
constexpr int64_t kFloodBound = 32ll << 20;

/// A line of /proc/PID/status ("VmHWM", "VmRSS") in bytes; -1 when it cannot be read.
int64_t memory_of(pid_t pid, const std::string& field) {
  std::istringstream status(read_file("/proc/" + std::to_string(pid) + "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1)) << 10;
  }
  return -1;
}

class ClusterAuthTest : public ClusterTest {
 protected:
  /// One round: kConcurrent calls of `body` at once, each on a connection of its own (a
  /// channel argument of its own keeps gRPC from sharing one), as `client` (its token
  /// empty: none). Returns their statuses.
  std::vector<grpc::Status> flood(const std::string& address, const rpc::SecurityOptions& client,
                                  const grpc::Slice& body, int round) {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<grpc::Status> statuses;
    std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
    std::vector<std::unique_ptr<grpc::GenericStub>> stubs;
    std::vector<grpc::ByteBuffer> requests(kConcurrent), responses(kConcurrent);
    for (int i = 0; i < kConcurrent; ++i) {
      grpc::ChannelArguments args;
      args.SetInt("stipple.test.connection", round * kConcurrent + i);
      stubs.push_back(std::make_unique<grpc::GenericStub>(
          grpc::CreateCustomChannel(address, rpc::channel_credentials(client), args)));
      contexts.push_back(std::make_unique<grpc::ClientContext>());
      contexts.back()->set_deadline(std::chrono::system_clock::now() + 60s);
      rpc::authorize(*contexts.back(), client.token);
      requests[i] = grpc::ByteBuffer(&body, 1);  // the slice is shared, not copied
    }
    for (int i = 0; i < kConcurrent; ++i) {
      stubs[i]->UnaryCall(contexts[i].get(), "/stipple.proto.Coordinator/SubmitRun",
                          grpc::StubOptions(), &requests[i], &responses[i], [&](grpc::Status s) {
                            std::lock_guard lock(mu);
                            statuses.push_back(s);
                            cv.notify_all();
                          });
    }
    std::unique_lock lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, 90s, [&] { return statuses.size() == size_t(kConcurrent); }));
    return statuses;
  }

  /// Starts a coordinator with a token (and `extra` flags), floods it as `client` with a
  /// wrong token and with none, and checks the refusals and the coordinator's memory; then
  /// that a call with the token is still served.
  void flood_and_measure(const std::vector<std::string>& extra, rpc::SecurityOptions client) {
    write("token", "flood-token\n");
    std::vector<std::string> flags = {"--token-file", path("token")};
    flags.insert(flags.end(), extra.begin(), extra.end());
    const std::string address = start_coordinator(flags);
    ASSERT_FALSE(address.empty());
    const pid_t pid = coordinator_.pid;

    client::ClientOptions right;
    right.address = address;
    right.security = client;
    right.security.token = "flood-token";
    client::CoordinatorClient c(right);
    EXPECT_TRUE(c.runs().empty());  // the server has served a call: its memory is settled

    // A SubmitRunRequest that is one photo's bytes (the token is refused before they parse).
    proto::SubmitRunRequest request;
    request.add_image_contents(std::string(kBodyBytes, 'x'));
    const grpc::Slice body(request.SerializeAsString());
    request.Clear();

    const int64_t hwm_before = memory_of(pid, "VmHWM");
    const int64_t rss_before = memory_of(pid, "VmRSS");
    ASSERT_GT(hwm_before, 0);
    for (int round = 0; round < kRounds; ++round) {
      rpc::SecurityOptions attacker = client;
      attacker.token = round % 2 == 0 ? "not-the-token" : "";
      for (const grpc::Status& st : flood(address, attacker, body, round)) {
        EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED)
            << "round " << round << ": " << st.error_message();
        EXPECT_EQ(st.error_message().find("not-the-token"), std::string::npos);
      }
    }
    const int64_t hwm_after = memory_of(pid, "VmHWM");
    const int64_t rss_after = memory_of(pid, "VmRSS");
    std::cout << "coordinator memory under " << kRounds << " x " << kConcurrent << " calls of "
              << kBodyBytes << " bytes: VmHWM " << (hwm_before >> 20) << " -> " << (hwm_after >> 20)
              << " MiB, VmRSS " << (rss_before >> 20) << " -> " << (rss_after >> 20) << " MiB"
              << std::endl;
    EXPECT_LT(hwm_after - hwm_before, kFloodBound);

    // The coordinator is up and serves a call with the token.
    EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), 0);
    EXPECT_TRUE(c.runs().empty());
  }
};

TEST_F(ClusterAuthTest, AnUnauthenticatedFloodIsRefusedBeforeItsBodiesAreBuffered) {
  flood_and_measure({}, rpc::SecurityOptions{});
}

TEST_F(ClusterAuthTest, AnUnauthenticatedFloodOverTlsIsRefusedBeforeItsBodiesAreBuffered) {
  make_ca();
  make_certificate("coordinator");
  if (HasFatalFailure()) return;
  rpc::SecurityOptions client;
  client.tls.ca = path("ca.pem");
  flood_and_measure({"--tls-cert", path("coordinator.pem"), "--tls-key", path("coordinator.key")},
                    client);
}

}  // namespace
}  // namespace stipple::testing_cli
