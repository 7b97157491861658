#include "proto/capabilities_codec.h"

namespace stipple {

proto::Capabilities to_proto(const HostCapabilities& w) {
  proto::Capabilities c;
  c.set_host(w.host);
  c.set_arch(w.arch);
  c.set_cpu(w.cpu);
  for (const std::string& f : w.isa_features) c.add_isa_features(f);
  c.set_cores(w.cores);
  c.set_l2_cache_bytes(w.l2_bytes);
  c.set_last_level_cache_bytes(w.llc_bytes);
  c.set_vector_bits(w.vector_bits);
  c.mutable_gpu()->set_model(w.gpu_model);
  c.mutable_gpu()->set_memory_bytes(w.gpu_memory_bytes);
  c.set_target(w.target);
  return c;
}

HostCapabilities from_proto(const proto::Capabilities& c) {
  HostCapabilities w;
  w.host = c.host();
  w.arch = c.arch();
  w.cpu = c.cpu();
  w.isa_features.assign(c.isa_features().begin(), c.isa_features().end());
  w.cores = c.cores();
  w.l2_bytes = c.l2_cache_bytes();
  w.llc_bytes = c.last_level_cache_bytes();
  w.vector_bits = c.vector_bits();
  w.gpu_model = c.gpu().model();
  w.gpu_memory_bytes = c.gpu().memory_bytes();
  w.target = c.target();
  return w;
}

}  // namespace stipple
