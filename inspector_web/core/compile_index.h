// The per-compile index (tlparse's front page): one entry per compile of a captured function
// that a report holds (a CaptureResult artifact each: the first compile, then each recompile
// after a guard miss), with why it compiled, its graphs (the page's stages) and its guards and
// graph breaks. Written into the overview as
//   "compiles": [{"compile": 2, "artifact": 1, "reason": "x: expected size 2 at dim 0, got 3",
//                 "graphs": 1, "guards": 4, "breaks": 0, "stages": [1], "nodes": [41]}, ...],
//   "compiles_missing": [1]   // compile numbers below the highest that the report lacks
// A compile's number is the count of its last Recompile entry (1 without one); the reason is
// that entry's failed guard ("" for the first compile). Reports written before every compile
// was kept hold only the latest one, which says which compile it is (compiles_missing lists
// the others).
#ifndef COIL_INSPECTOR_WEB_CORE_COMPILE_INDEX_H_
#define COIL_INSPECTOR_WEB_CORE_COMPILE_INDEX_H_

#include <vector>

#include "inspector_web/core/json_writer.h"
#include "inspector_web/core/stages.h"
#include "ir/proto/report.pb.h"

namespace coil::inspector {

// The compile number of one CaptureResult (see above).
int CompileNumber(const proto::CaptureResult& capture);

void WriteCompileIndexJson(const proto::CompileReport& report, const std::vector<Stage>& stages,
                           JsonWriter& w);

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_COMPILE_INDEX_H_
