// CheckConvolutionGraph: see convolution_check.h.
#include "codegen_cpu/testing/convolution_check.h"

#include <optional>
#include <memory>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codegen_cpu/codegen_cpu.h"
#include "codegen_cpu/cpu_program.h"
#include "codegen_cpu/testing/cpu_schedule.h"
#include "gtest/gtest.h"
#include "inductor/schedule.h"
#include "ir/parser.h"
#include "prims/decompose.h"
#include "runtime/interpreter.h"

namespace coil {

std::string CheckConvolutionGraph(const std::string& text, test_kit::Tolerance tolerance,
                                  const std::vector<int64_t>& batches, const std::string& op,
                                  int nth) {
  absl::StatusOr<Graph> g = ParseGraph(text);  // the reference's
  EXPECT_TRUE(g.ok()) << g.status() << "\n" << text;
  if (!g.ok()) return "";
  std::optional<proto::Schedule> s = CpuScheduleOf(text);
  if (!s.has_value()) return "";
  std::string kind;
  for (int threads : {1, 3}) {
    absl::StatusOr<proto::KernelModule> m = GenerateCpu(*s);
    EXPECT_TRUE(m.ok()) << m.status();
    if (!m.ok()) return "";
    cpu::CpuExecutableOptions runtime;
    runtime.num_threads = threads;
    absl::StatusOr<std::unique_ptr<CpuProgram>> p = CpuProgram::Load(*std::move(m), runtime);
    EXPECT_TRUE(p.ok()) << p.status();
    if (!p.ok()) return "";
    (*p)->executable().SetProfiling(true);
    for (int64_t batch : batches) {
      std::vector<HostTensor> in =
          test_kit::RandomInputs(*g, {{"batch", batch}}, static_cast<int>(7 * batch + threads));
      absl::StatusOr<std::vector<HostTensor>> want = Interpret(*g, in, {.float64 = true});
      EXPECT_TRUE(want.ok()) << want.status();
      absl::StatusOr<std::vector<HostTensor>> got = (*p)->Run(in);
      EXPECT_TRUE(got.ok()) << got.status();
      if (!want.ok() || !got.ok()) return "";
      EXPECT_EQ(want->size(), got->size());
      for (size_t o = 0; o < want->size() && o < got->size(); ++o) {
        const HostTensor& w = (*want)[o];  // float64: compared as its f32 rounding
        test_kit::ExpectClose(HostTensor::FromDoubles(proto::FLOAT32, w.shape(), w.ToDoubles()),
                              (*got)[o].To(proto::FLOAT32), tolerance,
                              absl::StrCat("batch ", batch, ", ", threads, " threads, output ", o));
      }
    }
    int seen = 0;
    for (const cpu::CpuExecutable::KernelTime& t : (*p)->executable().Profile()) {
      if (absl::StrContains(t.kind, absl::StrCat(op, " ")) || absl::EndsWith(t.kind, op)) {
        if (nth < 0 || seen == nth) kind = t.kind;
        ++seen;
      }
    }
  }
  return kind;
}

}  // namespace coil
