// Constants by reference: dropped only when the store holds the same bytes, resolved back
// byte-identical, refused by Graph::FromProto until resolved, and clear errors for missing or
// mismatched bytes.
#include "ir/constant_refs.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/parser.h"

namespace coil {
namespace {

using ::testing::HasSubstr;

proto::Graph TwoWeights() {
  absl::StatusOr<Graph> g = ParseGraph(R"(graph @g(%0 "x": f32[2, 256]) {
  %1 "w": f32[256, 2] = constant dense ")" + std::string(4096, '1') + R"("
  %2 "b": f32[2] = constant dense "0000803f00000040"
  %3: f32[2, 2] = aten.mm(%0, %1)
  %4: f32[2, 2] = aten.add(%3, %2)
  return %4
})");
  EXPECT_TRUE(g.ok()) << g.status();
  return g->ToProto();
}

TEST(ConstantRefsTest, KnownLargeConstantsBecomeReferencesAndResolveBack) {
  const proto::Graph original = TwoWeights();
  ConstantStore store;
  store.AddGraph(original);
  EXPECT_EQ(store.size(), 2u);
  proto::Graph g = original;
  EXPECT_EQ(ReferenceKnownConstants(g, store), 2048);  // "w" only: "b" is under min_bytes
  EXPECT_TRUE(HasConstantReferences(g));
  EXPECT_EQ(g.constants(0).data_case(), proto::Constant::kByReference);
  EXPECT_EQ(g.constants(1).data_case(), proto::Constant::kRaw);
  EXPECT_LT(g.ByteSizeLong() + 2000, original.ByteSizeLong());

  absl::StatusOr<Graph> refused = Graph::FromProto(g);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("is stored by reference"));

  ASSERT_TRUE(ResolveConstantReferences(g, store).ok());
  EXPECT_FALSE(HasConstantReferences(g));
  EXPECT_EQ(g.SerializeAsString(), original.SerializeAsString());
}

TEST(ConstantRefsTest, LentBytesMoveOnceAndCanBeReturned) {
  absl::StatusOr<Graph> holder = Graph::FromProto(TwoWeights());
  ASSERT_TRUE(holder.ok());
  const proto::Graph original = TwoWeights();
  ConstantStore digests;
  digests.AddGraph(original);
  proto::Graph a = original, b = original;
  ReferenceKnownConstants(a, digests);
  ReferenceKnownConstants(b, digests);
  ConstantStore lent;
  lent.AddGraphToMove(*holder);
  ASSERT_TRUE(ResolveConstantReferences(a, lent).ok());
  EXPECT_EQ(holder->constants()[0]->constant().raw, "");  // moved into `a`
  ASSERT_TRUE(ResolveConstantReferences(b, lent).ok());   // copied from `a`
  EXPECT_EQ(a.SerializeAsString(), original.SerializeAsString());
  EXPECT_EQ(b.SerializeAsString(), original.SerializeAsString());
  lent.ReturnMoved();
  EXPECT_EQ(holder->constants()[0]->constant().raw.size(), 2048u);
  EXPECT_EQ(holder->ToProto().SerializeAsString(), original.SerializeAsString());
}

TEST(ConstantRefsTest, AFailedResolutionChangesNothing) {
  const proto::Graph original = TwoWeights();
  ConstantStore digests;
  digests.AddGraph(original);
  proto::Graph g = original;
  ReferenceKnownConstants(g, digests);
  // A second, unknown reference after the known one.
  proto::Constant* extra = g.add_constants();
  *extra = g.constants(0);
  extra->mutable_value()->set_id(99);
  std::string other(2048, '\x05');
  *extra->mutable_by_reference() = RefOf(other);
  absl::StatusOr<Graph> holder = Graph::FromProto(TwoWeights());
  ASSERT_TRUE(holder.ok());
  ConstantStore lent;
  lent.AddGraphToMove(*holder);
  EXPECT_FALSE(ResolveConstantReferences(g, lent).ok());
  EXPECT_EQ(holder->constants()[0]->constant().raw.size(), 2048u);  // nothing moved
  EXPECT_EQ(g.constants(0).data_case(), proto::Constant::kByReference);
}

TEST(ConstantRefsTest, UnknownBytesStayRaw) {
  proto::Graph g = TwoWeights();
  ConstantStore other;
  std::string different(2048, '\x02');
  other.AddBytes(different);
  EXPECT_EQ(ReferenceKnownConstants(g, other), 0);
  EXPECT_FALSE(HasConstantReferences(g));
}

TEST(ConstantRefsTest, MissingOrMismatchedBytesAreDataLoss) {
  const proto::Graph original = TwoWeights();
  ConstantStore store;
  store.AddGraph(original);
  proto::Graph g = original;
  ReferenceKnownConstants(g, store);
  ConstantStore empty;
  absl::Status s = ResolveConstantReferences(g, empty);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("constant %1 \"w\" is stored by reference (2048 bytes)"));

  // A reference whose bytes exist but do not fit the constant's type.
  std::string small(16, '\x03');
  ConstantStore wrong;
  wrong.AddBytes(small);
  proto::Graph h = original;
  *h.mutable_constants(0)->mutable_by_reference() = RefOf(small);
  s = ResolveConstantReferences(h, wrong);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("refers to 16 bytes; its type needs 2048"));
  // A malformed hash is simply not found.
  h.mutable_constants(0)->mutable_by_reference()->set_hash("short");
  EXPECT_FALSE(ResolveConstantReferences(h, wrong).ok());
}

}  // namespace
}  // namespace coil
