// BuildSchedule: verify the graph, run the graph passes, lower, run the program passes
// (pipeline.h), write the Schedule protobuf.
#include "inductor/schedule.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "inductor/loop_ir.h"
#include "inductor/passes/lower.h"
#include "inductor/passes/memory_plan.h"
#include "inductor/pipeline.h"
#include "ir/graph.h"
#include "ir/verifier.h"

namespace coil::inductor {
namespace {

std::string Bytes(int64_t b) {
  char text[32];
  if (b >= (1 << 20)) {
    std::snprintf(text, sizeof(text), "%.1f MiB", b / 1048576.0);
  } else if (b >= 1024) {
    std::snprintf(text, sizeof(text), "%.1f KiB", b / 1024.0);
  } else {
    std::snprintf(text, sizeof(text), "%lld B", static_cast<long long>(b));
  }
  return text;
}

}  // namespace

absl::StatusOr<proto::Schedule> BuildSchedule(const proto::Graph& graph_proto,
                                              const ScheduleOptions& options,
                                              std::vector<PassRecord>* records) {
  absl::StatusOr<Graph> graph = Graph::FromProto(graph_proto);
  if (!graph.ok()) return graph.status();
  return BuildSchedule(*std::move(graph), options, records);
}

absl::StatusOr<proto::Schedule> BuildSchedule(Graph graph, const ScheduleOptions& options,
                                              std::vector<PassRecord>* records) {
  // The input must verify even when a release driver turns the verifiers off: a graph that
  // does not would fail somewhere deep in lowering. (With them on, the graph pipeline checks
  // its input.)
  if (!options.passes.verify && options.passes.verify_input) {
    if (absl::Status s = Verify(graph); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("inductor: the input graph does not verify: ", s.message()));
    }
  }
  absl::StatusOr<bool> folded = GraphPipeline(options).Run(graph, options.passes, records);
  if (!folded.ok()) return folded.status();

  absl::StatusOr<Program> lowered =
      RunRecordedStep("inductor", "lower", records, [&] {
    return Lower(graph, {options.capabilities.extern_input_views});
  });
  if (!lowered.ok()) return lowered.status();
  Program program = *std::move(lowered);

  MemoryPlanSummary plan;
  // Lowering's result is internal to inductor: when passes are verified one by one it is
  // checked as the program pipeline's input (so a lowering bug is named as one); otherwise the
  // check of the pipeline's result covers lowering and fusion together (a Schedule is always
  // verified before it leaves inductor, whatever the caller vouched for).
  PassPipelineOptions program_passes = options.passes;
  program_passes.verify_input = options.passes.verify_each_pass;
  absl::StatusOr<bool> changed =
      ProgramPipeline(options, graph.SymbolRanges(), &plan).Run(program, program_passes, records);
  if (!changed.ok()) return changed.status();

  // The graph's constants (the weights: most of a Schedule's bytes) move into the Schedule.
  proto::Schedule schedule = ToProto(program, std::move(graph).ToProto());
  proto::MemoryPlan* mp = schedule.mutable_memory_plan();
  *mp->mutable_arena_bytes() = plan.arena_bytes.ToProto();
  mp->set_arena_bytes_hint(plan.arena_bytes_hint);
  mp->set_peak_live_bytes_hint(plan.peak_live_bytes_hint);
  mp->set_unplanned_bytes_hint(plan.unplanned_bytes_hint);
  return schedule;
}

std::string SummarizeSchedule(const proto::Schedule& s) {
  std::ostringstream out;
  const proto::ScheduleStats& st = s.stats();
  out << "schedule " << s.graph().name() << ": " << st.kernels() << " kernels ("
      << st.externs() << " extern) from " << st.kernels_unfused() << " unfused; bytes moved "
      << Bytes(st.bytes_moved_hint()) << " (unfused " << Bytes(st.bytes_moved_unfused_hint())
      << "); arena " << Bytes(s.memory_plan().arena_bytes_hint()) << ", peak live "
      << Bytes(s.memory_plan().peak_live_bytes_hint()) << ", without reuse "
      << Bytes(s.memory_plan().unplanned_bytes_hint()) << " (sizes at symbol hints)\n";
  for (const proto::Kernel& k : s.kernels()) {
    std::map<std::string, int> ops;
    for (const std::string& op : k.source_ops()) ++ops[op];
    std::vector<std::string> parts;
    for (const auto& [op, n] : ops) parts.push_back(n > 1 ? absl::StrCat(op, " x", n) : op);
    const char* kind = k.kind() == proto::Kernel::EXTERN      ? "extern"
                       : k.kind() == proto::Kernel::REDUCTION ? "reduction"
                                                              : "pointwise";
    out << "  " << k.name() << " [" << kind;
    if (k.kind() == proto::Kernel::EXTERN) {
      out << " " << k.extern_op();
      if (k.loops_size() > 0) out << " + epilogue";
    }
    out << ", " << k.loops_size() << " loops] " << Bytes(k.bytes_moved_hint()) << ": "
        << absl::StrJoin(parts, ", ") << "\n";
  }
  int accepted = 0;
  for (const proto::FusionDecision& d : s.decisions()) accepted += d.accepted();
  out << "  fusion decisions: " << accepted << " accepted, " << s.decisions_size() - accepted
      << " rejected\n";
  return out.str();
}

}  // namespace coil::inductor
