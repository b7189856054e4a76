// Schemas and meta functions of the indexing op family: gather, scatter, scatter_add,
// index_select, embedding, index_tensor and index_put (advanced indexing with one index tensor)
// and one_hot.
//
// Index values are data: meta functions check only dtypes, ranks and static sizes; the
// reference kernels check every index against its bound at run time. Ops whose output shape
// depends on data (nonzero, boolean masks) are not defined.
#include <algorithm>
#include <string>
#include <vector>

#include "ir/op_registry.h"
#include "ir/ops/meta_util.h"
#include "ir/ops/register_ops.h"
#include "ir/shape_assumption.h"

namespace coil {
namespace {

using meta::Error;
using Types = absl::StatusOr<std::vector<TensorType>>;

OpSchema Schema(std::string name, std::vector<OpInput> inputs, std::vector<AttrSpec> attrs,
                MetaFn meta, std::string doc) {
  return meta::MakeSchema(std::move(name), std::move(inputs), std::move(attrs), OpClass::kIndexing,
                          std::move(meta), std::move(doc));
}

bool IsIndexType(DType t) { return t == proto::INT64 || t == proto::INT32; }

// a <= b unless provably not (unknown: a shape assumption, checked at run time).
bool MayBeLe(const SymExpr& a, const SymExpr& b) {
  return coil::MayBeLe(a, b, "the index fits in the input outside the indexed dim");
}

// Rank as torch's ensure_nonempty_dim sees it (a 0-dim tensor counts as 1-D).
int64_t NonemptyRank(const TensorType& t) { return std::max<int64_t>(t.rank(), 1); }

// Size of dim d, with 0-dim tensors treated as [1].
SymExpr NonemptySize(const TensorType& t, int64_t d) {
  return t.rank() == 0 ? SymExpr(1) : t.shape[d];
}

Types GatherMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& self = in[0];
  const TensorType& index = in[1];
  absl::StatusOr<Device> device = meta::CommonDevice(in);
  if (!device.ok()) return device.status();
  if (index.dtype != proto::INT64) {
    return Error("Expected dtype int64 for index, got ", DTypeName(index.dtype));
  }
  absl::StatusOr<int64_t> dim = meta::NormalizeDim(meta::IntAttr(attrs, "dim"), self.rank());
  if (!dim.ok()) return dim.status();
  if (NonemptyRank(index) != NonemptyRank(self)) {
    return Error("Index tensor must have the same number of dimensions as input tensor, got ",
                 index.rank(), " and ", self.rank());
  }
  if (!meta::IsConst(index.NumElements(), 0)) {
    for (int64_t d = 0; d < NonemptyRank(self); ++d) {
      if (d != *dim && !MayBeLe(NonemptySize(index, d), NonemptySize(self, d))) {
        return Error("Size does not match at dimension ", d, " expected index ",
                     meta::ShapeText(index.shape), " to be smaller than self ",
                     meta::ShapeText(self.shape), " apart from dimension ", *dim);
      }
    }
  }
  return std::vector<TensorType>{meta::Out(self.dtype, index.shape, *device)};
}

Types ScatterMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& self = in[0];
  const TensorType& index = in[1];
  const TensorType& src = in[2];
  absl::StatusOr<Device> device = meta::CommonDevice(in);
  if (!device.ok()) return device.status();
  if (index.dtype != proto::INT64) {
    return Error("Expected dtype int64 for index, got ", DTypeName(index.dtype));
  }
  if (src.dtype != self.dtype) {
    return Error("Expected self.dtype to be equal to src.dtype, got ", DTypeName(self.dtype),
                 " and ", DTypeName(src.dtype));
  }
  absl::StatusOr<int64_t> dim = meta::NormalizeDim(meta::IntAttr(attrs, "dim"), self.rank());
  if (!dim.ok()) return dim.status();
  if (NonemptyRank(index) != NonemptyRank(self) || NonemptyRank(src) != NonemptyRank(self)) {
    return Error(
        "Index tensor must have the same number of dimensions as self tensor and src "
        "tensor, got index ",
        index.rank(), ", self ", self.rank(), ", src ", src.rank());
  }
  if (!meta::IsConst(index.NumElements(), 0)) {
    for (int64_t d = 0; d < NonemptyRank(self); ++d) {
      const SymExpr i = NonemptySize(index, d);
      if (!MayBeLe(i, NonemptySize(src, d)) || (d != *dim && !MayBeLe(i, NonemptySize(self, d)))) {
        return Error("Expected index ", meta::ShapeText(index.shape), " to be smaller than self ",
                     meta::ShapeText(self.shape), " apart from dimension ", *dim,
                     " and to be smaller size than src ", meta::ShapeText(src.shape));
      }
    }
  }
  return std::vector<TensorType>{meta::Out(self.dtype, self.shape, *device)};
}

Types IndexSelectMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& self = in[0];
  const TensorType& index = in[1];
  absl::StatusOr<Device> device = meta::CommonDevice(in);
  if (!device.ok()) return device.status();
  if (!IsIndexType(index.dtype)) {
    return Error("index_select(): Expected dtype int32 or int64 for index, got ",
                 DTypeName(index.dtype));
  }
  if (index.rank() > 1) return Error("index_select(): Index is supposed to be a vector");
  absl::StatusOr<int64_t> dim = meta::NormalizeDim(meta::IntAttr(attrs, "dim"), self.rank());
  if (!dim.ok()) return dim.status();
  std::vector<SymExpr> shape = self.shape;
  if (self.rank() == 0) {
    if (!MayEqual(index.NumElements(), 1, "index_select on a scalar: the index has one element")) {
      return Error("index_select(): Index to scalar can have only 1 value, got ",
                   index.NumElements().ToString(), " value(s)");
    }
  } else {
    shape[*dim] = index.NumElements();
  }
  return std::vector<TensorType>{meta::Out(self.dtype, shape, *device)};
}

Types EmbeddingMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& weight = in[0];
  const TensorType& indices = in[1];
  absl::StatusOr<Device> device = meta::CommonDevice(in);
  if (!device.ok()) return device.status();
  if (weight.rank() != 2) return Error("'weight' must be 2-D, got ", meta::ShapeText(weight.shape));
  if (!IsIndexType(indices.dtype)) {
    return Error(
        "Expected tensor for argument #1 'indices' to have one of the following scalar "
        "types: Long, Int; but got ",
        DTypeName(indices.dtype));
  }
  std::vector<SymExpr> shape = indices.shape;
  shape.push_back(weight.shape[1]);
  return std::vector<TensorType>{meta::Out(weight.dtype, shape, *device)};
}

// The shape self[(:,)*dim + (index,)] has (index_tensor's output).
std::vector<SymExpr> IndexedShape(const TensorType& self, const TensorType& index, int64_t dim) {
  std::vector<SymExpr> shape(self.shape.begin(), self.shape.begin() + dim);
  shape.insert(shape.end(), index.shape.begin(), index.shape.end());
  shape.insert(shape.end(), self.shape.begin() + dim + 1, self.shape.end());
  return shape;
}

Types IndexTensorMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& self = in[0];
  const TensorType& index = in[1];
  absl::StatusOr<Device> device = meta::CommonDevice(in);
  if (!device.ok()) return device.status();
  if (index.dtype != proto::INT64) {
    return Error("tensors used as indices must be long tensors, got ", DTypeName(index.dtype),
                 " (coil does not support byte or bool masks: their shapes are data-dependent)");
  }
  if (self.rank() == 0) return Error("cannot index a 0-dim tensor with a tensor");
  absl::StatusOr<int64_t> dim = meta::NormalizeDim(meta::IntAttr(attrs, "dim"), self.rank());
  if (!dim.ok()) return dim.status();
  return std::vector<TensorType>{meta::Out(self.dtype, IndexedShape(self, index, *dim), *device)};
}

Types IndexPutMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& self = in[0];
  const TensorType& index = in[1];
  const TensorType& values = in[2];
  absl::StatusOr<Device> device = meta::CommonDevice(in);
  if (!device.ok()) return device.status();
  if (index.dtype != proto::INT64) {
    return Error("tensors used as indices must be long tensors, got ", DTypeName(index.dtype));
  }
  if (values.dtype != self.dtype) {
    return Error("Index put requires the source and destination dtypes match, got ",
                 DTypeName(self.dtype), " for the destination and ", DTypeName(values.dtype),
                 " for the source.");
  }
  if (self.rank() == 0) return Error("cannot index a 0-dim tensor with a tensor");
  absl::StatusOr<int64_t> dim = meta::NormalizeDim(meta::IntAttr(attrs, "dim"), self.rank());
  if (!dim.ok()) return dim.status();
  std::vector<SymExpr> indexed = IndexedShape(self, index, *dim);
  absl::StatusOr<std::vector<SymExpr>> b = meta::BroadcastShapes(values.shape, indexed);
  if (!b.ok() || *b != indexed) {
    return Error("shape mismatch: value tensor of shape ", meta::ShapeText(values.shape),
                 " cannot be broadcast to indexing result of shape ", meta::ShapeText(indexed));
  }
  return std::vector<TensorType>{meta::Out(self.dtype, self.shape, *device)};
}

Types OneHotMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& self = in[0];
  if (self.dtype != proto::INT64) {
    return Error("one_hot is only applicable to index tensor (int64), got ", DTypeName(self.dtype));
  }
  int64_t n = meta::IntAttr(attrs, "num_classes");
  if (n == -1) {
    return Error(
        "num_classes=-1 infers the class count from the data; coil needs a static "
        "num_classes");
  }
  if (n < 0) return Error("num_classes should be positive, got ", n);
  // No class value fits 0 classes (torch raises at run time; the output, empty, would compute
  // nothing to check): the input must be empty, a guard when its size is symbolic.
  if (n == 0 &&
      !MayEqual(self.NumElements(), SymExpr(0), "one_hot with 0 classes has an empty input")) {
    return Error("Class values must be smaller than num_classes: num_classes is 0 and the input ",
                 self.ToString(), " is not empty");
  }
  std::vector<SymExpr> shape = self.shape;
  shape.push_back(n);
  return std::vector<TensorType>{meta::Out(proto::INT64, shape, self.device)};
}

}  // namespace

void RegisterIndexingOps(OpRegistry& registry) {
  registry.Register(
      Schema("aten.gather", {{"self"}, {"index"}},
             {{"dim", AttrKind::kInt, std::nullopt}, {"sparse_grad", AttrKind::kBool, false}},
             GatherMeta, "torch.gather (index int64; sparse_grad unused)"));
  registry.Register(Schema("aten.scatter", {{"self"}, {"index"}, {"src"}},
                           {{"dim", AttrKind::kInt, std::nullopt}}, ScatterMeta,
                           "torch.scatter with a src tensor (no reduce); with duplicate indices "
                           "the last write in row-major index order wins (torch leaves it "
                           "unspecified)"));
  registry.Register(Schema("aten.scatter_add", {{"self"}, {"index"}, {"src"}},
                           {{"dim", AttrKind::kInt, std::nullopt}}, ScatterMeta,
                           "torch.scatter_add; the reference sums in double (int64 for "
                           "integers) and rounds once"));
  registry.Register(Schema("aten.index_select", {{"self"}, {"index"}},
                           {{"dim", AttrKind::kInt, std::nullopt}}, IndexSelectMeta,
                           "torch.index_select (index int32/int64, 0-D or 1-D)"));
  registry.Register(Schema("aten.embedding", {{"weight"}, {"indices"}},
                           {{"padding_idx", AttrKind::kInt, int64_t{-1}},
                            {"scale_grad_by_freq", AttrKind::kBool, false},
                            {"sparse", AttrKind::kBool, false}},
                           EmbeddingMeta,
                           "aten.embedding (F.embedding forward; padding_idx, "
                           "scale_grad_by_freq and sparse only affect gradients)"));
  registry.Register(
      Schema("aten.index_tensor", {{"self"}, {"index"}}, {{"dim", AttrKind::kInt, int64_t{0}}},
             IndexTensorMeta,
             "aten.index.Tensor restricted to one int index tensor at `dim`: "
             "self[(:,)*dim + (index,)]; index int64; negative indices wrap; no boolean masks"));
  registry.Register(Schema(
      "aten.index_put", {{"self"}, {"index"}, {"values"}},
      {{"dim", AttrKind::kInt, int64_t{0}}, {"accumulate", AttrKind::kBool, false}}, IndexPutMeta,
      "aten.index_put restricted to one int64 index tensor at `dim` (out = "
      "self; out[(:,)*dim + (index,)] = values, broadcast; += when "
      "accumulate); negative indices wrap; duplicate indices without "
      "accumulate: the last write in row-major order wins"));
  registry.Register(Schema("aten.one_hot", {{"self"}},
                           {{"num_classes", AttrKind::kInt, int64_t{-1}}}, OneHotMeta,
                           "F.one_hot; num_classes must be given (-1, torch's data-dependent "
                           "default, is an error)"));
}

}  // namespace coil
