// Reference kernels of the shape family's join and slice ops (the ops of
// ir/ops/shape_ops_join_slice.cc): cat, stack, split, chunk, slice, select, narrow, pad, repeat
// and tile.
//
// split, chunk, slice, select and narrow return views sharing the input's storage (as
// PyTorch's), so in-place ops on them are seen through the input.
//
// Symbolic attributes (slice bounds, select index, narrow start) must be constants here: the
// interpreter binds them before calling a kernel.
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

void RegisterJoinSliceKernels(ReferenceKernels& k);

namespace {

using Outputs = absl::StatusOr<std::vector<HostTensor>>;

// The value of a possibly symbolic integer attribute, which must be bound by now.
absl::StatusOr<int64_t> SymValue(const AttrMap& a, absl::string_view n) {
  absl::StatusOr<SymExpr> v = GetSym(a, n);
  COIL_CHECK(v.ok()) << v.status().message();
  if (!v->is_constant()) {
    return absl::FailedPreconditionError(
        absl::StrCat("attribute '", n, "' is still symbolic (", v->ToString(),
                     "); the graph's symbols must be bound before running a reference kernel"));
  }
  return v->constant();
}

// Fills output `i` element by element: `fn(out_index, in_index)` fills in_index (sized to
// the input's rank) and returns false for an element that stays as `fill` (padding).
template <typename Fn>
HostTensor Gather(const KernelContext& ctx, const HostTensor& in, int i, Fn&& fn,
                  double fill = 0.0) {
  HostTensor out = NewOutput(ctx, i);
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

std::string Shape(const std::vector<int64_t>& s) {
  return absl::StrCat("[", absl::StrJoin(s, ", "), "]");
}

Outputs Cat(const KernelContext& ctx) {
  HostTensor out = NewOutput(ctx);
  int64_t rank = out.rank();
  int64_t dim = CheckedDim(meta::IntAttr(ctx.attrs, "dim"), rank);
  int64_t base = 0;
  for (size_t k = 0; k < ctx.inputs.size(); ++k) {
    const HostTensor& in = ctx.inputs[k];
    for (int64_t d = 0; d < rank; ++d) {
      if (d != dim && in.shape()[d] != out.shape()[d]) {
        return absl::InvalidArgumentError(
            absl::StrCat("Sizes of tensors must match except in dimension ", dim,
                         ". Expected size ", out.shape()[d], " but got size ", in.shape()[d],
                         " for tensor number ", k, " in the list."));
      }
    }
    std::vector<int64_t> dst;
    ForEachIndex(in.shape(), [&](absl::Span<const int64_t> idx) {
      dst.assign(idx.begin(), idx.end());
      dst[dim] += base;
      CopyElem(in, in.StorageOffset(idx), out, out.StorageOffset(dst));
    });
    base += in.shape()[dim];
  }
  return std::vector<HostTensor>{std::move(out)};
}

Outputs Stack(const KernelContext& ctx) {
  HostTensor out = NewOutput(ctx);
  int64_t dim = CheckedDim(meta::IntAttr(ctx.attrs, "dim"), out.rank());
  for (size_t k = 0; k < ctx.inputs.size(); ++k) {
    const HostTensor& in = ctx.inputs[k];
    if (in.shape() != ctx.inputs[0].shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "stack expects each tensor to be equal size, but got ", Shape(ctx.inputs[0].shape()),
          " at entry 0 and ", Shape(in.shape()), " at entry ", k));
    }
    std::vector<int64_t> dst;
    ForEachIndex(in.shape(), [&](absl::Span<const int64_t> idx) {
      dst.assign(idx.begin(), idx.end());
      dst.insert(dst.begin() + dim, static_cast<int64_t>(k));
      CopyElem(in, in.StorageOffset(idx), out, out.StorageOffset(dst));
    });
  }
  return std::vector<HostTensor>{std::move(out)};
}

// split and chunk: output i holds the next output_shapes[i][dim] entries along dim.
Outputs SplitPieces(const KernelContext& ctx) {
  const HostTensor& in = ctx.inputs[0];
  int64_t dim = CheckedDim(meta::IntAttr(ctx.attrs, "dim"), in.rank());
  int64_t total = 0;
  for (const std::vector<int64_t>& s : ctx.output_shapes) total += s[dim];
  bool chunk_of_empty = in.shape()[dim] == 0;  // chunk gives several empty pieces
  if (total != in.shape()[dim] && !chunk_of_empty) {
    return absl::InvalidArgumentError(absl::StrCat("split sizes sum to ", total, ", but dimension ",
                                                   dim, " has size ", in.shape()[dim]));
  }
  std::vector<HostTensor> outs;
  int64_t base = 0;
  for (size_t i = 0; i < ctx.output_shapes.size(); ++i) {
    int64_t len = ctx.output_shapes[i][dim];
    outs.push_back(in.View(ctx.output_shapes[i], in.strides(),
                           in.offset() + (len > 0 ? base * in.strides()[dim] : 0)));
    base += len;
  }
  return outs;
}

// Python slicing bounds, clamped into [0, size].
int64_t Clamp(int64_t v, int64_t size) {
  if (v < 0) v = std::max<int64_t>(v + size, 0);
  return std::min(v, size);
}

Outputs Slice(const KernelContext& ctx) {
  const HostTensor& in = ctx.inputs[0];
  int64_t dim = CheckedDim(meta::IntAttr(ctx.attrs, "dim"), in.rank());
  absl::StatusOr<int64_t> start = SymValue(ctx.attrs, "start");
  if (!start.ok()) return start.status();
  absl::StatusOr<int64_t> end = SymValue(ctx.attrs, "end");
  if (!end.ok()) return end.status();
  int64_t step = meta::IntAttr(ctx.attrs, "step");
  int64_t size = in.shape()[dim];
  int64_t b = Clamp(*start, size), e = std::max(Clamp(*end, size), b);
  int64_t len = (e - b + step - 1) / step;
  if (len != ctx.output_shapes[0][dim]) {
    return absl::InvalidArgumentError(absl::StrCat(
        "slice [", *start, ":", *end, ":", step, "] of dimension ", dim, " (size ", size, ") has ",
        len, " elements, but the graph's shape says ", ctx.output_shapes[0][dim],
        " (its meta function assumed symbolic sizes >= 2)"));
  }
  std::vector<int64_t> strides = in.strides();
  strides[dim] *= step;
  return std::vector<HostTensor>{in.View(ctx.output_shapes[0], std::move(strides),
                                         in.offset() + (len > 0 ? b * in.strides()[dim] : 0))};
}

Outputs Select(const KernelContext& ctx) {
  const HostTensor& in = ctx.inputs[0];
  int64_t dim = CheckedDim(meta::IntAttr(ctx.attrs, "dim"), in.rank());
  absl::StatusOr<int64_t> index = SymValue(ctx.attrs, "index");
  if (!index.ok()) return index.status();
  int64_t size = in.shape()[dim];
  if (*index < -size || *index >= size) {
    return absl::OutOfRangeError(absl::StrCat("select(): index ", *index,
                                              " out of range for tensor of size ",
                                              Shape(in.shape()), " at dimension ", dim));
  }
  int64_t i = *index < 0 ? *index + size : *index;
  std::vector<int64_t> strides = in.strides();
  strides.erase(strides.begin() + dim);
  return std::vector<HostTensor>{
      in.View(ctx.output_shapes[0], std::move(strides), in.offset() + i * in.strides()[dim])};
}

Outputs Narrow(const KernelContext& ctx) {
  const HostTensor& in = ctx.inputs[0];
  int64_t dim = CheckedDim(meta::IntAttr(ctx.attrs, "dim"), in.rank());
  absl::StatusOr<int64_t> start = SymValue(ctx.attrs, "start");
  if (!start.ok()) return start.status();
  int64_t length = ctx.output_shapes[0][dim];
  int64_t size = in.shape()[dim];
  if (*start < -size || *start > size) {
    return absl::OutOfRangeError(
        absl::StrCat("narrow(): start ", *start, " out of range [", -size, ", ", size, "]"));
  }
  int64_t b = *start < 0 ? *start + size : *start;
  if (b + length > size) {
    return absl::OutOfRangeError(absl::StrCat("narrow(): start (", b, ") + length (", length,
                                              ") exceeds dimension size (", size, ")"));
  }
  return std::vector<HostTensor>{in.View(ctx.output_shapes[0], in.strides(),
                                         in.offset() + (length > 0 ? b * in.strides()[dim] : 0))};
}

enum class PadMode { kConstant, kReflect, kReplicate, kCircular };

Outputs Pad(const KernelContext& ctx) {
  const HostTensor& in = ctx.inputs[0];
  IntList pad = meta::IntsAttr(ctx.attrs, "pad");
  absl::StatusOr<std::string> mode_name = GetString(ctx.attrs, "mode");
  COIL_CHECK(mode_name.ok());
  absl::StatusOr<double> value = GetFloat(ctx.attrs, "value");
  COIL_CHECK(value.ok());
  PadMode mode = *mode_name == "reflect"     ? PadMode::kReflect
                 : *mode_name == "replicate" ? PadMode::kReplicate
                 : *mode_name == "circular"  ? PadMode::kCircular
                                             : PadMode::kConstant;
  int64_t r = in.rank();
  std::vector<int64_t> lo(r, 0), hi(r, 0);
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    int64_t d = r - 1 - static_cast<int64_t>(i);
    lo[d] = pad[2 * i];
    hi[d] = pad[2 * i + 1];
  }
  // Circular padding crops negative sides first, then wraps around the kept part.
  std::vector<int64_t> keep_begin(r), keep_size(r);
  for (int64_t d = 0; d < r; ++d) {
    int64_t n = in.shape()[d];
    keep_begin[d] = std::max<int64_t>(-lo[d], 0);
    keep_size[d] = n - keep_begin[d] - std::max<int64_t>(-hi[d], 0);
    bool padded = ctx.output_shapes[0][d] > 0 && (lo[d] > 0 || hi[d] > 0);
    std::string where =
        absl::StrCat(" (padding (", lo[d], ", ", hi[d], ") of dimension ", d, " of size ", n, ")");
    if (mode == PadMode::kReflect && padded && (lo[d] >= n || hi[d] >= n)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "reflect padding must be less than the corresponding input dimension", where));
    }
    if (mode == PadMode::kReplicate && padded && n == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("replicate padding of an empty dimension", where));
    }
    if (mode == PadMode::kCircular && padded && (lo[d] > keep_size[d] || hi[d] > keep_size[d])) {
      return absl::InvalidArgumentError(
          absl::StrCat("circular padding wraps around more than once", where));
    }
  }
  double fill = mode == PadMode::kConstant ? *value : 0.0;
  return std::vector<HostTensor>{Gather(
      ctx, in, 0,
      [&](absl::Span<const int64_t> o, std::vector<int64_t>& s) {
        for (int64_t d = 0; d < r; ++d) {
          int64_t n = in.shape()[d];
          int64_t p = o[d] - lo[d];
          switch (mode) {
            case PadMode::kConstant:
              if (p < 0 || p >= n) return false;
              break;
            case PadMode::kReflect:
              if (p < 0) p = -p;
              if (p >= n) p = 2 * (n - 1) - p;
              break;
            case PadMode::kReplicate:
              p = std::clamp<int64_t>(p, 0, n - 1);
              break;
            case PadMode::kCircular: {
              int64_t q = o[d] - std::max<int64_t>(lo[d], 0);
              int64_t m = keep_size[d];
              p = keep_begin[d] + ((q % m) + m) % m;
              break;
            }
          }
          s[d] = p;
        }
        return true;
      },
      fill)};
}

Outputs Repeat(const KernelContext& ctx) {
  const HostTensor& in = ctx.inputs[0];
  int64_t lead = static_cast<int64_t>(ctx.output_shapes[0].size()) - in.rank();
  return std::vector<HostTensor>{
      Gather(ctx, in, 0, [&](absl::Span<const int64_t> o, std::vector<int64_t>& s) {
        for (int64_t j = 0; j < in.rank(); ++j) s[j] = o[j + lead] % in.shape()[j];
        return true;
      })};
}

}  // namespace

void RegisterJoinSliceKernels(ReferenceKernels& k) {
  k.Register("aten.cat", Cat);
  k.Register("aten.stack", Stack);
  k.Register("aten.split", SplitPieces);
  k.Register("aten.chunk", SplitPieces);
  k.Register("aten.slice", Slice);
  k.Register("aten.select", Select);
  k.Register("aten.narrow", Narrow);
  k.Register("aten.pad", Pad);
  k.Register("aten.repeat", Repeat);
  k.Register("aten.tile", Repeat);
}

}  // namespace coil
