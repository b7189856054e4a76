// The compile driver end to end: stages in order, passes recorded, results against the float64
// reference interpreter, the cache (hit skips prims/inductor/codegen; keys separate backends
// and options), stop_after, dumps by pattern, errors naming the stage, and code for another
// CPU generated but not loaded.
#include "tools/driver/driver.h"

#include <cmath>
#include <cstring>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/constant_refs.h"
#include "ir/parser.h"
#include "runtime/compile_cache.h"
#include "runtime/host_tensor.h"
#include "runtime/interpreter.h"
#include "tools/driver/capture_backend.h"
#include "tools/driver/cpu_backend.h"
#include "tools/driver/schedule_backend.h"

namespace coil::driver {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A linear layer (weight transpose to fold, mm extern + bias epilogue), gelu and softmax over a
// symbolic batch.
constexpr char kModel[] = R"(graph @mlp(%0 "x": f32[batch, 4]) {
  symbol batch min 1 max 0 hint 3
  %1 "w": f32[3, 4] = constant dense "0000803f000000400000404000008040cdcccc3dcdcc4c3e9a99993ecdcccc3e000080bf000000c0000040c0000080c0"
  %2 "b": f32[3] = constant dense "0000003f000000bf0000803e"
  %3: f32[batch, 3] = aten.linear(%0, %1, %2)
  %4: f32[batch, 3] = aten.gelu(%3) {approximate = "none"}
  %5: f32[batch, 3] = aten.softmax(%4) {dim = 1, dtype = none}
  return %5
})";

Graph Model() {
  absl::StatusOr<Graph> g = ParseGraph(kModel);
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

HostTensor Input(int64_t batch) {
  HostTensor t = HostTensor::Zeros(proto::FLOAT32, {batch, 4});
  std::mt19937 rng(5);
  for (int64_t i = 0; i < t.numel(); ++i) {
    t.StoreDouble(i, std::uniform_real_distribution<double>(-2, 2)(rng));
  }
  return t;
}

void ExpectMatchesOracle(Executable& exe) {
  for (int64_t batch : {1, 5}) {
    std::vector<HostTensor> in = {Input(batch)};
    absl::StatusOr<std::vector<HostTensor>> want = Interpret(Model(), in, {.float64 = true});
    absl::StatusOr<std::vector<HostTensor>> got = exe.Run(in);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), 1u);
    std::vector<double> a = (*want)[0].ToDoubles(), b = (*got)[0].ToDoubles();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5) << "element " << i;
  }
}

std::vector<std::string> Stages(const proto::CompileReport& r) {
  std::vector<std::string> out;
  for (const proto::StageTiming& t : r.timings()) out.push_back(t.stage());
  return out;
}

std::string TempDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/", name);
}

TEST(DriverTest, CpuCompileRunsEveryStageInOrder) {
  DriverOptions o;
  o.backend = CpuBackend();
  o.cache = nullptr;
  o.record_artifacts = true;
  std::vector<std::string> seen;
  o.on_stage = [&](const StageEvent& e) { seen.push_back(e.stage); };
  absl::StatusOr<CompileResult> r = CompileGraph(Model(), o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(Stages(r->report),
              ElementsAre("capture", "prims", "inductor", "codegen_cpu", "load"));
  EXPECT_EQ(seen, Stages(r->report));
  ASSERT_EQ(r->report.stages_size(), 4);  // artifacts: capture, prims, inductor, codegen_cpu
  EXPECT_TRUE(r->report.stages(1).has_graph());
  EXPECT_TRUE(r->report.stages(2).has_schedule());
  EXPECT_TRUE(r->report.stages(3).has_kernel_module());
  EXPECT_FALSE(r->cache_hit);
  ASSERT_NE(r->executable, nullptr);
  EXPECT_NE(AsCpuProgram(*r->executable), nullptr);
  ExpectMatchesOracle(*r->executable);
  // Every pass of both stages, in pipeline order, with the weight transpose folded.
  std::vector<std::string> passes;
  bool folded = false;
  for (const proto::PassRun& p : r->report.passes()) {
    passes.push_back(absl::StrCat(p.pipeline(), ".", p.pass()));
    if (p.pass() == "fold_constants") folded = p.changed();
    EXPECT_EQ(p.dump(), "");
  }
  EXPECT_THAT(passes, ElementsAre("prims.shape_guards", "prims.functionalize",
                                  "prims.merge_matmuls", "prims.fold_weight_scales",
                                  "prims.decompose",
                                  "inductor.graph.fold_constants", "inductor.lower",
                                  "inductor.fuse_vertical", "inductor.fuse_reductions",
                                  "inductor.fuse_horizontal", "inductor.fuse_extern_epilogues",
                                  "inductor.reuse_loop_values", "inductor.remove_dead_buffers",
                                  "inductor.channels_last", "inductor.plan_memory",
                                  "codegen_cpu.llvm_ir", "codegen_cpu.optimize",
                                  "codegen_cpu.link", "codegen_cpu.machine_code"));
  EXPECT_TRUE(folded);
  EXPECT_GT(r->total_seconds(), 0);
  // The code generator's parts are wall time inside the codegen stage, which the driver
  // times with its own clock around the call: together they fit in it.
  double parts = 0, stage = -1;
  for (const proto::PassRun& p : r->report.passes()) {
    if (p.pipeline() != "codegen_cpu") continue;
    EXPECT_GE(p.seconds(), 0) << p.pass();
    parts += p.seconds();
  }
  for (const proto::StageTiming& t : r->report.timings()) {
    if (t.stage() == "codegen_cpu") stage = t.seconds();
  }
  EXPECT_GT(parts, 0);
  EXPECT_LE(parts, stage);
}

TEST(DriverTest, ScheduleInterpreterBackendWithoutEpilogues) {
  DriverOptions o;
  o.backend = ScheduleInterpreterBackend();
  o.cache = nullptr;
  absl::StatusOr<CompileResult> r = CompileGraph(Model(), o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(Stages(r->report),
              ElementsAre("capture", "prims", "inductor", "codegen_schedule", "load"));
  for (const proto::Kernel& k : r->schedule->kernels()) {
    if (k.kind() == proto::Kernel::EXTERN) {
      EXPECT_EQ(k.loops_size(), 0) << "no epilogue";
    }
  }
  ExpectMatchesOracle(*r->executable);
}

TEST(DriverTest, CacheHitSkipsTheStagesAndKeysSeparateBackendsAndOptions) {
  CompileCache cache(TempDir("driver_cache"));
  DriverOptions o;
  o.backend = CpuBackend();
  o.cache = &cache;
  absl::StatusOr<CompileResult> first = CompileGraph(Model(), o);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->cache_hit);
  EXPECT_FALSE(first->cache_key.empty());
  EXPECT_THAT(Stages(first->report),
              ElementsAre("capture", "cache key", "cache lookup", "prims", "inductor",
                          "codegen_cpu", "cache store", "load"));
  absl::StatusOr<CompileResult> second = CompileGraph(Model(), o);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->cache_hit);
  EXPECT_EQ(second->cache_key, first->cache_key);
  EXPECT_THAT(Stages(second->report), ElementsAre("capture", "cache key", "cache lookup", "load"));
  EXPECT_EQ(second->report.passes_size(), 0);
  ExpectMatchesOracle(*second->executable);

  DriverOptions unfused = o;
  unfused.schedule.fusion = false;
  DriverOptions interpreted = o;
  interpreted.backend = ScheduleInterpreterBackend();
  const std::string key = CacheKey(Model(), o);
  EXPECT_EQ(key, first->cache_key);
  EXPECT_NE(CacheKey(Model(), unfused), key);
  EXPECT_NE(CacheKey(Model(), interpreted), key);
  EXPECT_NE(CacheKey(Model(), interpreted), CacheKey(Model(), unfused));
  absl::StatusOr<CompileResult> other = CompileGraph(Model(), interpreted);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_FALSE(other->cache_hit);
  ExpectMatchesOracle(*other->executable);
}

TEST(DriverTest, StopAfterInductor) {
  DriverOptions o;
  o.backend = CpuBackend();
  o.stop_after = Stage::kInductor;
  absl::StatusOr<CompileResult> r = CompileGraph(Model(), o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(Stages(r->report), ElementsAre("capture", "prims", "inductor"));
  EXPECT_TRUE(r->prims_graph.has_value());
  EXPECT_TRUE(r->schedule.has_value());
  EXPECT_FALSE(r->module.has_value());
  EXPECT_EQ(r->executable, nullptr);
  EXPECT_EQ(r->cache_key, "");  // the cache holds modules: nothing to look up
}

TEST(DriverTest, DumpsPassesMatchingThePattern) {
  DriverOptions o;
  o.backend = ScheduleInterpreterBackend();
  o.cache = nullptr;
  o.dump_pattern = "^(prims\\.decompose|inductor\\.fuse_vertical)$";
  absl::StatusOr<CompileResult> r = CompileGraph(Model(), o);
  ASSERT_TRUE(r.ok()) << r.status();
  int dumps = 0;
  for (const proto::PassRun& p : r->report.passes()) {
    const std::string name = absl::StrCat(p.pipeline(), ".", p.pass());
    if (name == "prims.decompose") {
      EXPECT_THAT(p.dump(), HasSubstr("prims.erf"));  // the text IR after decomposition
    } else if (name == "inductor.fuse_vertical") {
      EXPECT_THAT(p.dump(), HasSubstr("POINTWISE"));
    } else {
      EXPECT_EQ(p.dump(), "") << name;
    }
    dumps += !p.dump().empty();
  }
  EXPECT_EQ(dumps, 2);
  EXPECT_EQ(r->report.options().at("dump_pattern"), o.dump_pattern);

  o.dump_pattern = "([";
  r = CompileGraph(Model(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("prims: dump pattern '([' is not a regular"));
}

TEST(DriverTest, ErrorsNameTheStageAndKeepThePartialReport) {
  DriverOptions o;
  o.backend = ScheduleInterpreterBackend();
  o.cache = nullptr;
  absl::StatusOr<CompileResult> r = CompileGraph(Model(), DriverOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("needs a backend"));

  // aten.relu kept whole by prims: inductor has no lowering for it.
  absl::StatusOr<Graph> bad = ParseGraph(R"(graph @g(%0 "x": f32[4]) {
  %1: f32[4] = aten.relu(%0)
  return %1
})");
  ASSERT_TRUE(bad.ok()) << bad.status();
  o.decompose.keep = {"aten.relu"};
  proto::CompileReport partial;
  r = CompileGraph(*std::move(bad), o, &partial);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("inductor: "));
  EXPECT_THAT(r.status().message(), HasSubstr("aten.relu"));
  EXPECT_THAT(Stages(partial), ElementsAre("capture", "prims"));
  ASSERT_GE(partial.logs_size(), 1);
  EXPECT_EQ(partial.logs(partial.logs_size() - 1).channel(), "error");
}

TEST(DriverTest, CodeForAnotherCpuIsGeneratedNotLoaded) {
  // knl needs AVX512-ER (Xeon Phi only), bdver4 XOP (AMD Bulldozer only): one is foreign here.
  const bool has_xop = absl::StrContains(HostCpuDescription(), "+xop");
  DriverOptions o;
  o.backend = CpuBackend({.codegen = {.cpu = has_xop ? "knl" : "bdver4"}});
  o.cache = nullptr;
  absl::StatusOr<CompileResult> r = CompileGraph(Model(), o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->executable, nullptr);
  EXPECT_EQ(r->load_error.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r->load_error.message(), HasSubstr("lacks"));
  ASSERT_TRUE(r->module.has_value());
  EXPECT_EQ(r->module->cpu(), has_xop ? "knl" : "bdver4");
}

// A relu over a 64x64 weight (16 KiB): mm(x, w) keeps w as is (no folding), so the cache entry
// can refer to it.
Graph BigWeight(int seed) {
  std::string hex;
  for (int i = 0; i < 64 * 64; ++i) {
    const float v = static_cast<float>((i * 7 + seed) % 13) / 13.0f;
    unsigned char b[4];
    std::memcpy(b, &v, 4);
    for (unsigned char c : b) absl::StrAppend(&hex, absl::Hex(c, absl::kZeroPad2));
  }
  absl::StatusOr<Graph> g = ParseGraph(absl::StrCat(R"(graph @big(%0 "x": f32[batch, 64]) {
  symbol batch min 1 max 0 hint 2
  %1 "w": f32[64, 64] = constant dense ")", hex, R"("
  %2: f32[batch, 64] = aten.mm(%0, %1)
  %3: f32[batch, 64] = aten.relu(%2)
  return %3
})"));
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

TEST(DriverTest, CacheEntriesAndReportsHoldTheWeightsOnce) {
  CompileCache cache(TempDir("driver_cache_weights"));
  DriverOptions o;
  o.backend = CpuBackend();
  o.cache = &cache;
  o.record_artifacts = true;
  absl::StatusOr<CompileResult> first = CompileGraph(BigWeight(1), o);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_FALSE(first->cache_hit);
  // The returned module is whole; the entry on disk is not.
  ASSERT_TRUE(first->module.has_value());
  EXPECT_FALSE(HasConstantReferences(first->module->schedule().graph()));
  absl::StatusOr<std::optional<proto::KernelModule>> entry = cache.Lookup(first->cache_key);
  ASSERT_TRUE(entry.ok() && entry->has_value());
  EXPECT_TRUE(HasConstantReferences((*entry)->schedule().graph()));
  EXPECT_LT((*entry)->ByteSizeLong() + 16000, first->module->ByteSizeLong());

  // Report: the weight's bytes once, in the capture artifact; later artifacts refer to it.
  ASSERT_EQ(first->report.stages_size(), 4);
  EXPECT_FALSE(HasConstantReferences(first->report.stages(0).graph()));
  EXPECT_TRUE(HasConstantReferences(first->report.stages(1).graph()));
  EXPECT_TRUE(HasConstantReferences(first->report.stages(2).schedule().graph()));
  EXPECT_TRUE(
      HasConstantReferences(first->report.stages(3).kernel_module().schedule().graph()));
  EXPECT_LT(first->report.ByteSizeLong(), 2 * 16384);
  ConstantStore held;
  held.AddGraph(first->report.stages(0).graph());
  proto::Graph prims = first->report.stages(1).graph();
  ASSERT_TRUE(ResolveConstantReferences(prims, held).ok());
  EXPECT_EQ(prims.SerializeAsString(), first->prims_graph->SerializeAsString());

  // A hit takes the weight from the graph being compiled, and computes the same.
  absl::StatusOr<CompileResult> hit = CompileGraph(BigWeight(1), o);
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_TRUE(hit->cache_hit);
  std::vector<HostTensor> in = {Input(3)};
  in[0] = HostTensor::Zeros(proto::FLOAT32, {3, 64});
  for (int64_t i = 0; i < in[0].numel(); ++i) in[0].StoreDouble(i, (i % 11) * 0.1 - 0.5);
  absl::StatusOr<std::vector<HostTensor>> want = Interpret(BigWeight(1), in, {.float64 = true});
  absl::StatusOr<std::vector<HostTensor>> got = hit->executable->Run(in);
  ASSERT_TRUE(want.ok() && got.ok()) << want.status() << got.status();
  std::vector<double> a = (*want)[0].ToDoubles(), b = (*got)[0].ToDoubles();
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-4) << i;
  // Other weights are another graph: another key, no hit.
  absl::StatusOr<CompileResult> other = CompileGraph(BigWeight(2), o);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_FALSE(other->cache_hit);
}

TEST(DriverTest, CaptureBackendAdapter) {
  std::shared_ptr<coil::Backend> b = CaptureBackend(ScheduleInterpreterBackend(), {.cache = nullptr});
  EXPECT_EQ(b->name(), "schedule");
  absl::StatusOr<std::unique_ptr<CompiledGraph>> c = b->Compile(Model());
  ASSERT_TRUE(c.ok()) << c.status();
  std::vector<HostTensor> in = {Input(2)};
  absl::StatusOr<std::vector<HostTensor>> got = (*c)->Run(in);
  absl::StatusOr<std::vector<HostTensor>> want = Interpret(Model(), in, {.float64 = true});
  ASSERT_TRUE(got.ok() && want.ok());
  std::vector<double> a = (*want)[0].ToDoubles(), x = (*got)[0].ToDoubles();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], x[i], 1e-5);
}

}  // namespace
}  // namespace coil::driver
