// The transformer rows' f32 GEMMs against constant weights, one shape at a time: coil's own
// GEMM (runtime/cpu/internal/own_gemm.h) against oneDNN's packed-weight matmul (aten.mm
// through RunExtern / RunExternFused with COIL_OWN_GEMM=0, which this binary sets), alternated
// in rounds within one process; median ms per call and TFLOP/s of each, best round's medians.
// With --set resnet50, resnet50's stride-1 1x1 convolutions at --batch instead (M = batch * H *
// W rows of the NHWC activation, the conv's bias and relu / residual add + relu), and the
// oneDNN arm is aten.convolution on that activation (its 1x1 kernel, COIL_CONV_DIRECT=0); then
// its stride-1 3x3 convolutions, oneDNN alone (for COIL_CONV_LAYOUT / OMP_WAIT_POLICY A/Bs).
//
//   own_gemm_micro [--threads 16] [--seconds 0.15] [--rounds 3] [--filter 768x3072]
//                  [--set resnet50 --batch 1] [--cold 1]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/cpu/externs.h"
#include "runtime/cpu/internal/own_gemm.h"
#include "runtime/cpu/thread_pool.h"
#include "tools/bench/cpu_bench_timing.h"

namespace coil::cpu {
namespace {

struct Shape {
  int64_t m, k, n;
  ExternEpilogueStep::Kind act;  // kBias: bias alone; kRelu: none (plain mm)
};

constexpr auto kNone = ExternEpilogueStep::kRelu;
constexpr auto kBias = ExternEpilogueStep::kBias;
constexpr auto kGelu = ExternEpilogueStep::kGeluErf;
constexpr auto kAdd = ExternEpilogueStep::kAdd;  // bias + residual

// BERT / GPT-2 at batch 1 and 8 (M = 128, 1024), vit_b_16 at batch 1 and 8 (197, 1576); the
// LM head at batch 1.
const Shape kShapes[] = {
    {128, 768, 2304, kNone},  {128, 768, 2304, kBias}, {128, 768, 768, kAdd},
    {128, 768, 3072, kGelu},  {128, 3072, 768, kAdd},  {128, 768, 50257, kNone},
    {197, 768, 2304, kBias},  {197, 768, 3072, kGelu}, {197, 3072, 768, kAdd},
    {1024, 768, 2304, kBias}, {1024, 768, 768, kAdd},  {1024, 768, 3072, kGelu},
    {1024, 3072, 768, kAdd},  {1576, 768, 2304, kBias}, {1576, 768, 3072, kGelu},
    {1576, 3072, 768, kAdd},
};

// resnet50's stride-1 pointwise convolutions (image side, in, out, epilogue), one of each.
struct Pointwise {
  int64_t side, c, oc;
  ExternEpilogueStep::Kind act;  // kRelu: bias + relu; kAdd: bias + residual + relu; kBias
  int64_t k = 1;                 // 3: a 3x3 convolution (padding 1): oneDNN only
};
const Pointwise kResnet50[] = {
    {56, 64, 64, ExternEpilogueStep::kRelu},    {56, 64, 256, kAdd},
    {56, 64, 256, kBias},                       {56, 256, 64, ExternEpilogueStep::kRelu},
    {56, 256, 128, ExternEpilogueStep::kRelu},  {28, 128, 512, kAdd},
    {28, 512, 128, ExternEpilogueStep::kRelu},  {28, 512, 256, ExternEpilogueStep::kRelu},
    {14, 256, 1024, kAdd},                      {14, 1024, 256, ExternEpilogueStep::kRelu},
    {14, 1024, 512, ExternEpilogueStep::kRelu}, {7, 512, 2048, kAdd},
    {7, 2048, 512, ExternEpilogueStep::kRelu},
    {56, 64, 64, ExternEpilogueStep::kRelu, 3},  {28, 128, 128, ExternEpilogueStep::kRelu, 3},
    {14, 256, 256, ExternEpilogueStep::kRelu, 3}, {7, 512, 512, ExternEpilogueStep::kRelu, 3},
};

std::vector<float> Random(int64_t size, int seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(size);
  for (float& f : v) f = u(rng);
  return v;
}

// Median ms per call of `fn` after one untimed call; exits on an error.
double MedianMs(absl::FunctionRef<absl::Status()> fn, double seconds) {
  const bench::TimingPolicy policy{
      .warmup = 1, .min_reps = 5, .max_reps = 2000, .min_seconds = seconds};
  const absl::StatusOr<bench::Timing> t = bench::TimeRuns(policy, fn);
  if (!t.ok()) {
    std::fprintf(stderr, "%s\n", t.status().ToString().c_str());
    std::exit(1);
  }
  return t->median_ms;
}

// --set resnet50: own GEMM against oneDNN's convolution on the NHWC activation.
void RunPointwise(int64_t batch, int threads, int rounds, double seconds, ThreadPool& pool) {
  setenv("COIL_CONV_DIRECT", "0", 1);
  std::printf("resnet50 1x1 convolutions, batch %lld, %d threads; ms per call (median)\n",
              static_cast<long long>(batch), threads);
  std::printf("%-28s %8s %10s %10s %7s %9s\n", "HxW CxOC epilogue", "MFLOP", "oneDNN ms",
              "own ms", "own x", "max|diff|");
  double sum_dnn = 0, sum_own = 0;
  for (const Pointwise& p : kResnet50) {
    const int64_t m = batch * p.side * p.side, k = p.c, n = p.oc;
    const int64_t taps = p.k * p.k;
    std::vector<float> x = Random(m * k, 1), wconv = Random(n * k * taps, 2), bias = Random(n, 3),
                       res = Random(m * n, 4), out_dnn(m * n), out_own(m * n), wgemm(k * n);
    for (int64_t o = 0; o < n && p.k == 1; ++o) {
      for (int64_t c = 0; c < k; ++c) wgemm[c * n + o] = wconv[o * k + c];
    }
    const ExternTensor xt{proto::FLOAT32, {batch, p.side, p.side, k},
                          reinterpret_cast<char*>(x.data())};
    const ExternTensor wt{proto::FLOAT32, {n, k, p.k, p.k},
                          reinterpret_cast<char*>(wconv.data()), true};
    const ExternTensor bt{proto::FLOAT32, {n}, reinterpret_cast<char*>(bias.data()), true};
    const ExternTensor ot{proto::FLOAT32, {batch, p.side, p.side, n},
                          reinterpret_cast<char*>(out_dnn.data())};
    const ExternTensor rt{proto::FLOAT32, {batch, p.side, p.side, n},
                          reinterpret_cast<char*>(res.data())};
    const AttrMap attrs = {{"stride", IntList{1}},        {"padding", IntList{p.k / 2}},
                           {"dilation", IntList{1}},      {"transposed", false},
                           {"groups", int64_t{1}},        {"output_padding", IntList{0}},
                           {"coil.channels_last", IntList{1, 1}}};
    std::vector<ExternEpilogueStep> post;  // after the bias
    if (p.act == kAdd) post.push_back({kAdd, 0, 0, &rt});
    if (p.act != kBias) post.push_back({ExternEpilogueStep::kRelu});
    const std::vector<ExternTensor> in = {xt, wt, bt};
    ExternStateSlot state;
    auto dnn = [&]() -> absl::Status {
      if (post.empty()) {
        return RunExtern("aten.convolution", ExternArgs{in, ot, attrs, threads, &state, &pool});
      }
      absl::StatusOr<bool> st = RunExternFused(
          "aten.convolution", ExternArgs{in, ot, attrs, threads, &state, &pool}, post);
      if (!st.ok()) return st.status();
      return *st ? absl::OkStatus() : absl::InternalError("aten.convolution not fused");
    };
    internal::OwnGemmWeights packed;
    packed.Pack(wgemm.data(), k, n);
    auto own = [&] {
      internal::OwnGemm(x.data(), m, k, packed, bias.data(), post, out_own.data(), n, threads,
                        &pool);
      return absl::OkStatus();
    };
    double best_dnn = 1e30, best_own = 1e30;
    for (int r = 0; r < rounds; ++r) {
      best_dnn = std::min(best_dnn, MedianMs(dnn, seconds));
      if (p.k == 1) best_own = std::min(best_own, MedianMs(own, seconds));
    }
    double diff = 0;
    for (size_t i = 0; i < out_own.size() && p.k == 1; ++i) {
      diff = std::max<double>(diff, std::abs(out_own[i] - out_dnn[i]));
    }
    if (p.k != 1) best_own = best_dnn;  // no own kernel: the ratio reads 1
    char name[64];
    std::snprintf(name, sizeof name, "%s%lldx%lld %lldx%lld%s", p.k == 3 ? "3x3 " : "",
                  static_cast<long long>(p.side),
                  static_cast<long long>(p.side), static_cast<long long>(k),
                  static_cast<long long>(n),
                  p.act == kAdd ? " +res,relu" : p.act == kBias ? "" : " relu");
    sum_dnn += best_dnn;
    sum_own += best_own;
    std::printf("%-28s %8.1f %10.4f %10.4f %7.2f %9.2e\n", name, 2.0 * m * k * n * taps * 1e-6,
                best_dnn, best_own, best_dnn / best_own, diff);
    std::fflush(stdout);
  }
  std::printf("%-28s %8s %10.4f %10.4f %7.2f\n", "sum", "", sum_dnn, sum_own, sum_dnn / sum_own);
}

// --cold: each call after writing a buffer larger than the caches (so that the weights come
// from memory, as in a model whose weights do not fit the caches); median ms of the calls
// alone, `reps` of them.
bool cold = false;
double ColdMedianMs(absl::FunctionRef<absl::Status()> fn, int reps) {
  static std::vector<char>* flush = new std::vector<char>(size_t{1} << 29, 1);
  std::vector<double> ms;
  for (int r = 0; r < reps + 1; ++r) {
    for (size_t i = 0; i < flush->size(); i += 64) (*flush)[i] += 1;
    const auto t0 = std::chrono::steady_clock::now();
    if (absl::Status s = fn(); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      std::exit(1);
    }
    const auto t1 = std::chrono::steady_clock::now();
    if (r > 0) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

int Main(int argc, char** argv) {
  int threads = 16, rounds = 3;
  double seconds = 0.15;
  std::string filter, set;
  int64_t batch = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--set") set = argv[i + 1];
    if (a == "--cold") cold = std::string(argv[i + 1]) == "1";
    if (a == "--batch") batch = std::atoll(argv[i + 1]);
    if (a == "--threads") threads = std::atoi(argv[i + 1]);
    if (a == "--seconds") seconds = std::atof(argv[i + 1]);
    if (a == "--rounds") rounds = std::atoi(argv[i + 1]);
    if (a == "--filter") filter = argv[i + 1];
  }
  setenv("COIL_OWN_GEMM", "0", 1);  // RunExtern's aten.mm: oneDNN; OwnGemm is called directly
  if (!internal::OwnGemmCpu()) {
    std::printf("no AVX-512F: nothing to compare\n");
    return 0;
  }
  ThreadPool pool(threads);
  if (set == "resnet50") {
    RunPointwise(batch, threads, rounds, seconds, pool);
    return 0;
  }
  const char* kc = std::getenv("COIL_OWN_GEMM_KC");
  std::printf("%d threads, COIL_OWN_GEMM_KC=%s; ms per call (median), TFLOP/s\n", threads,
              kc == nullptr ? "(default)" : kc);
  std::printf("%-24s %10s %10s %8s %8s %7s %9s\n", "shape MxKxN epilogue", "oneDNN ms",
              "own ms", "oneDNN", "own", "own x", "max|diff|");
  for (const Shape& s : kShapes) {
    const char* act = s.act == kNone ? "" : s.act == kBias ? "+b" : s.act == kGelu ? "+b,gelu"
                                                                                  : "+b,+res";
    char name[64];
    std::snprintf(name, sizeof name, "%lldx%lldx%lld%s", static_cast<long long>(s.m),
                  static_cast<long long>(s.k), static_cast<long long>(s.n), act);
    if (!filter.empty() && std::string(name).find(filter) == std::string::npos) continue;
    std::vector<float> x = Random(s.m * s.k, 1), w = Random(s.k * s.n, 2), bias = Random(s.n, 3),
                       res = Random(s.m * s.n, 4), out_dnn(s.m * s.n), out_own(s.m * s.n);
    const ExternTensor xt{proto::FLOAT32, {s.m, s.k}, reinterpret_cast<char*>(x.data())};
    const ExternTensor wt{proto::FLOAT32, {s.k, s.n}, reinterpret_cast<char*>(w.data()), true};
    const ExternTensor bt{proto::FLOAT32, {s.n}, reinterpret_cast<char*>(bias.data()), true};
    const ExternTensor rt{proto::FLOAT32, {s.m, s.n}, reinterpret_cast<char*>(res.data())};
    const ExternTensor ot{proto::FLOAT32, {s.m, s.n}, reinterpret_cast<char*>(out_dnn.data())};
    std::vector<ExternEpilogueStep> steps;
    if (s.act != kNone) steps.push_back({kBias, 0, 0, &bt});
    if (s.act == kGelu) steps.push_back({kGelu});
    if (s.act == kAdd) steps.push_back({kAdd, 0, 0, &rt});
    const std::vector<ExternEpilogueStep> post(steps.begin() + (steps.empty() ? 0 : 1),
                                               steps.end());
    const std::vector<ExternTensor> in = {xt, wt};
    ExternStateSlot state;
    auto dnn = [&]() -> absl::Status {
      if (steps.empty()) {
        return RunExtern("aten.mm", ExternArgs{in, ot, {}, threads, &state, &pool});
      }
      absl::StatusOr<bool> st =
          RunExternFused("aten.mm", ExternArgs{in, ot, {}, threads, &state, &pool}, steps);
      if (!st.ok()) return st.status();
      return *st ? absl::OkStatus() : absl::InternalError("aten.mm not fused");
    };
    internal::OwnGemmWeights packed;
    packed.Pack(w.data(), s.k, s.n);
    auto own = [&] {
      internal::OwnGemm(x.data(), s.m, s.k, packed, steps.empty() ? nullptr : bias.data(), post,
                        out_own.data(), s.n, threads, &pool);
      return absl::OkStatus();
    };
    double best_dnn = 1e30, best_own = 1e30;
    for (int r = 0; r < rounds; ++r) {
      best_dnn = std::min(best_dnn, cold ? ColdMedianMs(dnn, 15) : MedianMs(dnn, seconds));
      best_own = std::min(best_own, cold ? ColdMedianMs(own, 15) : MedianMs(own, seconds));
    }
    double diff = 0;
    for (size_t i = 0; i < out_own.size(); ++i) {
      diff = std::max<double>(diff, std::abs(out_own[i] - out_dnn[i]));
    }
    const double gflop = 2.0 * s.m * s.k * s.n * 1e-9;
    std::printf("%-24s %10.3f %10.3f %8.3f %8.3f %7.2f %9.2e\n", name, best_dnn, best_own,
                gflop / best_dnn, gflop / best_own, best_dnn / best_own, diff);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace coil::cpu

int main(int argc, char** argv) { return coil::cpu::Main(argc, argv); }
