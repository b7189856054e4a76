// DropReportWeights: every stage's large constants become references with the right length
// and hash, small ones and everything else stay, and bad bytes are an error.
#include "tools/coil/inspect_weights.h"

#include <string>

#include "gtest/gtest.h"
#include "ir/constant_refs.h"
#include "ir/proto/report.pb.h"

namespace coil::cli {
namespace {

proto::Constant* AddConstant(proto::Graph* g, int64_t id, std::string bytes) {
  proto::Constant* c = g->add_constants();
  c->mutable_value()->set_id(id);
  c->set_raw(std::move(bytes));
  return c;
}

TEST(InspectWeightsTest, LargeConstantsOfEveryStageBecomeReferences) {
  proto::CompileReport r;
  r.set_model("m");
  const std::string weight(4096, '\x7f'), other(100, '\x01'), small(8, '\x02');
  proto::Graph* import = r.add_stages()->mutable_graph();
  AddConstant(import, 1, weight);
  AddConstant(import, 2, small);
  proto::Graph* seg = r.add_stages()->mutable_capture()->add_graphs();
  AddConstant(seg, 3, other);
  proto::Graph* joint = r.add_stages()->mutable_autograd()->mutable_joint();
  AddConstant(joint, 4, weight);
  proto::Graph* sched = r.add_stages()->mutable_schedule()->mutable_graph();
  AddConstant(sched, 5, weight);
  proto::Graph* km = r.add_stages()->mutable_kernel_module()->mutable_schedule()->mutable_graph();
  AddConstant(km, 6, other);
  r.mutable_stages(4)->mutable_kernel_module()->set_backend("cpu");

  WeightsDropped d;
  absl::StatusOr<std::string> out = DropReportWeights(r.SerializeAsString(), &d);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(d.constants, 5);
  EXPECT_EQ(d.bytes, 3 * 4096 + 2 * 100);
  proto::CompileReport got;
  ASSERT_TRUE(got.ParseFromString(*out));
  EXPECT_EQ(got.model(), "m");
  EXPECT_EQ(got.stages(4).kernel_module().backend(), "cpu");
  const proto::Constant& w = got.stages(0).graph().constants(0);
  ASSERT_TRUE(w.has_by_reference());
  EXPECT_EQ(w.by_reference().length(), 4096);
  EXPECT_EQ(w.by_reference().hash(), RefOf(weight).hash());
  EXPECT_EQ(got.stages(0).graph().constants(1).raw(), small);  // under kWeightBytes
  EXPECT_TRUE(got.stages(1).capture().graphs(0).constants(0).has_by_reference());
  EXPECT_TRUE(got.stages(2).autograd().joint().constants(0).has_by_reference());
  EXPECT_TRUE(got.stages(3).schedule().graph().constants(0).has_by_reference());
  EXPECT_EQ(got.stages(4).kernel_module().schedule().graph().constants(0).by_reference().length(),
            100);
  EXPECT_LT(out->size(), 1000u);
}

TEST(InspectWeightsTest, BadBytesAreAnError) {
  absl::StatusOr<std::string> out = DropReportWeights("\xff\xff\xff", nullptr);
  EXPECT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("not a CompileReport"), std::string::npos);
}

}  // namespace
}  // namespace coil::cli
