// Reference kernels of in-place ops: the out-of-place kernel, then a write into the input.
//
// `<op>_` runs `<op>`'s kernel (output dtype from `<op>`'s meta on the concrete inputs), then
// casts and stores every element into input 0's storage, through its strides, so every view
// of that storage sees the change; the output is input 0 itself. copy_, fill_ and zero_ write
// directly.
#include <string>
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

TensorType ConcreteType(const HostTensor& t) {
  std::vector<SymExpr> shape(t.shape().begin(), t.shape().end());
  return TensorType(t.dtype(), std::move(shape));
}

ReferenceKernel InplaceKernel(const OpSchema* base, ReferenceKernel base_kernel) {
  return [base, base_kernel](const KernelContext& ctx) -> Outputs {
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
  HostTensor self = ctx.inputs[0];
  const HostTensor& src = ctx.inputs[1];
  // Read src fully before writing: self and src may overlap.
  HostTensor expanded = src.View(self.shape(), BroadcastStrides(src, self.shape()), src.offset());
  WriteInto(self, expanded.Contiguous());
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
