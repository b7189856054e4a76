// The CPU backend's Schedule of a text-IR graph, for tests (see cpu_schedule.h).
#include "codegen_cpu/testing/cpu_schedule.h"

#include "codegen_cpu/cpu_program.h"
#include "gtest/gtest.h"
#include "inductor/schedule.h"
#include "ir/parser.h"
#include "prims/decompose.h"

namespace coil {

std::optional<proto::Schedule> CpuScheduleOf(const std::string& text) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status() << "\n" << text;
  if (!g.ok()) return std::nullopt;
  absl::StatusOr<bool> d = prims::Decompose(*g);
  EXPECT_TRUE(d.ok()) << d.status();
  if (!d.ok()) return std::nullopt;
  inductor::ScheduleOptions options;
  options.capabilities = CpuCapabilities();
  absl::StatusOr<proto::Schedule> s = inductor::BuildSchedule(g->ToProto(), options);
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return std::nullopt;
  return *std::move(s);
}

}  // namespace coil
