// The sign of NaNs that invalid operations make ([Note: NaN sign] in internal/math_emitter.cc):
// generated code must give the NaN the float64 reference interpreter gives (x86's default NaN,
// negative; torch 1.13 on x86 gives the same bits for these ops), whether the operands are run
// time values or literals the code generator sees (which LLVM would fold to a positive NaN), so
// prims.signbit and printed values agree across backends. A NaN that comes in keeps its sign.
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "codegen_cpu/codegen_cpu.h"
#include "codegen_cpu/cpu_program.h"
#include "gtest/gtest.h"
#include "inductor/schedule.h"
#include "ir/parser.h"
#include "prims/decompose.h"
#include "runtime/interpreter.h"

namespace coil {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Runs `text` through prims, inductor and the CPU backend, and through the reference
// interpreter; returns both outputs.
void RunBoth(const std::string& text, const std::vector<HostTensor>& inputs,
             std::vector<HostTensor>* got, std::vector<HostTensor>* want) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<std::vector<HostTensor>> ref = Interpret(*g, inputs);
  ASSERT_TRUE(ref.ok()) << ref.status();
  *want = *std::move(ref);
  absl::StatusOr<bool> d = prims::Decompose(*g);
  ASSERT_TRUE(d.ok()) << d.status();
  absl::StatusOr<proto::Schedule> s = inductor::BuildSchedule(g->ToProto());
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<proto::KernelModule> m = GenerateCpu(*std::move(s));
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<std::unique_ptr<CpuProgram>> p = CpuProgram::Load(*std::move(m), {});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<std::vector<HostTensor>> out = (*p)->Run(inputs);
  ASSERT_TRUE(out.ok()) << out.status();
  *got = *std::move(out);
}

// Same values, NaNs with the same sign.
void ExpectSameBits(const std::vector<HostTensor>& got, const std::vector<HostTensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < got.size(); ++o) {
    const std::vector<double> a = got[o].ToDoubles(), b = want[o].ToDoubles();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      SCOPED_TRACE(testing::Message() << "output " << o << " element " << i);
      EXPECT_EQ(std::isnan(a[i]), std::isnan(b[i]));
      if (std::isnan(b[i])) {
        EXPECT_EQ(std::signbit(a[i]), std::signbit(b[i]));
      } else {
        EXPECT_EQ(a[i], b[i]);
      }
    }
  }
}

TEST(NanSignTest, RunTimeInvalidOperations) {
  // 0/0, inf/inf, inf - inf, sqrt(-1) on values the code reads at run time.
  const std::string text = R"(
graph @g(%0 "a": f32[4], %1 "b": f32[4]) {
  %2: f32[4] = prims.div(%0, %1)
  %3: f32[4] = prims.sub(%0, %1)
  %4: f32[4] = prims.sqrt(%0)
  %5: bool[4] = prims.signbit(%2)
  %6: bool[4] = prims.signbit(%3)
  %7: bool[4] = prims.signbit(%4)
  return %2, %3, %4, %5, %6, %7
}
)";
  std::vector<HostTensor> got, want;
  RunBoth(text,
          {HostTensor::FromDoubles(proto::FLOAT32, {4}, {0, kInf, -1, -kInf}),
           HostTensor::FromDoubles(proto::FLOAT32, {4}, {0, kInf, 1, -kInf})},
          &got, &want);
  ExpectSameBits(got, want);
  EXPECT_TRUE(std::signbit(want[0].ToDoubles()[0])) << "x86's default NaN is negative";
}

TEST(NanSignTest, InvalidOperationsOnLiterals) {
  // prims.full makes literals in the kernel: LLVM would fold 0/0, inf - inf, 0 * inf and
  // fmod(1, 0) to a positive NaN. f32 and f64.
  for (const char* t : {"f32", "f64"}) {
    SCOPED_TRACE(t);
    const std::string text = std::string(R"(
graph @g(%0 "x": T[4]) {
  %1: T[4] = prims.full() {dtype = T, shape = syms[4], value = 0.0}
  %2: T[4] = prims.full() {dtype = T, shape = syms[4], value = inf}
  %3: T[4] = prims.full() {dtype = T, shape = syms[4], value = 1.0}
  %4: T[4] = prims.div(%1, %1)
  %5: T[4] = prims.sub(%2, %2)
  %6: T[4] = prims.mul(%1, %2)
  %7: T[4] = prims.fmod(%3, %1)
  %8: bool[4] = prims.signbit(%4)
  %9: bool[4] = prims.signbit(%5)
  %10: bool[4] = prims.signbit(%6)
  %11: bool[4] = prims.signbit(%7)
  %12: T[4] = prims.add(%0, %4)
  return %4, %5, %6, %7, %8, %9, %10, %11, %12
}
)");
    std::string graph;
    for (char c : text) {
      if (c == 'T') {
        graph += t;
      } else {
        graph += c;
      }
    }
    std::vector<HostTensor> got, want;
    RunBoth(graph, {HostTensor::FromDoubles(std::string(t) == "f32" ? proto::FLOAT32 : proto::FLOAT64,
                                            {4}, {1, 2, 3, 4})},
            &got, &want);
    ExpectSameBits(got, want);
    for (int o = 4; o < 8; ++o) EXPECT_EQ(want[o].ToDoubles()[0], 1.0) << "signbit output " << o;
  }
}

TEST(NanSignTest, AnIncomingNanKeepsItsSign) {
  // A positive NaN literal (as float('nan') is) stays positive through arithmetic.
  const std::string text = R"(
graph @g(%0 "x": f32[4]) {
  %1: f32[4] = prims.full() {dtype = f32, shape = syms[4], value = nan}
  %2: f32[4] = prims.full() {dtype = f32, shape = syms[4], value = 2.0}
  %3: f32[4] = prims.mul(%1, %2)
  %4: bool[4] = prims.signbit(%3)
  %5: f32[4] = prims.add(%0, %3)
  return %3, %4, %5
}
)";
  std::vector<HostTensor> got, want;
  RunBoth(text, {HostTensor::FromDoubles(proto::FLOAT32, {4}, {1, 2, 3, 4})}, &got, &want);
  ExpectSameBits(got, want);
}

}  // namespace
}  // namespace coil
