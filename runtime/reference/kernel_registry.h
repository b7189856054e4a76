// Reference kernels: one simple, obviously-right CPU implementation per op, found by name.
//
// These are coil's numerical oracle (every compiled kernel is checked against them), so they
// favour clarity over speed: elements go through double/int64, reductions accumulate in
// double. Output shapes and dtypes come from the op's meta function (bound to concrete
// sizes by the interpreter), so a kernel only computes values.
#ifndef COIL_RUNTIME_REFERENCE_KERNEL_REGISTRY_H_
#define COIL_RUNTIME_REFERENCE_KERNEL_REGISTRY_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/attribute.h"
#include "runtime/host_tensor.h"

namespace coil {

struct KernelContext {
  absl::Span<const HostTensor> inputs;
  // Normalized: every schema attribute present; sym / syms attributes are bound to constants
  // by the interpreter.
  const AttrMap& attrs;
  // One per output: the concrete shape and dtype the kernel must produce.
  absl::Span<const std::vector<int64_t>> output_shapes;
  absl::Span<const DType> output_dtypes;
};

// Returns the outputs, with exactly the requested shapes and dtypes: fresh contiguous tensors,
// except that view ops (OpSchema::is_view) may return views sharing input 0's storage and
// in-place ops (OpSchema::mutated_input) write into that input and return it. Errors are
// for data-dependent problems only (an index out of range); everything static was checked by
// the meta function.
using ReferenceKernel =
    std::function<absl::StatusOr<std::vector<HostTensor>>(const KernelContext& ctx)>;

class ReferenceKernels {
 public:
  static const ReferenceKernels& Global();
  void Register(absl::string_view op, ReferenceKernel kernel);  // CHECKs duplicates
  const ReferenceKernel* Find(absl::string_view op) const;
  std::vector<std::string> Ops() const;  // sorted

 private:
  absl::flat_hash_map<std::string, ReferenceKernel> kernels_;
};

// Registration entry points, one per family file in runtime/reference/.
void RegisterElementwiseKernels(ReferenceKernels& k);    // elementwise_kernels.cc: unary
void RegisterBinaryKernels(ReferenceKernels& k);         // binary_kernels.cc (+ ternary)
void RegisterCreationKernels(ReferenceKernels& k);       // creation_kernels.cc
void RegisterReductionKernels(ReferenceKernels& k);      // reduction_kernels.cc
void RegisterShapeKernels(ReferenceKernels& k);          // shape_kernels*.cc
void RegisterIndexingKernels(ReferenceKernels& k);       // indexing_kernels.cc
void RegisterNnKernels(ReferenceKernels& k);             // nn_kernels*.cc
// The prims opset (docs/prims.md).
void RegisterPrimsKernels(ReferenceKernels& k);          // prims_kernels.cc: math, reductions
void RegisterPrimsShapeKernels(ReferenceKernels& k);     // prims_shape_kernels.cc
void RegisterPrimsCreationKernels(ReferenceKernels& k);  // prims_creation_kernels.cc
void RegisterPrimsIndexingKernels(ReferenceKernels& k);  // prims_indexing_kernels.cc
void RegisterPrimsSymKernels(ReferenceKernels& k);       // prims_sym_kernels.cc
// In-place variants: run the out-of-place kernel, then write into the mutated input.
void RegisterInplaceKernels(ReferenceKernels& k);        // inplace_kernels.cc (last)

}  // namespace coil

#endif  // COIL_RUNTIME_REFERENCE_KERNEL_REGISTRY_H_
