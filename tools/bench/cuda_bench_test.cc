// Tests of `coil bench cuda` without a GPU: torch_peers.py's `--device cuda` protocol (the
// command line, a recorded JSON output with the GPU's name and ONNX Runtime absent), the options
// the CUDA benchmark refuses, the "no CUDA driver" failure before any peer runs, and the report
// (GPU header, device-time ratios, whole-run table, the CUDA issue's target line, absent peers).
#include <cmath>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/cuda/cuda_driver.h"
#include "tools/bench/cpu_bench.h"
#include "tools/bench/cpu_bench_models.h"
#include "tools/bench/cpu_bench_peers.h"
#include "tools/bench/cpu_bench_report.h"
#include "tools/bench/cpu_bench_torch.h"

namespace coil::bench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TorchEagerRequest CudaRequest() {
  TorchEagerRequest r;
  r.python = "python3";
  r.script = "/x/tools/bench/torch_peers.py";
  r.out_dir = "/tmp/b";
  r.models = {"resnet50", "bert_base"};
  r.threads = 16;
  r.device = "cuda";
  return r;
}

TEST(CudaPeerCommand, PassesTheDeviceOnlyForCuda) {
  TorchEagerRequest r = CudaRequest();
  EXPECT_THAT(TorchEagerCommand(r), HasSubstr(" --device 'cuda'"));
  EXPECT_THAT(TorchEagerCommand(r), Not(HasSubstr("--batches")));  // each model's own
  r.device = "cpu";
  EXPECT_THAT(TorchEagerCommand(r), Not(HasSubstr("--device")));
}

// What torch_peers.py --device cuda printed on an H100 (trimmed to two rows).
constexpr char kRecorded[] = R"json({
 "gpu": "NVIDIA H100 80GB HBM3", "torch_version": "2.11.0+cu130", "threads": 16,
 "compiled_absent": "", "onnxruntime_absent": "not measured with --device cuda",
 "onnxruntime_version": "",
 "models": [
  {"name": "resnet50", "onnx": "/tmp/b/resnet50/model.onnx", "config": "3x224x224 images",
   "opset": 13, "export_seconds": 3.1,
   "runs": [{"batch": 64, "input": "/tmp/b/resnet50/batch_64/input_0.pb",
             "output": "/tmp/b/resnet50/batch_64/output_0.pb", "median_ms": 21.5,
             "min_ms": 21.2, "reps": 48,
             "compiled": {"median_ms": 20.0, "min_ms": 19.8, "reps": 50,
                          "max_relative_error": 2e-06, "compile_seconds": 18.5}}]},
  {"name": "bert_base", "onnx": "/tmp/b/bert_base/model.onnx", "config": "128 tokens",
   "opset": 17, "export_seconds": 2.0,
   "runs": [{"batch": 8, "input": "/tmp/b/bert_base/batch_8/input_0.pb",
             "output": "/tmp/b/bert_base/batch_8/output_0.pb", "median_ms": 4.0,
             "min_ms": 3.9, "reps": 50,
             "compiled": {"median_ms": 3.0, "min_ms": 2.9, "reps": 50,
                          "max_relative_error": 3e-06, "compile_seconds": 9.5}}]}]
})json";

TEST(CudaPeerJson, RecordedOutputParsesWithTheGpuAndOnnxRuntimeAbsent) {
  absl::StatusOr<TorchEagerResults> r = ParseTorchEagerJson(kRecorded, CudaRequest());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->gpu(), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(r->onnxruntime_absent(), "not measured with --device cuda");
  ASSERT_EQ(r->models_size(), 2);
  EXPECT_EQ(r->models(0).runs(0).batch(), 64);
  EXPECT_DOUBLE_EQ(r->models(1).runs(0).compiled().median_ms(), 3.0);
}

TEST(CudaPeerJson, AMissingModelOrAMisspelledFieldIsAnError) {
  TorchEagerRequest request = CudaRequest();
  request.models.push_back("gpt2_small");
  absl::StatusOr<TorchEagerResults> r = ParseTorchEagerJson(kRecorded, request);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("no results for gpt2_small"));
  std::string misspelled = kRecorded;
  misspelled.replace(misspelled.find("\"gpu\""), 5, "\"gpus\"");
  EXPECT_FALSE(ParseTorchEagerJson(misspelled, CudaRequest()).ok());
}

TEST(CudaBenchOptions, RefusesWhatOnlyTheCpuBenchmarkDoes) {
  CpuBenchOptions o;
  o.backend = "cuda";
  o.peers = false;
  o.models = {"resnet50"};
  absl::StatusOr<CpuBenchResults> r = RunCpuBench(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("peers only"));
  o.backend = "rocm";
  r = RunCpuBench(o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("backend must be cpu or cuda, got 'rocm'"));
}

// Without a driver (CI) the benchmark stops at once, naming the missing driver, before it looks
// for the peer script; with one, it gets past the probe and fails on the missing script.
TEST(CudaBench, SaysNoCudaDriverBeforeAnyPeerRuns) {
  CpuBenchOptions o;
  o.backend = "cuda";
  o.peers = true;
  o.models = {"resnet50"};
  o.batches.clear();
  o.torch_script = "/nonexistent/torch_peers.py";
  absl::StatusOr<CpuBenchResults> r = RunCpuBench(o);
  ASSERT_FALSE(r.ok());
  if (!cuda::CudaDriver::Probe().ok()) {
    EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(r.status().message(), HasSubstr("no CUDA driver"));
    EXPECT_THAT(r.status().message(), HasSubstr("coil bench cuda needs an NVIDIA GPU"));
  } else {
    EXPECT_THAT(r.status().message(), HasSubstr("/nonexistent/torch_peers.py"));
  }
}

ModelRow CudaRow(const std::string& model, int batch, double coil_ms, double run_ms,
                 const TorchEagerRun& run) {
  ModelRow r;
  r.set_model(model);
  r.set_batch(batch);
  r.set_torch_ms(run.median_ms());
  r.set_coil_ms(coil_ms);
  r.set_coil_run_ms(run_ms);
  r.set_speedup(run.median_ms() / coil_ms);
  r.set_matches(true);
  r.set_max_relative_error(2e-6);
  r.set_coil_compile_ms(3300);
  *r.mutable_compiled() = run.compiled();
  SetPeerRatios(r, kModelTolerance);
  return r;
}

CpuBenchResults CudaSample(const TorchEagerResults& torch) {
  CpuBenchResults r;
  r.set_machine("test CPU (16 logical CPUs)");
  r.set_peers(true);
  r.set_backend("cuda");
  r.set_gpu(torch.gpu());
  r.set_torch_version(torch.torch_version());
  r.set_compiled_absent(torch.compiled_absent());
  r.set_onnxruntime_absent(torch.onnxruntime_absent());
  *r.add_models() = CudaRow("resnet50", 64, 16.0, 40.0, torch.models(0).runs(0));
  *r.add_models() = CudaRow("bert_base", 8, 4.0, 5.5, torch.models(1).runs(0));
  Summarize(r);
  SummarizePeers(r);
  return r;
}

TEST(CudaBenchReport, RatiosOnDeviceTimesGeomeanAndTheCudaTarget) {
  absl::StatusOr<TorchEagerResults> torch = ParseTorchEagerJson(kRecorded, CudaRequest());
  ASSERT_TRUE(torch.ok()) << torch.status();
  CpuBenchResults r = CudaSample(*torch);
  EXPECT_DOUBLE_EQ(r.models(0).vs_compiled(), 20.0 / 16.0);
  EXPECT_DOUBLE_EQ(r.models(1).vs_compiled(), 3.0 / 4.0);
  EXPECT_NEAR(r.geomean_vs_compiled(), std::sqrt(1.25 * 0.75), 1e-12);
  EXPECT_EQ(r.geomean_vs_onnxruntime(), 0);  // absent: no geomean
  const std::string text = FormatReport(r);
  EXPECT_THAT(text, HasSubstr("coil bench cuda: NVIDIA H100 80GB HBM3 (host test CPU"));
  EXPECT_THAT(text, HasSubstr("torch 2.11.0+cu130 (eager, torch.compile default mode), TF32 off"));
  EXPECT_THAT(text, HasSubstr("geomean vs torch.compile: 0.97x"));
  EXPECT_THAT(text, HasSubstr("geomean vs onnxruntime: absent (not measured with --device cuda)"));
  EXPECT_THAT(text, HasSubstr("coil whole run (host tensors in"));
  EXPECT_THAT(text, ::testing::ContainsRegex("resnet50 +64 +40.000 +16.000"));
  EXPECT_THAT(text, HasSubstr("geomean vs torch.compile >= 1.00x, no row < 0.80x: 0.97x, lowest "
                              "0.75x, MISSED"));
  EXPECT_THAT(text, Not(HasSubstr("peers issue")));
}

// The issue's micro rows: a two-input bf16 row with its bytes, and the copy's bandwidth.
constexpr char kMicro[] = R"json({
 "gpu": "NVIDIA H200", "torch_version": "2.11.0+cu130", "threads": 16,
 "compiled_absent": "", "onnxruntime_absent": "not measured with --device cuda",
 "onnxruntime_version": "", "copy_gb_per_s": 4000.0,
 "models": [
  {"name": "layernorm", "onnx": "/tmp/b/layernorm/model.onnx",
   "config": "gelu(layer_norm(x + r)), bf16 [rows, 8192]", "opset": 17, "export_seconds": 0.5,
   "runs": [{"batch": 16384, "input": "/tmp/b/layernorm/batch_16384/input_0.pb",
             "more_inputs": ["/tmp/b/layernorm/batch_16384/input_1.pb"],
             "bytes": 805306368,
             "output": "/tmp/b/layernorm/batch_16384/output_0.pb", "median_ms": 0.6,
             "min_ms": 0.59, "reps": 50,
             "compiled": {"median_ms": 0.45, "min_ms": 0.44, "reps": 50,
                          "max_relative_error": 0.008, "compile_seconds": 2.0}}]}]
})json";

TEST(CudaBenchMicroRows, AreDefaultsAndKnownOnlyToTheCudaBenchmark) {
  EXPECT_THAT(DefaultCudaModels(),
              ::testing::ElementsAre("gelu_chain", "softmax", "layernorm", "mlp_bf16", "resnet50",
                                     "bert_base", "gpt2_small", "resnet50_bf16"));
  CpuBenchOptions o;  // coil bench cpu --peers does not know them
  o.peers = true;
  o.models = {"softmax"};
  o.batches.clear();
  absl::StatusOr<CpuBenchResults> r = RunCpuBench(o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("unknown model 'softmax'"));
}

// MODEL_bf16 rows: known to the CUDA benchmark only (torch.autocast runs on the GPU); a
// model whose recorded precision coil does not know is a row error, never an f32 run.
TEST(CudaBenchBf16Rows, KnownOnlyToTheCudaBenchmarkAndTheirPrecisionIsChecked) {
  CpuBenchOptions o;
  o.peers = true;
  o.models = {"resnet50_bf16"};
  o.batches.clear();
  absl::StatusOr<CpuBenchResults> r = RunCpuBench(o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("unknown model 'resnet50_bf16'"));
  o.backend = "cuda";
  o.models = {"bert_base_bf16_bf16"};
  r = RunCpuBench(o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("unknown model 'bert_base_bf16_bf16'"));

  TorchEagerModel m;
  m.set_name("resnet50_fp8");
  m.set_onnx("/nonexistent/model.onnx");
  m.set_precision("fp8");
  m.add_runs()->set_batch(64);
  ModelBenchOptions mo;
  mo.backend = "cuda";
  std::vector<ModelRow> rows = BenchModel(m, mo);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_FALSE(rows[0].matches());
  EXPECT_THAT(rows[0].error(), HasSubstr("unknown precision 'fp8'"));
}

// torch_peers.py's "precision" field reaches TorchEagerModel.
TEST(CudaBenchBf16Rows, ThePrecisionFieldParses) {
  TorchEagerRequest request = CudaRequest();
  request.models = {"resnet50_bf16"};
  absl::StatusOr<TorchEagerResults> r = ParseTorchEagerJson(R"json({
 "gpu": "NVIDIA H100 80GB HBM3", "torch_version": "2.11.0+cu130", "threads": 16,
 "models": [
  {"name": "resnet50_bf16", "onnx": "/tmp/b/resnet50_bf16/model.onnx",
   "config": "3x224x224 images, torch.autocast bf16", "opset": 13, "export_seconds": 3.1,
   "precision": "bf16",
   "runs": [{"batch": 64, "input": "/tmp/b/resnet50_bf16/batch_64/input_0.pb",
             "output": "/tmp/b/resnet50_bf16/batch_64/output_0.pb", "median_ms": 7.2,
             "min_ms": 7.1, "reps": 50}]}]
})json",
                                                            request);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->models_size(), 1);
  EXPECT_EQ(r->models(0).precision(), "bf16");
}

TEST(CudaBenchMicroRows, SixteenBitOutputsGetTheirTolerance) {
  EXPECT_EQ(ModelTolerance(proto::FLOAT32, kModelTolerance), kModelTolerance);
  EXPECT_EQ(ModelTolerance(proto::BFLOAT16, kModelTolerance), kBf16ModelTolerance);
  EXPECT_EQ(ModelTolerance(proto::FLOAT16, kModelTolerance), kF16ModelTolerance);
  EXPECT_LT(kF16ModelTolerance, kBf16ModelTolerance);
  // A bf16 output 1e-2 off (a few bf16 units in the last place) matches; the same error in
  // f32 does not.
  HostTensor want = HostTensor::FromDoubles(proto::BFLOAT16, {2}, {1.0, -2.0});
  HostTensor off = HostTensor::FromDoubles(proto::BFLOAT16, {2}, {1.0, -1.9765625});
  ModelRow row;
  CheckOutputs({off}, want, ModelTolerance(proto::BFLOAT16, kModelTolerance), row);
  EXPECT_TRUE(row.matches()) << row.error();
  EXPECT_NEAR(row.max_relative_error(), 0.0234375 / 2, 1e-12);
  HostTensor want32 = HostTensor::FromDoubles(proto::FLOAT32, {2}, {1.0, -2.0});
  HostTensor off32 = HostTensor::FromDoubles(proto::FLOAT32, {2}, {1.0, -1.9765625});
  CheckOutputs({off32}, want32, ModelTolerance(proto::FLOAT32, kModelTolerance), row);
  EXPECT_FALSE(row.matches());
}

TEST(CudaBenchMicroRows, ReportShowsTheShareOfTheCopyBandwidth) {
  TorchEagerRequest request = CudaRequest();
  request.models = {"layernorm"};
  absl::StatusOr<TorchEagerResults> torch = ParseTorchEagerJson(kMicro, request);
  ASSERT_TRUE(torch.ok()) << torch.status();
  const TorchEagerRun& run = torch->models(0).runs(0);
  ASSERT_EQ(run.more_inputs_size(), 1);
  EXPECT_EQ(run.bytes(), 805306368);
  EXPECT_DOUBLE_EQ(torch->copy_gb_per_s(), 4000.0);
  CpuBenchResults r;
  r.set_peers(true);
  r.set_backend("cuda");
  r.set_gpu(torch->gpu());
  r.set_copy_gb_per_s(torch->copy_gb_per_s());
  ModelRow row = CudaRow("layernorm", 16384, 0.25, 60.0, run);
  row.set_bytes(run.bytes());
  row.set_tolerance(kBf16ModelTolerance);
  row.set_max_relative_error(0.008);
  SetPeerRatios(row, row.tolerance());  // torch.compile's 0.008 counts at bf16's tolerance
  *r.add_models() = row;
  Summarize(r);
  SummarizePeers(r);
  EXPECT_DOUBLE_EQ(r.models(0).vs_compiled(), 0.45 / 0.25);
  const std::string text = FormatReport(r);
  EXPECT_THAT(text, HasSubstr("device-to-device copy (1 GiB, the ceiling): 4000 GB/s"));
  // 805.3 MB in 0.25 / 0.6 / 0.45 ms against 4000 GB/s: 81%, 34%, 45%.
  EXPECT_THAT(text, ::testing::ContainsRegex("layernorm +16384 +805.3 +81% +34% +45%"));
  EXPECT_THAT(text, Not(HasSubstr("PEER torch.compile")));
  // Without the copy, no shares are made up.
  r.set_copy_gb_per_s(0);
  EXPECT_THAT(FormatReport(r),
              HasSubstr("device-to-device copy (1 GiB, the ceiling): not measured"));
  EXPECT_THAT(FormatReport(r), Not(HasSubstr("% of copy")));
}

TEST(CudaBenchReport, AnAbsentTorchCompileIsAbsentNotFaked) {
  std::string json = kRecorded;
  json.replace(json.find("\"compiled_absent\": \"\""), 21,
               "\"compiled_absent\": \"torch 1.13.1 has no torch.compile\"");
  absl::StatusOr<TorchEagerResults> torch = ParseTorchEagerJson(json, CudaRequest());
  ASSERT_TRUE(torch.ok()) << torch.status();
  CpuBenchResults r = CudaSample(*torch);
  r.mutable_models(0)->clear_compiled();
  r.mutable_models(1)->clear_compiled();
  SetPeerRatios(*r.mutable_models(0), kModelTolerance);
  SetPeerRatios(*r.mutable_models(1), kModelTolerance);
  SummarizePeers(r);
  EXPECT_EQ(r.geomean_vs_compiled(), 0);
  const std::string text = FormatReport(r);
  EXPECT_THAT(text, HasSubstr("torch.compile absent"));
  EXPECT_THAT(text, HasSubstr("geomean vs torch.compile: absent (torch 1.13.1 has no"));
  EXPECT_THAT(text, HasSubstr("vs torch.compile: not measured"));
}

}  // namespace
}  // namespace coil::bench
