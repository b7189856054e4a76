// Compare two compiles: what changed between two CompileReports (two `coil compile --dump`s of
// one model with other options or another backend, or before and after a change to coil),
// structurally rather than by op counts:
//
//   std::string json = CompareJson(a, stages_a, "cpu/report.pb", b, stages_b, "cuda/report.pb");
//   {"ok": true, "a": "cpu/report.pb", "b": "cuda/report.pb",
//    "options": [["backend", "cpu", "cuda"], ...],          // options whose values differ
//    "stages": [{"key": "prims", "a_nodes": 237, "b_nodes": 237,   // -1: the side lacks it
//                "ops": [["prims.add", 12, 11], ...],              // ops whose counts differ
//                "only_a": 0, "only_b": 2, "only_a_names": [], "only_b_names": [...]}, ...],
//    "timings": [{"stage": "prims", "a": 0.012, "b": 0.010}, ...],  // null: no such row
//    "passes": [{"pipeline": "inductor", "pass": "fuse_vertical", "a": ..., "b": ...}, ...],
//    "kernels": {"a_stage": "inductor", "b_stage": "inductor", "a_count": 37, "b_count": 35,
//                "same": 30,
//                "only_a": [{"index": 4, "name": "k5", "nodes": 3, "ops": [...],
//                            "names": [...], "other": [6]}, ...],
//                "only_b": [...]},
//    "decisions": {"a_accepted": 50, "a_rejected": 134, "b_accepted": ..., "b_rejected": ...,
//                  "only_a": [{"pass": ..., "kind": ..., "kernels": [...], "accepted": true,
//                              "reason": "..."}, ...], "only_b": [...]}}
//
// Stages pair by key (stages.h); timing rows by stage name and occurrence (the k-th "prims" row
// of one with the k-th of the other), passes likewise by (pipeline, pass). Kernels are compared
// on the first Schedule stage of each report by the graph nodes they compute: a node is named
// by its provenance key (provenance.h), op and occurrence among nodes with both, so the same
// prims graph fused alike gives the same kernels whatever their numbering; "other" lists the
// kernels of the other side that compute any of the kernel's nodes (what it was split from or
// fused into). Decisions are equal when pass, kind, kernels, outcome and reason are.
// "only_*_names" and the kernel and decision lists hold at most kCompareListed entries each
// (the counts are complete).
#ifndef COIL_INSPECTOR_WEB_CORE_COMPARE_H_
#define COIL_INSPECTOR_WEB_CORE_COMPARE_H_

#include <string>
#include <string_view>
#include <vector>

#include "inspector_web/core/stages.h"
#include "ir/proto/report.pb.h"

namespace coil::inspector {

inline constexpr int kCompareListed = 200;

std::string CompareJson(const proto::CompileReport& a, const std::vector<Stage>& stages_a,
                        std::string_view name_a, const proto::CompileReport& b,
                        const std::vector<Stage>& stages_b, std::string_view name_b);

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_COMPARE_H_
