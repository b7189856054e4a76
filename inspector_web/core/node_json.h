// WriteNodeJson: everything the details panel shows for one node of a stage's graph.
//
//   {"index": 3, "id": "fc", "op": "aten.linear", "name": "fc",
//    "loc": "model.py:11:4 in forward",
//    "inputs": [{"value": 5, "name": "", "type": "f32[s0, 8, 16]", "def": "node",
//                "node": 0, "node_id": "ln"},                 // def: input | constant | node
//               {"value": 4, "name": "bias", "type": "f32[32]", "def": "constant",
//                "node": -1, "node_id": ""}, ...],            //      | undefined
//    "outputs": [{"value": 6, "name": "", "type": "f32[s0, 8, 32]", "graph_output": false}],
//    "attrs": [["approximate", "\"tanh\""], ...],              // text IR form (format.h)
//    "users": [{"node": 4, "node_id": "n4"}, ...],             // nodes reading an output
//    "kernel": {"index": 2, "name": "k2", "kind": "pointwise", "extern_op": "",
//               "colour": "#..."},                             // Schedule stages, or null
//    "saved": true}                                            // autograd joint: saved?
#ifndef COIL_INSPECTOR_WEB_CORE_NODE_JSON_H_
#define COIL_INSPECTOR_WEB_CORE_NODE_JSON_H_

#include "inspector_web/core/graph_index.h"
#include "inspector_web/core/json_writer.h"
#include "inspector_web/core/stages.h"

namespace coil::inspector {

// `index` indexes stage.graph; `node` must be a valid node index (the caller checks).
void WriteNodeJson(const Stage& stage, const GraphIndex& index, int node, JsonWriter& w);

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_NODE_JSON_H_
