// Reference kernels of aten.slice_scatter and aten.select_scatter: a contiguous copy of self,
// then src written into the view of that copy that aten.slice / aten.select would return.
#include <algorithm>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/check.h"
#include "ir/ops/meta_util.h"
#include "runtime/reference/kernel_registry.h"
#include "runtime/reference/kernel_util.h"

namespace coil {

void RegisterScatterViewKernels(ReferenceKernels& k);

namespace {

using Outputs = absl::StatusOr<std::vector<HostTensor>>;

int64_t BoundAttr(const AttrMap& attrs, const char* name) {
  absl::StatusOr<SymExpr> v = GetSym(attrs, name);
  COIL_CHECK(v.ok() && v->is_constant()) << "attribute " << name << " not bound";
  return v->constant();
}

// Copies self into a fresh output and returns it with `view` (a view of it) filled from src.
Outputs WriteThrough(const KernelContext& ctx, HostTensor out, const HostTensor& view) {
  const HostTensor& src = ctx.inputs[1];
  if (view.shape() != src.shape()) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected src to have a size equal to the slice of self. src size = ",
                     src.TypeString(), ", slice size = ", view.TypeString()));
  }
  HostTensor dst = view;
  ForEachIndex(src.shape(), [&](absl::Span<const int64_t> idx) {
    CopyElem(src, src.StorageOffset(idx), dst, dst.StorageOffset(idx));
  });
  return std::vector<HostTensor>{std::move(out)};
}

HostTensor CopyOfSelf(const KernelContext& ctx) {
  const HostTensor& self = ctx.inputs[0];
  HostTensor out = NewOutput(ctx);
  int64_t o = 0;
  ForEachIndex(self.shape(), [&](absl::Span<const int64_t> idx) {
    CopyElem(self, self.StorageOffset(idx), out, o++);
  });
  return out;
}

int64_t Clamp(int64_t v, int64_t size) {
  if (v < 0) v = std::max<int64_t>(v + size, 0);
  return std::min(v, size);
}

Outputs SliceScatter(const KernelContext& ctx) {
  HostTensor out = CopyOfSelf(ctx);
  int64_t dim = CheckedDim(meta::IntAttr(ctx.attrs, "dim"), out.rank());
  int64_t step = meta::IntAttr(ctx.attrs, "step");
  int64_t size = out.shape()[dim];
  int64_t b = Clamp(BoundAttr(ctx.attrs, "start"), size);
  int64_t e = std::max(Clamp(BoundAttr(ctx.attrs, "end"), size), b);
  std::vector<int64_t> shape = out.shape(), strides = out.strides();
  shape[dim] = (e - b + step - 1) / step;
  strides[dim] *= step;
  HostTensor view = out.View(shape, strides, shape[dim] > 0 ? b * out.strides()[dim] : 0);
  return WriteThrough(ctx, out, view);
}

Outputs SelectScatter(const KernelContext& ctx) {
  HostTensor out = CopyOfSelf(ctx);
  int64_t dim = CheckedDim(meta::IntAttr(ctx.attrs, "dim"), out.rank());
  int64_t size = out.shape()[dim];
  int64_t index = BoundAttr(ctx.attrs, "index");
  if (index < -size || index >= size) {
    return absl::OutOfRangeError(absl::StrCat("select_scatter(): index ", index,
                                              " out of range for dimension ", dim, " of size ",
                                              size));
  }
  if (index < 0) index += size;
  std::vector<int64_t> shape = out.shape(), strides = out.strides();
  shape.erase(shape.begin() + dim);
  strides.erase(strides.begin() + dim);
  HostTensor view = out.View(shape, strides, index * out.strides()[dim]);
  return WriteThrough(ctx, out, view);
}

}  // namespace

void RegisterScatterViewKernels(ReferenceKernels& k) {
  k.Register("aten.slice_scatter", SliceScatter);
  k.Register("aten.select_scatter", SelectScatter);
}

}  // namespace coil
