// AOT packages linked into a program that has no LLVM and no code generator (tests/aot/BUILD
// generates mlp.o / conv.o / foreign.o at build time): each runs at several batch sizes and
// thread counts and matches the float64 reference interpreter on the original model file and
// the Schedule interpreter on the embedded schedule; the package compiled for a CPU with a
// feature this one lacks is refused with a FailedPrecondition naming the feature.
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/cpu/aot_cpu_features.h"
#include "runtime/cpu/aot_loader.h"
#include "runtime/host_tensor.h"
#include "runtime/interpreter.h"
#include "runtime/schedule_interpreter.h"
#include "runtime/testing/test_kit.h"
#include "tests/aot/conv.h"
#include "tests/aot/foreign.h"
#include "tests/aot/mlp.h"

namespace coil {
namespace {

// The model file the package was generated from (a data dependency of the test).
Graph LoadModel(const std::string& file) {
  std::ifstream f("tests/aot/" + file);
  EXPECT_TRUE(f.good()) << "cannot open tests/aot/" << file;
  std::stringstream text;
  text << f.rdbuf();
  absl::StatusOr<Graph> g = ParseGraph(text.str());
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : Graph();
}

HostTensor Random(std::vector<int64_t> shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-2, 2);
  HostTensor t = HostTensor::Zeros(proto::FLOAT32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.StoreDouble(i, u(rng));
  return t;
}

// Each output of `got` is f32 and within tol * (1 + |want|) of `want`'s, element-wise.
void ExpectNear(const std::vector<HostTensor>& got, const std::vector<HostTensor>& want,
                double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t o = 0; o < got.size(); ++o) {
    EXPECT_EQ(got[o].dtype(), proto::FLOAT32) << what << " output " << o;
    test_kit::ExpectClose(
        want[o], got[o],
        {.abs = tol, .rel = tol, .nan_matches_nan = false, .compare_dtypes = false},
        absl::StrCat(what, " output ", o));
  }
}

// Runs `package` at two batch sizes and two thread counts; checks both oracles.
void RunAndCheck(const CoilAotPackage& package, const std::string& model,
                 std::vector<int64_t> item_shape) {
  const Graph graph = LoadModel(model);
  absl::StatusOr<proto::Schedule> embedded = cpu::AotPackageSchedule(package);
  ASSERT_TRUE(embedded.ok()) << embedded.status();
  for (int threads : {1, 3}) {
    cpu::CpuExecutableOptions options;
    options.num_threads = threads;
    absl::StatusOr<std::unique_ptr<cpu::CpuExecutable>> exe =
        cpu::CreateAotExecutable(package, options);
    ASSERT_TRUE(exe.ok()) << exe.status();
    EXPECT_EQ((*exe)->num_threads(), threads);
    for (int64_t batch : {2, 5, 2}) {
      std::vector<int64_t> shape = {batch};
      shape.insert(shape.end(), item_shape.begin(), item_shape.end());
      const std::vector<HostTensor> in = {Random(shape, 11 + batch)};
      const std::string what = absl::StrCat(package.name, " batch ", batch, " threads ", threads);
      absl::StatusOr<std::vector<HostTensor>> got = (*exe)->Run(in);
      ASSERT_TRUE(got.ok()) << what << ": " << got.status();
      absl::StatusOr<std::vector<HostTensor>> schedule = InterpretSchedule(*embedded, in);
      ASSERT_TRUE(schedule.ok()) << schedule.status();
      ExpectNear(*got, *schedule, 1e-5, what + " vs the Schedule interpreter");
      InterpreterOptions f64;
      f64.float64 = true;
      absl::StatusOr<std::vector<HostTensor>> reference = Interpret(graph, in, f64);
      ASSERT_TRUE(reference.ok()) << reference.status();
      ExpectNear(*got, *reference, 1e-4, what + " vs the float64 reference interpreter");
    }
    // Bad input: the executable's own message, nothing crashes.
    absl::StatusOr<std::vector<HostTensor>> bad = (*exe)->Run({});
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
  }
}

TEST(AotLinkTest, MlpForThisCpu) {
  ASSERT_TRUE(coil_aot::mlp::CheckCpu().ok()) << coil_aot::mlp::CheckCpu();
  EXPECT_STREQ(coil_aot::mlp::Package().name, "mlp");
  EXPECT_STREQ(coil_aot::mlp::Package().cpu, coil_aot::mlp::kCpu);
  EXPECT_STREQ(coil_aot::mlp::Package().cpu_features, coil_aot::mlp::kCpuFeatures);
  EXPECT_EQ(coil_aot::mlp::kNumInputs, 1);
  EXPECT_EQ(coil_aot::mlp::kNumOutputs, 2);
  EXPECT_STREQ(coil_aot::mlp::kInputNames[0], "x");
  RunAndCheck(coil_aot::mlp::Package(), "mlp.ir", {8});
}

TEST(AotLinkTest, ConvForABaselineCpu) {
  ASSERT_TRUE(coil_aot::conv::CheckCpu().ok()) << coil_aot::conv::CheckCpu();
  EXPECT_STREQ(coil_aot::conv::kCpu, "x86-64-v2");
  EXPECT_FALSE(absl::StrContains(coil_aot::conv::kCpuFeatures, "avx"))
      << coil_aot::conv::kCpuFeatures;
  EXPECT_STREQ(coil_aot::conv::kInputNames[0], "image");
  RunAndCheck(coil_aot::conv::Package(), "conv.ir", {3, 8, 8});
}

TEST(AotLinkTest, CreateThroughTheGeneratedHeader) {
  absl::StatusOr<std::unique_ptr<cpu::CpuExecutable>> exe = coil_aot::conv::Create();
  ASSERT_TRUE(exe.ok()) << exe.status();
  absl::StatusOr<std::vector<HostTensor>> out = (*exe)->Run({Random({4, 3, 8, 8}, 3)});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ((*out)[1].shape(), (std::vector<int64_t>{4, 4, 8, 8}));
}

TEST(AotLinkTest, ForeignCpuPackageIsRefused) {
  const CoilAotPackage& p = coil_aot::foreign::Package();
  const cpu::CpuFeatureCheck check = cpu::CheckCpuFeatures(p.cpu_features);
  absl::StatusOr<std::unique_ptr<cpu::CpuExecutable>> exe = coil_aot::foreign::Create();
  if (check.missing.empty() && check.unknown.empty()) {
    // Built on a machine that lacked a feature this one has: it may run here, and must be right.
    ASSERT_TRUE(exe.ok()) << exe.status();
    RunAndCheck(p, "mlp.ir", {8});
    GTEST_SKIP() << "this CPU has every feature of " << p.cpu;
  }
  ASSERT_FALSE(check.missing.empty()) << "unknown features: " << absl::StrJoin(check.unknown, ",");
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string message(exe.status().message());
  for (const std::string& part :
       {absl::StrCat("AOT object 'foreign' was compiled for CPU '", p.cpu, "' and needs ",
                     absl::StrJoin(check.missing, ", ")),
        absl::StrCat("this CPU (", cpu::HostCpuBrand(), ") lacks")}) {
    EXPECT_TRUE(absl::StrContains(message, part)) << message << "\nmissing: " << part;
  }
  EXPECT_EQ(coil_aot::foreign::CheckCpu(), exe.status());
  std::printf("refused as expected: %s\n", message.c_str());
  // The package can still be inspected: its schedule is the mlp's.
  absl::StatusOr<proto::Schedule> s = cpu::AotPackageSchedule(p);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->graph().name(), "mlp");
}

}  // namespace
}  // namespace coil
