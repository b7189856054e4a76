// Provenance: which nodes of the other stages a node came from or became.
//
// Every stage keeps a node's name path (the ONNX node name or module path it was imported or
// captured with) through prims (decompositions stamp it on every prim they emit), autograd
// (gradient nodes carry the forward op's name) and inductor (the schedule's graph keeps the
// prims names; kernels list the values they compute). A node's provenance key is its name, or
// its source location ("file:line:column") when it has no name, or "" (no provenance).
//
//   {"key": "/blocks.0/attn/MatMul", "stages": [
//     {"stage": 2, "stage_key": "import", "title": "import", "relation": "earlier",
//      "total": 1, "nodes": [{"index": 14, "id": "/blocks.0/attn/MatMul", "op": "aten.matmul"}],
//      "kernels": []},
//     {"stage": 5, "stage_key": "inductor", ..., "relation": "later", "total": 3,
//      "nodes": [...], "kernels": [{"index": 4, "name": "k4_mm", "colour": "#..."}]}]}
//
// "kernels" lists every kernel whose source values hold an output of a listed node. Stages
// where no node shares the key are left out; at most kMaxListed nodes are listed per
// stage ("total" counts them all).
#ifndef COIL_INSPECTOR_WEB_CORE_PROVENANCE_H_
#define COIL_INSPECTOR_WEB_CORE_PROVENANCE_H_

#include <string>
#include <vector>

#include "inspector_web/core/json_writer.h"
#include "inspector_web/core/stages.h"

namespace coil::inspector {

inline constexpr int kMaxListed = 16;

std::string ProvenanceKey(const proto::Node &node);

// The kernel (index, program order) of `schedule` whose source values include
// an output of `node`, or -1.
int KernelOfNode(const proto::Schedule &schedule, const proto::Node &node);

// Writes the object above for node `node` of stage `stage`.
void WriteProvenanceJson(const std::vector<Stage> &stages, int stage, int node, JsonWriter &w);

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_PROVENANCE_H_
