// The inductor pass lists (pipeline.h): the one place their order is written.
#include "inductor/pipeline.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "inductor/passes/channels_last.h"
#include "inductor/passes/fold_constants.h"
#include "inductor/passes/fusion.h"
#include "inductor/passes/split_reductions.h"
#include "inductor/passes/verify_program.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace coil::inductor {

PassPipeline<Graph> GraphPipeline(const ScheduleOptions& options) {
  PassPipeline<Graph> p("inductor.graph",
                        {.verify = [](const Graph& g) { return Verify(g); },
                         .print = [](const Graph& g) { return PrintGraph(g); }});
  if (options.fold_constants && options.constant_evaluator) {
    // Before lowering: a folded value then lowers like any weight (a CONSTANT buffer).
    FoldConstantsOptions fold;
    fold.evaluate = options.constant_evaluator;
    fold.external_data_dir = options.external_data_dir;
    p.Add("fold_constants", [fold](Graph& g) { return FoldConstants(g, fold); });
  }
  return p;
}

PassPipeline<Program> FusionPipeline(const Capabilities& capabilities) {
  PassPipeline<Program> p("inductor", {.verify = VerifyProgram, .print = DescribeProgram});
  // The order fusion.h explains: pointwise producers inline first, so reductions and horizontal
  // merges see whole bodies; loop values are reused once kernels are final; dead buffers last.
  p.Add("fuse_vertical", FuseVertical)
      .Add("fuse_reductions", FuseReductions)
      .Add("fuse_horizontal", FuseHorizontal)
      .Add("fuse_extern_epilogues",
           [epilogues = capabilities.extern_epilogues](Program& program) {
             return FuseExternEpilogues(program, epilogues);
           })
      .Add("reuse_loop_values", ReuseLoopValues)
      .Add("remove_dead_buffers", RemoveDeadBuffers);
  return p;
}

PassPipeline<Program> ProgramPipeline(const ScheduleOptions& options, SymRanges ranges,
                                      MemoryPlanSummary* plan) {
  PassPipeline<Program> p = options.fusion
                                ? FusionPipeline(options.capabilities)
                                : PassPipeline<Program>("inductor", {.verify = VerifyProgram,
                                                                     .print = DescribeProgram});
  if (options.capabilities.split_reductions) p.Add("split_reductions", SplitReductions);
  if (!options.capabilities.channels_last.empty()) {
    p.Add("channels_last", [dtypes = options.capabilities.channels_last](Program& program) {
      return ChannelsLastActivations(program, dtypes);
    });
  }
  p.Add("plan_memory", [ranges = std::move(ranges), reuse = options.reuse_memory,
                        in_place = options.capabilities.extern_epilogue_in_place,
                        plan](Program& program) -> absl::StatusOr<bool> {
    absl::StatusOr<MemoryPlanSummary> summary = PlanMemory(program, ranges, reuse, in_place);
    if (!summary.ok()) return summary.status();
    *plan = *std::move(summary);
    return true;
  });
  return p;
}

std::string DescribeProgram(const Program& program) {
  std::string s;
  for (const Kernel& k : program.kernels) {
    absl::StrAppend(&s, k.name, " ", proto::Kernel::Kind_Name(k.kind), " loops ", k.loops.size(),
                    " ranges ", k.ranges.size(), " ops");
    for (const std::string& op : k.source_ops) absl::StrAppend(&s, " ", op);
    absl::StrAppend(&s, "\n");
  }
  return s;
}

}  // namespace coil::inductor
