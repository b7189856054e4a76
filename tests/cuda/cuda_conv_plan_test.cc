// The CUDA backend's convolution path without a GPU (CI): for schedules inductor builds with the
// CUDA backend, runtime/cuda's plan (conv_plan.h) reads the convolution's geometry (stride,
// padding, dilation, groups; 1-D to 3-D) from the extern's attributes, says which epilogues
// cuDNN's graph applies itself (relu, a residual add, in f32 or through f16/bf16 conversions)
// and which stay generated (gelu, a pre-activation that is also an output), and which
// convolutions stay on the host with a reason (transposed, integer). The generated module
// carries the bias kernels exactly when a convolution has a bias, and loading cuDNN from a name
// that does not exist is the clean "no cuDNN" error.
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "codegen_cuda/codegen_cuda.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/cuda/conv_plan.h"
#include "runtime/cuda/cudnn.h"
#include "runtime/cuda/kernel_abi.h"
#include "runtime/schedule_interpreter.h"
#include "runtime/testing/test_kit.h"
#include "tools/driver/cuda_backend.h"
#include "tools/driver/driver.h"

namespace coil {
namespace {

using cuda::ConvPlan;

proto::Schedule Schedule(const std::string& text, const driver::CudaBackendOptions& cuda = {}) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return {};
  driver::DriverOptions options;
  options.backend = driver::CudaBackend(cuda);
  options.stop_after = driver::Stage::kInductor;
  options.cache = nullptr;
  absl::StatusOr<driver::CompileResult> r = driver::CompileGraph(*std::move(g), options);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok() || !r->schedule.has_value()) return {};
  return *r->schedule;
}

// The plans of the schedule's convolution kernels, in program order.
std::vector<ConvPlan> PlansOf(const proto::Schedule& s) {
  std::vector<ConvPlan> plans;
  for (const proto::Kernel& k : s.kernels()) {
    if (std::optional<ConvPlan> p = cuda::PlanConv(s, k); p.has_value()) plans.push_back(*p);
  }
  return plans;
}

// The plan of the schedule's one convolution kernel.
ConvPlan PlanOf(const proto::Schedule& s) {
  const std::vector<ConvPlan> plans = PlansOf(s);
  EXPECT_EQ(plans.size(), 1u);
  return plans.empty() ? ConvPlan{} : plans[0];
}

std::string NameOf(const proto::Schedule& s, int buffer) {
  for (const proto::Buffer& b : s.buffers()) {
    if (b.id() == buffer) return b.name();
  }
  return "(none)";
}

// A convolution with every attribute explicit (the IR requires it).
std::string Conv(const std::string& out, const std::string& ins, const std::string& stride,
                 const std::string& padding, const std::string& dilation, int groups,
                 bool transposed = false) {
  return absl::StrCat(out, " = aten.convolution(", ins, ") {stride = [", stride, "], padding = [",
                      padding, "], dilation = [", dilation, "], transposed = ",
                      transposed ? "true" : "false", ", output_padding = [",
                      transposed ? "0, 0" : "0, 0", "], groups = ", groups, "}");
}

TEST(CudaConvPlanTest, ConvBiasReluFusesIntoTheOutput) {
  proto::Schedule s = Schedule(absl::StrCat(
      R"(graph @g(%0 "x": f32[batch, 3, 9, 9], %1 "w": f32[4, 3, 3, 3], %2 "b": f32[4]) {
  symbol batch min 1 max 0 hint 2
  )",
      Conv("%3: f32[batch, 4, 9, 9]", "%0, %1, %2", "1, 1", "1, 1", "1, 1", 1), R"(
  %4: f32[batch, 4, 9, 9] = aten.relu(%3)
  return %4
})"));
  ConvPlan p = PlanOf(s);
  EXPECT_TRUE(p.unsupported.empty()) << p.unsupported;
  ASSERT_TRUE(p.fused) << p.not_fused;
  EXPECT_EQ(p.dtype, proto::FLOAT32);
  EXPECT_EQ(NameOf(s, p.x), "x");
  EXPECT_EQ(NameOf(s, p.w), "w");
  EXPECT_EQ(NameOf(s, p.bias), "b");
  EXPECT_EQ(p.spatial, 2);
  EXPECT_EQ(p.stride, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(p.padding, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(p.groups, 1);
  EXPECT_TRUE(p.relu);
  EXPECT_EQ(p.r, 0);
  EXPECT_EQ(p.d, s.outputs(0)) << "cuDNN writes the graph's output directly";
}

TEST(CudaConvPlanTest, GeometryStridesPaddingDilationGroups) {
  proto::Schedule s = Schedule(absl::StrCat(
      R"(graph @g(%0 "x": f32[2, 6, 17, 15], %1 "w": f32[8, 3, 3, 2]) {
  )",
      Conv("%2: f32[2, 8, 8, 8]", "%0, %1", "2, 2", "1, 2", "2, 3", 2), R"(
  return %2
})"));
  ConvPlan p = PlanOf(s);
  EXPECT_TRUE(p.unsupported.empty()) << p.unsupported;
  EXPECT_EQ(p.bias, 0);
  EXPECT_EQ(p.stride, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(p.padding, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(p.dilation, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(p.groups, 2);
  EXPECT_FALSE(p.fused);
  EXPECT_TRUE(p.not_fused.empty()) << "no epilogue: " << p.not_fused;
  EXPECT_EQ(p.out, s.outputs(0));
}

TEST(CudaConvPlanTest, OneDimensionalAndThreeDimensional) {
  ConvPlan p1 = PlanOf(Schedule(
      R"(graph @g(%0 "x": f32[2, 4, 20], %1 "w": f32[5, 4, 3], %2 "b": f32[5]) {
  %3: f32[2, 5, 9] = aten.convolution(%0, %1, %2) {stride = [2], padding = [0], dilation = [1], transposed = false, output_padding = [0], groups = 1}
  return %3
})"));
  EXPECT_TRUE(p1.unsupported.empty()) << p1.unsupported;
  EXPECT_EQ(p1.spatial, 1);
  EXPECT_EQ(p1.stride, (std::vector<int64_t>{2}));
  ConvPlan p3 = PlanOf(Schedule(
      R"(graph @g(%0 "x": f32[1, 2, 5, 6, 7], %1 "w": f32[3, 2, 3, 3, 3]) {
  %2: f32[1, 3, 5, 6, 7] = aten.convolution(%0, %1) {stride = [1], padding = [1], dilation = [1], transposed = false, output_padding = [0], groups = 1}
  return %2
})"));
  EXPECT_TRUE(p3.unsupported.empty()) << p3.unsupported;
  EXPECT_EQ(p3.spatial, 3);
  EXPECT_EQ(p3.padding, (std::vector<int64_t>{1, 1, 1})) << "one value stands for every dimension";
}

TEST(CudaConvPlanTest, ResidualAddAndReluFuse) {
  proto::Schedule s = Schedule(absl::StrCat(
      R"(graph @g(%0 "x": f32[2, 4, 6, 6], %1 "w": f32[4, 4, 3, 3], %2 "b": f32[4], %3 "r": f32[2, 4, 6, 6]) {
  )",
      Conv("%4: f32[2, 4, 6, 6]", "%0, %1, %2", "1, 1", "1, 1", "1, 1", 1), R"(
  %5: f32[2, 4, 6, 6] = aten.add(%4, %3) {alpha = 1}
  %6: f32[2, 4, 6, 6] = aten.relu(%5)
  return %6
})"));
  ConvPlan p = PlanOf(s);
  ASSERT_TRUE(p.fused) << p.not_fused;
  EXPECT_EQ(NameOf(s, p.r), "r");
  EXPECT_EQ(NameOf(s, p.bias), "b");
  EXPECT_TRUE(p.relu);
}

TEST(CudaConvPlanTest, HalfPrecisionConvReluFusesThroughItsF32Epilogue) {
  for (const char* t : {"f16", "bf16"}) {
    SCOPED_TRACE(t);
    ConvPlan p = PlanOf(Schedule(absl::StrReplaceAll(
        absl::StrCat(R"(graph @g(%0 "x": T[2, 8, 5, 5], %1 "w": T[8, 8, 1, 1], %2 "b": T[8]) {
  )",
                     Conv("%3: T[2, 8, 5, 5]", "%0, %1, %2", "1, 1", "0, 0", "1, 1", 1), R"(
  %4: T[2, 8, 5, 5] = aten.relu(%3)
  return %4
})"),
        {{"T", t}})));
    ASSERT_TRUE(p.fused) << p.not_fused;
    EXPECT_EQ(p.dtype, std::string(t) == "f16" ? proto::FLOAT16 : proto::BFLOAT16);
    EXPECT_TRUE(p.relu);
  }
}

TEST(CudaConvPlanTest, EpiloguesCudnnCannotApplyStayGenerated) {
  struct Case {
    const char* name;
    const char* tail;
    const char* why;
  };
  const Case cases[] = {
      {"gelu (erf)", R"(%4: f32[2, 4, 6, 6] = aten.gelu(%3) {approximate = "none"}
  return %4)", "computes more than relu(convolution + residual)"},
      {"maximum with 1", R"(%4: f32[2, 4, 6, 6] = aten.clamp_min(%3) {min = 1.0}
  return %4)", "not a relu"},
      {"the pre-activation is an output too", R"(%4: f32[2, 4, 6, 6] = aten.relu(%3)
  return %3, %4)", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ConvPlan p = PlanOf(Schedule(absl::StrCat(
        R"(graph @g(%0 "x": f32[2, 4, 6, 6], %1 "w": f32[4, 4, 3, 3], %2 "b": f32[4]) {
  )",
        Conv("%3: f32[2, 4, 6, 6]", "%0, %1, %2", "1, 1", "1, 1", "1, 1", 1), "\n  ", c.tail,
        "\n}")));
    EXPECT_TRUE(p.unsupported.empty()) << p.unsupported;
    EXPECT_FALSE(p.fused);
    EXPECT_FALSE(p.relu);
    EXPECT_EQ(p.r, 0);
    EXPECT_NE(p.bias, 0) << "the bias stays the convolution's";
    EXPECT_FALSE(p.not_fused.empty());
    EXPECT_TRUE(absl::StrContains(p.not_fused, c.why)) << p.not_fused;
  }
}

TEST(CudaConvPlanTest, WhatCudnnCannotRunStaysOnTheHostWithAReason) {
  ConvPlan t = PlanOf(Schedule(absl::StrCat(
      R"(graph @g(%0 "x": f32[1, 4, 5, 5], %1 "w": f32[4, 2, 3, 3]) {
  )",
      Conv("%2: f32[1, 2, 7, 7]", "%0, %1", "1, 1", "0, 0", "1, 1", 1, /*transposed=*/true), R"(
  return %2
})")));
  EXPECT_TRUE(absl::StrContains(t.unsupported, "transposed")) << t.unsupported;
  EXPECT_FALSE(t.fused);
  ConvPlan i = PlanOf(Schedule(absl::StrCat(
      R"(graph @g(%0 "x": i64[1, 2, 5, 5], %1 "w": i64[3, 2, 3, 3]) {
  )",
      Conv("%2: i64[1, 3, 3, 3]", "%0, %1", "1, 1", "0, 0", "1, 1", 1), R"(
  return %2
})")));
  EXPECT_TRUE(absl::StrContains(i.unsupported, "cuDNN has no INT64 convolution")) << i.unsupported;
}

TEST(CudaConvPlanTest, TheModuleCarriesBiasKernelsOnlyForConvolutionsWithABias) {
  const std::string with_bias = absl::StrCat(
      R"(graph @g(%0 "x": f32[2, 4, 6, 6], %1 "w": f32[4, 4, 3, 3], %2 "b": f32[4]) {
  )",
      Conv("%3: f32[2, 4, 6, 6]", "%0, %1, %2", "1, 1", "1, 1", "1, 1", 1), R"(
  return %3
})");
  const std::string without = absl::StrReplaceAll(with_bias, {{"%0, %1, %2)", "%0, %1)"}});
  for (const auto& [text, want] : {std::pair{with_bias, true}, std::pair{without, false}}) {
    absl::StatusOr<std::string> src = codegen_cuda::GenerateCudaSource(Schedule(text), {});
    ASSERT_TRUE(src.ok()) << src.status();
    for (const char* t : {"f32", "f16", "bf16", "f64"}) {
      EXPECT_EQ(absl::StrContains(*src, cuda::ConvBiasSymbol(t) + "("), want) << t;
    }
  }
}

// Three convolutions (conv + relu, conv + relu, a last 1x1 convolution): with TF32 allowed,
// inductor's channels_last pass stores the activations between them [N, H, W, C], decided once
// for the program; the plans say which tensors cuDNN gets with NHWC strides, and the epilogues
// (over permuted loops) still fuse. The model's input and output keep their layout. Exact f32
// (the default) keeps NCHW, as does COIL_CHANNELS_LAST=0; COIL_CHANNELS_LAST=1 forces NHWC.
TEST(CudaConvPlanTest, ChannelsLastActivationsBetweenConvolutions) {
  const std::string text = absl::StrCat(
      R"(graph @g(%0 "x": f32[2, 8, 6, 6], %1 "w1": f32[8, 8, 3, 3], %2 "b1": f32[8], %3 "w2": f32[8, 8, 3, 3], %4 "b2": f32[8], %11 "w3": f32[4, 8, 1, 1]) {
  )",
      Conv("%5: f32[2, 8, 6, 6]", "%0, %1, %2", "1, 1", "1, 1", "1, 1", 1), R"(
  %6: f32[2, 8, 6, 6] = aten.relu(%5)
  )",
      Conv("%7: f32[2, 8, 6, 6]", "%6, %3, %4", "1, 1", "1, 1", "1, 1", 1), R"(
  %9: f32[2, 8, 6, 6] = aten.relu(%7)
  )",
      Conv("%10: f32[2, 4, 6, 6]", "%9, %11", "1, 1", "0, 0", "1, 1", 1), R"(
  return %10
})");
  struct Case {
    const char* name;
    bool tf32;
    const char* env;  // COIL_CHANNELS_LAST, or null
    bool on;
  };
  for (const Case& c : {Case{"TF32 allowed", true, nullptr, true},
                        Case{"exact f32", false, nullptr, false},
                        Case{"TF32, COIL_CHANNELS_LAST=0", true, "0", false},
                        Case{"exact f32, COIL_CHANNELS_LAST=1", false, "1", true}}) {
    SCOPED_TRACE(c.name);
    const bool on = c.on;
    if (c.env != nullptr) setenv("COIL_CHANNELS_LAST", c.env, 1);
    driver::CudaBackendOptions cuda;
    cuda.runtime.allow_tf32 = c.tf32;
    proto::Schedule s = Schedule(text, cuda);
    unsetenv("COIL_CHANNELS_LAST");
    const std::vector<ConvPlan> plans = PlansOf(s);
    ASSERT_EQ(plans.size(), 3u);
    const ConvPlan &first = plans[0], &second = plans[1], &third = plans[2];
    for (const ConvPlan& p : plans) EXPECT_TRUE(p.unsupported.empty()) << p.unsupported;
    EXPECT_FALSE(first.x_nhwc) << "the model's input keeps its layout";
    EXPECT_EQ(first.out_nhwc, on);
    EXPECT_EQ(second.x_nhwc, on);
    EXPECT_EQ(second.out_nhwc, on);
    EXPECT_EQ(third.x_nhwc, on);
    EXPECT_FALSE(third.out_nhwc) << "the model's output keeps its layout";
    auto shape = [&](int id) {
      std::vector<int64_t> v;
      for (const proto::Buffer& b : s.buffers()) {
        if (b.id() != id) continue;
        for (const proto::SymExpr& d : b.shape()) v.push_back(d.value());
      }
      return v;
    };
    const std::vector<int64_t> nchw = {2, 8, 6, 6}, nhwc = {2, 6, 6, 8};
    EXPECT_EQ(shape(first.x), nchw);
    EXPECT_EQ(shape(first.out), on ? nhwc : nchw);
    EXPECT_EQ(shape(second.x), on ? nhwc : nchw);
    EXPECT_EQ(shape(third.x), on ? nhwc : nchw);
    EXPECT_EQ(shape(third.out), (std::vector<int64_t>{2, 4, 6, 6}));
    EXPECT_EQ(shape(first.w), (std::vector<int64_t>{8, 8, 3, 3})) << "weights keep their layout";
    // relu(conv + b1) and relu(conv + b2), each one cuDNN graph writing the next input.
    EXPECT_TRUE(first.fused) << first.not_fused;
    EXPECT_TRUE(first.relu);
    EXPECT_TRUE(second.fused) << second.not_fused;
    EXPECT_TRUE(second.relu);
    EXPECT_EQ(second.x, first.d);
    EXPECT_EQ(third.x, second.d);
  }
}

// An autocast-style program (`--precision bf16`): the f32 input cast to bf16, three bf16
// convolutions, the result cast back to f32. cuDNN's bf16 convolutions are tensor-core kernels,
// which work in NHWC, so the bf16 activations between them are stored channels-last with exact
// f32 too (the default); the cast kernels touch both layouts (f32 NCHW input and output, bf16
// NHWC activations). COIL_CHANNELS_LAST=0 keeps NCHW. An f32 program stays NCHW by default
// (the test above), and a bf16 program with one convolution has nothing to keep between two.
TEST(CudaConvPlanTest, HalfPrecisionActivationsAreChannelsLastWithoutTf32) {
  const std::string text = absl::StrCat(
      R"(graph @g(%0 "x": f32[2, 8, 6, 6], %1 "w1": bf16[8, 8, 3, 3], %2 "b1": bf16[8], %3 "w2": bf16[8, 8, 3, 3], %4 "b2": bf16[8], %11 "w3": bf16[4, 8, 1, 1]) {
  %12: bf16[2, 8, 6, 6] = aten.to_dtype(%0) {dtype = bf16}
  )",
      Conv("%5: bf16[2, 8, 6, 6]", "%12, %1, %2", "1, 1", "1, 1", "1, 1", 1), R"(
  %6: bf16[2, 8, 6, 6] = aten.relu(%5)
  )",
      Conv("%7: bf16[2, 8, 6, 6]", "%6, %3, %4", "1, 1", "1, 1", "1, 1", 1), R"(
  %9: bf16[2, 8, 6, 6] = aten.relu(%7)
  )",
      Conv("%10: bf16[2, 4, 6, 6]", "%9, %11", "1, 1", "0, 0", "1, 1", 1), R"(
  %13: f32[2, 4, 6, 6] = aten.to_dtype(%10) {dtype = f32}
  return %13
})");
  absl::StatusOr<Graph> graph = ParseGraph(text);
  ASSERT_TRUE(graph.ok()) << graph.status();
  const std::vector<HostTensor> inputs = test_kit::RandomInputs(*graph, {}, /*seed=*/5);
  std::vector<std::vector<HostTensor>> results;  // the Schedule interpreter's, per layout
  for (const char* env : {static_cast<const char*>(nullptr), "0"}) {
    const bool on = env == nullptr;
    SCOPED_TRACE(on ? "default (exact f32)" : "COIL_CHANNELS_LAST=0");
    if (env != nullptr) setenv("COIL_CHANNELS_LAST", env, 1);
    proto::Schedule s = Schedule(text);
    unsetenv("COIL_CHANNELS_LAST");
    absl::StatusOr<std::vector<HostTensor>> out = InterpretSchedule(s, inputs);
    ASSERT_TRUE(out.ok()) << out.status();
    results.push_back(*std::move(out));
    const std::vector<ConvPlan> plans = PlansOf(s);
    ASSERT_EQ(plans.size(), 3u);
    for (const ConvPlan& p : plans) {
      EXPECT_TRUE(p.unsupported.empty()) << p.unsupported;
      EXPECT_EQ(p.dtype, proto::BFLOAT16);
    }
    // The cast's output is an intermediate written by a generated kernel: channels-last too.
    EXPECT_EQ(plans[0].x_nhwc, on);
    EXPECT_EQ(plans[0].out_nhwc, on);
    EXPECT_EQ(plans[1].x_nhwc, on);
    EXPECT_EQ(plans[2].x_nhwc, on);
    EXPECT_EQ(plans[2].out_nhwc, on) << "the last convolution's bf16 result is cast afterwards";
    for (const proto::Buffer& b : s.buffers()) {
      std::vector<int64_t> shape;
      for (const proto::SymExpr& d : b.shape()) shape.push_back(d.value());
      if (b.kind() == proto::Buffer::INPUT && b.name() == "x") {
        EXPECT_EQ(shape, (std::vector<int64_t>{2, 8, 6, 6})) << "the f32 input keeps NCHW";
      }
      if (b.kind() == proto::Buffer::OUTPUT) {
        EXPECT_EQ(b.dtype(), proto::FLOAT32);
        EXPECT_EQ(shape, (std::vector<int64_t>{2, 4, 6, 6})) << "the f32 output keeps NCHW";
      }
    }
  }
  // Only addresses change: the interpreter (which reads the layout attribute) computes the
  // same bits from both schedules.
  ASSERT_EQ(results.size(), 2u);
  ASSERT_EQ(results[0].size(), 1u);
  ASSERT_EQ(results[1].size(), 1u);
  EXPECT_EQ(results[0][0].ToDoubles(), results[1][0].ToDoubles());
}

TEST(CudaConvPlanTest, NoLibraryIsACleanError) {
  absl::StatusOr<const cuda::Cudnn*> dnn = cuda::Cudnn::Load({"libcoil_no_such_cudnn.so.9"});
  ASSERT_FALSE(dnn.ok());
  EXPECT_EQ(dnn.status().code(), absl::StatusCode::kFailedPrecondition) << dnn.status();
  EXPECT_TRUE(absl::StartsWith(dnn.status().message(), "no cuDNN (")) << dnn.status();
  EXPECT_TRUE(absl::StrContains(dnn.status().message(), "libcoil_no_such_cudnn.so.9"))
      << dnn.status();
}

}  // namespace
}  // namespace coil
