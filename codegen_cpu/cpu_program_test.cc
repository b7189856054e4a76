// CpuProgram::CompileCached through the on-disk compile cache (in $TEST_TMPDIR): a second
// compile hits and runs with the same results (checked against the Schedule interpreter);
// corrupt entries, modules of another schedule and object code that does not load are rebuilt;
// a disabled cache writes nothing.
#include "codegen_cpu/cpu_program.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "inductor/schedule.h"
#include "ir/parser.h"
#include "prims/decompose.h"
#include "runtime/compile_cache.h"
#include "runtime/schedule_interpreter.h"

namespace coil {
namespace {

namespace fs = std::filesystem;

constexpr char kGraph[] = R"(
graph @mlp(%0 "x": f32[batch, 6], %1 "w": f32[4, 6], %2 "b": f32[4]) {
  symbol batch min 2 max 0 hint 4
  %3: f32[batch, 4] = aten.linear(%0, %1, %2)
  %4: f32[batch, 4] = aten.relu(%3)
  %5: f32[batch, 4] = aten.softmax(%4) {dim = 1, dtype = none}
  %6: f32[4] = aten.sum(%3) {dim = [0], keepdim = false, dtype = none}
  return %5, %6
}
)";

std::string FreshDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/cpu_program_test/" + name;
  fs::remove_all(dir);
  return dir;
}

proto::Schedule BuildSchedule(const char* text) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(prims::Decompose(*g).ok());
  inductor::ScheduleOptions options;
  options.capabilities = CpuCapabilities();
  absl::StatusOr<proto::Schedule> s = inductor::BuildSchedule(g->ToProto(), options);
  EXPECT_TRUE(s.ok()) << s.status();
  return *s;
}

std::vector<HostTensor> Inputs(int64_t batch) {
  std::mt19937 rng(7 + batch);
  std::uniform_real_distribution<double> real(-2.0, 2.0);
  std::vector<HostTensor> out = {HostTensor::Zeros(proto::FLOAT32, {batch, 6}),
                                 HostTensor::Zeros(proto::FLOAT32, {4, 6}),
                                 HostTensor::Zeros(proto::FLOAT32, {4})};
  for (HostTensor& t : out) {
    for (int64_t i = 0; i < t.numel(); ++i) t.StoreDouble(i, real(rng));
  }
  return out;
}

// Runs `p` at two batch sizes; checks against the Schedule interpreter; returns the outputs.
std::vector<std::vector<double>> RunChecked(CpuProgram& p, const proto::Schedule& s) {
  std::vector<std::vector<double>> all;
  for (int64_t batch : {3, 17}) {
    std::vector<HostTensor> in = Inputs(batch);
    absl::StatusOr<std::vector<HostTensor>> got = p.Run(in);
    absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(s, in);
    EXPECT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(want.ok()) << want.status();
    if (!got.ok() || !want.ok()) return all;
    EXPECT_EQ(got->size(), want->size());
    for (size_t o = 0; o < got->size() && o < want->size(); ++o) {
      std::vector<double> a = (*got)[o].ToDoubles(), b = (*want)[o].ToDoubles();
      EXPECT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
        EXPECT_NEAR(a[i], b[i], 1e-5 + 1e-5 * std::fabs(b[i])) << "output " << o << " at " << i;
      }
      all.push_back(a);
    }
  }
  return all;
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  if (!fs::exists(dir)) return names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().string());
  return names;
}

TEST(CpuProgramTest, SecondCompileHitsWithSameResults) {
  const proto::Schedule s = BuildSchedule(kGraph);
  CompileCache cache(FreshDir("hit"));
  absl::StatusOr<std::unique_ptr<CpuProgram>> first = CpuProgram::CompileCached(s, cache);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE((*first)->cache_hit());
  ASSERT_EQ(Entries(cache.dir()).size(), 1u);

  absl::StatusOr<std::unique_ptr<CpuProgram>> second = CpuProgram::CompileCached(s, cache);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE((*second)->cache_hit());
  EXPECT_EQ((*second)->codegen_seconds(), 0.0);  // no code generation on a hit
  EXPECT_EQ((*second)->module().object_code(), (*first)->module().object_code());

  std::vector<std::vector<double>> a = RunChecked(**first, s), b = RunChecked(**second, s);
  EXPECT_EQ(a, b);  // bit for bit: the same object code
  std::printf("miss: codegen %.1f ms + load %.1f ms; hit: load %.1f ms\n",
              (*first)->codegen_seconds() * 1e3, (*first)->load_seconds() * 1e3,
              (*second)->load_seconds() * 1e3);

  // Other codegen options are another entry.
  CpuCodegenOptions o1;
  o1.opt_level = 1;
  absl::StatusOr<std::unique_ptr<CpuProgram>> other = CpuProgram::CompileCached(s, cache, o1);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_FALSE((*other)->cache_hit());
  EXPECT_EQ(Entries(cache.dir()).size(), 2u);
}

TEST(CpuProgramTest, CorruptEntryIsRebuilt) {
  const proto::Schedule s = BuildSchedule(kGraph);
  CompileCache cache(FreshDir("corrupt"));
  ASSERT_TRUE(CpuProgram::CompileCached(s, cache).ok());
  std::vector<std::string> entries = Entries(cache.dir());
  ASSERT_EQ(entries.size(), 1u);
  std::string bytes;
  {
    std::ifstream in(entries[0], std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  for (int variant = 0; variant < 2; ++variant) {
    SCOPED_TRACE(variant == 0 ? "flipped byte" : "truncated");
    std::string bad = bytes;
    if (variant == 0) {
      bad[bad.size() / 2] ^= 0x01;
    } else {
      bad.resize(bad.size() * 2 / 3);
    }
    std::ofstream(entries[0], std::ios::binary | std::ios::trunc) << bad;
    absl::StatusOr<std::unique_ptr<CpuProgram>> p = CpuProgram::CompileCached(s, cache);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_FALSE((*p)->cache_hit());
    RunChecked(**p, s);
    EXPECT_EQ(cache.corrupt_entries(), variant + 1);
    // Rebuilt: the next compile hits again.
    absl::StatusOr<std::unique_ptr<CpuProgram>> again = CpuProgram::CompileCached(s, cache);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE((*again)->cache_hit());
    RunChecked(**again, s);
  }
}

// Well-formed entries that do not load are rebuilt, never run: a module whose schedule has a
// kernel without code, and object code that does not load. (A hit is trusted by its full
// 128-bit key, which covers the schedule's bytes; no second serialization is compared.)
TEST(CpuProgramTest, ForeignOrUnloadableModulesAreRebuilt) {
  const proto::Schedule s = BuildSchedule(kGraph);
  CompileCache cache(FreshDir("foreign"));
  const std::string key = CpuProgram::CacheKeyFor(s);
  absl::StatusOr<std::unique_ptr<CpuProgram>> good = CpuProgram::CompileCached(s, cache);
  ASSERT_TRUE(good.ok()) << good.status();

  proto::KernelModule foreign = (*good)->module();
  foreign.mutable_schedule()->add_kernels()->set_id(999);
  ASSERT_TRUE(cache.Store(key, foreign).ok());
  absl::StatusOr<std::unique_ptr<CpuProgram>> p = CpuProgram::CompileCached(s, cache);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE((*p)->cache_hit());
  RunChecked(**p, s);

  proto::KernelModule broken = (*good)->module();
  broken.set_object_code("not an ELF object");
  ASSERT_TRUE(cache.Store(key, broken).ok());
  p = CpuProgram::CompileCached(s, cache);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE((*p)->cache_hit());
  RunChecked(**p, s);

  p = CpuProgram::CompileCached(s, cache);  // the rebuilt entry is good again
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE((*p)->cache_hit());
}

TEST(CpuProgramTest, DisabledCacheCompilesAndWritesNothing) {
  const proto::Schedule s = BuildSchedule(kGraph);
  CompileCache off("");
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<std::unique_ptr<CpuProgram>> p = CpuProgram::CompileCached(s, off);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_FALSE((*p)->cache_hit());
  }
}

}  // namespace
}  // namespace coil
