// Convolutions on the GPU through cuDNN 9's graph (backend) API (cudnn.h): for NCHW-packed
// tensors (2-D ones may be NHWC-packed, each tensor as ConvCall says), Y = relu?(conv(X, W) + bias[C] + R) as one operation graph (a convolution node, then
// pointwise ADD / ADD / RELU_FWD nodes on virtual f32 intermediates) where cuDNN has an engine
// for it, else the convolution alone. One handle and one device workspace per executable; per
// problem (shapes, geometry, dtype, epilogue, pointer alignments) the operation graph, the
// heuristic's (mode A, then fallback) first engine config that finalizes as an execution plan
// within the workspace, and why none did, are made once and cached.
//
// 1-D convolutions run as 2-D ones with a height of 1. Precision: f32 convolutions exclude
// engines whose numerical notes say tensor cores or down-converted inputs (TF32), and every
// dtype excludes FFT and Winograd engines, so results stay within the CPU backend's tolerance
// (`allow_tf32` lifts both); f16/bf16 compute in f32 and exclude reduced-precision reductions;
// f64 in f64.
#ifndef COIL_RUNTIME_CUDA_CONV_H_
#define COIL_RUNTIME_CUDA_CONV_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/proto/graph.pb.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cudnn.h"

namespace coil::cuda {

struct ConvCall {
  proto::DType dtype = proto::FLOAT32;  // of x, w, y, bias and r
  // [N, C_in, *spatial], [C_out, C_in / groups, *kernel], [N, C_out, *spatial_out]: 1-3 spatial
  // dimensions, packed row-major.
  std::vector<int64_t> x_shape, w_shape, y_shape;
  std::vector<int64_t> stride, padding, dilation;  // one per spatial dimension
  CUdeviceptr x = 0, w = 0, y = 0;
  CUdeviceptr bias = 0;  // [C_out] added in the graph, or 0
  CUdeviceptr r = 0;     // a tensor of y's shape added in the graph, or 0
  bool relu = false;
  // 2-D only: the tensor is stored [N, H, W, C] (the weight [C_out, kH, kW, C_in / groups])
  // while its shape above stays the logical NCHW one; y's layout is also r's.
  bool x_nhwc = false, w_nhwc = false, y_nhwc = false;
};

class CudnnConv {
 public:
  // `workspace` (`workspace_bytes` of device memory) stays owned by the caller and must outlive
  // this object; the handle runs on `stream`. Errors: cudnnCreate / cudnnSetStream failing.
  static absl::StatusOr<std::unique_ptr<CudnnConv>> Create(const Cudnn* dnn, CUstream stream,
                                                           CUdeviceptr workspace,
                                                           size_t workspace_bytes, bool allow_tf32);
  ~CudnnConv();

  // Enqueues the convolution on the stream. Returns false (nothing enqueued) when cuDNN has no
  // engine for this graph (the caller runs it another way; why_not() says why); errors name
  // `where` and the call.
  absl::StatusOr<bool> Run(const ConvCall& call, const std::string& where);

  // Why the last problem cuDNN refused was refused ("" when none was).
  const std::string& why_not() const { return why_not_; }

  // "cuDNN 90100 (libcudnn.so.9)".
  std::string Describe() const;

 private:
  struct Problem;
  CudnnConv(const Cudnn* dnn, dnn::Handle handle, CUdeviceptr workspace, size_t bytes, bool tf32);
  absl::StatusOr<Problem*> Prepare(const ConvCall& call, const std::string& where);

  const Cudnn* dnn_;
  dnn::Handle handle_;
  CUdeviceptr workspace_;
  size_t workspace_bytes_;
  bool allow_tf32_;
  std::string why_not_;
  std::map<std::vector<int64_t>, std::unique_ptr<Problem>> problems_;
};

}  // namespace coil::cuda

#endif  // COIL_RUNTIME_CUDA_CONV_H_
