#include "proto/rpc_security.h"

#include <arpa/inet.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

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
  if (!options.tls.enabled()) return grpc::InsecureServerCredentials();
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
  return grpc::SslServerCredentials(ssl);
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
  if (expected.empty()) return grpc::Status::OK;
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(kAuthorization);
  if (it == metadata.end()) {
    return grpc::Status(
        grpc::StatusCode::UNAUTHENTICATED,
        "this coordinator needs a token: give --token-file or set " + std::string(kTokenVariable));
  }
  const std::string sent(it->second.data(), it->second.size());
  const std::string bearer = kBearer;
  if (sent.rfind(bearer, 0) != 0 || !equal_in_constant_time(sent.substr(bearer.size()), expected)) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "wrong token");
  }
  return grpc::Status::OK;
}

}  // namespace stipple::rpc
