// Private to the nn reference kernels (runtime/reference/nn_kernels*.cc): the per-concept
// registration functions RegisterNnKernels calls and the small tensor helpers they share.
#ifndef COIL_RUNTIME_REFERENCE_NN_KERNELS_INTERNAL_H_
#define COIL_RUNTIME_REFERENCE_NN_KERNELS_INTERNAL_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/attribute.h"
#include "runtime/host_tensor.h"
#include "runtime/reference/kernel_registry.h"

namespace coil::nn_kernels {

void RegisterMatmulKernels(ReferenceKernels& k);     // nn_kernels.cc
void RegisterConvKernels(ReferenceKernels& k);       // nn_kernels_conv.cc
void RegisterPoolKernels(ReferenceKernels& k);       // nn_kernels_pool.cc
void RegisterAttentionKernels(ReferenceKernels& k);  // nn_kernels_attention.cc
void RegisterUpsampleKernels(ReferenceKernels& k);   // nn_kernels_upsample.cc

// A view of `t` broadcast to `shape` (dimensions aligned from the right; broadcast
// dimensions get stride 0). The shapes must be compatible (CHECKed).
HostTensor BroadcastTo(const HostTensor& t, absl::Span<const int64_t> shape);
// A view with a size-1 dimension inserted at `dim` (0 <= dim <= rank).
HostTensor Unsqueeze(const HostTensor& t, int64_t dim);
// A view with dimensions `a` and `b` swapped.
HostTensor Transpose(const HostTensor& t, int64_t a, int64_t b);

// An ints attribute of length 1 or n, as length n (the meta function validated it).
IntList ExpandedInts(const AttrMap& attrs, absl::string_view name, int64_t n);

// Error unless a == b: a concrete size check the meta function could not decide
// symbolically (see [Note: symbolic size checks] in ir/ops/nn_ops_internal.h).
absl::Status CheckSize(int64_t a, int64_t b, absl::string_view what);

// Integer arithmetic that wraps like PyTorch's (two's complement) without C++ overflow UB.
inline int64_t WrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t WrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

}  // namespace coil::nn_kernels

#endif  // COIL_RUNTIME_REFERENCE_NN_KERNELS_INTERNAL_H_
