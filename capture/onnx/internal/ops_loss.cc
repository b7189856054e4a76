// Losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, composed from gather,
// index_tensor (class weights), masked_fill (ignore_index) and sum.
#include "absl/strings/str_cat.h"
#include "capture/onnx/internal/op_table.h"

namespace coil::onnx_internal {
namespace {

// -input[n, target[n, ...], ...] * weight[target], with ONNX's reductions.
absl::StatusOr<Value*> Nll(OnnxNode& n, Value* input, int target_input, int weight_input) {
  const std::string reduction = n.String("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    return n.UnsupportedAttr("reduction", reduction);
  }
  if (input->type().rank() < 2) return n.Invalid("input must be at least 2-D [N, C, ...]");
  const DType dtype = input->type().dtype;
  COIL_ASSIGN_OR_RETURN(Value* t, n.In(target_input));
  if (!IsIntegral(t->type().dtype)) return n.Invalid("target must be integers");
  COIL_ASSIGN_OR_RETURN(t, n.Cast(t, proto::INT64));
  Value* ignored = nullptr;
  if (n.HasAttr("ignore_index")) {
    const double ii = static_cast<double>(n.Int("ignore_index", 0));
    COIL_ASSIGN_OR_RETURN(ignored, n.Op("aten.eq_scalar", {t}, {{"other", ii}}));
    COIL_ASSIGN_OR_RETURN(t, n.Op("aten.masked_fill", {t, ignored}, {{"value", 0.0}}));
  }
  COIL_ASSIGN_OR_RETURN(Value* idx, n.Op("aten.unsqueeze", {t}, {{"dim", int64_t{1}}}));
  COIL_ASSIGN_OR_RETURN(Value* picked, n.Op("aten.gather", {input, idx}, {{"dim", int64_t{1}}}));
  COIL_ASSIGN_OR_RETURN(picked, n.Op("aten.squeeze", {picked}, {{"dims", IntList{1}}}));
  COIL_ASSIGN_OR_RETURN(Value* loss, n.Op("aten.neg", {picked}));
  Value* w = nullptr;
  if (n.has_input(weight_input)) {
    COIL_ASSIGN_OR_RETURN(Value* weight, n.In(weight_input));
    COIL_ASSIGN_OR_RETURN(w, n.Op("aten.index_tensor", {weight, t}, {{"dim", int64_t{0}}}));
    COIL_ASSIGN_OR_RETURN(loss, n.Op("aten.mul", {loss, w}));
  } else {
    COIL_ASSIGN_OR_RETURN(w, n.Op("aten.ones_like", {loss}, {{"dtype", dtype}, {"has_dtype", true}}));
  }
  if (ignored != nullptr) {
    COIL_ASSIGN_OR_RETURN(loss, n.Op("aten.masked_fill", {loss, ignored}, {{"value", 0.0}}));
    COIL_ASSIGN_OR_RETURN(w, n.Op("aten.masked_fill", {w, ignored}, {{"value", 0.0}}));
  }
  if (reduction == "none") return loss;
  COIL_ASSIGN_OR_RETURN(Value* total, n.Op("aten.sum", {loss}));
  if (reduction == "sum") return total;
  COIL_ASSIGN_OR_RETURN(Value* count, n.Op("aten.sum", {w}));
  return n.Op("aten.div", {total, count});
}

absl::Status ImportNll(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* input, n.In(0));
  COIL_ASSIGN_OR_RETURN(Value* y, Nll(n, input, 1, 2));
  return n.SetOutput(0, y);
}

absl::Status ImportSce(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* scores, n.In(0));
  if (scores->type().rank() < 2) return n.Invalid("scores must be at least 2-D [N, C, ...]");
  COIL_ASSIGN_OR_RETURN(Value* log_prob, n.Op("aten.log_softmax", {scores}, {{"dim", int64_t{1}}}));
  COIL_ASSIGN_OR_RETURN(Value* y, Nll(n, log_prob, 1, 2));
  COIL_RETURN_IF_ERROR(n.SetOutput(0, y));
  return n.SetOutput(1, log_prob);
}

}  // namespace

void RegisterLossOps(OpTable& t) {
  t["NegativeLogLikelihoodLoss"].emit = ImportNll;
  t["SoftmaxCrossEntropyLoss"].emit = ImportSce;
}

}  // namespace coil::onnx_internal
