// Reference kernels of the indexing op family (the ops of ir/ops/indexing_ops.cc).
//
// Every index value is checked against its bound before it is used: an out-of-range index is
// an OutOfRange status naming the value and the bound, never an out-of-bounds read.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/check.h"
#include "ir/ops/meta_util.h"
#include "runtime/reference/kernel_registry.h"
#include "runtime/reference/kernel_util.h"

namespace coil {
namespace {

using Outputs = absl::StatusOr<std::vector<HostTensor>>;

// Sizes and indices as torch's ensure_nonempty_* see them (a 0-dim tensor acts as [1]).
int64_t SizeOf(const HostTensor& t, int64_t d) { return t.rank() == 0 ? 1 : t.shape()[d]; }
std::vector<int64_t> NonemptyShape(const HostTensor& t) {
  return t.rank() == 0 ? std::vector<int64_t>{1} : t.shape();
}
int64_t OffsetOf(const HostTensor& t, absl::Span<const int64_t> idx) {
  return t.rank() == 0 ? t.offset() : t.StorageOffset(idx);
}

// Checks 0 <= i < size (or -size <= i < size when `wrap`) and returns the wrapped index.
absl::StatusOr<int64_t> CheckIndex(int64_t i, int64_t size, int64_t dim, bool wrap,
                                   absl::string_view op) {
  if (i >= size || i < (wrap ? -size : 0)) {
    return absl::OutOfRangeError(absl::StrCat(op, ": index ", i, " is out of bounds for dimension ",
                                              dim, " with size ", size));
  }
  return i < 0 ? i + size : i;
}

Outputs GatherKernel(const KernelContext& ctx) {
  const HostTensor& self = ctx.inputs[0];
  const HostTensor& index = ctx.inputs[1];
  int64_t dim = CheckedDim(meta::IntAttr(ctx.attrs, "dim"), self.rank());
  int64_t rank = std::max<int64_t>(self.rank(), 1);
  for (int64_t d = 0; d < rank && index.numel() > 0; ++d) {
    if (d != dim && SizeOf(index, d) > SizeOf(self, d)) {
      return absl::InvalidArgumentError(absl::StrCat("gather: size does not match at dimension ", d,
                                                     ": index has ", SizeOf(index, d),
                                                     ", self has ", SizeOf(self, d)));
    }
  }
  HostTensor out = NewOutput(ctx);
  int64_t o = 0;
  absl::Status status;
  std::vector<int64_t> src;
  ForEachIndex(NonemptyShape(index), [&](absl::Span<const int64_t> idx) {
    if (!status.ok()) return;
    absl::StatusOr<int64_t> i =
        CheckIndex(index.LoadInt(OffsetOf(index, idx)), SizeOf(self, dim), dim, false, "gather");
    if (!i.ok()) {
      status = i.status();
      return;
    }
    src.assign(idx.begin(), idx.end());
    src[dim] = *i;
    CopyElem(self, OffsetOf(self, src), out, o++);
  });
  if (!status.ok()) return status;
  return std::vector<HostTensor>{std::move(out)};
}

// Writes the per-element accumulators of scatter_add / index_put (double for floating `out`,
// int64 otherwise) into the contiguous `out`, rounding once.
void StoreAccumulators(bool floating, const std::vector<double>& acc_f,
                       const std::vector<int64_t>& acc_i, HostTensor& out) {
  for (int64_t o = 0; o < out.numel(); ++o) {
    if (floating) {
      out.StoreDouble(o, acc_f[o]);
    } else {
      out.StoreInt(o, acc_i[o]);
    }
  }
}

// scatter (add = false) and scatter_add (add = true). Sums are kept in double (int64 for
// integral dtypes) and rounded once at the end.
Outputs ScatterKernel(const KernelContext& ctx, bool add) {
  const HostTensor& self = ctx.inputs[0];
  const HostTensor& index = ctx.inputs[1];
  const HostTensor& src = ctx.inputs[2];
  int64_t dim = CheckedDim(meta::IntAttr(ctx.attrs, "dim"), self.rank());
  int64_t rank = std::max<int64_t>(self.rank(), 1);
  const char* op = add ? "scatter_add" : "scatter";
  for (int64_t d = 0; d < rank && index.numel() > 0; ++d) {
    if (SizeOf(index, d) > SizeOf(src, d) || (d != dim && SizeOf(index, d) > SizeOf(self, d))) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": index size ", SizeOf(index, d), " at dimension ", d,
                       " exceeds src size ", SizeOf(src, d), " or self size ", SizeOf(self, d)));
    }
  }
  HostTensor out = NewOutput(ctx);
  bool floating = IsFloating(out.dtype());
  std::vector<double> acc_f;
  std::vector<int64_t> acc_i;
  ForEachIndex(NonemptyShape(self), [&](absl::Span<const int64_t> idx) {
    int64_t off = OffsetOf(self, idx);
    if (floating) {
      acc_f.push_back(self.LoadDouble(off));
    } else {
      acc_i.push_back(self.LoadInt(off));
    }
  });
  // Row-major strides of the (non-empty) output, for the accumulator.
  std::vector<int64_t> shape = NonemptyShape(self);
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * shape[d + 1];
  }
  absl::Status status;
  ForEachIndex(NonemptyShape(index), [&](absl::Span<const int64_t> idx) {
    if (!status.ok()) return;
    absl::StatusOr<int64_t> i =
        CheckIndex(index.LoadInt(OffsetOf(index, idx)), SizeOf(self, dim), dim, false, op);
    if (!i.ok()) {
      status = i.status();
      return;
    }
    int64_t pos = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      pos += (static_cast<int64_t>(d) == dim ? *i : idx[d]) * strides[d];
    }
    int64_t s = OffsetOf(src, idx);
    if (floating) {
      double v = src.LoadDouble(s);
      acc_f[pos] = add ? acc_f[pos] + v : v;
    } else {
      int64_t v = src.LoadInt(s);
      // Wrapping add, as the integer dtypes do.
      acc_i[pos] = add ? WrapAdd(acc_i[pos], v) : v;
    }
  });
  if (!status.ok()) return status;
  StoreAccumulators(floating, acc_f, acc_i, out);
  return std::vector<HostTensor>{std::move(out)};
}

Outputs IndexSelectKernel(const KernelContext& ctx) {
  const HostTensor& self = ctx.inputs[0];
  const HostTensor& index = ctx.inputs[1];
  int64_t dim = CheckedDim(meta::IntAttr(ctx.attrs, "dim"), self.rank());
  HostTensor flat = index.Contiguous();  // 0-D or 1-D
  std::vector<int64_t> picks(flat.numel());
  for (int64_t k = 0; k < flat.numel(); ++k) {
    absl::StatusOr<int64_t> i =
        CheckIndex(flat.LoadInt(k), SizeOf(self, dim), dim, false, "index_select");
    if (!i.ok()) return i.status();
    picks[k] = *i;
  }
  HostTensor out = NewOutput(ctx);
  if (self.rank() == 0) {
    if (picks.size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "index_select(): Index to scalar can have only 1 value, got ", picks.size()));
    }
    CopyElem(self, self.offset(), out, 0);
    return std::vector<HostTensor>{std::move(out)};
  }
  int64_t o = 0;
  std::vector<int64_t> src;
  ForEachIndex(out.shape(), [&](absl::Span<const int64_t> idx) {
    src.assign(idx.begin(), idx.end());
    src[dim] = picks[idx[dim]];
    CopyElem(self, self.StorageOffset(src), out, o++);
  });
  return std::vector<HostTensor>{std::move(out)};
}

// Output = self with dim `dim` replaced by the index's dims; index values pick along `dim`.
// Used by embedding (weight rows, dim 0, no wrapping) and index_tensor (wrapping).
Outputs TakeAlong(const KernelContext& ctx, int64_t dim, bool wrap, absl::string_view op) {
  const HostTensor& self = ctx.inputs[0];
  const HostTensor& index = ctx.inputs[1];
  HostTensor flat = index.Contiguous();
  std::vector<int64_t> picks(flat.numel());
  for (int64_t k = 0; k < flat.numel(); ++k) {
    absl::StatusOr<int64_t> i = CheckIndex(flat.LoadInt(k), self.shape()[dim], dim, wrap, op);
    if (!i.ok()) return i.status();
    picks[k] = *i;
  }
  // Row-major strides of the index shape, to turn the index part of an output index into k.
  int64_t ir = index.rank();
  std::vector<int64_t> istrides(ir, 1);
  for (int64_t d = ir - 2; d >= 0; --d) istrides[d] = istrides[d + 1] * index.shape()[d + 1];
  HostTensor out = NewOutput(ctx);
  int64_t o = 0;
  std::vector<int64_t> src(self.rank());
  ForEachIndex(out.shape(), [&](absl::Span<const int64_t> idx) {
    int64_t k = 0;
    for (int64_t d = 0; d < ir; ++d) k += idx[dim + d] * istrides[d];
    for (int64_t d = 0; d < self.rank(); ++d) {
      src[d] = d < dim ? idx[d] : d == dim ? picks[k] : idx[d - 1 + ir];
    }
    CopyElem(self, self.StorageOffset(src), out, o++);
  });
  return std::vector<HostTensor>{std::move(out)};
}

// out = self; out[(:,)*dim + (index,)] = values (broadcast), or += when accumulating. Sums
// are kept in double (int64 for integral dtypes) and rounded once.
Outputs IndexPutKernel(const KernelContext& ctx) {
  const HostTensor& self = ctx.inputs[0];
  const HostTensor& index = ctx.inputs[1];
  const HostTensor& values = ctx.inputs[2];
  int64_t dim = CheckedDim(meta::IntAttr(ctx.attrs, "dim"), self.rank());
  absl::StatusOr<bool> accumulate = GetBool(ctx.attrs, "accumulate");
  COIL_CHECK(accumulate.ok());
  HostTensor flat = index.Contiguous();
  std::vector<int64_t> picks(flat.numel());
  for (int64_t k = 0; k < flat.numel(); ++k) {
    absl::StatusOr<int64_t> i =
        CheckIndex(flat.LoadInt(k), self.shape()[dim], dim, true, "index_put");
    if (!i.ok()) return i.status();
    picks[k] = *i;
  }
  // The indexed shape self[:dim] + index.shape + self[dim+1:], which values broadcast to.
  int64_t ir = index.rank();
  std::vector<int64_t> indexed(self.shape().begin(), self.shape().begin() + dim);
  indexed.insert(indexed.end(), index.shape().begin(), index.shape().end());
  indexed.insert(indexed.end(), self.shape().begin() + dim + 1, self.shape().end());
  int64_t lead = static_cast<int64_t>(indexed.size()) - values.rank();
  for (int64_t d = 0; d < values.rank(); ++d) {
    if (lead < 0 || (values.shape()[d] != 1 && values.shape()[d] != indexed[d + lead])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shape mismatch: value tensor of shape [", absl::StrJoin(values.shape(), ", "),
          "] cannot be broadcast to indexing result of shape [", absl::StrJoin(indexed, ", "),
          "]"));
    }
  }
  std::vector<int64_t> istrides(ir, 1);
  for (int64_t d = ir - 2; d >= 0; --d) istrides[d] = istrides[d + 1] * index.shape()[d + 1];
  HostTensor out = self.Contiguous().To(ctx.output_dtypes[0]);
  bool floating = IsFloating(out.dtype());
  std::vector<double> acc_f;
  std::vector<int64_t> acc_i;
  for (int64_t o = 0; o < out.numel(); ++o) {
    if (floating) {
      acc_f.push_back(out.LoadDouble(o));
    } else {
      acc_i.push_back(out.LoadInt(o));
    }
  }
  std::vector<int64_t> dst(self.rank()), src(values.rank());
  ForEachIndex(indexed, [&](absl::Span<const int64_t> idx) {
    int64_t k = 0;
    for (int64_t d = 0; d < ir; ++d) k += idx[dim + d] * istrides[d];
    for (int64_t d = 0; d < self.rank(); ++d) {
      dst[d] = d < dim ? idx[d] : d == dim ? picks[k] : idx[d - 1 + ir];
    }
    for (int64_t d = 0; d < values.rank(); ++d) {
      src[d] = values.shape()[d] == 1 ? 0 : idx[d + lead];
    }
    int64_t pos = out.StorageOffset(dst);
    int64_t v = values.StorageOffset(src);
    if (floating) {
      acc_f[pos] = *accumulate ? acc_f[pos] + values.LoadDouble(v) : values.LoadDouble(v);
    } else {
      int64_t x = values.LoadInt(v);
      acc_i[pos] = *accumulate ? WrapAdd(acc_i[pos], x) : x;
    }
  });
  StoreAccumulators(floating, acc_f, acc_i, out);
  return std::vector<HostTensor>{std::move(out)};
}

Outputs OneHotKernel(const KernelContext& ctx) {
  const HostTensor& self = ctx.inputs[0];
  int64_t n = meta::IntAttr(ctx.attrs, "num_classes");
  HostTensor out = NewOutput(ctx);
  int64_t base = 0;
  absl::Status status;
  ForEachIndex(self.shape(), [&](absl::Span<const int64_t> idx) {
    if (!status.ok()) return;
    int64_t c = self.LoadInt(self.StorageOffset(idx));
    if (c < 0 || c >= n) {
      status = absl::OutOfRangeError(
          absl::StrCat("one_hot: class value ", c, " is out of range [0, ", n, ")"));
      return;
    }
    out.StoreInt(base + c, 1);
    base += n;
  });
  if (!status.ok()) return status;
  return std::vector<HostTensor>{std::move(out)};
}

}  // namespace

void RegisterIndexingKernels(ReferenceKernels& k) {
  k.Register("aten.gather", GatherKernel);
  k.Register("aten.scatter", [](const KernelContext& ctx) { return ScatterKernel(ctx, false); });
  k.Register("aten.scatter_add", [](const KernelContext& ctx) { return ScatterKernel(ctx, true); });
  k.Register("aten.index_select", IndexSelectKernel);
  k.Register("aten.embedding",
             [](const KernelContext& ctx) { return TakeAlong(ctx, 0, false, "embedding"); });
  k.Register("aten.index_tensor", [](const KernelContext& ctx) {
    return TakeAlong(ctx, CheckedDim(meta::IntAttr(ctx.attrs, "dim"), ctx.inputs[0].rank()), true, "index");
  });
  k.Register("aten.index_put", IndexPutKernel);
  k.Register("aten.one_hot", OneHotKernel);
}

}  // namespace coil
