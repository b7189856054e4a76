// The ONNX op table: ONNX op type -> handler that emits aten ops, plus an optional folder
// that computes the outputs at import time when the inputs are known (shape arithmetic).
//
// Each ops_*.cc file registers one group of ops:
//   void RegisterActivationOps(OpTable& t) { t["Relu"].emit = ImportRelu; ... }
#ifndef COIL_CAPTURE_ONNX_INTERNAL_OP_TABLE_H_
#define COIL_CAPTURE_ONNX_INTERNAL_OP_TABLE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "capture/onnx/internal/context.h"

namespace coil::onnx_internal {

using OpHandler = std::function<absl::Status(OnnxNode& node)>;
// Returns true when it defined the node's outputs as known values; false to fall back to the
// emitting handler.
using FoldHandler = std::function<absl::StatusOr<bool>(OnnxNode& node)>;

struct OpEntry {
  OpHandler emit;
  FoldHandler fold;
};
using OpTable = absl::flat_hash_map<std::string, OpEntry>;

// Every supported ONNX op (default domain).
const OpTable& Ops();
// Sorted names of the supported ops.
std::vector<std::string> SupportedOps();

// Imports one node: folds it when its inputs are known, else emits aten ops. Unknown ops are
// Unimplemented naming the op and node.
absl::Status ImportNode(OnnxNode& node);

void RegisterActivationOps(OpTable& t);      // ops_activation.cc
void RegisterElementwiseOps(OpTable& t);     // ops_elementwise.cc
void RegisterFoldOps(OpTable& t);            // ops_fold.cc (folders only)
void RegisterIndexingOps(OpTable& t);        // ops_indexing.cc
void RegisterGatherNdOps(OpTable& t);        // ops_gather_nd.cc
void RegisterLossOps(OpTable& t);            // ops_loss.cc
void RegisterQuantOps(OpTable& t);           // ops_quant.cc
void RegisterNnOps(OpTable& t);              // ops_nn.cc
void RegisterNormalizationOps(OpTable& t);   // ops_normalization.cc
void RegisterReductionOps(OpTable& t);       // ops_reduction.cc
void RegisterResizeOps(OpTable& t);          // ops_resize.cc
void RegisterShapeOps(OpTable& t);           // ops_shape.cc
void RegisterSourceOps(OpTable& t);          // ops_source.cc

}  // namespace coil::onnx_internal

#endif  // COIL_CAPTURE_ONNX_INTERNAL_OP_TABLE_H_
