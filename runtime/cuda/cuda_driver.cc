// The CUDA driver API through dlopen (see cuda_driver.h).
#include "runtime/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <type_traits>

#include "absl/strings/str_cat.h"

namespace coil::cuda {
namespace {

absl::StatusOr<void*> Open() {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* why = dlerror();
    return absl::FailedPreconditionError(
        absl::StrCat("no CUDA driver (libcuda.so.1: ", why != nullptr ? why : "not found", ")"));
  }
  return h;
}

absl::StatusOr<const CudaDriver*> Load() {
  absl::StatusOr<void*> opened = Open();
  if (!opened.ok()) return opened.status();
  void* h = *opened;
  auto* d = new CudaDriver;
  std::string missing;
  auto sym = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
    if (fn == nullptr) absl::StrAppend(&missing, " ", name);
  };
  sym(d->Init, "cuInit");
  sym(d->DriverGetVersion, "cuDriverGetVersion");
  sym(d->DeviceGetCount, "cuDeviceGetCount");
  sym(d->DeviceGet, "cuDeviceGet");
  sym(d->DeviceGetName, "cuDeviceGetName");
  sym(d->DeviceGetAttribute, "cuDeviceGetAttribute");
  sym(d->DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  sym(d->DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  sym(d->CtxSetCurrent, "cuCtxSetCurrent");
  sym(d->StreamCreate, "cuStreamCreate");
  sym(d->StreamDestroy, "cuStreamDestroy_v2");
  sym(d->StreamSynchronize, "cuStreamSynchronize");
  sym(d->ModuleLoadData, "cuModuleLoadData");
  sym(d->ModuleUnload, "cuModuleUnload");
  sym(d->ModuleGetFunction, "cuModuleGetFunction");
  sym(d->LaunchKernel, "cuLaunchKernel");
  sym(d->MemAlloc, "cuMemAlloc_v2");
  sym(d->MemFree, "cuMemFree_v2");
  sym(d->MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  sym(d->MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
  sym(d->MemsetD8Async, "cuMemsetD8Async");
  sym(d->Memcpy2DAsync, "cuMemcpy2DAsync_v2");
  sym(d->EventCreate, "cuEventCreate");
  sym(d->EventDestroy, "cuEventDestroy_v2");
  sym(d->EventRecord, "cuEventRecord");
  // cuEventElapsedTime_v2 since CUDA 12.8 (cuda.h maps the name to it); older drivers have v1.
  d->EventElapsedTime =
      reinterpret_cast<decltype(d->EventElapsedTime)>(dlsym(h, "cuEventElapsedTime_v2"));
  if (d->EventElapsedTime == nullptr) sym(d->EventElapsedTime, "cuEventElapsedTime");
  // Optional: CUDA graphs (cuda.h maps cuStreamBeginCapture to _v2, cuGraphInstantiate to
  // cuGraphInstantiateWithFlags).
  auto optional = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
  };
  optional(d->StreamBeginCapture, "cuStreamBeginCapture_v2");
  optional(d->StreamEndCapture, "cuStreamEndCapture");
  optional(d->GraphInstantiate, "cuGraphInstantiateWithFlags");
  optional(d->GraphLaunch, "cuGraphLaunch");
  optional(d->GraphExecDestroy, "cuGraphExecDestroy");
  optional(d->GraphDestroy, "cuGraphDestroy");
  optional(d->LaunchHostFunc, "cuLaunchHostFunc");
  optional(d->MemHostAlloc, "cuMemHostAlloc");
  optional(d->MemFreeHost, "cuMemFreeHost");
  sym(d->GetErrorName, "cuGetErrorName");
  sym(d->GetErrorString, "cuGetErrorString");
  if (!missing.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the CUDA driver (libcuda.so.1) lacks", missing));
  }
  if (absl::Status s = d->Check(d->Init(0), "cuInit", "the CUDA driver"); !s.ok()) {
    return absl::FailedPreconditionError(s.message());
  }
  int count = 0;
  if (d->DeviceGetCount(&count) != 0 || count == 0) {
    return absl::FailedPreconditionError("the CUDA driver sees no GPU");
  }
  return d;
}

}  // namespace

absl::StatusOr<const CudaDriver*> CudaDriver::Get() {
  static const absl::StatusOr<const CudaDriver*>* driver =
      new absl::StatusOr<const CudaDriver*>(Load());
  return *driver;
}

absl::Status CudaDriver::Probe() {
  absl::StatusOr<void*> h = Open();
  if (!h.ok()) return h.status();
  const bool has_init = dlsym(*h, "cuInit") != nullptr;
  dlclose(*h);
  if (!has_init) return absl::FailedPreconditionError("the CUDA driver (libcuda.so.1) lacks cuInit");
  return absl::OkStatus();
}

absl::Status CudaDriver::Check(CUresult r, const char* call, const std::string& where) const {
  if (r == 0) return absl::OkStatus();
  const char* name = nullptr;
  const char* text = nullptr;
  if (GetErrorName == nullptr || GetErrorName(r, &name) != 0) name = nullptr;
  if (GetErrorString == nullptr || GetErrorString(r, &text) != 0) text = nullptr;
  return absl::InternalError(absl::StrCat(call, " for ", where, ": ",
                                          name != nullptr ? name : absl::StrCat("error ", r),
                                          text != nullptr ? absl::StrCat(" (", text, ")") : ""));
}

}  // namespace coil::cuda
