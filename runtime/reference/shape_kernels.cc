// Reference kernels of the shape op family, part 1: reshapes and views, dimension reorderings
// and per-element copies (the ops of ir/ops/shape_ops.cc). Part 2 is shape_kernels_2.cc.
//
// Every kernel writes a fresh contiguous output and reads its input through multi-indices, so
// non-contiguous inputs (any strides and offset) work unchanged.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/ops/meta_util.h"
#include "runtime/reference/kernel_registry.h"
#include "runtime/reference/kernel_util.h"

namespace coil {

void RegisterShapeKernels2(ReferenceKernels& k);  // shape_kernels_2.cc

namespace {

using Outputs = absl::StatusOr<std::vector<HostTensor>>;

// Builds output 0 element by element: `fn(out_index, in_index)` fills in_index (sized to the
// input's rank) with the input element to copy.
template <typename Fn>
HostTensor Gather(const KernelContext& ctx, Fn&& fn) {
  const HostTensor& in = ctx.inputs[0];
  HostTensor out = NewOutput(ctx);
  std::vector<int64_t> src(in.rank());
  int64_t o = 0;
  ForEachIndex(out.shape(), [&](absl::Span<const int64_t> idx) {
    fn(idx, src);
    CopyElem(in, in.StorageOffset(src), out, o++);
  });
  return out;
}

// Copies the input's elements in row-major order into output 0 (reshape and friends).
Outputs RowMajorCopy(const KernelContext& ctx) {
  const HostTensor& in = ctx.inputs[0];
  HostTensor out = NewOutput(ctx);
  if (in.numel() != out.numel()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot reshape ", in.TypeString(), " (", in.numel(), " elements) into [",
                     absl::StrJoin(out.shape(), ", "), "] (", out.numel(), " elements)"));
  }
  int64_t o = 0;
  ForEachIndex(in.shape(), [&](absl::Span<const int64_t> idx) {
    CopyElem(in, in.StorageOffset(idx), out, o++);
  });
  return std::vector<HostTensor>{std::move(out)};
}

// out dim i is input dim order[i].
Outputs Permuted(const KernelContext& ctx, const std::vector<int64_t>& order) {
  return std::vector<HostTensor>{
      Gather(ctx, [&](absl::Span<const int64_t> o, std::vector<int64_t>& s) {
        for (size_t i = 0; i < order.size(); ++i) s[order[i]] = o[i];
      })};
}

Outputs Permute(const KernelContext& ctx) {
  int64_t rank = ctx.inputs[0].rank();
  std::vector<int64_t> order;
  for (int64_t d : meta::IntsAttr(ctx.attrs, "dims")) order.push_back(CheckedDim(d, rank));
  return Permuted(ctx, order);
}

Outputs Transpose(const KernelContext& ctx) {
  int64_t rank = ctx.inputs[0].rank();
  std::vector<int64_t> order(rank);
  for (int64_t i = 0; i < rank; ++i) order[i] = i;
  if (rank > 0)
    std::swap(order[CheckedDim(meta::IntAttr(ctx.attrs, "dim0"), rank)], order[CheckedDim(meta::IntAttr(ctx.attrs, "dim1"), rank)]);
  return Permuted(ctx, order);
}

Outputs T(const KernelContext& ctx) {
  int64_t rank = ctx.inputs[0].rank();
  std::vector<int64_t> order(rank);
  for (int64_t i = 0; i < rank; ++i) order[i] = rank - 1 - i;
  return Permuted(ctx, order);
}

Outputs Movedim(const KernelContext& ctx) {
  int64_t rank = ctx.inputs[0].rank();
  IntList src = meta::IntsAttr(ctx.attrs, "source"), dst = meta::IntsAttr(ctx.attrs, "destination");
  std::vector<int64_t> order(rank, -1);
  std::vector<bool> used(rank, false);
  for (size_t i = 0; i < src.size() && rank > 0; ++i) {
    order[CheckedDim(dst[i], rank)] = CheckedDim(src[i], rank);
    used[CheckedDim(src[i], rank)] = true;
  }
  int64_t next = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (order[i] >= 0) continue;
    while (used[next]) ++next;
    order[i] = next++;
  }
  return Permuted(ctx, order);
}

Outputs Expand(const KernelContext& ctx) {
  const HostTensor& in = ctx.inputs[0];
  const std::vector<int64_t>& shape = ctx.output_shapes[0];
  int64_t lead = static_cast<int64_t>(shape.size()) - in.rank();
  for (int64_t j = 0; j < in.rank(); ++j) {
    if (in.shape()[j] != 1 && in.shape()[j] != shape[j + lead]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the expanded size of the tensor (", shape[j + lead], ") must match the existing size (",
          in.shape()[j], ") at non-singleton dimension ", j + lead));
    }
  }
  return std::vector<HostTensor>{
      Gather(ctx, [&](absl::Span<const int64_t> o, std::vector<int64_t>& s) {
        for (int64_t j = 0; j < in.rank(); ++j) s[j] = in.shape()[j] == 1 ? 0 : o[j + lead];
      })};
}

Outputs Flip(const KernelContext& ctx) {
  const HostTensor& in = ctx.inputs[0];
  std::vector<bool> flip(in.rank(), false);
  for (int64_t d : meta::IntsAttr(ctx.attrs, "dims")) {
    if (in.rank() > 0) flip[CheckedDim(d, in.rank())] = true;
  }
  return std::vector<HostTensor>{
      Gather(ctx, [&](absl::Span<const int64_t> o, std::vector<int64_t>& s) {
        for (int64_t d = 0; d < in.rank(); ++d) s[d] = flip[d] ? in.shape()[d] - 1 - o[d] : o[d];
      })};
}

int64_t PositiveMod(int64_t a, int64_t n) { return ((a % n) + n) % n; }

Outputs Roll(const KernelContext& ctx) {
  const HostTensor& in = ctx.inputs[0];
  IntList shifts = meta::IntsAttr(ctx.attrs, "shifts"), dims = meta::IntsAttr(ctx.attrs, "dims");
  if (dims.empty()) {
    // Roll the flattened tensor: output element k is input element (k - shift) mod numel.
    HostTensor flat = in.Contiguous();
    HostTensor out = NewOutput(ctx);
    int64_t n = in.numel();
    int64_t shift = n == 0 ? 0 : PositiveMod(shifts[0], n);
    for (int64_t k = 0; k < n; ++k) CopyElem(flat, PositiveMod(k - shift, n), out, k);
    return std::vector<HostTensor>{std::move(out)};
  }
  std::vector<int64_t> shift(std::max<int64_t>(in.rank(), 1), 0);
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = CheckedDim(dims[i], in.rank());
    int64_t n = in.rank() == 0 ? 1 : in.shape()[d];
    if (n > 0) shift[d] = PositiveMod(shift[d] + PositiveMod(shifts[i], n), n);
  }
  return std::vector<HostTensor>{
      Gather(ctx, [&](absl::Span<const int64_t> o, std::vector<int64_t>& s) {
        for (int64_t d = 0; d < in.rank(); ++d) s[d] = PositiveMod(o[d] - shift[d], in.shape()[d]);
      })};
}

// tril (lower = true) keeps elements with col - row <= diagonal; triu those with >= diagonal.
Outputs Tri(const KernelContext& ctx, bool lower) {
  const HostTensor& in = ctx.inputs[0];
  int64_t diagonal = meta::IntAttr(ctx.attrs, "diagonal");
  HostTensor out = NewOutput(ctx);
  int64_t o = 0;
  int64_t r = in.rank();
  ForEachIndex(in.shape(), [&](absl::Span<const int64_t> idx) {
    int64_t delta = idx[r - 1] - idx[r - 2];
    bool keep = lower ? delta <= diagonal : delta >= diagonal;
    if (keep) CopyElem(in, in.StorageOffset(idx), out, o);
    ++o;
  });
  return std::vector<HostTensor>{std::move(out)};
}

Outputs Diagonal(const KernelContext& ctx) {
  const HostTensor& in = ctx.inputs[0];
  int64_t r = in.rank();
  int64_t d1 = CheckedDim(meta::IntAttr(ctx.attrs, "dim1"), r), d2 = CheckedDim(meta::IntAttr(ctx.attrs, "dim2"), r);
  int64_t offset = meta::IntAttr(ctx.attrs, "offset");
  std::vector<int64_t> rest;
  for (int64_t i = 0; i < r; ++i) {
    if (i != d1 && i != d2) rest.push_back(i);
  }
  return std::vector<HostTensor>{
      Gather(ctx, [&](absl::Span<const int64_t> o, std::vector<int64_t>& s) {
        for (size_t i = 0; i < rest.size(); ++i) s[rest[i]] = o[i];
        int64_t k = o[rest.size()];
        s[d1] = k + std::max<int64_t>(-offset, 0);
        s[d2] = k + std::max<int64_t>(offset, 0);
      })};
}

}  // namespace

void RegisterShapeKernels(ReferenceKernels& k) {
  for (const char* op : {"aten.reshape", "aten.view", "aten.squeeze", "aten.unsqueeze",
                         "aten.flatten", "aten.unflatten", "aten.contiguous", "aten.clone"}) {
    k.Register(op, RowMajorCopy);
  }
  k.Register("aten.permute", Permute);
  k.Register("aten.transpose", Transpose);
  k.Register("aten.t", T);
  k.Register("aten.movedim", Movedim);
  k.Register("aten.expand", Expand);
  k.Register("aten.flip", Flip);
  k.Register("aten.roll", Roll);
  k.Register("aten.tril", [](const KernelContext& ctx) { return Tri(ctx, true); });
  k.Register("aten.triu", [](const KernelContext& ctx) { return Tri(ctx, false); });
  k.Register("aten.diagonal", Diagonal);
  RegisterShapeKernels2(k);
}

}  // namespace coil
