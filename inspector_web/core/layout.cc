// LayeredLayout (layout.h). Vertices are the items followed by the dummy bend points of long
// edges; only edges between adjacent layers ("segments") exist after step 2.
#include "inspector_web/core/layout.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "inspector_web/core/check.h"

namespace coil::inspector {
namespace {

struct Graph {
  int items = 0;
  std::vector<int> layer;                  // per vertex
  std::vector<double> width;               // per vertex (0 for dummies)
  std::vector<std::vector<int>> up, down;  // segment neighbours in the layer above / below
  bool is_dummy(int v) const { return v >= items; }
  int size() const { return static_cast<int>(layer.size()); }
  int AddVertex(int l, double w) {
    layer.push_back(l);
    width.push_back(w);
    up.emplace_back();
    down.emplace_back();
    return size() - 1;
  }
  void AddSegment(int u, int v) {
    down[u].push_back(v);
    up[v].push_back(u);
  }
};

// Step 1: longest-path layers over forward edges, then every vertex pushed down to just above
// its first consumer.
std::vector<int> AssignLayers(int n, const std::vector<std::pair<int, int>>& edges) {
  std::vector<std::vector<int>> in(n), out(n);
  for (const auto& [u, v] : edges) {
    if (u < v) {
      out[u].push_back(v);
      in[v].push_back(u);
    }
  }
  std::vector<int> layer(n, 0);
  for (int v = 0; v < n; ++v) {
    for (int u : in[v]) layer[v] = std::max(layer[v], layer[u] + 1);
  }
  // Then as late as the consumers allow (reverse topological order, so consumers are final):
  // off the longest path, values are made right before they are used, and graph inputs and
  // weight preparation sit next to their first use instead of at the top.
  for (int v = n - 1; v >= 0; --v) {
    if (out[v].empty()) continue;
    int first_use = layer[out[v][0]];
    for (int w : out[v]) first_use = std::min(first_use, layer[w]);
    layer[v] = std::max(layer[v], first_use - 1);
  }
  return layer;
}

// Crossings between layer r and r+1 for the current positions (Fenwick tree over the lower
// layer's positions).
struct CrossingScratch {
  std::vector<std::pair<int, int>> segs;
  std::vector<int64_t> tree;
};

int64_t CountCrossings(const Graph& g, const std::vector<int>& upper, int lower_size,
                       const std::vector<int>& pos, CrossingScratch& scratch) {
  std::vector<std::pair<int, int>>& segs = scratch.segs;
  segs.clear();
  for (int u : upper) {
    for (int v : g.down[u]) segs.emplace_back(pos[u], pos[v]);
  }
  if (segs.size() < 2) return 0;
  std::sort(segs.begin(), segs.end());
  std::vector<int64_t>& tree = scratch.tree;
  tree.assign(lower_size + 1, 0);
  int64_t crossings = 0, seen = 0;
  for (const auto& [pu, pv] : segs) {
    // Segments seen so far (smaller or equal upper position) ending right of pv cross this one,
    // except those sharing the upper endpoint (they end at or left of pv after sorting).
    int64_t at_or_left = 0;
    for (int i = pv + 1; i > 0; i -= i & -i) at_or_left += tree[i];
    crossings += seen - at_or_left;
    for (int i = pv + 1; i <= lower_size; i += i & -i) ++tree[i];
    ++seen;
  }
  return crossings;
}

int64_t TotalCrossings(const Graph& g, const std::vector<std::vector<int>>& layers,
                       const std::vector<int>& pos) {
  int64_t total = 0;
  CrossingScratch scratch;
  for (size_t r = 0; r + 1 < layers.size(); ++r) {
    total += CountCrossings(g, layers[r], static_cast<int>(layers[r + 1].size()), pos, scratch);
  }
  return total;
}

// Reorders `layer` by the mean position of each vertex's neighbours (`down_sweep`: those
// above); vertices without neighbours keep their position as key.
void SortByBarycenter(const Graph& g, std::vector<int>& layer, std::vector<int>& pos,
                      bool down_sweep, std::vector<std::pair<double, int>>& keyed) {
  keyed.clear();
  for (int v : layer) {
    const std::vector<int>& nb = down_sweep ? g.up[v] : g.down[v];
    double key = pos[v];
    if (!nb.empty()) {
      double sum = 0;
      for (int u : nb) sum += pos[u];
      key = sum / nb.size();
    }
    keyed.emplace_back(key, v);
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < keyed.size(); ++i) {
    layer[i] = keyed[i].second;
    pos[layer[i]] = static_cast<int>(i);
  }
}

// Step 3.
void OrderLayers(const Graph& g, std::vector<std::vector<int>>& layers, std::vector<int>& pos,
                 int sweeps, int64_t* crossings) {
  auto best = layers;
  int64_t best_crossings = TotalCrossings(g, layers, pos);
  std::vector<std::pair<double, int>> keyed;  // scratch for SortByBarycenter
  for (int s = 0; s < sweeps && best_crossings > 0; ++s) {
    for (size_t r = 1; r < layers.size(); ++r) SortByBarycenter(g, layers[r], pos, true, keyed);
    for (size_t r = layers.size() - 1; r-- > 0;) {
      SortByBarycenter(g, layers[r], pos, false, keyed);
    }
    int64_t c = TotalCrossings(g, layers, pos);
    if (c < best_crossings) {
      best_crossings = c;
      best = layers;
    }
  }
  layers = std::move(best);
  for (const auto& layer : layers) {
    for (size_t i = 0; i < layer.size(); ++i) pos[layer[i]] = static_cast<int>(i);
  }
  *crossings = best_crossings;
}

// Buffers reused across the ~100,000 PlaceLayer calls of a 5,000-node layout (allocating
// them per call dominated the profile, in wasm especially).
struct PlaceScratch {
  struct Block {
    double w, wt;
    int count;
  };
  std::vector<double> offset, target, weight;
  std::vector<Block> blocks;
};

// Weighted isotonic regression (non-decreasing fit) of s.target with s.weight, pool adjacent
// violators; the fit replaces s.target.
void Isotonic(PlaceScratch& s) {
  using Block = PlaceScratch::Block;
  s.blocks.clear();
  for (size_t i = 0; i < s.target.size(); ++i) {
    s.blocks.push_back({s.weight[i], s.weight[i] * s.target[i], 1});
    while (s.blocks.size() >= 2) {
      Block& b = s.blocks[s.blocks.size() - 1];
      Block& a = s.blocks[s.blocks.size() - 2];
      if (a.wt / a.w <= b.wt / b.w) break;
      a.w += b.w;
      a.wt += b.wt;
      a.count += b.count;
      s.blocks.pop_back();
    }
  }
  size_t i = 0;
  for (const Block& b : s.blocks) {
    for (int k = 0; k < b.count; ++k) s.target[i++] = b.wt / b.w;
  }
}

// Step 4: centres as close as the layer's order and spacing allow to the mean centre of each
// vertex's neighbours above (`use_up`) and/or below (`use_down`). Returns the largest move.
double PlaceLayer(const Graph& g, const std::vector<int>& layer, std::vector<double>& centre,
                  bool use_up, bool use_down, const LayoutOptions& o, PlaceScratch& s) {
  size_t n = layer.size();
  if (n == 0) return 0;
  s.offset.assign(n, 0);
  s.target.resize(n);
  s.weight.resize(n);
  for (size_t i = 1; i < n; ++i) {
    int a = layer[i - 1], b = layer[i];
    double gap = g.is_dummy(a) || g.is_dummy(b) ? o.dummy_gap : o.node_gap;
    s.offset[i] = s.offset[i - 1] + (g.width[a] + g.width[b]) / 2 + gap;
  }
  for (size_t i = 0; i < n; ++i) {
    int v = layer[i];
    double sum = 0;
    int count = 0;
    if (use_up) {
      for (int u : g.up[v]) sum += centre[u], ++count;
    }
    if (use_down) {
      for (int u : g.down[v]) sum += centre[u], ++count;
    }
    // Vertices without neighbours on that side stay put, with little say in their block.
    double desired = count > 0 ? sum / count : centre[v];
    s.target[i] = desired - s.offset[i];
    // Bend points weigh more, so long edges run straight.
    s.weight[i] = count == 0 ? 0.1 : (g.is_dummy(v) ? 2.0 : 1.0);
  }
  Isotonic(s);
  double moved = 0;
  for (size_t i = 0; i < n; ++i) {
    double c = s.target[i] + s.offset[i];
    moved = std::max(moved, std::fabs(c - centre[layer[i]]));
    centre[layer[i]] = c;
  }
  return moved;
}

}  // namespace

Layout LayeredLayout(const LayoutInput& input, const LayoutOptions& o) {
  const int n = static_cast<int>(input.widths.size());
  for (const auto& [u, v] : input.edges) {
    INSPECTOR_CHECK(u >= 0 && u < n && v >= 0 && v < n, "layout edge endpoint out of range");
  }
  Layout out;
  out.x.assign(n, 0);
  out.y.assign(n, 0);
  out.edges.resize(input.edges.size());
  if (n == 0) return out;

  // Step 1.
  Graph g;
  g.items = n;
  std::vector<int> item_layer = AssignLayers(n, input.edges);
  for (int v = 0; v < n; ++v) g.AddVertex(item_layer[v], input.widths[v]);
  out.layers = 1 + *std::max_element(item_layer.begin(), item_layer.end());

  // Step 2: adjacent-layer edges become segments; long ones get bend points, shortest first,
  // within the budget.
  int64_t budget = o.max_dummies >= 0 ? o.max_dummies : std::max<int64_t>(4000, 4 * int64_t{n});
  std::vector<int> long_edges;
  for (size_t k = 0; k < input.edges.size(); ++k) {
    auto [u, v] = input.edges[k];
    if (u >= v) continue;  // self-loop or back edge
    if (g.layer[v] - g.layer[u] == 1) {
      g.AddSegment(u, v);
    } else {
      long_edges.push_back(static_cast<int>(k));
    }
  }
  std::stable_sort(long_edges.begin(), long_edges.end(), [&](int a, int b) {
    auto span = [&](int k) {
      return g.layer[input.edges[k].second] - g.layer[input.edges[k].first];
    };
    return span(a) < span(b);
  });
  std::vector<std::vector<int>> chain(input.edges.size());  // bend points per edge
  for (int k : long_edges) {
    auto [u, v] = input.edges[k];
    int64_t need = g.layer[v] - g.layer[u] - 1;
    if (out.dummies + need > budget) continue;
    out.dummies += need;
    int prev = u;
    for (int l = g.layer[u] + 1; l < g.layer[v]; ++l) {
      int d = g.AddVertex(l, 0);
      chain[k].push_back(d);
      g.AddSegment(prev, d);
      prev = d;
    }
    g.AddSegment(prev, v);
  }

  // Step 3: items in index order, then bend points in creation order; then sweeps.
  std::vector<std::vector<int>> layers(out.layers);
  std::vector<int> pos(g.size());
  for (int v = 0; v < g.size(); ++v) {
    pos[v] = static_cast<int>(layers[g.layer[v]].size());
    layers[g.layer[v]].push_back(v);
  }
  OrderLayers(g, layers, pos, o.order_sweeps, &out.crossings);

  // Step 4: packed, centred layers, then refinement passes.
  std::vector<double> centre(g.size(), 0);
  for (const auto& layer : layers) {
    double cursor = 0;
    for (size_t i = 0; i < layer.size(); ++i) {
      int v = layer[i];
      if (i > 0) {
        int a = layer[i - 1];
        cursor += (g.width[a] + g.width[v]) / 2 +
                  (g.is_dummy(a) || g.is_dummy(v) ? o.dummy_gap : o.node_gap);
      }
      centre[v] = cursor;
    }
    for (int v : layer) centre[v] -= cursor / 2;
  }
  // Passes stop early once nothing moves by half a pixel.
  PlaceScratch scratch;
  for (int p = 0; p < o.position_passes; ++p) {
    double moved = 0;
    for (size_t r = 1; r < layers.size(); ++r) {
      moved = std::max(moved, PlaceLayer(g, layers[r], centre, true, false, o, scratch));
    }
    for (size_t r = layers.size() - 1; r-- > 0;) {
      moved = std::max(moved, PlaceLayer(g, layers[r], centre, false, true, o, scratch));
    }
    if (moved < 0.5) break;
  }
  for (const auto& layer : layers) PlaceLayer(g, layer, centre, true, true, o, scratch);

  // Coordinates: shift so the drawing starts at the margin.
  double min_left = 0, max_right = 0;
  for (int v = 0; v < g.size(); ++v) {
    double left = centre[v] - g.width[v] / 2, right = centre[v] + g.width[v] / 2;
    if (v == 0 || left < min_left) min_left = left;
    if (v == 0 || right > max_right) max_right = right;
  }
  double shift = o.margin - min_left;
  auto top = [&](int l) { return o.margin + l * (input.height + o.layer_gap); };
  for (int v = 0; v < n; ++v) {
    out.x[v] = centre[v] - g.width[v] / 2 + shift;
    out.y[v] = top(g.layer[v]);
  }
  out.layer = item_layer;
  out.width = max_right - min_left + 2 * o.margin;
  out.height = top(out.layers) - o.layer_gap + o.margin;

  // Edge polylines: bottom centre of the source, through each bend point's layer row, top
  // centre of the target.
  for (size_t k = 0; k < input.edges.size(); ++k) {
    auto [u, v] = input.edges[k];
    if (u == v) continue;
    std::vector<double>& pts = out.edges[k];
    pts = {centre[u] + shift, out.y[u] + input.height};
    for (int d : chain[k]) {
      double x = centre[d] + shift, y = top(g.layer[d]);
      pts.insert(pts.end(), {x, y, x, y + input.height});
    }
    pts.insert(pts.end(), {centre[v] + shift, out.y[v]});
    if (chain[k].empty() && (u > v || g.layer[v] - g.layer[u] != 1)) ++out.straight_long_edges;
  }
  return out;
}

}  // namespace coil::inspector
