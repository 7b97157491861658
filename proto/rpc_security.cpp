#include "proto/rpc_security.h"

#include <arpa/inet.h>
#include <grpc/grpc_security.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "compiler_core/ir/error.h"
#include "compiler_core/support/files.h"

namespace stipple::rpc {

namespace {

constexpr const char* kTokenVariable = "STIPPLE_TOKEN";
constexpr const char* kAuthorization = "authorization";
constexpr const char* kBearer = "Bearer ";

// Compares in time independent of where the strings differ, so that a client cannot learn
// the token a prefix at a time from response times. Hand-written: it is four lines, and
// OpenSSL's CRYPTO_memcmp would be a new dependency for them.
bool equal_in_constant_time(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  }
  return diff == 0;
}

// The host part of "HOST:PORT" or "[V6]:PORT" (the whole text when there is no port).
std::string host_of(const std::string& address) {
  if (!address.empty() && address.front() == '[') {
    const size_t close = address.find(']');
    return close == std::string::npos ? address : address.substr(1, close - 1);
  }
  const size_t colon = address.rfind(':');
  // More than one colon without brackets: a bare IPv6 address with no port.
  if (colon != std::string::npos && address.find(':') == colon) return address.substr(0, colon);
  return address;
}

// The token rule, on the value of a call's "authorization" header (nullopt: none sent):
// check_token and the servers' metadata processor both judge by it.
grpc::Status judge_authorization(const std::optional<grpc::string_ref>& sent,
                                 const std::string& expected) {
  if (expected.empty()) return grpc::Status::OK;
  if (!sent) {
    return grpc::Status(
        grpc::StatusCode::UNAUTHENTICATED,
        "this coordinator needs a token: give --token-file or set " + std::string(kTokenVariable));
  }
  const std::string value(sent->data(), sent->size());
  const std::string bearer = kBearer;
  if (value.rfind(bearer, 0) != 0 ||
      !equal_in_constant_time(value.substr(bearer.size()), expected)) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "wrong token");
  }
  return grpc::Status::OK;
}

// gRPC core's metadata processor (state: the expected token). It runs in the server's
// auth filter on a call's initial metadata, before the server asks the transport for the
// call's message, so a refused call's body is never read into memory: HTTP/2 flow control
// leaves it with the client. Inline, not on a thread: the check is a comparison.
void process_token(void* state, grpc_auth_context* /*peer: the token alone decides*/,
                   const grpc_metadata* metadata, size_t count,
                   grpc_process_auth_metadata_done_cb done, void* call) {
  std::optional<grpc::string_ref> sent;
  for (size_t i = 0; i < count; ++i) {
    const grpc_slice& key = metadata[i].key;
    if (grpc::string_ref(reinterpret_cast<const char*>(GRPC_SLICE_START_PTR(key)),
                         GRPC_SLICE_LENGTH(key)) == kAuthorization) {
      const grpc_slice& value = metadata[i].value;
      sent = grpc::string_ref(reinterpret_cast<const char*>(GRPC_SLICE_START_PTR(value)),
                              GRPC_SLICE_LENGTH(value));
    }
  }
  const grpc::Status st = judge_authorization(sent, *static_cast<const std::string*>(state));
  // Nothing consumed: the handlers' check_token sees the same header.
  done(call, nullptr, 0, nullptr, 0, static_cast<grpc_status_code>(st.error_code()),
       st.ok() ? nullptr : st.error_message().c_str());
}

// Server credentials, plaintext or TLS, that refuse a call without the token (when there
// is one) on its headers. gRPC's own InsecureServerCredentials cannot take a metadata
// processor (1.51 asserts), so both kinds are built from gRPC core's credentials, which can.
class TokenServerCredentials final : public grpc::ServerCredentials {
 public:
  /// `tls` null: plaintext.
  TokenServerCredentials(const std::string& token, const grpc::SslServerCredentialsOptions* tls) {
    // Built here, not by the caller: the base class has initialised gRPC.
    if (tls == nullptr) {
      core_ = grpc_insecure_server_credentials_create();
    } else {
      std::vector<grpc_ssl_pem_key_cert_pair> pairs;
      for (const auto& pair : tls->pem_key_cert_pairs)
        pairs.push_back({pair.private_key.c_str(), pair.cert_chain.c_str()});
      core_ = grpc_ssl_server_credentials_create_ex(
          tls->pem_root_certs.empty() ? nullptr : tls->pem_root_certs.c_str(), pairs.data(),
          pairs.size(), tls->client_certificate_request, nullptr);
    }
    if (!token.empty()) {
      grpc_server_credentials_set_auth_metadata_processor(
          core_, {process_token, [](void* state) { delete static_cast<std::string*>(state); },
                  new std::string(token)});
    }
  }
  ~TokenServerCredentials() override { grpc_server_credentials_release(core_); }
  TokenServerCredentials(const TokenServerCredentials&) = delete;
  TokenServerCredentials& operator=(const TokenServerCredentials&) = delete;

  // gRPC's interface; nothing here calls it. Another processor would silently replace the
  // token check, so it is refused rather than taken.
  void SetAuthMetadataProcessor(const std::shared_ptr<grpc::AuthMetadataProcessor>&) override {
    throw std::logic_error("the coordinator's server credentials check its token themselves");
  }

 private:
  int AddPortToServer(const std::string& address, grpc_server* server) override {
    return grpc_server_add_http2_port(server, address.c_str(), core_);
  }

  grpc_server_credentials* core_ = nullptr;
};

}  // namespace

std::string load_token(const std::string& token_file) {
  if (!token_file.empty()) {
    std::istringstream lines(read_text_file(token_file, "token file"));
    std::string token;
    std::getline(lines, token);
    while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
    if (token.empty()) throw UserError("the token file '" + token_file + "' has no token");
    return token;
  }
  const char* env = std::getenv(kTokenVariable);
  return env ? std::string(env) : std::string();
}

bool is_loopback_address(const std::string& address) {
  if (address.rfind("unix:", 0) == 0 || address.rfind("unix-abstract:", 0) == 0) return true;
  const std::string host = host_of(address);
  if (host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;  // 127.0.0.0/8
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;  // a name other than localhost, an empty host or 0.0.0.0 / [::]
}

std::shared_ptr<grpc::ServerCredentials> server_credentials(const std::string& address,
                                                            const SecurityOptions& options) {
  if (options.token.empty() && !options.insecure && !is_loopback_address(address)) {
    throw UserError("refusing to listen on " + address +
                    " without a token: give --token-file (or set " + kTokenVariable +
                    "), listen on a loopback address, or pass --insecure");
  }
  if (!options.tls.enabled())
    return std::make_shared<TokenServerCredentials>(options.token, nullptr);
  if (options.tls.cert.empty() || options.tls.key.empty()) {
    throw UserError("TLS needs both the server's certificate and its key");
  }
  grpc::SslServerCredentialsOptions ssl(
      options.tls.ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                             : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  if (!options.tls.ca.empty())
    ssl.pem_root_certs = read_text_file(options.tls.ca, "CA certificate");
  ssl.pem_key_cert_pairs.push_back({read_text_file(options.tls.key, "private key"),
                                    read_text_file(options.tls.cert, "certificate")});
  return std::make_shared<TokenServerCredentials>(options.token, &ssl);
}

std::shared_ptr<grpc::ChannelCredentials> channel_credentials(const SecurityOptions& options) {
  if (!options.tls.enabled()) return grpc::InsecureChannelCredentials();
  if (options.tls.cert.empty() != options.tls.key.empty()) {
    throw UserError("a client certificate needs its key, and a key its certificate");
  }
  grpc::SslCredentialsOptions ssl;
  if (!options.tls.ca.empty())
    ssl.pem_root_certs = read_text_file(options.tls.ca, "CA certificate");
  if (!options.tls.cert.empty()) {
    ssl.pem_cert_chain = read_text_file(options.tls.cert, "certificate");
    ssl.pem_private_key = read_text_file(options.tls.key, "private key");
  }
  return grpc::SslCredentials(ssl);
}

void authorize(grpc::ClientContext& context, const std::string& token) {
  if (!token.empty()) context.AddMetadata(kAuthorization, std::string(kBearer) + token);
}

grpc::Status check_token(const grpc::ServerContextBase& context, const std::string& expected) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(kAuthorization);
  return judge_authorization(
      it == metadata.end() ? std::nullopt : std::optional<grpc::string_ref>(it->second), expected);
}

}  // namespace stipple::rpc
