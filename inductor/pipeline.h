// The inductor stage's pass order, written once: production (BuildSchedule) and the tests run
// these same PassPipeline objects (ir/pass_pipeline.h).
//
//   inductor.graph    fold_constants                           (on the prims Graph)
//   inductor.lower    Graph -> Program                         (a recorded step, not a pass)
//   inductor          fuse_vertical, fuse_reductions, fuse_horizontal, fuse_extern_epilogues,
//                     reuse_loop_values, remove_dead_buffers,  (fusion.h explains the order)
//                     split_reductions, channels_last          (when the backend asks for them)
//                     plan_memory                              (on the Program)
//
//   std::vector<PassRecord> records;
//   PassPipeline<Program> fusion = FusionPipeline(options.capabilities);
//   absl::StatusOr<bool> changed = fusion.Run(program, {}, &records);
#ifndef COIL_INDUCTOR_PIPELINE_H_
#define COIL_INDUCTOR_PIPELINE_H_

#include "inductor/loop_ir.h"
#include "inductor/passes/memory_plan.h"
#include "inductor/schedule.h"
#include "ir/graph.h"
#include "ir/pass_pipeline.h"

namespace coil::inductor {

// Graph-level passes before lowering: fold_constants when options.constant_evaluator is set
// and options.fold_constants is on; otherwise an empty pipeline. Verifier: ir/verifier.h.
PassPipeline<Graph> GraphPipeline(const ScheduleOptions& options);

// The fusion passes in production order (remove_dead_buffers last). Verifier: VerifyProgram.
PassPipeline<Program> FusionPipeline(const Capabilities& capabilities);

// Everything after lowering: FusionPipeline's passes when options.fusion is on, then
// plan_memory under `ranges` (the graph's symbol ranges), whose summary lands in `*plan`.
// `plan` must outlive the pipeline's runs.
PassPipeline<Program> ProgramPipeline(const ScheduleOptions& options, SymRanges ranges,
                                      MemoryPlanSummary* plan);

// Program text for dumps: one line per kernel (name, kind, loops, fused ops).
std::string DescribeProgram(const Program& program);

}  // namespace coil::inductor

#endif  // COIL_INDUCTOR_PIPELINE_H_
