#include "workers/gpu_probe.h"

#include <cuda.h>  // the driver API's types and constants only: nothing is linked
#include <dlfcn.h>

#include <cstdlib>

namespace stipple::workers {

std::string GpuProbe::compute_capability() const {
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string GpuProbe::target_key() const {
  return "cuda-sm_" + std::to_string(major) + std::to_string(minor) + "-" +
         std::to_string(driver_version / 1000);
}

namespace {

// The driver entry points used, by the names libcuda exports (the _v2 ABI of
// cuDeviceTotalMem that cuda.h's macro selects).
struct Driver {
  CUresult (*init)(unsigned int) = nullptr;
  CUresult (*driver_version)(int*) = nullptr;
  CUresult (*device_count)(int*) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_name)(char*, int, CUdevice) = nullptr;
  CUresult (*device_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*device_memory)(size_t*, CUdevice) = nullptr;
  CUresult (*error_name)(CUresult, const char**) = nullptr;
};

template <typename F>
bool bind(void* library, const char* symbol, F& f) {
  f = reinterpret_cast<F>(::dlsym(library, symbol));
  return f != nullptr;
}

std::string describe(const Driver& d, const char* call, CUresult r) {
  const char* name = nullptr;
  if (d.error_name == nullptr || d.error_name(r, &name) != CUDA_SUCCESS || name == nullptr) {
    return std::string(call) + ": CUDA error " + std::to_string(static_cast<int>(r));
  }
  return std::string(call) + ": " + name;
}

}  // namespace

GpuProbe probe_gpu(const std::string& driver_library) {
  GpuProbe p;
  const char* override_library = std::getenv("STIPPLE_CUDA_DRIVER");
  const std::string library = override_library != nullptr ? override_library : driver_library;
  // Kept loaded for the life of the process: the driver does not support being unloaded.
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    p.why_not = "no CUDA driver (" + (why != nullptr ? std::string(why) : library) + ")";
    return p;
  }
  Driver d;
  if (!bind(handle, "cuInit", d.init) || !bind(handle, "cuDriverGetVersion", d.driver_version) ||
      !bind(handle, "cuDeviceGetCount", d.device_count) ||
      !bind(handle, "cuDeviceGet", d.device_get) ||
      !bind(handle, "cuDeviceGetName", d.device_name) ||
      !bind(handle, "cuDeviceGetAttribute", d.device_attribute) ||
      !bind(handle, "cuDeviceTotalMem_v2", d.device_memory)) {
    p.why_not = "no CUDA driver (" + library + " lacks the driver API)";
    return p;
  }
  bind(handle, "cuGetErrorName", d.error_name);  // optional: numbers without it
  if (const CUresult r = d.init(0); r != CUDA_SUCCESS) {
    p.why_not = describe(d, "cuInit", r);
    return p;
  }
  int count = 0;
  if (const CUresult r = d.device_count(&count); r != CUDA_SUCCESS || count < 1) {
    p.why_not = r != CUDA_SUCCESS ? describe(d, "cuDeviceGetCount", r) : "no CUDA device";
    return p;
  }
  CUdevice device = 0;
  char name[256] = {};
  size_t memory = 0;
  CUresult r = d.device_get(&device, 0);
  if (r == CUDA_SUCCESS) r = d.device_name(name, sizeof name - 1, device);
  if (r == CUDA_SUCCESS) {
    r = d.device_attribute(&p.major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
  }
  if (r == CUDA_SUCCESS) {
    r = d.device_attribute(&p.minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
  }
  if (r == CUDA_SUCCESS) {
    r = d.device_attribute(&p.multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
  }
  if (r == CUDA_SUCCESS) r = d.device_memory(&memory, device);
  if (r == CUDA_SUCCESS) r = d.driver_version(&p.driver_version);
  if (r != CUDA_SUCCESS) {
    p.why_not = describe(d, "querying device 0", r);
    return p;
  }
  p.found = true;
  p.model = name;
  p.memory_bytes = static_cast<int64_t>(memory);
  return p;
}

}  // namespace stipple::workers
