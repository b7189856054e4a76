// Channels-last activations between convolutions (inductor/passes/channels_last.h) through the
// real pipeline (parse, decompose, inductor with CpuCapabilities, codegen, CpuProgram) against
// the float64 reference interpreter on the original graph: conv chains with a depthwise
// convolution, residual adds, concat, max pooling, a mean and a 4-D output, on 1 and 3
// threads, at two batch sizes, with oneDNN's nhwc kernels and with reorders to its blocked
// layouts. The decision is checked on the Schedule (which buffers, which convolutions, loops
// over channels innermost, one convolution or COIL_CHANNELS_LAST=0: nothing changes), and the
// reference-kernel paths of a channels-last convolution (the Schedule interpreter, the CPU
// runtime's fallback) against the NCHW result; a residual add as a oneDNN post-op.
#include <optional>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen_cpu/codegen_cpu.h"
#include "codegen_cpu/cpu_program.h"
#include "codegen_cpu/testing/cpu_schedule.h"
#include "gtest/gtest.h"
#include "inductor/schedule.h"
#include "ir/attribute.h"
#include "ir/channels_last.h"
#include "ir/parser.h"
#include "ir/proto/schedule.pb.h"
#include "prims/decompose.h"
#include "runtime/cpu/externs.h"
#include "runtime/interpreter.h"
#include "runtime/schedule_interpreter.h"
#include "runtime/testing/test_kit.h"

namespace coil {
namespace {

std::string Conv(const std::string& out, const std::string& type, const std::string& args,
                 int groups, int padding) {
  return absl::StrCat("  ", out, ": ", type, " = aten.convolution(", args,
                      ") {dilation = [1], groups = ", groups,
                      ", output_padding = [0], padding = [", padding,
                      "], stride = [1], transposed = false}\n");
}

// x [batch, 8, 9, 9] -> conv 3x3 (16) + relu -> depthwise 3x3 + residual add of the first
// convolution's result (a stored buffer, live past the add: not in place) + relu -> 1x1 conv ->
// concat with the first relu (32 channels) -> max pool 2x2 -> conv 3x3 (8, returned as is)
// -> mean over H, W (returned).
std::string Network() {
  return absl::StrCat(
      "graph @net(%0 \"x\": f32[batch, 8, 9, 9], %1 \"w1\": f32[16, 8, 3, 3], %2 \"b1\": f32[16], "
      "%20 \"w2\": f32[16, 1, 3, 3], %21 \"w3\": f32[16, 16, 1, 1], %22 \"b3\": f32[16], "
      "%23 \"w4\": f32[8, 32, 3, 3]) {\n  symbol batch min 1 max 0 hint 2\n",
      Conv("%3", "f32[batch, 16, 9, 9]", "%0, %1, %2", 1, 1),
      "  %4: f32[batch, 16, 9, 9] = aten.relu(%3)\n",
      Conv("%5", "f32[batch, 16, 9, 9]", "%4, %20", 16, 1),
      "  %6: f32[batch, 16, 9, 9] = aten.add(%5, %3) {alpha = 1}\n"
      "  %7: f32[batch, 16, 9, 9] = aten.relu(%6)\n",
      Conv("%8", "f32[batch, 16, 9, 9]", "%7, %21, %22", 1, 0),
      "  %9: f32[batch, 32, 9, 9] = aten.cat(%8, %4) {dim = 1}\n"
      "  %10: f32[batch, 32, 4, 4] = aten.max_pool2d(%9) {kernel_size = [2], stride = [2], padding = [0], dilation = [1], ceil_mode = false}\n",
      Conv("%11", "f32[batch, 8, 4, 4]", "%10, %23", 1, 1),
      "  %12: f32[batch, 8] = aten.mean(%11) {dim = [2, 3], keepdim = false, dtype = none}\n"
      "  return %12, %11\n}\n");
}

// One 3x3 convolution and a relu.
std::string OneConv() {
  return absl::StrCat(
      "graph @one(%0 \"x\": f32[batch, 8, 9, 9], %1 \"w\": f32[16, 8, 3, 3]) {\n"
      "  symbol batch min 1 max 0 hint 2\n",
      Conv("%3", "f32[batch, 16, 9, 9]", "%0, %1", 1, 1),
      "  %4: f32[batch, 16, 9, 9] = aten.relu(%3)\n  return %4\n}\n");
}

proto::Schedule Build(const std::string& text) {
  return CpuScheduleOf(text).value_or(proto::Schedule());
}

// The convolutions' layout flags (input, output) in kernel order; {-1, -1} without the attribute.
std::vector<std::vector<int64_t>> ConvFlags(const proto::Schedule& s) {
  std::vector<std::vector<int64_t>> flags;
  for (const proto::Kernel& k : s.kernels()) {
    if (k.extern_op() != "aten.convolution") continue;
    std::vector<int64_t> f = {-1, -1};
    for (const proto::NamedAttribute& a : k.extern_attrs()) {
      if (a.name() != kChannelsLastAttr) continue;
      absl::StatusOr<Attribute> v = AttrFromProto(a.value());
      EXPECT_TRUE(v.ok());
      if (v.ok()) f = std::get<IntList>(*v);
    }
    flags.push_back(f);
  }
  return flags;
}

std::string ShapeText(const proto::Buffer& b) {
  std::string t;
  for (const proto::SymExpr& e : b.shape()) {
    absl::StrAppend(&t, t.empty() ? "" : ",", e.kind() == proto::SymExpr::CONST
                                                  ? absl::StrCat(e.value())
                                                  : e.name());
  }
  return t;
}

TEST(ChannelsLastTest, DecisionOnTheNetwork) {
  const proto::Schedule s = Build(Network());
  const std::vector<std::vector<int64_t>> flags = ConvFlags(s);
  ASSERT_EQ(flags.size(), 4u);
  // The first convolution reads the model's input (NCHW) and writes channels-last; the middle
  // ones stay channels-last; the last writes the returned tensor in the caller's layout.
  EXPECT_EQ(flags[0], (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(flags[1], (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(flags[2], (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(flags[3], (std::vector<int64_t>{1, 0}));
  int permuted = 0, channel_inner_loops = 0;
  for (const proto::Buffer& b : s.buffers()) {
    const std::string shape = ShapeText(b);
    if (b.kind() == proto::Buffer::INTERMEDIATE &&
        (shape == "batch,9,9,16" || shape == "batch,9,9,32" || shape == "batch,4,4,32")) {
      ++permuted;
    }
    // Inputs and outputs keep NCHW.
    if (b.kind() == proto::Buffer::INPUT && b.shape_size() == 4 && b.name() == "x") {
      EXPECT_EQ(shape, "batch,8,9,9");
    }
    if (b.kind() == proto::Buffer::OUTPUT && b.shape_size() == 4) {
      EXPECT_EQ(shape, "batch,8,4,4");
    }
  }
  EXPECT_GE(permuted, 3) << s.DebugString();
  for (const proto::Kernel& k : s.kernels()) {
    if (k.ranges_size() != 4) continue;
    const proto::SymExpr& inner = k.ranges(3);
    if (inner.kind() == proto::SymExpr::CONST && (inner.value() == 16 || inner.value() == 32)) {
      ++channel_inner_loops;
    }
  }
  // The three convolutions' epilogues (relu; residual add + relu; bias) and the fused concat
  // + pooling walk channels innermost (the last convolution's output keeps NCHW).
  EXPECT_GE(channel_inner_loops, 4) << s.DebugString();
}

TEST(ChannelsLastTest, OneConvolutionOrSwitchedOffChangesNothing) {
  for (const std::vector<int64_t>& f : ConvFlags(Build(OneConv()))) {
    EXPECT_EQ(f, (std::vector<int64_t>{-1, -1}));
  }
  setenv("COIL_CHANNELS_LAST", "0", 1);
  const proto::Schedule s = Build(Network());
  unsetenv("COIL_CHANNELS_LAST");
  const std::vector<std::vector<int64_t>> flags = ConvFlags(s);
  EXPECT_EQ(flags.size(), 4u);
  for (const std::vector<int64_t>& f : flags) EXPECT_EQ(f, (std::vector<int64_t>{-1, -1}));
}

// A convolution whose weight is computed in the program (a 4-D intermediate) and one over
// f64 data: the computed weight keeps NCHW (only activations change layout), the f64
// convolution is not eligible, and only the two f32 convolutions' activation between them is
// channels-last.
std::string ComputedWeight() {
  return absl::StrCat(
      "graph @cw(%0 \"x\": f32[2, 4, 6, 6], %1 \"w1\": f32[4, 4, 3, 3], %2 \"w2\": f32[4, 4, 3, 3], "
      "%3 \"y\": f64[2, 4, 6, 6], %4 \"w3\": f64[4, 4, 3, 3]) {\n",
      "  %5: f32[4, 4, 3, 3] = aten.mul_scalar(%2) {other = 0.5}\n",
      Conv("%6", "f32[2, 4, 6, 6]", "%0, %1", 1, 1),
      "  %7: f32[2, 4, 6, 6] = aten.relu(%6)\n",
      Conv("%8", "f32[2, 4, 6, 6]", "%7, %5", 1, 1),
      Conv("%9", "f64[2, 4, 6, 6]", "%3, %4", 1, 1),
      Conv("%10", "f64[2, 4, 6, 6]", "%9, %4", 1, 1),
      "  return %8, %10\n}\n");
}

TEST(ChannelsLastTest, WeightsAndOtherDtypesKeepTheirLayout) {
  const std::string text = ComputedWeight();
  const proto::Schedule s = Build(text);
  const std::vector<std::vector<int64_t>> flags = ConvFlags(s);
  ASSERT_EQ(flags.size(), 4u);
  EXPECT_EQ(flags[0], (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(flags[1], (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(flags[2], (std::vector<int64_t>{-1, -1}));
  EXPECT_EQ(flags[3], (std::vector<int64_t>{-1, -1}));
  for (const proto::Kernel& k : s.kernels()) {
    if (k.extern_op() != "aten.convolution") continue;
    EXPECT_EQ(ShapeText(s.buffers(k.extern_inputs(1) - 1)), "4,4,3,3");
  }
  absl::StatusOr<Graph> g = ParseGraph(text);
  ASSERT_TRUE(g.ok()) << g.status();
  std::vector<HostTensor> in = test_kit::RandomInputs(*g, {}, 3);
  absl::StatusOr<std::vector<HostTensor>> want = Interpret(*g, in, {.float64 = true});
  ASSERT_TRUE(want.ok()) << want.status();
  absl::StatusOr<proto::KernelModule> m = GenerateCpu(s);
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<std::unique_ptr<CpuProgram>> p = CpuProgram::Load(*std::move(m), {});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<std::vector<HostTensor>> got = (*p)->Run(in);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 2u);
  const HostTensor& w = (*want)[0];
  test_kit::ExpectClose(HostTensor::FromDoubles(proto::FLOAT32, w.shape(), w.ToDoubles()),
                        (*got)[0], {.abs = 1e-5, .rel = 1e-5}, "f32 output");
  test_kit::ExpectClose((*want)[1], (*got)[1], {.abs = 1e-12, .rel = 1e-12}, "f64 output");
}

void ExpectMatchesFloat64(const std::vector<HostTensor>& want,
                          const absl::StatusOr<std::vector<HostTensor>>& got,
                          const std::string& what) {
  ASSERT_TRUE(got.ok()) << what << ": " << got.status();
  ASSERT_EQ(want.size(), got->size());
  for (size_t o = 0; o < want.size(); ++o) {
    // float64, compared as its f32 rounding; f32 sums over up to 288 products per output
    // through four convolutions: within 1e-4 of the output's largest magnitude (the real
    // models' bound). A misplaced element is off by O(1).
    const HostTensor& w = want[o];
    double scale = 0;
    for (double v : w.ToDoubles()) scale = std::max(scale, std::abs(v));
    test_kit::ExpectClose(HostTensor::FromDoubles(proto::FLOAT32, w.shape(), w.ToDoubles()),
                          (*got)[o], {.abs = 1e-4 * scale, .rel = 0},
                          absl::StrCat(what, ", output ", o));
  }
}

// oneDNN (Debian's libdnnl.so.2, installed by the setup) runs the convolutions: measured
// layout choice, its nhwc kernels alone (plain) and its blocked layouts with reorders.
TEST(ChannelsLastTest, NetworkMatchesTheFloat64Interpreter) {
  absl::StatusOr<Graph> g = ParseGraph(Network());
  ASSERT_TRUE(g.ok()) << g.status();
  const proto::Schedule s = Build(Network());
  ASSERT_EQ(ConvFlags(s)[1], (std::vector<int64_t>{1, 1}));
  for (const char* layout : {"", "plain", "blocked"}) {
    if (*layout != '\0') setenv("COIL_CONV_LAYOUT", layout, 1);
    for (int threads : {1, 3}) {
      absl::StatusOr<proto::KernelModule> m = GenerateCpu(s);
      ASSERT_TRUE(m.ok()) << m.status();
      cpu::CpuExecutableOptions runtime;
      runtime.num_threads = threads;
      absl::StatusOr<std::unique_ptr<CpuProgram>> p = CpuProgram::Load(*std::move(m), runtime);
      ASSERT_TRUE(p.ok()) << p.status();
      for (int64_t batch : {1, 3, 1}) {
        std::vector<HostTensor> in = test_kit::RandomInputs(
            *g, {{"batch", batch}}, static_cast<int>(11 * batch + threads));
        absl::StatusOr<std::vector<HostTensor>> want = Interpret(*g, in, {.float64 = true});
        ASSERT_TRUE(want.ok()) << want.status();
        ExpectMatchesFloat64(*want, (*p)->Run(in),
                             absl::StrCat("layout '", layout, "', batch ", batch, ", ", threads,
                                          " threads"));
      }
    }
    unsetenv("COIL_CONV_LAYOUT");
  }
}

// A residual add into a channels-last convolution result is taken as a oneDNN binary post-op
// (extern_epilogue.h: its nhwc kernels apply it vectorized); COIL_CONV_POST_OPS=1 takes the
// post-op path wherever it matches, so the depthwise convolution + add + relu must run fused
// and still match.
TEST(ChannelsLastTest, ResidualAddRunsAsPostOp) {
  absl::StatusOr<Graph> g = ParseGraph(Network());
  ASSERT_TRUE(g.ok()) << g.status();
  const proto::Schedule s = Build(Network());
  // The convolution whose epilogue loads a buffer other than its own result: the residual.
  std::string residual_conv;
  for (const proto::Kernel& k : s.kernels()) {
    if (k.extern_op() != "aten.convolution") continue;
    for (const proto::Loop& l : k.loops()) {
      for (const proto::Expr& e : l.body()) {
        if (e.kind() == proto::Expr::LOAD && e.buffer() != k.extern_output() &&
            s.buffers(e.buffer() - 1).shape_size() == 4) {
          residual_conv = k.name();
        }
      }
    }
  }
  ASSERT_FALSE(residual_conv.empty()) << s.DebugString();
  setenv("COIL_CONV_POST_OPS", "1", 1);
  absl::StatusOr<proto::KernelModule> m = GenerateCpu(s);
  ASSERT_TRUE(m.ok()) << m.status();
  cpu::CpuExecutableOptions runtime;
  runtime.num_threads = 2;
  absl::StatusOr<std::unique_ptr<CpuProgram>> p = CpuProgram::Load(*std::move(m), runtime);
  unsetenv("COIL_CONV_POST_OPS");
  ASSERT_TRUE(p.ok()) << p.status();
  (*p)->executable().SetProfiling(true);
  for (int64_t batch : {1, 2}) {
    std::vector<HostTensor> in = test_kit::RandomInputs(*g, {{"batch", batch}}, 9);
    absl::StatusOr<std::vector<HostTensor>> want = Interpret(*g, in, {.float64 = true});
    ASSERT_TRUE(want.ok()) << want.status();
    ExpectMatchesFloat64(*want, (*p)->Run(in), absl::StrCat("post-ops, batch ", batch));
  }
  std::string kind;
  for (const cpu::CpuExecutable::KernelTime& t : (*p)->executable().Profile()) {
    if (t.kernel == residual_conv) kind = t.kind;
  }
  std::string body;
  for (const proto::Kernel& k : s.kernels()) {
    if (k.name() == residual_conv) body = k.DebugString();
  }
  EXPECT_EQ(kind, "extern aten.convolution + post-ops") << body;
}

// The Schedule interpreter runs the channels-last convolutions through the reference kernel.
TEST(ChannelsLastTest, ScheduleInterpreterMatchesTheFloat64Interpreter) {
  absl::StatusOr<Graph> g = ParseGraph(Network());
  ASSERT_TRUE(g.ok()) << g.status();
  const proto::Schedule s = Build(Network());
  for (int64_t batch : {1, 2}) {
    std::vector<HostTensor> in = test_kit::RandomInputs(*g, {{"batch", batch}}, 5);
    absl::StatusOr<std::vector<HostTensor>> want = Interpret(*g, in, {.float64 = true});
    ASSERT_TRUE(want.ok()) << want.status();
    ExpectMatchesFloat64(*want, InterpretSchedule(s, in), absl::StrCat("batch ", batch));
  }
}

// The CPU runtime's reference fallback and its oneDNN path on channels-last buffers, against
// the reference kernel on the NCHW tensors.
TEST(ChannelsLastTest, RuntimeConvolutionReadsAndWritesChannelsLast) {
  const int64_t n = 2, c = 6, h = 5, w = 7, oc = 4;
  HostTensor x = HostTensor::FromDoubles(proto::FLOAT32, {n, c, h, w}, [&] {
    std::vector<double> v;
    for (int64_t i = 0; i < n * c * h * w; ++i) v.push_back(((i * 37) % 23) / 11.0 - 1.0);
    return v;
  }());
  HostTensor wt = HostTensor::FromDoubles(proto::FLOAT32, {oc, c, 3, 3}, [&] {
    std::vector<double> v;
    for (int64_t i = 0; i < oc * c * 9; ++i) v.push_back(((i * 13) % 17) / 8.0 - 1.0);
    return v;
  }());
  AttrMap attrs = {{"stride", Attribute(IntList{1})},       {"padding", Attribute(IntList{1})},
                   {"dilation", Attribute(IntList{1})},     {"transposed", Attribute(false)},
                   {"output_padding", Attribute(IntList{0})}, {"groups", Attribute(int64_t{1})}};
  auto tensor = [](const HostTensor& t) {
    cpu::ExternTensor e;
    e.dtype = t.dtype();
    e.shape = t.shape();
    e.data = reinterpret_cast<char*>(t.RawData());
    return e;
  };
  // NCHW, reference kernel: the oracle.
  HostTensor want = HostTensor::Zeros(proto::FLOAT32, {n, oc, h, w});
  {
    const std::vector<cpu::ExternTensor> ins = {tensor(x), tensor(wt)};
    const cpu::ExternTensor out = tensor(want);
    ASSERT_TRUE(cpu::RunReferenceExtern("aten.convolution", {ins, out, attrs}).ok());
  }
  // Channels-last input and output (x as [n, h, w, c]).
  HostTensor x_cl = x.View({n, h, w, c}, {c * h * w, w, 1, h * w}, 0).Contiguous();
  AttrMap cl_attrs = attrs;
  cl_attrs[kChannelsLastAttr] = Attribute(IntList{1, 1});
  for (bool reference : {true, false}) {
    HostTensor got = HostTensor::Zeros(proto::FLOAT32, {n, h, w, oc});
    const std::vector<cpu::ExternTensor> ins = {tensor(x_cl), tensor(wt)};
    const cpu::ExternTensor out = tensor(got);
    const cpu::ExternArgs args{ins, out, cl_attrs};
    absl::Status st = reference ? cpu::RunReferenceExtern("aten.convolution", args)
                                : cpu::RunExtern("aten.convolution", args);
    ASSERT_TRUE(st.ok()) << st;
    const HostTensor back = got.View({n, oc, h, w}, {h * w * oc, 1, w * oc, oc}, 0).Contiguous();
    test_kit::ExpectClose(want, back, {.abs = 1e-5, .rel = 1e-5},
                          reference ? "reference" : "oneDNN");
  }
  // A malformed flag list is an error naming the attribute.
  AttrMap bad = attrs;
  bad[kChannelsLastAttr] = Attribute(IntList{1});
  HostTensor got = HostTensor::Zeros(proto::FLOAT32, {n, oc, h, w});
  const std::vector<cpu::ExternTensor> ins = {tensor(x), tensor(wt)};
  const cpu::ExternTensor out = tensor(got);
  absl::Status st = cpu::RunReferenceExtern("aten.convolution", {ins, out, bad});
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find(kChannelsLastAttr), std::string::npos) << st;
}

}  // namespace
}  // namespace coil
