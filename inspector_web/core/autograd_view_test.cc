// The autograd stages' saved values, on an AutogradResult made as the training compile makes
// it (tools/driver/training.cc: autograd's joint graph and min-cut partition of a real graph):
// the joint graph marks the nodes defining saved ids, the forward graph the nodes (or inputs)
// it returns for the backward, the backward graph the inputs it receives them in. Checked
// against the partition's own list of saved values (their types, in order), not against the
// positions the inspector reads.
#include <algorithm>
#include <string>
#include <vector>

#include "autograd/joint_graph.h"
#include "autograd/partition.h"
#include "gtest/gtest.h"
#include "inspector_web/core/format.h"
#include "inspector_web/core/inspector.h"
#include "inspector_web/testing/json_value.h"
#include "ir/graph.h"
#include "ir/parser.h"

namespace coil::inspector {
namespace {

using testing::JsonValue;
using testing::ParseJson;

const char kMlp[] = R"(graph @mlp(%0 "x": f32[4, 8], %1 "w1": f32[16, 8], %2 "w2": f32[2, 16]) {
  %3: f32[4, 16] = aten.linear(%0, %1) name "fc1"
  %4: f32[4, 16] = aten.tanh(%3) name "act"
  %5: f32[4, 2] = aten.linear(%4, %2) name "fc2"
  %6: f32[4, 2] = aten.mul(%5, %5) name "sq"
  %7: f32[] = aten.sum(%6) {dim = [], dtype = none, keepdim = false} name "loss"
  return %7
}
)";

std::vector<std::string> Types(const JsonValue& stage, const std::string& key, bool nodes) {
  std::vector<std::string> out;
  const JsonValue& g = stage["graph"];
  for (const JsonValue& i : stage["autograd"][key].array()) {
    out.push_back(nodes ? "node" : g["inputs"][i.integer()]["type"].str());
  }
  return out;
}

TEST(AutogradViewTest, SavedValuesAreMarkedOnJointForwardAndBackward) {
  absl::StatusOr<Graph> forward = ParseGraph(kMlp);
  ASSERT_TRUE(forward.ok()) << forward.status();
  absl::StatusOr<autograd::JointGraph> joint =
      autograd::BuildJointGraph(*forward, {false, true, true});
  ASSERT_TRUE(joint.ok()) << joint.status();
  absl::StatusOr<autograd::Partition> p = autograd::PartitionJoint(*joint, {});
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_GE(p->saved.size(), 2u);

  proto::CompileReport report;
  proto::StageArtifact* a = report.add_stages();
  a->set_stage("autograd");
  proto::AutogradResult* ag = a->mutable_autograd();
  for (const autograd::SavedValue& v : p->saved) ag->add_saved_values(v.value_id);
  ag->set_saved_bytes(p->saved_bytes);
  *ag->mutable_joint() = joint->graph.ToProto();
  *ag->mutable_forward() = p->forward.ToProto();
  *ag->mutable_backward() = p->backward.ToProto();
  Inspector inspector;
  ASSERT_TRUE(ParseJson(inspector.Open(report.SerializeAsString(), "report.pb"))["ok"].boolean());

  // The saved values' types, in the partition's order.
  std::vector<std::string> want;
  int primals = 0;
  for (const autograd::SavedValue& v : p->saved) {
    want.push_back(FormatType(v.type.ToProto()));
    primals += v.is_primal ? 1 : 0;
  }
  // Backward: its first inputs, one per saved value, of the saved types.
  JsonValue backward = ParseJson(inspector.StageJson(2));
  ASSERT_EQ(backward["key"].str(), "autograd.backward");
  EXPECT_EQ(Types(backward, "saved_inputs", false), want);
  // Forward: every saved value the forward computes is a marked node; saved primals are
  // marked inputs.
  JsonValue fw = ParseJson(inspector.StageJson(1));
  ASSERT_EQ(fw["key"].str(), "autograd.forward");
  std::vector<std::string> marked;
  for (const JsonValue& i : fw["autograd"]["saved_nodes"].array()) {
    // The node's first output's type, from the forward proto.
    marked.push_back(FormatType(ag->forward().nodes(i.integer()).outputs(0).type()));
  }
  for (const JsonValue& i : fw["autograd"]["saved_inputs"].array()) {
    marked.push_back(fw["graph"]["inputs"][i.integer()]["type"].str());
  }
  std::vector<std::string> sorted_want = want, sorted_marked = marked;
  std::sort(sorted_want.begin(), sorted_want.end());
  std::sort(sorted_marked.begin(), sorted_marked.end());
  EXPECT_EQ(sorted_marked, sorted_want);
  EXPECT_EQ(static_cast<int>(fw["autograd"]["saved_inputs"].size()), primals);
  // Joint: as many marks as saved values (each defined by one node or input).
  JsonValue jt = ParseJson(inspector.StageJson(0));
  EXPECT_EQ(jt["autograd"]["saved_nodes"].size() + jt["autograd"]["saved_inputs"].size(),
            p->saved.size());
}

}  // namespace
}  // namespace coil::inspector
