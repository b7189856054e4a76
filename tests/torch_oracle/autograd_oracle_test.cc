// Derivative rules against torch 1.13's autograd (autograd_cases.py): for each case, the
// one-op graph's joint graph (autograd::BuildJointGraph) runs on the reference interpreter in
// the inputs' dtypes, as built and after prims::Decompose, with the tangents the generator
// used, and its forward outputs and input gradients are compared with torch's.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/testing/gradcheck.h"
#include "gtest/gtest.h"
#include "ir/dtype.h"
#include "runtime/host_tensor.h"
#include "tests/torch_oracle/oracle.pb.h"
#include "tests/torch_oracle/oracle_runner.h"

namespace coil::oracle {
namespace {

std::string g_cases_path;

HostTensor FromStrided(const StridedTensor& st) {
  absl::StatusOr<HostTensor> storage = HostTensor::FromProto(st.storage());
  EXPECT_TRUE(storage.ok()) << storage.status();
  std::vector<int64_t> shape(st.shape().begin(), st.shape().end());
  std::vector<int64_t> strides(st.strides().begin(), st.strides().end());
  if (storage->numel() == 0) return HostTensor::Zeros(storage->dtype(), shape);
  return storage->View(shape, strides, st.offset());
}

// The generator's tangent for floating output i: cos(0.7 k + i), rounded to its dtype.
HostTensor Tangent(const HostTensor& out, int i) {
  std::vector<double> v(out.numel());
  for (size_t k = 0; k < v.size(); ++k) v[k] = std::cos(0.7 * static_cast<double>(k) + i);
  return HostTensor::FromDoubles(out.dtype(), out.shape(), v);
}

// "" when every element is within tolerance, else the worst one.
std::string Compare(const HostTensor& got, const HostTensor& want, double rtol, double atol) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    return absl::StrCat("coil gives ", got.TypeString(), ", torch ", want.TypeString());
  }
  std::vector<double> g = got.ToDoubles(), w = want.ToDoubles();
  for (size_t i = 0; i < g.size(); ++i) {
    bool same = g[i] == w[i] || (std::isnan(g[i]) && std::isnan(w[i]));
    if (!same && !(std::fabs(g[i] - w[i]) <= atol + rtol * std::fabs(w[i]))) {
      return absl::StrCat("element ", i, ": coil ", g[i], ", torch ", w[i]);
    }
  }
  return "";
}

class AutogradOracle : public ::testing::TestWithParam<bool> {};

TEST_P(AutogradOracle, GradientsMatchTorch) {
  bool decomposed = GetParam();
  absl::StatusOr<Suite> suite = LoadSuite(g_cases_path);
  ASSERT_TRUE(suite.ok()) << suite.status();
  ASSERT_GT(suite->cases_size(), 50);
  for (const Case& c : suite->cases()) {
    SCOPED_TRACE(c.name());
    std::vector<HostTensor> inputs;
    std::vector<TensorType> types;
    std::vector<bool> rg;
    for (const StridedTensor& st : c.inputs()) {
      inputs.push_back(FromStrided(st));
      std::vector<SymExpr> shape(inputs.back().shape().begin(), inputs.back().shape().end());
      types.push_back(TensorType(inputs.back().dtype(), shape));
      rg.push_back(IsFloating(inputs.back().dtype()));
    }
    AttrMap attrs;
    for (const proto::NamedAttribute& a : c.attrs()) {
      absl::StatusOr<Attribute> v = AttrFromProto(a.value());
      ASSERT_TRUE(v.ok()) << v.status();
      attrs[a.name()] = *v;
    }
    absl::StatusOr<Graph> g = autograd::testing::SingleOpGraph(c.op(), types, attrs);
    ASSERT_TRUE(g.ok()) << g.status();
    int num_outputs = static_cast<int>(g->outputs().size());
    std::vector<HostTensor> tangents;
    for (int i = 0, t = 0; i < num_outputs; ++i) {
      const HostTensor want = *HostTensor::FromProto(c.expected(i));
      if (IsFloating(want.dtype())) tangents.push_back(Tangent(want, t++));
    }
    absl::StatusOr<std::vector<HostTensor>> got = autograd::testing::RunJoint(
        *g, inputs, rg, tangents, decomposed, /*float64=*/false);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), static_cast<size_t>(c.expected_size()));
    for (int i = 0; i < c.expected_size(); ++i) {
      HostTensor want = *HostTensor::FromProto(c.expected(i));
      EXPECT_EQ(Compare((*got)[i], want, c.rtol(), c.atol()), "")
          << (i < num_outputs ? "forward output " : "gradient ") << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AsBuiltAndDecomposed, AutogradOracle, ::testing::Bool());

}  // namespace
}  // namespace coil::oracle

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CASES.pb\n", argv[0]);
    return 2;
  }
  coil::oracle::g_cases_path = argv[1];
  return RUN_ALL_TESTS();
}
