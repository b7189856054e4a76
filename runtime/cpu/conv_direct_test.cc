// The direct NHWC convolutions (internal/conv_direct.h) against a float64 convolution computed
// here: depthwise kernels of 3x3, 5x5 and other sizes (strides, padding, dilation; channel
// counts that exercise the 16-, 8- and 1-lane paths), pointwise ones with partial row blocks
// and panels, bias and epilogue chains, on the calling thread and on 4 threads; then
// aten.convolution routed to them through RunExtern / RunExternFused (the BUILD rule sets
// COIL_CONV_DIRECT=1, so no timing decides) and calls that must not take them; the pointwise
// kernel's scaled input (a squeeze-excitation multiply read in place of its result).
#include "runtime/cpu/internal/conv_direct.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/attribute.h"
#include "runtime/cpu/externs.h"
#include "runtime/cpu/kernel_testing.h"
#include "runtime/cpu/thread_pool.h"

namespace coil::cpu {
namespace {

using internal::DirectConvKind;
using internal::DirectConvShape;
using internal::DirectConvWeights;
using testing::RandomTensor;
using ::testing::HasSubstr;

std::vector<float> Random(int64_t size, int seed) { return testing::RandomFloats(size, seed); }

// A convolution's epilogue step on v, the value at output index `idx`, in float64.
double ApplyStep(const ExternEpilogueStep& step, double v, int64_t idx) {
  switch (step.kind) {
    case ExternEpilogueStep::kAdd:
      return v + reinterpret_cast<const float*>(step.other->data)[idx];
    case ExternEpilogueStep::kRelu:
      return std::max(v, 0.0);
    case ExternEpilogueStep::kClip:
      return std::min(std::max(v, static_cast<double>(step.lo)), static_cast<double>(step.hi));
    case ExternEpilogueStep::kHardswish:
      return v * std::min(std::max(v + 3, 0.0), 6.0) / 6;
    case ExternEpilogueStep::kBias:  // aten.mm's steps, never a convolution's
    case ExternEpilogueStep::kGeluErf:
    case ExternEpilogueStep::kGeluTanh:
      ADD_FAILURE() << "an aten.mm epilogue step in a convolution test";
      break;
  }
  return v;
}

// The float64 oracle over NHWC activations (the input NCHW where the shape says so) and an
// [oc, c / groups, kh, kw] weight; `scale` per
// element is the sum of |terms| + 1 (the tolerance's scale).
void Reference(const DirectConvShape& s, const std::vector<float>& x, const std::vector<float>& w,
               const float* bias, const std::vector<ExternEpilogueStep>& steps,
               std::vector<double>& want, std::vector<double>& scale) {
  const int64_t cg = s.c / s.groups, og = s.oc / s.groups;
  want.assign(s.n * s.oh * s.ow * s.oc, 0);
  scale.assign(want.size(), 0);
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t oh = 0; oh < s.oh; ++oh) {
      for (int64_t ow = 0; ow < s.ow; ++ow) {
        for (int64_t o = 0; o < s.oc; ++o) {
          double v = 0, a = 0;
          const int64_t g = o / og;
          for (int64_t ci = 0; ci < cg; ++ci) {
            for (int64_t kh = 0; kh < s.kh; ++kh) {
              for (int64_t kw = 0; kw < s.kw; ++kw) {
                const int64_t ih = oh * s.stride_h - s.pad_h + kh * s.dil_h;
                const int64_t iw = ow * s.stride_w - s.pad_w + kw * s.dil_w;
                if (ih < 0 || ih >= s.h || iw < 0 || iw >= s.w) continue;
                const int64_t ch = g * cg + ci;
                const int64_t xi = s.input_nchw ? ((n * s.c + ch) * s.h + ih) * s.w + iw
                                                : ((n * s.h + ih) * s.w + iw) * s.c + ch;
                const double t =
                    static_cast<double>(x[xi]) * w[((o * cg + ci) * s.kh + kh) * s.kw + kw];
                v += t;
                a += std::abs(t);
              }
            }
          }
          const int64_t idx = ((n * s.oh + oh) * s.ow + ow) * s.oc + o;
          if (bias != nullptr) v += bias[o];
          for (const ExternEpilogueStep& step : steps) v = ApplyStep(step, v, idx);
          want[idx] = v;
          scale[idx] = a + 1;
        }
      }
    }
  }
}

void ExpectNear(const std::vector<float>& got, const std::vector<double>& want,
                const std::vector<double>& scale, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 2e-6 * scale[i]) << what << " element " << i;
  }
}

DirectConvShape Depthwise(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t stride,
                          int64_t pad, int64_t dil = 1, int64_t kw = 0) {
  DirectConvShape s;
  s.n = n;
  s.c = s.oc = s.groups = c;
  s.h = h;
  s.w = w;
  s.kh = k;
  s.kw = kw > 0 ? kw : k;
  s.stride_h = s.stride_w = stride;
  s.pad_h = s.pad_w = pad;
  s.dil_h = s.dil_w = dil;
  s.oh = (h + 2 * pad - dil * (s.kh - 1) - 1) / stride + 1;
  s.ow = (w + 2 * pad - dil * (s.kw - 1) - 1) / stride + 1;
  return s;
}

DirectConvShape Pointwise(int64_t n, int64_t h, int64_t w, int64_t c, int64_t oc) {
  DirectConvShape s;
  s.n = n;
  s.h = s.oh = h;
  s.w = s.ow = w;
  s.c = c;
  s.oc = oc;
  s.kh = s.kw = 1;
  return s;
}

DirectConvShape Few(int64_t n, int64_t c, int64_t h, int64_t w, int64_t oc, int64_t k,
                    int64_t stride, int64_t pad, bool nchw, int64_t dil = 1) {
  DirectConvShape s = Depthwise(n, c, h, w, k, stride, pad, dil);
  s.oc = oc;
  s.groups = 1;
  s.input_nchw = nchw;
  return s;
}

const std::vector<DirectConvShape>& Shapes() {
  static const auto* shapes = new std::vector<DirectConvShape>{
      Depthwise(1, 72, 13, 13, 3, 1, 1),    // 16 + 16 + 16 + 16 + 8 channels
      Depthwise(2, 19, 11, 9, 5, 2, 2),     // 16 + 3 channels, 5x5, stride 2
      Depthwise(1, 16, 12, 12, 3, 2, 1),    // stride 2, an even size
      Depthwise(1, 24, 9, 10, 3, 1, 2, 2),  // dilation 2
      Depthwise(2, 8, 6, 7, 2, 1, 0, 1, 3), // a 2x3 kernel (the generic path), 8 lanes only
      Depthwise(1, 5, 5, 5, 7, 1, 3),       // 7x7, one lane at a time
      Depthwise(1, 40, 3, 3, 5, 1, 2),      // every output at a border
      Pointwise(1, 7, 5, 40, 72),           // 35 rows: a partial row block, a partial panel
      Pointwise(2, 3, 3, 16, 5),            // one partial panel
      Pointwise(1, 14, 14, 96, 160),        // 196 rows, 10 panels: several tasks
      Pointwise(3, 5, 7, 33, 129),          // odd everything
      // On 4 threads these split finer than their default tasks: rows of 16 (49 rows, 10
      // panels), and channels in two groups of 496 and 472 (16 * 29 + 8) per output row.
      Pointwise(1, 7, 7, 960, 160),
      Depthwise(1, 968, 7, 7, 5, 1, 2),
      Few(1, 3, 10, 12, 16, 3, 2, 1, /*nchw=*/true),   // mobilenet's first convolution, small
      Few(2, 3, 9, 9, 24, 7, 2, 3, /*nchw=*/false),    // 16 + 8 output channels, NHWC input
      Few(1, 1, 8, 8, 5, 5, 1, 4, /*nchw=*/true, 2),   // one channel, dilated, 5 lanes
      Few(1, 3, 20, 20, 64, 3, 1, 1, /*nchw=*/true),   // 4 threads
      // Rows wide enough for blocks of 8 interior outputs (and a remainder after them).
      Depthwise(2, 40, 4, 29, 3, 1, 1),      // 3x3: 16 + 16 + 8 lanes
      Depthwise(1, 21, 5, 41, 3, 2, 1),      // stride 2, 16 + 5 lanes
      Depthwise(1, 17, 6, 30, 5, 1, 2),      // 5x5, 16 + 1 lanes
      Depthwise(1, 9, 4, 33, 3, 1, 2, 2),    // dilation 2, 8 + 1 lanes
      Depthwise(1, 3, 9, 27, 7, 2, 3),       // 7x7 stride 2, one lane at a time
      Depthwise(1, 16, 3, 24, 2, 1, 0, 1, 3),  // 2x3 (generic), no padding
      // Few-channel interiors past their blocks of 8 (FewChannelsBlock's 4, 2, 1): 5 columns
      // (4 + 1) above, 18 (16 + 2), 21 (16 + 4 + 1), 34 (32 + 2), 27 (24 + 2 + 1).
      Few(2, 3, 9, 45, 16, 3, 2, 1, /*nchw=*/true),    // 22 outputs a row
      Few(1, 4, 5, 38, 24, 5, 1, 2, /*nchw=*/false),   // NHWC, 16 + 8 output channels
      Few(1, 2, 6, 31, 5, 3, 1, 0, /*nchw=*/true, 2),  // dilated, no padding, 5 lanes
      // Pointwise blocks of three panels: 5 panels (2 + 3, the last partial), 3 panels (on 4
      // threads the panels split in twos, and a last group of one joins the one before), 7.
      Pointwise(2, 9, 7, 24, 72),
      Pointwise(1, 4, 4, 24, 40),
      Pointwise(1, 6, 6, 19, 100),
      // Depthwise bands (helper-58): on 4 threads (3 taken) bands of 4 rows, the last of 2;
      // stride 2 from an odd size in bands of 2 rows; whole images on one thread.
      Depthwise(2, 40, 26, 26, 3, 1, 1),
      Depthwise(2, 64, 23, 23, 5, 2, 2),
      Depthwise(3, 24, 11, 17, 5, 2, 2),
      // Register tiles (helper-61, conv_direct_dw_tile.h): no padding (interior tiles and a
      // partial last one), padding wider than half the kernel (a tile column with no tap in
      // the row), one-column rows, stride 2 from even and odd widths with a 1-7 column last
      // tile, 5x5 stride 2 without padding, a 7-wide row (one edge tile), 16 + 8 + 3 lanes.
      Depthwise(1, 32, 5, 21, 3, 1, 0),
      Depthwise(1, 16, 6, 11, 3, 1, 2),
      Depthwise(2, 24, 3, 1, 3, 1, 1),
      Depthwise(1, 24, 4, 1, 5, 2, 2),
      Depthwise(1, 40, 5, 34, 3, 2, 1),
      Depthwise(1, 16, 7, 35, 3, 2, 1),
      Depthwise(1, 16, 9, 27, 5, 2, 0),
      Depthwise(1, 27, 7, 7, 5, 1, 2),
      Depthwise(1, 27, 9, 19, 5, 1, 1),
      Depthwise(1, 16, 5, 9, 3, 2, 2),
  };
  return *shapes;
}

TEST(ConvDirectTest, Classify) {
  EXPECT_EQ(internal::ClassifyDirectConv(Depthwise(1, 72, 13, 13, 3, 1, 1)),
            DirectConvKind::kDepthwise);
  EXPECT_EQ(internal::ClassifyDirectConv(Pointwise(1, 7, 7, 16, 32)), DirectConvKind::kPointwise);
  DirectConvShape big = Depthwise(1, 8, 20, 20, 9, 1, 4);  // kernels past 7x7: oneDNN's
  EXPECT_EQ(internal::ClassifyDirectConv(big), DirectConvKind::kNone);
  DirectConvShape strided = Pointwise(1, 8, 8, 16, 16);
  strided.stride_h = strided.stride_w = 2;
  strided.oh = strided.ow = 4;
  EXPECT_EQ(internal::ClassifyDirectConv(strided), DirectConvKind::kNone);
  DirectConvShape grouped = Depthwise(1, 16, 8, 8, 3, 1, 1);
  grouped.groups = 4;  // neither depthwise nor groups 1
  EXPECT_EQ(internal::ClassifyDirectConv(grouped), DirectConvKind::kNone);
  DirectConvShape multiplier = Depthwise(1, 16, 8, 8, 3, 1, 1);
  multiplier.oc = 32;  // a channel multiplier of 2
  EXPECT_EQ(internal::ClassifyDirectConv(multiplier), DirectConvKind::kNone);
  EXPECT_EQ(internal::ClassifyDirectConv(Few(1, 3, 16, 16, 16, 3, 2, 1, true)),
            DirectConvKind::kFewChannels);
  EXPECT_EQ(internal::ClassifyDirectConv(Few(1, 4, 16, 16, 16, 7, 2, 3, false)),
            DirectConvKind::kFewChannels);
  EXPECT_EQ(internal::ClassifyDirectConv(Few(1, 5, 16, 16, 16, 3, 1, 1, false)),
            DirectConvKind::kNone);  // more than kDirectFewChannels
  // An NCHW input is taken by the few-channel kernel only.
  DirectConvShape nchw_depthwise = Depthwise(1, 16, 8, 8, 3, 1, 1);
  nchw_depthwise.input_nchw = true;
  EXPECT_EQ(internal::ClassifyDirectConv(nchw_depthwise), DirectConvKind::kNone);
}

TEST(ConvDirectTest, DefaultRule) {
  EXPECT_TRUE(internal::UseDirectConv(Depthwise(16, 960, 7, 7, 5, 1, 2), 16));
  EXPECT_TRUE(internal::UseDirectConv(Pointwise(1, 56, 56, 64, 256), 16));     // 103 MFLOP
  EXPECT_FALSE(internal::UseDirectConv(Pointwise(16, 56, 56, 64, 256), 16));   // 1.6 GFLOP
  EXPECT_TRUE(internal::UseDirectConv(Pointwise(16, 14, 14, 112, 672), 16));   // 472 MFLOP
  EXPECT_TRUE(internal::UseDirectConv(Few(16, 3, 224, 224, 16, 3, 2, 1, true), 16));  // 173 MF
  EXPECT_TRUE(internal::UseDirectConv(Few(1, 3, 224, 224, 16, 3, 2, 1, true), 4));    // 11 MFLOP
  EXPECT_FALSE(internal::UseDirectConv(Few(1, 3, 224, 224, 64, 7, 2, 3, true), 16));   // 118 MFLOP
  DirectConvShape strided = Pointwise(1, 8, 8, 16, 16);
  strided.stride_h = 2;
  EXPECT_FALSE(internal::UseDirectConv(strided, 16));
  // Below kDirectBoundsThreads the pointwise and depthwise bounds scale with the square of the
  // thread count: 32 and 10 MFLOP at 4 threads, 128 and 40 at 8.
  EXPECT_TRUE(internal::UseDirectConv(Pointwise(1, 56, 56, 64, 64), 4));       // 26 MFLOP
  EXPECT_FALSE(internal::UseDirectConv(Pointwise(1, 56, 56, 64, 256), 4));     // 103 MFLOP
  EXPECT_TRUE(internal::UseDirectConv(Pointwise(1, 56, 56, 64, 256), 8));
  EXPECT_TRUE(internal::UseDirectConv(Depthwise(1, 960, 7, 7, 5, 1, 2), 4));   // 2.4 MFLOP
  EXPECT_FALSE(internal::UseDirectConv(Depthwise(16, 960, 7, 7, 5, 1, 2), 4));  // 38 MFLOP
  EXPECT_TRUE(internal::UseDirectConv(Depthwise(16, 960, 7, 7, 5, 1, 2), 8));
  EXPECT_TRUE(internal::UseDirectConv(Depthwise(64, 960, 7, 7, 5, 1, 2), 16));  // every size
  EXPECT_TRUE(internal::UseDirectConv(Few(16, 3, 224, 224, 16, 3, 2, 1, true), 4));  // unscaled
  // Under kDirectMinThreads threads oneDNN keeps every call.
  EXPECT_FALSE(internal::UseDirectConv(Depthwise(1, 96, 56, 56, 3, 1, 1), 2));
  EXPECT_FALSE(internal::UseDirectConv(Pointwise(1, 14, 14, 80, 480), 3));
}

TEST(ConvDirectTest, KernelsMatchFloat64Convolution) {
  ThreadPool pool4(4);
  int seed = 1;
  for (const DirectConvShape& s : Shapes()) {
    const std::vector<float> x = Random(s.n * s.h * s.w * s.c, seed++),
                             w = Random(s.oc * (s.c / s.groups) * s.kh * s.kw, seed++),
                             bias = Random(s.oc, seed++);
    DirectConvWeights packed;
    ASSERT_TRUE(packed.Pack(w.data(), s));
    EXPECT_TRUE(packed.Holds(w.data(), s));
    EXPECT_EQ(packed.kind(), internal::ClassifyDirectConv(s));
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool4}) {
      for (bool with_bias : {false, true}) {
        std::vector<float> out(s.n * s.oh * s.ow * s.oc, -7.0f);
        const float* b = with_bias ? bias.data() : nullptr;
        internal::RunDirectConv(s, x.data(), packed, b, {}, out.data(), pool);
        std::vector<double> want, scale;
        Reference(s, x, w, b, {}, want, scale);
        ExpectNear(out, want, scale,
                   absl::StrCat("c ", s.c, " oc ", s.oc, " k ", s.kh, "x", s.kw, " threads ",
                                pool == nullptr ? 1 : 4, " bias ", with_bias));
      }
    }
  }
}

TEST(ConvDirectTest, EpilogueStepsInOrder) {
  ThreadPool pool(4);
  for (const DirectConvShape& s :
       {Depthwise(1, 72, 7, 7, 3, 1, 1), Depthwise(1, 13, 6, 6, 5, 1, 2), Pointwise(1, 5, 6, 48, 75),
        Pointwise(1, 4, 4, 24, 40), Depthwise(1, 24, 3, 30, 3, 1, 1), Few(1, 3, 6, 40, 24, 3, 1, 1, true)}) {
    const std::vector<float> x = Random(s.n * s.h * s.w * s.c, 11),
                             w = Random(s.oc * (s.c / s.groups) * s.kh * s.kw, 12),
                             bias = Random(s.oc, 13);
    std::vector<float> residual = Random(s.n * s.oh * s.ow * s.oc, 14);
    const ExternTensor other{proto::FLOAT32, {s.n, s.oh, s.ow, s.oc},
                             reinterpret_cast<char*>(residual.data())};
    const std::vector<std::vector<ExternEpilogueStep>> chains = {
        {{ExternEpilogueStep::kRelu}},
        {{ExternEpilogueStep::kClip, 0.0f, 6.0f}},
        {{ExternEpilogueStep::kHardswish}},
        {{ExternEpilogueStep::kAdd, 0, 0, &other}, {ExternEpilogueStep::kRelu}},
        {{ExternEpilogueStep::kHardswish}, {ExternEpilogueStep::kClip, -0.25f, 0.5f}},
    };
    DirectConvWeights packed;
    ASSERT_TRUE(packed.Pack(w.data(), s));
    for (size_t i = 0; i < chains.size(); ++i) {
      std::vector<float> out(residual.size(), -7.0f);
      internal::RunDirectConv(s, x.data(), packed, bias.data(), chains[i], out.data(), &pool);
      std::vector<double> want, scale;
      Reference(s, x, w, bias.data(), chains[i], want, scale);
      ExpectNear(out, want, scale, absl::StrCat("c ", s.c, " k ", s.kh, " chain ", i));
    }
  }
}

AttrMap ConvAttrs(int64_t stride, int64_t pad, int64_t groups, bool channels_last,
                  bool input_channels_last = true) {
  AttrMap a = {{"stride", IntList{stride}},  {"padding", IntList{pad}},
               {"dilation", IntList{1}},     {"transposed", false},
               {"groups", groups},           {"output_padding", IntList{0}}};
  if (channels_last) a["coil.channels_last"] = IntList{input_channels_last ? 1 : 0, 1};
  return a;
}

TEST(ConvDirectTest, ConvolutionsRouteToTheKernels) {
  ThreadPool pool(4);
  for (const DirectConvShape& s : {Depthwise(1, 40, 10, 10, 3, 2, 1), Pointwise(2, 6, 5, 24, 40),
                                   Few(1, 3, 12, 12, 16, 3, 2, 1, /*nchw=*/true)}) {
    const std::string dw = internal::ClassifyDirectConv(s) == DirectConvKind::kDepthwise
                               ? "depthwise"
                               : s.input_nchw ? "few channels" : "pointwise";
    RandomTensor x(s.input_nchw ? std::vector<int64_t>{s.n, s.c, s.h, s.w}
                                : std::vector<int64_t>{s.n, s.h, s.w, s.c},
                   21),
        w({s.oc, s.c / s.groups, s.kh, s.kw}, 22, true), bias({s.oc}, 23, true),
        out({s.n, s.oh, s.ow, s.oc}, 24), residual({s.n, s.oh, s.ow, s.oc}, 25);
    const AttrMap attrs = ConvAttrs(s.stride_h, s.pad_h, s.groups, /*channels_last=*/true,
                                    /*input_channels_last=*/!s.input_nchw);
    const std::vector<ExternTensor> in = {x.t, w.t, bias.t};
    ExternStateSlot state;
    std::vector<double> want, scale;
    Reference(s, x.data, w.data, bias.data.data(), {}, want, scale);
    int64_t before = internal::DirectConvCallCount();
    absl::Status st = RunExtern("aten.convolution", ExternArgs{in, out.t, attrs, 4, &state, &pool});
    ASSERT_TRUE(st.ok()) << st;
    EXPECT_EQ(internal::DirectConvCallCount() - before, 1) << dw;
    ExpectNear(out.data, want, scale, dw);
    const std::vector<ExternEpilogueStep> steps = {{ExternEpilogueStep::kAdd, 0, 0, &residual.t},
                                                   {ExternEpilogueStep::kHardswish}};
    Reference(s, x.data, w.data, bias.data.data(), steps, want, scale);
    before = internal::DirectConvCallCount();
    absl::StatusOr<bool> fused = RunExternFused(
        "aten.convolution", ExternArgs{in, out.t, attrs, 4, &state, &pool}, steps);
    ASSERT_TRUE(fused.ok()) << fused.status();
    EXPECT_TRUE(*fused);
    EXPECT_EQ(internal::DirectConvCallCount() - before, 1);
    ExpectNear(out.data, want, scale, dw + " + add + hardswish");
  }
}

// y = steps(x) * g(scale[image, c]) (externs.h, ExternScaledInput) in float64, rounded to f32
// as the input the float64 convolution then reads.
std::vector<float> ScaledInput(const DirectConvShape& s, const std::vector<float>& x,
                               const std::vector<float>& scale,
                               const std::vector<ExternEpilogueStep>& steps, bool hardsigmoid) {
  std::vector<float> y(x.size());
  const int64_t pixels = s.h * s.w;
  for (size_t i = 0; i < x.size(); ++i) {
    double v = x[i];
    for (const ExternEpilogueStep& step : steps) v = ApplyStep(step, v, static_cast<int64_t>(i));
    const int64_t row = static_cast<int64_t>(i) / s.c, c = static_cast<int64_t>(i) % s.c;
    double g = scale[(row / pixels) * s.c + c];
    if (hardsigmoid) g = std::min(std::max(g / 6 + 0.5, 0.0), 1.0);
    y[i] = static_cast<float>(v * g);
  }
  return y;
}

TEST(ConvDirectTest, ScaledInputMatchesFloat64) {
  ThreadPool pool4(4), pool7(7);
  // Rows that cross images (7x7 and 3x5 images against 8-row blocks and 64-row tasks), channel
  // and column tails, one and several panel groups.
  for (const DirectConvShape& s : {Pointwise(1, 28, 28, 72, 40), Pointwise(2, 7, 7, 96, 160),
                                   Pointwise(3, 3, 5, 19, 33)}) {
    const std::vector<float> x = Random(s.n * s.h * s.w * s.c, 41), w = Random(s.oc * s.c, 42),
                             bias = Random(s.oc, 43);
    std::vector<float> scale = Random(s.n * s.c, 44);
    for (float& v : scale) v *= 8;  // beyond hardsigmoid's clamps at -3 and 3
    std::vector<float> residual = Random(s.n * s.oh * s.ow * s.oc, 45);
    const ExternTensor other{proto::FLOAT32, {s.n, s.oh, s.ow, s.oc},
                             reinterpret_cast<char*>(residual.data())};
    DirectConvWeights packed;
    ASSERT_TRUE(packed.Pack(w.data(), s));
    const std::vector<std::vector<ExternEpilogueStep>> prologues = {
        {}, {{ExternEpilogueStep::kRelu}}, {{ExternEpilogueStep::kHardswish}}};
    const std::vector<std::vector<ExternEpilogueStep>> epilogues = {
        {}, {{ExternEpilogueStep::kAdd, 0, 0, &other}, {ExternEpilogueStep::kRelu}}};
    for (size_t pi = 0; pi < prologues.size(); ++pi) {
      for (bool hardsigmoid : {false, true}) {
        ExternScaledInput si;
        si.x = ExternTensor{proto::FLOAT32, {s.n, s.h, s.w, s.c},
                            const_cast<char*>(reinterpret_cast<const char*>(x.data()))};
        si.steps = prologues[pi];
        si.scale = ExternTensor{proto::FLOAT32, {s.n, 1, 1, s.c},
                                reinterpret_cast<char*>(scale.data())};
        si.hardsigmoid = hardsigmoid;
        const std::vector<float> y = ScaledInput(s, x, scale, prologues[pi], hardsigmoid);
        for (size_t ei = 0; ei < epilogues.size(); ++ei) {
          std::vector<double> want, tol;
          Reference(s, y, w, bias.data(), epilogues[ei], want, tol);
          for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool4, &pool7}) {
            std::vector<float> out(residual.size(), -7.0f);
            // x is not what the kernel reads: a stale buffer of NaNs stands for it.
            const std::vector<float> stale(x.size(), std::nanf(""));
            internal::RunDirectConv(s, stale.data(), packed, bias.data(), epilogues[ei],
                                    out.data(), pool, &si);
            ExpectNear(out, want, tol,
                       absl::StrCat("c ", s.c, " oc ", s.oc, " n ", s.n, " prologue ", pi,
                                    " hardsigmoid ", hardsigmoid, " epilogue ", ei, " threads ",
                                    pool == nullptr ? 1 : pool->num_threads()));
          }
        }
      }
    }
  }
}

TEST(ConvDirectTest, ScaledInputRoutesOnlyToThePointwiseKernel) {
  ThreadPool pool(4);
  const DirectConvShape s = Pointwise(2, 6, 5, 24, 40);
  RandomTensor x({s.n, s.h, s.w, s.c}, 51), w({s.oc, s.c, 1, 1}, 52, true), bias({s.oc}, 53, true),
      scale({s.n, 1, 1, s.c}, 54), out({s.n, s.h, s.w, s.oc}, 55), y({s.n, s.h, s.w, s.c}, 56);
  const AttrMap attrs = ConvAttrs(1, 0, 1, /*channels_last=*/true);
  const std::vector<ExternTensor> in = {y.t, w.t, bias.t};
  ExternStateSlot state;
  EXPECT_TRUE(ConvolutionTakesScaledInput(ExternArgs{in, out.t, attrs, 4, &state, &pool}));
  ExternScaledInput si{x.t, {{ExternEpilogueStep::kRelu}}, scale.t, true};
  const std::vector<float> scaled = ScaledInput(s, x.data, scale.data, si.steps, true);
  std::vector<double> want, tol;
  Reference(s, scaled, w.data, bias.data.data(), {}, want, tol);
  ExternArgs args{in, out.t, attrs, 4, &state, &pool};
  args.scaled_input = &si;
  absl::Status st = RunExtern("aten.convolution", args);
  ASSERT_TRUE(st.ok()) << st;
  ExpectNear(out.data, want, tol, "through RunExtern");
  // With an epilogue as post-ops.
  const std::vector<ExternEpilogueStep> steps = {{ExternEpilogueStep::kHardswish}};
  Reference(s, scaled, w.data, bias.data.data(), steps, want, tol);
  absl::StatusOr<bool> fused = RunExternFused("aten.convolution", args, steps);
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_TRUE(*fused);
  ExpectNear(out.data, want, tol, "through RunExternFused");
  // Calls the kernel does not take: a depthwise convolution, no pool. Asking says no, and a
  // scaled input given anyway is an error, not a result computed from the unwritten input.
  RandomTensor dx({1, 8, 8, 16}, 57), dw({16, 1, 3, 3}, 58, true), dout({1, 8, 8, 16}, 59),
      dscale({1, 1, 1, 16}, 60);
  const std::vector<ExternTensor> din = {dx.t, dw.t};
  ExternStateSlot dstate;
  ExternArgs dargs{din, dout.t, ConvAttrs(1, 1, 16, true), 4, &dstate, &pool};
  EXPECT_FALSE(ConvolutionTakesScaledInput(dargs));
  ExternScaledInput dsi{dx.t, {}, dscale.t, false};
  dargs.scaled_input = &dsi;
  const absl::Status depthwise = RunExtern("aten.convolution", dargs);
  EXPECT_EQ(depthwise.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(depthwise.message(), HasSubstr("a scaled input for a call the pointwise kernel "
                                             "does not take"));
  ExternArgs no_pool{in, out.t, attrs, 4, &state, nullptr};
  EXPECT_FALSE(ConvolutionTakesScaledInput(no_pool));
  no_pool.scaled_input = &si;
  const absl::Status unpooled = RunExtern("aten.convolution", no_pool);
  EXPECT_EQ(unpooled.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(unpooled.message(), HasSubstr("aten.convolution: a scaled input"));
  // A scale of the wrong size (N * C values are read).
  RandomTensor short_scale({s.n, 1, 1, s.c - 1}, 61);
  ExternScaledInput bad{x.t, {}, short_scale.t, false};
  args.scaled_input = &bad;
  const absl::Status wrong = RunExtern("aten.convolution", args);
  EXPECT_EQ(wrong.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(wrong.message(), HasSubstr("a scale of [2, 1, 1, 23]"));
}

TEST(ConvDirectTest, OtherConvolutionsDoNotTakeThem) {
  ThreadPool pool(4);
  const DirectConvShape s = Depthwise(1, 16, 8, 8, 3, 1, 1);
  RandomTensor x_nchw({1, 16, 8, 8}, 31), x_nhwc({1, 8, 8, 16}, 32), w({16, 1, 3, 3}, 33, true),
      w_runtime({16, 1, 3, 3}, 34), out_nchw({1, 16, 8, 8}, 35), out_nhwc({1, 8, 8, 16}, 36);
  const int64_t before = internal::DirectConvCallCount();
  ExternStateSlot s1, s2, s3;
  // NCHW activations.
  const std::vector<ExternTensor> plain = {x_nchw.t, w.t};
  ASSERT_TRUE(RunExtern("aten.convolution",
                        ExternArgs{plain, out_nchw.t, ConvAttrs(1, 1, 16, false), 4, &s1, &pool})
                  .ok());
  // Weights computed at run time (not constant).
  const std::vector<ExternTensor> runtime_w = {x_nhwc.t, w_runtime.t};
  ASSERT_TRUE(RunExtern("aten.convolution", ExternArgs{runtime_w, out_nhwc.t,
                                                       ConvAttrs(1, 1, 16, true), 4, &s2, &pool})
                  .ok());
  std::vector<double> want, scale;
  Reference(s, x_nhwc.data, w_runtime.data, nullptr, {}, want, scale);
  ExpectNear(out_nhwc.data, want, scale, "runtime weights through oneDNN or the reference");
  // No pool.
  const std::vector<ExternTensor> no_pool = {x_nhwc.t, w.t};
  ASSERT_TRUE(RunExtern("aten.convolution",
                        ExternArgs{no_pool, out_nhwc.t, ConvAttrs(1, 1, 16, true), 4, &s3, nullptr})
                  .ok());
  EXPECT_EQ(internal::DirectConvCallCount(), before);
}

}  // namespace
}  // namespace coil::cpu
