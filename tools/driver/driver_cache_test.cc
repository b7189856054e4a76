// The compile driver's cache with the CPU backend: a miss then a hit (in $TEST_TMPDIR) give the
// same outputs as the float64 reference interpreter, the hit skipping prims/inductor/codegen;
// a changed weight value, option or graph structure misses; a corrupt entry is detected,
// deleted and rebuilt; the program's constants (moved into its module on a hit) stay valid for
// its whole lifetime.
#include "tools/driver/driver.h"

#include <cmath>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/compile_cache.h"
#include "runtime/cpu/kernel_abi.h"
#include "runtime/interpreter.h"
#include "tools/driver/cpu_backend.h"

namespace coil::driver {
namespace {

namespace fs = std::filesystem;

std::string FreshDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/driver_cache_test/" + name;
  fs::remove_all(dir);
  return dir;
}

// Little-endian f32 hex of `n` values starting from `seed`.
std::string F32Hex(int n, float seed) {
  std::string hex;
  for (int i = 0; i < n; ++i) {
    float v = std::sin(seed + 0.7f * i);
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    for (int b = 0; b < 4; ++b) hex += absl::StrFormat("%02x", (bits >> (8 * b)) & 0xff);
  }
  return hex;
}

// A linear layer with constant weights (wide enough that the weights are a real block of
// bytes), relu, softmax and a reduction.
std::string GraphText(const std::string& w_hex, const std::string& op = "aten.relu") {
  return absl::StrCat(R"(graph @mlp(%0 "x": f32[batch, 24]) {
  symbol batch min 1 max 0 hint 4
  %1 "w": f32[16, 24] = constant dense ")", w_hex, R"("
  %2 "b": f32[16] = constant dense ")", F32Hex(16, 0.25f), R"("
  %3: f32[batch, 16] = aten.linear(%0, %1, %2)
  %4: f32[batch, 16] = )", op, R"((%3)
  %5: f32[batch, 16] = aten.softmax(%4) {dim = 1, dtype = none}
  %6: f32[16] = aten.sum(%3) {dim = [0], keepdim = false, dtype = none}
  return %5, %6
}
)");
}

Graph Parse(const std::string& text) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : Graph();
}

HostTensor Input(int64_t batch) {
  std::mt19937 rng(11 + batch);
  std::uniform_real_distribution<double> real(-2.0, 2.0);
  HostTensor x = HostTensor::Zeros(proto::FLOAT32, {batch, 24});
  for (int64_t i = 0; i < x.numel(); ++i) x.StoreDouble(i, real(rng));
  return x;
}

// Runs `program` at two batch sizes against the float64 reference interpreter; returns the
// outputs as doubles.
std::vector<std::vector<double>> RunChecked(Executable& program, const Graph& graph) {
  std::vector<std::vector<double>> all;
  for (int64_t batch : {3, 9}) {
    std::vector<HostTensor> in = {Input(batch)};
    absl::StatusOr<std::vector<HostTensor>> got = program.Run(in);
    InterpreterOptions oracle;
    oracle.float64 = true;
    absl::StatusOr<std::vector<HostTensor>> want = Interpret(graph, in, oracle);
    EXPECT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(want.ok()) << want.status();
    if (!got.ok() || !want.ok()) return all;
    EXPECT_EQ(got->size(), want->size());
    for (size_t o = 0; o < got->size() && o < want->size(); ++o) {
      std::vector<double> a = (*got)[o].ToDoubles(), b = (*want)[o].ToDoubles();
      EXPECT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
        EXPECT_NEAR(a[i], b[i], 1e-4 + 1e-4 * std::fabs(b[i])) << "output " << o << " at " << i;
      }
      all.push_back(a);
    }
  }
  return all;
}

bool HasStage(const CompileResult& r, const std::string& name) {
  for (const proto::StageTiming& s : r.report.timings()) {
    if (s.stage() == name) return true;
  }
  return false;
}

// The CPU backend with `cpu`'s options and the given cache; the schedule options as given.
DriverOptions Options(CompileCache* cache, CpuBackendOptions cpu = {},
                      inductor::ScheduleOptions schedule = {}) {
  DriverOptions o;
  o.backend = CpuBackend(cpu);
  o.cache = cache;
  o.schedule = schedule;
  return o;
}

absl::StatusOr<CompileResult> Compile(const Graph& graph, CompileCache* cache,
                                      CpuBackendOptions cpu = {},
                                      inductor::ScheduleOptions schedule = {}) {
  return CompileGraph(graph.Clone(), Options(cache, cpu, schedule));
}

TEST(DriverCacheTest, HitSkipsStagesAndMatchesTheOracle) {
  CompileCache cache(FreshDir("hit"));
  const Graph graph = Parse(GraphText(F32Hex(16 * 24, 1.0f)));
  absl::StatusOr<CompileResult> cold = Compile(graph, &cache);
  ASSERT_TRUE(cold.ok()) << cold.status();
  EXPECT_FALSE(cold->cache_hit);
  EXPECT_EQ(cold->cache_key.size(), 32u);
  EXPECT_TRUE(HasStage(*cold, "inductor"));
  EXPECT_TRUE(HasStage(*cold, "codegen_cpu"));
  EXPECT_TRUE(fs::exists(cache.EntryPath(cold->cache_key)));
  const std::vector<std::vector<double>> cold_out = RunChecked(*cold->executable, graph);

  absl::StatusOr<CompileResult> warm = Compile(graph, &cache);
  ASSERT_TRUE(warm.ok()) << warm.status();
  EXPECT_TRUE(warm->cache_hit);
  EXPECT_EQ(warm->cache_key, cold->cache_key);
  EXPECT_FALSE(HasStage(*warm, "prims"));
  EXPECT_FALSE(HasStage(*warm, "inductor"));
  EXPECT_FALSE(HasStage(*warm, "codegen_cpu"));
  EXPECT_EQ(RunChecked(*warm->executable, graph), cold_out);  // the same code: bit-identical
  EXPECT_EQ(AsCpuProgram(*warm->executable)->module().object_code(),
            AsCpuProgram(*cold->executable)->module().object_code());
  // A clone with other names and ids is the same computation: a hit.
  absl::StatusOr<CompileResult> clone = Compile(graph.Clone(), &cache);
  ASSERT_TRUE(clone.ok());
  EXPECT_TRUE(clone->cache_hit);
  EXPECT_EQ(cache.corrupt_entries(), 0);
}

TEST(DriverCacheTest, ChangedWeightOptionOrStructureMisses) {
  CompileCache cache(FreshDir("miss"));
  const std::string w = F32Hex(16 * 24, 1.0f);
  const Graph base = Parse(GraphText(w));
  ASSERT_TRUE(Compile(base, &cache).ok());

  // One weight byte (the last one) changed.
  std::string w2 = w;
  w2[w2.size() - 1] = w2[w2.size() - 1] == '0' ? '1' : '0';
  const Graph changed_weight = Parse(GraphText(w2));
  inductor::ScheduleOptions no_folding;
  no_folding.fold_constants = false;
  CpuBackendOptions o2;
  o2.codegen.opt_level = 2;
  CpuBackendOptions no_epilogues;
  no_epilogues.extern_epilogues = std::vector<std::string>{};
  const Graph changed_op = Parse(GraphText(w, "aten.neg"));
  struct Case {
    std::string name;
    const Graph* graph;
    CpuBackendOptions cpu;
    inductor::ScheduleOptions schedule;
  };
  const std::vector<Case> cases = {
      {"weight byte", &changed_weight, {}, {}},
      {"fold_constants", &base, {}, no_folding},
      {"opt_level", &base, o2, {}},
      {"capabilities", &base, no_epilogues, {}},
      {"structure", &changed_op, {}, {}},
  };
  std::set<std::string> keys = {CacheKey(base, Options(&cache))};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(keys.insert(CacheKey(*c.graph, Options(&cache, c.cpu, c.schedule))).second);
    absl::StatusOr<CompileResult> r = Compile(*c.graph, &cache, c.cpu, c.schedule);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_FALSE(r->cache_hit);
    RunChecked(*r->executable, *c.graph);
  }
  // Options that do not change the module share the entry.
  CpuBackendOptions threads;
  threads.runtime.num_threads = 1;
  threads.codegen.compile_threads = 1;
  EXPECT_EQ(CacheKey(base, Options(&cache, threads)), CacheKey(base, Options(&cache)));
  // The kernel calling convention is in the key: a runtime of another convention would split
  // an entry's kernels wrongly (Kernel.parallel_dims).
  EXPECT_NE(CpuBackend({})->CacheIdentity().find(
                absl::StrCat("kernel_abi=", cpu::kKernelAbiVersion, " ")),
            std::string::npos)
      << CpuBackend({})->CacheIdentity();
}

// A graph that writes into an input no output reads (`x.add_(y); return y * 2`) and the same
// graph without the write are different programs: each gets its own entry, and running the
// second after the first leaves x alone (they shared a key: the structural hash skipped the
// write as dead code).
TEST(DriverCacheTest, AWriteIntoAnInputIsPartOfTheKey) {
  CompileCache cache(FreshDir("effects"));
  const Graph writes = Parse(R"(graph @f(%0 "x": f32[4], %1 "y": f32[4]) {
  %2: f32[4] = aten.add_(%0, %1) {alpha = 1.0}
  %3: f32[4] = aten.mul_scalar(%1) {other = 2.0}
  return %3
}
)");
  const Graph pure = Parse(R"(graph @f(%0 "x": f32[4], %1 "y": f32[4]) {
  %3: f32[4] = aten.mul_scalar(%1) {other = 2.0}
  return %3
}
)");
  absl::StatusOr<CompileResult> first = Compile(writes, &cache);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<CompileResult> second = Compile(pure, &cache);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(second->cache_hit);
  EXPECT_NE(second->cache_key, first->cache_key);
  HostTensor x = HostTensor::FromDoubles(proto::FLOAT32, {4}, {1, 2, 3, 4});
  HostTensor y = HostTensor::FromDoubles(proto::FLOAT32, {4}, {10, 20, 30, 40});
  absl::StatusOr<std::vector<HostTensor>> out = second->executable->Run({x, y});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(x.ToDoubles(), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ((*out)[0].ToDoubles(), (std::vector<double>{20, 40, 60, 80}));
  out = first->executable->Run({x, y});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(x.ToDoubles(), (std::vector<double>{11, 22, 33, 44}));
}

TEST(DriverCacheTest, CorruptOrTruncatedEntryIsRebuilt) {
  CompileCache cache(FreshDir("corrupt"));
  const Graph graph = Parse(GraphText(F32Hex(16 * 24, 2.0f)));
  absl::StatusOr<CompileResult> first = Compile(graph, &cache);
  ASSERT_TRUE(first.ok()) << first.status();
  const std::string path = cache.EntryPath(first->cache_key);
  const uintmax_t size = fs::file_size(path);
  int corrupt = 0;
  for (const char* how : {"truncate", "flip"}) {
    SCOPED_TRACE(how);
    if (std::string(how) == "truncate") {
      fs::resize_file(path, size / 2);
    } else {
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(static_cast<std::streamoff>(size - 100));
      f.put('\x5a');
    }
    absl::StatusOr<CompileResult> r = Compile(graph, &cache);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_FALSE(r->cache_hit);
    EXPECT_EQ(cache.corrupt_entries(), ++corrupt);
    RunChecked(*r->executable, graph);
    EXPECT_EQ(fs::file_size(path), size);  // rebuilt and stored again
    absl::StatusOr<CompileResult> again = Compile(graph, &cache);
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(again->cache_hit);
  }
}

// The program uses its module's constant bytes in place: they live as long as the program,
// whatever happens to the graph, the cache entry and the result that carried it (ASan checks
// the accesses).
TEST(DriverCacheTest, ConstantsOutliveEverythingButTheProgram) {
  const std::string dir = FreshDir("lifetime");
  std::unique_ptr<Executable> program;
  std::vector<std::vector<double>> want;
  const std::string text = GraphText(F32Hex(16 * 24, 3.0f));
  {
    CompileCache cache(dir);
    Graph graph = Parse(text);
    ASSERT_TRUE(Compile(graph, &cache).ok());
    absl::StatusOr<CompileResult> hit = Compile(graph, &cache);
    ASSERT_TRUE(hit.ok() && hit->cache_hit);
    want = RunChecked(*hit->executable, graph);
    program = std::move(hit->executable);
  }
  fs::remove_all(dir);
  const Graph oracle_graph = Parse(text);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(RunChecked(*program, oracle_graph), want);
}

TEST(DriverCacheTest, WithoutCacheAndExternalConstantsBypass) {
  const Graph graph = Parse(GraphText(F32Hex(16 * 24, 4.0f)));
  absl::StatusOr<CompileResult> r = Compile(graph, nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->cache_hit);
  EXPECT_TRUE(r->cache_key.empty());
  RunChecked(*r->executable, graph);
  const Graph external = Parse(R"(graph @e(%0: f32[4]) {
  %1: f32[4] = constant external "w.bin" offset 0 length 16
  %2: f32[4] = aten.add(%0, %1)
  return %2
}
)");
  EXPECT_EQ(CacheKey(external, Options(nullptr)), "");
}

// The CPU backend whose modules cannot run here, as a CUDA module on a machine without a driver.
class CannotRunHere : public Backend {
 public:
  std::string name() const override { return inner_->name(); }
  BackendCapabilities capabilities() const override { return inner_->capabilities(); }
  std::string CacheIdentity() const override { return inner_->CacheIdentity(); }
  absl::StatusOr<proto::KernelModule> Generate(proto::Schedule s) override {
    return inner_->Generate(std::move(s));
  }
  absl::StatusOr<std::unique_ptr<Executable>> Load(proto::KernelModule) override {
    return absl::FailedPreconditionError("no CUDA driver (test)");
  }

 private:
  std::shared_ptr<Backend> inner_ = CpuBackend();
};

TEST(DriverCacheTest, HitThatCannotRunHereKeepsTheEntry) {
  CompileCache cache(FreshDir("cannot_run"));
  const Graph graph = Parse(GraphText(F32Hex(16 * 24, 3.0f)));
  for (bool keep : {false, true}) {
    SCOPED_TRACE(keep ? "keep_intermediates" : "weights moved");
    for (int i = 0; i < 2; ++i) {
      DriverOptions o;
      o.backend = std::make_shared<CannotRunHere>();
      o.cache = &cache;
      o.keep_intermediates = keep;
      absl::StatusOr<CompileResult> r = CompileGraph(graph.Clone(), o);
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(r->cache_hit, keep || i == 1) << "the first compile stores, every later one hits";
      EXPECT_EQ(r->executable, nullptr);
      EXPECT_EQ(r->load_error.code(), absl::StatusCode::kFailedPrecondition);
      EXPECT_TRUE(fs::exists(cache.EntryPath(r->cache_key))) << "the entry stays";
      if (r->cache_hit) EXPECT_EQ(r->module.has_value(), keep);
    }
  }
  EXPECT_EQ(cache.corrupt_entries(), 0);
}

}  // namespace
}  // namespace coil::driver
