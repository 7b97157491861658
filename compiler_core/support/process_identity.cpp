// Process identities from /proc (see the header).
#include "compiler_core/support/process_identity.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "compiler_core/support/host_probe.h"

namespace stipple {

namespace {

/// Field 22 of /proc/PID/stat, the start time in clock ticks since boot; empty when the
/// process does not exist. The command name (field 2) may hold spaces and parentheses,
/// so the fields are counted after its last ')'.
std::string start_time_of(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string stat;
  if (!in || !std::getline(in, stat)) return "";
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22; ++i) {
    if (!(fields >> field)) return "";
  }
  return field;
}

struct Identity {
  std::string host, pid, start;
};

bool parse(const std::string& text, Identity* out) {
  std::istringstream in(text);
  return static_cast<bool>(in >> out->host >> out->pid >> out->start);
}

}  // namespace

std::string this_process_identity() {
  const std::string pid = std::to_string(::getpid());
  return host_name() + " " + pid + " " + start_time_of(pid);
}

ProcessLiveness process_liveness(const std::string& identity) {
  Identity id;
  if (!parse(identity, &id) || id.host != host_name()) return ProcessLiveness::Unknown;
  if (id.pid.find_first_not_of("0123456789") != std::string::npos) return ProcessLiveness::Unknown;
  return start_time_of(id.pid) == id.start ? ProcessLiveness::Alive : ProcessLiveness::Gone;
}

std::string identity_pid(const std::string& identity) {
  Identity id;
  return parse(identity, &id) ? id.pid : "";
}

std::string identity_host(const std::string& identity) {
  Identity id;
  return parse(identity, &id) ? id.host : "";
}

}  // namespace stipple
