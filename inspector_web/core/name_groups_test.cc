// Name path groups (name_groups.h) and the collapsed views the page draws from them: the
// group tree against names split by hand, the default collapse of a large graph against its
// budget, and a collapsed view's edges against a brute-force mapping of every graph edge.
#include "inspector_web/core/name_groups.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "inspector_web/core/graph_index.h"
#include "inspector_web/core/graph_json.h"
#include "inspector_web/core/json_writer.h"
#include "inspector_web/testing/json_value.h"

namespace coil::inspector {
namespace {

using testing::JsonValue;
using testing::ParseJson;

// A graph whose node k is named names[k] and reads the values listed in reads[k] (-1: the
// graph input); node k defines value k + 1, the input is value 0.
proto::Graph MakeGraph(const std::vector<std::string>& names,
                       const std::vector<std::vector<int>>& reads) {
  proto::Graph g;
  g.add_inputs()->set_id(0);
  g.mutable_inputs(0)->set_name("x");
  for (size_t k = 0; k < names.size(); ++k) {
    proto::Node* n = g.add_nodes();
    n->set_op("aten.add");
    n->set_name(names[k]);
    for (int r : reads[k]) n->add_inputs(r + 1);
    n->add_outputs()->set_id(static_cast<int64_t>(k) + 1);
  }
  return g;
}

std::vector<std::string> Paths(const NameGroups& groups) {
  std::vector<std::string> out;
  for (const NameGroup& g : groups.groups) out.push_back(g.path);
  return out;
}

TEST(NameGroupsTest, OnnxPathsSplitAtSlashesAndSharedNamesAreGroups) {
  // Two prims made from one ONNX node share its name: that name is a group too.
  proto::Graph g = MakeGraph({"/blocks.0/attn/MatMul", "/blocks.0/attn/MatMul", "/blocks.0/ln1/Add",
                              "/blocks.1/attn/Softmax", "", "/blocks.1/mlp/Relu"},
                             {{-1}, {0}, {1}, {2}, {3}, {4}});
  NameGroups groups = BuildNameGroups(g);
  EXPECT_EQ(Paths(groups), (std::vector<std::string>{"/blocks.0", "/blocks.0/attn",
                                                      "/blocks.0/attn/MatMul", "/blocks.1"}));
  EXPECT_EQ(groups.groups[0].nodes, 3);
  EXPECT_EQ(groups.groups[1].parent, 0);
  EXPECT_EQ(groups.groups[2].parent, 1);
  EXPECT_EQ(groups.groups[2].depth, 2);
  EXPECT_EQ(groups.groups[3].parent, -1);
  EXPECT_EQ(groups.groups[3].first_node, 3);
  EXPECT_EQ(groups.groups[2].label, "MatMul (2)");
  // Innermost groups: /blocks.0/ln1 has one node, so Add sits in /blocks.0 directly.
  EXPECT_EQ(groups.node_group, (std::vector<int>{2, 2, 0, 3, -1, 3}));
}

TEST(NameGroupsTest, ModulePathsSplitAtDots) {
  proto::Graph g = MakeGraph({"layers.3.attn.q_proj", "layers.3.attn.k_proj", "layers.3.mlp", "head"},
                             {{-1}, {-1}, {0, 1}, {2}});
  NameGroups groups = BuildNameGroups(g);
  EXPECT_EQ(Paths(groups), (std::vector<std::string>{"layers", "layers.3", "layers.3.attn"}));
  EXPECT_EQ(groups.node_group, (std::vector<int>{2, 2, 1, -1}));
}

// `layers` blocks of `per_block` nodes in a chain, each block in two sub-modules.
proto::Graph ChainOfBlocks(int layers, int per_block) {
  std::vector<std::string> names;
  std::vector<std::vector<int>> reads;
  for (int l = 0; l < layers; ++l) {
    for (int k = 0; k < per_block; ++k) {
      names.push_back("/layers." + std::to_string(l) + (k < per_block / 2 ? "/attn/op" : "/mlp/op") +
                      std::to_string(k));
      const int i = static_cast<int>(reads.size());
      reads.push_back(i == 0 ? std::vector<int>{-1} : std::vector<int>{i - 1});
    }
  }
  return MakeGraph(names, reads);
}

TEST(NameGroupsTest, SmallGraphsOpenExpandedLargeOnesOnTheirTopModules) {
  proto::Graph small = ChainOfBlocks(4, 100);  // 400 nodes: at the threshold
  NameGroups sg = BuildNameGroups(small);
  for (bool c : DefaultCollapsed(sg, 1, small.nodes_size())) EXPECT_FALSE(c);

  proto::Graph large = ChainOfBlocks(12, 200);  // 2,400 nodes, 12 blocks of 2 modules
  NameGroups groups = BuildNameGroups(large);
  std::vector<bool> collapsed = DefaultCollapsed(groups, 1, large.nodes_size());
  GroupView view = MakeGroupView(groups, collapsed, 1, large.nodes_size());
  EXPECT_TRUE(view.any_collapsed);
  EXPECT_LE(view.items.size(), static_cast<size_t>(kTargetItems));
  // Greedy and maximal: the 12 blocks open into their 24 modules; opening any module (100
  // nodes) would pass the budget.
  EXPECT_EQ(view.items.size(), 1u + 24u);
  for (size_t g = 0; g < groups.groups.size(); ++g) {
    EXPECT_EQ(collapsed[g], groups.groups[g].depth == 1) << groups.groups[g].path;
  }
}

TEST(NameGroupsTest, ParseCollapsedIgnoresIndicesOutOfRange) {
  proto::Graph g = ChainOfBlocks(2, 4);
  NameGroups groups = BuildNameGroups(g);
  std::vector<bool> set = ParseCollapsed("1,x,99,-2,,0", groups, 1, g.nodes_size());
  std::vector<bool> want(groups.groups.size(), false);
  want[0] = want[1] = true;
  EXPECT_EQ(set, want);
}

// A collapsed view's edges are exactly the graph's edges mapped to the items showing their
// ends, without those inside one item, once per pair; every node maps to the outermost
// collapsed group holding it.
TEST(NameGroupsTest, CollapsedViewEdgesAreTheGroupsEdgesToTheOutside) {
  // Two blocks; a skip edge from block 0 into block 1's mlp and one from the input.
  proto::Graph g = MakeGraph(
      {"/b.0/attn/q", "/b.0/attn/k", "/b.0/mlp/fc", "/b.0/mlp/act", "/b.1/attn/q", "/b.1/attn/k",
       "/b.1/mlp/fc", "/b.1/mlp/act", "head"},
      {{-1}, {0, -1}, {1}, {2, 0}, {3}, {4, 3}, {5, -1}, {6, 1}, {7}});
  NameGroups groups = BuildNameGroups(g);
  auto index_of = [&](const std::string& path) {
    for (size_t k = 0; k < groups.groups.size(); ++k) {
      if (groups.groups[k].path == path) return static_cast<int>(k);
    }
    ADD_FAILURE() << path;
    return -1;
  };
  std::vector<bool> collapsed(groups.groups.size(), false);
  collapsed[index_of("/b.0")] = true;
  collapsed[index_of("/b.0/mlp")] = true;  // inside a collapsed group: b.0 shows
  collapsed[index_of("/b.1/mlp")] = true;
  const int N = g.nodes_size();
  GroupView view = MakeGroupView(groups, collapsed, 1, N);
  // Items: x, b.0, b.1/attn/q, b.1/attn/k, b.1/mlp, head.
  const int b0 = 1 + N + index_of("/b.0"), b1mlp = 1 + N + index_of("/b.1/mlp");
  EXPECT_EQ(view.items, (std::vector<int>{0, b0, 1 + 4, 1 + 5, b1mlp, 1 + 8}));
  EXPECT_EQ(view.item_of_node, (std::vector<int>{1, 1, 1, 1, 2, 3, 4, 4, 5}));

  GraphIndex index(g);
  JsonWriter w;
  w.BeginObject();
  WriteViewLayout(index, groups, view, w);
  w.EndObject();
  JsonValue layout = ParseJson(w.Take())["layout"];
  ASSERT_EQ(layout["boxes"].size(), 4 * view.items.size());
  ASSERT_EQ(layout["items"].size(), view.items.size());
  std::set<std::pair<int, int>> got, want;
  for (const JsonValue& e : layout["edges"].array()) {
    EXPECT_TRUE(got.emplace(e[0].integer(), e[1].integer()).second) << "edge drawn twice";
  }
  for (int i = 0; i < N; ++i) {
    for (int64_t v : g.nodes(i).inputs()) {
      const int from = v == 0 ? 0 : view.item_of_node[v - 1], to = view.item_of_node[i];
      if (from != to) want.emplace(from, to);
    }
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(want.size(), 8u);  // x->b0, b0->q1, b0->k1, q1->k1, k1->mlp1, x->mlp1, b0->mlp1, mlp1->head
}

}  // namespace
}  // namespace coil::inspector
