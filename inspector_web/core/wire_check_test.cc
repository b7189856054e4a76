// CheckWire against protobuf's own parser (the full runtime) as the oracle: on every prefix
// of a real report and on thousands of corrupted copies, bytes the runtime rejects must be
// rejected, and bytes the checker accepts must parse. The one documented difference: a known
// field with the wrong wire type is an error here (protobuf keeps it as an unknown field).
#include "inspector_web/core/wire_check.h"

#include <random>
#include <string>

#include "google/protobuf/stubs/common.h"
#include "gtest/gtest.h"
#include "inspector_web/core/schema.h"
#include "inspector_web/testing/test_report.h"
#include "ir/proto/report.pb.h"

namespace coil::inspector {
namespace {

const MessageSchema& Message(const char* name) {
  const MessageSchema* m = CoilSchema().Find(std::string("coil.proto.") + name);
  if (m == nullptr) std::abort();
  return *m;
}

// The checker's verdict agrees with protobuf's, up to the documented difference.
void ExpectAgreesWithProtobuf(const std::string& bytes, const std::string& what) {
  proto::CompileReport parsed;
  bool protobuf_ok = parsed.ParseFromString(bytes);
  WireCheck c = CheckWire(Message("CompileReport"), bytes);
  if (c.ok) {
    EXPECT_TRUE(protobuf_ok) << what << ": the checker accepted bytes protobuf rejects";
  } else if (protobuf_ok) {
    EXPECT_EQ(c.problem, "wrong wire type")
        << what << ": the checker rejected bytes protobuf accepts: " << c.problem << " at byte "
        << c.offset << " in " << c.path;
  }
  if (!c.ok) {
    EXPECT_LE(c.offset, bytes.size()) << what;
    EXPECT_EQ(c.path.rfind("CompileReport", 0), 0u) << what << ": " << c.path;
  }
}

TEST(WireCheckTest, RealReportIsValidWithOnlyKnownFields) {
  std::string bytes = testing::MakeTestReport().SerializeAsString();
  WireCheck c = CheckWire(Message("CompileReport"), bytes);
  EXPECT_TRUE(c.ok) << c.problem << " at " << c.offset << " in " << c.path;
  EXPECT_EQ(c.unknown_fields, 0);
  EXPECT_GT(c.known_fields, 1000);
}

TEST(WireCheckTest, EveryPrefixAgreesWithProtobuf) {
  std::string bytes = testing::MakeTestReport().SerializeAsString();
  google::protobuf::LogSilencer quiet;
  // Every prefix of the first 2 KiB, then every 97th (the report is ~40 KB).
  for (size_t n = 0; n < bytes.size(); n += n < 2048 ? 1 : 97) {
    ExpectAgreesWithProtobuf(bytes.substr(0, n), "prefix of " + std::to_string(n) + " bytes");
  }
}

TEST(WireCheckTest, CorruptedCopiesAgreeWithProtobuf) {
  std::string bytes = testing::MakeTestReport().SerializeAsString();
  google::protobuf::LogSilencer quiet;  // protobuf logs each invalid UTF-8 string it meets
  std::mt19937 rng(7);
  for (int trial = 0; trial < 600; ++trial) {
    std::string copy = bytes;
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      size_t at = rng() % copy.size();
      copy[at] = static_cast<char>(rng() & 0xff);
    }
    ExpectAgreesWithProtobuf(copy, "corrupted copy " + std::to_string(trial));
  }
}

TEST(WireCheckTest, TruncationNamesTheByteAndTheFieldPath) {
  proto::CompileReport report = testing::MakeTestReport();
  std::string bytes = report.SerializeAsString();
  // Fields serialize in number order, so without timings (5) and logs (6) the report's bytes
  // end with its stages (4): cut inside the last one, stages[5] (codegen_cpu).
  proto::CompileReport head = report;
  head.clear_timings();
  head.clear_logs();
  std::string cut = bytes.substr(0, head.ByteSizeLong() - 100);
  WireCheck c = CheckWire(Message("CompileReport"), cut);
  ASSERT_FALSE(c.ok);
  EXPECT_EQ(c.problem, "truncated");
  EXPECT_NE(c.detail.find("bytes left"), std::string::npos) << c.detail;
  EXPECT_EQ(c.path.rfind("CompileReport.stages[5]", 0), 0u) << c.path;
  EXPECT_LT(c.offset, cut.size());
}

TEST(WireCheckTest, WrongWireTypeForAKnownField) {
  // CompileReport.model (field 1, a string) sent as a varint.
  std::string bytes("\x08\x05", 2);
  WireCheck c = CheckWire(Message("CompileReport"), bytes);
  ASSERT_FALSE(c.ok);
  EXPECT_EQ(c.problem, "wrong wire type");
  EXPECT_EQ(c.detail, "varint value for a length-delimited field");
  EXPECT_EQ(c.offset, 0u);
  EXPECT_EQ(c.path, "CompileReport.model");
}

TEST(WireCheckTest, PackedAndUnpackedRepeatedScalarsBothCount) {
  proto::Graph g;
  g.add_outputs(3);
  g.add_outputs(300);
  std::string packed = g.SerializeAsString();       // proto3 packs
  std::string unpacked("\x28\x03\x28\xac\x02", 5);  // field 5 as two varints
  for (const std::string& bytes : {packed, unpacked}) {
    WireCheck c = CheckWire(Message("Graph"), bytes);
    EXPECT_TRUE(c.ok) << c.problem;
    proto::Graph back;
    ASSERT_TRUE(back.ParseFromString(bytes));
    EXPECT_EQ(back.outputs_size(), 2);
  }
}

TEST(WireCheckTest, UnknownFieldsAreCountedIncludingGroups) {
  // Field 99 varint, field 98 as a group holding a varint, then Graph.name.
  std::string bytes("\x98\x06\x01\x93\x06\x08\x01\x94\x06\x0a\x01g", 12);
  WireCheck c = CheckWire(Message("Graph"), bytes);
  EXPECT_TRUE(c.ok) << c.problem << " " << c.detail;
  EXPECT_EQ(c.unknown_fields, 2);
  EXPECT_EQ(c.known_fields, 1);
  proto::Graph g;
  EXPECT_TRUE(g.ParseFromString(bytes));
  EXPECT_EQ(g.name(), "g");
}

TEST(WireCheckTest, InvalidUtf8InAStringField) {
  proto::Graph g;
  g.set_name("ok");
  std::string bytes = g.SerializeAsString();
  bytes[2] = '\xff';
  WireCheck c = CheckWire(Message("Graph"), bytes);
  ASSERT_FALSE(c.ok);
  EXPECT_EQ(c.problem, "invalid UTF-8 in a string field");
  EXPECT_EQ(c.path, "Graph.name");
  EXPECT_EQ(c.offset, 2u);
}

TEST(WireCheckTest, DeepNestingStopsAtProtobufsLimit) {
  proto::SymExpr e;
  e.set_kind(proto::SymExpr::CONST);
  for (int i = 0; i < 120; ++i) {
    proto::SymExpr outer;
    outer.set_kind(proto::SymExpr::ADD);
    *outer.add_args() = e;
    e = outer;
  }
  WireCheck c = CheckWire(Message("SymExpr"), e.SerializeAsString());
  ASSERT_FALSE(c.ok);
  EXPECT_NE(c.problem.find("nested deeper than 100"), std::string::npos) << c.problem;
  proto::SymExpr back;
  EXPECT_FALSE(back.ParseFromString(e.SerializeAsString()));  // protobuf agrees
}

}  // namespace
}  // namespace coil::inspector
