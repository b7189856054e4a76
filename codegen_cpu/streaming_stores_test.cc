// Streaming (non-temporal) stores (internal/streaming_stores.h): which kernels get them, read
// from the optimized LLVM IR for fixed CPUs (so the checks do not depend on the machine), and a
// program that uses them on this host computing what the float64 reference interpreter does.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codegen_cpu/codegen_cpu.h"
#include "codegen_cpu/cpu_program.h"
#include "gtest/gtest.h"
#include "inductor/schedule.h"
#include "ir/parser.h"
#include "prims/decompose.h"
#include "runtime/interpreter.h"

namespace coil {
namespace {

absl::StatusOr<proto::Schedule> Schedule(const std::string& text) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  if (!g.ok()) return g.status();
  absl::StatusOr<bool> d = prims::Decompose(*g);
  if (!d.ok()) return d.status();
  return inductor::BuildSchedule(g->ToProto());
}

// The IR of every kernel of `text` compiled for `cpu`, concatenated.
std::string KernelIr(const std::string& text, const std::string& cpu) {
  absl::StatusOr<proto::Schedule> s = Schedule(text);
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return "";
  CpuCodegenOptions o;
  o.cpu = cpu;
  absl::StatusOr<proto::KernelModule> m = GenerateCpu(*s, o);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return "";
  std::string ir;
  for (const proto::CompiledKernel& k : m->kernels()) absl::StrAppend(&ir, k.source(), "\n");
  return ir;
}

std::string Gelu(const std::string& shape) {
  return absl::StrCat("graph @g(%0 \"x\": f32[", shape, "], %1 \"b\": f32[", shape,
                      "]) {\n  %2: f32[", shape, "] = aten.add(%0, %1) {alpha = 1}\n  %3: f32[",
                      shape, "] = aten.gelu(%2) {approximate = \"none\"}\n  return %3\n}\n");
}

bool Streams(const std::string& ir) {
  return absl::StrContains(ir, "!nontemporal") && absl::StrContains(ir, "@llvm.x86.sse.sfence");
}

// Every AVX-512 target gets 512-bit vectors (codegen_cpu/internal/target.h, [Note: 512-bit
// vectors]), Intel's and the generic x86-64-v4 too, where LLVM alone would prefer 256.
TEST(StreamingStoresTest, LargeOutputsOnAvx512Stream) {
  // 1024 x 2048 f32 = 8 MiB, rows of whole cache lines.
  for (const char* cpu : {"znver4", "sapphirerapids", "x86-64-v4"}) {
    const std::string ir = KernelIr(Gelu("1024, 2048"), cpu);
    EXPECT_TRUE(Streams(ir)) << cpu << "\n" << ir;
    EXPECT_TRUE(absl::StrContains(ir, "<16 x float>")) << cpu;
  }
}

TEST(StreamingStoresTest, SmallOutputsStayInTheCache) {
  const std::string ir = KernelIr(Gelu("64, 256"), "znver4");
  EXPECT_FALSE(absl::StrContains(ir, "nontemporal")) << ir;
  EXPECT_FALSE(absl::StrContains(ir, "sfence")) << ir;
}

TEST(StreamingStoresTest, NoStreamingWithoutWholeLineStores) {
  // AVX2: 32-byte vectors, half a line each.
  EXPECT_FALSE(absl::StrContains(KernelIr(Gelu("1024, 2048"), "x86-64-v3"), "nontemporal"));
  // Rows of 40 floats (160 bytes): stores are not all line-aligned.
  EXPECT_FALSE(absl::StrContains(KernelIr(Gelu("65536, 40"), "znver4"), "nontemporal"));
}

TEST(StreamingStoresTest, OutputsTheKernelReadsBackDoNotStream) {
  // Softmax keeps exp(x - max) in its output and reads it back (inductor ReuseLoopValues).
  const std::string ir = KernelIr(R"(
graph @s(%0 "x": f32[1024, 2048]) {
  %1: f32[1024, 2048] = aten.softmax(%0) {dim = -1, dtype = none}
  return %1
}
)",
                                  "znver4");
  EXPECT_FALSE(absl::StrContains(ir, "nontemporal")) << ir;
}

TEST(StreamingStoresTest, AStreamingProgramComputesTheReference) {
  const std::string text = Gelu("1024, 1024");  // 4 MiB: the smallest streamed size
  absl::StatusOr<proto::Schedule> s = Schedule(text);
  ASSERT_TRUE(s.ok()) << s.status();
  cpu::CpuExecutableOptions runtime;
  runtime.num_threads = 2;
  absl::StatusOr<proto::KernelModule> m = GenerateCpu(*s);
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<std::unique_ptr<CpuProgram>> p = CpuProgram::Load(*std::move(m), runtime);
  ASSERT_TRUE(p.ok()) << p.status();
  if (!Streams(KernelIr(text, ""))) {
    std::printf("note: this host has no 64-byte vectors; the program runs without streaming\n");
  }
  absl::StatusOr<Graph> g = ParseGraph(text);
  ASSERT_TRUE(g.ok());
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> dist(-3, 3);
  std::vector<HostTensor> inputs;
  for (int i = 0; i < 2; ++i) {
    std::vector<double> v(1024 * 1024);
    for (double& x : v) x = dist(rng);
    inputs.push_back(HostTensor::FromDoubles(proto::FLOAT32, {1024, 1024}, v));
  }
  absl::StatusOr<std::vector<HostTensor>> want = Interpret(*g, inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  const std::vector<double> ref = (*want)[0].ToDoubles();
  for (int run = 0; run < 3; ++run) {  // later runs reuse the recycled output block
    absl::StatusOr<std::vector<HostTensor>> got = (*p)->Run(inputs);
    ASSERT_TRUE(got.ok()) << got.status();
    const std::vector<double> out = (*got)[0].ToDoubles();
    ASSERT_EQ(out.size(), ref.size());
    double worst = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      worst = std::max(worst, std::abs(out[i] - ref[i]) / std::max(1.0, std::abs(ref[i])));
    }
    EXPECT_LT(worst, 1e-6) << "run " << run;
  }
}

}  // namespace
}  // namespace coil
