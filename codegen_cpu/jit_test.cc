// CpuJitModule's errors: modules for another backend, target or CPU are refused with a clear
// message (never loaded and run).
#include "codegen_cpu/jit.h"

#include "absl/strings/str_cat.h"
#include "codegen_cpu/codegen_cpu.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "codegen_cpu/internal/target.h"

namespace coil {
namespace {

using ::testing::HasSubstr;

// A schedule with one pointwise kernel, built by hand: out[i] = x[i] * 2.
proto::Schedule Doubler() {
  proto::Schedule s;
  s.mutable_graph()->set_name("doubler");
  for (int id : {1, 2}) {
    proto::Buffer* b = s.add_buffers();
    b->set_id(id);
    b->set_name(id == 1 ? "x" : "out");
    b->set_kind(id == 1 ? proto::Buffer::INPUT : proto::Buffer::OUTPUT);
    b->set_dtype(proto::FLOAT32);
    b->add_shape()->set_kind(proto::SymExpr::CONST);
    b->mutable_shape(0)->set_value(100);
  }
  proto::Kernel* k = s.add_kernels();
  k->set_id(1);
  k->set_name("double");
  k->set_kind(proto::Kernel::POINTWISE);
  proto::SymExpr* r = k->add_ranges();
  r->set_kind(proto::SymExpr::CONST);
  r->set_value(100);
  proto::Loop* l = k->add_loops();
  proto::SymExpr i0;
  i0.set_kind(proto::SymExpr::SYMBOL);
  i0.set_name("_i0");
  proto::Expr* load = l->add_body();
  load->set_id(1);
  load->set_kind(proto::Expr::LOAD);
  load->set_dtype(proto::FLOAT32);
  load->set_buffer(1);
  *load->add_index() = i0;
  proto::Expr* two = l->add_body();
  two->set_id(2);
  two->set_kind(proto::Expr::LITERAL);
  two->set_dtype(proto::FLOAT32);
  two->set_literal(2.0);
  proto::Expr* mul = l->add_body();
  mul->set_id(3);
  mul->set_kind(proto::Expr::APPLY);
  mul->set_dtype(proto::FLOAT32);
  mul->set_op("prims.mul");
  mul->add_args(1);
  mul->add_args(2);
  proto::Expr* store = l->add_body();
  store->set_id(4);
  store->set_kind(proto::Expr::STORE);
  store->set_buffer(2);
  *store->add_index() = i0;
  store->add_args(3);
  return s;
}

TEST(CpuJitTest, RunsAHandWrittenKernel) {
  absl::StatusOr<proto::KernelModule> m = GenerateCpu(Doubler());
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<std::unique_ptr<CpuJitModule>> jit = CpuJitModule::Load(*m);
  ASSERT_TRUE(jit.ok()) << jit.status();
  CoilKernelFn fn = (*jit)->Find(1);
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ((*jit)->Find(7), nullptr);
  std::vector<float> x(100), out(100, -1);
  for (int i = 0; i < 100; ++i) x[i] = i * 0.5f;
  char* buffers[3] = {nullptr, reinterpret_cast<char*>(x.data()), reinterpret_cast<char*>(out.data())};
  CoilKernelError error{};
  fn(10, 60, buffers, nullptr, &error);  // only [10, 60)
  EXPECT_EQ(error.failed, 0);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(out[i], i >= 10 && i < 60 ? i * 1.0f : -1.0f) << i;
}

TEST(CpuJitTest, ForeignCpuFeaturesFailToLoad) {
  absl::StatusOr<proto::KernelModule> m = GenerateCpu(Doubler());
  ASSERT_TRUE(m.ok()) << m.status();
  // A feature no CPU reports (synthetic), so the test does not depend on the host: a module
  // that requires it must not load anywhere.
  const std::string lacking = "coil-test-feature-no-cpu-has";
  m->set_cpu_features(absl::StrCat(m->cpu_features(), ",+", lacking));
  absl::StatusOr<std::unique_ptr<CpuJitModule>> jit = CpuJitModule::Load(*m);
  ASSERT_FALSE(jit.ok());
  EXPECT_EQ(jit.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(jit.status().message(),
              HasSubstr(absl::StrCat("object code for x86_64 with ", lacking)));
  EXPECT_THAT(jit.status().message(), HasSubstr(absl::StrCat("lacks ", lacking)));
}

// The compatibility check against described CPUs (not this host): what one CPU lacks is named,
// a feature unknown to the detection counts as lacking, and the OS/arch must match.
TEST(CpuJitTest, CompatibilityWithDescribedCpus) {
  using codegen_cpu_internal::CheckRunsOn;
  using codegen_cpu_internal::CpuDescription;
  CpuDescription zen4{"x86_64-pc-linux-gnu", "znver4", {}};
  for (const char* f : {"sse4.2", "avx2", "fma", "avx512f", "avx512bw"}) zen4.features[f] = true;
  zen4.features["amx-tile"] = false;
  zen4.features["avx512fp16"] = false;
  EXPECT_TRUE(CheckRunsOn("x86_64-pc-linux-gnu", "+avx2,+avx512f,-amx-tile", zen4).ok());
  absl::Status s = CheckRunsOn("x86_64-pc-linux-gnu", "+avx2,+amx-tile,+avx512fp16", zen4);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("this CPU (znver4) lacks amx-tile, avx512fp16"));
  s = CheckRunsOn("x86_64-pc-linux-gnu", "+avx2,+some-future-isa", zen4);
  EXPECT_THAT(s.message(), HasSubstr("lacks some-future-isa"));
  CpuDescription spr{"x86_64-pc-linux-gnu", "sapphirerapids", zen4.features};
  spr.features["amx-tile"] = spr.features["avx512fp16"] = true;
  EXPECT_TRUE(CheckRunsOn("x86_64-pc-linux-gnu", "+avx2,+amx-tile,+avx512fp16", spr).ok());
  s = CheckRunsOn("aarch64-unknown-linux-gnu", "", spr);
  EXPECT_THAT(s.message(), HasSubstr("object code for aarch64-unknown-linux-gnu, this machine is"));
}

TEST(CpuJitTest, ForeignTargetAndBackendFailToLoad) {
  absl::StatusOr<proto::KernelModule> m = GenerateCpu(Doubler());
  ASSERT_TRUE(m.ok()) << m.status();
  proto::KernelModule arm = *m;
  arm.set_target_triple("aarch64-unknown-linux-gnu");
  absl::StatusOr<std::unique_ptr<CpuJitModule>> jit = CpuJitModule::Load(arm);
  ASSERT_FALSE(jit.ok());
  EXPECT_THAT(jit.status().message(), HasSubstr("object code for aarch64-unknown-linux-gnu"));
  proto::KernelModule cuda = *m;
  cuda.set_backend("cuda");
  jit = CpuJitModule::Load(cuda);
  ASSERT_FALSE(jit.ok());
  EXPECT_THAT(jit.status().message(), HasSubstr("backend 'cuda'"));
  proto::KernelModule corrupt = *m;
  corrupt.set_object_code("not an object");
  jit = CpuJitModule::Load(corrupt);
  ASSERT_FALSE(jit.ok());
  EXPECT_EQ(jit.status().code(), absl::StatusCode::kDataLoss);
}

TEST(CpuJitTest, NamedCpuAndBadCpu) {
  CpuCodegenOptions options;
  options.cpu = "x86-64";
  absl::StatusOr<proto::KernelModule> m = GenerateCpu(Doubler(), options);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->cpu(), "x86-64");
  EXPECT_THAT(m->cpu_features(), ::testing::Not(HasSubstr("avx2")));
  EXPECT_TRUE(CpuJitModule::Load(*m).ok());
  options.cpu = "no-such-cpu";
  m = GenerateCpu(Doubler(), options);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("unknown CPU 'no-such-cpu'"));
}

TEST(CpuJitTest, MalformedScheduleIsAnError) {
  proto::Schedule s = Doubler();
  s.mutable_kernels(0)->mutable_loops(0)->mutable_body(2)->set_op("prims.nope");
  absl::StatusOr<proto::KernelModule> m = GenerateCpu(s);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("kernel 1 'double': loop 0 expr 3 (APPLY)"));
  EXPECT_THAT(m.status().message(), HasSubstr("'prims.nope' is not an elementwise prim"));
}

}  // namespace
}  // namespace coil
