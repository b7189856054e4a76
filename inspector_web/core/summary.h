// Per-stage summaries and the diff between two stages, by op.
//
//   OpHistogram h = CountOps(graph);          // [("prims.add", 12), ("prims.mul", 7), ...]
//   OpDiff d = DiffOps(CountOps(a), CountOps(b));
//   d.removed  // ops in a and not in b ("aten.softmax": decomposed away)
//   d.added    // ops in b and not in a ("prims.exp", "prims.amax", ...)
//   d.rows     // every op of either, with both counts
#ifndef COIL_INSPECTOR_WEB_CORE_SUMMARY_H_
#define COIL_INSPECTOR_WEB_CORE_SUMMARY_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "inspector_web/core/json_writer.h"
#include "ir/proto/graph.pb.h"

namespace coil::inspector {

// (op, count), most frequent first; ties by op name.
using OpHistogram = std::vector<std::pair<std::string, int64_t>>;

OpHistogram CountOps(const proto::Graph& graph);

struct OpDiffRow {
  std::string op;
  int64_t before = 0;
  int64_t after = 0;
};

struct OpDiff {
  std::vector<OpDiffRow> rows;       // sorted by op name
  std::vector<std::string> removed;  // before > 0, after == 0
  std::vector<std::string> added;    // before == 0, after > 0
};

OpDiff DiffOps(const OpHistogram& before, const OpHistogram& after);

// {"nodes": N, "inputs": I, "constants": C, "constant_bytes": B, "outputs": O,
//  "ops": [["prims.add", 12], ...]}
void WriteSummaryJson(const proto::Graph& graph, JsonWriter& w);

// {"rows": [["aten.softmax", 1, 0], ...], "removed": [...], "added": [...]}
void WriteDiffJson(const OpDiff& diff, JsonWriter& w);

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_SUMMARY_H_
