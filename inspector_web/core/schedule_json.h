// WriteScheduleJson: a Schedule as the page shows it over its graph: kernels as coloured
// fusion groups (which graph nodes each kernel computes), externs, fusion decisions, and the
// memory plan as a buffer timeline (arena offset x kernel index, sizes at the symbols' hints).
//
//   {"stats": {...}, "memory_plan": {"arena_bytes": "256*s0", "arena_bytes_hint": 2048, ...},
//    "kernels": [{"id": 1, "name": "k1", "kind": "pointwise", "colour": "#d9534f",
//                 "nodes": [0, 3], "ops": ["prims.exp"], "extern_op": "", "ranges": "[s0, 16]",
//                 "loops": 1, "reads": [1], "writes": [2], "bytes_moved": "128*s0",
//                 "bytes_moved_hint": 1024}, ...],
//    "node_kernel": [0, -1, ...],     // per graph node: the first kernel computing it, or -1
//    "buffers": [{"id": 2, "name": "buf2", "kind": "intermediate", "dtype": "f32",
//                 "shape": "[s0, 16]", "size": "64*s0", "size_hint": 512, "offset": "0",
//                 "offset_hint": 0, "first": 0, "last": 3, "reuses": 0, "in_place": false},
//                ...],                // first/last: live range in kernel indices (-1: unused)
//    "outputs": [5], "decisions": [{"pass": "...", "kind": "...", "kernels": [...],
//                                   "accepted": true, "reason": "...", "bytes_saved_hint": 0,
//                                   "final_kernels": [3]}]}   // see DecisionKernels
// *_hint values are null when a size cannot be evaluated at the hints.
#ifndef COIL_INSPECTOR_WEB_CORE_SCHEDULE_JSON_H_
#define COIL_INSPECTOR_WEB_CORE_SCHEDULE_JSON_H_

#include <string>
#include <vector>

#include "inspector_web/core/graph_index.h"
#include "inspector_web/core/json_writer.h"
#include "ir/proto/schedule.pb.h"

namespace coil::inspector {

// A colour per kernel index ("#rrggbb"), distinct from those of the kKernelColourWindow
// kernels before and after it.
inline constexpr int kKernelColourWindow = 24;
std::string KernelColour(int index);

// "pointwise", "reduction", "extern" ("unspecified" otherwise), for proto::Kernel::Kind.
const char* KernelKindName(int kind);

// Inclusive kernel-index range in which each buffer is live: from the first kernel that
// touches it to the last (reads, writes, extern inputs and outputs). Indexed like
// schedule.buffers(); {-1, -1} for a buffer no kernel touches.
struct LiveRange {
  int first = -1;
  int last = -1;
};
std::vector<LiveRange> BufferLiveRanges(const proto::Schedule& schedule);

// `index` must index schedule.graph().
// Fusion decisions name kernels as they were when the pass ran ("k1_full"), most of which
// later fused away. For each decision, the kernels of the final schedule (indices) that its
// kernels ended up in: a name that is a final kernel's is that kernel; any other was joined by
// accepted decisions, and ends up where the kernels it was joined with do (a producer inlined
// into two consumers is in both).
std::vector<std::vector<int>> DecisionKernels(const proto::Schedule& schedule);

void WriteScheduleJson(const proto::Schedule& schedule, const GraphIndex& index, JsonWriter& w);

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_SCHEDULE_JSON_H_
