// PassPipeline over a toy IR (a list of ints whose invariant is "no negative numbers"): pass
// order, changed flags, verification before and after each pass, error prefixes, records and
// dumps by pattern.
#include "ir/pass_pipeline.h"

#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace coil {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using Ints = std::vector<int>;

absl::Status NoNegatives(const Ints& ir) {
  for (size_t i = 0; i < ir.size(); ++i) {
    if (ir[i] < 0) return absl::FailedPreconditionError(absl::StrCat("element ", i, " < 0"));
  }
  return absl::OkStatus();
}

std::string Print(const Ints& ir) { return absl::StrJoin(ir, ","); }

PassPipeline<Ints> Toy() {
  PassPipeline<Ints> p("toy", {.verify = NoNegatives, .print = Print});
  p.Add("append_one", [](Ints& ir) -> absl::StatusOr<bool> {
     ir.push_back(1);
     return true;
   }).Add("double", [](Ints& ir) -> absl::StatusOr<bool> {
    for (int& x : ir) x *= 2;
    return !ir.empty();
  });
  p.Add("noop", [](Ints&) -> absl::StatusOr<bool> { return false; });
  return p;
}

TEST(PassPipelineTest, RunsInOrderAndRecordsEachPass) {
  PassPipeline<Ints> p = Toy();
  EXPECT_THAT(p.PassNames(), ElementsAre("append_one", "double", "noop"));
  Ints ir = {3};
  std::vector<PassRecord> records;
  absl::StatusOr<bool> changed = p.Run(ir, {}, &records);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_THAT(ir, ElementsAre(6, 2));  // append then double, not the other way round
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].pipeline, "toy");
  EXPECT_EQ(records[1].pass, "double");
  EXPECT_TRUE(records[0].changed);
  EXPECT_FALSE(records[2].changed);
  for (const PassRecord& r : records) {
    EXPECT_GE(r.seconds, 0);
    EXPECT_EQ(r.dump, "");  // no pattern, no dumps
  }
}

TEST(PassPipelineTest, UnchangedWhenNoPassChanges) {
  PassPipeline<Ints> p("quiet", {.verify = NoNegatives});
  p.Add("noop", [](Ints&) -> absl::StatusOr<bool> { return false; });
  Ints ir;
  absl::StatusOr<bool> changed = p.Run(ir);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
}

TEST(PassPipelineTest, DumpsPassesMatchingThePattern) {
  Ints ir = {5};
  std::vector<PassRecord> records;
  ASSERT_TRUE(Toy().Run(ir, {.dump_pattern = "^toy\\.(double|noop)$"}, &records).ok());
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].dump, "");
  EXPECT_EQ(records[1].dump, "10,2");  // the IR after the pass
  EXPECT_EQ(records[2].dump, "10,2");
  records.clear();
  ir = {5};
  ASSERT_TRUE(Toy().Run(ir, {.dump_pattern = "other\\..*"}, &records).ok());
  for (const PassRecord& r : records) EXPECT_EQ(r.dump, "");
}

TEST(PassPipelineTest, InvalidDumpPatternIsAnError) {
  Ints ir;
  absl::StatusOr<bool> r = Toy().Run(ir, {.dump_pattern = "(unclosed"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("dump pattern '(unclosed' is not a regular"));
}

TEST(PassPipelineTest, InputThatDoesNotVerifyIsTheCallersError) {
  Ints ir = {1, -1};
  absl::StatusOr<bool> r = Toy().Run(ir);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(),
              HasSubstr("the input to pipeline 'toy' does not verify: element 1 < 0"));
  EXPECT_THAT(ir, ElementsAre(1, -1));  // no pass ran
}

TEST(PassPipelineTest, APassThatBreaksTheIrIsNamed) {
  PassPipeline<Ints> p("toy", {.verify = NoNegatives});
  p.Add("fine", [](Ints&) -> absl::StatusOr<bool> { return false; })
      .Add("negate", [](Ints& ir) -> absl::StatusOr<bool> {
        for (int& x : ir) x = -x;
        return true;
      });
  Ints ir = {2};
  absl::StatusOr<bool> r = p.Run(ir, {.verify_each_pass = true});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(r.status().message(), HasSubstr("pass toy.negate broke the IR"));
  // Without verification the same run succeeds (a driver's choice for speed).
  ir = {2};
  EXPECT_TRUE(p.Run(ir, {.verify = false}).ok());
}

// Optimized builds' default: the input and the result are verified, not each pass. A broken
// result is still an InternalError, listing the passes that may have broken it; a pass that
// breaks the IR and a later one that repairs it go unnoticed (the price of the speed).
TEST(PassPipelineTest, VerifyingTheResultOnlyCatchesABrokenResult) {
  PassPipeline<Ints> p("toy", {.verify = NoNegatives});
  int verified = 0;
  PassPipeline<Ints> counted("toy", {.verify = [&verified](const Ints& ir) {
                                       ++verified;
                                       return NoNegatives(ir);
                                     }});
  auto negate = [](Ints& ir) -> absl::StatusOr<bool> {
    for (int& x : ir) x = -x;
    return true;
  };
  p.Add("fine", [](Ints&) -> absl::StatusOr<bool> { return false; }).Add("negate", negate);
  Ints ir = {2};
  absl::StatusOr<bool> r = p.Run(ir, {.verify_each_pass = false});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(r.status().message(),
              HasSubstr("pipeline 'toy' broke the IR (a compiler bug) in one of its passes "
                        "(fine, negate; verified after the last one only"));
  EXPECT_THAT(r.status().message(), HasSubstr("element 0 < 0"));
  // Input not verified (vouched for by a caller): the fault may lie before the passes.
  ir = {2};
  r = p.Run(ir, {.verify_each_pass = false, .verify_input = false});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("(fine, negate, or before them: its input was not verified; verified "
                        "after the last one only"));

  counted.Add("negate", negate).Add("negate_again", negate).Add("keep", [](Ints&) {
    return absl::StatusOr<bool>(false);
  });
  ir = {2};
  EXPECT_TRUE(counted.Run(ir, {.verify_each_pass = false}).ok());
  EXPECT_EQ(verified, 2);  // the input and the result
  verified = 0;
  ir = {2};
  EXPECT_FALSE(counted.Run(ir, {.verify_each_pass = true}).ok());
  EXPECT_EQ(verified, 2);  // the input, then the first pass's broken result
  verified = 0;
  ir = {2};
  EXPECT_TRUE(counted.Run(ir, {.verify = false}).ok());
  EXPECT_EQ(verified, 0);

  // No pass changed the IR: the verified input is the result.
  PassPipeline<Ints> unchanged("toy", {.verify = [&verified](const Ints& ir) {
                                         ++verified;
                                         return NoNegatives(ir);
                                       }});
  unchanged.Add("keep", [](Ints&) { return absl::StatusOr<bool>(false); });
  ir = {2};
  EXPECT_TRUE(unchanged.Run(ir, {.verify_each_pass = false}).ok());
  EXPECT_EQ(verified, 1);
}

// verify_input = false: the caller vouches for its input (the driver verified it already), so
// the pipeline checks only what its passes produce.
TEST(PassPipelineTest, AnInputTheCallerVerifiedIsNotVerifiedAgain) {
  int verified = 0;
  PassPipeline<Ints> p("toy", {.verify = [&verified](const Ints& ir) {
                                 ++verified;
                                 return NoNegatives(ir);
                               }});
  p.Add("abs", [](Ints& ir) -> absl::StatusOr<bool> {
    for (int& x : ir) x = x < 0 ? -x : x;
    return true;
  });
  Ints ir = {-3};  // would fail the input check
  absl::StatusOr<bool> r = p.Run(ir, {.verify_each_pass = false, .verify_input = false});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(verified, 1);  // the result only
  EXPECT_THAT(ir, ElementsAre(3));
  // A broken result is still caught.
  p.Add("negate", [](Ints& ir) -> absl::StatusOr<bool> {
    for (int& x : ir) x = -x;
    return true;
  });
  ir = {1};
  r = p.Run(ir, {.verify_each_pass = false, .verify_input = false});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
}

TEST(PassPipelineTest, PassErrorsKeepTheirCodeAndNameThePass) {
  PassPipeline<Ints> p("stage", {.verify = NoNegatives});
  p.Add("refuse", [](Ints&) -> absl::StatusOr<bool> {
    return absl::UnimplementedError("op foo has no lowering");
  });
  Ints ir;
  absl::StatusOr<bool> r = p.Run(ir);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(r.status().message(), "stage.refuse: op foo has no lowering");
}

TEST(PassPipelineTest, RecordedStepsCountLikePasses) {
  std::vector<PassRecord> records;
  int v = RunRecordedStep("inductor", "lower", &records, [] { return 42; });
  EXPECT_EQ(v, 42);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].pipeline, "inductor");
  EXPECT_EQ(records[0].pass, "lower");
}

TEST(PassPipelineDeathTest, DuplicatePassNamesAreACompilerBug) {
  PassPipeline<Ints> p("toy", {.verify = NoNegatives});
  p.Add("a", [](Ints&) -> absl::StatusOr<bool> { return false; });
  EXPECT_DEATH(p.Add("a", [](Ints&) -> absl::StatusOr<bool> { return false; }),
               "pass a added twice to toy");
}

}  // namespace
}  // namespace coil
