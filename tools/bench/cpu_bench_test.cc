// Tests of `coil bench cpu`'s parts that need neither torch nor a quiet machine: the geomean
// and failure accounting, the report's lines, the JSON round trip, torch_eager.py's JSON
// contract, output checks, the timing loop, the copy kernel and the bandwidth graphs (compiled
// for real, checked against the float64 evaluation). Speed is never asserted.
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "runtime/cuda/executable.h"
#include "tools/bench/cpu_bench_bandwidth.h"
#include "tools/bench/cpu_bench_compare.h"
#include "tools/bench/cpu_bench_models.h"
#include "tools/bench/cpu_bench_report.h"
#include "tools/bench/cpu_bench_timing.h"
#include "tools/bench/cpu_bench_torch.h"

namespace coil::bench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ModelRow Row(const std::string& model, int batch, double speedup, bool matches) {
  ModelRow r;
  r.set_model(model);
  r.set_batch(batch);
  r.set_torch_ms(10);
  r.set_coil_ms(speedup > 0 ? 10 / speedup : 0);
  r.set_speedup(matches ? speedup : 0);
  r.set_matches(matches);
  if (!matches) r.set_error("output differs from torch: max relative error 0.5 > 0.0001");
  return r;
}

CpuBenchResults Sample() {
  CpuBenchResults r;
  r.set_machine("test CPU (2 logical CPUs)");
  r.set_threads(2);
  r.set_torch_version("1.13");
  *r.add_models() = Row("resnet18", 1, 2.0, true);
  *r.add_models() = Row("resnet18", 8, 0.5, true);
  *r.add_models() = Row("gpt", 8, 0, false);
  BandwidthRow copy;
  copy.set_name("copy");
  copy.set_gb_per_s(20);
  copy.set_fraction_of_copy(1);
  copy.set_matches(true);
  *r.add_bandwidth() = copy;
  BandwidthRow softmax;
  softmax.set_name("softmax");
  softmax.set_gb_per_s(10);
  softmax.set_fraction_of_copy(0.5);
  softmax.set_matches(true);
  *r.add_bandwidth() = softmax;
  CompileTimes* c = r.mutable_compile();
  c->set_model("resnet18");
  c->set_cold_ms(800);
  c->set_warm_ms(60);
  c->set_warm_cache_hit(true);
  Stage* s = c->add_cold_stages();
  s->set_name("onnx import");
  s->set_ms(100);
  return r;
}

TEST(Summarize, GeomeanOverMatchingRowsAndFailures) {
  CpuBenchResults r = Sample();
  Summarize(r);
  EXPECT_DOUBLE_EQ(r.geomean_speedup(), 1.0);  // sqrt(2 * 0.5); the failed row is left out
  EXPECT_EQ(r.failed_rows(), 1);

  r.mutable_bandwidth(1)->set_matches(false);
  r.mutable_compile()->set_error("onnx import: boom");
  Summarize(r);
  EXPECT_EQ(r.failed_rows(), 3);

  CpuBenchResults none;
  *none.add_models() = Row("gpt", 1, 0, false);
  Summarize(none);
  EXPECT_EQ(none.geomean_speedup(), 0);
  EXPECT_EQ(none.failed_rows(), 1);
}

TEST(Summarize, GeomeanOfThree) {
  CpuBenchResults r;
  for (double s : {1.0, 2.0, 4.0}) *r.add_models() = Row("m", 1, s, true);
  Summarize(r);
  EXPECT_NEAR(r.geomean_speedup(), 2.0, 1e-12);
}

TEST(FormatReport, RatiosGeomeanErrorsAndTargets) {
  CpuBenchResults r = Sample();
  Summarize(r);
  const std::string text = FormatReport(r);
  EXPECT_THAT(text, HasSubstr("\ngeomean vs torch eager: 1.00x\n"));
  EXPECT_THAT(text, HasSubstr("2.00x"));
  EXPECT_THAT(text, HasSubstr("0.50x"));
  EXPECT_THAT(text, HasSubstr("\nERROR gpt batch 8: output differs from torch"));
  EXPECT_THAT(text, HasSubstr("softmax >= 70% of copy: 50%, MISSED"));
  EXPECT_THAT(text, HasSubstr("cold compile of resnet18 < 1000 ms: 800.0 ms, met"));
  EXPECT_THAT(text, HasSubstr("warm compile of resnet18 < 50 ms: 60.0 ms, MISSED"));
  EXPECT_THAT(text, HasSubstr("geomean vs torch eager >= 1.50x: 1.00x, MISSED"));
  // Exactly one ERROR line: the failed row.
  size_t errors = 0;
  for (size_t p = text.find("ERROR "); p != std::string::npos; p = text.find("ERROR ", p + 1)) {
    ++errors;
  }
  EXPECT_EQ(errors, 1u);
}

TEST(ResultsToJson, RoundTripsWithSnakeCaseKeys) {
  CpuBenchResults r = Sample();
  Summarize(r);
  absl::StatusOr<std::string> json = ResultsToJson(r);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_THAT(*json, HasSubstr("\"geomean_speedup\""));
  EXPECT_THAT(*json, HasSubstr("\"max_relative_error\""));
  CpuBenchResults back;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*json, &back).ok());
  EXPECT_EQ(back.SerializeAsString(), r.SerializeAsString());
}

TorchEagerRequest Request() {
  TorchEagerRequest r;
  r.models = {"gpt"};
  r.batches = {1, 8};
  return r;
}

constexpr char kTorchJson[] = R"({
 "torch_version": "1.13.0a0", "threads": 2,
 "models": [{"name": "gpt", "onnx": "/w/gpt/model.onnx", "config": "16 tokens", "opset": 17,
   "export_seconds": 0.3,
   "runs": [
     {"batch": 1, "input": "/w/i1.pb", "output": "/w/o1.pb", "median_ms": 0.5, "min_ms": 0.4,
      "reps": 5},
     {"batch": 8, "input": "/w/i8.pb", "output": "/w/o8.pb", "median_ms": 3.5, "min_ms": 3.0,
      "reps": 5}]}]})";

TEST(ParseTorchEagerJson, AcceptsTheScriptsOutput) {
  absl::StatusOr<TorchEagerResults> r = ParseTorchEagerJson(kTorchJson, Request());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->models_size(), 1);
  EXPECT_EQ(r->models(0).runs(1).batch(), 8);
  EXPECT_DOUBLE_EQ(r->models(0).runs(1).median_ms(), 3.5);
}

TEST(ParseTorchEagerJson, RejectsWhatItCannotUse) {
  auto error = [](const std::string& json, TorchEagerRequest request = Request()) {
    absl::StatusOr<TorchEagerResults> r = ParseTorchEagerJson(json, request);
    return r.ok() ? std::string("ok") : std::string(r.status().message());
  };
  EXPECT_THAT(error("not json"), HasSubstr("torch_eager.py printed no valid results"));
  EXPECT_THAT(error(R"({"torch_version": "1", "thread": 2})"),
              HasSubstr("torch_eager.py printed no valid results"));  // unknown field
  TorchEagerRequest more = Request();
  more.batches = {1, 4};
  EXPECT_THAT(error(kTorchJson, more), HasSubstr("no results for gpt batch 4"));
  more = Request();
  more.models = {"gpt", "resnet18"};
  EXPECT_THAT(error(kTorchJson, more), HasSubstr("no results for resnet18"));
  std::string zero = kTorchJson;
  zero.replace(zero.find("\"median_ms\": 0.5"), 16, "\"median_ms\": 0.0");
  EXPECT_THAT(error(zero), HasSubstr("gpt batch 1 needs positive median_ms"));
}

TEST(TorchEagerCommand, QuotesPathsAndPassesThePolicy) {
  TorchEagerRequest r = Request();
  r.script = "/a b/torch_eager.py";
  r.out_dir = "/tmp/it's";
  r.threads = 3;
  r.timing.min_reps = 7;
  const std::string cmd = TorchEagerCommand(r);
  EXPECT_THAT(cmd, HasSubstr("OMP_NUM_THREADS=3 '/usr/bin/python3' '/a b/torch_eager.py'"));
  EXPECT_THAT(cmd, HasSubstr("--out '/tmp/it'\\''s'"));
  EXPECT_THAT(cmd, HasSubstr("--size full --models 'gpt' --batches 1,8 --threads 3"));
  EXPECT_THAT(cmd, HasSubstr("--min-reps 7"));
}

// CUDA rows: torch's calls are timed by coil's own sample rule, passed from its one definition.
TEST(TorchEagerCommand, CudaPassesCoilsSampleRule) {
  TorchEagerRequest r = Request();
  r.device = "cuda";
  const std::string cmd = TorchEagerCommand(r);
  EXPECT_THAT(cmd, HasSubstr("--device 'cuda'"));
  EXPECT_THAT(cmd, HasSubstr(absl::StrCat(" --sample-ms ", cuda::CudaExecutable::kSampleMs,
                                          " --max-passes ",
                                          cuda::CudaExecutable::kMaxTimedPasses)));
  EXPECT_EQ(cuda::CudaExecutable::PassesForSample(cuda::CudaExecutable::kSampleMs / 4), 4);
  r.device = "cpu";
  EXPECT_THAT(TorchEagerCommand(r), Not(HasSubstr("--sample-ms")));
}

TEST(FindTorchScript, ExplicitPathMustExist) {
  absl::StatusOr<std::string> s = FindTorchScript("/nonexistent/torch_eager.py");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.status().message(), HasSubstr("/nonexistent/torch_eager.py"));
}

TEST(MaxRelativeError, RelativeToTheLargestExpectedValue) {
  EXPECT_EQ(MaxRelativeError({1, 2, 3}, {1, 2, 3}), 0);
  EXPECT_DOUBLE_EQ(MaxRelativeError({1, 2, 4.5}, {1, 2, 4}), 0.125);
  EXPECT_DOUBLE_EQ(MaxRelativeError({0.5}, {0}), 0.5);  // all-zero expectation: absolute
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(MaxRelativeError({nan, 1}, {nan, 1}), 0);
  EXPECT_EQ(MaxRelativeError({nan, 1}, {0, 1}), inf);
  EXPECT_EQ(MaxRelativeError({1, 1}, {1, nan}), inf);
  EXPECT_EQ(MaxRelativeError({inf}, {inf}), 0);
  EXPECT_EQ(MaxRelativeError({inf}, {1}), inf);
  EXPECT_EQ(MaxRelativeError({1, 2}, {1}), inf);
}

TEST(CheckOutputs, ShapesCountsAndTolerance) {
  HostTensor want = HostTensor::FromDoubles(proto::FLOAT32, {2}, {1, 2});
  ModelRow row;
  CheckOutputs({HostTensor::FromDoubles(proto::FLOAT32, {2}, {1, 2.0001})}, want, 1e-4, row);
  EXPECT_TRUE(row.matches()) << row.error();
  EXPECT_NEAR(row.max_relative_error(), 5e-5, 1e-6);  // 2.0001 rounded to f32

  CheckOutputs({HostTensor::FromDoubles(proto::FLOAT32, {2}, {1, 2.01})}, want, 1e-4, row);
  EXPECT_FALSE(row.matches());
  EXPECT_THAT(row.error(), HasSubstr("max relative error 0.005 > 0.0001"));

  row = ModelRow();
  CheckOutputs({HostTensor::FromDoubles(proto::FLOAT32, {1, 2}, {1, 2})}, want, 1e-4, row);
  EXPECT_FALSE(row.matches());
  EXPECT_THAT(row.error(), HasSubstr("coil's output is f32[1, 2], torch's f32[2]"));

  row = ModelRow();
  CheckOutputs({want, want}, want, 1e-4, row);
  EXPECT_FALSE(row.matches());
  EXPECT_THAT(row.error(), HasSubstr("2 outputs"));
}

TEST(TimeRuns, WarmupRepsAndErrors) {
  int calls = 0;
  TimingPolicy p{.warmup = 2, .min_reps = 4, .max_reps = 4, .min_seconds = 100};
  absl::StatusOr<Timing> t = TimeRuns(p, [&]() {
    ++calls;
    return absl::OkStatus();
  });
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(calls, 6);  // max_reps caps the time budget
  EXPECT_EQ(t->reps, 4);
  EXPECT_LE(t->min_ms, t->median_ms);

  calls = 0;
  t = TimeRuns(
      p, [&]() { return ++calls == 3 ? absl::InternalError("third call") : absl::OkStatus(); });
  EXPECT_EQ(t.status().message(), "third call");
  EXPECT_EQ(calls, 3);
}

TEST(SummarizeSamples, MedianAndMinimum) {
  Timing t = SummarizeSamples(std::vector<double>{5, 1, 3});
  EXPECT_EQ(t.median_ms, 3);
  EXPECT_EQ(t.min_ms, 1);
  EXPECT_EQ(t.reps, 3);
  EXPECT_EQ(SummarizeSamples(std::vector<double>{4, 1, 2, 3}).median_ms, 2.5);
}

TEST(ParallelCopy, CopiesEveryElementWithAnyThreadCount) {
  for (int threads : {1, 3}) {
    cpu::ThreadPool pool(threads);
    const int64_t n = 3 * 16384 + 17;  // three full blocks and a partial one
    std::vector<float> src(n), dst(n, -1);
    std::iota(src.begin(), src.end(), 0.f);
    ParallelCopy(src.data(), dst.data(), n, pool);
    EXPECT_EQ(dst, src) << threads << " threads";
  }
}

TEST(BenchBandwidth, GraphsCompileAndMatchTheFloat64Evaluation) {
  BandwidthOptions o;
  o.threads = 2;
  o.rows = 5;
  o.cols = 96;
  o.timing = {.warmup = 0, .min_reps = 1, .max_reps = 1, .min_seconds = 0};
  std::vector<BandwidthRow> rows = BenchBandwidth(o);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].name(), "copy");
  EXPECT_EQ(rows[1].name(), "pointwise_chain");
  EXPECT_EQ(rows[2].name(), "softmax");
  for (const BandwidthRow& r : rows) {
    EXPECT_TRUE(r.matches()) << r.name() << ": " << r.error();
    EXPECT_GT(r.gb_per_s(), 0) << r.name();
    EXPECT_EQ(r.shape(), "f32[5, 96]");
  }
  EXPECT_EQ(rows[0].bytes(), 2 * 4 * 5 * 96);
  EXPECT_EQ(rows[1].bytes(), 2 * 4 * 5 * 96 + 3 * 4 * 96);
  EXPECT_EQ(rows[2].bytes(), 2 * 4 * 5 * 96);
  EXPECT_DOUBLE_EQ(rows[0].fraction_of_copy(), 1.0);
  EXPECT_GE(rows[1].kernels(), 1);
  EXPECT_LT(rows[1].max_relative_error(), 1e-5);
  EXPECT_LT(rows[2].max_relative_error(), 1e-5);
}

}  // namespace
}  // namespace coil::bench
