// The compile's stage timings as a tree for the Timings chart: each StageTiming row of the
// report (capture, import, prims, inductor, codegen_cpu, load, ...) with its wall and CPU
// seconds, and under it the PassRun records (ir/pass_pipeline.h) of the pipelines that ran
// inside it. Written into the overview as
//   "timing_tree": {"stages": [{"stage": "inductor", "seconds": 0.2, "cpu_seconds": 0.21,
//                               "passes": [{"pipeline": "inductor.graph", "pass": "fuse",
//                                           "seconds": 0.01, "changed": true}, ...]}, ...],
//                   "unplaced": [...passes no stage row takes...]}
// A pass belongs to the stage row named by the longest dot-separated prefix of its pipeline
// that names one ("inductor.graph" -> "inductor"; a training compile's "backward.prims" ->
// its "backward.prims" row, "backward.inductor.graph" -> "backward.inductor"). When the report has several rows of that stage (a recompile, autotune's
// candidates), passes fill the rows in order: a pass goes to the current row unless it would
// take the row's passes past the row's wall time and a later row of the stage exists. Nothing
// is invented: a stage without pass records (codegen, load) has no children, because the
// report records no parts for it.
#ifndef COIL_INSPECTOR_WEB_CORE_TIMING_TREE_H_
#define COIL_INSPECTOR_WEB_CORE_TIMING_TREE_H_

#include <string>
#include <vector>

#include "inspector_web/core/json_writer.h"
#include "ir/proto/report.pb.h"

namespace coil::inspector {

struct TimingNode {
  int timing_index = 0;           // the row in report.timings()
  std::vector<int> pass_indices;  // rows in report.passes(), in order
};

struct TimingTree {
  std::vector<TimingNode> stages;  // one per report.timings() row, in order
  std::vector<int> unplaced;       // passes whose stage has no timing row
};

// A pipeline's name up to the first dot (the stage it runs in when no longer prefix names a
// row).
std::string PipelineStage(const std::string& pipeline);

TimingTree BuildTimingTree(const proto::CompileReport& report);

void WriteTimingTreeJson(const proto::CompileReport& report, JsonWriter& w);

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_TIMING_TREE_H_
