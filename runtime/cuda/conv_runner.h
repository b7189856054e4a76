// The CUDA executable's convolutions: every EXTERN aten.convolution kernel of a module planned
// once (conv_plan.h) and run on the GPU through cuDNN (conv.h) in the best way that works,
// tried in this order and remembered per problem by CudnnConv:
//   1. the fused epilogue: relu?(conv + bias + residual) written straight to the epilogue's
//      output; the generated epilogue kernel is then skipped;
//   2. conv + bias as one cuDNN graph into the extern's output, then the generated epilogue;
//   3. the convolution alone, then the module's bias kernel (kernel_abi.h's ConvBiasSymbol),
//      then the generated epilogue;
//   4. nothing on the GPU: the caller runs the kernel on the host as before (unsupported
//      convolutions, no cuDNN, or no engine; why_not() says why).
// Not an API: used by executable.cc.
#ifndef COIL_RUNTIME_CUDA_CONV_RUNNER_H_
#define COIL_RUNTIME_CUDA_CONV_RUNNER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "ir/proto/schedule.pb.h"
#include "runtime/cuda/conv.h"
#include "runtime/cuda/conv_plan.h"
#include "runtime/cuda/cuda_driver.h"

namespace coil::cuda {

class ConvRunner {
 public:
  // Plans every convolution of `schedule`; with `use_cudnn` and any convolution, loads cuDNN
  // (its absence is not an error: library() says so and the convolutions run on the host),
  // allocates the workspace and looks up the module's bias kernels.
  static absl::StatusOr<std::unique_ptr<ConvRunner>> Create(const CudaDriver* d,
                                                            const proto::Schedule& schedule,
                                                            CUmodule module, CUstream stream,
                                                            bool use_cudnn, bool allow_tf32,
                                                            size_t workspace_bytes);
  ~ConvRunner();

  // Runs convolution kernel `k` on the GPU: nullopt when it cannot (the caller runs it on the
  // host), else whether the epilogue ran fused. `shapes` and `sizes` (bytes) are every buffer's
  // at this run, `address` its device address by id.
  absl::StatusOr<std::optional<bool>> Run(
      const proto::Kernel& k, const absl::flat_hash_map<int, std::vector<int64_t>>& shapes,
      const absl::flat_hash_map<int, int64_t>& sizes, const std::vector<uint64_t>& address,
      const std::string& where);

  bool planned(int kernel_id) const { return plans_.contains(kernel_id); }
  // "cuDNN 90100 (libcudnn.so.9)", "none (the module has no aten.convolution)", or why the host
  // runs them ("no cuDNN (...): aten.convolution runs on the host").
  const std::string& library() const { return library_; }
  // Why the last convolution that fell back (to a plainer graph or the host) did ("" if none).
  const std::string& why_not() const { return why_not_; }

 private:
  ConvRunner() = default;
  const CudaDriver* d_ = nullptr;
  CUstream stream_ = nullptr;
  absl::flat_hash_map<int, ConvPlan> plans_;
  std::unique_ptr<CudnnConv> conv_;
  CUdeviceptr workspace_ = 0;
  absl::flat_hash_map<int, CUfunction> bias_kernels_;  // by proto::DType
  // Channels-last convolutions: their constant weights as [C_out, kH, kW, C_in / groups]
  // copies (made at the first run, by buffer id), so that every cuDNN tensor is NHWC.
  absl::StatusOr<CUdeviceptr> NhwcWeight(int id, CUdeviceptr w, const std::vector<int64_t>& shape,
                                         int64_t bytes, const std::string& where);
  absl::flat_hash_set<int> constants_;
  absl::flat_hash_map<int, CUdeviceptr> nhwc_weights_;
  std::string library_ = "none (the module has no aten.convolution)";
  std::string why_not_;
};

}  // namespace coil::cuda

#endif  // COIL_RUNTIME_CUDA_CONV_RUNNER_H_
