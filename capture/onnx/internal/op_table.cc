// The op table and per-node dispatch.
#include "capture/onnx/internal/op_table.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ir/sym_expr.h"

namespace coil::onnx_internal {

const OpTable& Ops() {
  static const OpTable* table = [] {
    auto* t = new OpTable();
    RegisterActivationOps(*t);
    RegisterElementwiseOps(*t);
    RegisterIndexingOps(*t);
    RegisterLossOps(*t);
    RegisterGatherNdOps(*t);
    RegisterQuantOps(*t);
    RegisterNnOps(*t);
    RegisterNormalizationOps(*t);
    RegisterReductionOps(*t);
    RegisterResizeOps(*t);
    RegisterShapeOps(*t);
    RegisterSourceOps(*t);
    RegisterFoldOps(*t);  // last: attaches folders to ops registered above
    return t;
  }();
  return *table;
}

std::vector<std::string> SupportedOps() {
  std::vector<std::string> names;
  for (const auto& [name, entry] : Ops()) {
    if (entry.emit != nullptr) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

// Outputs that are not known although they derive from known inputs keep why (see
// OnnxTensor::unknown_why): this node's failed fold, or the reason an input carries.
void RecordWhyUnknown(OnnxNode& node, bool has_folder) {
  bool all_known = true;
  bool any_input = false;
  std::string inherited;
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) continue;
    any_input = true;
    const OnnxTensor* t = node.ctx().Find(node.proto().input(i));
    if (t->known) continue;
    all_known = false;
    if (inherited.empty()) inherited = t->unknown_why;
  }
  std::string why;
  if (all_known && any_input) {
    if (!node.fold_failure().empty()) {
      why = absl::StrCat("node ", node.Name(), " (", node.op_type(), ") cannot be evaluated at import time: ",
                         node.fold_failure());
    } else {
      why = absl::StrCat("node ", node.Name(), " (", node.op_type(), ") is not evaluated at import time",
                         has_folder ? " for these inputs" : " (the importer has no folder for this op)");
    }
  } else {
    why = std::move(inherited);
  }
  if (why.empty()) return;
  for (int i = 0; i < node.num_outputs(); ++i) {
    if (!node.wants_output(i)) continue;
    const OnnxTensor* t = node.ctx().Find(node.proto().output(i));
    if (t->known || !t->unknown_why.empty()) continue;
    OnnxTensor copy = *t;
    copy.unknown_why = why;
    node.ctx().Define(node.proto().output(i), std::move(copy));
  }
}

}  // namespace

absl::Status ImportNode(OnnxNode& node) {
  auto it = Ops().find(node.op_type());
  if (it == Ops().end() || it->second.emit == nullptr) {
    return absl::UnimplementedError(
        absl::StrCat("op ", node.op_type(), " is not supported (node ", node.Name(), ")"));
  }
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (node.has_input(i) && node.ctx().Find(node.proto().input(i)) == nullptr) {
      return node.Invalid(absl::StrCat("input '", node.proto().input(i),
                                       "' is not defined (missing initializer, graph input or "
                                       "earlier node output)"));
    }
  }
  // Shape arithmetic on the model's numbers (a Reshape target's product, Slice bounds): an
  // overflow is this node's error, not a coil bug.
  SymArithmeticGuard guard;
  absl::Status status;
  bool done = false;
  if (it->second.fold != nullptr) {
    bool all_known = true;
    for (int i = 0; i < node.num_inputs(); ++i) {
      if (node.has_input(i) && node.Known(i) == nullptr) all_known = false;
    }
    if (all_known) {
      absl::StatusOr<bool> folded = it->second.fold(node);
      if (!folded.ok()) {
        status = folded.status();
      } else {
        done = *folded;
      }
    }
  }
  if (status.ok() && !done) status = it->second.emit(node);
  if (!guard.ok()) return node.Invalid(guard.status().message());
  if (!node.attr_error().ok()) return node.attr_error();
  if (!status.ok()) return status;
  for (int i = 0; i < node.num_outputs(); ++i) {
    if (node.wants_output(i) && node.ctx().Find(node.proto().output(i)) == nullptr) {
      return node.Unsupported(absl::StrCat("output ", i, " ('", node.proto().output(i), "')"));
    }
  }
  RecordWhyUnknown(node, it->second.fold != nullptr);
  return absl::OkStatus();
}

}  // namespace coil::onnx_internal
