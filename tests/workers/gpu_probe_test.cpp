// probe_gpu (workers/gpu_probe.h): what a worker registers of its GPU.
// - A missing driver library and a library without the driver API are "no CUDA driver".
// - A driver library made here (fake_cuda_driver.cpp: the driver API's entry points with
//   an H200's answers) is read field by field: the probe's parsing, the target key.
// - The real libcuda.so.1, where installed: on a host without a GPU, cuInit's error by
//   name; on one with a GPU, plausible values.
#include "workers/gpu_probe.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

namespace stipple::workers {
namespace {

TEST(GpuProbe, NoDriverLibraryMeansNoGpuWithTheReason) {
  ::unsetenv("STIPPLE_CUDA_DRIVER");
  const GpuProbe p = probe_gpu("/nonexistent/libcuda.so.1");
  EXPECT_FALSE(p.found);
  EXPECT_EQ(p.why_not.rfind("no CUDA driver (", 0), 0u) << p.why_not;
  EXPECT_NE(p.why_not.find("/nonexistent/libcuda.so.1"), std::string::npos) << p.why_not;
  // The environment variable names the library instead (how a worker is pointed at one).
  ::setenv("STIPPLE_CUDA_DRIVER", "libm.so.6", 1);
  const GpuProbe m = probe_gpu();
  ::unsetenv("STIPPLE_CUDA_DRIVER");
  EXPECT_FALSE(m.found);
  EXPECT_EQ(m.why_not, "no CUDA driver (libm.so.6 lacks the driver API)");
}

TEST(GpuProbe, ReadsTheDriversAnswers) {
  const GpuProbe p = probe_gpu(FAKE_CUDA_DRIVER);
  ASSERT_TRUE(p.found) << p.why_not;
  EXPECT_EQ(p.model, "Fake NVIDIA H200");
  EXPECT_EQ(p.compute_capability(), "9.0");
  EXPECT_EQ(p.multiprocessors, 132);
  EXPECT_EQ(p.memory_bytes, int64_t{150754820096});
  EXPECT_EQ(p.driver_version, 13000);
  EXPECT_EQ(p.target_key(), "cuda-sm_90-13");
}

TEST(GpuProbe, TheRealDriverAnswersOrSaysWhy) {
  const GpuProbe p = probe_gpu();
  if (p.found) {
    EXPECT_FALSE(p.model.empty());
    EXPECT_GE(p.major, 5);
    EXPECT_GT(p.memory_bytes, int64_t{1} << 30);
    EXPECT_GT(p.multiprocessors, 0);
    EXPECT_GE(p.driver_version, 11000);
  } else {
    // No libcuda at all, or Debian's libcuda1 on a host without a GPU: cuInit's error.
    const bool no_driver = p.why_not.rfind("no CUDA driver (", 0) == 0;
    const bool init_failed = p.why_not.rfind("cuInit: CUDA_ERROR_", 0) == 0;
    EXPECT_TRUE(no_driver || init_failed || p.why_not == "no CUDA device") << p.why_not;
  }
}

}  // namespace
}  // namespace stipple::workers
