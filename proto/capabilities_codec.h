// A worker's capabilities (workers/worker_capabilities.h) to and from their message
// (coordinator.proto's Capabilities): the worker sends them, the coordinator keeps them and
// lists them to clients.
#pragma once

#include "proto/coordinator.pb.h"
#include "workers/worker_capabilities.h"

namespace stipple {

proto::Capabilities to_proto(const workers::WorkerCapabilities& w);
workers::WorkerCapabilities from_proto(const proto::Capabilities& c);

}  // namespace stipple
