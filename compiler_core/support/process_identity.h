// Which process owns something that outlives it (a tuning run marked "running" in a
// database), and whether that process still exists: a killed `stipple tune` leaves its
// run "running" in the file, and only a check of its owner tells a live run from an
// interrupted one.
//
// An identity is "HOST PID START": the host name, the process id and the process's start
// time in clock ticks since boot (/proc/PID/stat, field 22), so that a pid reused by
// another process after a reboot or a wrap-around is not taken for the owner.
#pragma once

#include <string>

namespace stipple {

/// This process's identity.
std::string this_process_identity();

enum class ProcessLiveness {
  Alive,    // on this host, that pid with that start time exists
  Gone,     // on this host, it does not (the pid is free or belongs to another process)
  Unknown,  // another host's process, or an identity that cannot be read
};

ProcessLiveness process_liveness(const std::string& identity);

/// The pid of an identity ("1234"), for messages; empty when it cannot be read.
std::string identity_pid(const std::string& identity);
/// The host of an identity, for messages.
std::string identity_host(const std::string& identity);

}  // namespace stipple
