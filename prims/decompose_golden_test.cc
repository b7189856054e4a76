// Golden text tests for representative decompositions (softmax, layer_norm, attention): the
// printed prims graph must equal prims/testdata/<name>.golden.txt, so a change to a
// decomposition shows up as a readable diff. Each golden graph is also run: it must compute
// what the aten graph computes (the reference interpreter in float64 is the oracle).
//
// To update after an intended change:
//   bazel build //tools/coil && for f in softmax layer_norm attention; do
//     bazel-bin/tools/coil/coil decompose prims/testdata/$f.txt -o prims/testdata/$f.golden.txt
//   done
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "prims/decompose.h"
#include "runtime/interpreter.h"

namespace coil::prims {
namespace {

std::string Read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Random inputs for the graph, with every symbol bound to `size`.
std::vector<HostTensor> RandomInputs(const Graph& g, int64_t size) {
  std::mt19937 rng(7);
  std::normal_distribution<double> normal(0, 1);
  std::vector<HostTensor> inputs;
  for (const Value* in : g.inputs()) {
    std::vector<int64_t> shape;
    for (const SymExpr& d : in->type().shape) shape.push_back(d.is_constant() ? d.constant() : size);
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<double> v(n);
    for (double& x : v) x = normal(rng);
    inputs.push_back(HostTensor::FromDoubles(in->type().dtype, shape, v));
  }
  return inputs;
}

class GoldenTest : public testing::TestWithParam<const char*> {};

TEST_P(GoldenTest, MatchesGoldenTextAndComputesTheSame) {
  std::string name = GetParam();
  absl::StatusOr<Graph> aten = ParseGraph(Read("prims/testdata/" + name + ".txt"));
  ASSERT_TRUE(aten.ok()) << aten.status();
  absl::StatusOr<Graph> decomposed = ParseGraph(Read("prims/testdata/" + name + ".txt"));
  ASSERT_TRUE(decomposed.ok());
  absl::StatusOr<bool> changed = Decompose(*decomposed);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(PrintGraph(*decomposed), Read("prims/testdata/" + name + ".golden.txt"))
      << "the decomposition of " << name << " changed; see this file's header to update";

  for (int64_t size : {2, 5}) {
    std::vector<HostTensor> inputs = RandomInputs(*aten, size);
    absl::StatusOr<std::vector<HostTensor>> want = Interpret(*aten, inputs, {.float64 = true});
    absl::StatusOr<std::vector<HostTensor>> got = Interpret(*decomposed, inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(got.ok()) << got.status();
    std::vector<double> w = (*want)[0].ToDoubles(), g = (*got)[0].ToDoubles();
    ASSERT_EQ(w.size(), g.size());
    // bf16 keeps 8 bits of mantissa; f32 about 24.
    double tol = (*got)[0].dtype() == proto::BFLOAT16 ? 2e-2 : 1e-5;
    for (size_t i = 0; i < w.size(); ++i) {
      ASSERT_NEAR(g[i], w[i], tol * (1 + std::fabs(w[i]))) << name << " element " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Decompose, GoldenTest,
                         testing::Values("softmax", "layer_norm", "attention"),
                         [](const testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

}  // namespace
}  // namespace coil::prims
