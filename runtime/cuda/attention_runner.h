// The CUDA executable's fused attention: every EXTERN aten.scaled_dot_product_attention kernel
// of a module planned once (attention_plan.h) and launched as the module's attention kernel
// (kernel_abi.h's AttentionSymbol, CoilAttentionParams) on the executable's stream. Kernels the
// plan refuses, and calls whose shapes at this run do not fit (a mask that does not broadcast,
// sizes over 2^31), are left to the caller's host path. Not an API: used by executable.cc.
#ifndef COIL_RUNTIME_CUDA_ATTENTION_RUNNER_H_
#define COIL_RUNTIME_CUDA_ATTENTION_RUNNER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "ir/proto/schedule.pb.h"
#include "runtime/cuda/attention_plan.h"
#include "runtime/cuda/cuda_driver.h"

namespace coil::cuda {

class AttentionRunner {
 public:
  // Plans every attention kernel of `schedule` and looks up the kernels the runnable plans
  // name in `modules` (the module's images). A runnable plan whose kernel no image has is an
  // InvalidArgument (a module generated without it).
  static absl::StatusOr<std::unique_ptr<AttentionRunner>> Create(
      const CudaDriver* d, const proto::Schedule& schedule, const std::vector<CUmodule>& modules,
      CUstream stream);

  // Launches attention kernel `k`: nullopt when it cannot (the caller runs it on the host),
  // false (no epilogue ran fused: there is none) when it was launched, as ConvRunner::Run.
  // `shapes` are every buffer's at this run, `address` its device address by id, `sizes` its
  // bytes.
  absl::StatusOr<std::optional<bool>> Run(const proto::Kernel& k,
                           const absl::flat_hash_map<int, std::vector<int64_t>>& shapes,
                           const absl::flat_hash_map<int, int64_t>& sizes,
                           const std::vector<uint64_t>& address, const std::string& where);

  bool planned(int kernel_id) const { return plans_.contains(kernel_id); }
  // Why the last attention kernel left to the host was ("" if none).
  const std::string& why_not() const { return why_not_; }

 private:
  AttentionRunner() = default;
  const CudaDriver* d_ = nullptr;
  CUstream stream_ = nullptr;
  absl::flat_hash_map<int, AttentionPlan> plans_;
  absl::flat_hash_map<int, CUfunction> functions_;  // kernel id -> its attention kernel
  std::string why_not_;
  absl::flat_hash_set<int> logged_;  // kernels COIL_CUDA_ATTENTION_LOG=1 described
};

}  // namespace coil::cuda

#endif  // COIL_RUNTIME_CUDA_ATTENTION_RUNNER_H_
