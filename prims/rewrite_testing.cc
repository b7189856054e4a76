// Test helpers for prims' graph rewrites (rewrite_testing.h).
#include "prims/rewrite_testing.h"

#include <cmath>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "runtime/interpreter.h"

namespace coil::prims::testing {

Value* F32Constant(GraphBuilder& b, const std::vector<int64_t>& shape,
                   const std::vector<float>& values, const std::string& name) {
  std::vector<SymExpr> dims(shape.begin(), shape.end());
  std::string raw(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  return b.Constant(TensorType(proto::FLOAT32, dims), raw, name);
}

Value* RandomF32Constant(GraphBuilder& b, const std::vector<int64_t>& shape, std::mt19937& rng,
                         const std::string& name) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> values(n);
  for (float& v : values) v = std::uniform_real_distribution<float>(-1, 1)(rng);
  return F32Constant(b, shape, values, name);
}

int CountOps(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node* node : g.nodes()) n += node->op() == op;
  return n;
}

std::vector<HostTensor> RandomInputs(const Graph& g, int64_t symbol_value, uint32_t seed) {
  std::vector<HostTensor> in;
  std::mt19937 rng(seed);
  for (const Value* v : g.inputs()) {
    std::vector<int64_t> shape;
    for (const SymExpr& d : v->type().shape) {
      shape.push_back(d.is_constant() ? d.constant() : symbol_value);
    }
    HostTensor t = HostTensor::Zeros(v->type().dtype, shape);
    for (int64_t i = 0; i < t.numel(); ++i) {
      t.StoreDouble(i, std::uniform_real_distribution<double>(-2, 2)(rng));
    }
    in.push_back(t);
  }
  return in;
}

void ExpectSameFloat64Values(const Graph& before, const Graph& after,
                             const std::vector<HostTensor>& inputs, double tolerance) {
  absl::StatusOr<std::vector<HostTensor>> want = Interpret(before, inputs, {.float64 = true});
  absl::StatusOr<std::vector<HostTensor>> got = Interpret(after, inputs, {.float64 = true});
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(want->size(), got->size());
  for (size_t o = 0; o < want->size(); ++o) {
    std::vector<double> a = (*want)[o].ToDoubles(), b = (*got)[o].ToDoubles();
    ASSERT_EQ(a.size(), b.size()) << "output " << o;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_NEAR(a[i], b[i], tolerance * (1 + std::abs(a[i])))
          << "output " << o << " element " << i;
    }
  }
}

}  // namespace coil::prims::testing
