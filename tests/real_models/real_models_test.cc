// Real models through the ONNX frontend: torch 1.13 exports each model at test time (random
// weights, fixed seed, batch axis dynamic; export_models.py writes into $TEST_TMPDIR), coil
// imports it once into one graph with a symbolic batch, and the reference interpreter runs it
// at batch sizes 1 and 3.
//
// Accuracy: for every output, max|coil - torch| / max|torch| <= 1e-4 (the error relative to
// the output's scale, so tiny elements do not need tiny relative errors).
// Models: torchvision resnet18 and mobilenet_v2 (64x64 images), a 2-layer
// nn.TransformerEncoder (d_model 256, 8 heads, sequence-first, opset 17 LayerNormalization), and
// a small GPT-style decoder, plus nine more torchvision classifiers (export_models.py's
// TORCHVISION_FAMILY). One test case per model; sharded.
//
// Each model then goes through the compile driver's prims (only prims and externs may remain)
// and inductor (fusion + memory plan) stages; the decomposed graph (reference interpreter) and
// the schedule (Schedule interpreter, freed buffers poisoned with NaN) must match torch at both
// batch sizes with the same accuracy; so must the compiled CPU backend (the driver with the CPU
// backend: its capabilities, LLVM code generation, the runtime/cpu executable).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "capture/onnx/onnx_importer.h"
#include "gtest/gtest.h"
#include "ir/graph.h"
#include "ir/verifier.h"
#include "prims/decomposition_registry.h"
#include "runtime/interpreter.h"
#include "runtime/schedule_interpreter.h"
#include "runtime/tensor_compare.h"
#include "tests/onnx_conformance/onnx_tensor.h"
#include "tools/driver/cpu_backend.h"
#include "tools/driver/driver.h"
#include "tools/driver/schedule_backend.h"

namespace {

constexpr double kMaxRelativeError = 1e-4;
constexpr char kScript[] = "tests/real_models/export_models.py";

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Runs the graph on batch_N/input_0.pb and compares with torch's batch_N/output_0.pb.
// Runs a stage's executable form on one input.
using Runner = std::function<absl::StatusOr<std::vector<coil::HostTensor>>(const coil::HostTensor&)>;

void CheckBatch(const std::string& model, const Runner& run, const std::string& dir, int batch,
                const char* stage) {
  std::string set = absl::StrCat(dir, "/batch_", batch);
  absl::StatusOr<coil::HostTensor> x = coil::onnx_testing::ReadOnnxTensorFile(set + "/input_0.pb");
  absl::StatusOr<coil::HostTensor> want = coil::onnx_testing::ReadOnnxTensorFile(set + "/output_0.pb");
  ASSERT_TRUE(x.ok()) << x.status();
  ASSERT_TRUE(want.ok()) << want.status();
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<coil::HostTensor>> got = run(*x);
  double run_s = Seconds(start);
  ASSERT_TRUE(got.ok()) << model << " (" << stage << ") batch " << batch << ": " << got.status();
  ASSERT_EQ(got->size(), 1u);
  const coil::HostTensor& y = (*got)[0];
  ASSERT_EQ(y.shape(), want->shape()) << model << " batch " << batch << ": " << y.TypeString()
                                      << " vs torch " << want->TypeString();
  double err = coil::MaxRelativeError(y, *want, coil::NanPolicy::kNanIsError);
  std::printf("%s (%s) batch %d: %.2f s, relative error %.3g\n",
              model.c_str(), stage, batch, run_s, err);
  std::string key = absl::StrCat(stage, "_batch_", batch);
  testing::Test::RecordProperty(key + "_seconds", absl::StrCat(run_s));
  testing::Test::RecordProperty(key + "_relative_error", absl::StrCat(err));
  EXPECT_LE(err, kMaxRelativeError) << model << " (" << stage << ") batch " << batch;
}

void CheckModel(const std::string& model) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/", model);
  auto start = std::chrono::steady_clock::now();
  std::string cmd = absl::StrCat("OMP_NUM_THREADS=1 /usr/bin/python3 ", kScript, " ", model, " ", dir);
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "export failed: " << cmd;
  double export_s = Seconds(start);

  start = std::chrono::steady_clock::now();
  absl::StatusOr<coil::proto::Graph> imported = coil::onnx::ImportOnnxFile(dir + "/model.onnx");
  ASSERT_TRUE(imported.ok()) << "import: " << imported.status();
  absl::StatusOr<coil::Graph> graph = coil::Graph::FromProto(*imported);
  ASSERT_TRUE(graph.ok()) << graph.status();
  ASSERT_TRUE(coil::Verify(*graph).ok()) << coil::Verify(*graph);
  double import_s = Seconds(start);
  ASSERT_EQ(graph->inputs().size(), 1u);
  bool symbolic_batch = false;
  for (const coil::SymExpr& d : graph->inputs()[0]->type().shape) {
    if (!d.is_constant()) symbolic_batch = true;
  }
  EXPECT_TRUE(symbolic_batch) << "the batch dimension was not imported as a symbol";

  std::printf("%s: export %.2f s, import %.2f s (%d nodes)\n", model.c_str(), export_s, import_s,
              graph->num_nodes());
  // Both batch sizes run on the same graph; a failure at one does not skip the other.
  auto interpret = [&graph](const coil::HostTensor& x) { return coil::Interpret(*graph, {x}); };
  for (int batch : {1, 3}) CheckBatch(model, interpret, dir, batch, "aten");

  // prims and inductor through the compile driver, stopping at the Schedule: the decomposed
  // graph and the Schedule are each run below (the Schedule with poisoned dead buffers, which
  // the driver's Schedule interpreter backend does not do). No extern epilogues are declared.
  const int aten_nodes = graph->num_nodes();
  coil::driver::DriverOptions schedule_options;
  schedule_options.backend = coil::driver::ScheduleInterpreterBackend();
  schedule_options.stop_after = coil::driver::Stage::kInductor;
  schedule_options.cache = nullptr;
  schedule_options.external_data_dir = dir;
  absl::StatusOr<coil::driver::CompileResult> compiled =
      coil::driver::CompileGraph(*std::move(graph), schedule_options);
  ASSERT_TRUE(compiled.ok()) << model << ": " << compiled.status();
  auto stage_seconds = [](const coil::driver::CompileResult& r, const std::string& stage) {
    double s = 0;
    for (const coil::proto::StageTiming& t : r.report.timings()) {
      if (t.stage() == stage) s += t.seconds();
    }
    return s;
  };
  absl::StatusOr<coil::Graph> prims_graph = coil::Graph::FromProto(*compiled->prims_graph);
  ASSERT_TRUE(prims_graph.ok()) << prims_graph.status();
  compiled->prims_graph.reset();  // one copy of the weights fewer
  for (const coil::Node* n : prims_graph->nodes()) {
    ASSERT_TRUE(coil::prims::IsPrim(n->op()) || coil::prims::IsExtern(n->op()))
        << model << ": decomposed graph still has " << n->Describe();
  }
  std::printf("%s: decompose %.3f s (%d aten nodes -> %d prims/extern nodes)\n", model.c_str(),
              stage_seconds(*compiled, "prims"), aten_nodes, prims_graph->num_nodes());
  auto interpret_prims = [&prims_graph](const coil::HostTensor& x) {
    return coil::Interpret(*prims_graph, {x});
  };
  for (int batch : {1, 3}) CheckBatch(model, interpret_prims, dir, batch, "prims");

  const coil::proto::Schedule& schedule = *compiled->schedule;
  const coil::proto::ScheduleStats& stats = schedule.stats();
  std::printf("%s: schedule %.3f s: %d kernels (%d extern) from %d unfused, bytes moved %lld "
              "(unfused %lld), arena %lld bytes (peak live %lld, without reuse %lld)\n",
              model.c_str(), stage_seconds(*compiled, "inductor"), stats.kernels(),
              stats.externs(), stats.kernels_unfused(),
              static_cast<long long>(stats.bytes_moved_hint()),
              static_cast<long long>(stats.bytes_moved_unfused_hint()),
              static_cast<long long>(schedule.memory_plan().arena_bytes_hint()),
              static_cast<long long>(schedule.memory_plan().peak_live_bytes_hint()),
              static_cast<long long>(schedule.memory_plan().unplanned_bytes_hint()));
  EXPECT_LT(stats.kernels(), stats.kernels_unfused()) << model << ": nothing fused";
  EXPECT_GE(schedule.memory_plan().arena_bytes_hint(),
            schedule.memory_plan().peak_live_bytes_hint());
  auto run_schedule = [&schedule](const coil::HostTensor& x) {
    coil::ScheduleInterpreterOptions options;
    options.poison_dead_buffers = true;
    return coil::InterpretSchedule(schedule, {x}, options);
  };
  for (int batch : {1, 3}) CheckBatch(model, run_schedule, dir, batch, "schedule");

  // The compiled CPU backend: the whole driver (the CPU backend's capabilities, LLVM code
  // generation, the runtime/cpu executable), from the decomposed graph as before (its prims
  // stage has nothing left to decompose), without a compile cache.
  coil::driver::DriverOptions cpu_options;
  cpu_options.backend = coil::driver::CpuBackend();
  cpu_options.cache = nullptr;
  cpu_options.keep_intermediates = false;
  cpu_options.external_data_dir = dir;
  absl::StatusOr<coil::driver::CompileResult> cpu =
      coil::driver::CompileGraph(*std::move(prims_graph), cpu_options);
  ASSERT_TRUE(cpu.ok()) << model << ": cpu backend: " << cpu.status();
  ASSERT_NE(cpu->executable, nullptr) << model << ": cpu load: " << cpu->load_error;
  std::printf("%s: cpu backend: schedule + codegen + load %.3f s (%d kernels)\n", model.c_str(),
              stage_seconds(*cpu, "inductor") + stage_seconds(*cpu, "codegen_cpu") +
                  stage_seconds(*cpu, "load"),
              coil::driver::AsCpuProgram(*cpu->executable)->module().kernels_size());
  coil::driver::Executable& program = *cpu->executable;
  auto run_cpu = [&program](const coil::HostTensor& x) { return program.Run({x}); };
  for (int batch : {1, 3}) CheckBatch(model, run_cpu, dir, batch, "cpu");
}

TEST(RealModels, resnet18) { CheckModel("resnet18"); }
TEST(RealModels, mobilenet_v2) { CheckModel("mobilenet_v2"); }
TEST(RealModels, transformer_encoder) { CheckModel("transformer_encoder"); }
TEST(RealModels, gpt) { CheckModel("gpt"); }

// More of torchvision's classification family, one test case each.
class TorchvisionFamily : public testing::TestWithParam<const char*> {};
TEST_P(TorchvisionFamily, MatchesTorch) { CheckModel(GetParam()); }
INSTANTIATE_TEST_SUITE_P(RealModels, TorchvisionFamily,
                         testing::Values("efficientnet_b0", "densenet121", "googlenet",
                                         "mobilenet_v3_small", "shufflenet_v2_x0_5",
                                         "squeezenet1_0", "regnet_x_400mf", "mnasnet0_5",
                                         "resnext50_32x4d"),
                         [](const testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

}  // namespace
