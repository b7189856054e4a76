// The main job's training section: the GPT-style decoder (capture/examples/gpt_decoder.h)
// trained with label-smoothed cross entropy and AdamW through coil::compile on the CPU backend
// (a training compile: joint graph, min-cut partition; the backward on the tape; the compiled
// AdamW graph), from torch 1.13's initial weights on torch's data, for as many steps as
// tests/training/gpt_training.py ran. Prints coil's and torch's loss side by side at every step
// and the activation bytes the partition saves against save-everything. Exit status 1 when a
// loss differs from torch's by more than 1e-4 (relative) or the loss does not fall.
//
//   /usr/bin/python3 tests/training/gpt_training.py DATA.txt 40
//   bazel-bin/tools/main_job/train_gpt DATA.txt
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "capture/examples/gpt_decoder.h"
#include "capture/logging.h"
#include "capture/nn/nn.h"
#include "coil.h"
#include "coil_optim.h"
#include "tests/training/gpt_training_data.h"

namespace coil {
namespace {

constexpr int64_t kV = 16, kE = 16, kH = 2, kL = 8, kB = 2;  // gpt_training.py's sizes

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: train_gpt DATA.txt   (written by tests/training/gpt_training.py)\n");
    return 2;
  }
  absl::StatusOr<std::map<std::string, training_data::Named>> data =
      training_data::LoadNamed(argv[1]);
  if (!data.ok()) {
    std::fprintf(stderr, "train_gpt: %s\n", std::string(data.status().message()).c_str());
    return 1;
  }
  examples::GptDecoder model(kV, kE, kH);
  std::map<std::string, HostTensor> init;
  for (const auto& [name, n] : *data) {
    if (name.rfind("param.", 0) == 0) {
      init[name.substr(6)] = HostTensor::FromDoubles(proto::FLOAT32, n.shape, n.values);
    }
  }
  if (absl::Status s = model.LoadParameters(init); !s.ok()) {
    std::fprintf(stderr, "train_gpt: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::vector<Tensor> params;
  for (auto& [name, t] : model.NamedTensors()) {
    t->set_requires_grad(true);
    params.push_back(*t);
  }
  auto get = [&](const std::string& name, DType dtype) {
    const training_data::Named& n = data->at(name);
    return Tensor::FromValues(n.values, n.shape, dtype);
  };
  const Tensor tokens = get("tokens", proto::INT64);
  const Tensor targets = get("targets", proto::INT64).reshape({kB * kL});
  const std::vector<double>& torch_losses = data->at("losses_a").values;

  const std::string log_path = "/tmp/coil_main_job_aot_graphs.log";
  ConfigureLogs("aot_graphs", log_path);
  auto step = compile([&](const Tensor& t, const Tensor& y) {
    return nn::cross_entropy(model(t).reshape({kB * kL, kV}), y, /*label_smoothing=*/0.1);
  });
  optim::AdamW opt(params, {.lr = 1e-2, .weight_decay = 0.01});
  std::printf("GPT-style decoder (vocab %lld, dim %lld, %lld heads, seq %lld, batch %lld): "
              "label-smoothed CE + AdamW through coil::compile vs torch 1.13\n",
              static_cast<long long>(kV), static_cast<long long>(kE), static_cast<long long>(kH),
              static_cast<long long>(kL), static_cast<long long>(kB));
  std::printf("  %4s  %12s  %12s  %9s\n", "step", "coil", "torch 1.13", "rel diff");
  double worst = 0, first = 0, last = 0;
  for (size_t i = 0; i < torch_losses.size(); ++i) {
    opt.zero_grad();
    Tensor loss = step(tokens, targets);
    loss.backward();
    opt.step();
    const double got = loss.item(), want = torch_losses[i];
    const double rel = std::abs(got - want) / std::abs(want);
    worst = std::max(worst, rel);
    if (i == 0) first = got;
    last = got;
    std::printf("  %4zu  %12.6f  %12.6f  %9.2e\n", i, got, want, rel);
    if (i == 0) ConfigureLogs("");  // the compile is logged; later steps hit the cache
  }
  std::ifstream in(log_path);
  const std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = log.find(": saved ");
  std::printf("  activations kept for the backward: %s\n",
              at == std::string::npos ? "(not logged)"
                                      : log.substr(at + 2, log.find('\n', at) - at - 2).c_str());
  std::printf("  compiles %lld, worst relative loss difference %.2e, loss %.4f -> %.4f\n",
              static_cast<long long>(step.stats().compiles), worst, first, last);
  if (worst > 1e-4 || !(last < 0.8 * first)) {
    std::fprintf(stderr, "train_gpt: %s\n",
                 worst > 1e-4 ? "coil's losses differ from torch's" : "the loss did not fall");
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace coil

int main(int argc, char** argv) { return coil::Main(argc, argv); }
