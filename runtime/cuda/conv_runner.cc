// The CUDA executable's convolutions (see conv_runner.h).
#include "runtime/cuda/conv_runner.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/channels_last.h"
#include "runtime/cuda/cudnn.h"
#include "runtime/cuda/kernel_abi.h"

namespace coil::cuda {

absl::StatusOr<std::unique_ptr<ConvRunner>> ConvRunner::Create(const CudaDriver* d,
                                                               const proto::Schedule& schedule,
                                                               CUmodule module, CUstream stream,
                                                               bool use_cudnn, bool allow_tf32,
                                                               size_t workspace_bytes) {
  std::unique_ptr<ConvRunner> r(new ConvRunner);
  r->d_ = d;
  r->stream_ = stream;
  for (const proto::Kernel& k : schedule.kernels()) {
    if (std::optional<ConvPlan> p = PlanConv(schedule, k); p.has_value()) r->plans_[k.id()] = *p;
  }
  for (const proto::Buffer& b : schedule.buffers()) {
    if (b.kind() == proto::Buffer::CONSTANT) r->constants_.insert(b.id());
  }
  if (r->plans_.empty()) return r;
  if (!use_cudnn) {
    r->library_ = "none (use_cudnn is off: aten.convolution runs on the host)";
    return r;
  }
  absl::StatusOr<const Cudnn*> dnn = Cudnn::Get();
  if (!dnn.ok()) {
    r->library_ = absl::StrCat(dnn.status().message(), ": aten.convolution runs on the host");
    return r;
  }
  if (absl::Status s = d->Check(d->MemAlloc(&r->workspace_, std::max<size_t>(workspace_bytes, 1)),
                                "cuMemAlloc", "cuDNN's workspace");
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::unique_ptr<CudnnConv>> conv =
      CudnnConv::Create(*dnn, stream, r->workspace_, workspace_bytes, allow_tf32);
  if (!conv.ok()) return conv.status();
  r->conv_ = *std::move(conv);
  r->library_ = r->conv_->Describe();
  const std::pair<proto::DType, const char*> types[] = {
      {proto::FLOAT32, "f32"}, {proto::FLOAT16, "f16"}, {proto::BFLOAT16, "bf16"},
      {proto::FLOAT64, "f64"}};
  // The module carries the bias kernels only when a convolution has a bias
  // (codegen_cuda's HasConvolutionBias); asking for absent ones is a CUDA API error that
  // compute-sanitizer reports.
  bool any_bias = false;
  for (const auto& [id, plan] : r->plans_) any_bias = any_bias || plan.bias != 0;
  for (const auto& [t, name] : types) {
    if (!any_bias) break;
    CUfunction f = nullptr;
    if (d->ModuleGetFunction(&f, module, ConvBiasSymbol(name).c_str()) == 0) r->bias_kernels_[t] = f;
  }
  return r;
}

ConvRunner::~ConvRunner() {
  conv_.reset();
  if (workspace_ != 0) d_->MemFree(workspace_);
  for (const auto& [id, p] : nhwc_weights_) d_->MemFree(p);
}

absl::StatusOr<CUdeviceptr> ConvRunner::NhwcWeight(int id, CUdeviceptr w,
                                                   const std::vector<int64_t>& shape,
                                                   int64_t bytes, const std::string& where) {
  if (auto it = nhwc_weights_.find(id); it != nhwc_weights_.end()) return it->second;
  const int64_t k = shape[0], c = shape[1], hw = shape[2] * shape[3];
  const int64_t elem = bytes / (k * c * hw);
  std::string nchw(bytes, '\0'), nhwc(bytes, '\0');
  const std::string what = absl::StrCat(where, " (channels-last weight)");
  if (absl::Status s = d_->Check(d_->MemcpyDtoHAsync(nchw.data(), w, bytes, stream_),
                                 "cuMemcpyDtoHAsync", what);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = d_->Check(d_->StreamSynchronize(stream_), "cuStreamSynchronize", what);
      !s.ok()) {
    return s;
  }
  for (int64_t o = 0; o < k; ++o) {
    for (int64_t i = 0; i < c; ++i) {
      for (int64_t p = 0; p < hw; ++p) {
        std::copy_n(&nchw[((o * c + i) * hw + p) * elem], elem, &nhwc[((o * hw + p) * c + i) * elem]);
      }
    }
  }
  CUdeviceptr dev = 0;
  if (absl::Status s = d_->Check(d_->MemAlloc(&dev, bytes), "cuMemAlloc", what); !s.ok()) return s;
  nhwc_weights_[id] = dev;
  if (absl::Status s = d_->Check(d_->MemcpyHtoDAsync(dev, nhwc.data(), bytes, stream_),
                                 "cuMemcpyHtoDAsync", what);
      !s.ok()) {
    return s;
  }
  // The host copy must outlive the asynchronous upload.
  if (absl::Status s = d_->Check(d_->StreamSynchronize(stream_), "cuStreamSynchronize", what);
      !s.ok()) {
    return s;
  }
  return dev;
}

absl::StatusOr<std::optional<bool>> ConvRunner::Run(
    const proto::Kernel& k, const absl::flat_hash_map<int, std::vector<int64_t>>& shapes,
    const absl::flat_hash_map<int, int64_t>& sizes, const std::vector<uint64_t>& address,
    const std::string& where) {
  auto it = plans_.find(k.id());
  if (it == plans_.end()) return std::nullopt;
  const ConvPlan& p = it->second;
  if (!p.unsupported.empty()) {
    why_not_ = absl::StrCat(where, ": ", p.unsupported);
    return std::nullopt;
  }
  if (conv_ == nullptr) return std::nullopt;
  ConvCall call;
  call.dtype = p.dtype;
  // Channels-last buffers have the permuted shape [N, H, W, C]: cuDNN gets the logical one.
  call.x_shape = p.x_nhwc ? FromChannelsLast(shapes.at(p.x)) : shapes.at(p.x);
  call.w_shape = shapes.at(p.w);
  call.y_shape = p.out_nhwc ? FromChannelsLast(shapes.at(p.out)) : shapes.at(p.out);
  call.x_nhwc = p.x_nhwc;
  call.y_nhwc = p.out_nhwc;
  // Empty tensors and inconsistent shapes stay on the host path (whose kernel reports them).
  for (const auto* s : {&call.x_shape, &call.w_shape, &call.y_shape}) {
    for (int64_t v : *s) {
      if (v <= 0 || v >= (int64_t{1} << 31)) return std::nullopt;
    }
  }
  if (call.x_shape[1] != call.w_shape[1] * p.groups || call.w_shape[0] % p.groups != 0 ||
      call.y_shape[1] != call.w_shape[0]) {
    return std::nullopt;
  }
  call.stride = p.stride;
  call.padding = p.padding;
  call.dilation = p.dilation;
  auto overlaps = [&](int x, int y) {
    const uint64_t px = address[x], py = address[y];
    return px < py + sizes.at(y) && py < px + sizes.at(x);
  };
  call.x = address[p.x];
  call.w = address[p.w];
  if (p.x_nhwc && constants_.contains(p.w) && call.w_shape.size() == 4) {
    absl::StatusOr<CUdeviceptr> w = NhwcWeight(p.w, call.w, call.w_shape, sizes.at(p.w), where);
    if (!w.ok()) return w.status();
    call.w = *w;
    call.w_nhwc = true;
  }
  if (overlaps(p.out, p.x) || overlaps(p.out, p.w) || (p.bias != 0 && overlaps(p.out, p.bias))) {
    return std::nullopt;
  }
  // 1. The fused epilogue.
  if (p.fused && !overlaps(p.d, p.x) && !overlaps(p.d, p.w) &&
      (p.bias == 0 || !overlaps(p.d, p.bias)) &&
      (p.r == 0 || address[p.r] == address[p.d] || !overlaps(p.d, p.r))) {
    ConvCall fused = call;
    fused.y = address[p.d];
    fused.bias = p.bias != 0 ? address[p.bias] : 0;
    fused.r = p.r != 0 ? address[p.r] : 0;
    fused.relu = p.relu;
    absl::StatusOr<bool> ran = conv_->Run(fused, where);
    if (!ran.ok()) return ran.status();
    if (*ran) return true;
    why_not_ = conv_->why_not();
  }
  call.y = address[p.out];
  // 2. conv + bias in one graph.
  if (p.bias != 0) {
    ConvCall with_bias = call;
    with_bias.bias = address[p.bias];
    absl::StatusOr<bool> ran = conv_->Run(with_bias, where);
    if (!ran.ok()) return ran.status();
    if (*ran) return false;
    why_not_ = conv_->why_not();
  }
  // 3. The convolution alone, then the bias kernel.
  auto bias_kernel = bias_kernels_.find(p.dtype);
  if (p.bias != 0 && bias_kernel == bias_kernels_.end()) {
    why_not_ = absl::StrCat(where, ": the module has no ", ConvBiasSymbol("<dtype>"), " kernel");
    return std::nullopt;
  }
  absl::StatusOr<bool> ran = conv_->Run(call, where);
  if (!ran.ok()) return ran.status();
  if (!*ran) {
    why_not_ = conv_->why_not();
    return std::nullopt;
  }
  if (p.bias != 0) {
    long long total = 1, inner = 1, channels = call.y_shape[1];
    for (size_t i = 0; i < call.y_shape.size(); ++i) {
      total *= call.y_shape[i];
      if (i >= 2 && !call.y_nhwc) inner *= call.y_shape[i];  // NHWC: the channel is innermost
    }
    CUdeviceptr y = call.y, bias = address[p.bias];
    void* params[] = {&y, &bias, &total, &inner, &channels};
    const unsigned grid = static_cast<unsigned>(CudaGridFor(0, total));
    if (absl::Status s = d_->Check(d_->LaunchKernel(bias_kernel->second, grid, 1, 1, kCudaBlockThreads,
                                                    1, 1, 0, stream_, params, nullptr),
                                   "cuLaunchKernel(convolution bias)", where);
        !s.ok()) {
      return s;
    }
  }
  return false;
}

}  // namespace coil::cuda
