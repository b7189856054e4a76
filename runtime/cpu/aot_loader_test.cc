// The AOT loader on hand-built descriptors (what codegen_cpu/aot.h emits, built here in C++
// with a hand-written kernel): a valid package runs like the Schedule interpreter, constants
// included; every malformed or foreign descriptor is refused with a clear error before any
// kernel runs. The real objects are tested in tests/aot/.
#include "runtime/cpu/aot_loader.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/sym_expr.h"
#include "runtime/cpu/aot_cpu_features.h"
#include "runtime/host_tensor.h"
#include "runtime/schedule_interpreter.h"

namespace coil::cpu {
namespace {

// x + c with x: f32[batch, 4] and a constant c = [1, 2, 3, -0.5].
constexpr char kGraph[] = R"(graph @add_const(%0 "x": f32[batch, 4]) {
  symbol batch min 2 max 0 hint 4
  %1 "c": f32[4] = constant dense "0000803f0000004000004040000000bf"
  %2: f32[batch, 4] = aten.add(%0, %1) {alpha = 1}
  return %2
})";

std::atomic<int> kernel_calls{0};

extern "C" void AddConstRows(int64_t b, int64_t e, char* const* bufs, const int64_t*,
                             CoilKernelError*) {
  ++kernel_calls;
  const float* x = reinterpret_cast<const float*>(bufs[1]);
  const float* c = reinterpret_cast<const float*>(bufs[2]);
  float* out = reinterpret_cast<float*>(bufs[3]);
  for (int64_t r = b; r < e; ++r) {
    for (int j = 0; j < 4; ++j) out[r * 4 + j] = x[r * 4 + j] + c[j];
  }
}

void AddBuffer(proto::Schedule& s, int id, proto::Buffer::Kind kind, std::vector<SymExpr> shape,
               int64_t graph_value) {
  proto::Buffer* b = s.add_buffers();
  b->set_id(id);
  b->set_name("buf" + std::to_string(id));
  b->set_kind(kind);
  b->set_dtype(proto::FLOAT32);
  SymExpr bytes(4);
  for (const SymExpr& d : shape) {
    *b->add_shape() = d.ToProto();
    bytes = bytes * d;
  }
  *b->mutable_size_bytes() = bytes.ToProto();
  b->set_graph_value(graph_value);
}

proto::Expr* AddExpr(proto::Loop* l, int id, proto::Expr::Kind kind, int buffer,
                     std::vector<SymExpr> index) {
  proto::Expr* e = l->add_body();
  e->set_id(id);
  e->set_kind(kind);
  e->set_dtype(proto::FLOAT32);
  e->set_buffer(buffer);
  for (const SymExpr& i : index) *e->add_index() = i.ToProto();
  return e;
}

proto::Schedule AddConstSchedule() {
  absl::StatusOr<Graph> g = ParseGraph(kGraph);
  EXPECT_TRUE(g.ok()) << g.status();
  proto::Schedule s;
  *s.mutable_graph() = g->ToProto();
  const SymExpr batch = SymExpr::Symbol("batch");
  const SymExpr i0 = SymExpr::Symbol("_i0"), i1 = SymExpr::Symbol("_i1");
  AddBuffer(s, 1, proto::Buffer::INPUT, {batch, 4}, 0);
  AddBuffer(s, 2, proto::Buffer::CONSTANT, {SymExpr(4)}, 1);
  AddBuffer(s, 3, proto::Buffer::OUTPUT, {batch, 4}, 2);
  *s.mutable_memory_plan()->mutable_arena_bytes() = SymExpr(0).ToProto();
  s.add_outputs(3);
  proto::Kernel* k = s.add_kernels();
  k->set_id(5);
  k->set_name("add_const");
  k->set_kind(proto::Kernel::POINTWISE);
  *k->add_ranges() = batch.ToProto();
  *k->add_ranges() = SymExpr(4).ToProto();
  proto::Loop* l = k->add_loops();
  AddExpr(l, 1, proto::Expr::LOAD, 1, {i0, i1});
  AddExpr(l, 2, proto::Expr::LOAD, 2, {i1});
  proto::Expr* add = AddExpr(l, 3, proto::Expr::APPLY, 0, {});
  add->set_op("prims.add");
  add->add_args(1);
  add->add_args(2);
  AddExpr(l, 4, proto::Expr::STORE, 3, {i0, i1})->add_args(3);
  return s;
}

// A descriptor over `schedule_bytes` and `kernels`, compiled "for this machine" (features
// this CPU surely has) unless the test changes it.
struct Fixture {
  std::string schedule_bytes;
  std::vector<CoilAotKernel> kernels;
  CoilAotPackage package;

  Fixture() {
    schedule_bytes = AddConstSchedule().SerializeAsString();
    kernels = {{5, &AddConstRows, "coil_k5_add_const"}};
    package = CoilAotPackage{kAotMagic,
                             kAotAbiVersion,
                             "add_const",
                             HostArch() == "x86_64" ? "x86_64-pc-linux-gnu" : "unknown",
                             "x86-64",
                             "+64bit,+cx8,+sse,+sse2",
                             "LLVM 16.0.6",
                             "opt_level=3 cpu=x86-64",
                             reinterpret_cast<const unsigned char*>(schedule_bytes.data()),
                             schedule_bytes.size(),
                             kernels.data(),
                             kernels.size()};
  }
};

HostTensor Input(int64_t batch) {
  HostTensor t = HostTensor::Zeros(proto::FLOAT32, {batch, 4});
  for (int64_t i = 0; i < t.numel(); ++i) t.StoreDouble(i, 0.25 * i - 3);
  return t;
}

// Create fails with `code` and a message containing every `parts`, and no kernel ran.
void ExpectRefused(const CoilAotPackage& p, absl::StatusCode code,
                   std::vector<std::string> parts) {
  const int calls = kernel_calls.load();
  absl::StatusOr<std::unique_ptr<CpuExecutable>> exe = CreateAotExecutable(p);
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), code) << exe.status();
  for (const std::string& part : parts) {
    EXPECT_TRUE(absl::StrContains(exe.status().message(), part))
        << exe.status() << "\nmissing: " << part;
  }
  EXPECT_EQ(kernel_calls.load(), calls);
}

TEST(AotLoaderTest, ValidPackageRunsLikeTheScheduleInterpreter) {
  if (HostArch() != "x86_64") GTEST_SKIP() << "the fixture's features are x86-64's";
  Fixture f;
  ASSERT_TRUE(CheckAotPackage(f.package).ok()) << CheckAotPackage(f.package);
  absl::StatusOr<proto::Schedule> embedded = AotPackageSchedule(f.package);
  ASSERT_TRUE(embedded.ok()) << embedded.status();
  CpuExecutableOptions options;
  options.num_threads = 2;
  absl::StatusOr<std::unique_ptr<CpuExecutable>> exe = CreateAotExecutable(f.package, options);
  ASSERT_TRUE(exe.ok()) << exe.status();
  for (int64_t batch : {2, 7}) {
    std::vector<HostTensor> in = {Input(batch)};
    absl::StatusOr<std::vector<HostTensor>> got = (*exe)->Run(in);
    absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(*embedded, in);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_EQ(got->size(), 1u);
    EXPECT_EQ((*got)[0].shape(), (std::vector<int64_t>{batch, 4}));
    EXPECT_EQ((*got)[0].ToDoubles(), (*want)[0].ToDoubles());
    EXPECT_EQ((*got)[0].LoadDouble(4 + 3), Input(batch).LoadDouble(4 + 3) - 0.5);
  }
}

TEST(AotLoaderTest, RefusesBadMagicAndOtherVersions) {
  Fixture f;
  f.package.magic ^= 1;
  ExpectRefused(f.package, absl::StatusCode::kDataLoss, {"not a coil AOT package descriptor"});
  Fixture g;
  g.package.abi_version = kAotAbiVersion + 1;
  ExpectRefused(g.package, absl::StatusCode::kFailedPrecondition,
                {"AOT object 'add_const'", absl::StrCat("descriptor version ", kAotAbiVersion + 1),
                 absl::StrCat("reads version ", kAotAbiVersion),
                 "regenerate"});
}

TEST(AotLoaderTest, RefusesNullFields) {
  Fixture f;
  f.package.cpu_features = nullptr;
  ExpectRefused(f.package, absl::StatusCode::kDataLoss, {"'cpu_features' is null"});
  Fixture g;
  g.package.schedule_size = 0;
  ExpectRefused(g.package, absl::StatusCode::kDataLoss, {"no embedded schedule"});
}

TEST(AotLoaderTest, RefusesAnotherArchitecture) {
  Fixture f;
  f.package.target_triple = "riscv64-unknown-linux-gnu";
  ExpectRefused(f.package, absl::StatusCode::kFailedPrecondition,
                {"AOT object 'add_const' was compiled for riscv64-unknown-linux-gnu",
                 "this machine is"});
}

TEST(AotLoaderTest, RefusesAFeatureThisCpuLacks) {
  if (HostArch() != "x86_64") GTEST_SKIP() << "x86 feature names";
  // No x86 CPU has both AMD's XOP (Bulldozer family) and AVX512-ER (Xeon Phi): whichever this
  // one lacks, on any host.
  ASSERT_TRUE(HostCpuFeatures().count("xop") && HostCpuFeatures().count("avx512er"));
  const std::string lacking = HostCpuFeatures().at("xop") ? "avx512er" : "xop";
  Fixture f;
  const std::string features = "+avx2,+" + lacking + ",+sse2";
  f.package.cpu = "future-cpu";
  f.package.cpu_features = features.c_str();
  const CpuFeatureCheck check = CheckCpuFeatures(features);
  ASSERT_TRUE(std::find(check.missing.begin(), check.missing.end(), lacking) !=
              check.missing.end());
  ExpectRefused(f.package, absl::StatusCode::kFailedPrecondition,
                {"AOT object 'add_const' was compiled for CPU 'future-cpu' and needs", lacking,
                 "this CPU (" + HostCpuBrand() + ") lacks"});
  EXPECT_EQ(CheckAotPackage(f.package).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(AotLoaderTest, RefusesFeaturesItCannotDetect) {
  if (HostArch() != "x86_64") GTEST_SKIP() << "x86 feature names";
  Fixture f;
  f.package.cpu_features = "+sse2,+frobnicate";
  ExpectRefused(f.package, absl::StatusCode::kFailedPrecondition,
                {"needs frobnicate, which this runtime cannot detect"});
}

TEST(AotLoaderTest, RefusesCorruptSchedules) {
  if (HostArch() != "x86_64") GTEST_SKIP() << "the fixture's features are x86-64's";
  Fixture f;
  f.schedule_bytes = std::string(64, '\xff');
  f.package.schedule = reinterpret_cast<const unsigned char*>(f.schedule_bytes.data());
  f.package.schedule_size = f.schedule_bytes.size();
  ExpectRefused(f.package, absl::StatusCode::kDataLoss,
                {"embedded schedule (64 bytes) does not parse"});
  EXPECT_EQ(AotPackageSchedule(f.package).status().code(), absl::StatusCode::kDataLoss);
}

TEST(AotLoaderTest, RefusesBadKernelTables) {
  if (HostArch() != "x86_64") GTEST_SKIP() << "the fixture's features are x86-64's";
  Fixture f;
  f.kernels[0].fn = nullptr;
  f.package.kernels = f.kernels.data();
  ExpectRefused(f.package, absl::StatusCode::kDataLoss,
                {"kernel table entry 0 (coil_k5_add_const) has no function"});

  Fixture g;
  g.kernels.push_back(g.kernels[0]);
  g.package.kernels = g.kernels.data();
  g.package.num_kernels = g.kernels.size();
  ExpectRefused(g.package, absl::StatusCode::kDataLoss, {"repeated kernel id 5"});

  // No function for the schedule's kernel: the executable's own check, naming the package.
  Fixture h;
  h.package.num_kernels = 0;
  absl::StatusOr<std::unique_ptr<CpuExecutable>> exe = CreateAotExecutable(h.package);
  ASSERT_FALSE(exe.ok());
  EXPECT_TRUE(absl::StartsWith(exe.status().message(), "AOT object 'add_const': "))
      << exe.status();
  EXPECT_TRUE(absl::StrContains(exe.status().message(), "kernel 5")) << exe.status();
}

}  // namespace
}  // namespace coil::cpu
