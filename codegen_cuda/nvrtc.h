// NVRTC, loaded with dlopen (libnvrtc.so.13 from the CUDA 13 toolkit), so that binaries linking
// codegen_cuda start on machines without CUDA and report "NVRTC not found" only when asked to
// compile. NVRTC needs no GPU and no driver.
//
//   absl::StatusOr<NvrtcResult> r = CompileCudaSource(source, "module.cu", "sm_90");
//   r->cubin; r->ptx; r->registers["coil_k3"];
#ifndef COIL_CODEGEN_CUDA_NVRTC_H_
#define COIL_CODEGEN_CUDA_NVRTC_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace coil::codegen_cuda {

struct NvrtcResult {
  std::string cubin;
  std::string ptx;
  std::string log;  // NVRTC's and ptxas' messages (-v)
  // Per entry function, from ptxas -v: registers per thread and static shared memory bytes.
  absl::flat_hash_map<std::string, int> registers;
  absl::flat_hash_map<std::string, int> shared_bytes;
};

// Compiles `source` for `arch` ("sm_90": CUBIN for that GPU, plus its PTX) with -std=c++17
// and no include path (the source is self-contained). Errors: NVRTC not loadable
// (FailedPrecondition, naming the files tried); a compile error (Internal: generated code that
// does not compile is a code generator bug), with NVRTC's log.
absl::StatusOr<NvrtcResult> CompileCudaSource(const std::string& source, const std::string& name,
                                              const std::string& arch);

// "13.0" (NVRTC's version), or an error when NVRTC cannot be loaded.
absl::StatusOr<std::string> NvrtcVersion();

}  // namespace coil::codegen_cuda

#endif  // COIL_CODEGEN_CUDA_NVRTC_H_
