// inductor: turns a prims graph (prims/decompose.h) into a Schedule (ir/proto/schedule.proto):
// loop-level kernels, fused, with a memory plan. Usable alone as @coil//inductor.
//
//   absl::StatusOr<proto::Schedule> s = inductor::BuildSchedule(prims_graph, {});
//
// The passes run as PassPipelines whose order is written once, in pipeline.h/.cc; each pass is
// one file in inductor/passes/ with the signature `absl::StatusOr<bool> Pass(IR&)` (bool: the
// IR changed), and the IR is verified before and after each pass.
#ifndef COIL_INDUCTOR_SCHEDULE_H_
#define COIL_INDUCTOR_SCHEDULE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/constant_evaluator.h"
#include "ir/graph.h"
#include "ir/pass_pipeline.h"
#include "ir/proto/graph.pb.h"
#include "ir/proto/schedule.pb.h"

namespace coil::inductor {

// What the backend that will generate code can do; inductor knows no backend by name.
struct Capabilities {
  // Extern ops after which the backend runs a fused pointwise epilogue (e.g. "aten.mm" for a
  // GEMM with a bias + activation epilogue). Empty: no fusion across externs.
  std::vector<std::string> extern_epilogues;
  // Store the activations between 2-D convolutions of these dtypes channels-last
  // (passes/channels_last.h); empty: never. Only for a backend whose runtime reads
  // ir/channels_last.h's convolution attribute, and only the dtypes whose convolutions it runs
  // faster in NHWC (the CPU: f32 through oneDNN; CUDA: f16/bf16 tensor cores, f32 with TF32).
  std::vector<proto::DType> channels_last;
  // Split reductions with few output rows and long rows into a partial and a final kernel
  // (passes/split_reductions.h): for a backend that runs a row per thread block (CUDA).
  bool split_reductions = false;
  // Extern ops whose runtime reads an input that is a view of a buffer (a reshape, a permute,
  // a transpose, a slice) through the Kernel's extern_input_views, without a copy kernel
  // (passes/lower.h). Empty: every extern input is a whole buffer (CUDA).
  std::vector<std::string> extern_input_views;
  // Extern ops whose fused epilogue may write its result in place over a residual it reads at
  // the same index when that residual dies there (passes/memory_plan.h): for a runtime that
  // then accumulates the op's result into the destination (the CPU's convolutions: oneDNN's
  // `sum` post-op). Empty: none.
  std::vector<std::string> extern_epilogue_in_place;
};

struct ScheduleOptions {
  Capabilities capabilities;
  // Off: one kernel per prim (for comparisons and debugging).
  bool fusion = true;
  // Off: every intermediate buffer gets its own arena slot.
  bool reuse_memory = true;
  // Off: work on constants stays in kernels (passes/fold_constants.h).
  bool fold_constants = true;
  // Folder external constant paths are relative to; empty: constants stored externally are
  // not folded (passes/fold_constants.h).
  std::string external_data_dir;
  // Computes constant-only subgraphs for fold_constants; empty: nothing is folded. The
  // compile driver passes the reference interpreter (runtime/constant_evaluator.h), so this
  // stage links no runtime.
  ConstantEvaluator constant_evaluator;
  // Verifier before and after every pass (ir/pass_pipeline.h).
  PassPipelineOptions passes;
};

// Errors: the graph does not verify, or holds an op that is neither a prim nor an extern
// (InvalidArgument naming the op and node: run prims::Decompose first). Each pass's run is
// appended to `records` when it is not null (pipeline.h lists them).
absl::StatusOr<proto::Schedule> BuildSchedule(const proto::Graph& graph,
                                              const ScheduleOptions& options = {},
                                              std::vector<PassRecord>* records = nullptr);
// The same on the in-memory graph, consumed: its constants' bytes move into the Schedule.
absl::StatusOr<proto::Schedule> BuildSchedule(Graph graph, const ScheduleOptions& options = {},
                                              std::vector<PassRecord>* records = nullptr);

// A readable summary: kernels with their fused ops, bytes moved, peak memory.
std::string SummarizeSchedule(const proto::Schedule& schedule);

}  // namespace coil::inductor

#endif  // COIL_INDUCTOR_SCHEDULE_H_
