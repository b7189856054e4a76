// The conformance runner's own behaviour: assert_allclose comparison with the worst element,
// TensorProto decoding (raw, typed fields, external data, unsupported types), classification
// of folders that are unsupported or broken (a broken data set or option fails with its
// message), the unsupported-feature key and the JSON report.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "capture/onnx/onnx/onnx.pb.h"
#include "gtest/gtest.h"
#include "tests/onnx_conformance/compare.h"
#include "tests/onnx_conformance/conformance.h"
#include "tests/onnx_conformance/onnx_tensor.h"

namespace coil::onnx_testing {
namespace {

namespace fs = std::filesystem;

HostTensor F32(std::vector<int64_t> shape, std::vector<double> v) {
  return HostTensor::FromDoubles(proto::FLOAT32, std::move(shape), v);
}

std::string TempDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/", name);
  fs::create_directories(dir);
  return dir;
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
}

TEST(CompareTensors, EqualWithinTolerance) {
  EXPECT_TRUE(CompareTensors(F32({2}, {1.0, 100.0}), F32({2}, {1.0005, 100.09}), {}).ok());
  EXPECT_TRUE(CompareTensors(F32({1}, {NAN}), F32({1}, {NAN}), {}).ok());
  EXPECT_TRUE(CompareTensors(F32({1}, {INFINITY}), F32({1}, {INFINITY}), {}).ok());
}

TEST(CompareTensors, ReportsWorstElement) {
  absl::Status s = CompareTensors(F32({2, 2}, {1, 2, 3, 4}), F32({2, 2}, {1, 2.5, 3, 4.01}), {});
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "element [0, 1]")) << s.message();
  EXPECT_TRUE(absl::StrContains(s.message(), "got 2, expected 2.5")) << s.message();
  EXPECT_TRUE(absl::StrContains(s.message(), "2 of 4 elements differ")) << s.message();
}

TEST(CompareTensors, NanAndInfinityMismatch) {
  EXPECT_FALSE(CompareTensors(F32({1}, {NAN}), F32({1}, {1}), {}).ok());
  EXPECT_FALSE(CompareTensors(F32({1}, {INFINITY}), F32({1}, {-INFINITY}), {}).ok());
  EXPECT_FALSE(CompareTensors(F32({1}, {1e30}), F32({1}, {INFINITY}), {}).ok());
}

TEST(CompareTensors, DtypeAndShapeMismatch) {
  absl::Status s = CompareTensors(F32({2}, {1, 2}), F32({1, 2}, {1, 2}), {});
  EXPECT_TRUE(absl::StrContains(s.message(), "shape f32[2], expected f32[1, 2]")) << s.message();
  s = CompareTensors(HostTensor::FromDoubles(proto::INT64, {2}, {1, 2}), F32({2}, {1, 2}), {});
  EXPECT_TRUE(absl::StrContains(s.message(), "dtype i64[2], expected f32[2]")) << s.message();
}

TEST(OnnxTensor, RawAndTypedData) {
  ::onnx::TensorProto t;
  t.set_data_type(::onnx::TensorProto::FLOAT);
  t.add_dims(2);
  t.add_float_data(1.5f);
  t.add_float_data(-2.0f);
  absl::StatusOr<HostTensor> h = TensorFromOnnx(t);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->ToDoubles(), (std::vector<double>{1.5, -2.0}));

  ::onnx::TensorProto b;
  b.set_data_type(::onnx::TensorProto::BOOL);
  b.add_dims(3);
  for (int v : {0, 1, 1}) b.add_int32_data(v);
  h = TensorFromOnnx(b);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->dtype(), proto::BOOL);
  EXPECT_EQ(h->ToDoubles(), (std::vector<double>{0, 1, 1}));

  ::onnx::TensorProto half;
  half.set_data_type(::onnx::TensorProto::FLOAT16);
  half.add_int32_data(0x3c00);  // 1.0
  h = TensorFromOnnx(half);     // a scalar
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->rank(), 0);
  EXPECT_EQ(h->ToDoubles(), (std::vector<double>{1.0}));

  ::onnx::TensorProto raw;
  raw.set_data_type(::onnx::TensorProto::INT64);
  raw.add_dims(1);
  int64_t v = -7;
  raw.set_raw_data(std::string(reinterpret_cast<const char*>(&v), 8));
  h = TensorFromOnnx(raw);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->ToDoubles(), (std::vector<double>{-7}));
}

TEST(OnnxTensor, ExternalData) {
  std::string dir = TempDir("external");
  float values[3] = {0, 1.25f, 2.5f};
  WriteFile(dir + "/weights.bin", std::string(reinterpret_cast<const char*>(values), 12));
  ::onnx::TensorProto t;
  t.set_data_type(::onnx::TensorProto::FLOAT);
  t.add_dims(2);
  t.set_data_location(::onnx::TensorProto::EXTERNAL);
  auto* loc = t.add_external_data();
  loc->set_key("location");
  loc->set_value("weights.bin");
  auto* off = t.add_external_data();
  off->set_key("offset");
  off->set_value("4");
  absl::StatusOr<HostTensor> h = TensorFromOnnx(t, dir);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->ToDoubles(), (std::vector<double>{1.25, 2.5}));
  EXPECT_FALSE(TensorFromOnnx(t, dir + "/missing").ok());
}

TEST(OnnxTensor, Errors) {
  ::onnx::TensorProto s;
  s.set_data_type(::onnx::TensorProto::STRING);
  s.add_string_data("a");
  absl::StatusOr<HostTensor> h = TensorFromOnnx(s);
  EXPECT_TRUE(absl::IsUnimplemented(h.status())) << h.status();
  EXPECT_TRUE(absl::StrContains(h.status().message(), "STRING")) << h.status();

  ::onnx::TensorProto short_data;
  short_data.set_data_type(::onnx::TensorProto::FLOAT);
  short_data.add_dims(3);
  short_data.add_float_data(1);
  h = TensorFromOnnx(short_data);
  EXPECT_TRUE(absl::IsInvalidArgument(h.status())) << h.status();
  EXPECT_TRUE(absl::StrContains(h.status().message(), "has 1 values for 3 elements"))
      << h.status();

  h = ReadOnnxTensorFile("/nonexistent/input_0.pb");
  EXPECT_TRUE(absl::IsNotFound(h.status())) << h.status();
}

TEST(RunTest, MissingAndBrokenFolders) {
  RunOptions options;
  TestResult r = RunTest("/nonexistent/suite/test_x", options);
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_EQ(r.name, "test_x");
  EXPECT_EQ(r.suite, "suite");
  EXPECT_TRUE(absl::StrContains(r.message, "cannot open")) << r.message;

  std::string dir = TempDir("suite/test_garbage");
  WriteFile(dir + "/model.onnx", "\xff\xff\xff not a model");
  r = RunTest(dir, options);
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_TRUE(absl::StrContains(r.message, "not an ONNX ModelProto")) << r.message;
}

TEST(RunTest, SequenceAndStringValuesAreUnsupported) {
  std::string dir = TempDir("suite/test_sequence_input");
  ::onnx::ModelProto m;
  auto* in = m.mutable_graph()->add_input();
  in->set_name("seq");
  in->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(1);
  WriteFile(dir + "/model.onnx", m.SerializeAsString());
  RunOptions options;
  options.isolate = false;
  TestResult r = RunTest(dir, options);
  EXPECT_EQ(r.outcome, Outcome::kUnsupported);
  EXPECT_EQ(r.unsupported, "sequence type");
  EXPECT_TRUE(absl::StrContains(r.message, "input 'seq' is a sequence value")) << r.message;

  std::string sdir = TempDir("suite/test_string_output");
  ::onnx::ModelProto s;
  auto* out = s.mutable_graph()->add_output();
  out->set_name("y");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::STRING);
  WriteFile(sdir + "/model.onnx", s.SerializeAsString());
  r = RunTest(sdir, options);
  EXPECT_EQ(r.outcome, Outcome::kUnsupported);
  EXPECT_EQ(r.unsupported, "element type STRING");
}

// Expected errors (issue 15): each broken data set or bad option is a failed test with a
// message naming the file or option, never "unsupported" or a pass.
class BrokenTestCase : public ::testing::Test {
 protected:
  // A copy of ONNX's test_relu (one input, one output) to break; `name` keeps copies apart.
  std::string CopyRelu(const std::string& name) {
    std::string dir = TempDir("broken/" + name);
    fs::remove_all(dir);
    fs::copy("/usr/share/libonnx-testdata/data/node/test_relu", dir,
             fs::copy_options::recursive);
    return dir;
  }

  static TestResult Run(const std::string& dir, RunOptions options = {}) {
    options.isolate = false;
    return RunTest(dir, options);
  }

  static void ExpectFailed(const TestResult& r, const std::string& message) {
    EXPECT_EQ(r.outcome, Outcome::kFailed) << OutcomeName(r.outcome) << ": " << r.message;
    EXPECT_EQ(r.message, message);
  }
};

TEST_F(BrokenTestCase, TheCopyPasses) {
  TestResult r = Run(CopyRelu("intact"));
  EXPECT_EQ(r.outcome, Outcome::kPassed) << r.message;
}

TEST_F(BrokenTestCase, EmptyInputFile) {
  std::string dir = CopyRelu("empty_input");
  WriteFile(dir + "/test_data_set_0/input_0.pb", "");
  ExpectFailed(Run(dir), "test_data_set_0: 'input_0.pb' is empty (a TensorProto file has at "
                         "least a data type) [INVALID_ARGUMENT]");
}

TEST_F(BrokenTestCase, EmptyOutputFile) {
  std::string dir = CopyRelu("empty_output");
  WriteFile(dir + "/test_data_set_0/output_0.pb", "");
  ExpectFailed(Run(dir), "test_data_set_0: 'output_0.pb' is empty (a TensorProto file has at "
                         "least a data type) [INVALID_ARGUMENT]");
}

TEST_F(BrokenTestCase, InputFileIsADirectory) {
  std::string dir = CopyRelu("directory_input");
  fs::remove(dir + "/test_data_set_0/input_0.pb");
  fs::create_directory(dir + "/test_data_set_0/input_0.pb");
  ExpectFailed(Run(dir), "test_data_set_0: cannot read 'input_0.pb': it is a directory, not a "
                         "file [INVALID_ARGUMENT]");
}

TEST_F(BrokenTestCase, OutputFileIsADirectory) {
  std::string dir = CopyRelu("directory_output");
  fs::remove(dir + "/test_data_set_0/output_0.pb");
  fs::create_directory(dir + "/test_data_set_0/output_0.pb");
  ExpectFailed(Run(dir), "test_data_set_0: cannot read 'output_0.pb': it is a directory, not a "
                         "file [INVALID_ARGUMENT]");
}

TEST_F(BrokenTestCase, TensorWithoutDataType) {
  std::string dir = CopyRelu("no_data_type");
  ::onnx::TensorProto t;
  t.add_dims(1);
  WriteFile(dir + "/test_data_set_0/input_0.pb", t.SerializeAsString());
  ExpectFailed(Run(dir), "test_data_set_0: 'input_0.pb' is a TensorProto without a data type "
                         "[INVALID_ARGUMENT]");
}

TEST_F(BrokenTestCase, ExtraInputFile) {
  std::string dir = CopyRelu("extra_input");
  fs::copy_file(dir + "/test_data_set_0/input_0.pb", dir + "/test_data_set_0/input_1.pb");
  ExpectFailed(Run(dir), "test_data_set_0: input_1.pb: the model has 1 input, so the data set "
                         "may hold only input_0.pb (a broken test case) [INVALID_ARGUMENT]");
}

TEST_F(BrokenTestCase, ExtraOutputFile) {
  std::string dir = CopyRelu("extra_output");
  fs::copy_file(dir + "/test_data_set_0/output_0.pb", dir + "/test_data_set_0/output_3.pb");
  ExpectFailed(Run(dir), "test_data_set_0: output_3.pb: the model has 1 output, so the data set "
                         "may hold only output_0.pb (a broken test case) [INVALID_ARGUMENT]");
}

TEST_F(BrokenTestCase, MissingInputFile) {
  std::string dir = CopyRelu("missing_input");
  fs::remove(dir + "/test_data_set_0/input_0.pb");
  ExpectFailed(Run(dir), "test_data_set_0: cannot open 'input_0.pb': No such file or directory "
                         "[NOT_FOUND]");
}

TEST_F(BrokenTestCase, NanTolerance) {
  RunOptions options;
  options.tolerance.rtol = NAN;
  options.tolerance.atol = NAN;
  ExpectFailed(Run(CopyRelu("nan_tolerance"), options),
               "invalid options: rtol nan is not a finite number >= 0");
  // The comparison itself refuses it too: a NaN bound would pass every element.
  absl::Status s = CompareTensors(F32({1}, {1}), F32({1}, {2}), options.tolerance);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_EQ(s.message(), "rtol nan is not a finite number >= 0");
}

TEST_F(BrokenTestCase, InfiniteOrNegativeTolerance) {
  Tolerance t;
  t.atol = INFINITY;
  EXPECT_EQ(CheckTolerance(t).message(), "atol inf is not a finite number >= 0");
  t.atol = 0;
  t.rtol = -1;
  EXPECT_EQ(CheckTolerance(t).message(), "rtol -1 is not a finite number >= 0");
}

TEST_F(BrokenTestCase, NegativeTimeout) {
  RunOptions options;
  options.timeout_s = -1;
  options.isolate = true;
  TestResult r = RunTest(CopyRelu("negative_timeout"), options);
  ExpectFailed(r, "invalid options: timeout -1 s is not >= 1");
  options.timeout_s = 0;
  EXPECT_EQ(CheckRunOptions(options).message(), "timeout 0 s is not >= 1");
}

TEST(UnsupportedFeature, Keys) {
  EXPECT_EQ(UnsupportedFeature("element type UINT16 is not supported"), "element type UINT16");
  EXPECT_EQ(UnsupportedFeature("node 3 %4 = aten.foo(%1): no reference kernel for op 'aten.foo'"),
            "kernel aten.foo");
  EXPECT_EQ(UnsupportedFeature("op Loop is not supported (node n1)"), "op Loop");
  EXPECT_EQ(UnsupportedFeature("op Resize attribute mode=cubic is not supported (node r)"),
            "op Resize");
  EXPECT_EQ(UnsupportedFeature("domain 'ai.onnx.ml' is not supported (op Scaler, node s)"),
            "domain ai.onnx.ml");
  EXPECT_EQ(UnsupportedFeature("opset 3 is not supported (coil imports opsets 7 to 17)"),
            "opset 3");
}

TEST(Summary, RatesAndJson) {
  TestResult a, b, c;
  a.suite = b.suite = c.suite = "node";
  a.name = "test_a";
  a.outcome = Outcome::kPassed;
  b.name = "test_\"b\"";
  b.outcome = Outcome::kFailed;
  b.message = "line1\nline2";
  c.name = "test_c";
  c.outcome = Outcome::kUnsupported;
  c.unsupported = "op Loop";
  std::vector<TestResult> all = {a, b, c};
  SuiteSummary s = Summarize(all);
  EXPECT_EQ(s.passed, 1);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.unsupported, 1);
  EXPECT_DOUBLE_EQ(s.pass_rate(), 1.0 / 3);
  std::string json = ResultsToJson(all, "/data", "reference");
  EXPECT_TRUE(absl::StrContains(json, R"("node": {"passed": 1, "failed": 1, "unsupported": 1, "total": 3})"))
      << json;
  EXPECT_TRUE(absl::StrContains(json, R"("name": "test_\"b\"")")) << json;
  EXPECT_TRUE(absl::StrContains(json, R"("message": "line1\nline2")")) << json;
}

}  // namespace
}  // namespace coil::onnx_testing
