// A worker's capabilities (workers/worker_capabilities.h) to and from their message
// (coordinator.proto's Capabilities): the worker sends them, the coordinator keeps them and
// lists them to clients.
#pragma once

#include "compiler_core/support/host_capabilities.h"
#include "proto/coordinator.pb.h"

namespace stipple {

proto::Capabilities to_proto(const HostCapabilities& w);
HostCapabilities from_proto(const proto::Capabilities& c);

}  // namespace stipple
