// Accuracy of the f32 transcendentals in generated code, through the real path (a one-op
// Schedule -> GenerateCpu -> CpuJitModule -> the kernel over 64K elements at a time): coil's own
// tanh / erf / exp (codegen_cpu/internal/vector_math.h) and glibc's libmvec log, each against
// float64 libm (the exact value for f32 purposes), in ulps of the f32 result. Every kernel is
// compiled for three targets: "x86-64" (SSE2, no FMA: the multiply-adds stay unfused),
// "x86-64-v3" (AVX2 + FMA, 8 lanes) and this host (e.g. AVX-512, 16 lanes); a target this CPU
// cannot run is skipped.
//
// The default test sweeps every 397th f32 bit pattern (11M values, both signs, denormals,
// infinities, NaNs) plus every f32 in windows around the branch points; vector_math_full_test
// (tagged manual: bazel test --jobs=2 --local_test_jobs=1 //codegen_cpu:vector_math_full_test)
// sweeps all 2^32 inputs. Special values are checked exactly (signed zeros, infinities, NaN).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "codegen_cpu/codegen_cpu.h"
#include "codegen_cpu/jit.h"
#include "gtest/gtest.h"
#include "ir/sym_expr.h"

namespace coil {
namespace {

constexpr int64_t kRows = 64, kCols = 1024, kBlock = kRows * kCols;

float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint32_t ToBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// |got - want| in ulps of the f32 result at `want` (2^-149 below the normal range); results
// that overflow in f32 must be inf, NaN must stay NaN.
double UlpError(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
  if (std::isnan(got)) return INFINITY;
  const float rounded = static_cast<float>(want);
  if (std::isinf(rounded) || std::isinf(got)) return got == rounded ? 0 : INFINITY;
  int e;
  std::frexp(want, &e);
  return std::fabs(static_cast<double>(got) - want) / std::ldexp(1.0, std::max(e - 24, -149));
}

// Appends the elementwise body to `l`: expr 1 is the loaded x; returns the result's id.
using BodyFn = std::function<int(proto::Loop& l)>;

// An APPLY of `op` over `args` (expr ids), id = the next free one; returns it.
int Apply(proto::Loop& l, const std::string& op, std::vector<int> args) {
  proto::Expr* e = l.add_body();
  e->set_id(l.body_size());
  e->set_kind(proto::Expr::APPLY);
  e->set_dtype(proto::FLOAT32);
  e->set_op(op);
  for (int a : args) e->add_args(a);
  return e->id();
}

int Literal(proto::Loop& l, double v) {
  proto::Expr* e = l.add_body();
  e->set_id(l.body_size());
  e->set_kind(proto::Expr::LITERAL);
  e->set_dtype(proto::FLOAT32);
  e->set_literal(v);
  return e->id();
}

// A Schedule with one POINTWISE kernel: out[r, c] = body(in[r, c]) over f32[64, 1024].
proto::Schedule PointwiseSchedule(const std::string& name, const BodyFn& body) {
  proto::Schedule s;
  s.mutable_graph()->set_name(name);
  for (int id : {1, 2}) {
    proto::Buffer* b = s.add_buffers();
    b->set_id(id);
    b->set_name(id == 1 ? "x" : "y");
    b->set_kind(id == 1 ? proto::Buffer::INPUT : proto::Buffer::OUTPUT);
    b->set_dtype(proto::FLOAT32);
    *b->add_shape() = SymExpr(kRows).ToProto();
    *b->add_shape() = SymExpr(kCols).ToProto();
    *b->mutable_size_bytes() = SymExpr(kBlock * 4).ToProto();
  }
  s.add_outputs(2);
  proto::Kernel* k = s.add_kernels();
  k->set_id(1);
  k->set_name(name);
  k->set_kind(proto::Kernel::POINTWISE);
  *k->add_ranges() = SymExpr(kRows).ToProto();
  *k->add_ranges() = SymExpr(kCols).ToProto();
  proto::Loop* l = k->add_loops();
  auto index = [](proto::Expr* e) {
    *e->add_index() = SymExpr::Symbol("_i0").ToProto();
    *e->add_index() = SymExpr::Symbol("_i1").ToProto();
  };
  proto::Expr* load = l->add_body();
  load->set_id(1);
  load->set_kind(proto::Expr::LOAD);
  load->set_dtype(proto::FLOAT32);
  load->set_buffer(1);
  index(load);
  const int result = body(*l);
  proto::Expr* store = l->add_body();
  store->set_id(l->body_size());
  store->set_kind(proto::Expr::STORE);
  store->set_buffer(2);
  store->add_args(result);
  index(store);
  return s;
}

BodyFn OneOp(const std::string& op) {
  return [op](proto::Loop& l) { return Apply(l, op, {1}); };
}

// One op's kernel compiled for one target.
struct Compiled {
  std::string cpu;
  std::unique_ptr<CpuJitModule> jit;
  CoilKernelFn fn = nullptr;
  std::string ir;
};

// The kernel of `body` for every target this host runs.
std::vector<Compiled> CompileForTargets(const std::string& name, const BodyFn& body) {
  std::vector<Compiled> out;
  for (const char* cpu : {"x86-64", "x86-64-v3", ""}) {
    CpuCodegenOptions o;
    o.cpu = cpu;
    absl::StatusOr<proto::KernelModule> m = GenerateCpu(PointwiseSchedule(name, body), o);
    EXPECT_TRUE(m.ok()) << m.status();
    if (!m.ok()) continue;
    absl::StatusOr<std::unique_ptr<CpuJitModule>> jit = CpuJitModule::Load(*m);
    if (!jit.ok()) {
      // Only "this CPU lacks ..." is acceptable (x86-64-v3 code on a CPU without AVX2).
      EXPECT_EQ(jit.status().code(), absl::StatusCode::kFailedPrecondition) << jit.status();
      continue;
    }
    Compiled c;
    c.cpu = cpu[0] == '\0' ? absl::StrCat("host (", m->cpu(), ")") : cpu;
    c.jit = *std::move(jit);
    c.fn = c.jit->Find(1);
    c.ir = m->kernels(0).source();
    out.push_back(std::move(c));
  }
  return out;
}

// Runs a compiled kernel on kBlock inputs.
void RunBlock(const Compiled& c, const float* in, float* out) {
  char* table[3] = {nullptr, reinterpret_cast<char*>(const_cast<float*>(in)),
                    reinterpret_cast<char*>(out)};
  CoilKernelError error{};
  c.fn(0, kRows, table, nullptr, &error);
}

// Bit patterns start, start + stride, ... (count of them).
struct Span {
  uint64_t start;
  uint64_t count;
  uint64_t stride;
};

std::vector<Span> Sample() {
#ifdef COIL_VECTOR_MATH_FULL_SWEEP
  return {{0, uint64_t{1} << 32, 1}};
#else
  std::vector<Span> s = {{0, (uint64_t{1} << 32) / 397 + 1, 397}};
  // Every f32 within 3% of the branch points and clamps, both signs.
  for (float p : {0.75f, 0.875f, 4.0f, 9.5f, 88.7f, -87.3f, -103.9f, 1e-3f, 1.2e-38f}) {
    for (float sign : {1.0f, -1.0f}) {
      const uint32_t a = ToBits(sign * p * 0.97f), b = ToBits(sign * p * 1.03f);
      const uint32_t lo = std::min(a, b), hi = std::max(a, b);
      s.push_back({lo, static_cast<uint64_t>(hi - lo) + 1, 1});
    }
  }
  return s;
#endif
}

struct Worst {
  double ulp = 0;
  float x = 0;
  float got = 0;
};

// The largest ulp error of each target's kernel over Sample(), against `ref`.
std::vector<Worst> Sweep(const std::vector<Compiled>& targets, double (*ref)(double)) {
  // Blocks of kBlock inputs, dealt round-robin to the threads.
  std::vector<std::pair<Span, uint64_t>> blocks;  // span, first index in it
  for (const Span& s : Sample()) {
    for (uint64_t i = 0; i < s.count; i += kBlock) blocks.push_back({s, i});
  }
  const int threads = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  std::vector<std::vector<Worst>> worst(threads, std::vector<Worst>(targets.size()));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::vector<float> in(kBlock), out(kBlock);
      std::vector<double> want(kBlock);
      for (size_t b = t; b < blocks.size(); b += threads) {
        const auto& [span, first] = blocks[b];
        const uint64_t n = std::min<uint64_t>(kBlock, span.count - first);
        for (uint64_t i = 0; i < kBlock; ++i) {
          const uint64_t k = first + std::min(i, n - 1);
          in[i] = FromBits(static_cast<uint32_t>(span.start + k * span.stride));
          want[i] = ref(static_cast<double>(in[i]));
        }
        for (size_t c = 0; c < targets.size(); ++c) {
          RunBlock(targets[c], in.data(), out.data());
          Worst& w = worst[t][c];
          for (uint64_t i = 0; i < n; ++i) {
            const double e = UlpError(out[i], want[i]);
            if (!(e <= w.ulp)) w = {e, in[i], out[i]};
          }
        }
      }
    });
  }
  for (std::thread& th : pool) th.join();
  std::vector<Worst> out(targets.size());
  for (int t = 0; t < threads; ++t) {
    for (size_t c = 0; c < targets.size(); ++c) {
      if (!(worst[t][c].ulp <= out[c].ulp)) out[c] = worst[t][c];
    }
  }
  return out;
}

// Sweeps `op` (or `body`) on every target and checks the bound; returns the targets for more
// checks.
std::vector<Compiled> CheckAccuracy(const std::string& op, double (*ref)(double), double bound,
                                    const BodyFn& body = nullptr) {
  std::vector<Compiled> targets = CompileForTargets(op, body ? body : OneOp(op));
  EXPECT_GE(targets.size(), 1u);
  std::vector<Worst> worst = Sweep(targets, ref);
  for (size_t c = 0; c < targets.size(); ++c) {
    std::printf("%-12s %-22s max %.3f ulp (x = %.9g: got %.9g, exact %.17g)\n", op.c_str(),
                targets[c].cpu.c_str(), worst[c].ulp, worst[c].x, worst[c].got,
                ref(static_cast<double>(worst[c].x)));
    EXPECT_LE(worst[c].ulp, bound) << op << " on " << targets[c].cpu << " at x = "
                                   << absl::StrFormat("%.9g", worst[c].x);
  }
  return targets;
}

// Exact results for special inputs (compared bit for bit; any NaN matches NaN).
void CheckSpecials(const std::vector<Compiled>& targets,
                   const std::vector<std::pair<float, float>>& cases) {
  std::vector<float> in(kBlock, 0.0f), out(kBlock);
  for (size_t i = 0; i < cases.size(); ++i) in[i] = cases[i].first;
  for (const Compiled& c : targets) {
    RunBlock(c, in.data(), out.data());
    for (size_t i = 0; i < cases.size(); ++i) {
      const float want = cases[i].second;
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(out[i])) << c.cpu << " x = " << cases[i].first;
      } else {
        EXPECT_EQ(ToBits(out[i]), ToBits(want))
            << c.cpu << " x = " << cases[i].first << ": got " << out[i] << ", want " << want;
      }
    }
  }
}

// The generated code is straight-line vector code, not calls to libm.
void ExpectInlineVectorCode(const std::vector<Compiled>& targets, const std::string& libm) {
  for (const Compiled& c : targets) {
    if (c.cpu == "x86-64-v3") {
      EXPECT_NE(c.ir.find("<8 x float>"), std::string::npos) << c.ir;
    }
    EXPECT_EQ(c.ir.find("@" + libm), std::string::npos) << c.cpu << " calls " << libm;
    EXPECT_EQ(c.ir.find("@_ZGV"), std::string::npos) << c.cpu << " calls libmvec";
  }
}

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kDenormMin = std::numeric_limits<float>::denorm_min();

// Bounds: codegen_cpu/internal/vector_math.h (the largest errors over all 2^32 inputs,
// rounded up).
TEST(VectorMathTest, Tanh) {
  std::vector<Compiled> t = CheckAccuracy("prims.tanh", [](double x) { return std::tanh(x); }, 1.3);
  CheckSpecials(t, {{0.0f, 0.0f}, {-0.0f, -0.0f}, {kInf, 1.0f}, {-kInf, -1.0f}, {kNaN, kNaN},
                    {-kNaN, kNaN}, {kDenormMin, kDenormMin}, {-kDenormMin, -kDenormMin},
                    {1e-30f, 1e-30f}, {9.1f, 1.0f}, {-50.0f, -1.0f}, {3e38f, 1.0f},
                    {-3e38f, -1.0f}});
  ExpectInlineVectorCode(t, "tanhf");
}

TEST(VectorMathTest, Erf) {
  std::vector<Compiled> t = CheckAccuracy("prims.erf", [](double x) { return std::erf(x); }, 1.1);
  CheckSpecials(t, {{0.0f, 0.0f}, {-0.0f, -0.0f}, {kInf, 1.0f}, {-kInf, -1.0f}, {kNaN, kNaN},
                    {3.95f, 1.0f}, {-10.0f, -1.0f}, {3e38f, 1.0f}, {-3e38f, -1.0f}});
  ExpectInlineVectorCode(t, "erff");
}

TEST(VectorMathTest, Exp) {
  std::vector<Compiled> t = CheckAccuracy("prims.exp", [](double x) { return std::exp(x); }, 1.1);
  CheckSpecials(t, {{0.0f, 1.0f}, {-0.0f, 1.0f}, {kInf, kInf}, {-kInf, 0.0f}, {kNaN, kNaN},
                    {-kNaN, kNaN}, {89.0f, kInf}, {1e30f, kInf}, {-104.0f, 0.0f},
                    {-1e30f, 0.0f}, {-103.0f, std::exp(-103.0f)}, {-104.5f, 0.0f},
                    {-200.0f, 0.0f}, {-90.0f, std::exp(-90.0f)}});
  ExpectInlineVectorCode(t, "expf");
}

// aten.sigmoid's decomposition, 1 / (1 + exp(-x)), against the interpreter's numerics (each op
// rounded to f32; exp from float64 libm): only coil's exp differs from it, by at most one ulp
// of e = exp(-x), which 1 + e (a tie can round either way) and the reciprocal (ulp sizes
// relative to the value differ by up to 2x between binades) can grow to a few ulps of the
// result: 4 measured (a relative difference below 3e-7).
TEST(VectorMathTest, SigmoidDecomposition) {
  auto body = [](proto::Loop& l) {
    const int one = Literal(l, 1.0);
    const int e = Apply(l, "prims.exp", {Apply(l, "prims.neg", {1})});
    return Apply(l, "prims.div", {one, Apply(l, "prims.add", {one, e})});
  };
  auto interpreter = [](double x) -> double {
    const float e = static_cast<float>(std::exp(-x));
    return 1.0f / (1.0f + e);
  };
  std::vector<Compiled> t = CheckAccuracy("sigmoid", interpreter, 5.0, body);
  CheckSpecials(t, {{0.0f, 0.5f}, {kInf, 1.0f}, {-kInf, 0.0f}, {kNaN, kNaN}, {-100.0f, 0.0f}});
  ExpectInlineVectorCode(t, "expf");
}

// glibc's libmvec (vectorized calls) for log: the path coil keeps for the other functions.
TEST(VectorMathTest, LogThroughLibmvec) {
  std::vector<Compiled> t = CheckAccuracy("prims.log", [](double x) { return std::log(x); }, 4.0);
  CheckSpecials(t, {{0.0f, -kInf}, {-0.0f, -kInf}, {1.0f, 0.0f}, {kInf, kInf}, {-1.0f, kNaN},
                    {kNaN, kNaN}});
}

}  // namespace
}  // namespace coil
