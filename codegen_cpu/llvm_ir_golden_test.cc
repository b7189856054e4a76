// Golden tests of the CPU backend's LLVM IR: small graphs (codegen_cpu/testdata/*.txt and
// inductor/testdata/*.txt) are decomposed, scheduled (aten.mm epilogues declared, as the CPU
// backend does) and compiled for a fixed CPU, x86-64-v3 (AVX2 + FMA, so the result does not
// depend on the host), and every kernel's optimized LLVM IR must equal
// codegen_cpu/testdata/<name>.x86-64-v3.ll. A change to the kernel emitter, the vector math, the
// run-time checks or the optimization pipeline shows what it changes as a diff of those files.
// The goldens pin what the code is, not that it is right: the numerics of the same kernels are
// checked against the float64 reference by codegen_cpu_test, runtime_checks_test and the ONNX
// conformance suites, on the host's CPU (x86-64-v3 code is never run here, so no host needs AVX2).
//
// The IR also depends on the compiler that built coil: the emitters build instructions in
// nested IRBuilder calls, whose arguments C++ evaluates in an order the compiler picks, and
// LLVM's passes see that order. The goldens are written by the pinned compiler (.bazelrc:
// clang 16).
//
// To accept an intended change, rewrite the goldens from the current code and review the diff:
//   COIL_UPDATE_GOLDENS=1 bazel run //codegen_cpu:llvm_ir_golden_test && git diff codegen_cpu/testdata
#include <string>

#include "absl/strings/str_cat.h"
#include "codegen_cpu/codegen_cpu.h"
#include "gtest/gtest.h"
#include "inductor/schedule.h"
#include "ir/golden_testing.h"
#include "ir/parser.h"
#include "prims/decompose.h"

namespace coil {
namespace {

struct Case {
  const char* package;  // where the input graph lives
  const char* name;
};

class LlvmIrGoldenTest : public ::testing::TestWithParam<Case> {};

TEST_P(LlvmIrGoldenTest, MatchesGolden) {
  const Case c = GetParam();
  const std::string input = absl::StrCat(c.package, "/testdata/", c.name, ".txt");
  const std::string golden = absl::StrCat("codegen_cpu/testdata/", c.name, ".x86-64-v3.ll");
  absl::StatusOr<Graph> g = ParseGraph(testing_golden::ReadText(input));
  ASSERT_TRUE(g.ok()) << input << ": " << g.status();
  ASSERT_TRUE(prims::Decompose(*g).ok());
  inductor::ScheduleOptions options;
  options.capabilities.extern_epilogues = {"aten.mm"};
  absl::StatusOr<proto::Schedule> s = inductor::BuildSchedule(*std::move(g), options);
  ASSERT_TRUE(s.ok()) << s.status();
  CpuCodegenOptions o;
  o.cpu = "x86-64-v3";
  o.compile_threads = 1;
  absl::StatusOr<proto::KernelModule> m = GenerateCpu(*std::move(s), o);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_GT(m->kernels_size(), 0);

  std::string text = absl::StrCat("; ", input, ": every kernel's LLVM IR after O3 for x86-64-v3\n");
  for (const proto::CompiledKernel& k : m->kernels()) {
    absl::StrAppend(&text, "\n; kernel ", k.kernel_id(), " ", k.name(), "\n");
    for (const std::string& r : k.compiler_remarks()) absl::StrAppend(&text, "; ", r, "\n");
    absl::StrAppend(&text, k.source());
  }

  testing_golden::ExpectMatchesGolden(text, golden, "the LLVM IR of " + input);
}

INSTANTIATE_TEST_SUITE_P(Graphs, LlvmIrGoldenTest,
                         ::testing::Values(Case{"inductor", "softmax_rows"},
                                           Case{"inductor", "layer_norm_gelu"},
                                           Case{"inductor", "mm_bias_relu"},
                                           Case{"codegen_cpu", "gather_rows"},
                                           Case{"codegen_cpu", "sum_broadcast"}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace coil
