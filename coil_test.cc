// //:coil end to end: the example models (a GPT-style decoder block, a small ResNet) captured
// by coil::compile and compiled by InductorBackend (prims + inductor + Schedule interpreter)
// and by CpuBackend (+ LLVM code generation) give the eager results, across batch sizes from
// one dynamic compile.
#include <cmath>

#include "capture/examples/gpt_block.h"
#include "capture/examples/resnet.h"
#include "coil.h"
#include "gtest/gtest.h"
#include "runtime/testing/test_kit.h"

namespace coil {
namespace {

// Element-wise within tol * (1 + |want|), same dtype and shape (the test kit's ExpectClose).
void ExpectClose(const Tensor& got, const Tensor& want, double tol) {
  test_kit::ExpectClose(want.host(), got.host(),
                        {.abs = tol, .rel = tol, .nan_matches_nan = false}, got.TypeString());
}

TEST(InductorBackend, GptBlockMatchesEagerAcrossBatchSizes) {
  examples::GptBlock block(/*embed_dim=*/32, /*num_heads=*/4, /*seed=*/1);
  auto f = compile([&](const Tensor& x) { return block(x); },
                   {.dynamic = DynamicMode::kDynamic, .backend = InductorBackend(),
                    .name = "gpt_block"});
  for (int64_t batch : {2, 3, 5}) {
    Tensor x = Tensor::Randn({batch, 6, 32}, /*seed=*/batch);
    ExpectClose(f(x), block(x), 1e-5);
  }
  // The hidden size met the parameters' static 32 and was specialized; batch and sequence stay
  // symbolic, so one compile serves every batch size.
  EXPECT_EQ(f.stats().compiles, 1);
}

TEST(CpuBackend, GptBlockAndResNetMatchEager) {
  examples::GptBlock block(/*embed_dim=*/32, /*num_heads=*/4, /*seed=*/1);
  auto f = compile([&](const Tensor& x) { return block(x); },
                   {.dynamic = DynamicMode::kDynamic, .backend = CpuBackend(), .name = "gpt"});
  for (int64_t batch : {2, 5}) {
    Tensor x = Tensor::Randn({batch, 6, 32}, /*seed=*/batch);
    ExpectClose(f(x), block(x), 1e-5);
  }
  EXPECT_EQ(f.stats().compiles, 1);
  examples::SmallResNet net(/*num_classes=*/10, /*seed=*/2);
  auto g = compile([&](const Tensor& x) { return net(x); }, {.backend = CpuBackend()});
  Tensor x = Tensor::Randn({2, 3, 16, 16}, /*seed=*/3);
  ExpectClose(g(x), net(x), 1e-5);
}

TEST(CpuBackend, IsTheDefaultBackendOfCoilCompile) {
  EXPECT_EQ(DefaultBackend()->name(), "cpu");
  examples::SmallResNet net(/*num_classes=*/10, /*seed=*/2);
  auto f = compile([&](const Tensor& x) { return net(x); });
  Tensor x = Tensor::Randn({1, 3, 16, 16}, /*seed=*/4);
  ExpectClose(f(x), net(x), 1e-5);
}

TEST(InductorBackend, SmallResNetMatchesEager) {
  examples::SmallResNet net(/*num_classes=*/10, /*seed=*/2);
  auto f = compile([&](const Tensor& x) { return net(x); },
                   {.backend = InductorBackend(), .name = "resnet"});
  Tensor x = Tensor::Randn({2, 3, 16, 16}, /*seed=*/3);
  ExpectClose(f(x), net(x), 1e-5);
  ExpectClose(f(x), net(x), 1e-5);  // the cached artifact
}

TEST(InductorBackend, InPlaceUpdatesOfInputsAreWrittenBack) {
  auto f = compile(
      [](const Tensor& x, const Tensor& y) {
        x.add_(y);
        return x.relu();
      },
      {.backend = InductorBackend()});
  Tensor x = Tensor::FromValues({-1, 2, -3, 4}, {4});
  Tensor y = Tensor::FromValues({3, 3, 3, 3}, {4});
  Tensor out = f(x, y);
  EXPECT_EQ(out.tolist(), (std::vector<double>{2, 5, 0, 7}));
  EXPECT_EQ(x.tolist(), (std::vector<double>{2, 5, 0, 7})) << "x was updated in place";
}

}  // namespace
}  // namespace coil
