// PlanMemory: arena offsets for INTERMEDIATE buffers.
//
// Liveness is over program order (a buffer lives from the kernel that first writes it to the
// last kernel that reads it). A buffer reuses the space of dead buffers: the smallest free slot
// provably large enough (SymExpr relations under the graph's symbol ranges), else adjacent free
// slots joined, else the free end of the arena grown, the unused rest of a slot staying free
// (memory_plan.cc, [Note: slots]); a pointwise kernel may write its output in place over an
// input that dies
// there when it reads that input only at the index it writes (Buffer::in_place), and so may an
// extern kernel's epilogue Loop for the extern ops in `in_place_externs` (over an input that
// is not an operand of the op: a residual). Slots are
// 64-byte aligned; offsets and the arena size are SymExprs (dynamic shapes plan once). Without
// reuse every buffer gets its own slot. Fills MemoryPlan fields via the returned summary.
#ifndef COIL_INDUCTOR_PASSES_MEMORY_PLAN_H_
#define COIL_INDUCTOR_PASSES_MEMORY_PLAN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "inductor/loop_ir.h"
#include "ir/sym_expr.h"

namespace coil::inductor {

struct MemoryPlanSummary {
  SymExpr arena_bytes{0};
  int64_t arena_bytes_hint = 0;
  int64_t peak_live_bytes_hint = 0;   // max over program points of the live buffers' sizes
  int64_t unplanned_bytes_hint = 0;   // sum of all intermediate buffers
};

// `ranges`: the graph's symbol ranges (for provable size relations).
absl::StatusOr<MemoryPlanSummary> PlanMemory(
    Program& program, const SymRanges& ranges, bool reuse,
    const std::vector<std::string>& in_place_externs = {});

}  // namespace coil::inductor

#endif  // COIL_INDUCTOR_PASSES_MEMORY_PLAN_H_
