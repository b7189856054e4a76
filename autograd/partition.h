// Splits a joint graph (joint_graph.h) into a forward graph and a backward graph connected by
// saved values, as AOTAutograd's partitioners do.
//
//   absl::StatusOr<Partition> p = PartitionJoint(joint, {.strategy = Strategy::kMinCut});
//   // p->forward:  inputs = primals;               outputs = forward outputs, then saved
//   // p->backward: inputs = saved, then tangents;  outputs = the joint's gradients
//
// kSaveEverything saves every forward value the backward reads (AOTAutograd's
// default_partition). kMinCut (min_cut_rematerialization_partition) builds a flow network
// over the forward values (each split into in -> out with the value's bytes as capacity,
// inputs joined to the source, values the backward uses joined to the sink) and saves the
// values on a minimum cut; the backward recomputes everything between the cut and its uses.
// Only cheap ops may be recomputed: pointwise, views/layout and creation ops
// (OpClass kElementwise, kShape, kCreation) and prims.philox_uniform, a function of its seed
// and offset attributes (so a dropout mask is drawn again, not saved); matmul, convolution,
// attention and indexing ops never are. `activation_memory_budget` in [0, 1] trades memory for recomputation:
// at 1 reductions are never recomputed either; below 1, when that cut saves more than
// budget x (save-everything bytes), reductions become recomputable too (a second, cheaper
// cut; budget 0 always takes it). Sizes of symbolic dims are estimated from the graph's
// symbol hints (else the symbol's minimum, at least 2).
#ifndef COIL_AUTOGRAD_PARTITION_H_
#define COIL_AUTOGRAD_PARTITION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "autograd/joint_graph.h"
#include "ir/graph.h"

namespace coil::autograd {

enum class PartitionStrategy { kSaveEverything, kMinCut };

struct PartitionOptions {
  PartitionStrategy strategy = PartitionStrategy::kMinCut;
  double activation_memory_budget = 1.0;
};

struct SavedValue {
  std::string name;
  TensorType type;
  int64_t bytes = 0;       // estimated for symbolic shapes (see above)
  bool is_primal = false;  // a forward input the caller holds anyway
  int64_t value_id = -1;   // its id in the joint graph
};

struct Partition {
  Graph forward;
  Graph backward;
  std::vector<SavedValue> saved;
  int64_t saved_bytes = 0;
  int num_forward_outputs = 0;
  // Nodes of the backward graph that recompute forward values.
  int recomputed_nodes = 0;
  // For kMinCut: whether reductions were allowed to be recomputed (budget < 1 took the
  // second cut).
  bool recomputed_reductions = false;
};

// Errors: a budget outside [0, 1] (InvalidArgument); an internal inconsistency of the cut
// (Internal).
absl::StatusOr<Partition> PartitionJoint(const JointGraph& joint, const PartitionOptions& options);

// Estimated bytes of a value of type `t` in `graph` (symbols from their hints).
int64_t EstimatedBytes(const Graph& graph, const TensorType& t);

}  // namespace coil::autograd

#endif  // COIL_AUTOGRAD_PARTITION_H_
