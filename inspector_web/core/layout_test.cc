// LayeredLayout: the invariants a drawing needs, on random DAGs and a 5,000-node ML-shaped
// graph; the crossing count against a brute-force count; edge cases.
#include "inspector_web/core/layout.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "gtest/gtest.h"

namespace coil::inspector {
namespace {

// A random DAG shaped like a model: a chain with residual edges, fan-out, and sources.
LayoutInput ModelLike(int n, unsigned seed) {
  std::mt19937 rng(seed);
  LayoutInput in;
  for (int i = 0; i < n; ++i) in.widths.push_back(40 + rng() % 120);
  for (int i = 1; i < n; ++i) {
    if (rng() % 10 != 0) in.edges.emplace_back(i - 1, i);           // the chain
    if (i >= 4 && rng() % 4 == 0) in.edges.emplace_back(i - 4, i);  // residual
    if (rng() % 20 == 0) in.edges.emplace_back(rng() % i, i);       // long skip
  }
  return in;
}

// Brute force: pairs of segments between the same two adjacent layers that cross.
int64_t BruteForceCrossings(const LayoutInput& in, const Layout& out) {
  // Recover segments from the polylines: consecutive (leave, enter) point pairs; crossings
  // are counted by the x order at the two rows, as the layout does.
  std::map<std::pair<double, double>, std::vector<std::pair<double, double>>> by_rows;
  for (const std::vector<double>& pts : out.edges) {
    for (size_t k = 0; k + 3 < pts.size(); k += 4) {
      // pts[k..k+1] leaves a row, pts[k+2..k+3] enters the next.
      by_rows[{pts[k + 1], pts[k + 3]}].emplace_back(pts[k], pts[k + 2]);
    }
  }
  int64_t crossings = 0;
  for (const auto& [rows, segs] : by_rows) {
    for (size_t a = 0; a < segs.size(); ++a) {
      for (size_t b = a + 1; b < segs.size(); ++b) {
        double d0 = segs[a].first - segs[b].first, d1 = segs[a].second - segs[b].second;
        if ((d0 < 0 && d1 > 0) || (d0 > 0 && d1 < 0)) ++crossings;
      }
    }
  }
  return crossings;
}

void ExpectValidLayout(const LayoutInput& in, const Layout& out, const LayoutOptions& o) {
  const size_t n = in.widths.size();
  ASSERT_EQ(out.x.size(), n);
  ASSERT_EQ(out.edges.size(), in.edges.size());
  // Inside the drawing.
  for (size_t i = 0; i < n; ++i) {
    EXPECT_GE(out.x[i], o.margin - 1e-6);
    EXPECT_LE(out.x[i] + in.widths[i], out.width - o.margin + 1e-6);
    EXPECT_GE(out.y[i], o.margin - 1e-6);
    EXPECT_LE(out.y[i] + in.height, out.height - o.margin + 1e-6);
    EXPECT_DOUBLE_EQ(out.y[i], o.margin + out.layer[i] * (in.height + o.layer_gap));
  }
  // Forward edges go down at least one layer.
  for (const auto& [u, v] : in.edges) {
    if (u < v) {
      EXPECT_GT(out.layer[v], out.layer[u]) << u << " -> " << v;
    }
  }
  // No two boxes of a layer overlap; neighbours keep the gap.
  std::map<int, std::vector<int>> layers;
  for (size_t i = 0; i < n; ++i) layers[out.layer[i]].push_back(static_cast<int>(i));
  for (auto& [l, items] : layers) {
    std::sort(items.begin(), items.end(), [&](int a, int b) { return out.x[a] < out.x[b]; });
    for (size_t k = 1; k < items.size(); ++k) {
      int a = items[k - 1], b = items[k];
      EXPECT_GE(out.x[b] - (out.x[a] + in.widths[a]), o.node_gap - 1e-6)
          << "layer " << l << ": items " << a << " and " << b << " overlap";
    }
  }
  // Edges start at the source's bottom centre and end at the target's top centre.
  for (size_t k = 0; k < in.edges.size(); ++k) {
    auto [u, v] = in.edges[k];
    const std::vector<double>& p = out.edges[k];
    if (u == v) {
      EXPECT_TRUE(p.empty());
      continue;
    }
    ASSERT_GE(p.size(), 4u);
    EXPECT_NEAR(p[0], out.x[u] + in.widths[u] / 2, 1e-6);
    EXPECT_NEAR(p[1], out.y[u] + in.height, 1e-6);
    EXPECT_NEAR(p[p.size() - 2], out.x[v] + in.widths[v] / 2, 1e-6);
    EXPECT_NEAR(p[p.size() - 1], out.y[v], 1e-6);
  }
}

TEST(LayoutTest, RandomModelLikeGraphs) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    LayoutInput in = ModelLike(60 + seed * 7, seed);
    LayoutOptions o;
    Layout out = LayeredLayout(in, o);
    SCOPED_TRACE(seed);
    ExpectValidLayout(in, out, o);
    EXPECT_EQ(out.crossings, BruteForceCrossings(in, out));
  }
}

TEST(LayoutTest, ChainIsOneColumnWithoutCrossings) {
  LayoutInput in;
  for (int i = 0; i < 10; ++i) in.widths.push_back(50 + i);
  for (int i = 1; i < 10; ++i) in.edges.emplace_back(i - 1, i);
  Layout out = LayeredLayout(in);
  ExpectValidLayout(in, out, {});
  EXPECT_EQ(out.layers, 10);
  EXPECT_EQ(out.crossings, 0);
  EXPECT_EQ(out.dummies, 0);
  for (int i = 1; i < 10; ++i) {
    EXPECT_NEAR(out.x[i] + in.widths[i] / 2, out.x[0] + in.widths[0] / 2, 1e-6);  // aligned
  }
}

TEST(LayoutTest, SourcesSitRightAboveTheirFirstConsumer) {
  // A chain 0..5 and an input (item 6, index-wise late) used only by node 5... but given
  // first in item order as graphs list inputs first: item 0 is the input, used by item 6.
  LayoutInput in;
  in.widths.assign(7, 60);
  for (int i = 2; i < 7; ++i) in.edges.emplace_back(i - 1, i);
  in.edges.emplace_back(0, 6);
  Layout out = LayeredLayout(in);
  ExpectValidLayout(in, out, {});
  EXPECT_EQ(out.layer[0], out.layer[6] - 1);
  EXPECT_EQ(out.dummies, 0);
}

TEST(LayoutTest, LongEdgesBendAroundLayersWithinTheBudget) {
  LayoutInput in = ModelLike(300, 3);
  LayoutOptions o;
  Layout free = LayeredLayout(in, o);
  EXPECT_GT(free.dummies, 0);
  EXPECT_EQ(free.straight_long_edges, 0);
  o.max_dummies = 10;
  Layout tight = LayeredLayout(in, o);
  EXPECT_LE(tight.dummies, 10);
  EXPECT_GT(tight.straight_long_edges, 0);
  ExpectValidLayout(in, tight, o);
}

TEST(LayoutTest, BackEdgesAndSelfLoopsAreDrawnNotLayered) {
  LayoutInput in;
  in.widths.assign(3, 50);
  in.edges = {{0, 1}, {1, 2}, {2, 0}, {1, 1}};
  Layout out = LayeredLayout(in);
  ExpectValidLayout(in, out, {});
  EXPECT_EQ(out.edges[2].size(), 4u);  // straight, upward
  EXPECT_EQ(out.straight_long_edges, 1);
}

TEST(LayoutTest, EmptyAndEdgelessGraphs) {
  Layout empty = LayeredLayout({});
  EXPECT_EQ(empty.layers, 0);
  LayoutInput lonely;
  lonely.widths = {40, 50, 60};
  Layout out = LayeredLayout(lonely);
  ExpectValidLayout(lonely, out, {});
  EXPECT_EQ(out.layers, 1);
}

TEST(LayoutTest, FiveThousandNodesLayOut) {
  LayoutInput in = ModelLike(5000, 42);
  LayoutOptions o;
  Layout out = LayeredLayout(in, o);
  ExpectValidLayout(in, out, o);
  EXPECT_LE(out.dummies, 4 * 5000);
  // Barycenter ordering must beat the initial order by a wide margin on this shape.
  LayoutOptions unordered = o;
  unordered.order_sweeps = 0;
  EXPECT_LT(out.crossings, LayeredLayout(in, unordered).crossings);
}

TEST(LayoutDeathTest, EdgeEndpointOutOfRangeIsABug) {
  LayoutInput in;
  in.widths = {10};
  in.edges = {{0, 3}};
  EXPECT_DEATH(LayeredLayout(in), "out of range");
}

}  // namespace
}  // namespace coil::inspector
