// prims::Decompose: rewrites a graph so that only prims (docs/prims.md) and externs remain.
//
//   absl::StatusOr<proto::Graph> prims_graph = prims::Decompose(aten_graph);
//
// Every aten op is replaced by its decomposition (prims/decompositions/), recursively, until
// only `prims.*` ops, the externs (`aten.mm`, `aten.bmm`, `aten.convolution`) and the ops in
// `DecomposeOptions::keep` are left. Graphs with in-place ops are functionalized first
// (prims/functionalize.h). The result verifies, computes the same values as the input graph
// (checked against the reference interpreter by tests/torch_oracle and tests/real_models), and
// keeps the input's inputs, symbols, guards and source locations.
#ifndef COIL_PRIMS_DECOMPOSE_H_
#define COIL_PRIMS_DECOMPOSE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ir/pass_pipeline.h"
#include "ir/proto/graph.pb.h"
#include "prims/attention_match.h"
#include "prims/autocast.h"
#include "prims/fold_weight_scales.h"
#include "prims/merge_matmuls.h"

namespace coil::prims {

struct DecomposeOptions {
  // Aten ops kept whole besides the externs, for a backend with its own kernel for them
  // (e.g. "aten.scaled_dot_product_attention").
  std::vector<std::string> keep;
  // With "aten.scaled_dot_product_attention" in `keep`: which attention calls stay whole (the
  // rest decompose; the attention matcher leaves the spelled-out ones alone). Null: all.
  AttentionFilter keep_attention;
  // Computes an attention mask's condition that only constants reach, so that a causal one
  // computed in the graph (an exporter's sliced buffer) becomes is_causal (attention_match.h).
  // The compile driver injects the reference interpreter; null: only constant conditions.
  ConstantEvaluator evaluate_constants;
  // The pipeline runs merge_matmuls (prims/merge_matmuls.h) after functionalize: matmuls that
  // read the same input with constant weights become one (a backend that reads slices of a
  // buffer in place: the CPU).
  bool merge_matmuls = false;
  // Then fold_weight_scales (prims/fold_weight_scales.h): a scalar scale of a projection's
  // sliced output (vit's q, K^T) folded into its constant weights and bias.
  bool fold_weight_scales = false;
  // kBF16: the pipeline runs the autocast pass (prims/autocast.h) after functionalize.
  Precision precision = Precision::kF32;
};

// The prims stage as one PassPipeline, its order written once: shape guards of the input,
// functionalize (in-place ops and views become data flow), merge_matmuls and
// fold_weight_scales (only when asked),
// autocast (only with a precision
// other than f32), then decompose (DecomposeOps, with the guards of the prims it emits). Tests
// run this same object.
PassPipeline<Graph> PrimsPipeline(const DecomposeOptions& options = {});

// Runs PrimsPipeline(options) on `graph`: the stage's entry point. Returns whether anything
// changed. Errors: the input does not verify (InvalidArgument), or an op has no decomposition
// (naming the op and node). Each pass's run is appended to `records` when not null.
absl::StatusOr<bool> Decompose(Graph& graph, const DecomposeOptions& options = {},
                               const PassPipelineOptions& passes = {},
                               std::vector<PassRecord>* records = nullptr);

// The same on the protobuf form.
absl::StatusOr<proto::Graph> Decompose(const proto::Graph& graph,
                                       const DecomposeOptions& options = {},
                                       const PassPipelineOptions& passes = {},
                                       std::vector<PassRecord>* records = nullptr);

// The decompose pass alone: every op that is not a prim, an extern or kept is replaced by its
// decomposition, recursively, and what the resulting prims' meta functions assume about
// symbolic sizes becomes guards (ir/shape_guards.h), named after the aten node a prim came from.
// Precondition: `graph` is functional (no in-place op, no view a later op mutates through: run
// Functionalize first, as PrimsPipeline does) and verifies.
absl::StatusOr<bool> DecomposeOps(Graph& graph, const DecomposeOptions& options = {});

}  // namespace coil::prims

#endif  // COIL_PRIMS_DECOMPOSE_H_
