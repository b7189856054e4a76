// End to end training through coil::compile against Debian's torch 1.13 (gpt_training.py): a
// GPT-style decoder (token embedding, the pre-LN causal decoder block of
// capture/examples/gpt_block.h, a linear LM head) starts from torch's initial weights and
// trains on the same data with coil::optim::AdamW. Each step: the compiled function's
// forward (a training compile: joint graph, min-cut, CPU backend), backward() through its
// compiled backward graph, the compiled AdamW graph. Every step's loss must be within 1e-4
// (relative) of torch's, and the loss must fall.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "capture/examples/gpt_decoder.h"
#include "capture/nn/nn.h"
#include "coil.h"
#include "coil_optim.h"
#include "gtest/gtest.h"
#include "tests/training/gpt_training_data.h"

namespace coil {
namespace {

constexpr int64_t kV = 16, kE = 16, kH = 2, kL = 8, kB = 2;

std::string& DataPath() {
  static std::string path;
  return path;
}

using training_data::Named;
using Gpt = examples::GptDecoder;

struct Trainer {
  std::map<std::string, Named> data;
  Gpt model{kV, kE, kH};
  std::vector<Tensor> params;
  Tensor tokens, targets, soft;
};

void Init(Trainer& s) {
  absl::StatusOr<std::map<std::string, Named>> data = training_data::LoadNamed(DataPath());
  ASSERT_TRUE(data.ok()) << data.status();
  s.data = *std::move(data);
  std::map<std::string, HostTensor> values;
  for (const auto& [name, n] : s.data) {
    if (name.rfind("param.", 0) == 0) {
      values[name.substr(6)] = HostTensor::FromDoubles(proto::FLOAT32, n.shape, n.values);
    }
  }
  ASSERT_TRUE(s.model.LoadParameters(values).ok());
  for (auto& [name, t] : s.model.NamedTensors()) {
    t->set_requires_grad(true);
    s.params.push_back(*t);
  }
  ASSERT_EQ(s.params.size(), 15u);
  auto get = [&](const std::string& name, DType dtype) {
    const Named& n = s.data.at(name);
    return Tensor::FromValues(n.values, n.shape, dtype);
  };
  s.tokens = get("tokens", proto::INT64);
  s.targets = get("targets", proto::INT64).reshape({kB * kL});
  s.soft = get("soft", proto::FLOAT32);
}

// The first step's gradient of every parameter against torch's.
void ExpectFirstGradsMatch(Trainer& s, const std::string& run) {
  for (auto& [name, t] : s.model.NamedTensors()) {
    const Named& want = s.data.at("grad_" + run + "." + name);
    ASSERT_TRUE(t->grad().defined()) << name;
    std::vector<double> got = t->grad().tolist();
    ASSERT_EQ(got.size(), want.values.size()) << name;
    double worst = 0, scale = 0;
    size_t at = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      if (std::abs(got[i] - want.values[i]) > worst) at = i;
      worst = std::max(worst, std::abs(got[i] - want.values[i]));
      scale = std::max(scale, std::abs(want.values[i]));
    }
    EXPECT_LE(worst, 1e-4 * scale + 1e-7)
        << name << ": gradient differs from torch's (element " << at << ": " << got[at]
        << " vs torch " << want.values[at] << ")";
  }
}

void ExpectLossesMatch(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-4 * std::abs(want[i])) << "step " << i;
  }
  EXPECT_LT(got.back(), 0.8 * got.front()) << "the loss did not fall";
}

TEST(GptTraining, CrossEntropyWithLabelSmoothingMatchesTorchAdamW) {
  Trainer s;
  Init(s);
  // The whole forward and the loss: one compiled segment on the tape.
  auto step = compile([&](const Tensor& tokens, const Tensor& targets) {
    Tensor logits = s.model(tokens);
    return nn::cross_entropy(logits.reshape({kB * kL, kV}), targets, /*label_smoothing=*/0.1);
  });
  optim::AdamW opt(s.params, {.lr = 1e-2, .weight_decay = 0.01});
  std::vector<double> losses;
  for (size_t i = 0; i < s.data.at("losses_a").values.size(); ++i) {
    opt.zero_grad();
    Tensor loss = step(s.tokens, s.targets);
    loss.backward();
    losses.push_back(loss.item());
    if (i == 0) ExpectFirstGradsMatch(s, "a");
    opt.step();
  }
  ExpectLossesMatch(losses, s.data.at("losses_a").values);
  EXPECT_EQ(step.stats().compiles, 1);
  EXPECT_EQ(step.stats().graph_breaks, 0);
}

TEST(GptTraining, EagerTapeGradientsMatchTorch) {
  Trainer s;
  Init(s);
  Tensor logits = s.model(s.tokens);
  nn::cross_entropy(logits.reshape({kB * kL, kV}), s.targets, 0.1).backward();
  ExpectFirstGradsMatch(s, "a");
}

TEST(GptTraining, StepWithGraphBreakAndMseMatchesTorch) {
  Trainer s;
  Init(s);
  int64_t positive = 0;
  auto step = compile([&](const Tensor& tokens, const Tensor& targets, const Tensor& soft) {
    Tensor logits = s.model(tokens);
    // Reading a value is a graph break: the model and the loss are two compiled segments,
    // chained on the tape.
    positive += static_cast<int64_t>((logits > 0.0).sum().item());
    Tensor ce = nn::cross_entropy(logits.reshape({kB * kL, kV}), targets);
    return ce + nn::mse_loss(logits, soft) * 0.5;
  });
  optim::AdamW opt(s.params, {.lr = 1e-2, .weight_decay = 0.01});
  std::vector<double> losses;
  for (size_t i = 0; i < s.data.at("losses_b").values.size(); ++i) {
    opt.zero_grad();
    Tensor loss = step(s.tokens, s.targets, s.soft);
    loss.backward();
    losses.push_back(loss.item());
    if (i == 0) ExpectFirstGradsMatch(s, "b");
    opt.step();
  }
  ExpectLossesMatch(losses, s.data.at("losses_b").values);
  EXPECT_EQ(step.stats().graph_breaks, static_cast<int64_t>(losses.size()));
  EXPECT_GT(positive, 0);
}

}  // namespace
}  // namespace coil

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc > 1) coil::DataPath() = argv[1];
  return RUN_ALL_TESTS();
}
