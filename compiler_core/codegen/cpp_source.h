// The C++ source back end: a LoweredFunction as one self-contained, portable C++17 file
// (what `stipple compile --emit cpp` writes), for users who compile a tuned pipeline with
// their own compiler on any platform, like Halide's c_source output.
//
//   AotOptions opt;  opt.symbol = "two_pass_blur";
//   std::string text = cpp_source(lowered, opt);   // c++ -O2 -std=c++17 -pthread -c
//   two_pass_blur.cpp
//
// The file defines exactly the function of the AOT header (aot.h, AOT.md),
//
//   extern "C" int32_t NAME(const stipple_buffer* buffers, const double* params);
//
// with the same descriptor struct (the header's shared block, verbatim), the same
// checks and return codes, and the semantics of the LLVM generator (codegen_*.cpp): integer
// arithmetic wrapping in its own width, floor division and Euclidean modulo without traps,
// saturating float-to-integer casts, min/max as selects, input boundary conditions,
// Stipple's own f32 exp, the median's total order, and no fused multiply-adds (see the
// file's opening comment for compiler flags). It needs only the C++ standard library:
// parallel loops run on std::threads started by the file itself, allocations use malloc.
#pragma once

#include <string>

#include "compiler_core/codegen/aot.h"
#include "compiler_core/codegen/codegen_llvm.h"

namespace stipple::codegen {

/// The C++ source of `f` exported as options.symbol (check_c_function_name must accept
/// it). options.target is not used. Throws InternalError on IR the LLVM generator would
/// also reject (an unbound variable, an access to an unknown buffer, a type mismatch).
std::string cpp_source(const LoweredFunction& f, const AotOptions& options);

/// The CUDA C++ source of `f` (what `stipple compile --target cuda-sm_NN --emit cu` writes):
/// each band of GPU block loops (with the thread loops directly inside it) becomes a
/// __global__ kernel launched with one block per point of the band and one thread per
/// point of the thread loops' split factors; the code around the bands runs on the host,
/// and an Allocate there is device memory. Exports options.symbol (host buffers: copies in
/// and out) and options.symbol + "_device" (device buffers). Throws UserError when a func
/// is computed outside every kernel, or a kernel's shape cannot be launched.
std::string cuda_source(const LoweredFunction& f, const AotOptions& options);

}  // namespace stipple::codegen
