// mobilenet_v3_large's depthwise convolutions, its early pointwise ones and its first
// convolution, one at a time, through RunExternFused("aten.convolution") on an NHWC activation
// with the model's epilogue (relu / hardswish, the residual adds): median ms per call of each.
// Which kernel runs is the process's COIL_CONV_DIRECT (0: oneDNN, 1: conv_direct.h's kernels,
// unset: the default rule), so an A/B is two processes (docs/benchmarks.md, helper-58).
//
//   conv_direct_micro [--batch 16] [--threads 1] [--seconds 0.2] [--filter dw]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/cpu/externs.h"
#include "runtime/cpu/thread_pool.h"
#include "tools/bench/cpu_bench_timing.h"

namespace coil::cpu {
namespace {

struct Conv {
  const char* name;
  int64_t c, h, oc, k, stride;
  bool depthwise;
  ExternEpilogueStep::Kind act;  // kAdd: a residual add, no activation
  bool nchw_input = false;       // the first convolution reads the model's NCHW image
};

constexpr auto kRelu = ExternEpilogueStep::kRelu;
constexpr auto kHs = ExternEpilogueStep::kHardswish;
constexpr auto kAdd = ExternEpilogueStep::kAdd;

// In the model's order (torchvision's inverted-residual settings), one of each shape.
const Conv kConvs[] = {
    {"first 3->16 3x3/2 224", 3, 224, 16, 3, 2, false, kHs, true},
    {"dw 3x3 16 @112", 16, 112, 16, 3, 1, true, kRelu},
    {"pw 16->16 @112 +res", 16, 112, 16, 1, 1, false, kAdd},
    {"pw 16->64 @112", 16, 112, 64, 1, 1, false, kRelu},
    {"dw 3x3/2 64 112->56", 64, 112, 64, 3, 2, true, kRelu},
    {"pw 64->24 @56", 64, 56, 24, 1, 1, false, kAdd},
    {"pw 24->72 @56", 24, 56, 72, 1, 1, false, kRelu},
    {"dw 3x3 72 @56", 72, 56, 72, 3, 1, true, kRelu},
    {"pw 72->24 @56 +res", 72, 56, 24, 1, 1, false, kAdd},
    {"dw 5x5/2 72 56->28", 72, 56, 72, 5, 2, true, kRelu},
    {"pw 40->120 @28", 40, 28, 120, 1, 1, false, kRelu},
    {"dw 5x5 120 @28", 120, 28, 120, 5, 1, true, kRelu},
    {"dw 3x3/2 240 28->14", 240, 28, 240, 3, 2, true, kHs},
    {"dw 3x3 200 @14", 200, 14, 200, 3, 1, true, kHs},
    {"dw 3x3 184 @14", 184, 14, 184, 3, 1, true, kHs},
    {"dw 3x3 480 @14", 480, 14, 480, 3, 1, true, kHs},
    {"dw 3x3 672 @14", 672, 14, 672, 3, 1, true, kHs},
    {"dw 5x5/2 672 14->7", 672, 14, 672, 5, 2, true, kHs},
    {"dw 5x5 960 @7", 960, 7, 960, 5, 1, true, kHs},
};

std::vector<float> Random(int64_t size, int seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(size);
  for (float& f : v) f = u(rng);
  return v;
}

int Main(int argc, char** argv) {
  int64_t batch = 16;
  int threads = 1;
  double seconds = 0.2;
  std::string filter;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--batch") batch = std::atoll(argv[i + 1]);
    if (a == "--threads") threads = std::atoi(argv[i + 1]);
    if (a == "--seconds") seconds = std::atof(argv[i + 1]);
    if (a == "--filter") filter = argv[i + 1];
  }
  ThreadPool pool(threads);
  const char* mode = std::getenv("COIL_CONV_DIRECT");
  std::printf("batch %lld, %d threads, COIL_CONV_DIRECT=%s\n", static_cast<long long>(batch),
              threads, mode == nullptr ? "(rule)" : mode);
  double total = 0;
  for (const Conv& cv : kConvs) {
    if (!filter.empty() && std::string(cv.name).find(filter) == std::string::npos) continue;
    const int64_t pad = cv.k / 2, oh = (cv.h + 2 * pad - cv.k) / cv.stride + 1;
    const int64_t groups = cv.depthwise ? cv.c : 1, cg = cv.c / groups;
    std::vector<float> x = Random(batch * cv.c * cv.h * cv.h, 1),
                       w = Random(cv.oc * cg * cv.k * cv.k, 2), bias = Random(cv.oc, 3),
                       out(batch * oh * oh * cv.oc), res = Random(out.size(), 4);
    const std::vector<int64_t> xshape = cv.nchw_input
                                            ? std::vector<int64_t>{batch, cv.c, cv.h, cv.h}
                                            : std::vector<int64_t>{batch, cv.h, cv.h, cv.c};
    const ExternTensor xt{proto::FLOAT32, xshape, reinterpret_cast<char*>(x.data())};
    const ExternTensor wt{proto::FLOAT32, {cv.oc, cg, cv.k, cv.k},
                          reinterpret_cast<char*>(w.data()), true};
    const ExternTensor bt{proto::FLOAT32, {cv.oc}, reinterpret_cast<char*>(bias.data()), true};
    const ExternTensor ot{proto::FLOAT32, {batch, oh, oh, cv.oc},
                          reinterpret_cast<char*>(out.data())};
    const ExternTensor rt{proto::FLOAT32, {batch, oh, oh, cv.oc},
                          reinterpret_cast<char*>(res.data())};
    const AttrMap attrs = {{"stride", IntList{cv.stride}},
                           {"padding", IntList{pad}},
                           {"dilation", IntList{1}},
                           {"transposed", false},
                           {"groups", groups},
                           {"output_padding", IntList{0}},
                           {"coil.channels_last", IntList{cv.nchw_input ? 0 : 1, 1}}};
    std::vector<ExternEpilogueStep> steps;
    if (cv.act == kAdd) {
      steps.push_back({kAdd, 0, 0, &rt});
    } else {
      steps.push_back({cv.act});
    }
    const std::vector<ExternTensor> in = {xt, wt, bt};
    ExternStateSlot state;
    auto call = [&]() -> absl::Status {
      absl::StatusOr<bool> r =
          RunExternFused("aten.convolution", ExternArgs{in, ot, attrs, threads, &state, &pool},
                         steps);
      if (!r.ok()) return r.status();
      return *r ? absl::OkStatus() : absl::InternalError("not fused");
    };
    // Five untimed calls first: plans, packing and the site's trials.
    const bench::TimingPolicy policy{
        .warmup = 5, .min_reps = 10, .max_reps = 2000, .min_seconds = seconds};
    const absl::StatusOr<bench::Timing> timing = bench::TimeRuns(policy, call);
    if (!timing.ok()) {
      std::fprintf(stderr, "%s: %s\n", cv.name, timing.status().ToString().c_str());
      return 1;
    }
    const double med = timing->median_ms;
    const double flops = 2.0 * batch * oh * oh * cv.oc * cg * cv.k * cv.k;
    total += med;
    std::printf("%-24s %8.1f MFLOP %9.4f ms %7.1f GFLOP/s\n", cv.name, flops / 1e6, med,
                flops / med / 1e6);
  }
  std::printf("%-24s %14s %9.4f ms\n", "sum", "", total);
  return 0;
}

}  // namespace
}  // namespace coil::cpu

int main(int argc, char** argv) { return coil::cpu::Main(argc, argv); }
