// End to end training of torchvision's resnet18 structure (capture/examples/resnet18.h) on
// 32x32 images through coil::compile against Debian's torch 1.13 (resnet_training.py): the
// same initial weights and batch, batch_norm in training mode, cross entropy, AdamW (lr 1e-3,
// weight decay 0.01). Each step: the compiled training function's forward (joint graph,
// min-cut, CPU backend), backward() through its compiled backward graph, the compiled AdamW
// graph. Every step's loss must be within the tolerance (argv[2], relative) of torch's, or,
// when the data has torch's float64 run (the 50-step test), as close to it as torch's own
// float32 losses are; the loss must fall; when the data has them, the first step's gradients
// must match torch's too, and after the short run so must every batch_norm's running statistics
// (updated in place by the compiled forward).
//
// Usage: resnet_training_test DATA.pb RTOL   (the BUILD file's two targets: a narrow model
// for a few steps in CI, the full-width resnet18 for 50 steps as a manual large test)
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "capture/examples/resnet18.h"
#include "capture/nn/nn.h"
#include "capture/nn/test_values.h"
#include "coil.h"
#include "coil_optim.h"
#include "gtest/gtest.h"

namespace coil {
namespace {

std::string& DataPath() {
  static std::string path;
  return path;
}

double& Rtol() {
  static double rtol = 1e-4;
  return rtol;
}

bool IsRunningStat(const std::string& name) {
  return name.ends_with("running_mean") || name.ends_with("running_var");
}

TEST(ResNetTraining, AdamWStepsMatchTorch) {
  absl::StatusOr<std::map<std::string, HostTensor>> data = nn::ReadNamedValues(DataPath());
  ASSERT_TRUE(data.ok()) << data.status();
  const int64_t width = data->at("param.conv1.weight").shape()[0];
  examples::ResNet18 model(/*num_classes=*/10, width);
  ASSERT_TRUE(model.LoadParameters(*data, "param.").ok());
  model.SetTraining(true);
  std::vector<Tensor> params;
  for (auto& [name, t] : model.NamedTensors()) {
    if (IsRunningStat(name)) continue;
    t->set_requires_grad(true);
    params.push_back(*t);
  }
  ASSERT_EQ(params.size(), 62u);  // torchvision resnet18's named_parameters()
  Tensor x = Tensor::FromHost(data->at("x"));
  Tensor targets = Tensor::FromHost(data->at("targets"));
  std::vector<double> want = Tensor::FromHost(data->at("losses")).tolist();

  auto step = compile([&](const Tensor& images, const Tensor& labels) {
    return nn::cross_entropy(model(images), labels);
  });
  optim::AdamW opt(params, {.lr = 1e-3, .weight_decay = 0.01});
  std::vector<double> losses;
  for (size_t i = 0; i < want.size(); ++i) {
    opt.zero_grad();
    Tensor loss = step(x, targets);
    loss.backward();
    losses.push_back(loss.item());
    if (i == 0 && data->count("grad.fc.weight")) {
      for (auto& [name, t] : model.NamedTensors()) {
        if (IsRunningStat(name)) continue;
        ASSERT_TRUE(t->grad().defined()) << name;
        // Max-norm relative: elementwise relative errors are meaningless for the many
        // near-zero gradients.
        HostTensor want_grad = data->at("grad." + name);
        std::vector<double> got = t->grad().tolist();
        std::vector<double> ref = Tensor::FromHost(want_grad).tolist();
        ASSERT_EQ(got.size(), ref.size()) << name;
        double worst = 0, scale = 0;
        for (size_t k = 0; k < got.size(); ++k) {
          worst = std::max(worst, std::abs(got[k] - ref[k]));
          scale = std::max(scale, std::abs(ref[k]));
        }
        EXPECT_LE(worst, 1e-3 * scale + 1e-7) << name << ": gradient differs from torch's";
      }
    }
    opt.step();
  }
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    worst = std::max(worst, std::abs(losses[i] - want[i]) / std::abs(want[i]));
  }
  // The first step's loss is the forward alone from the same weights: always within rtol.
  EXPECT_NEAR(losses[0], want[0], Rtol() * std::abs(want[0]));
  if (!data->count("losses_f64")) {
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR(losses[i], want[i], Rtol() * std::abs(want[i])) << "step " << i;
    }
  } else {
    // Over many steps float32 rounding alone moves the losses further than rtol (torch's own
    // float32 run against its float64 run, resnet_training.py): coil's float32 losses must
    // stay as close to the float64 run as torch's float32 losses do (within 2x their worst
    // relative difference at every step so far).
    std::vector<double> exact = Tensor::FromHost(data->at("losses_f64")).tolist();
    ASSERT_EQ(exact.size(), want.size());
    double torch_drift = 0, coil_drift = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      torch_drift = std::max(torch_drift, std::abs(want[i] - exact[i]) / exact[i]);
      double d = std::abs(losses[i] - exact[i]) / exact[i];
      coil_drift = std::max(coil_drift, d);
      EXPECT_LE(d, std::max(2 * torch_drift, Rtol())) << "step " << i;
    }
    std::printf(
        "relative to torch's float64 run: coil float32 worst %.2e, torch float32 "
        "worst %.2e\n",
        coil_drift, torch_drift);
  }
  EXPECT_LT(losses.back(), losses.front()) << "the loss did not fall";
  // Training-mode batch_norm updated the running statistics in place, inside the compiled
  // forward, as torch's did (compared where the losses are: the short run).
  if (!data->count("losses_f64")) {
    int compared = 0;
    for (auto& [name, t] : model.NamedTensors()) {
      if (!IsRunningStat(name)) continue;
      auto it = data->find("trained." + name);
      ASSERT_NE(it, data->end()) << name;
      std::vector<double> a = Tensor::FromHost(it->second).tolist(), b = t->tolist();
      ASSERT_EQ(a.size(), b.size()) << name;
      double scale = 0, worst = 0;
      for (size_t i = 0; i < a.size(); ++i) {
        scale = std::max(scale, std::abs(a[i]));
        worst = std::max(worst, std::abs(a[i] - b[i]));
      }
      EXPECT_LE(worst, Rtol() * scale) << name << ": running statistic differs from torch's";
      ++compared;
    }
    EXPECT_EQ(compared, 40) << "resnet18 has 20 batch_norms";
  }
  EXPECT_EQ(step.stats().compiles, 1);
  EXPECT_EQ(step.stats().graph_breaks, 0);
  std::printf(
      "resnet18 width %lld, %zu steps: loss %.7f -> %.7f (torch %.7f -> %.7f), worst "
      "relative difference %.2e\n",
      static_cast<long long>(width), losses.size(), losses.front(), losses.back(), want.front(),
      want.back(), worst);
}

}  // namespace
}  // namespace coil

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc > 1) coil::DataPath() = argv[1];
  if (argc > 2) coil::Rtol() = std::atof(argv[2]);
  return RUN_ALL_TESTS();
}
