// Reference kernels of the shape op family: reshapes and views, dimension reorderings and
// per-element copies (the ops of ir/ops/shape_ops.cc). Join and slice kernels are in
// shape_kernels_join_slice.cc.
//
// The view ops return views sharing the input's storage, as PyTorch's do (permute, transpose,
// t, movedim, expand, diagonal always; reshape, view, flatten, unflatten, squeeze, unsqueeze
// when the input's strides allow, else a copy, as torch.reshape), so an in-place op on a view
// is seen through its base. The other kernels write a fresh contiguous output and read their
// input through multi-indices, so non-contiguous inputs (any strides and offset) work
// unchanged.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/ops/meta_util.h"
#include "runtime/reference/kernel_registry.h"
#include "runtime/reference/kernel_util.h"

namespace coil {

void RegisterJoinSliceKernels(ReferenceKernels& k);  // shape_kernels_join_slice.cc

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

// Strides that view `in` as `shape` without copying (PyTorch's computeStride), or nullopt
// when the input's strides do not allow it.
std::optional<std::vector<int64_t>> ViewStrides(const HostTensor& in,
                                                const std::vector<int64_t>& shape) {
  std::vector<int64_t> contiguous(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d) {
    contiguous[d] = contiguous[d + 1] * std::max<int64_t>(shape[d + 1], 1);
  }
  if (in.numel() == 0 || in.rank() == 0) return contiguous;
  const std::vector<int64_t>& old_shape = in.shape();
  const std::vector<int64_t>& old_stride = in.strides();
  std::vector<int64_t> stride(shape.size(), 0);
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = old_stride.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = in.rank() - 1; d >= 0; --d) {
    tensor_numel *= old_shape[d];
    if (d == 0 ||
        (old_shape[d - 1] != 1 && old_stride[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        stride[view_d] = view_numel * chunk_base_stride;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = old_stride[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return stride;
}

// reshape and friends: a view when the strides allow (torch.reshape), else a row-major copy.
Outputs ViewOrCopy(const KernelContext& ctx) {
  const HostTensor& in = ctx.inputs[0];
  const std::vector<int64_t>& shape = ctx.output_shapes[0];
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  if (numel == in.numel()) {
    if (std::optional<std::vector<int64_t>> strides = ViewStrides(in, shape)) {
      return std::vector<HostTensor>{in.View(shape, *std::move(strides), in.offset())};
    }
  }
  return RowMajorCopy(ctx);
}

// aten.view never copies: as PyTorch, a layout the new shape cannot view is an error.
Outputs ViewOnly(const KernelContext& ctx) {
  const HostTensor& in = ctx.inputs[0];
  const std::vector<int64_t>& shape = ctx.output_shapes[0];
  if (std::optional<std::vector<int64_t>> strides = ViewStrides(in, shape)) {
    return std::vector<HostTensor>{in.View(shape, *std::move(strides), in.offset())};
  }
  return absl::InvalidArgumentError(
      "aten.view: view size is not compatible with input tensor's size and stride (at least one "
      "dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
}

// out dim i is input dim order[i]: a view with permuted strides.
Outputs Permuted(const KernelContext& ctx, const std::vector<int64_t>& order) {
  const HostTensor& in = ctx.inputs[0];
  std::vector<int64_t> shape, strides;
  for (int64_t d : order) {
    shape.push_back(in.shape()[d]);
    strides.push_back(in.strides()[d]);
  }
  return std::vector<HostTensor>{in.View(shape, strides, in.offset())};
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
  std::vector<int64_t> strides(shape.size(), 0);  // stride 0 along broadcast dims
  for (int64_t j = 0; j < in.rank(); ++j) {
    if (in.shape()[j] != 1) strides[j + lead] = in.strides()[j];
  }
  return std::vector<HostTensor>{in.View(shape, strides, in.offset())};
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
  // A view: the diagonal walks d1 and d2 together from its first element.
  std::vector<int64_t> strides;
  for (int64_t d : rest) strides.push_back(in.strides()[d]);
  strides.push_back(in.strides()[d1] + in.strides()[d2]);
  const std::vector<int64_t>& shape = ctx.output_shapes[0];
  int64_t start = in.offset();
  if (shape.back() > 0) {
    start += std::max<int64_t>(-offset, 0) * in.strides()[d1] +
             std::max<int64_t>(offset, 0) * in.strides()[d2];
  }
  return std::vector<HostTensor>{in.View(shape, strides, start)};
}

}  // namespace

void RegisterShapeKernels(ReferenceKernels& k) {
  for (const char* op : {"aten.reshape", "aten.squeeze", "aten.unsqueeze", "aten.flatten",
                         "aten.unflatten"}) {
    k.Register(op, ViewOrCopy);
  }
  k.Register("aten.view", ViewOnly);
  // Always copies (torch's contiguous() returns self when already contiguous; coil's does not
  // alias, and the op is not marked is_view).
  for (const char* op : {"aten.contiguous", "aten.clone"}) k.Register(op, RowMajorCopy);
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
  RegisterJoinSliceKernels(k);
}

}  // namespace coil
