// bf16 aten.mm / aten.bmm / aten.convolution (autocast's products: `--precision bf16`) through
// the CPU externs against the reference kernels on f32 copies of the same bf16 values (the
// reference computes in double: the oracle sees exactly the operands oneDNN sees), within
// bf16's output rounding. Whichever path runs the call (oneDNN's bf16 primitives on a CPU with
// AVX-512, or the reference kernel where oneDNN declines) must agree with the oracle, so the
// tests do not depend on the host CPU. Also: constant weights packed once per call site,
// transposed mm operands, bias (bf16 and f32), channels-last activations, relu / residual
// epilogues, f32 outputs of bf16 operands, and a plan kept across calls.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/channels_last.h"
#include "runtime/cpu/externs.h"
#include "runtime/half.h"

namespace coil::cpu {
namespace {

constexpr DType kBf16 = proto::BFLOAT16;
constexpr DType kF32 = proto::FLOAT32;

// A tensor of `dtype` (bf16 or f32) with random values in [-1, 1) (bf16: rounded to bf16).
struct Buf {
  ExternTensor t;
  std::vector<char> bytes;
  Buf(DType dtype, std::vector<int64_t> shape, int seed) {
    t.dtype = dtype;
    t.shape = std::move(shape);
    bytes.assign(t.numel() * ElementSize(dtype), 0);
    t.data = bytes.data();
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1, 1);
    for (int64_t i = 0; i < t.numel(); ++i) Set(i, u(rng));
  }
  Buf(const Buf& o) : t(o.t), bytes(o.bytes) { t.data = bytes.data(); }
  Buf& operator=(const Buf&) = delete;

  float Get(int64_t i) const {
    if (t.dtype == kF32) return reinterpret_cast<const float*>(t.data)[i];
    return BFloat16ToFloat(reinterpret_cast<const uint16_t*>(t.data)[i]);
  }
  void Set(int64_t i, float v) {
    if (t.dtype == kF32) {
      reinterpret_cast<float*>(t.data)[i] = v;
    } else {
      reinterpret_cast<uint16_t*>(t.data)[i] = FloatToBFloat16(v);
    }
  }
  // The same values as f32 (exact for bf16).
  Buf AsF32() const {
    Buf f(kF32, t.shape, 0);
    for (int64_t i = 0; i < t.numel(); ++i) f.Set(i, Get(i));
    f.t.constant = t.constant;
    f.t.transposed = t.transposed;
    return f;
  }
};

// The oracle: the reference kernel on f32 copies of `in` (computed in double, rounded to f32
// once), with `relu` / a residual `add` applied after.
Buf Oracle(const std::string& op, const std::vector<Buf>& in, std::vector<int64_t> out_shape,
           const AttrMap& attrs, bool relu = false, const Buf* add = nullptr) {
  std::vector<Buf> f32;
  std::vector<ExternTensor> args;
  for (const Buf& b : in) f32.push_back(b.AsF32());
  for (const Buf& b : f32) args.push_back(b.t);
  Buf want(kF32, std::move(out_shape), 98);
  absl::Status s = RunReferenceExtern(op, ExternArgs{args, want.t, attrs, 1});
  EXPECT_TRUE(s.ok()) << s;
  for (int64_t i = 0; i < want.t.numel(); ++i) {
    float v = want.Get(i);
    if (add != nullptr) v += add->Get(i);
    if (relu) v = std::max(v, 0.0f);
    want.Set(i, v);
  }
  return want;
}

// bf16 keeps 8 significant bits: an output rounds by at most 2^-9 of its value, and oneDNN's
// f32 accumulation (blocked, in another order than the oracle's) adds ~k * 2^-24 of the
// products' magnitudes (|operands| < 1 here). Four times the rounding, plus an absolute floor.
void ExpectClose(const Buf& got, const Buf& want, const std::string& what) {
  ASSERT_EQ(got.t.numel(), want.t.numel());
  for (int64_t i = 0; i < got.t.numel(); ++i) {
    const double w = want.Get(i), g = got.Get(i);
    ASSERT_NEAR(g, w, 8e-3 * std::abs(w) + 2e-4) << what << " element " << i;
  }
  // Not vacuous: the outputs are not all zero.
  double max_abs = 0;
  for (int64_t i = 0; i < want.t.numel(); ++i) {
    max_abs = std::max<double>(max_abs, std::abs(want.Get(i)));
  }
  EXPECT_GT(max_abs, 0.1) << what;
}

// Runs `op` through RunExtern (the registered implementation, else the reference kernel) into
// a bf16 output and compares with the oracle.
void CheckExtern(const std::string& op, std::vector<Buf> in, std::vector<int64_t> out_shape,
                 const AttrMap& attrs, const std::string& what, int threads = 2,
                 ExternStateSlot* state = nullptr) {
  std::vector<ExternTensor> args;
  for (const Buf& b : in) args.push_back(b.t);
  Buf got(kBf16, out_shape, 99);
  ExternArgs call{args, got.t, attrs, threads};
  call.state = state;
  absl::Status s = RunExtern(op, call);
  ASSERT_TRUE(s.ok()) << what << ": " << s;
  ExpectClose(got, Oracle(op, in, out_shape, attrs), what);
}

// Calls the registered implementation alone (a variant the reference kernel does not take:
// transposed operands, f32 outputs of bf16 operands): compared when it ran; false when it
// declined (oneDNN has no bf16 implementation on this CPU), which is allowed.
bool CheckImpl(const std::string& op, const std::vector<Buf>& in, DType out_dtype,
               std::vector<int64_t> out_shape, const AttrMap& attrs,
               const std::vector<Buf>& oracle_in, const std::string& what,
               ExternStateSlot* state = nullptr) {
  std::vector<ExternTensor> args;
  for (const Buf& b : in) args.push_back(b.t);
  Buf got(out_dtype, out_shape, 99);
  ExternArgs call{args, got.t, attrs, 2};
  call.state = state;
  const ExternImpl* impl = ExternRegistry::Default().Find(op);
  EXPECT_NE(impl, nullptr);
  if (impl == nullptr) return false;
  absl::StatusOr<bool> ran = (*impl)(call);
  EXPECT_TRUE(ran.ok()) << what << ": " << ran.status();
  if (!ran.ok() || !*ran) return false;
  ExpectClose(got, Oracle(op, oracle_in, out_shape, attrs), what);
  return true;
}

AttrMap Conv(IntList stride, IntList padding, IntList dilation, int64_t groups) {
  return {{"stride", stride},     {"padding", padding},         {"dilation", dilation},
          {"transposed", false},  {"groups", groups},           {"output_padding", IntList{0}}};
}

TEST(DnnlBf16Test, MmMatchesTheReference) {
  for (auto [m, k, n] : std::vector<std::array<int64_t, 3>>{
           {1, 512, 1000}, {8, 512, 100}, {64, 256, 256}, {128, 768, 64}, {3, 1, 5}, {7, 33, 1}}) {
    const std::string what = absl::StrCat("mm ", m, "x", k, "x", n);
    CheckExtern("aten.mm", {Buf(kBf16, {m, k}, 1), Buf(kBf16, {k, n}, 2)}, {m, n}, {}, what);
    CheckExtern("aten.mm", {Buf(kBf16, {m, k}, 1), Buf(kBf16, {k, n}, 2)}, {m, n}, {},
                what + " on 1 thread", 1);
  }
}

// Constant weights with a call site's state: packed once, reused by later calls (new
// activations each call), and a second shape (a symbolic batch) gets its own plan.
TEST(DnnlBf16Test, MmConstantWeightsKeptAcrossCalls) {
  Buf w(kBf16, {256, 384}, 3);
  w.t.constant = true;
  ExternStateSlot state;
  for (int call = 0; call < 3; ++call) {
    for (int64_t m : {32, 5, 32}) {
      CheckExtern("aten.mm", {Buf(kBf16, {m, 256}, 10 + call), w}, {m, 384}, {},
                  absl::StrCat("mm call ", call, " rows ", m), 2, &state);
    }
  }
}

// ExternTensor::transposed operands (the bytes are the [n, k] / [k, m] transpose), as the
// executable passes them: the implementation reads them so or declines.
TEST(DnnlBf16Test, MmTransposedOperands) {
  const int64_t m = 24, k = 96, n = 40;
  for (bool xt : {false, true}) {
    for (bool yt : {false, true}) {
      for (bool constant : {false, true}) {
        Buf x(kBf16, {m, k}, 4), y(kBf16, {k, n}, 5);
        // Stored transposes of x and y with the same values.
        Buf xs(kBf16, {k, m}, 0), ys(kBf16, {n, k}, 0);
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < k; ++j) xs.Set(j * m + i, x.Get(i * k + j));
        }
        for (int64_t i = 0; i < k; ++i) {
          for (int64_t j = 0; j < n; ++j) ys.Set(j * k + i, y.Get(i * n + j));
        }
        Buf xa = xt ? xs : x, ya = yt ? ys : y;
        xa.t.shape = {m, k};
        ya.t.shape = {k, n};
        xa.t.transposed = xt;
        ya.t.transposed = yt;
        ya.t.constant = constant;
        ExternStateSlot state;
        for (int call = 0; call < 2; ++call) {
          CheckImpl("aten.mm", {xa, ya}, kBf16, {m, n}, {}, {x, y},
                    absl::StrCat("mm xt=", xt, " yt=", yt, " constant=", constant), &state);
        }
      }
    }
  }
}

// bf16 operands into an f32 output (a product whose result the graph keeps in f32).
TEST(DnnlBf16Test, MmAndBmmIntoF32) {
  Buf x(kBf16, {16, 200}, 6), y(kBf16, {200, 48}, 7);
  CheckImpl("aten.mm", {x, y}, kF32, {16, 48}, {}, {x, y}, "mm into f32");
  Buf bx(kBf16, {3, 16, 64}, 8), by(kBf16, {3, 64, 24}, 9);
  CheckImpl("aten.bmm", {bx, by}, kF32, {3, 16, 24}, {}, {bx, by}, "bmm into f32");
}

TEST(DnnlBf16Test, BmmMatchesTheReference) {
  for (auto [b, m, k, n] : std::vector<std::array<int64_t, 4>>{
           {12, 128, 64, 128}, {12, 128, 128, 64}, {2, 3, 5, 7}, {4, 1, 300, 9}}) {
    ExternStateSlot state;
    for (int call = 0; call < 2; ++call) {
      CheckExtern("aten.bmm", {Buf(kBf16, {b, m, k}, 20 + call), Buf(kBf16, {b, k, n}, 30)},
                  {b, m, n}, {}, absl::StrCat("bmm ", b, "x", m, "x", k, "x", n), 2, &state);
    }
  }
}

struct ConvCase {
  std::vector<int64_t> x, w;
  IntList stride, padding, dilation;
  int64_t groups;
  bool bias;
};

std::vector<int64_t> ConvOut(const ConvCase& c) {
  std::vector<int64_t> o = {c.x[0], c.w[0]};
  for (size_t i = 2; i < c.x.size(); ++i) {
    const int64_t s = c.stride.size() == 1 ? c.stride[0] : c.stride[i - 2];
    const int64_t p = c.padding.size() == 1 ? c.padding[0] : c.padding[i - 2];
    const int64_t d = c.dilation.size() == 1 ? c.dilation[0] : c.dilation[i - 2];
    o.push_back((c.x[i] + 2 * p - d * (c.w[i] - 1) - 1) / s + 1);
  }
  return o;
}

const std::vector<ConvCase>& ConvCases() {
  static const auto* cases = new std::vector<ConvCase>{
      {{1, 16, 14, 14}, {32, 16, 3, 3}, {1}, {1}, {1}, 1, true},    // 3x3, bias
      {{2, 64, 8, 8}, {128, 64, 1, 1}, {1}, {0}, {1}, 1, false},    // pointwise
      {{1, 3, 32, 32}, {16, 3, 7, 7}, {2}, {3}, {1}, 1, true},      // a stem
      {{2, 32, 9, 9}, {32, 1, 3, 3}, {2}, {1}, {1}, 32, true},      // depthwise, strided
      {{1, 16, 10, 10}, {24, 8, 3, 3}, {1}, {2}, {2}, 2, false},    // grouped, dilated
      {{2, 8, 30}, {12, 8, 5}, {1}, {2}, {1}, 1, true},             // 1-D
      {{1, 4, 6, 6, 6}, {8, 4, 3, 3, 3}, {1}, {1}, {1}, 1, true},   // 3-D
  };
  return *cases;
}

std::vector<Buf> ConvInputs(const ConvCase& c, DType bias_dtype = kBf16) {
  std::vector<Buf> in = {Buf(kBf16, c.x, 40), Buf(kBf16, c.w, 41)};
  in[1].t.constant = true;
  if (c.bias) in.push_back(Buf(bias_dtype, {c.w[0]}, 42));
  return in;
}

TEST(DnnlBf16Test, ConvolutionMatchesTheReference) {
  for (const ConvCase& c : ConvCases()) {
    const std::string what = absl::StrCat("conv x", c.x.size(), "d w", c.w[0], " groups ",
                                          c.groups, " bias ", c.bias);
    const AttrMap attrs = Conv(c.stride, c.padding, c.dilation, c.groups);
    // With a call site's state (the layout measured on the first call, weights kept), twice.
    ExternStateSlot state;
    for (int call = 0; call < 2; ++call) {
      CheckExtern("aten.convolution", ConvInputs(c), ConvOut(c), attrs, what, 2, &state);
    }
    // A one-off call.
    CheckExtern("aten.convolution", ConvInputs(c), ConvOut(c), attrs, what + " (one-off)", 1);
  }
}

// Whether /proc/cpuinfo lists native bf16 arithmetic (AVX512-BF16 or AMX-BF16).
bool CpuHasNativeBf16() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    return line.find(" avx512_bf16") != std::string::npos ||
           line.find(" amx_bf16") != std::string::npos;
  }
  return false;
}

// The tests above pass whichever path runs a call; this one makes sure that the oneDNN path is
// taken where oneDNN has native bf16 kernels, so a regression that declines every call (and
// leaves the reference kernels to pass the tests) fails here. On other CPUs it checks nothing
// more than the tests above, and says so.
TEST(DnnlBf16Test, OneDnnTakesTheCallsWhereTheCpuHasNativeBf16) {
  if (!CpuHasNativeBf16()) {
    std::printf("no AVX512-BF16 / AMX-BF16 on this CPU: oneDNN may decline bf16 calls\n");
    return;
  }
  Buf x(kBf16, {64, 256}, 50), y(kBf16, {256, 384}, 51);
  EXPECT_TRUE(CheckImpl("aten.mm", {x, y}, kBf16, {64, 384}, {}, {x, y}, "mm"));
  const ConvCase& c = ConvCases()[0];
  const std::vector<Buf> in = ConvInputs(c);
  EXPECT_TRUE(CheckImpl("aten.convolution", in, kBf16, ConvOut(c),
                        Conv(c.stride, c.padding, c.dilation, c.groups), in, "dense conv"));
}

// bf16 activations and weights with an f32 bias, into bf16 and into f32.
TEST(DnnlBf16Test, ConvolutionF32BiasAndOutput) {
  const ConvCase& c = ConvCases()[0];
  const AttrMap attrs = Conv(c.stride, c.padding, c.dilation, c.groups);
  const std::vector<Buf> in = ConvInputs(c, kF32);
  CheckImpl("aten.convolution", in, kBf16, ConvOut(c), attrs, in, "conv f32 bias");
  CheckImpl("aten.convolution", in, kF32, ConvOut(c), attrs, in, "conv f32 bias into f32");
  const std::vector<Buf> bf = ConvInputs(c);
  CheckImpl("aten.convolution", bf, kF32, ConvOut(c), attrs, bf, "conv into f32");
}

// NHWC activations (inductor's channels_last pass): the buffers' shapes are [N, H, W, C].
TEST(DnnlBf16Test, ConvolutionChannelsLast) {
  for (size_t i : {0, 1, 3}) {
    const ConvCase& c = ConvCases()[i];
    AttrMap attrs = Conv(c.stride, c.padding, c.dilation, c.groups);
    attrs[kChannelsLastAttr] = IntList{1, 1};
    std::vector<Buf> in = ConvInputs(c);
    in[0].t.shape = ToChannelsLast(c.x);
    ExternStateSlot state;
    for (int call = 0; call < 2; ++call) {
      CheckExtern("aten.convolution", in, ToChannelsLast(ConvOut(c)), attrs,
                  absl::StrCat("channels-last conv case ", i), 2, &state);
    }
  }
}

// relu and a residual add applied inside the convolution (oneDNN post-ops): when the fused
// implementation takes the call its result is the convolution's with the epilogue applied;
// when it declines nothing was written.
TEST(DnnlBf16Test, ConvolutionEpilogues) {
  const ConvCase& c = ConvCases()[0];
  const AttrMap attrs = Conv(c.stride, c.padding, c.dilation, c.groups);
  const std::vector<Buf> in = ConvInputs(c);
  std::vector<ExternTensor> args;
  for (const Buf& b : in) args.push_back(b.t);
  Buf residual(kBf16, ConvOut(c), 43);
  for (bool add : {false, true}) {
    std::vector<ExternEpilogueStep> epilogue;
    if (add) epilogue.push_back({ExternEpilogueStep::kAdd, 0, 0, &residual.t});
    epilogue.push_back({ExternEpilogueStep::kRelu});
    ExternStateSlot state;
    for (int call = 0; call < 2; ++call) {
      Buf got(kBf16, ConvOut(c), 99);
      const std::vector<char> before = got.bytes;
      ExternArgs a{args, got.t, attrs, 2};
      a.state = &state;
      absl::StatusOr<bool> ran = RunExternFused("aten.convolution", a, epilogue);
      ASSERT_TRUE(ran.ok()) << ran.status();
      if (!*ran) {
        EXPECT_EQ(got.bytes, before) << "a declined call wrote its output";
        continue;
      }
      ExpectClose(got, Oracle("aten.convolution", in, ConvOut(c), attrs, true,
                              add ? &residual : nullptr),
                  absl::StrCat("conv + ", add ? "add + " : "", "relu"));
    }
  }
}

}  // namespace
}  // namespace coil::cpu
