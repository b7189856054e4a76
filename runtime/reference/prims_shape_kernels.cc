// Reference kernels of the shape and layout prims (docs/prims.md; the ops of
// ir/ops/prims_shape_ops.cc): reshape, permute, broadcast_in_dim, slice, squeeze, concat, pad
// and rev.
//
// Relations the meta function could not decide on symbolic sizes (slice bounds, a
// broadcast_in_dim operand dim that may be 1) are re-checked here on the concrete sizes.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/check.h"
#include "ir/ops/meta_util.h"
#include "runtime/reference/kernel_registry.h"
#include "runtime/reference/kernel_util.h"
#include "runtime/reference/prims_kernels_internal.h"

namespace coil {
namespace {

using Ctx = const KernelContext&;
using Result = absl::StatusOr<std::vector<HostTensor>>;
using prims_kernels::CopyRowMajor;
using prims_kernels::KernelError;

// Bound values of a syms attribute (the interpreter binds symbols before kernels run).
absl::StatusOr<std::vector<int64_t>> BoundSyms(Ctx ctx, const char* prim, const char* name) {
  std::vector<int64_t> out;
  for (const SymExpr& e : meta::SymsAttr(ctx.attrs, name)) {
    if (!e.is_constant()) {
      return absl::FailedPreconditionError(absl::StrCat(
          prim, ": attribute '", name, "' is still symbolic (", e.ToString(),
          "); bind the graph's symbols before running a reference kernel"));
    }
    out.push_back(e.constant());
  }
  return out;
}

// Fills output 0 element by element: fn(out_index, in_index) fills in_index (sized to the
// input's rank) and returns false for an element that takes `fill` (padding).
template <typename Fn>
HostTensor Gather(Ctx ctx, const HostTensor& in, Fn&& fn, double fill = 0.0) {
  HostTensor out = NewOutput(ctx);
  std::vector<int64_t> src(in.rank());
  int64_t o = 0;
  ForEachIndex(out.shape(), [&](absl::Span<const int64_t> idx) {
    if (fn(idx, src)) {
      CopyElem(in, in.StorageOffset(src), out, o);
    } else {
      out.StoreDouble(o, fill);
    }
    ++o;
  });
  return out;
}

Result Reshape(Ctx ctx) {
  HostTensor out = NewOutput(ctx);
  if (out.numel() != ctx.inputs[0].numel()) {
    return KernelError("prims.reshape",
                       absl::StrCat("cannot reshape ", ctx.inputs[0].TypeString(), " into ",
                                    out.TypeString(), ": element counts differ"));
  }
  CopyRowMajor(ctx.inputs[0], out);
  return std::vector<HostTensor>{out};
}

Result Squeeze(Ctx ctx) {
  HostTensor out = NewOutput(ctx);
  CopyRowMajor(ctx.inputs[0], out);
  return std::vector<HostTensor>{out};
}

// Output 0 as the elements of `view` (a view of an input of the output's dtype, of the output's
// shape) in row-major order, copied at memory speed.
HostTensor CopyOfView(Ctx ctx, const HostTensor& view) {
  HostTensor out = HostTensor::Empty(ctx.output_dtypes[0], ctx.output_shapes[0]);
  COIL_CHECK(view.shape() == out.shape() && view.dtype() == out.dtype());
  view.CopyElementsTo(out.RawData());
  return out;
}

Result Permute(Ctx ctx) {
  IntList dims = meta::IntsAttr(ctx.attrs, "dims");
  const HostTensor& x = ctx.inputs[0];
  if (x.dtype() == ctx.output_dtypes[0]) {
    std::vector<int64_t> shape, strides;
    for (int64_t d : dims) {
      shape.push_back(x.shape()[d]);
      strides.push_back(x.strides()[d]);
    }
    return std::vector<HostTensor>{CopyOfView(ctx, x.View(shape, strides, x.offset()))};
  }
  return std::vector<HostTensor>{Gather(ctx, ctx.inputs[0], [&](auto idx, auto& src) {
    for (size_t j = 0; j < dims.size(); ++j) src[dims[j]] = idx[j];
    return true;
  })};
}

Result BroadcastInDim(Ctx ctx) {
  const HostTensor& x = ctx.inputs[0];
  IntList bd = meta::IntsAttr(ctx.attrs, "broadcast_dimensions");
  const std::vector<int64_t>& shape = ctx.output_shapes[0];
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (x.shape()[i] != 1 && x.shape()[i] != shape[bd[i]]) {
      return KernelError("prims.broadcast_in_dim",
                         absl::StrCat("input dim ", i, " of size ", x.shape()[i],
                                      " cannot broadcast to output dim ", bd[i], " of size ",
                                      shape[bd[i]], " (it must be equal or 1)"));
    }
  }
  if (x.dtype() == ctx.output_dtypes[0]) {  // a view with stride 0 on the broadcast dims
    std::vector<int64_t> strides(shape.size(), 0);
    for (int64_t i = 0; i < x.rank(); ++i) {
      if (x.shape()[i] != 1) strides[bd[i]] = x.strides()[i];
    }
    return std::vector<HostTensor>{CopyOfView(ctx, x.View(shape, strides, x.offset()))};
  }
  return std::vector<HostTensor>{Gather(ctx, x, [&](auto idx, auto& src) {
    for (int64_t i = 0; i < x.rank(); ++i) src[i] = x.shape()[i] == 1 ? 0 : idx[bd[i]];
    return true;
  })};
}

Result Slice(Ctx ctx) {
  const HostTensor& x = ctx.inputs[0];
  absl::StatusOr<std::vector<int64_t>> start = BoundSyms(ctx, "prims.slice", "start_indices");
  if (!start.ok()) return start.status();
  absl::StatusOr<std::vector<int64_t>> limit = BoundSyms(ctx, "prims.slice", "limit_indices");
  if (!limit.ok()) return limit.status();
  IntList strides = meta::IntsAttr(ctx.attrs, "strides");
  for (int64_t d = 0; d < x.rank(); ++d) {
    int64_t s = (*start)[d], l = (*limit)[d];
    if (s < 0 || s > l || l > x.shape()[d]) {
      return KernelError("prims.slice",
                         absl::StrCat("dim ", d, " slice [", s, ", ", l,
                                      ") is out of range for size ", x.shape()[d],
                                      " (need 0 <= start <= limit <= size)"));
    }
  }
  return std::vector<HostTensor>{Gather(ctx, x, [&](auto idx, auto& src) {
    for (int64_t d = 0; d < x.rank(); ++d) src[d] = (*start)[d] + idx[d] * strides[d];
    return true;
  })};
}

Result Concat(Ctx ctx) {
  HostTensor out = NewOutput(ctx);
  int64_t dim = meta::IntAttr(ctx.attrs, "dim");
  int64_t base = 0;
  std::vector<int64_t> dst;
  for (const HostTensor& in : ctx.inputs) {
    for (int64_t d = 0; d < out.rank(); ++d) {
      if (d != dim && in.shape()[d] != out.shape()[d]) {
        return KernelError("prims.concat", absl::StrCat("sizes differ in dim ", d, ": ",
                                                        in.shape()[d], " vs ", out.shape()[d]));
      }
    }
    ForEachIndex(in.shape(), [&](absl::Span<const int64_t> idx) {
      dst.assign(idx.begin(), idx.end());
      dst[dim] += base;
      CopyElem(in, in.StorageOffset(idx), out, out.StorageOffset(dst));
    });
    base += in.shape()[dim];
  }
  return std::vector<HostTensor>{out};
}

Result Pad(Ctx ctx) {
  const HostTensor& x = ctx.inputs[0];
  IntList low = meta::IntsAttr(ctx.attrs, "low");
  double value = *GetFloat(ctx.attrs, "value");
  return std::vector<HostTensor>{Gather(
      ctx, x,
      [&](auto idx, auto& src) {
        for (int64_t d = 0; d < x.rank(); ++d) {
          src[d] = idx[d] - low[d];
          if (src[d] < 0 || src[d] >= x.shape()[d]) return false;
        }
        return true;
      },
      value)};
}

Result Rev(Ctx ctx) {
  const HostTensor& x = ctx.inputs[0];
  std::vector<bool> flip(x.rank(), false);
  for (int64_t d : meta::IntsAttr(ctx.attrs, "dims")) flip[d] = true;
  return std::vector<HostTensor>{Gather(ctx, x, [&](auto idx, auto& src) {
    for (int64_t d = 0; d < x.rank(); ++d) src[d] = flip[d] ? x.shape()[d] - 1 - idx[d] : idx[d];
    return true;
  })};
}

}  // namespace

void RegisterPrimsShapeKernels(ReferenceKernels& k) {
  k.Register("prims.reshape", Reshape);
  k.Register("prims.permute", Permute);
  k.Register("prims.broadcast_in_dim", BroadcastInDim);
  k.Register("prims.slice", Slice);
  k.Register("prims.squeeze", Squeeze);
  k.Register("prims.concat", Concat);
  k.Register("prims.pad", Pad);
  k.Register("prims.rev", Rev);
}

}  // namespace coil
