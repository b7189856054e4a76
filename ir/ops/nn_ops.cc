// Schemas and meta functions of the nn op family: the matmul ops here, convolution in
// nn_ops_conv.cc, pooling in nn_ops_pool.cc, attention in nn_ops_attention.cc, upsampling and
// pixel shuffle in nn_ops_upsample.cc. Shared helpers are declared in nn_ops_internal.h.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/op_registry.h"
#include "ir/ops/meta_util.h"
#include "ir/ops/nn_ops_internal.h"
#include "ir/ops/register_ops.h"
#include "ir/shape_assumption.h"

namespace coil {
namespace nn_internal {

absl::Status CheckMayEqual(const SymExpr& a, const SymExpr& b, absl::string_view what) {
  if (!MayEqual(a, b, absl::StrCat(what, " are equal"))) {
    return meta::Error(what, " must be equal, got ", a.ToString(), " and ", b.ToString());
  }
  return absl::OkStatus();
}

absl::StatusOr<IntList> ExpandInts(const AttrMap& attrs, absl::string_view name, int64_t n,
                                   bool allow_empty) {
  absl::StatusOr<IntList> v = GetInts(attrs, name);
  if (!v.ok()) return v.status();
  if (v->empty() && allow_empty) return v;
  if (v->size() == 1) return IntList(n, (*v)[0]);
  if (static_cast<int64_t>(v->size()) != n) {
    return meta::Error(name, " must have 1 or ", n, " values, got [", absl::StrJoin(*v, ", "),
                       "]");
  }
  return v;
}

std::string Describe(const TensorType& t) { return t.ToString(); }

absl::StatusOr<std::vector<TensorType>> OneOutput(DType dtype, std::vector<SymExpr> shape,
                                                  absl::Span<const TensorType> inputs) {
  absl::StatusOr<Device> device = meta::CommonDevice(inputs);
  if (!device.ok()) return device.status();
  return std::vector<TensorType>{meta::Out(dtype, std::move(shape), *device)};
}

}  // namespace nn_internal

namespace {

using nn_internal::CheckMayEqual;
using nn_internal::Describe;
using nn_internal::OneOutput;

// The matmul ops take operands of one dtype (PyTorch does not promote) and no bools.
absl::Status CheckSameNumericDType(absl::Span<const TensorType> inputs) {
  for (const TensorType& t : inputs) {
    if (t.dtype != inputs[0].dtype) {
      return meta::Error("expected operands of the same dtype, got ", Describe(inputs[0]),
                         " and ", Describe(t));
    }
  }
  if (IsBool(inputs[0].dtype)) return meta::Error("bool operands are not supported");
  return absl::OkStatus();
}

absl::Status CheckRank(const TensorType& t, int64_t rank, absl::string_view what) {
  if (t.rank() != rank) {
    return meta::Error(what, " must be ", rank, "-D, got ", Describe(t));
  }
  return absl::OkStatus();
}

// torch.matmul's shape rule: a 1-D left operand is a row [1, k] and a 1-D right operand a
// column [k, 1] (their unit dimension is dropped from the result); leading batch dimensions
// broadcast.
absl::StatusOr<std::vector<SymExpr>> MatmulShape(const TensorType& a, const TensorType& b) {
  if (a.rank() == 0 || b.rank() == 0) {
    return meta::Error("both operands must be at least 1-D, got ", Describe(a), " and ",
                       Describe(b));
  }
  std::vector<SymExpr> as = a.shape, bs = b.shape;
  bool a_vec = a.rank() == 1, b_vec = b.rank() == 1;
  if (a_vec) as.insert(as.begin(), SymExpr(1));
  if (b_vec) bs.push_back(SymExpr(1));
  if (!MayEqual(as.back(), bs[bs.size() - 2], "the inner sizes of the product are equal")) {
    return meta::Error("shapes cannot be multiplied: ", Describe(a), " and ", Describe(b),
                       " (inner sizes ", as.back().ToString(), " and ",
                       bs[bs.size() - 2].ToString(), ")");
  }
  absl::Span<const SymExpr> a_batch(as.data(), as.size() - 2);
  absl::Span<const SymExpr> b_batch(bs.data(), bs.size() - 2);
  absl::StatusOr<std::vector<SymExpr>> out = meta::BroadcastShapes(a_batch, b_batch);
  if (!out.ok()) return out.status();
  if (!a_vec) out->push_back(as[as.size() - 2]);
  if (!b_vec) out->push_back(bs.back());
  return out;
}

// `from` must broadcast to exactly `to` (as Tensor.expand): the bias of addmm and friends.
absl::Status CheckExpandable(const TensorType& from, absl::Span<const SymExpr> to,
                             absl::string_view what) {
  absl::StatusOr<std::vector<SymExpr>> b = meta::BroadcastShapes(from.shape, to);
  if (!b.ok() || static_cast<size_t>(from.rank()) > to.size() ||
      !std::equal(b->begin(), b->end(), to.begin(), to.end())) {
    std::vector<std::string> dims;
    for (const SymExpr& d : to) dims.push_back(d.ToString());
    return meta::Error(what, " ", Describe(from), " cannot broadcast to the result shape [",
                       absl::StrJoin(dims, ", "), "]");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TensorType>> MmMeta(absl::Span<const TensorType> in,
                                               const AttrMap& attrs) {
  if (absl::Status s = CheckSameNumericDType(in); !s.ok()) return s;
  if (absl::Status s = CheckRank(in[0], 2, "self"); !s.ok()) return s;
  if (absl::Status s = CheckRank(in[1], 2, "mat2"); !s.ok()) return s;
  absl::StatusOr<std::vector<SymExpr>> shape = MatmulShape(in[0], in[1]);
  if (!shape.ok()) return shape.status();
  return OneOutput(in[0].dtype, *shape, in);
}

absl::StatusOr<std::vector<TensorType>> BmmMeta(absl::Span<const TensorType> in,
                                                const AttrMap& attrs) {
  if (absl::Status s = CheckSameNumericDType(in); !s.ok()) return s;
  if (absl::Status s = CheckRank(in[0], 3, "self"); !s.ok()) return s;
  if (absl::Status s = CheckRank(in[1], 3, "mat2"); !s.ok()) return s;
  // bmm does not broadcast its batch dimension.
  if (absl::Status s = CheckMayEqual(in[0].shape[0], in[1].shape[0], "batch sizes"); !s.ok()) {
    return s;
  }
  absl::StatusOr<std::vector<SymExpr>> shape = MatmulShape(in[0], in[1]);
  if (!shape.ok()) return shape.status();
  (*shape)[0] = in[0].shape[0];
  return OneOutput(in[0].dtype, *shape, in);
}

absl::StatusOr<std::vector<TensorType>> MatmulMeta(absl::Span<const TensorType> in,
                                                   const AttrMap& attrs) {
  if (absl::Status s = CheckSameNumericDType(in); !s.ok()) return s;
  absl::StatusOr<std::vector<SymExpr>> shape = MatmulShape(in[0], in[1]);
  if (!shape.ok()) return shape.status();
  return OneOutput(in[0].dtype, *shape, in);
}

absl::StatusOr<std::vector<TensorType>> DotMeta(absl::Span<const TensorType> in,
                                                const AttrMap& attrs) {
  if (absl::Status s = CheckSameNumericDType(in); !s.ok()) return s;
  if (absl::Status s = CheckRank(in[0], 1, "self"); !s.ok()) return s;
  if (absl::Status s = CheckRank(in[1], 1, "tensor"); !s.ok()) return s;
  return MatmulMeta(in, attrs);
}

absl::StatusOr<std::vector<TensorType>> MvMeta(absl::Span<const TensorType> in,
                                               const AttrMap& attrs) {
  if (absl::Status s = CheckSameNumericDType(in); !s.ok()) return s;
  if (absl::Status s = CheckRank(in[0], 2, "self"); !s.ok()) return s;
  if (absl::Status s = CheckRank(in[1], 1, "vec"); !s.ok()) return s;
  return MatmulMeta(in, attrs);
}

// addmm(self, mat1, mat2) and baddbmm(self, batch1, batch2): the product's meta, then `self`
// must expand to it.
absl::StatusOr<std::vector<TensorType>> AddMatmulMeta(absl::Span<const TensorType> in,
                                                      const AttrMap& attrs, bool batched) {
  if (absl::Status s = CheckSameNumericDType(in); !s.ok()) return s;
  absl::StatusOr<std::vector<TensorType>> prod =
      batched ? BmmMeta(in.subspan(1), attrs) : MmMeta(in.subspan(1), attrs);
  if (!prod.ok()) return prod.status();
  if (absl::Status s = CheckExpandable(in[0], (*prod)[0].shape, "self"); !s.ok()) return s;
  return OneOutput(in[0].dtype, (*prod)[0].shape, in);
}

absl::StatusOr<std::vector<TensorType>> LinearMeta(absl::Span<const TensorType> in,
                                                   const AttrMap& attrs) {
  if (absl::Status s = CheckSameNumericDType(in); !s.ok()) return s;
  const TensorType& x = in[0];
  const TensorType& w = in[1];
  if (x.rank() == 0) return meta::Error("input must be at least 1-D, got ", Describe(x));
  if (w.rank() != 1 && w.rank() != 2) {
    return meta::Error("weight must be 1-D or 2-D, got ", Describe(w));
  }
  const SymExpr& in_features = w.shape.back();
  if (!MayEqual(x.shape.back(), in_features, "input and weight agree on in_features")) {
    return meta::Error("input ", Describe(x), " and weight ", Describe(w),
                       " disagree on in_features (", x.shape.back().ToString(), " vs ",
                       in_features.ToString(), ")");
  }
  std::vector<SymExpr> shape(x.shape.begin(), x.shape.end() - 1);
  if (w.rank() == 2) shape.push_back(w.shape[0]);
  if (in.size() == 3) {
    if (w.rank() == 1) return meta::Error("a bias needs a 2-D weight, got ", Describe(w));
    if (absl::Status s = CheckExpandable(in[2], shape, "bias"); !s.ok()) return s;
  }
  return OneOutput(x.dtype, shape, in);
}

absl::StatusOr<std::vector<TensorType>> OuterMeta(absl::Span<const TensorType> in,
                                                  const AttrMap& attrs) {
  if (absl::Status s = CheckRank(in[0], 1, "self"); !s.ok()) return s;
  if (absl::Status s = CheckRank(in[1], 1, "vec2"); !s.ok()) return s;
  absl::StatusOr<DType> dtype = meta::ResultType(in);
  if (!dtype.ok()) return dtype.status();
  return OneOutput(*dtype, {in[0].shape[0], in[1].shape[0]}, in);
}

std::vector<AttrSpec> BetaAlpha() {
  return {{"beta", AttrKind::kFloat, Attribute(1.0)}, {"alpha", AttrKind::kFloat, Attribute(1.0)}};
}

}  // namespace

namespace nn_internal {

void RegisterMatmulOps(OpRegistry& r) {
  r.Register({"aten.mm", {{"self"}, {"mat2"}}, {}, OpClass::kMatmul, MmMeta,
              "torch.mm: [n, k] @ [k, m]; operands of one non-bool dtype."});
  r.Register({"aten.bmm", {{"self"}, {"mat2"}}, {}, OpClass::kMatmul, BmmMeta,
              "torch.bmm: [b, n, k] @ [b, k, m], no batch broadcasting."});
  r.Register({"aten.matmul", {{"self"}, {"other"}}, {}, OpClass::kMatmul, MatmulMeta,
              "torch.matmul: every rank case (1-D operands, broadcast batch dimensions)."});
  r.Register({"aten.dot", {{"self"}, {"tensor"}}, {}, OpClass::kMatmul, DotMeta,
              "torch.dot of two 1-D tensors."});
  r.Register({"aten.mv", {{"self"}, {"vec"}}, {}, OpClass::kMatmul, MvMeta,
              "torch.mv: [n, k] @ [k]."});
  r.Register({"aten.addmm", {{"self"}, {"mat1"}, {"mat2"}}, BetaAlpha(), OpClass::kMatmul,
              [](absl::Span<const TensorType> in, const AttrMap& a) {
                return AddMatmulMeta(in, a, /*batched=*/false);
              },
              "torch.addmm: beta*self + alpha*(mat1 @ mat2); self is ignored when beta == 0; "
              "integer operands truncate beta and alpha to integers."});
  r.Register({"aten.baddbmm", {{"self"}, {"batch1"}, {"batch2"}}, BetaAlpha(), OpClass::kMatmul,
              [](absl::Span<const TensorType> in, const AttrMap& a) {
                return AddMatmulMeta(in, a, /*batched=*/true);
              },
              "torch.baddbmm: beta*self + alpha*bmm(batch1, batch2), as addmm."});
  r.Register({"aten.linear", {{"input"}, {"weight"}, {"bias", /*optional=*/true}}, {},
              OpClass::kMatmul, LinearMeta,
              "torch.nn.functional.linear: input @ weight.T + bias; unlike PyTorch the bias "
              "must have the input's dtype."});
  r.Register({"aten.outer", {{"self"}, {"vec2"}}, {}, OpClass::kMatmul, OuterMeta,
              "torch.outer: promotes dtypes like mul (bool operands give a logical and)."});
}

}  // namespace nn_internal

void RegisterNnOps(OpRegistry& registry) {
  nn_internal::RegisterMatmulOps(registry);
  nn_internal::RegisterConvOps(registry);
  nn_internal::RegisterPoolOps(registry);
  nn_internal::RegisterAttentionOps(registry);
  nn_internal::RegisterUpsampleOps(registry);
}

}  // namespace coil
