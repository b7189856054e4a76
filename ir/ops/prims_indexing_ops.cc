// Schemas and meta functions of the indexing prims (docs/prims.md), gather and scatter, and of
// the mutation write-back copy_to: the prims that read or write another tensor's elements at
// given positions.
//
// A symbolic index size that may exceed the input's is accepted and re-checked by the
// reference kernel on concrete sizes; provably wrong operands are errors.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "ir/op_registry.h"
#include "ir/ops/meta_util.h"
#include "ir/ops/register_ops.h"
#include "ir/shape_assumption.h"

namespace coil {
namespace {

using meta::Error;
using Types = absl::StatusOr<std::vector<TensorType>>;
using Inputs = absl::Span<const TensorType>;


// Shared checks of gather and scatter: index dtype and rank, dim, index.size(d) <= x.size(d).
absl::Status CheckIndex(const TensorType& x, const TensorType& index,
                        int64_t dim) {
  if (index.dtype != proto::INT64 && index.dtype != proto::INT32) {
    return Error("index must be int64 or int32, got ", DTypeName(index.dtype));
  }
  if (index.rank() != x.rank()) {
    return Error("index has rank ", index.rank(), ", expected the input's rank ",
                 x.rank());
  }
  if (dim < 0 || dim >= std::max<int64_t>(x.rank(), 1) || (x.rank() == 0 && dim != 0)) {
    return Error("dim ", dim, " is out of range for a tensor of rank ", x.rank(),
                 " (prims take normalized dims in [0, rank))");
  }
  if (index.device != x.device) return Error("operands are on different devices");
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (d != dim && !MayBeLe(index.shape[d], x.shape[d], "the index fits in the input outside the indexed dim")) {
      return Error("index size ", index.shape[d].ToString(), " in dim ", d,
                   " exceeds the input size ", x.shape[d].ToString());
    }
  }
  return absl::OkStatus();
}

Types GatherMeta(Inputs in, const AttrMap& attrs) {
  int64_t dim = meta::IntAttr(attrs, "dim");
  if (absl::Status s = CheckIndex(in[0], in[1], dim); !s.ok()) return s;
  return std::vector<TensorType>{meta::Like(in[0], in[1].shape)};
}

Types ScatterMeta(Inputs in, const AttrMap& attrs) {
  const TensorType &x = in[0], &index = in[1], &src = in[2];
  int64_t dim = meta::IntAttr(attrs, "dim");
  if (absl::Status s = CheckIndex(x, index, dim); !s.ok()) return s;
  if (src.shape != index.shape) {
    return Error("src shape ", meta::ShapeText(src.shape), " differs from index shape ",
                 meta::ShapeText(index.shape));
  }
  if (src.dtype != x.dtype) {
    return Error("src is ", DTypeName(src.dtype), ", input is ", DTypeName(x.dtype),
                 " (prims do not promote)");
  }
  if (src.device != x.device) return Error("operands are on different devices");
  std::string reduce = meta::StringAttr(attrs, "reduce");
  if (reduce != "none" && reduce != "add") {
    return Error("reduce must be \"none\" or \"add\", got \"", reduce, "\"");
  }
  if (reduce == "add" && IsBool(x.dtype)) return Error("reduce \"add\" rejects bool");
  return std::vector<TensorType>{meta::Like(x, x.shape)};
}

Types CopyToMeta(Inputs in, const AttrMap&) {
  const TensorType &dst = in[0], &src = in[1];
  if (dst.shape != src.shape) {
    return Error("src shape ", meta::ShapeText(src.shape),
                 " differs from dst shape ", meta::ShapeText(dst.shape));
  }
  if (dst.device != src.device) return Error("operands are on different devices");
  return std::vector<TensorType>{meta::Like(dst, dst.shape)};
}

}  // namespace

void RegisterPrimsIndexingOps(OpRegistry& r) {
  auto req = [](const char* name, AttrKind kind) { return AttrSpec{name, kind, std::nullopt}; };
  r.Register(meta::MakeSchema("prims.gather", {{"x"}, {"index"}}, {req("dim", AttrKind::kInt)},
                              OpClass::kIndexing, GatherMeta,
                              "torch.gather(x, dim, index); an index outside [0, size) is a "
                              "kernel error"));
  r.Register(meta::MakeSchema(
      "prims.scatter", {{"x"}, {"index"}, {"src"}},
      {req("dim", AttrKind::kInt), req("reduce", AttrKind::kString)}, OpClass::kIndexing,
      ScatterMeta,
      "torch.scatter(x, dim, index, src) (reduce \"none\": the last write wins in row-major "
      "order) or scatter_add (reduce \"add\")"));
  OpSchema copy_to = meta::MakeSchema(
      "prims.copy_to", {{"dst"}, {"src"}}, {}, OpClass::kElementwise, CopyToMeta,
      "dst.copy_(src): writes src (converted to dst's dtype) into the graph input dst; the "
      "output aliases dst");
  copy_to.mutated_input = 0;
  r.Register(std::move(copy_to));
}

}  // namespace coil
