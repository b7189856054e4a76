// cuBLASLt, loaded with dlopen("libcublasLt.so.13") on first use, like the driver API
// (cuda_driver.h): nothing links against it, so binaries start without it and the CUDA runtime
// falls back to running GEMMs on the host, saying so (executable.h). Only the calls and enum
// values the runtime uses are declared, as cublasLt.h / cublas_api.h / library_types.h of
// CUDA 13 define them, so no CUDA header is needed to build (as cuda_driver.h).
//
//   absl::StatusOr<const CublasLt*> lt = CublasLt::Get();
//   if (!lt.ok()) ...;  // FailedPrecondition "no cuBLASLt (libcublasLt.so.13: ...)"
//   absl::Status s = (*lt)->Check((*lt)->Matmul(...), "cublasLtMatmul", "kernel 2 'k2_mm'");
#ifndef COIL_RUNTIME_CUDA_CUBLASLT_H_
#define COIL_RUNTIME_CUDA_CUBLASLT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace coil::cuda {

namespace lt {
using Status = int;                          // cublasStatus_t
inline constexpr Status kSuccess = 0;        // CUBLAS_STATUS_SUCCESS
inline constexpr Status kNotSupported = 15;  // CUBLAS_STATUS_NOT_SUPPORTED
using Handle = struct CoilCublasLtContext*;
using MatmulDesc = struct CoilCublasLtMatmulDesc*;
using MatrixLayout = struct CoilCublasLtMatrixLayout*;
using Preference = struct CoilCublasLtPreference*;
using Stream = struct CoilCudaStream*;  // cudaStream_t (a CUstream)
struct Algo {
  uint64_t data[8];  // cublasLtMatmulAlgo_t
};
struct HeuristicResult {  // cublasLtMatmulHeuristicResult_t
  Algo algo;
  size_t workspace_size;
  Status state;
  float waves_count;
  int reserved[4];
};
// cudaDataType_t.
inline constexpr int kR32F = 0, kR64F = 1, kR16F = 2, kR16BF = 14;
// cublasComputeType_t.
inline constexpr int kCompute32F = 68, kCompute32FFastTF32 = 77, kCompute64F = 70;
// cublasLtMatmulDescAttributes_t.
inline constexpr int kDescTransA = 3, kDescEpilogue = 7, kDescBiasPointer = 8,
                     kDescBiasDataType = 26;
// cublasOperation_t.
inline constexpr int32_t kOpT = 1;
// cublasLtEpilogue_t.
inline constexpr uint32_t kEpilogueDefault = 1, kEpilogueRelu = 2, kEpilogueBias = 4,
                          kEpilogueReluBias = 6;
// cublasLtMatrixLayoutAttribute_t.
inline constexpr int kLayoutBatchCount = 5, kLayoutStridedBatchOffset = 6;
// cublasLtMatmulPreferenceAttributes_t.
inline constexpr int kPrefMaxWorkspaceBytes = 1, kPrefReductionSchemeMask = 3,
                     kPrefMinAlignmentA = 5, kPrefMinAlignmentB = 6, kPrefMinAlignmentC = 7,
                     kPrefMinAlignmentD = 8;
// cublasLtReductionScheme_t: split-K partial sums kept in the compute type (f32).
inline constexpr uint32_t kReductionSchemeComputeType = 2;
}  // namespace lt

struct CublasLt {
  lt::Status (*Create)(lt::Handle*);
  lt::Status (*Destroy)(lt::Handle);
  size_t (*GetVersion)();
  lt::Status (*Matmul)(lt::Handle, lt::MatmulDesc, const void* alpha, const void* a,
                       lt::MatrixLayout, const void* b, lt::MatrixLayout, const void* beta,
                       const void* c, lt::MatrixLayout, void* d, lt::MatrixLayout, const lt::Algo*,
                       void* workspace, size_t workspace_bytes, lt::Stream);
  lt::Status (*MatmulDescCreate)(lt::MatmulDesc*, int compute_type, int scale_type);
  lt::Status (*MatmulDescDestroy)(lt::MatmulDesc);
  lt::Status (*MatmulDescSetAttribute)(lt::MatmulDesc, int, const void*, size_t);
  lt::Status (*MatrixLayoutCreate)(lt::MatrixLayout*, int type, uint64_t rows, uint64_t cols,
                                   int64_t ld);
  lt::Status (*MatrixLayoutDestroy)(lt::MatrixLayout);
  lt::Status (*MatrixLayoutSetAttribute)(lt::MatrixLayout, int, const void*, size_t);
  lt::Status (*MatmulPreferenceCreate)(lt::Preference*);
  lt::Status (*MatmulPreferenceDestroy)(lt::Preference);
  lt::Status (*MatmulPreferenceSetAttribute)(lt::Preference, int, const void*, size_t);
  lt::Status (*MatmulAlgoGetHeuristic)(lt::Handle, lt::MatmulDesc, lt::MatrixLayout,
                                       lt::MatrixLayout, lt::MatrixLayout, lt::MatrixLayout,
                                       lt::Preference, int requested, lt::HeuristicResult*,
                                       int* returned);
  const char* (*GetStatusName)(lt::Status);
  // The library's version (cublasLtGetVersion: 130000 for 13.0.0) and where it was found.
  size_t version = 0;
  std::string path;

  // The process-wide library, loaded once from the first of libcublasLt.so.13,
  // libcublasLt.so and the CUDA toolkit's lib64 folders. FailedPrecondition "no cuBLASLt (...
  // each name tried and why ...)" when none loads or one lacks an entry point.
  static absl::StatusOr<const CublasLt*> Get();
  // The same from `names` (dlopen's search for each), not cached: tests use a name that does not
  // exist to see the error.
  static absl::StatusOr<const CublasLt*> Load(const std::vector<std::string>& names);

  // OK for CUBLAS_STATUS_SUCCESS, else an Internal error "<call> for <where>: CUBLAS_STATUS_X".
  absl::Status Check(lt::Status s, const char* call, const std::string& where) const;
};

}  // namespace coil::cuda

#endif  // COIL_RUNTIME_CUDA_CUBLASLT_H_
