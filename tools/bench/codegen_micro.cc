// A focused measurement of the code codegen_cpu generates (docs/cpu_backend.md, "Fast-math" and
// "Measured"): fused pointwise chains (gelu with tanh, gelu with erf, a two-input add) and
// softmax over [rows, cols] f32, each against a plain copy of the same bytes on the same
// number of threads, plus the vector tanh/erf candidates (coil's own polynomials in generated
// code, glibc's libmvec, SLEEF, scalar libm) in elements per nanosecond and max ulp.
//
//   bazel run --jobs=2 //tools/bench:codegen_micro -- [--rows=N] [--threads=1,2] [--cpu=NAME]
//   bazel run --jobs=2 //tools/bench:codegen_micro -- --ir --cpu=x86-64-v3   (the kernels' IR)
//
// Kernels run straight through their C ABI (runtime/cpu/kernel_abi.h) on buffers allocated
// once, split over runtime/cpu's ThreadPool as the runtime splits them, so the numbers are the
// generated code's and not the runtime's (which allocates outputs per run). Bytes moved: every
// buffer a kernel reads plus every buffer it writes, once each. Two copies of those bytes are
// timed: glibc memcpy (non-temporal stores for large blocks: no read-for-ownership) and coil's
// own generated copy kernel (ordinary stores, like every generated kernel). Each time is the
// median of repeated runs (at least 5, about 0.4 s).
#include <dlfcn.h>
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/match.h"
#include "codegen_cpu/codegen_cpu.h"
#include "codegen_cpu/jit.h"
#include "ir/parser.h"
#include "ir/sym_expr.h"
#include "runtime/cpu/kernel_abi.h"
#include "runtime/cpu/thread_pool.h"
#include "tools/driver/cpu_backend.h"
#include "tools/driver/driver.h"

namespace coil {
namespace {

using Clock = std::chrono::steady_clock;

// Median seconds of `fn` over at least 5 runs and about `budget_s` seconds (after a warm-up).
double MedianSeconds(const std::function<void()>& fn, double budget_s = 0.4) {
  fn();
  std::vector<double> times;
  const auto start = Clock::now();
  while (times.size() < 5 ||
         (std::chrono::duration<double>(Clock::now() - start).count() < budget_s &&
          times.size() < 2000)) {
    const auto t0 = Clock::now();
    fn();
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

struct AlignedFree {
  void operator()(char* p) const { std::free(p); }
};
using Memory = std::unique_ptr<char, AlignedFree>;

Memory Allocate(int64_t bytes) {
  const int64_t rounded = (std::max<int64_t>(bytes, 1) + 63) / 64 * 64;
  Memory m(static_cast<char*>(std::aligned_alloc(64, rounded)));
  if (m == nullptr) {
    std::fprintf(stderr, "codegen_micro: cannot allocate %lld bytes\n",
                 static_cast<long long>(bytes));
    std::exit(1);
  }
  std::memset(m.get(), 0, rounded);  // touch every page before timing
  return m;
}

// A text-IR graph compiled to one module whose kernels run directly.
class CompiledGraph {
 public:
  static absl::StatusOr<std::unique_ptr<CompiledGraph>> Compile(const std::string& text,
                                                                const CpuCodegenOptions& opts) {
    absl::StatusOr<Graph> g = ParseGraph(text);
    if (!g.ok()) return g.status();
    // prims, inductor and codegen_cpu through the compile driver, stopping at the module: its
    // kernels are loaded and run directly below, not by the runtime.
    driver::DriverOptions options;
    options.backend = driver::CpuBackend({.codegen = opts});
    options.stop_after = driver::Stage::kCodegen;
    options.cache = nullptr;
    options.keep_intermediates = false;  // the module holds the Schedule
    absl::StatusOr<driver::CompileResult> r = driver::CompileGraph(*std::move(g), options);
    if (!r.ok()) return r.status();
    auto c = std::unique_ptr<CompiledGraph>(new CompiledGraph);
    c->module_ = *std::move(r->module);
    absl::StatusOr<std::unique_ptr<CpuJitModule>> jit = CpuJitModule::Load(c->module_);
    if (!jit.ok()) return jit.status();
    c->jit_ = *std::move(jit);
    if (absl::Status st = c->Layout(); !st.ok()) return st;
    return c;
  }

  // Runs every kernel once, in order, over `pool`.
  void Run(cpu::ThreadPool& pool) {
    for (const Launch& l : launches_) {
      char* const* bufs = table_.data();
      CoilKernelError error{};  // the benchmark's kernels index no data
      pool.ParallelFor(l.parallel, l.grain,
                       [&](int64_t b, int64_t e) { l.fn(b, e, bufs, nullptr, &error); });
    }
  }

  // Bytes read plus bytes written, each buffer once per kernel.
  int64_t bytes_moved() const { return bytes_moved_; }
  int num_kernels() const { return static_cast<int>(launches_.size()); }
  const proto::KernelModule& module() const { return module_; }

  // The first input buffer's memory (f32), to fill with test values.
  float* input(int i) { return reinterpret_cast<float*>(table_[inputs_.at(i)]); }
  int64_t input_elements(int i) const { return sizes_.at(inputs_.at(i)) / 4; }
  const float* output(int i) const {
    return reinterpret_cast<const float*>(table_[module_.schedule().outputs(i)]);
  }

 private:
  CompiledGraph() = default;

  struct Launch {
    CoilKernelFn fn;
    int64_t parallel;
    int64_t grain;
  };

  static absl::StatusOr<int64_t> Eval(const proto::SymExpr& e) {
    absl::StatusOr<SymExpr> s = SymExpr::FromProto(e);
    if (!s.ok()) return s.status();
    return s->Evaluate({});
  }

  absl::Status Layout() {
    const proto::Schedule& s = module_.schedule();
    if (s.graph().symbols_size() != 0) {
      return absl::InvalidArgumentError("codegen_micro graphs have static shapes");
    }
    int max_id = 0;
    for (const proto::Buffer& b : s.buffers()) max_id = std::max(max_id, b.id());
    table_.assign(max_id + 1, nullptr);
    absl::StatusOr<int64_t> arena_bytes = Eval(s.memory_plan().arena_bytes());
    if (!arena_bytes.ok()) return arena_bytes.status();
    memory_.push_back(Allocate(*arena_bytes));
    char* arena = memory_.back().get();
    for (const proto::Buffer& b : s.buffers()) {
      absl::StatusOr<int64_t> bytes = Eval(b.size_bytes());
      if (!bytes.ok()) return bytes.status();
      sizes_[b.id()] = *bytes;
      if (b.kind() == proto::Buffer::INTERMEDIATE) {
        absl::StatusOr<int64_t> off = Eval(b.arena_offset());
        if (!off.ok()) return off.status();
        table_[b.id()] = arena + *off;
      } else {
        memory_.push_back(Allocate(*bytes));
        table_[b.id()] = memory_.back().get();
      }
      if (b.kind() == proto::Buffer::INPUT) inputs_.push_back(b.id());
    }
    for (const proto::Kernel& k : s.kernels()) {
      CoilKernelFn fn = jit_->Find(k.id());
      if (fn == nullptr) return absl::InvalidArgumentError(absl::StrCat(k.name(), ": no function"));
      int64_t parallel = 1, inner = 1, loop_work = 0;
      const int prefix = cpu::ParallelPrefixRank(k.ranges_size(), k.parallel_dims());
      for (int d = 0; d < k.ranges_size(); ++d) {
        absl::StatusOr<int64_t> n = Eval(k.ranges(d));
        if (!n.ok()) return n.status();
        (d < prefix ? parallel : inner) *= *n;
      }
      for (const proto::Loop& l : k.loops()) {
        int64_t n = 1;
        for (const proto::SymExpr& r : l.ranges()) {
          absl::StatusOr<int64_t> v = Eval(r);
          if (!v.ok()) return v.status();
          n *= *v;
        }
        loop_work += n;
      }
      // As the runtime (executable.cc): chunks of at least ~16K loop iterations.
      const int64_t row = std::max<int64_t>(1, inner * std::max<int64_t>(loop_work, 1));
      launches_.push_back({fn, parallel, std::max<int64_t>(1, 16384 / row)});
      for (int id : k.reads()) bytes_moved_ += sizes_[id];
      for (int id : k.writes()) bytes_moved_ += sizes_[id];
    }
    return absl::OkStatus();
  }

  proto::KernelModule module_;
  std::unique_ptr<CpuJitModule> jit_;
  std::vector<Memory> memory_;
  std::vector<char*> table_;
  absl::flat_hash_map<int, int64_t> sizes_;
  std::vector<int> inputs_;
  std::vector<Launch> launches_;
  int64_t bytes_moved_ = 0;
};

std::unique_ptr<CompiledGraph> MustCompile(const std::string& text, const CpuCodegenOptions& o) {
  absl::StatusOr<std::unique_ptr<CompiledGraph>> c = CompiledGraph::Compile(text, o);
  if (!c.ok()) {
    std::fprintf(stderr, "codegen_micro: %s\n", std::string(c.status().message()).c_str());
    std::exit(1);
  }
  return *std::move(c);
}

void FillUniform(float* p, int64_t n, float lo, float hi, int seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < n; ++i) p[i] = u(rng);
}

std::string Shape(int64_t rows, int64_t cols) { return absl::StrCat("[", rows, ", ", cols, "]"); }

// ---- Fused kernels against copies. ----

struct Case {
  std::string name;
  std::string text;
};

std::vector<Case> Cases(int64_t rows, int64_t cols, int64_t short_rows) {
  const std::string x = absl::StrCat("f32", Shape(rows, cols));
  const std::string v = absl::StrCat("f32[", cols, "]");
  const std::string xs = absl::StrCat("f32", Shape(short_rows, 40));
  auto gelu = [&](const char* approximate) {
    return absl::StrCat("graph @g(%0 \"x\": ", x, ", %1 \"w\": ", v, ", %2 \"b\": ", v, ") {\n",
                        "  %3: ", x, " = aten.mul(%0, %1)\n", "  %4: ", x,
                        " = aten.add(%3, %2) {alpha = 1}\n", "  %5: ", x,
                        " = aten.gelu(%4) {approximate = \"", approximate, "\"}\n",
                        "  return %5\n}\n");
  };
  return {
      {"copy (generated)",
       absl::StrCat("graph @c(%0 \"x\": ", x, ") {\n  %1: ", x,
                    " = aten.clone(%0)\n  return %1\n}\n")},
      {"add x+y", absl::StrCat("graph @a(%0 \"x\": ", x, ", %1 \"y\": ", x, ") {\n  %2: ", x,
                               " = aten.add(%0, %1) {alpha = 1}\n  return %2\n}\n")},
      {"add x+y rows of 40", absl::StrCat("graph @a(%0 \"x\": ", xs, ", %1 \"y\": ", xs,
                                          ") {\n  %2: ", xs,
                                          " = aten.add(%0, %1) {alpha = 1}\n  return %2\n}\n")},
      {"gelu(x*w+b) tanh", gelu("tanh")},
      {"gelu(x*w+b) erf", gelu("none")},
      {"softmax", absl::StrCat("graph @s(%0 \"x\": ", x, ") {\n  %1: ", x,
                               " = aten.softmax(%0) {dim = 1, dtype = none}\n  return %1\n}\n")},
      {"softmax rows of 40",
       absl::StrCat("graph @s(%0 \"x\": ", xs, ") {\n  %1: ", xs,
                    " = aten.softmax(%0) {dim = 1, dtype = none}\n  return %1\n}\n")},
  };
}

// --ir: every case's kernels as LLVM IR after O3, instead of timing them.
void PrintIr(int64_t rows, int64_t cols, const CpuCodegenOptions& opts) {
  for (const Case& c : Cases(rows, cols, rows * cols / 40)) {
    std::unique_ptr<CompiledGraph> g = MustCompile(c.text, opts);
    for (const proto::CompiledKernel& k : g->module().kernels()) {
      std::printf("; ---- %s: kernel %s (cpu %s)\n%s\n", c.name.c_str(), k.name().c_str(),
                  g->module().cpu().c_str(), k.source().c_str());
    }
  }
}

void BenchKernels(int64_t rows, int64_t cols, const std::vector<int>& threads,
                  const CpuCodegenOptions& opts) {
  const int64_t short_rows = rows * cols / 40;
  std::vector<std::pair<std::string, std::unique_ptr<CompiledGraph>>> compiled;
  for (const Case& c : Cases(rows, cols, short_rows)) {
    std::unique_ptr<CompiledGraph> g = MustCompile(c.text, opts);
    for (int i = 0; i < static_cast<int>(g->module().schedule().graph().inputs_size()); ++i) {
      FillUniform(g->input(i), g->input_elements(i), -3, 3, 7 + i);
    }
    compiled.emplace_back(c.name, std::move(g));
  }
  int64_t max_bytes = 0;
  for (const auto& [name, g] : compiled) max_bytes = std::max(max_bytes, g->bytes_moved());
  Memory src = Allocate(max_bytes / 2), dst = Allocate(max_bytes / 2);
  std::printf("\n[rows, cols] = %s f32 (rows of 40: %s), cpu %s\n", Shape(rows, cols).c_str(),
              Shape(short_rows, 40).c_str(), compiled[0].second->module().cpu().c_str());
  std::printf("%-22s %7s %7s %9s %9s %9s %8s %8s\n", "kernel", "threads", "kernels", "ms",
              "GB/s", "memcpy", "/memcpy", "/copy");
  for (int t : threads) {
    cpu::ThreadPool pool(t);
    double copy_gbs = 0;
    for (const auto& [name, g] : compiled) {
      const int64_t bytes = g->bytes_moved();
      const int64_t half = bytes / 2;
      const int64_t chunk = std::max<int64_t>(1 << 20, half / (8 * t));
      const double copy_s = MedianSeconds([&] {
        pool.ParallelFor((half + chunk - 1) / chunk, 1, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) {
            const int64_t n = std::min(chunk, half - i * chunk);
            std::memcpy(dst.get() + i * chunk, src.get() + i * chunk, n);
          }
        });
      });
      CompiledGraph* cg = g.get();
      const double s = MedianSeconds([&] { cg->Run(pool); });
      const double gbs = bytes / s / 1e9, memcpy_gbs = bytes / copy_s / 1e9;
      if (name == "copy (generated)") copy_gbs = gbs;
      std::printf("%-22s %7d %7d %9.3f %9.2f %9.2f %7.0f%% %7.0f%%\n", name.c_str(), t,
                  cg->num_kernels(), s * 1e3, gbs, memcpy_gbs, 100 * gbs / memcpy_gbs,
                  100 * gbs / copy_gbs);
    }
  }
}

// ---- Vector tanh / erf candidates. ----

float Bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// |got - want| in units of the f32 ulp at `want` (denormal spacing below 2^-126).
double UlpError(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
  if (std::isnan(got)) return INFINITY;
  // A result that overflows f32 must be inf.
  const float rounded = static_cast<float>(want);
  if (std::isinf(rounded) || std::isinf(got)) return got == rounded ? 0 : INFINITY;
  int e;
  std::frexp(want, &e);
  return std::fabs(static_cast<double>(got) - want) / std::ldexp(1.0, std::max(e - 24, -149));
}

// A batch function: out[i] = f(in[i]) for i < n (n a multiple of 8).
using BatchFn = std::function<void(const float*, float*, int64_t)>;

using V8Fn = __m256 (*)(__m256);

__attribute__((target("avx2,fma"))) void RunV8(V8Fn f, const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; i += 8) _mm256_storeu_ps(out + i, f(_mm256_loadu_ps(in + i)));
}

V8Fn FindV8(const char* library, const char* symbol) {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return nullptr;
  void* h = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) return nullptr;
  return reinterpret_cast<V8Fn>(dlsym(h, symbol));
}

// Elements per timing batch: 64 KiB of f32 in and out (in L2: compute, not memory, is timed).
constexpr int64_t kN = 16384;

void BenchMath(const CpuCodegenOptions& opts) {
  // The sample for the accuracy column: every 4093rd f32 bit pattern (~1M values).
  std::vector<float> sample;
  for (uint64_t u = 0; u <= 0xffffffffull; u += 4093) {
    sample.push_back(Bits(static_cast<uint32_t>(u)));
  }
  sample.resize(sample.size() / 8 * 8);
  // The timing input: values in [-4, 4].
  std::vector<float> in(kN), out(std::max<size_t>(kN, sample.size()));
  FillUniform(in.data(), kN, -4, 4, 3);

  std::printf("\n%-6s %-34s %10s %12s\n", "fn", "implementation", "elem/ns", "max ulp");
  for (const char* fn : {"tanh", "erf", "exp"}) {
    std::vector<std::pair<std::string, BatchFn>> impls;
    // coil: a generated kernel fn(x) over [n/1024, 1024], on one thread.
    auto make_coil = [&](int64_t n) {
      const std::string t = absl::StrCat("f32", Shape(n / 1024, 1024));
      return MustCompile(absl::StrCat("graph @m(%0 \"x\": ", t, ") {\n  %1: ", t, " = aten.", fn,
                                      "(%0)\n  return %1\n}\n"),
                         opts);
    };
    std::shared_ptr<CompiledGraph> timing = make_coil(kN);
    auto pool = std::make_shared<cpu::ThreadPool>(1);
    impls.emplace_back("coil generated kernel", [timing, pool](const float* x, float* y,
                                                               int64_t n) {
      // Inputs copied in, outputs out: the generated kernel owns its buffers.
      for (int64_t o = 0; o < n; o += kN) {
        const int64_t m = std::min<int64_t>(kN, n - o);
        std::memcpy(timing->input(0), x + o, m * 4);
        timing->Run(*pool);
        std::memcpy(y + o, timing->output(0), m * 4);
      }
    });
    const std::string f = fn;
    if (V8Fn v = FindV8("libmvec.so.1", absl::StrCat("_ZGVdN8v_", f, "f").c_str())) {
      impls.emplace_back("glibc libmvec (AVX2)",
                         [v](const float* x, float* y, int64_t n) { RunV8(v, x, y, n); });
    }
    if (V8Fn v = FindV8("libsleef.so.3", absl::StrCat("Sleef_", f, "f8_u10avx2").c_str())) {
      impls.emplace_back("SLEEF 3.5 u10 (AVX2)",
                         [v](const float* x, float* y, int64_t n) { RunV8(v, x, y, n); });
    }
    float (*scalar)(float) = f == "tanh" ? tanhf : f == "erf" ? erff : expf;
    impls.emplace_back("scalar libm", [scalar](const float* x, float* y, int64_t n) {
      for (int64_t i = 0; i < n; ++i) y[i] = scalar(x[i]);
    });
    double (*ref)(double) = f == "tanh" ? static_cast<double (*)(double)>(std::tanh)
                            : f == "erf" ? static_cast<double (*)(double)>(std::erf)
                                         : static_cast<double (*)(double)>(std::exp);
    for (auto& [name, batch] : impls) {
      // Timing: the coil kernel over its own buffer (no copies).
      double s;
      if (name == "coil generated kernel") {
        std::memcpy(timing->input(0), in.data(), kN * 4);
        s = MedianSeconds([&] { timing->Run(*pool); }, 0.2);
      } else {
        s = MedianSeconds([&] { batch(in.data(), out.data(), kN); }, 0.2);
      }
      double worst = 0;
      for (size_t o = 0; o < sample.size(); o += kN) {
        const int64_t m = std::min<int64_t>(kN, sample.size() - o);
        batch(sample.data() + o, out.data(), m);
        for (int64_t i = 0; i < m; ++i) {
          worst = std::max(worst, UlpError(out[i], ref(static_cast<double>(sample[o + i]))));
        }
      }
      std::printf("%-6s %-34s %10.3f %12.3f\n", fn, name.c_str(), kN / s / 1e9, worst);
    }
  }
}

std::vector<int> ParseInts(absl::string_view s) {
  std::vector<int> out;
  for (absl::string_view p : absl::StrSplit(s, ',', absl::SkipEmpty())) {
    int v;
    if (!absl::SimpleAtoi(p, &v) || v < 1) {
      std::fprintf(stderr, "codegen_micro: bad integer list '%s'\n", std::string(s).c_str());
      std::exit(2);
    }
    out.push_back(v);
  }
  return out;
}

int Main(int argc, char** argv) {
  int64_t rows = 16384;
  const int all = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<int> threads = {1, all};
  CpuCodegenOptions opts;
  bool math = true, kernels = true, ir = false;
  for (int i = 1; i < argc; ++i) {
    absl::string_view a = argv[i];
    if (absl::ConsumePrefix(&a, "--rows=")) {
      if (!absl::SimpleAtoi(a, &rows) || rows < 1) {
        std::fprintf(stderr, "codegen_micro: bad --rows\n");
        return 2;
      }
    } else if (absl::ConsumePrefix(&a, "--threads=")) {
      threads = ParseInts(a);
    } else if (absl::ConsumePrefix(&a, "--cpu=")) {
      opts.cpu = std::string(a);
    } else if (a == "--math-only") {
      kernels = false;
    } else if (a == "--kernels-only") {
      math = false;
    } else if (a == "--ir") {
      ir = true;
    } else {
      std::fprintf(stderr,
                   "usage: codegen_micro [--rows=N] [--threads=1,2,...] [--cpu=NAME] "
                   "[--math-only|--kernels-only|--ir]\n");
      return 2;
    }
  }
  if (ir) {
    PrintIr(rows, 1024, opts);
    return 0;
  }
  if (threads.size() == 2 && threads[0] == threads[1]) threads.pop_back();
  if (kernels) BenchKernels(rows, 1024, threads, opts);
  if (math) BenchMath(opts);
  return 0;
}

}  // namespace
}  // namespace coil

int main(int argc, char** argv) { return coil::Main(argc, argv); }
