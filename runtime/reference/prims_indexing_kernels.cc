// Reference kernels of the indexing prims gather and scatter and of the mutation write-back
// copy_to (docs/prims.md; the ops of ir/ops/prims_indexing_ops.cc).
//
// Index sizes the meta function could not compare on symbolic sizes, and every index value,
// are checked here on the concrete data.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
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

// Index values in [0, x.size(dim)), index.size(d) <= x.size(d) for d != dim; calls
// fn(index_position, x_index) for every element of `index` in row-major order.
template <typename Fn>
absl::Status ForEachIndexed(const char* prim, const HostTensor& x, const HostTensor& index,
                            int64_t dim, Fn&& fn) {
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (d != dim && index.shape()[d] > x.shape()[d]) {
      return KernelError(prim, absl::StrCat("index size ", index.shape()[d], " in dim ", d,
                                            " exceeds the input size ", x.shape()[d]));
    }
  }
  const int64_t size = x.rank() == 0 ? 1 : x.shape()[dim];
  std::vector<int64_t> target;
  absl::Status status;
  ForEachIndex(index.shape(), [&](absl::Span<const int64_t> idx) {
    if (!status.ok()) return;
    int64_t k = index.LoadInt(index.StorageOffset(idx));
    if (k < 0 || k >= size) {  // the aten kernels' wording (indexing_kernels.cc)
      status = absl::OutOfRangeError(absl::StrCat(prim, ": index ", k,
                                                  " is out of bounds for dimension ", dim,
                                                  " with size ", size));
      return;
    }
    target.assign(idx.begin(), idx.end());
    if (x.rank() > 0) target[dim] = k;
    fn(idx, absl::Span<const int64_t>(target));
  });
  return status;
}

Result GatherKernel(Ctx ctx) {
  const HostTensor &x = ctx.inputs[0], &index = ctx.inputs[1];
  HostTensor out = NewOutput(ctx);
  int64_t o = 0;
  absl::Status s = ForEachIndexed("prims.gather", x, index, meta::IntAttr(ctx.attrs, "dim"),
                                  [&](absl::Span<const int64_t>, absl::Span<const int64_t> t) {
                                    CopyElem(x, x.StorageOffset(t), out, o++);
                                  });
  if (!s.ok()) return s;
  return std::vector<HostTensor>{out};
}

Result Scatter(Ctx ctx) {
  const HostTensor &x = ctx.inputs[0], &index = ctx.inputs[1], &src = ctx.inputs[2];
  HostTensor out = NewOutput(ctx);
  CopyRowMajor(x, out);
  bool add = meta::StringAttr(ctx.attrs, "reduce") == "add";
  bool fp = IsFloating(out.dtype());
  absl::Status s = ForEachIndexed(
      "prims.scatter", x, index, meta::IntAttr(ctx.attrs, "dim"),
      [&](absl::Span<const int64_t> idx, absl::Span<const int64_t> t) {
        int64_t so = src.StorageOffset(idx), oo = out.StorageOffset(t);
        if (!add) {
          CopyElem(src, so, out, oo);
        } else if (fp) {
          out.StoreDouble(oo, out.LoadDouble(oo) + src.LoadDouble(so));
        } else {
          out.StoreInt(oo, WrapAdd(out.LoadInt(oo), src.LoadInt(so)));
        }
      });
  if (!s.ok()) return s;
  return std::vector<HostTensor>{out};
}

// Writes src into dst's storage (dst is a graph input; HostTensor copies share storage) and
// returns dst, which the output aliases.
Result CopyTo(Ctx ctx) {
  HostTensor dst = ctx.inputs[0];
  // A src that views dst's storage (the write-back of `x.t().copy_(x.clone())`, whose clone is a
  // view after decomposition) is read in full before the write.
  const HostTensor src = ctx.inputs[1].SharesStorageWith(dst) ? ctx.inputs[1].To(ctx.inputs[1].dtype())
                                                              : ctx.inputs[1];
  if (dst.shape() != src.shape()) {
    return KernelError("prims.copy_to", absl::StrCat("src ", src.TypeString(),
                                                     " does not match dst ", dst.TypeString()));
  }
  const DType dt = dst.dtype();
  ForEachIndex(dst.shape(), [&](absl::Span<const int64_t> idx) {
    int64_t so = src.StorageOffset(idx), d = dst.StorageOffset(idx);
    if (IsFloating(dt)) {
      dst.StoreDouble(d, LoadAsDouble(src, so, dt));
    } else {
      dst.StoreInt(d, LoadAsInt(src, so, dt));
    }
  });
  return std::vector<HostTensor>{dst};
}

}  // namespace

void RegisterPrimsIndexingKernels(ReferenceKernels& k) {
  k.Register("prims.gather", GatherKernel);
  k.Register("prims.scatter", Scatter);
  k.Register("prims.copy_to", CopyTo);
}

}  // namespace coil
