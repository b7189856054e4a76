// Helpers for the tests of prims' graph rewrites (merge_matmuls, fold_weight_scales,
// attention_match): build random f32 constants, count ops, and compare a graph before and after
// a rewrite on the float64 reference interpreter (the oracle) with random inputs.
#ifndef COIL_PRIMS_REWRITE_TESTING_H_
#define COIL_PRIMS_REWRITE_TESTING_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/graph.h"
#include "runtime/host_tensor.h"

namespace coil::prims::testing {

// An inline f32 constant of `shape` holding `values` (row-major).
Value* F32Constant(GraphBuilder& b, const std::vector<int64_t>& shape,
                   const std::vector<float>& values, const std::string& name);
// The same with values uniform in [-1, 1) from `rng`.
Value* RandomF32Constant(GraphBuilder& b, const std::vector<int64_t>& shape, std::mt19937& rng,
                         const std::string& name);

// How many nodes of `g` run `op`.
int CountOps(const Graph& g, const std::string& op);

// One tensor per graph input, uniform in [-2, 2) from a generator seeded with `seed`; every
// symbolic dimension takes `symbol_value`.
std::vector<HostTensor> RandomInputs(const Graph& g, int64_t symbol_value, uint32_t seed);

// Runs both graphs on `inputs` with the float64 interpreter and expects every output element
// within tolerance * (1 + |want|) of `before`'s (gtest failures, not a status).
void ExpectSameFloat64Values(const Graph& before, const Graph& after,
                             const std::vector<HostTensor>& inputs, double tolerance);

}  // namespace coil::prims::testing

#endif  // COIL_PRIMS_REWRITE_TESTING_H_
