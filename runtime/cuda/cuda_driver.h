// The CUDA driver API, loaded with dlopen("libcuda.so.1") on first use: nothing links against
// CUDA, so binaries start on machines without a GPU and CudaDriver::Get() says "no CUDA driver"
// there as a clean FailedPrecondition. Only the calls the runtime needs are declared (types as
// the driver ABI defines them; no CUDA header is needed to build).
//
//   absl::StatusOr<const CudaDriver*> d = CudaDriver::Get();
//   if (!d.ok()) ...;                                   // "no CUDA driver (libcuda.so.1: ...)"
//   absl::Status s = (*d)->Check((*d)->MemAlloc(&ptr, n), "cuMemAlloc", "kernel 3 'add'");
#ifndef COIL_RUNTIME_CUDA_CUDA_DRIVER_H_
#define COIL_RUNTIME_CUDA_CUDA_DRIVER_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace coil::cuda {

using CUresult = int;  // 0: CUDA_SUCCESS
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;

// CUstreamCaptureMode: other threads' unsafe calls (cuMemAlloc...) do not break a capture.
inline constexpr int kStreamCaptureModeRelaxed = 2;

// CUDA_MEMCPY2D (cuda.h): a pitched copy of Height rows of WidthInBytes; only device-to-device
// copies are made here (kMemoryTypeDevice, no arrays, no host pointers).
inline constexpr int kMemoryTypeDevice = 2;
struct CudaMemcpy2D {
  size_t src_x_bytes = 0, src_y = 0;
  int src_memory_type = kMemoryTypeDevice;
  const void* src_host = nullptr;
  CUdeviceptr src_device = 0;
  void* src_array = nullptr;
  size_t src_pitch = 0;
  size_t dst_x_bytes = 0, dst_y = 0;
  int dst_memory_type = kMemoryTypeDevice;
  void* dst_host = nullptr;
  CUdeviceptr dst_device = 0;
  void* dst_array = nullptr;
  size_t dst_pitch = 0;
  size_t width_bytes = 0, height = 0;
};
static_assert(sizeof(CudaMemcpy2D) == 128, "CUDA_MEMCPY2D's layout");

// CUdevice_attribute values used here.
inline constexpr int kAttrComputeCapabilityMajor = 75;
inline constexpr int kAttrComputeCapabilityMinor = 76;
inline constexpr int kAttrMultiprocessorCount = 16;

struct CudaDriver {
  CUresult (*Init)(unsigned);
  CUresult (*DriverGetVersion)(int*);
  CUresult (*DeviceGetCount)(int*);
  CUresult (*DeviceGet)(CUdevice*, int);
  CUresult (*DeviceGetName)(char*, int, CUdevice);
  CUresult (*DeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*DevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*DevicePrimaryCtxRelease)(CUdevice);
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*StreamCreate)(CUstream*, unsigned);
  CUresult (*StreamDestroy)(CUstream);
  CUresult (*StreamSynchronize)(CUstream);
  CUresult (*ModuleLoadData)(CUmodule*, const void*);
  CUresult (*ModuleUnload)(CUmodule);
  CUresult (*ModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, CUstream, void**, void**);
  CUresult (*MemAlloc)(CUdeviceptr*, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream);
  CUresult (*MemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream);
  CUresult (*MemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*Memcpy2DAsync)(const CudaMemcpy2D*, CUstream);
  // Events: the runtime's device-side timings (executable.h's RunTimes, per-kernel profile).
  CUresult (*EventCreate)(CUevent*, unsigned);
  CUresult (*EventDestroy)(CUevent);
  CUresult (*EventRecord)(CUevent, CUstream);
  CUresult (*EventElapsedTime)(float*, CUevent, CUevent);
  // CUDA graphs (cuda_graphs.h): capture a stream's work, instantiate it, replay it. Null
  // when the driver lacks them (then no graph is captured, and cuda_graphs.h says why).
  CUresult (*StreamBeginCapture)(CUstream, int);
  CUresult (*StreamEndCapture)(CUstream, CUgraph*);
  CUresult (*GraphInstantiate)(CUgraphExec*, CUgraph, unsigned long long);
  CUresult (*GraphLaunch)(CUgraphExec, CUstream);
  CUresult (*GraphExecDestroy)(CUgraphExec);
  CUresult (*GraphDestroy)(CUgraph);
  // A host function in stream order (the stream waits until it returns); null when the driver
  // lacks it. Only the timing probe (executable.cc, COIL_CUDA_TIMING_PROBE=gate) uses it.
  CUresult (*LaunchHostFunc)(CUstream, void (*)(void*), void*);
  // Pinned host memory (executable.h's pinned_inputs); null when the driver lacks them.
  CUresult (*MemHostAlloc)(void**, size_t, unsigned);
  CUresult (*MemFreeHost)(void*);
  CUresult (*GetErrorName)(CUresult, const char**);
  CUresult (*GetErrorString)(CUresult, const char**);

  // The process-wide driver, loaded and cuInit'ed once. Errors (FailedPrecondition): no
  // libcuda.so.1 ("no CUDA driver"), a driver without these entry points, cuInit failing (no
  // device), each with the reason.
  static absl::StatusOr<const CudaDriver*> Get();

  // Whether libcuda.so.1 loads and has cuInit, without initializing CUDA: a process may fork
  // after it (CUDA state does not survive a fork, so a parent that probes with Get() and then
  // forks children that use CUDA would see CUDA_ERROR_NOT_INITIALIZED in them). The error is
  // Get()'s "no CUDA driver (libcuda.so.1: ...)".
  static absl::Status Probe();

  // OK for CUDA_SUCCESS, else an Internal error "<call> for <where>: CUDA_ERROR_X (text)".
  absl::Status Check(CUresult r, const char* call, const std::string& where) const;
};

}  // namespace coil::cuda

#endif  // COIL_RUNTIME_CUDA_CUDA_DRIVER_H_
