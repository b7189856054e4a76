// Graphs (coil text IR, a symbolic batch) that exercise every construct of the CUDA code
// generator: pointwise chains with broadcasts and views, reductions of every kind (NaN
// included), extern epilogues, gathers (indices from data), Philox, f16/bf16, integers and
// bools. Shared by the NVRTC test (cuda_codegen_test.cc) and the GPU test (cuda_gpu_test.cc);
// taken from codegen_cpu_test.cc so both backends are checked on the same programs.
#ifndef COIL_TESTS_CUDA_CUDA_TEST_GRAPHS_H_
#define COIL_TESTS_CUDA_CUDA_TEST_GRAPHS_H_

#include <string>
#include <utility>
#include <vector>

#include "runtime/testing/test_kit.h"

namespace coil::cuda_testing {

// Input distributions are test_kit's (runtime/testing/test_kit.h).
using InputSpec = test_kit::RandomInputSpec;

struct TestGraph {
  const char* name;
  const char* text;
  InputSpec spec;
};

inline const std::vector<TestGraph>& TestGraphs() {
  static const auto* graphs = new std::vector<TestGraph>{
      {"layer_norm_gelu_softmax", R"(
graph @block(%0 "x": f32[batch, 40], %1 "w": f32[40], %2 "b": f32[40], %3 "r": f32[batch, 40]) {
  symbol batch min 2 max 0 hint 4
  %4: f32[batch, 40] = aten.add(%0, %3) {alpha = 1}
  %5: f32[batch, 40] = aten.layer_norm(%4, %1, %2) {normalized_shape = [40], eps = 1e-05}
  %6: f32[batch, 40] = aten.gelu(%5) {approximate = "none"}
  %7: f32[batch, 40] = aten.softmax(%6) {dim = 1, dtype = none}
  %8: f32[batch, 40] = aten.log_softmax(%4) {dim = 1, dtype = none}
  return %7, %4, %8
}
)", {}},
      // Persistent rows (codegen_cuda/internal/row_cache.h): a bf16 layer_norm + residual with
      // 4 positions per group and 513 groups over 256 threads (the last group partial), softmax
      // and log_softmax over rows of 2999 (one position per group, 12 groups).
      {"wide_rows", R"(
graph @wide(%0 "x": bf16[batch, 2052], %1 "r": bf16[batch, 2052], %2 "w": bf16[2052], %3 "b": bf16[2052], %4 "y": f32[batch, 2999]) {
  symbol batch min 2 max 0 hint 4
  %5: bf16[batch, 2052] = aten.add(%0, %1) {alpha = 1}
  %6: bf16[batch, 2052] = aten.layer_norm(%5, %2, %3) {normalized_shape = [2052], eps = 1e-05}
  %7: bf16[batch, 2052] = aten.gelu(%6) {approximate = "none"}
  %8: f32[batch, 2999] = aten.softmax(%4) {dim = 1, dtype = none}
  %9: f32[batch, 2999] = aten.log_softmax(%4) {dim = 1, dtype = none}
  return %7, %8, %9
}
)", {}},
      {"linear_epilogue_reductions", R"(
graph @mlp(%0 "x": f32[batch, 6], %1 "w": f32[4, 6], %2 "b": f32[4]) {
  symbol batch min 2 max 0 hint 4
  %3: f32[batch, 4] = aten.linear(%0, %1, %2)
  %4: f32[batch, 4] = aten.relu(%3)
  %5: i64[batch] = aten.argmax(%4) {dim = [1], keepdim = false}
  %6: f32[4] = aten.mean(%4) {dim = [0], keepdim = false, dtype = none}
  %7: f32[batch, 4] = aten.cumsum(%3) {dim = 1, dtype = none}
  %8: i64[4] = aten.argmin(%3) {dim = [0], keepdim = false}
  %9: f32[batch] = aten.amin(%3) {dim = [1], keepdim = false}
  %10: f32[4] = aten.prod(%3) {dim = [0], keepdim = false, dtype = none}
  return %5, %6, %7, %8, %9, %10
}
)", {}},
      {"reductions_with_nan", R"(
graph @nan(%0 "x": f32[batch, 33]) {
  symbol batch min 2 max 0 hint 4
  %1: f32[batch] = aten.amax(%0) {dim = [1], keepdim = false}
  %2: i64[batch] = aten.argmax(%0) {dim = [1], keepdim = false}
  %3: i64[batch] = aten.argmin(%0) {dim = [1], keepdim = false}
  %4: f32[33] = aten.sum(%0) {dim = [0], keepdim = false, dtype = none}
  %5: f32[batch, 33] = aten.maximum(%0, %0)
  return %1, %2, %3, %4, %5
}
)", {.nan_rate = 0.05}},
      {"broadcast_transpose_chain", R"(
graph @chain(%0 "x": f32[batch, 4, 6], %1 "y": f32[6], %2 "z": f32[6, 4]) {
  symbol batch min 2 max 0 hint 4
  %3: f32[4, 6] = aten.transpose(%2) {dim0 = 0, dim1 = 1}
  %4: f32[batch, 4, 6] = aten.add(%0, %3) {alpha = 1}
  %5: f32[batch, 4, 6] = aten.mul(%4, %1)
  %6: f32[batch, 4, 6] = aten.sigmoid(%5)
  %7: f32[batch, 4, 6] = aten.tanh(%4)
  %8: f32[batch, 6, 4] = aten.permute(%7) {dims = [0, 2, 1]}
  %9: f32[batch, 4, 6] = aten.clamp(%5) {min = -0.5, max = 0.75, has_min = true, has_max = true}
  %10: f32[batch, 4, 6] = aten.div(%9, %6) {rounding_mode = ""}
  %11: f32[batch, 4, 6] = aten.remainder(%5, %1)
  %12: f32[batch, 4, 6] = aten.floor(%10)
  %13: f32[batch, 4, 6] = aten.round(%5)
  %14: f32[batch, 4, 6] = aten.exp(%7)
  %15: f32[batch, 4, 6] = aten.sqrt(%14)
  %16: f32[batch, 4, 6] = aten.erf(%4)
  return %8, %10, %11, %12, %13, %15, %16
}
)", {}},
      {"pad_cat_gather_embedding", R"(
graph @misc(%0 "x": f32[batch, 5], %1 "y": f32[batch, 3], %2 "idx": i64[batch, 4], %3 "table": f32[10, 5]) {
  symbol batch min 2 max 0 hint 8
  %4: f32[batch, 5] = aten.exp(%0)
  %5: f32[batch, 6] = aten.pad(%4) {mode = "constant", pad = [2, -1], value = 3.5}
  %6: f32[batch, 3] = aten.sin(%1)
  %7: f32[batch, 9] = aten.cat(%5, %6) {dim = 1}
  %8: f32[batch, 9] = aten.mul(%7, %7)
  %9: f32[batch, 4] = aten.gather(%8, %2) {dim = 1, sparse_grad = false}
  %10: f32[batch, 4, 5] = aten.embedding(%3, %2) {padding_idx = -1, scale_grad_by_freq = false, sparse = false}
  %11: f32[batch, 4, 5] = aten.tanh(%10)
  %12: i64[batch] = aten.argmax(%8) {dim = [1], keepdim = false}
  %13: f32[batch, 9] = aten.cumsum(%8) {dim = 1, dtype = none}
  %14: f32[batch, 9] = aten.neg(%13)
  %15: f32[5, batch] = aten.transpose(%4) {dim0 = 0, dim1 = 1}
  %16: f32[5, batch] = aten.relu(%15)
  return %9, %11, %12, %14, %16
}
)", {}},
      {"iota_and_philox", R"(
graph @rng(%0 "x": f32[batch, 7]) {
  symbol batch min 2 max 0 hint 4
  %1: f32[batch, 7] = prims.philox_uniform() {dtype = f32, offset = 5, seed = 123456789012, shape = syms[batch, 7]}
  %2: f32[batch, 7] = aten.add(%0, %1) {alpha = 1}
  %3: i64[7] = aten.arange() {start = 0, end = sym(7), step = 1, dtype = i64, has_dtype = true}
  %4: f32[batch, 7] = aten.mul(%2, %3)
  %5: f64[batch, 7] = prims.philox_uniform() {dtype = f64, offset = 0, seed = 3, shape = syms[batch, 7]}
  %6: f16[batch, 7] = prims.philox_uniform() {dtype = f16, offset = 9, seed = 3, shape = syms[batch, 7]}
  return %1, %4, %5, %6
}
)", {}},
      // A dropout's Philox counter offset as a run-time input (a symbol bound by its value).
      {"runtime_philox_offset", R"(
graph @rng_offset(%0 "x": f32[batch, 7], %1 "rng_offset0": i64[]) {
  symbol batch min 2 max 0 hint 4
  symbol rng_offset0 min 0 max 0 hint 0 value_of "rng_offset0"
  %2: f32[batch, 7] = prims.philox_uniform() {dtype = f32, offset = sym(rng_offset0 + 3), seed = 77, shape = syms[batch, 7]}
  %3: f32[batch, 7] = aten.dropout(%0) {offset = sym(rng_offset0), p = 0.25, seed = 5, train = true}
  %4: f32[batch, 7] = aten.add(%2, %3) {alpha = 1}
  return %4
}
)", {}},
      {"half_and_bfloat16", R"(
graph @half(%0 "a": f16[batch, 24], %1 "b": bf16[batch, 24], %2 "c": f32[batch, 24]) {
  symbol batch min 2 max 0 hint 4
  %3: f16[batch, 24] = aten.mul(%0, %0)
  %4: f16[batch, 24] = aten.add(%3, %0) {alpha = 1}
  %5: bf16[batch, 24] = aten.mul(%1, %1)
  %6: bf16[batch, 24] = aten.sub(%5, %1) {alpha = 1}
  %7: f32[batch, 24] = aten.add(%2, %0) {alpha = 1}
  %8: f32[batch, 24] = aten.add(%7, %1) {alpha = 1}
  %9: f16[batch] = aten.sum(%4) {dim = [1], keepdim = false, dtype = none}
  %10: bf16[batch, 24] = aten.softmax(%6) {dim = 1, dtype = none}
  %11: f16[batch, 24] = aten.exp(%0)
  %12: bf16[batch, 24] = aten.div(%6, %1) {rounding_mode = ""}
  return %4, %6, %8, %9, %10, %11, %12
}
)", {}},
      {"integers_and_bools", R"(
graph @ints(%0 "a": i64[batch, 10], %1 "b": i32[batch, 10], %2 "m": bool[batch, 10], %3 "u": u8[batch, 10], %4 "s": i8[10]) {
  symbol batch min 2 max 0 hint 4
  %5: i64[batch, 10] = aten.sub(%0, %1) {alpha = 3}
  %6: i64[batch, 10] = aten.remainder(%5, %1)
  %7: i64[batch, 10] = aten.floor_divide(%5, %0)
  %8: bool[batch, 10] = aten.ne(%5, %0)
  %9: bool[batch, 10] = aten.logical_and(%8, %2)
  %10: i64[batch, 10] = aten.where(%9, %5, %0)
  %11: i32[batch, 10] = aten.bitwise_and(%1, %1)
  %12: i64[batch] = aten.sum(%10) {dim = [1], keepdim = false, dtype = none}
  %13: f32[batch, 10] = aten.div(%5, %1) {rounding_mode = ""}
  %14: u8[batch, 10] = aten.mul(%3, %3)
  %15: i8[10] = aten.mul(%4, %4)
  %18: i32[batch, 10] = aten.add(%1, %4) {alpha = 1}
  %16: i64[batch] = aten.sum(%2) {dim = [1], keepdim = false, dtype = none}
  %17: i64[batch] = aten.argmax(%1) {dim = [1], keepdim = false}
  return %6, %7, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18
}
)", {.int_range = 100, .signed_nonzero = true}},
  };
  return *graphs;
}

// The memory-bound rows of `coil bench cuda` as the ONNX exporter writes them (scalar
// constants as one-element constants: 0.5, sqrt(2), ...), at row lengths that take the
// vectorized and persistent paths (256 / 8192: 16-byte accesses, 4 groups of 8 per thread), a
// partial last group (2056, 1000) and none of them (65, 2999): the gelu chain in f32, bf16
// softmax and gelu(layer_norm(x + r)) in bf16, an f16 layer norm with a rounded tail, and a
// division by a per-element value beside the divisions by constants and by a row's sum. Batch
// symbols start at 1.
inline const std::vector<TestGraph>& MemoryBoundGraphs() {
  const char* gelu = R"(
graph @gelu_chain(%0 "x": f32[batch, W], %16 "y": f32[batch, W]) {
  symbol batch min 1 max 0 hint 4
  %1 "c0": f32[] = constant dense "0000a03f"
  %2 "c1": f32[] = constant dense "0000003f"
  %3 "c2": f32[] = constant dense "f304b53f"
  %4 "c3": f32[] = constant dense "0000803f"
  %5 "c4": f32[] = constant dense "0000003f"
  %6 "c5": f32[] = constant dense "0000003e"
  %7: f32[batch, W] = aten.mul(%0, %1)
  %8: f32[batch, W] = aten.add(%7, %2) {alpha = 1}
  %9: f32[batch, W] = aten.div(%8, %3) {rounding_mode = ""}
  %10: f32[batch, W] = aten.erf(%9)
  %11: f32[batch, W] = aten.add(%10, %4) {alpha = 1}
  %12: f32[batch, W] = aten.mul(%8, %11)
  %13: f32[batch, W] = aten.mul(%12, %5)
  %14: f32[batch, W] = aten.mul(%13, %0)
  %15: f32[batch, W] = aten.sub(%14, %6) {alpha = 1}
  %17: f32[batch, W] = aten.div(%15, %16) {rounding_mode = ""}
  return %15, %17
}
)";
  const char* softmax = R"(
graph @softmax(%0 "x": bf16[batch, W], %2 "z": f32[batch, W]) {
  symbol batch min 1 max 0 hint 4
  %1: bf16[batch, W] = aten.softmax(%0) {dim = 1, dtype = none}
  %3: f32[batch, W] = aten.softmax(%2) {dim = 1, dtype = none}
  %4: f32[batch] = aten.amax(%2) {dim = [1], keepdim = false}
  return %1, %3, %4
}
)";
  const char* layernorm = R"(
graph @ln(%0 "x": bf16[batch, W], %1 "r": bf16[batch, W], %2 "w": bf16[W], %3 "b": bf16[W]) {
  symbol batch min 1 max 0 hint 4
  %4 "c": bf16[] = constant dense "b53f"
  %5 "one": bf16[] = constant dense "803f"
  %6 "half": bf16[] = constant dense "003f"
  %7: bf16[batch, W] = aten.add(%0, %1) {alpha = 1}
  %8: bf16[batch, W] = aten.layer_norm(%7, %2, %3) {eps = 1e-05, normalized_shape = [W]}
  %9: bf16[batch, W] = aten.div(%8, %4) {rounding_mode = ""}
  %10: bf16[batch, W] = aten.erf(%9)
  %11: bf16[batch, W] = aten.add(%10, %5) {alpha = 1}
  %12: bf16[batch, W] = aten.mul(%8, %11)
  %13: bf16[batch, W] = aten.mul(%12, %6)
  return %13
}
)";
  // An f16 tail for packed pairs (codegen_cuda/internal/packed_pairs.h): (y + 1) * x * 0.5 -
  // r, each step rounded to f16, after an f16 layer norm (f16x2 instructions).
  const char* f16_tail = R"(
graph @h(%0 "x": f16[batch, W], %1 "r": f16[batch, W], %2 "w": f16[W], %3 "b": f16[W]) {
  symbol batch min 1 max 0 hint 4
  %4 "one": f16[] = constant dense "003c"
  %5 "half": f16[] = constant dense "0038"
  %6: f16[batch, W] = aten.layer_norm(%0, %2, %3) {eps = 1e-05, normalized_shape = [W]}
  %7: f16[batch, W] = aten.add(%6, %4) {alpha = 1}
  %8: f16[batch, W] = aten.mul(%7, %0)
  %9: f16[batch, W] = aten.mul(%8, %5)
  %10: f16[batch, W] = aten.sub(%9, %1) {alpha = 1}
  return %10
}
)";
  // An unrounded f32 product read both as itself and rounded to bf16 (packed pairs must not
  // pair the rounded value for the unrounded read).
  const char* mixed = R"(
graph @m(%0 "x": bf16[batch, W], %1 "y": bf16[batch, W], %2 "w": bf16[W], %3 "b": bf16[W]) {
  symbol batch min 1 max 0 hint 4
  %4: bf16[batch, W] = aten.layer_norm(%0, %2, %3) {eps = 1e-05, normalized_shape = [W]}
  %5: f32[batch, W] = aten.to_dtype(%4) {dtype = f32}
  %6: f32[batch, W] = aten.to_dtype(%1) {dtype = f32}
  %7: f32[batch, W] = aten.mul(%5, %6)
  %8: bf16[batch, W] = aten.to_dtype(%7) {dtype = bf16}
  %9: f32[batch, W] = aten.to_dtype(%8) {dtype = f32}
  %10: f32[batch, W] = aten.add(%9, %7) {alpha = 1}
  %11: bf16[batch, W] = aten.to_dtype(%10) {dtype = bf16}
  return %11
}
)";
  static const auto* texts = [&] {
    auto* t = new std::vector<std::pair<std::string, std::string>>;
    auto add = [&](const std::string& name, const char* text, int width) {
      std::string s = text;
      for (size_t p = s.find('W'); p != std::string::npos; p = s.find('W', p)) {
        s.replace(p, 1, std::to_string(width));
      }
      t->push_back({name + "_" + std::to_string(width), s});
    };
    for (int w : {256, 65}) add("gelu_chain", gelu, w);
    for (int w : {8192, 1000, 2999}) add("softmax", softmax, w);
    add("f16_tail", f16_tail, 2048);
    add("mixed_rounding", mixed, 2048);
    for (int w : {8192, 2056}) add("layernorm_gelu", layernorm, w);
    return t;
  }();
  // Built once and kept (a reference into a returned temporary would dangle).
  static const auto* graphs = [] {
    auto* out = new std::vector<TestGraph>;
    for (const auto& [name, text] : *texts) out->push_back({name.c_str(), text.c_str(), {}});
    return out;
  }();
  return *graphs;
}

}  // namespace coil::cuda_testing

#endif  // COIL_TESTS_CUDA_CUDA_TEST_GRAPHS_H_
