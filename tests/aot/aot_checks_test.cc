// Run-time checks in an AOT object (tests/aot/checks.ir, generated at build time, linked without
// LLVM): an out-of-vocabulary token and an integer division by zero are errors with the same
// messages as the JIT's and the reference interpreter's, and the executable runs good inputs
// afterwards.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/cpu/aot_loader.h"
#include "runtime/host_tensor.h"
#include "runtime/interpreter.h"
#include "tests/aot/checks.h"

namespace coil {
namespace {

using ::testing::HasSubstr;

Graph LoadModel() {
  std::ifstream f("tests/aot/checks.ir");
  EXPECT_TRUE(f.good()) << "cannot open tests/aot/checks.ir";
  std::stringstream text;
  text << f.rdbuf();
  absl::StatusOr<Graph> g = ParseGraph(text.str());
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : Graph();
}

std::vector<HostTensor> Inputs(std::vector<double> tokens, std::vector<double> b) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  return {HostTensor::FromDoubles(proto::FLOAT32, {4, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}),
          HostTensor::FromDoubles(proto::INT64, {n}, tokens),
          HostTensor::FromDoubles(proto::INT32, {4}, {7, -7, 9, 100}),
          HostTensor::FromDoubles(proto::INT32, {4}, b)};
}

class AotChecksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(coil_aot::checks::CheckCpu().ok()) << coil_aot::checks::CheckCpu();
    cpu::CpuExecutableOptions options;
    options.num_threads = 2;
    absl::StatusOr<std::unique_ptr<cpu::CpuExecutable>> exe =
        cpu::CreateAotExecutable(coil_aot::checks::Package(), options);
    ASSERT_TRUE(exe.ok()) << exe.status();
    exe_ = *std::move(exe);
  }

  // The AOT executable and the reference interpreter agree on `in`.
  void ExpectGood(const std::vector<HostTensor>& in) {
    absl::StatusOr<std::vector<HostTensor>> want = Interpret(graph_, in);
    ASSERT_TRUE(want.ok()) << want.status();
    absl::StatusOr<std::vector<HostTensor>> got = exe_->Run(in);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), 2u);
    for (size_t i = 0; i < 2; ++i) EXPECT_EQ((*got)[i].ToDoubles(), (*want)[i].ToDoubles());
  }

  // Both fail with `message`, with the same status code.
  void ExpectError(const std::vector<HostTensor>& in, const std::string& message) {
    absl::StatusOr<std::vector<HostTensor>> want = Interpret(graph_, in);
    ASSERT_FALSE(want.ok());
    EXPECT_THAT(std::string(want.status().message()), HasSubstr(message));
    absl::StatusOr<std::vector<HostTensor>> got = exe_->Run(in);
    ASSERT_FALSE(got.ok());
    EXPECT_THAT(std::string(got.status().message()), HasSubstr(message));
    EXPECT_THAT(std::string(got.status().message()), HasSubstr("kernel "));
    EXPECT_EQ(got.status().code(), want.status().code()) << got.status();
  }

  Graph graph_ = LoadModel();
  std::unique_ptr<cpu::CpuExecutable> exe_;
};

TEST_F(AotChecksTest, GoodInputs) { ExpectGood(Inputs({3, 0, 2}, {2, 3, -4, 7})); }

TEST_F(AotChecksTest, TokenOutOfVocabulary) {
  ExpectError(Inputs({3, 0, 4}, {2, 3, -4, 7}),
              "index 4 is out of bounds for dimension 0 with size 4");
  ExpectGood(Inputs({3, 0, 3}, {2, 3, -4, 7}));
}

TEST_F(AotChecksTest, HugeTokenDoesNotCrash) {
  ExpectError(Inputs({1000000, 0}, {2, 3, -4, 7}),
              "index 1000000 is out of bounds for dimension 0 with size 4");
  ExpectGood(Inputs({1, 0}, {2, 3, -4, 7}));
}

TEST_F(AotChecksTest, NegativeToken) {
  ExpectError(Inputs({-1}, {2, 3, -4, 7}), "index -1 is out of bounds for dimension 0 with size 4");
}

TEST_F(AotChecksTest, IntegerDivisionByZero) {
  ExpectError(Inputs({1}, {2, 3, 0, 7}), "integer division by zero");
  ExpectGood(Inputs({1}, {2, 3, 1, 7}));
}

}  // namespace
}  // namespace coil
