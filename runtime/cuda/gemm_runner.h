// The CUDA executable's GEMMs: every EXTERN aten.mm / aten.bmm kernel of a module planned once
// (gemm_plan.h) and run on the GPU through cuBLASLt (gemm.h), in the first way that applies:
//   1. forwarded: the GEMM writes the graph output its only reader copies or widens it into,
//      and that copy kernel is not launched (forwarded() says so for this run);
//   2. fused: the epilogue (bias, a matrix, relu) applied by cuBLASLt, written straight to the
//      epilogue's output; the generated epilogue kernel is then skipped;
//   3. plain: the GEMM into the extern's output, then the generated epilogue;
//   4. nothing on the GPU: the caller runs the kernel on the host (no cuBLASLt, unsupported
//      dtypes, overlapping operands, no algorithm).
// Leading dimensions (GPT-2's LM head: N = 50257): cuBLASLt's fast Hopper kernels need every
// row to start on 16 bytes. A constant B whose rows do not is kept a second time in a layout
// whose rows do (transposed for f32 / f64, padded for f16 / bf16: gemm_plan.h); a large f16 /
// bf16 GEMM whose output rows do not is written in its own dtype into a scratch matrix with
// padded rows, then copied into the output by one pitched copy (cuMemcpy2DAsync) or, when the
// output is f32 (forwarding), widened into it by the module's GemmWidenRowsSymbol kernel. On an
// H200, torch's own bf16 mm of that shape takes 3.36 ms with N = 50257 and 0.45 ms with N
// padded to 50264; an f32 D gained nothing from padded rows (H100: 6.17 -> 7.18 ms with the
// copy), so f32 GEMMs write their output directly. With B padded too (zero columns), the GEMM
// computes the whole padded width, as Inductor's pad_mm: cuBLASLt's choice depends on N itself
// (GPT-2 bf16's LM head on an H200: 2.53 ms, 3.5 with padded rows and N = 50257, 1.49 with
// N = 50264 and the widening). Both paddings are on by default (GemmRunnerOptions below are
// the runner's own; CudaExecutableOptions sets them).
// Not an API: used by executable.cc.
#ifndef COIL_RUNTIME_CUDA_GEMM_RUNNER_H_
#define COIL_RUNTIME_CUDA_GEMM_RUNNER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ir/proto/schedule.pb.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/gemm.h"
#include "runtime/cuda/gemm_plan.h"

namespace coil::cuda {

struct GemmRunnerOptions {
  bool use_cublaslt = true;
  bool allow_tf32 = false;
  size_t workspace_bytes = size_t{32} << 20;
  int forward = 2;            // gemm_plan.h's forwarding: 0 never, 1 same dtype, 2 widenings too
  bool transpose_b = true;    // the transposed copy of a misaligned constant f32 / f64 B
  bool pad_b = false;         // the padded copy of a misaligned constant B otherwise
  bool pad_d = false;         // large half GEMMs with misaligned output rows: a padded scratch
  int tune = 1;               // cuBLASLt candidates timed per large problem (gemm.h)
};

class GemmRunner {
 public:
  // Plans every GEMM of `schedule`; with `use_cublaslt` and any GEMM, loads cuBLASLt (its
  // absence is not an error: library() says so and on_host() is true), allocates the workspace
  // and makes the transposed / padded copies of misaligned constant B operands from
  // `constants` (buffer id -> its device copy; `graph` and `external_data_dir` load a constant
  // to transpose it).
  static absl::StatusOr<std::unique_ptr<GemmRunner>> Create(
      const CudaDriver* d, const proto::Schedule& schedule, const Graph& graph,
      const std::string& external_data_dir,
      const absl::flat_hash_map<int, CUdeviceptr>& constants, CUmodule module, CUstream stream,
      const GemmRunnerOptions& options);
  ~GemmRunner();

  // Runs GEMM kernel `k` on the GPU: nullopt when it cannot (the caller runs it on the host),
  // else whether its epilogue (or the forwarded copy) ran, so that the generated kernel after
  // it is skipped. `shapes` and `sizes` (bytes) are every buffer's at this run, `address` its
  // device address by id.
  absl::StatusOr<std::optional<bool>> Run(
      const proto::Kernel& k, const absl::flat_hash_map<int, std::vector<int64_t>>& shapes,
      const absl::flat_hash_map<int, int64_t>& sizes, const std::vector<uint64_t>& address,
      const std::string& where);

  // Called before a run's first kernel: forgets the previous run's forwarded copies.
  void BeginRun() { forwarded_.clear(); }
  bool planned(int kernel_id) const { return plans_.contains(kernel_id); }
  // Whether a GEMM of this run wrote the output of copy kernel `kernel_id` (skip it).
  bool forwarded(int kernel_id) const { return forwarded_.contains(kernel_id); }
  // "cuBLASLt 130000 (libcublasLt.so.13)", "none (the module has no aten.mm / aten.bmm)", or
  // why the host runs them.
  const std::string& library() const { return library_; }
  // cuBLASLt did not load: every GEMM runs on the host.
  bool on_host() const { return on_host_; }

 private:
  GemmRunner() = default;
  // Makes the kept copy of plan `p`'s misaligned constant B.
  absl::Status KeepAlignedB(const GemmPlan& p, const proto::Buffer& b, const Graph& graph,
                            const std::string& external_data_dir, CUdeviceptr uploaded);
  // Runs `call`, through the padded scratch when it is a large f16 / bf16 GEMM whose output rows
  // are misaligned (pad_d): the GEMM's dtype into the scratch, then a pitched copy into D, or
  // the module's widening kernel when D is f32 (gemm_plan.h's forwarding).
  absl::StatusOr<bool> RunInto(GemmCall call, const std::string& where);
  absl::StatusOr<CUdeviceptr> Alloc(size_t bytes, const std::string& where);

  const CudaDriver* d_ = nullptr;
  CUstream stream_ = nullptr;
  GemmRunnerOptions options_;
  absl::flat_hash_map<int, GemmPlan> plans_;
  // B buffer id -> its kept copy and that copy's leading dimension (transposed: K; padded: the
  // padded N; elements).
  struct AlignedB {
    CUdeviceptr address = 0;
    int64_t ld = 0;
    bool transposed = false;
  };
  absl::flat_hash_map<int, AlignedB> aligned_b_;
  absl::flat_hash_map<int, CUfunction> widen_;  // proto::DType -> GemmWidenRowsSymbol's kernel
  absl::flat_hash_set<int> forwarded_;  // copy kernels a GEMM wrote the output of, this run
  std::unique_ptr<CublasGemm> gemm_;
  CUdeviceptr workspace_ = 0;
  // The padded output scratch: the current one and its size. Replaced ones stay allocated until
  // the runner goes (a captured CUDA graph may still write them).
  CUdeviceptr scratch_ = 0;
  size_t scratch_bytes_ = 0;
  std::vector<CUdeviceptr> allocations_;
  std::string library_ = "none (the module has no aten.mm / aten.bmm)";
  bool on_host_ = false;
};

}  // namespace coil::cuda

#endif  // COIL_RUNTIME_CUDA_GEMM_RUNNER_H_
