// Inspector: everything the page asks of the core, as JSON strings (the wasm API in
// inspector_web/wasm_api.cc forwards to it; native tests call it directly).
//
//   Inspector insp;
//   std::string overview = insp.Open(bytes, "report.pb");
//   // {"ok": true, "kind": "CompileReport", "model": "...", "stages": [{"key": "capture.0",
//   //   "title": "...", "kind": "capture", "node_count": 41, "seconds": 0.01}, ...],
//   //  "timings": [...], "logs": [...], "options": [...], "warning": ""}
//   // or {"ok": false, "error": "report.pb: not a coil protobuf (truncated at byte 1234 ...)"}
//   std::string stage = insp.StageJson(0);   // one stage: graph + layout, summary, and the
//                                            // capture/autograd/schedule/kernel_module parts
//   std::string node = insp.NodeJson(0, 5);  // the details of node 5 of stage 0
//   std::string diff = insp.DiffJson(1, 2);  // ops removed/added between two stages
//   std::string mem = insp.MemoryJson(4, "batch=8");  // a memory plan at symbol values
//   std::string view = insp.ViewJson(1, "0,3");  // stage 1's layout, groups 0 and 3 collapsed
//   insp.OpenCompare(other_bytes, "cuda/report.pb");  // a second compile to compare with
//   std::string cmp = insp.CompareJson();  // the loaded report against it (compare.h)
//
// The JSON layouts are documented beside their writers (graph_json.h, summary.h,
// schedule_json.h, kernel_module_json.h, node_json.h) and in docs/inspector.md. A successful
// Open replaces the previous file; a failed one leaves it loaded. Out-of-range indices give
// {"ok": false, "error": ...}. NodeJson also holds "provenance" (provenance.h).
#ifndef COIL_INSPECTOR_WEB_CORE_INSPECTOR_H_
#define COIL_INSPECTOR_WEB_CORE_INSPECTOR_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "inspector_web/core/stages.h"
#include "ir/proto/report.pb.h"

namespace coil::inspector {

class Inspector {
 public:
  Inspector();
  ~Inspector();

  std::string Open(std::string_view bytes, std::string_view file_name);
  std::string StageJson(int index) const;
  std::string NodeJson(int stage, int node) const;
  std::string DiffJson(int before, int after) const;
  // A schedule stage's memory plan at symbol values (memory_json.h); `typed` is what the user
  // typed ("batch=4"), which wins over the compile's --dim values and the hints.
  std::string MemoryJson(int stage, std::string_view typed) const;
  // The layout of a stage's graph with the name path groups `collapsed` ("3,5": group
  // indices of the stage JSON's "groups"; "auto": the stage's default) drawn as one box each:
  // {"ok": true, "collapsed": [3, 5], "layout": {...}} (graph_json.h, name_groups.h).
  std::string ViewJson(int stage, std::string_view collapsed) const;

  // Loads a second file to compare the loaded one with (any coil protobuf, as Open takes):
  // {"ok": true, "file": "cuda/report.pb", "stages": N} or {"ok": false, "error": ...}; a
  // failed load keeps the previous one. Opening a new file (Open) drops it.
  std::string OpenCompare(std::string_view bytes, std::string_view file_name);
  // The loaded report (a) against the compare file (b), compare.h's document; an error
  // before both are loaded.
  std::string CompareJson() const;

  // The loaded report and its stages (empty before a successful Open).
  const proto::CompileReport& report() const { return *report_; }
  const std::vector<Stage>& stages() const { return stages_; }

 private:
  std::unique_ptr<proto::CompileReport> report_;
  std::vector<Stage> stages_;
  std::string file_name_;
  std::unique_ptr<proto::CompileReport> other_;  // null until OpenCompare succeeds
  std::vector<Stage> other_stages_;
  std::string other_name_;
};

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_INSPECTOR_H_
