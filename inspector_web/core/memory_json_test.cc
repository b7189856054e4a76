// Memory plans at symbol values (Inspector::MemoryJson): which value each symbol takes (typed,
// the compile's --dim, the hint, the minimum), buffer sizes and offsets against
// SymExpr::Evaluate (ir/sym_expr.h), arena and peak against a recomputation, and bad input.
#include <algorithm>
#include <string>

#include "gtest/gtest.h"
#include "inspector_web/core/inspector.h"
#include "inspector_web/core/schedule_json.h"
#include "inspector_web/testing/json_value.h"
#include "inspector_web/testing/test_report.h"
#include "ir/sym_expr.h"

namespace coil::inspector {
namespace {

using testing::JsonValue;
using testing::ParseJson;

constexpr int kInductorArtifact = 4;

int StageIndex(const JsonValue& overview, const std::string& key) {
  for (size_t i = 0; i < overview["stages"].size(); ++i) {
    if (overview["stages"][i]["key"].str() == key) return static_cast<int>(i);
  }
  ADD_FAILURE() << "no stage " << key;
  return 0;
}

int64_t Eval(const proto::SymExpr& e, int64_t s0) {
  absl::StatusOr<SymExpr> x = SymExpr::FromProto(e);
  EXPECT_TRUE(x.ok());
  absl::StatusOr<int64_t> v = x->Evaluate({{"s0", s0}});
  EXPECT_TRUE(v.ok()) << x->ToString();
  return v.ok() ? *v : -1;
}

// Checks `memory` (a MemoryJson "memory") against the schedule at s0 = `s0`.
void ExpectPlanAt(const JsonValue& memory, const proto::Schedule& schedule, int64_t s0) {
  ASSERT_EQ(memory["buffers"].size(), static_cast<size_t>(schedule.buffers_size()));
  std::vector<LiveRange> live = BufferLiveRanges(schedule);
  int64_t arena = 0, peak = 0;
  std::vector<int64_t> at(schedule.kernels_size(), 0);
  for (int i = 0; i < schedule.buffers_size(); ++i) {
    const proto::Buffer& b = schedule.buffers(i);
    const JsonValue& j = memory["buffers"][i];
    EXPECT_EQ(j["id"].integer(), b.id());
    int64_t size = Eval(b.size_bytes(), s0);
    EXPECT_EQ(j["size"].integer(), size) << b.name();
    if (b.kind() != proto::Buffer::INTERMEDIATE || !b.has_arena_offset()) {
      EXPECT_TRUE(j["offset"].is_null());
      continue;
    }
    int64_t offset = Eval(b.arena_offset(), s0);
    EXPECT_EQ(j["offset"].integer(), offset) << b.name();
    arena = std::max(arena, offset + size);
    for (int k = live[i].first; k >= 0 && k <= live[i].last; ++k) at[k] += size;
  }
  for (int64_t v : at) peak = std::max(peak, v);
  EXPECT_GE(memory["arena_bytes"].integer(), arena);
  EXPECT_EQ(memory["arena_bytes"].integer(),
            std::max(arena, Eval(schedule.memory_plan().arena_bytes(), s0)));
  EXPECT_EQ(memory["peak_live_bytes"].integer(), peak);
  EXPECT_GT(peak, 0);
}

TEST(MemoryJsonTest, SymbolsTakeTypedThenDimThenHintThenMinimum) {
  proto::CompileReport report = testing::MakeTestReport();
  const proto::Schedule& schedule = report.stages(kInductorArtifact).schedule();
  Inspector insp;
  JsonValue overview = ParseJson(insp.Open(report.SerializeAsString(), "report.pb"));
  const int stage = StageIndex(overview, "inductor");

  JsonValue hint = ParseJson(insp.MemoryJson(stage, ""));
  ASSERT_TRUE(hint["ok"].boolean());
  EXPECT_EQ(hint["memory"]["symbols"][0]["name"].str(), "s0");
  EXPECT_EQ(hint["memory"]["symbols"][0]["from"].str(), "hint");
  EXPECT_EQ(hint["memory"]["symbols"][0]["value"].integer(), 4);
  ExpectPlanAt(hint["memory"], schedule, 4);

  JsonValue typed = ParseJson(insp.MemoryJson(stage, " s0 = 37 "));
  EXPECT_EQ(typed["memory"]["symbols"][0]["from"].str(), "typed");
  ExpectPlanAt(typed["memory"], schedule, 37);
  EXPECT_EQ(typed["memory"]["errors"].size(), 0u);

  // The compile's --dim beats the hint; typed values beat --dim.
  (*report.mutable_options())["dim"] = "s0=9";
  // Without a hint and without --dim the minimum (2) is used.
  proto::CompileReport no_hint = report;
  no_hint.mutable_options()->erase("dim");
  proto::Graph* scheduled =
      no_hint.mutable_stages(kInductorArtifact)->mutable_schedule()->mutable_graph();
  for (proto::Symbol& s : *scheduled->mutable_symbols()) s.set_hint(0);
  ASSERT_TRUE(ParseJson(insp.Open(report.SerializeAsString(), "report.pb"))["ok"].boolean());
  JsonValue dim = ParseJson(insp.MemoryJson(stage, ""));
  EXPECT_EQ(dim["memory"]["symbols"][0]["from"].str(), "dim");
  ExpectPlanAt(dim["memory"], schedule, 9);
  EXPECT_EQ(ParseJson(insp.MemoryJson(stage, "s0=5"))["memory"]["symbols"][0]["from"].str(),
            "typed");

  ASSERT_TRUE(ParseJson(insp.Open(no_hint.SerializeAsString(), "report.pb"))["ok"].boolean());
  JsonValue minimum = ParseJson(insp.MemoryJson(stage, ""));
  EXPECT_EQ(minimum["memory"]["symbols"][0]["from"].str(), "minimum");
  EXPECT_EQ(minimum["memory"]["symbols"][0]["value"].integer(), 2);
  ExpectPlanAt(minimum["memory"], schedule, 2);
}

TEST(MemoryJsonTest, BadValuesAreNamed) {
  proto::CompileReport report = testing::MakeTestReport();
  Inspector insp;
  JsonValue overview = ParseJson(insp.Open(report.SerializeAsString(), "report.pb"));
  JsonValue m = ParseJson(insp.MemoryJson(StageIndex(overview, "inductor"), "s0=x, batch=3,"));
  ASSERT_TRUE(m["ok"].boolean());
  const JsonValue& errors = m["memory"]["errors"];
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].str(), "typed values: 's0=x' is not NAME=INTEGER (a non-negative integer)");
  EXPECT_EQ(errors[1].str(), "typed values: the graph has no symbol 'batch'");
  EXPECT_EQ(m["memory"]["symbols"][0]["from"].str(), "hint");
  JsonValue none = ParseJson(insp.MemoryJson(StageIndex(overview, "prims"), ""));
  EXPECT_FALSE(none["ok"].boolean());
  EXPECT_EQ(none["error"].str(), "stage prims has no memory plan");
}

}  // namespace
}  // namespace coil::inspector
