// Tests of `coil bench cpu --peers`' accounting without torch or timing: which peer times
// count (no error, a time, output within the tolerance of torch eager's), coil's ratios and
// geomeans against each peer, absent peers reported absent (no ratio, no geomean), the report's
// lines, and torch_peers.py's JSON (peer fields; each model's own batch sizes).
#include "tools/bench/cpu_bench_peers.h"

#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/bench/cpu_bench_cpu_share.h"
#include "tools/bench/cpu_bench_models.h"
#include "tools/bench/cpu_bench_report.h"
#include "tools/bench/cpu_bench_torch.h"

namespace coil::bench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

PeerTiming Peer(double ms, double error) {
  PeerTiming p;
  p.set_median_ms(ms);
  p.set_min_ms(ms);
  p.set_reps(5);
  p.set_max_relative_error(error);
  p.set_compile_seconds(2.5);
  return p;
}

ModelRow Row(const std::string& model, int batch, double coil_ms, const PeerTiming& compiled,
             const PeerTiming& ort) {
  ModelRow r;
  r.set_model(model);
  r.set_batch(batch);
  r.set_torch_ms(20);
  r.set_coil_ms(coil_ms);
  r.set_speedup(20 / coil_ms);
  r.set_matches(true);
  r.set_coil_compile_ms(700);
  *r.mutable_compiled() = compiled;
  *r.mutable_onnxruntime() = ort;
  SetPeerRatios(r, kModelTolerance);
  return r;
}

TEST(ValidPeerMs, OnlyErrorFreeTimedMatchingPeersCount) {
  EXPECT_DOUBLE_EQ(ValidPeerMs(Peer(4, 1e-6), 1e-4), 4);
  EXPECT_EQ(ValidPeerMs(Peer(4, 1e-3), 1e-4), 0);  // output differs from torch eager's
  PeerTiming failed = Peer(4, 1e-6);
  failed.set_error("BackendCompilerFailed: boom");
  EXPECT_EQ(ValidPeerMs(failed, 1e-4), 0);
  EXPECT_EQ(ValidPeerMs(PeerTiming(), 1e-4), 0);  // absent: no time
  PeerTiming nan = Peer(4, std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(ValidPeerMs(nan, 1e-4), 0);
}

TEST(SetPeerRatios, PeerOverCoilAndNothingForFailedRows) {
  ModelRow r = Row("resnet50", 1, 10, Peer(5, 1e-6), Peer(20, 1e-6));
  EXPECT_DOUBLE_EQ(r.vs_compiled(), 0.5);
  EXPECT_DOUBLE_EQ(r.vs_onnxruntime(), 2.0);
  r.set_matches(false);  // coil's output did not match: no ratio against anyone
  SetPeerRatios(r, kModelTolerance);
  EXPECT_EQ(r.vs_compiled(), 0);
  EXPECT_EQ(r.vs_onnxruntime(), 0);
}

CpuBenchResults Sample() {
  CpuBenchResults r;
  r.set_machine("test CPU (16 logical CPUs)");
  r.set_threads(16);
  r.set_torch_version("2.11.0");
  r.set_peers(true);
  r.set_onnxruntime_version("1.30.0");
  *r.add_models() = Row("resnet50", 1, 10, Peer(5, 1e-6), Peer(20, 1e-6));
  *r.add_models() = Row("resnet50", 16, 10, Peer(20, 1e-6), Peer(5, 1e-6));
  *r.add_models() = Row("bert_base", 1, 10, Peer(40, 0.5), Peer(10, 1e-6));
  Summarize(r);
  SummarizePeers(r);
  return r;
}

TEST(SummarizePeers, GeomeansOverValidRows) {
  CpuBenchResults r = Sample();
  EXPECT_NEAR(r.geomean_vs_compiled(), 1.0, 1e-12);     // 0.5 and 2; bert's peer mismatched
  EXPECT_NEAR(r.geomean_vs_onnxruntime(), 1.0, 1e-12);  // 2, 0.5 and 1
  EXPECT_EQ(r.failed_rows(), 0);                        // a peer's mismatch is not coil's failure
}

TEST(AppendPeersReport, RowsPeerProblemsGeomeansCompileTimesTargets) {
  const std::string out = FormatReport(Sample());
  EXPECT_THAT(out, HasSubstr("coil bench cpu --peers: 16 threads on test CPU"));
  EXPECT_THAT(out, HasSubstr("onnxruntime 1.30.0"));
  EXPECT_THAT(out, HasSubstr("resnet50                1     20.000      5.000     20.000     "
                             "10.000    2.00x    0.50x    2.00x"));
  EXPECT_THAT(out, HasSubstr("PEER torch.compile bert_base batch 1: output differs from torch "
                             "eager: max relative error 0.5 > 0.0001"));
  EXPECT_THAT(out, HasSubstr("geomean vs torch.compile: 1.00x"));
  EXPECT_THAT(out, HasSubstr("geomean vs onnxruntime: 1.00x"));
  EXPECT_THAT(out, HasSubstr("resnet50                1       0.70           2.50       2.50"));
  EXPECT_THAT(out, HasSubstr("geomean vs onnxruntime >= 1.00x, no row < 0.80x: 1.00x, lowest "
                             "0.50x, MISSED"));
  EXPECT_THAT(out, Not(HasSubstr("bandwidth")));
}

TEST(AppendPeersReport, AbsentPeersAreSaidAbsentNeverTimed) {
  CpuBenchResults r;
  r.set_peers(true);
  r.set_threads(1);
  r.set_torch_version("1.13.0a0");
  r.set_compiled_absent("torch 1.13.0a0 has no torch.compile");
  r.set_onnxruntime_absent("onnxruntime is not importable (No module named 'onnxruntime')");
  *r.add_models() = Row("gpt2_small", 1, 10, PeerTiming(), PeerTiming());
  Summarize(r);
  SummarizePeers(r);
  EXPECT_EQ(r.geomean_vs_compiled(), 0);
  EXPECT_EQ(r.geomean_vs_onnxruntime(), 0);
  const std::string out = FormatReport(r);
  EXPECT_THAT(out, HasSubstr("gpt2_small              1     20.000     absent     absent     "
                             "10.000    2.00x        -        -"));
  EXPECT_THAT(out, HasSubstr("geomean vs torch.compile: absent (torch 1.13.0a0 has no "
                             "torch.compile)"));
  EXPECT_THAT(out, HasSubstr("geomean vs onnxruntime: absent (onnxruntime is not importable"));
  EXPECT_THAT(out, HasSubstr("vs torch.compile: not measured"));
  EXPECT_THAT(out, Not(HasSubstr("PEER")));
}

TEST(AppendPeersReport, RowsThatSharedTheCpusSaySo) {
  CpuBenchResults r = Sample();
  r.mutable_models(0)->set_other_cpu_share(0.25);
  r.mutable_models(0)->set_steal_cpu_share(0.01);
  const std::string out = FormatReport(r);
  EXPECT_THAT(out, HasSubstr("BUSY resnet50 batch 1: during coil's timed runs other processes "
                             "used 25% and the hypervisor 1% of the CPUs"));
  // Unmeasured (-1) or quiet rows say nothing.
  r.mutable_models(0)->set_other_cpu_share(-1);
  r.mutable_models(0)->set_steal_cpu_share(0.02);
  EXPECT_THAT(FormatReport(r), Not(HasSubstr("BUSY")));
}

TEST(CpuShares, FromProcStatAndSelfStat) {
  // cpu user nice system idle iowait irq softirq steal guest guest_nice
  CpuTimes a = ParseProcStat("cpu  100 0 50 800 10 5 5 30 0 0\ncpu0 1 2 3 4 5 6 7 8\n");
  ASSERT_TRUE(a.valid);
  EXPECT_EQ(a.busy, 160);
  EXPECT_EQ(a.steal, 30);
  EXPECT_EQ(a.total, 1000);
  EXPECT_FALSE(ParseProcStat("cpu  1 2 3\n").valid);
  EXPECT_FALSE(ParseProcStat("intr 5\n").valid);
  // A command name with spaces and parentheses; utime 70, stime 12.
  EXPECT_EQ(ParseSelfTicks("42 (a (b) c) R 1 42 42 0 -1 4194304 100 0 0 0 70 12 0 0 20 0 17"),
            82);
  EXPECT_EQ(ParseSelfTicks("garbage"), -1);
  CpuTimes b = ParseProcStat("cpu  300 0 110 1400 10 5 5 130 0 0\n");
  a.self = 0;
  b.self = 100;  // of the 260 busy ticks in between, 100 were this process's
  const CpuShares s = SharesBetween(a, b);
  ASSERT_TRUE(s.valid);
  EXPECT_DOUBLE_EQ(s.other, 160.0 / 960);  // 960 ticks of all CPUs in between
  EXPECT_DOUBLE_EQ(s.steal, 100.0 / 960);
  EXPECT_FALSE(SharesBetween(CpuTimes(), b).valid);
}

constexpr char kPeersJson[] = R"({
 "torch_version": "2.11.0", "threads": 16, "compiled_absent": "", "onnxruntime_absent": "",
 "onnxruntime_version": "1.30.0",
 "models": [{"name": "gpt2_small", "onnx": "/w/m.onnx", "config": "128 tokens", "opset": 17,
   "export_seconds": 3.0,
   "runs": [
     {"batch": 1, "input": "/w/i1.pb", "output": "/w/o1.pb", "median_ms": 30, "min_ms": 29,
      "reps": 5,
      "compiled": {"median_ms": 25, "min_ms": 24, "reps": 5, "max_relative_error": 1e-6,
                   "compile_seconds": 20.5},
      "onnxruntime": {"error": "Fail: [ONNXRuntimeError] boom"}},
     {"batch": 4, "input": "/w/i4.pb", "output": "/w/o4.pb", "median_ms": 90, "min_ms": 88,
      "reps": 5}]}]})";

TEST(ParseTorchEagerJson, PeerFieldsAndEachModelsOwnBatches) {
  TorchEagerRequest request;
  request.models = {"gpt2_small"};  // no batches: the script's own
  absl::StatusOr<TorchEagerResults> r = ParseTorchEagerJson(kPeersJson, request);
  ASSERT_TRUE(r.ok()) << r.status();
  const TorchEagerRun& run = r->models(0).runs(0);
  EXPECT_DOUBLE_EQ(run.compiled().compile_seconds(), 20.5);
  EXPECT_THAT(run.onnxruntime().error(), HasSubstr("boom"));
  EXPECT_EQ(r->onnxruntime_version(), "1.30.0");
  request.batches = {1, 8};
  EXPECT_FALSE(ParseTorchEagerJson(kPeersJson, request).ok());  // batch 8 is missing
  EXPECT_THAT(TorchEagerCommand(TorchEagerRequest{.models = {"gpt2_small"}}),
              Not(HasSubstr("--batches")));
}

}  // namespace
}  // namespace coil::bench
