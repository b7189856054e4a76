// Inspector end to end on a report made by coil's pipeline (aten graph -> prims::Decompose ->
// inductor::BuildSchedule): the overview, every stage's JSON checked against the protos it
// came from, fusion groups against the kernels' provenance, buffer liveness against a
// recomputation from the kernels' loop bodies, diffs, and bad input.
#include "inspector_web/core/inspector.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "inspector_web/core/format.h"
#include "inspector_web/testing/json_value.h"
#include "inspector_web/testing/test_report.h"

namespace coil::inspector {
namespace {

using testing::JsonValue;
using testing::ParseJson;

class InspectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    report_ = testing::MakeTestReport();
    overview_ = ParseJson(inspector_.Open(report_.SerializeAsString(), "report.pb"));
    ASSERT_TRUE(overview_["ok"].boolean());
  }
  JsonValue Stage(int i) { return ParseJson(inspector_.StageJson(i)); }
  int StageIndex(const std::string& key) {
    for (size_t i = 0; i < overview_["stages"].size(); ++i) {
      if (overview_["stages"][i]["key"].str() == key) return static_cast<int>(i);
    }
    ADD_FAILURE() << "no stage " << key;
    return 0;
  }

  proto::CompileReport report_;
  Inspector inspector_;
  JsonValue overview_;
};

TEST_F(InspectorTest, OverviewListsOneStagePerGraph) {
  EXPECT_EQ(overview_["kind"].str(), "CompileReport");
  EXPECT_EQ(overview_["model"].str(), report_.model());
  std::vector<std::string> keys;
  for (const JsonValue& s : overview_["stages"].array()) keys.push_back(s["key"].str());
  EXPECT_EQ(keys, (std::vector<std::string>{"capture.0", "capture.1", "import", "autograd.joint",
                                            "autograd.forward", "autograd.backward", "prims",
                                            "inductor", "codegen_cpu"}));
  const proto::CaptureResult& c = report_.stages(0).capture();
  const int want[] = {c.graphs(0).nodes_size(),
                      c.graphs(1).nodes_size(),
                      report_.stages(1).graph().nodes_size(),
                      report_.stages(2).autograd().joint().nodes_size(),
                      report_.stages(2).autograd().forward().nodes_size(),
                      report_.stages(2).autograd().backward().nodes_size(),
                      report_.stages(3).graph().nodes_size(),
                      report_.stages(4).schedule().graph().nodes_size(),
                      report_.stages(5).kernel_module().schedule().graph().nodes_size()};
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(overview_["stages"][i]["node_count"].integer(), want[i]) << keys[i];
  }
  EXPECT_EQ(overview_["timings"].size(), static_cast<size_t>(report_.timings_size()));
  EXPECT_EQ(overview_["logs"][0]["channel"].str(), "graph_breaks");
  EXPECT_EQ(overview_["options"].size(), 2u);
}

TEST_F(InspectorTest, EveryStageGraphMatchesItsProto) {
  for (size_t i = 0; i < overview_["stages"].size(); ++i) {
    JsonValue s = Stage(static_cast<int>(i));
    const std::string key = s["key"].str();
    SCOPED_TRACE(key);
    const JsonValue& g = s["graph"];
    const int n = static_cast<int>(g["node_count"].integer());
    ASSERT_EQ(g["nodes"].size(), static_cast<size_t>(n));
    EXPECT_EQ(n, overview_["stages"][i]["node_count"].integer());
    EXPECT_EQ(g["layout"]["boxes"].size(), 4 * (g["inputs"].size() + n));
    std::set<std::string> ids;
    int64_t ops_total = 0;
    for (const JsonValue& op : s["summary"]["ops"].array()) ops_total += op[1].integer();
    EXPECT_EQ(ops_total, n);
    for (const JsonValue& node : g["nodes"].array()) {
      EXPECT_TRUE(ids.insert(node["id"].str()).second) << "duplicate id " << node["id"].str();
    }
  }
  // Node details against the prims graph's protos.
  const int prims = StageIndex("prims");
  const proto::Graph& graph = report_.stages(3).graph();
  JsonValue stage = Stage(prims);
  for (int i = 0; i < graph.nodes_size(); ++i) {
    const proto::Node& n = graph.nodes(i);
    EXPECT_EQ(stage["graph"]["nodes"][i]["op"].str(), n.op());
    JsonValue details = ParseJson(inspector_.NodeJson(prims, i));
    ASSERT_TRUE(details["ok"].boolean());
    const JsonValue& j = details["node"];
    EXPECT_EQ(j["op"].str(), n.op());
    EXPECT_EQ(j["id"].str(), stage["graph"]["nodes"][i]["id"].str());
    ASSERT_EQ(j["inputs"].size(), static_cast<size_t>(n.inputs_size()));
    for (int k = 0; k < n.inputs_size(); ++k) {
      const JsonValue& in = j["inputs"][k];
      EXPECT_EQ(in["value"].integer(), n.inputs(k));
      if (in["def"].str() == "node") {
        const proto::Node& producer = graph.nodes(static_cast<int>(in["node"].integer()));
        bool produces = false;
        for (const proto::Value& v : producer.outputs()) produces |= v.id() == n.inputs(k);
        EXPECT_TRUE(produces);
      }
    }
    ASSERT_EQ(j["outputs"].size(), static_cast<size_t>(n.outputs_size()));
    for (int k = 0; k < n.outputs_size(); ++k) {
      EXPECT_EQ(j["outputs"][k]["type"].str(), FormatType(n.outputs(k).type()));
    }
    EXPECT_EQ(j["attrs"].size(), static_cast<size_t>(n.attrs_size()));
    EXPECT_EQ(j["loc"].str(), FormatLoc(n.loc()));
    // Users read one of this node's outputs.
    for (const JsonValue& u : j["users"].array()) {
      const proto::Node& user = graph.nodes(static_cast<int>(u["node"].integer()));
      bool reads = false;
      for (int64_t id : user.inputs()) {
        for (const proto::Value& v : n.outputs()) reads |= v.id() == id;
      }
      EXPECT_TRUE(reads) << user.op();
    }
  }
  EXPECT_FALSE(ParseJson(inspector_.NodeJson(prims, graph.nodes_size()))["ok"].boolean());
  EXPECT_FALSE(ParseJson(inspector_.NodeJson(-1, 0))["ok"].boolean());
}

TEST_F(InspectorTest, NodeIdsAreUniqueNamesElseIndices) {
  JsonValue import = Stage(StageIndex("import"));
  EXPECT_EQ(import["graph"]["nodes"][0]["id"].str(), "ln");
  EXPECT_EQ(import["graph"]["nodes"][1]["id"].str(), "fc");
  EXPECT_EQ(import["graph"]["nodes"][2]["id"].str(), "n2");
  // Shared names fall back to indices; a name that looks like an index keeps it.
  proto::Graph g = report_.stages(1).graph();
  g.mutable_nodes(0)->set_name("n2");
  g.mutable_nodes(1)->set_name("dup");
  g.mutable_nodes(3)->set_name("dup");
  Inspector insp;
  ASSERT_TRUE(ParseJson(insp.Open(g.SerializeAsString(), "g.pb"))["ok"].boolean());
  JsonValue s = ParseJson(insp.StageJson(0));
  EXPECT_EQ(s["graph"]["nodes"][0]["id"].str(), "n2");
  EXPECT_EQ(s["graph"]["nodes"][1]["id"].str(), "n1");
  EXPECT_EQ(s["graph"]["nodes"][2]["id"].str(), "n2_");
  EXPECT_EQ(s["graph"]["nodes"][3]["id"].str(), "n3");
}

TEST_F(InspectorTest, CaptureShowsBreaksGuardsAndRecompiles) {
  JsonValue c0 = Stage(StageIndex("capture.0"));
  const JsonValue& c = c0["capture"];
  EXPECT_EQ(c["graphs"].integer(), 2);
  ASSERT_EQ(c["breaks"].size(), 1u);
  EXPECT_EQ(c["breaks"][0]["reason"].str(), "data-dependent read: Tensor::item()");
  EXPECT_EQ(c["breaks"][0]["loc"].str(), "model.py:14:0 in forward");
  EXPECT_EQ(c["guards"][0]["text"].str(), "s0 <= 64");
  EXPECT_EQ(c["recompiles"][0]["count"].integer(), 2);
  EXPECT_EQ(c["compile"].integer(), 2);  // the graphs are the second compile's
  EXPECT_EQ(c0["graph"]["guards"][0]["reason"].str(), "batch limit");
  EXPECT_EQ(Stage(StageIndex("capture.1"))["capture"]["index"].integer(), 1);
}

TEST_F(InspectorTest, SavedTensorsAreMarkedOnTheJointGraph) {
  JsonValue joint = Stage(StageIndex("autograd.joint"));
  const JsonValue& a = joint["autograd"];
  // Saved %5 (node 0, the layer norm), %6 (node 1, the linear) and input %0.
  std::vector<int64_t> nodes, inputs;
  for (const JsonValue& v : a["saved_nodes"].array()) nodes.push_back(v.integer());
  for (const JsonValue& v : a["saved_inputs"].array()) inputs.push_back(v.integer());
  EXPECT_EQ(nodes, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(inputs, (std::vector<int64_t>{0}));
  EXPECT_EQ(a["saved_values"][0]["type"].str(), "f32[s0, 8, 16]");
  EXPECT_TRUE(
      ParseJson(inspector_.NodeJson(StageIndex("autograd.joint"), 0))["node"]["saved"].boolean());
  EXPECT_FALSE(
      ParseJson(inspector_.NodeJson(StageIndex("autograd.joint"), 2))["node"]["saved"].boolean());
  EXPECT_EQ(Stage(StageIndex("autograd.forward"))["autograd"]["saved_nodes"].size(), 0u);
}

TEST_F(InspectorTest, DiffShowsWhatDecompositionRemovedAndAdded) {
  JsonValue d = ParseJson(inspector_.DiffJson(StageIndex("import"), StageIndex("prims")));
  ASSERT_TRUE(d["ok"].boolean());
  std::set<std::string> removed, added;
  for (const JsonValue& op : d["diff"]["removed"].array()) removed.insert(op.str());
  for (const JsonValue& op : d["diff"]["added"].array()) added.insert(op.str());
  EXPECT_TRUE(removed.count("aten.softmax") && removed.count("aten.layer_norm"));
  EXPECT_TRUE(added.count("prims.exp") && added.count("prims.rsqrt"));
  // The stage JSON carries the diff against the previous stage too.
  JsonValue prims = Stage(StageIndex("prims"));
  EXPECT_EQ(prims["previous"].integer(), StageIndex("prims") - 1);
  EXPECT_TRUE(prims.has("diff"));
  EXPECT_FALSE(Stage(0).has("diff"));
}

// Buffers touched by a kernel, read from its loop bodies and extern operands (not from the
// reads/writes lists the inspector uses).
std::set<int32_t> TouchedByBody(const proto::Kernel& k) {
  std::set<int32_t> ids;
  for (const proto::Loop& loop : k.loops()) {
    for (const proto::Expr& e : loop.body()) {
      if (e.kind() == proto::Expr::LOAD || e.kind() == proto::Expr::STORE) ids.insert(e.buffer());
    }
  }
  for (int32_t id : k.extern_inputs()) ids.insert(id);
  if (k.extern_output() != 0) ids.insert(k.extern_output());
  return ids;
}

TEST_F(InspectorTest, ScheduleFusionGroupsAndLiveness) {
  JsonValue s = Stage(StageIndex("inductor"));
  const proto::Schedule& schedule = report_.stages(4).schedule();
  const JsonValue& sj = s["schedule"];
  ASSERT_EQ(sj["kernels"].size(), static_cast<size_t>(schedule.kernels_size()));
  // node_kernel: every node listed by a kernel maps to a kernel listing it; colours differ.
  std::set<std::string> colours;
  for (int k = 0; k < schedule.kernels_size(); ++k) {
    const JsonValue& kj = sj["kernels"][k];
    colours.insert(kj["colour"].str());
    std::set<int64_t> provenance(schedule.kernels(k).source_values().begin(),
                                 schedule.kernels(k).source_values().end());
    for (const JsonValue& node : kj["nodes"].array()) {
      const proto::Node& n = schedule.graph().nodes(static_cast<int>(node.integer()));
      EXPECT_TRUE(provenance.count(n.outputs(0).id())) << n.op();
      int64_t first = sj["node_kernel"][node.integer()].integer();
      EXPECT_GE(first, 0);
      EXPECT_LE(first, k);
    }
  }
  EXPECT_EQ(colours.size(), static_cast<size_t>(schedule.kernels_size()));
  int fused = 0;
  for (size_t i = 0; i < sj["node_kernel"].size(); ++i) {
    int64_t k = sj["node_kernel"][i].integer();
    fused += k >= 0;
    // The details panel names the same kernel.
    JsonValue details = ParseJson(inspector_.NodeJson(StageIndex("inductor"), static_cast<int>(i)));
    const JsonValue& kernel = details["node"]["kernel"];
    if (k < 0) {
      EXPECT_TRUE(kernel.is_null());
    } else {
      EXPECT_EQ(kernel["index"].integer(), k);
      EXPECT_EQ(kernel["colour"].str(), sj["kernels"][k]["colour"].str());
    }
  }
  EXPECT_GT(fused, 0);
  // Liveness against the loop bodies.
  std::map<int32_t, std::pair<int, int>> live;
  for (int k = 0; k < schedule.kernels_size(); ++k) {
    for (int32_t id : TouchedByBody(schedule.kernels(k))) {
      auto [it, fresh] = live.emplace(id, std::make_pair(k, k));
      if (!fresh) it->second.second = k;
    }
  }
  int intermediates = 0;
  for (int i = 0; i < schedule.buffers_size(); ++i) {
    const proto::Buffer& b = schedule.buffers(i);
    const JsonValue& bj = sj["buffers"][i];
    auto it = live.find(b.id());
    EXPECT_EQ(bj["first"].integer(), it == live.end() ? -1 : it->second.first) << b.name();
    EXPECT_EQ(bj["last"].integer(), it == live.end() ? -1 : it->second.second) << b.name();
    if (b.kind() == proto::Buffer::INTERMEDIATE) {
      ++intermediates;
      EXPECT_FALSE(bj["offset_hint"].is_null()) << b.name();
      EXPECT_FALSE(bj["size_hint"].is_null()) << b.name();
    }
  }
  EXPECT_GT(intermediates, 0);
  EXPECT_EQ(sj["memory_plan"]["arena_bytes_hint"].integer(),
            schedule.memory_plan().arena_bytes_hint());
}

TEST_F(InspectorTest, KernelModuleSourcesWithTokens) {
  JsonValue s = Stage(StageIndex("codegen_cpu"));
  const JsonValue& km = s["kernel_module"];
  EXPECT_EQ(km["backend"].str(), "cpu");
  EXPECT_EQ(km["language"].str(), "llvm");
  EXPECT_EQ(km["object_bytes"].integer(), 1024);
  const proto::KernelModule& module = report_.stages(5).kernel_module();
  ASSERT_EQ(km["kernels"].size(), static_cast<size_t>(module.kernels_size()));
  for (int k = 0; k < module.kernels_size(); ++k) {
    EXPECT_EQ(km["kernels"][k]["source"].str(), module.kernels(k).source());
    EXPECT_EQ(km["kernels"][k]["kernel_index"].integer(), k);
    EXPECT_GT(km["kernels"][k]["tokens"].size(), 10u);
    EXPECT_EQ(km["kernels"][k]["tokens"].size() % 3, 0u);
  }
  EXPECT_EQ(km["wrapper"]["symbol"].str(), "coil_main");
  EXPECT_TRUE(s.has("schedule"));  // a module's stage shows its schedule too
}

TEST_F(InspectorTest, BadInputIsAnErrorDocument) {
  std::string bytes = report_.SerializeAsString();
  Inspector insp;
  JsonValue cut = ParseJson(insp.Open(bytes.substr(0, 1234), "report.pb"));
  EXPECT_FALSE(cut["ok"].boolean());
  EXPECT_EQ(cut["error"].str().rfind("report.pb: not a coil protobuf (truncated at byte ", 0), 0u)
      << cut["error"].str();
  EXPECT_TRUE(insp.stages().empty());
  JsonValue none = ParseJson(insp.StageJson(0));
  EXPECT_FALSE(none["ok"].boolean());
  EXPECT_EQ(none["error"].str(), "no stage 0 (the file has 0)");
  EXPECT_FALSE(ParseJson(inspector_.StageJson(99))["ok"].boolean());
  EXPECT_FALSE(ParseJson(inspector_.DiffJson(0, -1))["ok"].boolean());
}

TEST_F(InspectorTest, BrokenGraphIsStillDrawnWithItsProblemsListed) {
  proto::Graph g = report_.stages(1).graph();
  g.mutable_nodes(2)->set_inputs(0, 999);  // an undefined value
  g.add_outputs(1000);
  Inspector insp;
  ASSERT_TRUE(ParseJson(insp.Open(g.SerializeAsString(), "broken.pb"))["ok"].boolean());
  JsonValue s = ParseJson(insp.StageJson(0));
  const JsonValue& problems = s["graph"]["problems"];
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].str(), "node 2 (aten.gelu) reads undefined value %999");
  EXPECT_EQ(problems[1].str(), "graph output %1000 is undefined");
  JsonValue gelu = ParseJson(insp.NodeJson(0, 2))["node"];
  EXPECT_EQ(gelu["inputs"][0]["def"].str(), "undefined");
  EXPECT_EQ(gelu["inputs"][0]["type"].str(), "?");
  EXPECT_EQ(s["graph"]["node_count"].integer(), g.nodes_size());
}

}  // namespace
}  // namespace coil::inspector
