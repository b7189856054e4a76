// N-dimensional indexing: GatherND, ScatterND and ReverseSequence, lowered to one-dimensional
// indexing (index_tensor / index_put / gather) over linearized indices.
#include "absl/strings/str_cat.h"
#include "capture/onnx/internal/op_table.h"

namespace coil::onnx_internal {
namespace {

// Row-major linear index over data dims [first, first + k) of the last axis of `indices`
// (negative entries wrapped), shape indices.shape[:-1].
absl::StatusOr<Value*> LinearIndex(OnnxNode& n, const TensorType& data, Value* indices, int64_t first,
                                   int64_t k) {
  std::vector<SymExpr> dims, strides(k);
  for (int64_t j = 0; j < k; ++j) dims.push_back(data.shape[first + j]);
  SymExpr stride = 1;
  for (int64_t j = k - 1; j >= 0; --j) {
    strides[j] = stride;
    stride *= dims[j];
  }
  const std::string& name = n.proto().name();
  COIL_ASSIGN_OR_RETURN(Value* dims_v, n.ctx().MaterializeKnown(KnownValue::Ints(proto::INT64, {k}, dims), name));
  COIL_ASSIGN_OR_RETURN(Value* strides_v,
                        n.ctx().MaterializeKnown(KnownValue::Ints(proto::INT64, {k}, strides), name));
  COIL_ASSIGN_OR_RETURN(Value* idx, n.Cast(indices, proto::INT64));
  COIL_ASSIGN_OR_RETURN(Value* neg, n.Op("aten.lt_scalar", {idx}, {{"other", 0.0}}));
  COIL_ASSIGN_OR_RETURN(Value* wrapped, n.Op("aten.add", {idx, dims_v}));
  COIL_ASSIGN_OR_RETURN(idx, n.Op("aten.where", {neg, wrapped, idx}));
  COIL_ASSIGN_OR_RETURN(idx, n.Op("aten.mul", {idx, strides_v}));
  return n.Op("aten.sum", {idx}, {{"dim", IntList{indices->type().rank() - 1}}, {"keepdim", false}});
}

absl::Status ImportGatherND(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  COIL_ASSIGN_OR_RETURN(Value* indices, n.In(1));
  const TensorType xt = x->type(), it = indices->type();
  const int64_t b = n.Int("batch_dims", 0);
  if (it.rank() < 1 || !it.shape.back().is_constant()) return n.Invalid("indices need a static last dimension");
  const int64_t k = it.shape.back().constant();
  if (b < 0 || b >= it.rank() || b + k > xt.rank()) return n.Invalid("indices do not fit the data's rank");
  if (!IsIntegral(it.dtype)) return n.Invalid("indices must be integers");
  COIL_ASSIGN_OR_RETURN(Value* lin, LinearIndex(n, xt, indices, b, k));
  SymExpr batch = 1, inner = 1;
  for (int64_t d = 0; d < b; ++d) batch *= xt.shape[d];
  for (int64_t d = b; d < b + k; ++d) inner *= xt.shape[d];
  SymList flat = {batch * inner};
  flat.insert(flat.end(), xt.shape.begin() + b + k, xt.shape.end());
  COIL_ASSIGN_OR_RETURN(Value* data, n.Op("aten.reshape", {x}, {{"shape", flat}}));
  if (b > 0) {
    // Offset each batch entry into its own block of `inner` rows.
    COIL_ASSIGN_OR_RETURN(Value* off, n.Op("aten.arange", {}, {{"end", batch}, {"dtype", proto::INT64},
                                                               {"has_dtype", true}}));
    COIL_ASSIGN_OR_RETURN(Value* inner_v, n.ctx().MaterializeKnown(KnownValue::Scalar(inner), n.proto().name()));
    COIL_ASSIGN_OR_RETURN(off, n.Op("aten.mul", {off, inner_v}));
    SymList oshape(it.shape.begin(), it.shape.begin() + b);
    for (int64_t d = b; d < it.rank() - 1; ++d) oshape.push_back(1);
    COIL_ASSIGN_OR_RETURN(off, n.Op("aten.reshape", {off}, {{"shape", oshape}}));
    COIL_ASSIGN_OR_RETURN(lin, n.Op("aten.add", {lin, off}));
  }
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.index_tensor", {data, lin}, {{"dim", int64_t{0}}}));
  return n.SetOutput(0, y);
}

absl::Status ImportScatterND(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  COIL_ASSIGN_OR_RETURN(Value* indices, n.In(1));
  COIL_ASSIGN_OR_RETURN(Value* updates, n.In(2));
  const std::string reduction = n.String("reduction", "none");
  if (reduction != "none" && reduction != "add") return n.UnsupportedAttr("reduction", reduction);
  const TensorType xt = x->type(), it = indices->type();
  if (it.rank() < 1 || !it.shape.back().is_constant()) return n.Invalid("indices need a static last dimension");
  const int64_t k = it.shape.back().constant();
  if (k > xt.rank()) return n.Invalid("indices do not fit the data's rank");
  if (!IsIntegral(it.dtype)) return n.Invalid("indices must be integers");
  COIL_ASSIGN_OR_RETURN(Value* lin, LinearIndex(n, xt, indices, 0, k));
  SymExpr inner = 1, count = 1;
  for (int64_t d = 0; d < k; ++d) inner *= xt.shape[d];
  for (int64_t d = 0; d + 1 < it.rank(); ++d) count *= it.shape[d];
  SymList flat = {inner}, uflat = {count};
  flat.insert(flat.end(), xt.shape.begin() + k, xt.shape.end());
  uflat.insert(uflat.end(), xt.shape.begin() + k, xt.shape.end());
  COIL_ASSIGN_OR_RETURN(Value* data, n.Op("aten.reshape", {x}, {{"shape", flat}}));
  COIL_ASSIGN_OR_RETURN(lin, n.Op("aten.reshape", {lin}, {{"shape", SymList{count}}}));
  COIL_ASSIGN_OR_RETURN(updates, n.Op("aten.reshape", {updates}, {{"shape", uflat}}));
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.index_put", {data, lin, updates},
                                       {{"dim", int64_t{0}}, {"accumulate", reduction == "add"}}));
  COIL_ASSIGN_OR_RETURN(y, n.Op("aten.reshape", {y}, {{"shape", SymList(xt.shape)}}));
  return n.SetOutput(0, y);
}

// output[t, b] = t < len[b] ? input[len[b] - 1 - t, b] : input[t, b], as a gather on time.
absl::Status ImportReverseSequence(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  COIL_ASSIGN_OR_RETURN(Value* lens, n.In(1));
  const TensorType xt = x->type();
  COIL_ASSIGN_OR_RETURN(int64_t taxis, n.Axis(n.Int("time_axis", 0), xt.rank(), "time_axis"));
  COIL_ASSIGN_OR_RETURN(int64_t baxis, n.Axis(n.Int("batch_axis", 1), xt.rank(), "batch_axis"));
  if (taxis == baxis) return n.Invalid("time_axis and batch_axis must differ");
  SymList tshape(xt.rank(), SymExpr(1)), bshape(xt.rank(), SymExpr(1));
  tshape[taxis] = xt.shape[taxis];
  bshape[baxis] = xt.shape[baxis];
  COIL_ASSIGN_OR_RETURN(Value* t, n.Op("aten.arange", {}, {{"end", xt.shape[taxis]}, {"dtype", proto::INT64},
                                                           {"has_dtype", true}}));
  COIL_ASSIGN_OR_RETURN(t, n.Op("aten.reshape", {t}, {{"shape", tshape}}));
  COIL_ASSIGN_OR_RETURN(Value* len, n.Cast(lens, proto::INT64));
  COIL_ASSIGN_OR_RETURN(len, n.Op("aten.reshape", {len}, {{"shape", bshape}}));
  COIL_ASSIGN_OR_RETURN(Value* inside, n.Op("aten.lt", {t, len}));
  COIL_ASSIGN_OR_RETURN(Value* rev, n.Op("aten.sub", {len, t}));
  COIL_ASSIGN_OR_RETURN(rev, n.Op("aten.sub", {rev, n.Scalar(proto::INT64, 1)}));
  COIL_ASSIGN_OR_RETURN(Value* src, n.Op("aten.where", {inside, rev, t}));
  COIL_ASSIGN_OR_RETURN(src, n.Op("aten.expand", {src}, {{"size", SymList(xt.shape)}}));
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.gather", {x, src}, {{"dim", taxis}}));
  return n.SetOutput(0, y);
}

}  // namespace

void RegisterGatherNdOps(OpTable& t) {
  t["GatherND"].emit = ImportGatherND;
  t["ScatterND"].emit = ImportScatterND;
  t["ReverseSequence"].emit = ImportReverseSequence;
}

}  // namespace coil::onnx_internal
