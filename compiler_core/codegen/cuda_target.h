// The GPU targets of the CUDA back end: `cuda-sm_NN`, an NVIDIA compute capability N.N.
// The generated source is the same for each; the name picks what the user's nvcc builds
// (-arch=sm_NN) and what a GPU worker's target key names.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace stipple::codegen {

/// Ampere (8.0, 8.6), Ada (8.9) and Hopper (9.0): what CUDA 11.8, Debian 12's toolkit,
/// compiles for.
inline const std::vector<std::string>& cuda_target_names() {
  static const std::vector<std::string> names = {"cuda-sm_80", "cuda-sm_86", "cuda-sm_89",
                                                 "cuda-sm_90"};
  return names;
}

inline bool is_cuda_target(const std::string& target) {
  const std::vector<std::string>& names = cuda_target_names();
  return std::find(names.begin(), names.end(), target) != names.end();
}

/// "sm_90" of "cuda-sm_90": what nvcc's -arch takes.
inline std::string cuda_arch(const std::string& target) { return target.substr(5); }

}  // namespace stipple::codegen
