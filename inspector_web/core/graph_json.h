// WriteGraphJson: a graph as the page draws it: nodes (id, op, name), inputs, constants,
// outputs, symbols, guards, and a layered layout (layout.h) of inputs and nodes. What the
// details panel shows for one node comes separately (node_json.h), so a 5,000-node stage
// stays small and quick to write and parse.
//
// Layout items are the graph inputs (items 0..I-1) followed by the nodes (items I..I+N-1)
// when no group is collapsed; with collapsed groups, see GroupView (name_groups.h);
// constants are listed but not drawn (a model has hundreds; node details show them).
// Written as one JSON object:
//   {"name": "...", "node_count": N,
//    "inputs": [{"value": 3, "name": "x", "type": "f32[s0, 16]"}, ...],
//    "constants": [{"value": 4, "name": "w", "type": "f32[16, 16]", "bytes": 1024,
//                   "external": ""}, ...],
//    "outputs": [12, ...], "output_nodes": [7, ...],   // node indices producing outputs
//    "symbols": [{"name": "s0", "min": 2, "max": 0, "hint": 8}],
//    "guards": [{"text": "s0 <= 64", "relation": true, "reason": "...", "loc": "..."}],
//    "nodes": [{"id": "n0", "op": "aten.add", "name": "/blocks.0/Add", "loc": ""}, ...],
//    "problems": ["node 3 (aten.add) reads undefined value %99"],
//    "groups": [{"path": "/blocks.0", "label": "blocks.0 (96)", "parent": -1, "depth": 0,
//                "nodes": 96, "first": 3}, ...],       // name path groups (name_groups.h)
//    "node_group": [-1, 0, ...],                         // per node: innermost group or -1
//    "collapsed": [0, 4, ...],                           // groups the stage opens collapsed
//    "layout": {"width": W, "height": H, "layers": L, "crossings": C, "dummies": D,
//               "boxes": [x, y, w, h, ...],             // 4 numbers per item
//               "items": [0, 1, 7, 12, ...],  // only when a group is collapsed: each item's
//                                             // code (GroupView: input, node or group)
//               "edges": [[from, to, value, x0, y0, x1, y1, ...], ...],
//               "types": ["f32[s0, 16]", ...],           // distinct value types of edges
//               "edge_type": [0, ...]}}                  // per edge: index into types
// A node's box shows NodeLabel(op); the page computes the same label from the op.
#ifndef COIL_INSPECTOR_WEB_CORE_GRAPH_JSON_H_
#define COIL_INSPECTOR_WEB_CORE_GRAPH_JSON_H_

#include <string>

#include "inspector_web/core/graph_index.h"
#include "inspector_web/core/json_writer.h"
#include "inspector_web/core/name_groups.h"

namespace coil::inspector {

// The short label drawn in a node's box: the op without its namespace ("aten.add" -> "add").
std::string NodeLabel(const std::string& op);

// Width of a box whose label has `chars` characters (12 px monospace text plus padding; the
// page's CSS uses the same font size).
double LabelWidth(size_t chars);

void WriteGraphJson(const GraphIndex& index, JsonWriter& w);

// The "groups", "node_group" and "collapsed" fields above.
void WriteNameGroupsJson(const NameGroups& groups, const std::vector<bool>& collapsed,
                         JsonWriter& w);

// The "layout" field above for a view with some groups collapsed (its boxes are the view's
// items; a collapsed group's edges are its nodes' edges to items outside it, one per pair).
void WriteViewLayout(const GraphIndex& index, const NameGroups& groups, const GroupView& view,
                     JsonWriter& w);

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_GRAPH_JSON_H_
