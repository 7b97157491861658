// PTX from the CUDA back end's file, by NVIDIA's compiler: what `--emit ptx` writes.
//
// Why nvcc in a child process rather than NVRTC in this one: the file includes C++ standard
// headers (<cstdint>, <cmath>, <limits>, <type_traits>), which NVRTC 11.8 does not provide,
// and its host code uses the CUDA runtime; nvcc compiles it as a user would, and only the
// device side becomes PTX. nvcc is Debian's (`nvidia-cuda-toolkit`, deploy/install-deps.sh)
// or any on the PATH; STIPPLE_NVCC names another. CUDA 11.8's nvcc takes no GCC newer than
// 11, so clang++-14 is its host compiler where it is installed (STIPPLE_NVCC_CCBIN names
// another; empty: nvcc's own choice).
#pragma once

#include <string>

namespace stipple::codegen {

/// The PTX of `cuda_source` (a file cuda_source printed) for `arch` ("sm_90"): the kernels'
/// device code as text, built as AOT.md says (-fmad=false, no fast math). UserError when
/// there is no nvcc, or when nvcc fails (with its messages).
std::string ptx_from_cuda_source(const std::string& cuda_source, const std::string& arch);

}  // namespace stipple::codegen
