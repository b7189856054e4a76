// DetectMessage and LoadReport: each coil message type is recognized from its bytes alone;
// truncated, foreign and empty files give a clear error that names the file and the byte.
#include "inspector_web/core/detect.h"

#include <string>

#include "gtest/gtest.h"
#include "inspector_web/core/load.h"
#include "inspector_web/testing/test_report.h"
#include "ir/proto/report.pb.h"

namespace coil::inspector {
namespace {

class DetectTest : public ::testing::Test {
 protected:
  void SetUp() override { report_ = testing::MakeTestReport(); }
  const proto::StageArtifact& Stage(const std::string& name) {
    for (const proto::StageArtifact& a : report_.stages()) {
      if (a.stage() == name) return a;
    }
    std::abort();
  }
  proto::CompileReport report_;
};

TEST_F(DetectTest, EveryMessageKindIsRecognizedWithAnUninformativeName) {
  struct Case {
    std::string bytes;
    MessageKind kind;
  };
  const Case cases[] = {
      {report_.SerializeAsString(), MessageKind::kCompileReport},
      {Stage("prims").graph().SerializeAsString(), MessageKind::kGraph},
      {Stage("import").graph().SerializeAsString(), MessageKind::kGraph},
      {Stage("inductor").schedule().SerializeAsString(), MessageKind::kSchedule},
      {Stage("codegen_cpu").kernel_module().SerializeAsString(), MessageKind::kKernelModule},
      {Stage("capture").capture().SerializeAsString(), MessageKind::kCaptureResult},
      {Stage("autograd").autograd().SerializeAsString(), MessageKind::kAutogradResult},
  };
  for (const Case& c : cases) {
    Detection d = DetectMessage(c.bytes, "data.bin");
    EXPECT_TRUE(d.ok) << d.error;
    EXPECT_EQ(d.kind, c.kind) << MessageKindName(d.kind) << " instead of "
                              << MessageKindName(c.kind);
    EXPECT_EQ(d.unknown_fields, 0);
  }
}

TEST_F(DetectTest, LoadWrapsASingleStageFileAsAOneStageReport) {
  std::string bytes = Stage("inductor").schedule().SerializeAsString();
  proto::CompileReport loaded;
  LoadInfo info;
  ASSERT_TRUE(LoadReport(bytes, "block.schedule.pb", &loaded, &info)) << info.error;
  EXPECT_EQ(info.kind, MessageKind::kSchedule);
  ASSERT_EQ(loaded.stages_size(), 1);
  EXPECT_EQ(loaded.stages(0).stage(), "schedule");
  EXPECT_EQ(loaded.model(), "block.schedule.pb");
  EXPECT_EQ(loaded.stages(0).schedule().SerializeAsString(), bytes);
}

TEST_F(DetectTest, TruncatedReportSaysWhereItWasCut) {
  std::string bytes = report_.SerializeAsString();
  std::string cut = bytes.substr(0, bytes.size() / 2);
  proto::CompileReport loaded;
  LoadInfo info;
  ASSERT_FALSE(LoadReport(cut, "report.pb", &loaded, &info));
  EXPECT_EQ(info.error.rfind("report.pb: not a coil protobuf (truncated at byte ", 0), 0u)
      << info.error;
  EXPECT_NE(info.error.find("in CompileReport.stages["), std::string::npos) << info.error;
  EXPECT_EQ(loaded.stages_size(), 0);
}

// The bytes of a string literal, embedded NULs included.
template <size_t N>
std::string Bytes(const char (&literal)[N]) {
  return std::string(literal, N - 1);
}

TEST_F(DetectTest, ForeignFilesAreNotCoilProtobufs) {
  const std::string foreign[] = {
      Bytes("\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10\0\0\0\x10\x08\x06\0\0\0"),
      Bytes("graph @g() {\n  return\n}\n"),           // text IR, not binary
      Bytes("\x08\x07\x12\x04onnx\x3a\x02\x08\x01"),  // an ONNX-like ModelProto
      std::string(64, '\xff'),
  };
  for (const std::string& bytes : foreign) {
    Detection d = DetectMessage(bytes, "model.onnx");
    EXPECT_FALSE(d.ok) << MessageKindName(d.kind);
    EXPECT_EQ(d.error.rfind("model.onnx: not a coil protobuf (", 0), 0u) << d.error;
  }
}

TEST_F(DetectTest, EmptyFile) {
  Detection d = DetectMessage("", "report.pb");
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.error, "report.pb: empty file (0 bytes), not a coil protobuf");
}

TEST_F(DetectTest, NewerWriterWithUnknownFieldsLoadsWithAWarning) {
  std::string bytes = report_.SerializeAsString();
  bytes += std::string("\xf8\x07\x01", 3);  // field 127, varint: unknown to this schema
  proto::CompileReport loaded;
  LoadInfo info;
  ASSERT_TRUE(LoadReport(bytes, "report.pb", &loaded, &info)) << info.error;
  EXPECT_EQ(info.kind, MessageKind::kCompileReport);
  EXPECT_NE(info.warning.find("1 field value(s) unknown"), std::string::npos) << info.warning;
}

}  // namespace
}  // namespace coil::inspector
