// Row-major GEMMs on the GPU through cuBLASLt (cublaslt.h): D[b] = relu?(A[b] B[b] + C[b] + bias)
// for A [M, K], B [K, N], D and C [M, N] contiguous, bias [N], b over a batch (strided). One
// handle and one device workspace per executable; per problem (shape, dtype, epilogue,
// pointer alignments) the descriptors and cuBLASLt's heuristic choice of algorithm are made
// once and cached.
//
// cuBLASLt is column-major: a row-major [M, N] = [M, K] x [K, N] is computed as the
// column-major D^T [N, M] = B^T [N, K] x A^T [K, M], so B is cuBLASLt's "A" and the bias,
// one value per column of D, is its per-row bias of D^T.
//
// Precision: f32 GEMMs use CUBLAS_COMPUTE_32F, which never uses TF32, so results stay within
// the CPU backend's tolerance; `allow_tf32` switches to CUBLAS_COMPUTE_32F_FAST_TF32. f16 and
// bf16 accumulate in f32 (and add the epilogue in f32, rounding once); f64 in f64.
#ifndef COIL_RUNTIME_CUDA_GEMM_H_
#define COIL_RUNTIME_CUDA_GEMM_H_

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ir/proto/graph.pb.h"
#include "runtime/cuda/cublaslt.h"
#include "runtime/cuda/cuda_driver.h"

namespace coil::cuda {

struct GemmCall {
  proto::DType dtype = proto::FLOAT32;  // of A, B, C, D and bias
  // D's (and C's) dtype when it differs: f32 for f16/bf16 inputs (gemm_plan.h's forwarding).
  proto::DType d_dtype = proto::DTYPE_UNSPECIFIED;
  // B given as its transpose [N, K] (K contiguous; gemm_plan.h's transpose_b); no batch.
  bool b_transposed = false;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  // Leading dimensions in elements, 0 for the dense ones: B's row pitch (N, or K when
  // transposed; a padded copy's is larger) and D's (and C's) row pitch (N; a padded scratch's
  // is larger). Batched problems keep the dense ones.
  int64_t ldb = 0, ldd = 0;
  CUdeviceptr a = 0, b = 0, d = 0;
  CUdeviceptr c = 0;     // 0: none (beta = 0)
  CUdeviceptr bias = 0;  // 0: none
  bool relu = false;
};

class CublasGemm {
 public:
  // `workspace` (`workspace_bytes` of device memory) stays owned by the caller and must outlive
  // this object. Errors: cublasLtCreate failing.
  // `tune_candidates` > 1 (with `driver`): for a problem of at least kTuneMinFlops without a C
  // matrix, up to that many of the heuristic's algorithms are timed on the first call (one
  // warm-up and 3 timed runs each, CUDA events, one synchronize) and the fastest is kept for
  // the problem; 1 keeps the heuristic's first (the default).
  static absl::StatusOr<std::unique_ptr<CublasGemm>> Create(const CublasLt* lt,
                                                            CUdeviceptr workspace,
                                                            size_t workspace_bytes,
                                                            bool allow_tf32,
                                                            int tune_candidates = 1,
                                                            const CudaDriver* driver = nullptr);
  static constexpr double kTuneMinFlops = 1e9;
  ~CublasGemm();

  // Enqueues the GEMM on `stream`. Returns false (nothing enqueued) when cuBLASLt has no
  // algorithm for it (the caller runs it another way); errors name `where` and the call.
  absl::StatusOr<bool> Run(const GemmCall& call, CUstream stream, const std::string& where);

  // The cuBLASLt version and where it was loaded from: "cuBLASLt 130000 (libcublasLt.so.13)".
  std::string Describe() const;

 private:
  struct Problem;
  CublasGemm(const CublasLt* lt, lt::Handle handle, CUdeviceptr workspace, size_t bytes, bool tf32);
  absl::StatusOr<Problem*> Prepare(const GemmCall& call, CUstream stream, const std::string& where);
  // Enqueues cublasLtMatmul of `call` with `algo`.
  lt::Status Launch(const Problem& p, const lt::Algo& algo, const GemmCall& call, CUstream stream);
  // The index of the fastest of `algos` for `call` (timed; see Create).
  absl::StatusOr<size_t> Fastest(const Problem& p, const std::vector<lt::Algo>& algos,
                                 const GemmCall& call, CUstream stream, const std::string& where);

  const CublasLt* lt_;
  lt::Handle handle_;
  CUdeviceptr workspace_;
  size_t workspace_bytes_;
  bool allow_tf32_;
  int tune_candidates_ = 1;
  const CudaDriver* driver_ = nullptr;
  // (dtype, batch, m, n, k, has c, has bias, relu, alignments of a/b/c/d, d's dtype, b
  // transposed, ldb, ldd) -> its descriptors.
  using Key = std::tuple<int, int64_t, int64_t, int64_t, int64_t, bool, bool, bool, int, int, int,
                         int, int, bool, int64_t, int64_t>;
  absl::flat_hash_map<Key, std::unique_ptr<Problem>> problems_;
};

}  // namespace coil::cuda

#endif  // COIL_RUNTIME_CUDA_GEMM_H_
