// LayeredLayout: positions for a DAG drawn top to bottom (a Sugiyama-style layered layout).
//
//   LayoutInput in;
//   in.widths = {80, 120, 64};          // one box per item, all `in.height` tall
//   in.edges = {{0, 1}, {1, 2}, {0, 2}};
//   Layout out = LayeredLayout(in);     // out.x/out.y: top-left of each box; out.edges[k]:
//                                       // polyline points of in.edges[k]
//
// Why not a JavaScript library: dagre and elkjs take 4-7 s on 500 nodes and 16-19 s on 1,000
// in headless Chromium on this machine (dagre overflows the stack at 2,000); the page must
// draw 5,000 nodes in under 2 s (docs/inspector.md has the measurement and its script).
//
// Steps, each linear or n log n in items + dummy points:
//  1. Layers: longest path from the sources in item order (an edge from a later item to an
//     earlier one is a back edge: drawn, but not used for layering), then each item moves down
//     to just above its first consumer (graph inputs and weight preparation sit next to
//     where they are used; the longest path does not move).
//  2. Long edges get a dummy point per layer crossed (up to a budget; edges past it are drawn
//     straight), so they bend around boxes instead of through them.
//  3. Order within layers: barycenter sweeps down and up, keeping the order with the fewest
//     crossings (counted exactly with a Fenwick tree).
//  4. X: each box moves toward the mean of its neighbours' centres, subject to the layer's
//     order and spacing; each pass is an exact weighted isotonic regression (pool adjacent
//     violators), alternating down and up.
#ifndef COIL_INSPECTOR_WEB_CORE_LAYOUT_H_
#define COIL_INSPECTOR_WEB_CORE_LAYOUT_H_

#include <cstdint>
#include <utility>
#include <vector>

namespace coil::inspector {

struct LayoutInput {
  std::vector<double> widths;              // one per item
  double height = 28;                      // every item's height
  std::vector<std::pair<int, int>> edges;  // (from item, to item); self-loops are ignored
};

struct LayoutOptions {
  double node_gap = 16;      // horizontal space between boxes
  double dummy_gap = 8;      // horizontal space next to a long edge's bend point
  double layer_gap = 36;     // vertical space between layers
  double margin = 16;        // around the drawing
  int order_sweeps = 6;      // barycenter down+up sweeps
  int position_passes = 8;   // x refinement passes (down+up each)
  int64_t max_dummies = -1;  // bend points budget; -1: max(4000, 4 * items)
};

struct Layout {
  std::vector<double> x, y;                // top-left of each item's box
  std::vector<int> layer;                  // each item's layer (0 = top)
  std::vector<std::vector<double>> edges;  // per input edge: x0, y0, x1, y1, ... (empty for
                                           // self-loops)
  double width = 0, height = 0;            // of the whole drawing, margins included
  int layers = 0;
  int64_t dummies = 0;              // bend points placed
  int64_t crossings = 0;            // edge crossings between adjacent layers, final order
  int64_t straight_long_edges = 0;  // long or back edges drawn without bend points
};

Layout LayeredLayout(const LayoutInput& input, const LayoutOptions& options = {});

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_LAYOUT_H_
