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
  proto::Gpu* gpu = c.mutable_gpu();
  gpu->set_model(w.gpu_model);
  gpu->set_memory_bytes(w.gpu_memory_bytes);
  gpu->set_compute_capability(w.gpu_compute_capability);
  gpu->set_multiprocessors(w.gpu_multiprocessors);
  gpu->set_driver_version(w.gpu_driver_version);
  gpu->set_target(w.gpu_target);
  gpu->set_absent(w.gpu_absent);
  c.set_target(w.target);
  c.set_emulated(w.emulated);
  c.set_stipple_version(w.stipple_version);
  c.set_code_generator(w.code_generator);
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
  w.gpu_compute_capability = c.gpu().compute_capability();
  w.gpu_multiprocessors = c.gpu().multiprocessors();
  w.gpu_driver_version = c.gpu().driver_version();
  w.gpu_target = c.gpu().target();
  w.gpu_absent = c.gpu().absent();
  w.target = c.target();
  w.emulated = c.emulated();
  w.stipple_version = c.stipple_version();
  w.code_generator = c.code_generator();
  return w;
}

}  // namespace stipple
