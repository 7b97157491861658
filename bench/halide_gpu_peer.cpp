// halide_gpu_peer: the GPU device check's peer (issue #31). Compiles the Halide 14 version
// of benchmark pipelines (halide_algorithms.h) under the GPU schedule of Halide's apps,
// ahead of time, for CUDA: per pipeline a static library with the PTX inside and Halide's
// runtime, and its header. tests/gpu/prepare_bundle.sh runs this on the CPU host; on the
// GPU host, device_check.sh links each library into the harness beside the pipeline's
// Stipple kernels, so that both run on the same buffers and are timed the same way.
//
// The target's CUDA capability is 8.0: Debian's LLVM 14 writes PTX for sm_80 at most, and
// the driver of a newer GPU (sm_90) compiles that PTX when the module is loaded, in the
// warm-up runs.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/halide_algorithms.h"

namespace {

constexpr const char* kDefaultTarget = "x86-64-linux-sse41-cuda-cuda_capability_80";

int usage(FILE* to) {
  std::fprintf(to,
               "usage: halide_gpu_peer OUT_DIR PIPELINE...\n"
               "Writes OUT_DIR/PIPELINE.halide.a and .h: the Halide 14 version of each\n"
               "pipeline under Halide's GPU schedule, compiled for CUDA, with the entry point\n"
               "halide_pipeline; a pipeline with no Halide GPU schedule is skipped, with a\n"
               "note. The target is %s unless\n"
               "STIPPLE_HALIDE_GPU_TARGET names another. Exit 1 if one failed to compile.\n",
               kDefaultTarget);
  return to == stdout ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h"))) {
    return usage(stdout);
  }
  if (argc < 3) return usage(stderr);
  const std::string out_dir = argv[1];
  const char* env_target = std::getenv("STIPPLE_HALIDE_GPU_TARGET");
  const Halide::Target target(env_target ? env_target : kDefaultTarget);
  int failed = 0;
  for (int arg = 2; arg < argc; ++arg) {
    const std::string name = argv[arg];
    if (!stipple::bench::has_algorithm(name)) {
      std::fprintf(stderr, "halide_gpu_peer: skipped %s: no Halide version\n", name.c_str());
      continue;
    }
    stipple::bench::HalideAlgorithm a = stipple::bench::algorithm(name);
    if (!a.schedule_for_gpu) {
      std::fprintf(stderr, "halide_gpu_peer: skipped %s: no Halide GPU schedule\n", name.c_str());
      continue;
    }
    a.schedule_for_gpu();
    try {
      a.output.compile_to_static_library(out_dir + "/" + name + ".halide",
                                         a.output.infer_arguments(), "halide_pipeline", target);
    } catch (const Halide::Error& e) {
      std::fprintf(stderr, "halide_gpu_peer: %s: %s\n", name.c_str(), e.what());
      failed = 1;
      continue;
    }
    std::printf("%s/%s.halide.a (%s)\n", out_dir.c_str(), name.c_str(), target.to_string().c_str());
  }
  return failed;
}
