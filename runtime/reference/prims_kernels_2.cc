// Reference kernels of the prims opset (docs/prims.md), part 2: shape and layout, creation,
// philox_uniform, gather/scatter and copy_to.
//
// Relations the meta function could not decide on symbolic sizes (slice bounds, a
// broadcast_in_dim operand dim that may be 1, gather index sizes) are re-checked here on the
// concrete sizes.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/check.h"
#include "ir/ops/meta_util.h"
#include "runtime/reference/kernel_registry.h"
#include "runtime/reference/kernel_util.h"
#include "runtime/reference/philox.h"

namespace coil {

void RegisterPrimsKernels2(ReferenceKernels& k);

namespace {

using Ctx = const KernelContext&;
using Result = absl::StatusOr<std::vector<HostTensor>>;

absl::Status KernelError(const char* prim, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(prim, ": ", what));
}

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

// Copies `in` in row-major order into the contiguous `out` (same number of elements).
void CopyRowMajor(const HostTensor& in, HostTensor& out) {
  int64_t o = 0;
  ForEachIndex(in.shape(), [&](absl::Span<const int64_t> idx) {
    CopyElem(in, in.StorageOffset(idx), out, o++);
  });
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

Result Permute(Ctx ctx) {
  IntList dims = meta::IntsAttr(ctx.attrs, "dims");
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

// --- creation and random ---------------------------------------------------------------------

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

// --- indexing and copy_to --------------------------------------------------------------------

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
    if (k < 0 || k >= size) {
      status = KernelError(prim, absl::StrCat("index ", k, " is out of range [0, ", size,
                                              ") of dim ", dim));
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
  const HostTensor& src = ctx.inputs[1];
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

void RegisterPrimsKernels2(ReferenceKernels& k) {
  k.Register("prims.reshape", Reshape);
  k.Register("prims.permute", Permute);
  k.Register("prims.broadcast_in_dim", BroadcastInDim);
  k.Register("prims.slice", Slice);
  k.Register("prims.squeeze", Squeeze);
  k.Register("prims.concat", Concat);
  k.Register("prims.pad", Pad);
  k.Register("prims.rev", Rev);
  k.Register("prims.full", Full);
  k.Register("prims.iota", Iota);
  k.Register("prims.philox_uniform", PhiloxUniform);
  k.Register("prims.gather", GatherKernel);
  k.Register("prims.scatter", Scatter);
  k.Register("prims.copy_to", CopyTo);
}

}  // namespace coil
