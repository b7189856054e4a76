// The example models (GPT-style decoder block, small ResNet): eager against torch (same
// parameters, examples_cases.py), then compiled with coil::compile against eager, over a
// dynamic batch (2, 3, 5), counting how often the model function itself runs.
// Usage: examples_test EXAMPLES_CASES.pb
#include <iostream>
#include <map>
#include <string>

#include "capture/compile.h"
#include "capture/examples/gpt_block.h"
#include "capture/examples/resnet.h"
#include "capture/nn/test_values.h"
#include "gtest/gtest.h"

namespace coil::examples {
namespace {

const std::map<std::string, HostTensor>* g_values = nullptr;
constexpr int kBatches[] = {2, 3, 5};

Tensor Value(const std::string& name) {
  auto it = g_values->find(name);
  if (it == g_values->end()) throw std::runtime_error("no value " + name + " in the cases file");
  return Tensor::FromHost(it->second);
}

std::string Batch(const std::string& what, int b) { return what + "_b" + std::to_string(b); }

// Eager: the model with torch's parameters reproduces torch's outputs at every batch size.
template <typename Model>
void CheckEagerAgainstTorch(Model& model, const std::string& name) {
  absl::Status loaded = model.LoadParameters(*g_values, name + ".");
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  for (int b : kBatches) {
    Tensor y = model(Value(name + "/" + Batch("x", b)));
    absl::Status s = nn::AllClose(y.host(), g_values->at(name + "/" + Batch("expected", b)),
                                  1e-4, 1e-5);
    EXPECT_TRUE(s.ok()) << name << " batch " << b << ": " << s.message();
  }
}

// Compiled with `dynamic`: equals eager at every batch size (and torch), a repeated call with
// the same shapes does not run the model function again, and the number of traces is
// `expected_compiles`. With `mark_batch`, the first input's batch dimension is marked dynamic
// (coil::mark_dynamic). `retraces`: traces repeated after a size was specialized (the function
// runs once more each time, within the same compile).
template <typename Model>
void CheckCompiledAgainstEager(Model& model, const std::string& name, DynamicMode dynamic,
                               int expected_compiles, bool mark_batch = false, int retraces = 0) {
  ASSERT_TRUE(model.LoadParameters(*g_values, name + ".").ok());
  int fn_calls = 0;
  auto f = compile(
      [&](const Tensor& x) {
        ++fn_calls;
        return model(x);
      },
      {.dynamic = dynamic, .name = name});
  for (int b : kBatches) {
    SCOPED_TRACE("batch " + std::to_string(b));
    Tensor x = Value(name + "/" + Batch("x", b));
    if (mark_batch && b == kBatches[0]) mark_dynamic(x, 0);
    HostTensor eager = model(x).host();
    int before = fn_calls;
    Tensor y = f(x);
    EXPECT_FALSE(y.is_lazy());
    absl::Status s = nn::AllClose(y.host(), eager, 1e-5, 1e-6);
    EXPECT_TRUE(s.ok()) << "compiled vs eager: " << s.message();
    s = nn::AllClose(y.host(), g_values->at(name + "/" + Batch("expected", b)), 1e-4, 1e-5);
    EXPECT_TRUE(s.ok()) << "compiled vs torch: " << s.message();
    EXPECT_LE(fn_calls - before, 1 + retraces);
    // Same shapes again (a fresh tensor): guards hit, the function does not run.
    int after_first = fn_calls;
    Tensor y2 = f(Tensor::FromHost(x.host().Contiguous()));
    EXPECT_EQ(fn_calls, after_first);
    EXPECT_TRUE(nn::AllClose(y2.host(), y.host(), 0, 0).ok());
  }
  EXPECT_EQ(fn_calls, expected_compiles + retraces);
  EXPECT_EQ(f.stats().compiles, expected_compiles);
  EXPECT_EQ(f.stats().graph_breaks, 0);
  EXPECT_EQ(f.stats().graphs_compiled, expected_compiles);
  EXPECT_EQ(f.stats().eager_fallbacks, 0);
  EXPECT_EQ(f.stats().calls, 2 * std::size(kBatches));
}

TEST(GptBlock, EagerMatchesTorch) {
  GptBlock block(16, 2);
  CheckEagerAgainstTorch(block, "gpt");
}

// kAuto: static for batch 2, symbolic batch after batch 3 differs, batch 5 reuses it.
TEST(GptBlock, CompiledMatchesEagerWithAutomaticDynamicBatch) {
  GptBlock block(16, 2);
  CheckCompiledAgainstEager(block, "gpt", DynamicMode::kAuto, 2);
}

// mark_dynamic on the batch dimension: one compile serves every batch size.
TEST(GptBlock, CompiledMatchesEagerWithMarkedDynamicBatch) {
  GptBlock block(16, 2);
  CheckCompiledAgainstEager(block, "gpt", DynamicMode::kAuto, 1, /*mark_batch=*/true);
}

// With kDynamic the embedding dimension starts as a symbol too; the residual add needs it equal
// to the parameters' static 16, so compile specializes it (as torch guards s == 16) and traces
// again: still one compile.
TEST(GptBlock, CompiledMatchesEagerWithDynamicEverything) {
  GptBlock block(16, 2);
  CheckCompiledAgainstEager(block, "gpt", DynamicMode::kDynamic, 1, /*mark_batch=*/false,
                            /*retraces=*/1);
}

TEST(GptBlock, CompiledStaticRecompilesPerBatch) {
  GptBlock block(16, 2);
  CheckCompiledAgainstEager(block, "gpt", DynamicMode::kStatic, 3);
}

// The sequence length varies (kAuto makes it symbolic on the second length): the causal mask
// is then built with symbolic sizes (explicit path: ones({L, S}) + triu), once.
TEST(GptBlock, CompiledDynamicSequenceLength) {
  for (bool sdpa : {true, false}) {
    SCOPED_TRACE(sdpa ? "sdpa" : "explicit matmuls");
    GptBlock block(16, 2, /*seed=*/1);
    block.attn.options.use_sdpa = sdpa;
    int fn_calls = 0;
    auto f = compile([&](const Tensor& x) {
      ++fn_calls;
      return block(x);
    });
    for (int len : {4, 6, 7, 6}) {
      Tensor x = Tensor::Randn({2, len, 16}, len);
      absl::Status s = nn::AllClose(f(x).host(), block(x).host(), 1e-5, 1e-6);
      EXPECT_TRUE(s.ok()) << "length " << len << ": " << s.message();
    }
    EXPECT_EQ(fn_calls, 2);
    EXPECT_EQ(f.stats().compiles, 2);
  }
}

TEST(SmallResNet, EagerMatchesTorch) {
  SmallResNet net(5);
  CheckEagerAgainstTorch(net, "resnet");
}

TEST(SmallResNet, CompiledMatchesEagerWithAutomaticDynamicBatch) {
  SmallResNet net(5);
  CheckCompiledAgainstEager(net, "resnet", DynamicMode::kAuto, 2);
}

// Every dimension symbolic (channels and spatial sizes included).
TEST(SmallResNet, CompiledMatchesEagerWithDynamicShapes) {
  SmallResNet net(5);
  CheckCompiledAgainstEager(net, "resnet", DynamicMode::kDynamic, 1);
}

// The models with their own deterministic init (no torch values) also compile to eager's
// numbers: a sanity check that construction by seed gives a usable model.
TEST(Examples, SeededModelsCompile) {
  GptBlock block(8, 2, /*seed=*/3);
  auto f = compile([&](const Tensor& x) { return block(x); });
  Tensor x = Tensor::Randn({2, 4, 8}, 1);
  EXPECT_TRUE(nn::AllClose(f(x).host(), block(x).host(), 1e-5, 1e-6).ok());
  SmallResNet net(3, /*seed=*/4);
  auto g = compile([&](const Tensor& x) { return net(x); });
  Tensor img = Tensor::Randn({2, 3, 6, 6}, 2);
  EXPECT_TRUE(nn::AllClose(g(img).host(), net(img).host(), 1e-5, 1e-6).ok());
}

}  // namespace
}  // namespace coil::examples

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " EXAMPLES_CASES.pb\n";
    return 2;
  }
  auto values = coil::nn::ReadNamedValues(argv[1]);
  if (!values.ok()) {
    std::cerr << values.status() << "\n";
    return 2;
  }
  coil::examples::g_values = &*values;
  return RUN_ALL_TESTS();
}
