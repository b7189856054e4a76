// Tests of `coil bench cpu --peers`' rounds without torch: the medians and spreads across
// rounds (against values worked out by hand), the server's answers parsed strictly, the report's
// spread table and NOISY / COPIES lines, and PeerServer against real shell processes (answers in
// turn, an early exit reported with its status). The whole path with torch_peers.py is
// tools/coil/bench_peers_cli_test.sh.
#include "tools/bench/cpu_bench_rounds.h"

#include <initializer_list>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/bench/cpu_bench_peers.h"

namespace coil::bench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

google::protobuf::RepeatedField<double> Rounds(std::initializer_list<double> ms) {
  google::protobuf::RepeatedField<double> r;
  for (double v : ms) r.Add(v);
  return r;
}

TEST(RoundSpread, SlowestOverFastest) {
  EXPECT_DOUBLE_EQ(RoundSpread(Rounds({10.0, 12.5, 11.0})), 1.25);
  EXPECT_DOUBLE_EQ(RoundSpread(Rounds({7.0})), 1.0);
  EXPECT_EQ(RoundSpread(Rounds({})), 0);
  EXPECT_EQ(RoundSpread(Rounds({0.0, 3.0})), 0);  // a round without a time: no spread
}

ModelRow RoundsRow() {
  ModelRow row;
  row.set_model("resnet50");
  row.set_batch(1);
  row.set_matches(true);
  *row.mutable_torch_round_ms() = Rounds({30.0, 10.0, 20.0});
  *row.mutable_coil_round_ms() = Rounds({4.0, 5.0});
  PeerTiming* compiled = row.mutable_compiled();
  *compiled->mutable_round_ms() = Rounds({8.0, 6.0, 7.0});
  compiled->set_reps(9);
  compiled->set_min_ms(5.5);
  return row;
}

TEST(SummarizeRounds, MediansOfRoundMediansAndSpeedup) {
  ModelRow row = RoundsRow();
  SummarizeRounds(row);
  EXPECT_DOUBLE_EQ(row.torch_ms(), 20);
  EXPECT_DOUBLE_EQ(row.coil_ms(), 4.5);  // two rounds: their mean
  EXPECT_DOUBLE_EQ(row.speedup(), 20 / 4.5);
  EXPECT_DOUBLE_EQ(row.compiled().median_ms(), 7);
  EXPECT_DOUBLE_EQ(row.compiled().min_ms(), 5.5);  // the caller's, untouched
  EXPECT_FALSE(row.has_onnxruntime());  // absent stays absent
  // The ratio then uses the medians: torch.compile 7 ms over coil 4.5 ms.
  SetPeerRatios(row, 1e-4);
  EXPECT_DOUBLE_EQ(row.vs_compiled(), 7 / 4.5);
}

TEST(SummarizeRounds, NoCoilTimeWithoutAMatch) {
  ModelRow row = RoundsRow();
  row.set_matches(false);
  SummarizeRounds(row);
  EXPECT_DOUBLE_EQ(row.torch_ms(), 20);
  EXPECT_EQ(row.coil_ms(), 0);
  EXPECT_EQ(row.speedup(), 0);
}

TEST(ParsePeerRound, ReadsEverySystemAndRejectsTheRest) {
  absl::StatusOr<PeerRound> r = ParsePeerRound(
      R"({"eager": {"median_ms": 2.5, "min_ms": 2.0, "reps": 5}, "compiled": {"error": )"
      R"("RuntimeError: boom"}, "onnxruntime": {"median_ms": 1.25, "min_ms": 1.0, "reps": 7}})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_DOUBLE_EQ(r->eager().median_ms(), 2.5);
  EXPECT_EQ(r->compiled().error(), "RuntimeError: boom");
  EXPECT_EQ(r->onnxruntime().reps(), 7);
  EXPECT_THAT(ParsePeerRound(R"({"eager": {"median_ms": 2}, "extra": 1})").status().message(),
              HasSubstr("not a round"));
  EXPECT_THAT(ParsePeerRound(R"({"onnxruntime": {"median_ms": 2}})").status().message(),
              HasSubstr("no torch eager time"));
  EXPECT_THAT(ParsePeerRound("Traceback (most recent call last):").status().message(),
              HasSubstr("answered 'Traceback (most recent call last):'"));
}

TEST(AppendRoundsReport, SpreadsNoisyAndCopiesLines) {
  CpuBenchResults r;
  r.set_rounds(3);
  ModelRow* row = r.add_models();
  *row = RoundsRow();
  *row->mutable_torch_round_ms() = Rounds({20.0, 20.5, 21.0});  // 1.05x: not noisy
  *row->mutable_coil_round_ms() = Rounds({10.0, 12.5, 11.0});   // 1.25x
  row->add_coil_copy_ms(11.0);
  row->add_coil_copy_ms(16.5);
  std::string out;
  AppendRoundsReport(r, out);
  EXPECT_THAT(out, HasSubstr("rounds: 3 (per row"));
  EXPECT_THAT(out, HasSubstr("resnet50                1        1.05x        1.33x            -"
                             "        1.25x\n"));
  EXPECT_THAT(out, HasSubstr("NOISY resnet50 batch 1: coil's round medians 10.000, 12.500, "
                             "11.000 ms (1.25x)\n"));
  EXPECT_THAT(out, HasSubstr("NOISY resnet50 batch 1: torch.compile's round medians"));
  EXPECT_THAT(out, Not(HasSubstr("torch eager's round medians")));
  EXPECT_THAT(out, HasSubstr("COPIES resnet50 batch 1: coil programs' medians 11.000, 16.500 ms"));

  std::string none;
  r.set_rounds(0);
  AppendRoundsReport(r, none);
  EXPECT_EQ(none, "");
}

TEST(PeerServer, AnswersInTurn) {
  absl::StatusOr<std::unique_ptr<PeerServer>> s =
      PeerServer::Start("echo ready; while read a b; do echo \"$b $a\"; done");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->ReadLine().value(), "ready");
  EXPECT_EQ((*s)->Ask("time resnet50").value(), "resnet50 time");
  EXPECT_EQ((*s)->Ask("one two").value(), "two one");
  EXPECT_TRUE((*s)->Finish().ok());
}

TEST(PeerServer, AnEarlyExitIsAnErrorWithItsStatus) {
  absl::StatusOr<std::unique_ptr<PeerServer>> s = PeerServer::Start("echo first; exit 3");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->ReadLine().value(), "first");
  absl::StatusOr<std::string> next = (*s)->ReadLine();
  EXPECT_THAT(next.status().message(), HasSubstr("output ended (exit status 3"));
  EXPECT_THAT(next.status().message(), HasSubstr("echo first; exit 3"));
  EXPECT_FALSE((*s)->Ask("time resnet50 1").ok());
  EXPECT_THAT((*s)->Finish().message(), HasSubstr("failed (exit status 3"));
}

}  // namespace
}  // namespace coil::bench
