// ListStages: the tabs of the page, one per graph a CompileReport holds.
//
// A report's StageArtifacts become stages with unique keys (the page's `data-stage` and the
// first part of a deep link `#key/node`):
//   Graph artifact "import" / "prims"          -> "import", "prims"
//   CaptureResult artifact "capture"           -> "capture.0", "capture.1", ... (one per
//                                                 segment graph; "capture" if it has none)
//   AutogradResult artifact "autograd"         -> "autograd.joint", "autograd.forward",
//                                                 "autograd.backward"
//   Schedule artifact "inductor"               -> "inductor" (drawn: Schedule.graph)
//   KernelModule artifact "codegen_cpu"        -> "codegen_cpu" (drawn: its schedule's graph)
// A key that repeats gets "-2", "-3", ... appended. Keys hold no '/' or '#' (deep links split
// on them) and no whitespace; other characters of a stage name become '_'.
#ifndef COIL_INSPECTOR_WEB_CORE_STAGES_H_
#define COIL_INSPECTOR_WEB_CORE_STAGES_H_

#include <string>
#include <vector>

#include "ir/proto/report.pb.h"

namespace coil::inspector {

enum class StageKind {
  kGraph,         // a plain Graph artifact
  kCapture,       // one segment graph of a CaptureResult
  kAutograd,      // the joint, forward or backward graph of an AutogradResult
  kSchedule,      // a Schedule (its graph, with fusion groups and the memory plan)
  kKernelModule,  // a KernelModule (its schedule, plus generated sources)
};

// "graph", "capture", "autograd", "schedule", "kernel_module".
const char* StageKindName(StageKind kind);

struct Stage {
  std::string key;
  std::string title;  // for the tab: "capture (graph 1 of 2)", "autograd: forward", ...
  StageKind kind = StageKind::kGraph;
  int artifact_index = 0;  // into CompileReport.stages
  double seconds = 0;      // the artifact's time (shared by all stages of one artifact)
  // The graph drawn (never null) and the messages around it (null when not this kind).
  const proto::Graph* graph = nullptr;
  const proto::CaptureResult* capture = nullptr;
  int capture_index = 0;  // which segment graph
  const proto::AutogradResult* autograd = nullptr;
  std::string autograd_part;                  // "joint", "forward", "backward"
  const proto::Schedule* schedule = nullptr;  // kSchedule and kKernelModule
  const proto::KernelModule* kernel_module = nullptr;
};

// Stages in report order. Pointers point into `report`, which must outlive them.
// Artifacts without a payload are skipped.
std::vector<Stage> ListStages(const proto::CompileReport& report);

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_STAGES_H_
