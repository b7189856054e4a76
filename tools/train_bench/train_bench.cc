// train_bench: one training step of the GPT-style decoder (token embedding, the pre-LN causal
// decoder block of capture/examples/gpt_block.h, a linear LM head; label-smoothed cross
// entropy; AdamW) through coil::compile on the CPU backend (compiled forward, compiled
// backward through the tape, the compiled AdamW graph) against torch 1.13 eager on this
// machine, measured in the same run (torch_train_step.py); prints both step times, their
// ratio, and the activation bytes the training compile saves against save-everything (from
// the aot_graphs log of the compile).
//
//   bazel run -c opt //tools/train_bench -- [--threads N] [--reps N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "capture/examples/gpt_decoder.h"
#include "capture/logging.h"
#include "capture/nn/nn.h"
#include "coil.h"
#include "coil_optim.h"

namespace coil {
namespace {

constexpr int64_t kV = 256, kE = 128, kH = 4, kL = 64, kB = 8;

using Gpt = examples::GptDecoder;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int Main(int argc, char** argv) {
  int threads = 2, reps = 20, warmup = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--threads") threads = std::atoi(argv[i + 1]);
    if (a == "--reps") reps = std::atoi(argv[i + 1]);
  }
  std::string log_path = "/tmp/coil_train_bench_aot.log";
  ConfigureLogs("aot_graphs", log_path);
  Gpt model(kV, kE, kH);
  std::vector<Tensor> params;
  for (auto& [name, t] : model.NamedTensors()) {
    t->set_requires_grad(true);
    params.push_back(*t);
  }
  std::vector<double> tok, tgt;
  for (int64_t i = 0; i < kB * kL; ++i) {
    tok.push_back(static_cast<double>((i * 7919) % kV));
    tgt.push_back(static_cast<double>((i * 104729 + 3) % kV));
  }
  Tensor tokens = Tensor::FromValues(tok, {kB, kL}, proto::INT64);
  Tensor targets = Tensor::FromValues(tgt, {kB * kL}, proto::INT64);
  auto loss_fn = compile([&](const Tensor& tokens, const Tensor& targets) {
    return nn::cross_entropy(model(tokens).reshape({kB * kL, kV}), targets, 0.1);
  });
  optim::AdamW opt(params, {.lr = 1e-3, .weight_decay = 0.01});
  auto step = [&] {
    opt.zero_grad();
    Tensor loss = loss_fn(tokens, targets);
    loss.backward();
    opt.step();
    return loss.item();
  };
  auto c0 = std::chrono::steady_clock::now();
  step();  // compiles
  double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
  ConfigureLogs("");
  for (int i = 1; i < warmup; ++i) step();
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    step();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                     .count());
  }
  double coil_ms = Median(ms), coil_min = *std::min_element(ms.begin(), ms.end());

  // torch with 1 thread and with `threads` (oversubscription can make more threads slower on a
  // loaded machine): the faster is the peer.
  double torch_ms = 0, torch_min = 0;
  int torch_threads = 0;
  for (int t : {1, threads}) {
    std::string cmd = absl::StrCat("OMP_NUM_THREADS=", t, " /usr/bin/python3 ",
                                   "tools/train_bench/torch_train_step.py ", kV, " ", kE, " ", kH,
                                   " ", kL, " ", kB, " ", t, " ", warmup, " ", reps);
    FILE* pipe = popen(cmd.c_str(), "r");
    double median = 0, min = 0;
    if (pipe == nullptr || std::fscanf(pipe, "torch_step_ms %lf %lf", &median, &min) != 2) {
      std::fprintf(stderr, "train_bench: running torch failed: %s\n", cmd.c_str());
      return 1;
    }
    pclose(pipe);
    std::printf("  torch 1.13 eager, %d thread(s): median %.2f ms, min %.2f ms\n", t, median, min);
    if (torch_threads == 0 || median < torch_ms) {
      torch_ms = median;
      torch_min = min;
      torch_threads = t;
    }
  }

  std::ifstream in(log_path);
  std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t at = log.find(": saved ");
  std::string saved = at == std::string::npos ? "?" : log.substr(at + 2, log.find('\n', at) - at - 2);

  std::printf("\nGPT decoder training step (V %lld, E %lld, heads %lld, L %lld, batch %lld; "
              "label-smoothed CE, AdamW), %d threads, %d reps\n",
              static_cast<long long>(kV), static_cast<long long>(kE), static_cast<long long>(kH),
              static_cast<long long>(kL), static_cast<long long>(kB), threads, reps);
  std::printf("  coil (coil::compile, CPU backend): median %.2f ms, min %.2f ms (first step with "
              "compile %.1f s)\n",
              coil_ms, coil_min, compile_s);
  std::printf("  torch 1.13 eager (%d thread(s), its faster): median %.2f ms, min %.2f ms\n",
              torch_threads, torch_ms, torch_min);
  std::printf("  speed vs torch eager (median): %.2fx\n", torch_ms / coil_ms);
  std::printf("  activations: %s\n", saved.c_str());
  return 0;
}

}  // namespace
}  // namespace coil

int main(int argc, char** argv) { return coil::Main(argc, argv); }
