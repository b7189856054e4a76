// Reference kernels of in-place ops: the out-of-place kernel, then a write into the input.
//
// `<op>_` runs `<op>`'s kernel (output dtype from `<op>`'s meta on the concrete inputs), then
// casts and stores every element into input 0's storage, through its strides, so every view
// of that storage sees the change; the output is input 0 itself. copy_, fill_ and zero_ write
// directly.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/check.h"
#include "ir/op_registry.h"
#include "runtime/reference/kernel_registry.h"
#include "runtime/reference/kernel_util.h"

namespace coil {

void RegisterScatterViewKernels(ReferenceKernels& k);  // scatter_view_kernels.cc

namespace {

using Outputs = absl::StatusOr<std::vector<HostTensor>>;

// Writes `value` (self's shape, any dtype, any strides) into self's storage, cast to self's
// dtype.
void WriteInto(HostTensor self, const HostTensor& value) {
  COIL_CHECK(self.shape() == value.shape());
  ForEachIndex(self.shape(), [&](absl::Span<const int64_t> idx) {
    CopyElem(value, value.StorageOffset(idx), self, self.StorageOffset(idx));
  });
}

// Whether `t`'s elements are distinct and fill one block of its storage: no stride 0 (but
// for size-1 dims), no gaps (PyTorch's is_non_overlapping_and_dense).
bool NonOverlappingAndDense(const HostTensor& t) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of dims of size > 1
  for (size_t d = 0; d < t.shape().size(); ++d) {
    if (t.shape()[d] == 0) return true;
    if (t.shape()[d] > 1) dims.emplace_back(t.strides()[d], t.shape()[d]);
  }
  std::sort(dims.begin(), dims.end());
  int64_t expected = 1;
  for (const auto& [stride, size] : dims) {
    if (stride != expected) return false;
    expected *= size;
  }
  return true;
}

// As PyTorch's in-place ops (assert_no_partial_overlap): an input that shares memory with
// the written tensor must be that tensor exactly (x.add_(x)); one that covers some of the
// same elements differently (x.t().copy_(x), x[0:2].copy_(x[1:3])) is an error, where
// PyTorch can tell (both tensors non-overlapping and dense).
absl::Status CheckNoPartialOverlap(absl::string_view op, const HostTensor& self,
                                   const HostTensor& other) {
  if (!self.SharesStorageWith(other) || self.numel() == 0 || other.numel() == 0) {
    return absl::OkStatus();
  }
  if (!NonOverlappingAndDense(self) || !NonOverlappingAndDense(other)) return absl::OkStatus();
  if (self.offset() == other.offset() && self.shape() == other.shape() &&
      self.strides() == other.strides()) {
    return absl::OkStatus();
  }
  // Dense: each covers [offset, offset + numel) of the storage's elements.
  const bool apart = self.offset() + self.numel() <= other.offset() ||
                     other.offset() + other.numel() <= self.offset();
  if (apart) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      op, ": unsupported operation: some elements of the input tensor and the written-to tensor "
          "refer to a single memory location. Please clone() the tensor before performing the "
          "operation."));
}

absl::Status CheckInputsAgainstSelf(absl::string_view op, const KernelContext& ctx) {
  for (size_t i = 1; i < ctx.inputs.size(); ++i) {
    if (absl::Status s = CheckNoPartialOverlap(op, ctx.inputs[0], ctx.inputs[i]); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

TensorType ConcreteType(const HostTensor& t) {
  std::vector<SymExpr> shape(t.shape().begin(), t.shape().end());
  return TensorType(t.dtype(), std::move(shape));
}

ReferenceKernel InplaceKernel(const OpSchema* base, ReferenceKernel base_kernel) {
  return [base, base_kernel](const KernelContext& ctx) -> Outputs {
    if (absl::Status s = CheckInputsAgainstSelf(base->name + "_", ctx); !s.ok()) return s;
    std::vector<TensorType> types;
    for (const HostTensor& t : ctx.inputs) types.push_back(ConcreteType(t));
    absl::StatusOr<std::vector<TensorType>> base_types = base->meta(types, ctx.attrs);
    if (!base_types.ok()) return base_types.status();
    std::vector<DType> dtypes = {(*base_types)[0].dtype};
    KernelContext base_ctx{ctx.inputs, ctx.attrs, ctx.output_shapes, dtypes};
    Outputs result = base_kernel(base_ctx);
    if (!result.ok()) return result;
    HostTensor self = ctx.inputs[0];  // shares storage with the caller's tensor
    WriteInto(self, (*result)[0]);
    return std::vector<HostTensor>{self};
  };
}

Outputs Copy(const KernelContext& ctx) {
  if (absl::Status s = CheckInputsAgainstSelf("aten.copy_", ctx); !s.ok()) return s;
  HostTensor self = ctx.inputs[0];
  const HostTensor& src = ctx.inputs[1];
  // Read src fully before writing: self and src may still share memory (the same view, or
  // one PyTorch cannot check, e.g. an expand).
  HostTensor expanded = src.View(self.shape(), BroadcastStrides(src, self.shape()), src.offset());
  WriteInto(self, expanded.To(expanded.dtype()));
  return std::vector<HostTensor>{self};
}

// Stores a Python number (int or float attribute) into every element of self.
Outputs Fill(HostTensor self, const Attribute& value) {
  bool floating = IsFloating(self.dtype());
  double d = floating ? ScalarAsDouble(value, self.dtype()) : 0.0;
  int64_t i = floating ? 0 : ScalarAsInt(value, self.dtype());
  ForEachIndex(self.shape(), [&](absl::Span<const int64_t> idx) {
    if (floating) {
      self.StoreDouble(self.StorageOffset(idx), d);
    } else {
      self.StoreInt(self.StorageOffset(idx), i);
    }
  });
  return std::vector<HostTensor>{self};
}

}  // namespace

void RegisterInplaceKernels(ReferenceKernels& k) {
  RegisterScatterViewKernels(k);
  for (const OpSchema* schema : OpRegistry::Global().All()) {
    if (schema->mutated_input < 0) continue;
    std::string base_name = schema->name.substr(0, schema->name.size() - 1);
    const OpSchema* base = OpRegistry::Global().Find(base_name);
    const ReferenceKernel* base_kernel = k.Find(base_name);
    if (base == nullptr || base_kernel == nullptr) continue;  // copy_, fill_, zero_ below
    k.Register(schema->name, InplaceKernel(base, *base_kernel));
  }
  k.Register("aten.copy_", Copy);
  k.Register("aten.fill_",
             [](const KernelContext& ctx) { return Fill(ctx.inputs[0], ctx.attrs.at("value")); });
  k.Register("aten.zero_",
             [](const KernelContext& ctx) { return Fill(ctx.inputs[0], Attribute(int64_t{0})); });
}

}  // namespace coil
