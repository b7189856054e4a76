// Reference kernels of the creation and random prims (docs/prims.md; the ops of
// ir/ops/prims_creation_ops.cc): full, iota and philox_uniform.
#include <cstdint>
#include <vector>

#include "ir/ops/meta_util.h"
#include "runtime/reference/kernel_registry.h"
#include "runtime/reference/kernel_util.h"
#include "runtime/reference/philox.h"

namespace coil {
namespace {

using Ctx = const KernelContext&;
using Result = absl::StatusOr<std::vector<HostTensor>>;

Result Full(Ctx ctx) {
  HostTensor out = NewOutput(ctx);
  const Attribute& value = ctx.attrs.find("value")->second;
  DType dt = out.dtype();
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (IsFloating(dt)) {
      out.StoreDouble(i, ScalarAsDouble(value, dt));
    } else {
      out.StoreInt(i, ScalarAsInt(value, dt));
    }
  }
  return std::vector<HostTensor>{out};
}

Result Iota(Ctx ctx) {
  HostTensor out = NewOutput(ctx);
  int64_t start = meta::IntAttr(ctx.attrs, "start"), step = meta::IntAttr(ctx.attrs, "step");
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t v = WrapAdd(start, WrapMul(i, step));
    if (IsFloating(out.dtype())) {
      out.StoreDouble(i, static_cast<double>(v));
    } else {
      out.StoreInt(i, v);
    }
  }
  return std::vector<HostTensor>{out};
}

Result PhiloxUniform(Ctx ctx) {
  HostTensor out = NewOutput(ctx);
  int64_t seed = meta::IntAttr(ctx.attrs, "seed");
  uint64_t offset = static_cast<uint64_t>(meta::IntAttr(ctx.attrs, "offset"));
  for (int64_t i = 0; i < out.numel(); ++i) {
    uint64_t counter = offset + static_cast<uint64_t>(i);
    out.StoreDouble(i, PhiloxUniformAt(seed, static_cast<int64_t>(counter)));
  }
  return std::vector<HostTensor>{out};
}

}  // namespace

void RegisterPrimsCreationKernels(ReferenceKernels& k) {
  k.Register("prims.full", Full);
  k.Register("prims.iota", Iota);
  k.Register("prims.philox_uniform", PhiloxUniform);
}

}  // namespace coil
