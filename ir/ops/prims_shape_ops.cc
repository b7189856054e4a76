// Schemas and meta functions of the shape and layout prims (docs/prims.md): reshape, permute,
// broadcast_in_dim, slice, squeeze, concat, pad and rev.
//
// Symbolic sizes: a relation the meta function cannot decide (a symbolic slice limit against a
// symbolic size, a symbolic operand dim of broadcast_in_dim that may be 1) is accepted and
// re-checked by the reference kernel on concrete sizes; provably wrong operands are errors.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "ir/op_registry.h"
#include "ir/ops/meta_util.h"
#include "ir/ops/register_ops.h"
#include "ir/shape_assumption.h"

namespace coil {
namespace {

using meta::Error;
using Types = absl::StatusOr<std::vector<TensorType>>;
using Inputs = absl::Span<const TensorType>;

std::string Ints(const IntList& v) { return absl::StrCat("[", absl::StrJoin(v, ", "), "]"); }

// A list attribute with one entry per dim.
absl::Status CheckPerDim(const std::string& attr, size_t n, int64_t rank) {
  if (static_cast<int64_t>(n) != rank) {
    return Error(attr, " has ", n, " entries, expected one per dim (rank ", rank, ")");
  }
  return absl::OkStatus();
}

// Dims each in [0, rank) and unique (any order).
absl::Status CheckDimSet(const IntList& dims, int64_t rank) {
  std::vector<bool> seen(rank, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return Error("dim ", d, " is out of range for a tensor of rank ", rank,
                   " (prims take normalized dims in [0, rank))");
    }
    if (seen[d]) return Error("dim ", d, " appears more than once in ", Ints(dims));
    seen[d] = true;
  }
  return absl::OkStatus();
}


Types ReshapeMeta(Inputs in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  SymList shape = meta::SymsAttr(attrs, "shape");
  SymExpr numel = 1;
  for (const SymExpr& d : shape) {
    if (d.is_constant() && d.constant() < 0) {
      return Error("negative size ", d.constant(), " in ", meta::ShapeText(shape),
                   " (prims.reshape infers no -1)");
    }
    numel *= d;
  }
  if (!MayEqual(numel, x.NumElements(), "prims.reshape keeps the element count")) {
    return Error("shape ", meta::ShapeText(shape), " has ", numel.ToString(),
                 " elements but the input ", meta::ShapeText(x.shape), " has ",
                 x.NumElements().ToString());
  }
  return std::vector<TensorType>{meta::Like(x, std::vector<SymExpr>(shape.begin(), shape.end()))};
}

Types PermuteMeta(Inputs in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  IntList dims = meta::IntsAttr(attrs, "dims");
  if (static_cast<int64_t>(dims.size()) != x.rank() ||
      !CheckDimSet(dims, x.rank()).ok()) {
    return Error("dims ", Ints(dims), " is not a permutation of the ", x.rank(),
                 " dims of ", meta::ShapeText(x.shape));
  }
  std::vector<SymExpr> shape;
  for (int64_t d : dims) shape.push_back(x.shape[d]);
  return std::vector<TensorType>{meta::Like(x, shape)};
}

Types BroadcastInDimMeta(Inputs in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  SymList shape = meta::SymsAttr(attrs, "shape");
  IntList bd = meta::IntsAttr(attrs, "broadcast_dimensions");
  const int64_t out_rank = static_cast<int64_t>(shape.size());
  if (static_cast<int64_t>(bd.size()) != x.rank()) {
    return Error("broadcast_dimensions ", Ints(bd), " has ", bd.size(),
                 " entries, expected one per input dim (rank ", x.rank(), ")");
  }
  for (const SymExpr& d : shape) {
    if (d.is_constant() && d.constant() < 0) {
      return Error("negative size in shape ", meta::ShapeText(shape));
    }
  }
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (bd[i] < 0 || bd[i] >= out_rank) {
      return Error("broadcast_dimensions[", i, "] = ", bd[i],
                   " is out of range for the output rank ", out_rank);
    }
    if (i > 0 && bd[i] <= bd[i - 1]) {
      return Error("broadcast_dimensions ", Ints(bd), " must be strictly increasing");
    }
  }
  for (int64_t i = 0; i < x.rank(); ++i) {
    const SymExpr& from = x.shape[i];
    const SymExpr& to = shape[bd[i]];
    if (!MayBroadcast(from, to, "a broadcast input dim is 1 or the output size")) {
      return Error("input dim ", i, " of size ", from.ToString(),
                   " cannot broadcast to output dim ", bd[i], " of size ", to.ToString(),
                   " (it must be equal or 1)");
    }
  }
  return std::vector<TensorType>{meta::Like(x, std::vector<SymExpr>(shape.begin(), shape.end()))};
}

Types SliceMeta(Inputs in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  SymList start = meta::SymsAttr(attrs, "start_indices");
  SymList limit = meta::SymsAttr(attrs, "limit_indices");
  IntList strides = meta::IntsAttr(attrs, "strides");
  if (absl::Status s = CheckPerDim("start_indices", start.size(), x.rank()); !s.ok())
    return s;
  if (absl::Status s = CheckPerDim("limit_indices", limit.size(), x.rank()); !s.ok())
    return s;
  if (absl::Status s = CheckPerDim("strides", strides.size(), x.rank()); !s.ok()) return s;
  std::vector<SymExpr> shape;
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (strides[d] < 1) return Error("stride ", strides[d], " of dim ", d, " is not >= 1");
    if (!MayBeLe(0, start[d], "a slice starts at 0 or later") ||
        !MayBeLe(start[d], limit[d], "a slice's start is at most its limit") ||
        !MayBeLe(limit[d], x.shape[d], "a slice ends within its input")) {
      return Error("dim ", d, " slice [", start[d].ToString(), ", ", limit[d].ToString(),
                   ") is out of range for size ", x.shape[d].ToString(),
                   " (need 0 <= start <= limit <= size)");
    }
    shape.push_back(strides[d] == 1
                        ? limit[d] - start[d]
                        : SymExpr::FloorDiv(limit[d] - start[d] + (strides[d] - 1), strides[d]));
  }
  return std::vector<TensorType>{meta::Like(x, shape)};
}

Types SqueezeMeta(Inputs in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  IntList dims = meta::IntsAttr(attrs, "dims");
  if (absl::Status s = CheckDimSet(dims, x.rank()); !s.ok()) return s;
  std::vector<bool> drop(x.rank(), false);
  for (int64_t d : dims) {
    if (!meta::IsConst(x.shape[d], 1)) {
      return Error("dim ", d, " has size ", x.shape[d].ToString(),
                   ", not 1; only dims of size 1 can be squeezed");
    }
    drop[d] = true;
  }
  std::vector<SymExpr> shape;
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (!drop[i]) shape.push_back(x.shape[i]);
  }
  return std::vector<TensorType>{meta::Like(x, shape)};
}

Types ConcatMeta(Inputs in, const AttrMap& attrs) {
  if (in.empty()) return Error("needs at least one tensor");
  const TensorType& x = in[0];
  int64_t dim = meta::IntAttr(attrs, "dim");
  if (dim < 0 || dim >= x.rank()) {
    return Error("dim ", dim, " is out of range for a tensor of rank ", x.rank(),
                 " (prims take normalized dims in [0, rank))");
  }
  SymExpr total = 0;
  for (size_t k = 0; k < in.size(); ++k) {
    const TensorType& t = in[k];
    if (t.rank() != x.rank()) {
      return Error("tensor ", k, " has rank ", t.rank(), ", tensor 0 has rank ", x.rank());
    }
    if (t.dtype != x.dtype) {
      return Error("tensor ", k, " is ", DTypeName(t.dtype), ", tensor 0 is ",
                   DTypeName(x.dtype), " (prims do not promote)");
    }
    if (t.device != x.device) return Error("tensors are on different devices");
    for (int64_t d = 0; d < x.rank(); ++d) {
      if (d != dim && t.shape[d] != x.shape[d]) {
        return Error("tensor ", k, " has shape ", meta::ShapeText(t.shape),
                     ", which differs from ", meta::ShapeText(x.shape), " in dim ", d);
      }
    }
    total += t.shape[dim];
  }
  std::vector<SymExpr> shape = x.shape;
  shape[dim] = total;
  return std::vector<TensorType>{meta::Like(x, shape)};
}

Types PadMeta(Inputs in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  IntList low = meta::IntsAttr(attrs, "low"), high = meta::IntsAttr(attrs, "high");
  if (absl::Status s = CheckPerDim("low", low.size(), x.rank()); !s.ok()) return s;
  if (absl::Status s = CheckPerDim("high", high.size(), x.rank()); !s.ok()) return s;
  std::vector<SymExpr> shape;
  for (int64_t d = 0; d < x.rank(); ++d) {
    SymExpr n = x.shape[d] + low[d] + high[d];
    if (!MayBeLe(0, n, "a padded size is not negative")) {
      return Error("dim ", d, " of size ", x.shape[d].ToString(), " padded by (",
                   low[d], ", ", high[d], ") would have negative size ", n.ToString());
    }
    shape.push_back(n);
  }
  return std::vector<TensorType>{meta::Like(x, shape)};
}

Types RevMeta(Inputs in, const AttrMap& attrs) {
  if (absl::Status s = CheckDimSet(meta::IntsAttr(attrs, "dims"), in[0].rank());
      !s.ok())
    return s;
  return std::vector<TensorType>{meta::Like(in[0], in[0].shape)};
}

OpSchema Unary(const std::string& prim, std::vector<AttrSpec> attrs, OpClass cls, MetaFn meta,
               std::string doc) {
  return meta::MakeSchema(prim, {{"x"}}, std::move(attrs), cls, std::move(meta), std::move(doc));
}

}  // namespace

void RegisterPrimsShapeOps(OpRegistry& r) {
  auto req = [](const char* name, AttrKind kind) { return AttrSpec{name, kind, std::nullopt}; };
  r.Register(Unary("prims.reshape", {req("shape", AttrKind::kSyms)}, OpClass::kShape, ReshapeMeta,
                   "row-major reshape to explicit sizes (no -1); element counts must match"));
  r.Register(Unary("prims.permute", {req("dims", AttrKind::kInts)}, OpClass::kShape, PermuteMeta,
                   "torch.permute with a permutation of [0, rank)"));
  r.Register(Unary("prims.broadcast_in_dim",
                   {req("shape", AttrKind::kSyms), req("broadcast_dimensions", AttrKind::kInts)},
                   OpClass::kShape, BroadcastInDimMeta,
                   "JAX broadcast_in_dim: input dim i maps to output dim broadcast_dimensions[i] "
                   "(strictly increasing), of equal size or 1"));
  r.Register(Unary("prims.slice",
                   {req("start_indices", AttrKind::kSyms), req("limit_indices", AttrKind::kSyms),
                    req("strides", AttrKind::kInts)},
                   OpClass::kShape, SliceMeta,
                   "x[start:limit:stride] per dim; 0 <= start <= limit <= size, stride >= 1"));
  r.Register(Unary("prims.squeeze", {req("dims", AttrKind::kInts)}, OpClass::kShape, SqueezeMeta,
                   "removes the given dims, each of static size 1"));
  r.Register(meta::MakeSchema("prims.concat", {{"tensors", false, true}},
                              {req("dim", AttrKind::kInt)}, OpClass::kShape, ConcatMeta,
                              "torch.cat(tensors, dim): equal rank and dtype, other dims equal"));
  r.Register(Unary("prims.pad",
                   {req("low", AttrKind::kInts), req("high", AttrKind::kInts),
                    req("value", AttrKind::kFloat)},
                   OpClass::kShape, PadMeta,
                   "pads each dim by low/high elements of value; negative pads crop"));
  r.Register(Unary("prims.rev", {req("dims", AttrKind::kInts)}, OpClass::kShape, RevMeta,
                   "torch.flip(dims)"));
}

}  // namespace coil
