// CpuExecutable against the Schedule interpreter, on hand-built schedules whose kernels are
// hand-written C++ functions with the kernel ABI (runtime/cpu/kernel_abi.h): a pointwise chain
// over a symbolic batch (arena reuse and growth, parallel split), a reduction, an mm extern
// with an epilogue and a constant, a store into an input (contiguous or not), and the errors;
// a convolution with constant weights over changing batch sizes; small kernels run inline.
#include "runtime/cpu/executable.h"

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <utility>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "inductor/schedule.h"
#include "ir/parser.h"
#include "runtime/cpu/internal/transposed_operand.h"
#include "runtime/interpreter.h"
#include "runtime/schedule_interpreter.h"
#include "runtime/testing/test_kit.h"
#include "tools/driver/driver.h"
#include "tools/driver/schedule_backend.h"

namespace coil::cpu {
namespace {

using test_kit::ExpectClose;

// tol 0: exactly equal (NaN never matches); else |want - got| <= tol * (1 + |want|).
test_kit::Tolerance Tol(double tol) {
  if (tol == 0) return {.nan_matches_nan = false, .equal_values_match = true};
  return {.abs = tol, .rel = tol, .nan_matches_nan = false};
}

// ---- Building schedules by hand.
SymExpr Sy(const char* name) { return SymExpr::Symbol(name); }
SymExpr I(int k) { return SymExpr::Symbol("_i" + std::to_string(k)); }
SymExpr R(int k) { return SymExpr::Symbol("_r" + std::to_string(k)); }

void AddBuffer(proto::Schedule& s, int id, proto::Buffer::Kind kind, std::vector<SymExpr> shape,
               int64_t graph_value = 0, SymExpr offset = SymExpr(0)) {
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
  if (kind == proto::Buffer::INTERMEDIATE) *b->mutable_arena_offset() = offset.ToProto();
}

proto::Expr* Add(proto::Loop* l, int id, proto::Expr::Kind kind) {
  proto::Expr* e = l->add_body();
  e->set_id(id);
  e->set_kind(kind);
  e->set_dtype(proto::FLOAT32);
  return e;
}
void Load(proto::Loop* l, int id, int buffer, std::vector<SymExpr> index) {
  proto::Expr* e = Add(l, id, proto::Expr::LOAD);
  e->set_buffer(buffer);
  for (const SymExpr& i : index) *e->add_index() = i.ToProto();
}
void Store(proto::Loop* l, int id, int buffer, std::vector<SymExpr> index, int arg) {
  proto::Expr* e = Add(l, id, proto::Expr::STORE);
  e->set_buffer(buffer);
  for (const SymExpr& i : index) *e->add_index() = i.ToProto();
  e->add_args(arg);
}
void Apply(proto::Loop* l, int id, const char* op, std::vector<int> args) {
  proto::Expr* e = Add(l, id, proto::Expr::APPLY);
  e->set_op(op);
  for (int a : args) e->add_args(a);
}
proto::Kernel* AddKernel(proto::Schedule& s, int id, proto::Kernel::Kind kind,
                         std::vector<SymExpr> ranges) {
  proto::Kernel* k = s.add_kernels();
  k->set_id(id);
  k->set_name("k" + std::to_string(id));
  k->set_kind(kind);
  for (const SymExpr& r : ranges) *k->add_ranges() = r.ToProto();
  return k;
}

proto::Schedule FromGraph(const std::string& text) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  proto::Schedule s;
  *s.mutable_graph() = g->ToProto();
  return s;
}

HostTensor Random(std::vector<int64_t> shape, int seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-2, 2);
  HostTensor t = HostTensor::Zeros(proto::FLOAT32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.StoreDouble(i, u(rng));
  return t;
}

std::unique_ptr<CpuExecutable> MustCreate(const proto::Schedule& s, KernelTable t, int threads) {
  CpuExecutableOptions options;
  options.num_threads = threads;
  absl::StatusOr<std::unique_ptr<CpuExecutable>> exe = CpuExecutable::Create(s, t, options);
  EXPECT_TRUE(exe.ok()) << exe.status();
  return exe.ok() ? *std::move(exe) : nullptr;
}

// ---- Hand-written kernels (ABI: rows [b, e) of the parallel prefix).
std::atomic<int64_t> seen_batch{-1};

extern "C" void AddRows(int64_t b, int64_t e, char* const* bufs, const int64_t* syms,
                        CoilKernelError*) {
  seen_batch = syms[0];
  const float* x = reinterpret_cast<const float*>(bufs[1]);
  const float* y = reinterpret_cast<const float*>(bufs[2]);
  float* t = reinterpret_cast<float*>(bufs[3]);
  for (int64_t r = b; r < e; ++r) {
    for (int j = 0; j < 4; ++j) t[r * 4 + j] = x[r * 4 + j] + y[r * 4 + j];
  }
}

extern "C" void SquareRows(int64_t b, int64_t e, char* const* bufs, const int64_t*,
                        CoilKernelError*) {
  const float* t = reinterpret_cast<const float*>(bufs[3]);
  float* out = reinterpret_cast<float*>(bufs[4]);
  for (int64_t r = b; r < e; ++r) {
    for (int j = 0; j < 4; ++j) out[r * 4 + j] = t[r * 4 + j] * t[r * 4 + j];
  }
}

constexpr char kTwoInputs[] = R"(graph @g(%0 "x": f32[batch, 4], %1 "y": f32[batch, 4]) {
  symbol batch min 1 max 0 hint 4
  %2: f32[batch, 4] = aten.add(%0, %1) {alpha = 1}
  return %2
})";

// x + y into an arena buffer, then its square into the output.
proto::Schedule PointwiseChain() {
  proto::Schedule s = FromGraph(kTwoInputs);
  SymExpr batch = Sy("batch");
  AddBuffer(s, 1, proto::Buffer::INPUT, {batch, 4}, 0);
  AddBuffer(s, 2, proto::Buffer::INPUT, {batch, 4}, 1);
  // The arena has room in front of the intermediate: its offset is symbolic too.
  AddBuffer(s, 3, proto::Buffer::INTERMEDIATE, {batch, 4}, 0, batch * 8);
  AddBuffer(s, 4, proto::Buffer::OUTPUT, {batch, 4});
  *s.mutable_memory_plan()->mutable_arena_bytes() = (batch * 24).ToProto();
  s.add_outputs(4);
  proto::Loop* l = AddKernel(s, 1, proto::Kernel::POINTWISE, {batch, 4})->add_loops();
  Load(l, 1, 1, {I(0), I(1)});
  Load(l, 2, 2, {I(0), I(1)});
  Apply(l, 3, "prims.add", {1, 2});
  Store(l, 4, 3, {I(0), I(1)}, 3);
  l = AddKernel(s, 2, proto::Kernel::POINTWISE, {batch, 4})->add_loops();
  Load(l, 1, 3, {I(0), I(1)});
  Apply(l, 2, "prims.mul", {1, 1});
  Store(l, 3, 4, {I(0), I(1)}, 2);
  return s;
}

TEST(CpuExecutableTest, PointwiseChainOverSymbolicBatches) {
  proto::Schedule s = PointwiseChain();
  for (int threads : {1, 2, 4}) {
    std::unique_ptr<CpuExecutable> exe =
        MustCreate(s, {{1, &AddRows}, {2, &SquareRows}}, threads);
    ASSERT_NE(exe, nullptr);
    EXPECT_EQ(exe->num_threads(), threads);
    // Small, large (the arena grows; rows split across threads), small again (reused).
    for (int64_t batch : {3, 20000, 2, 20000, 1}) {
      std::vector<HostTensor> in = {Random({batch, 4}, 1), Random({batch, 4}, 2)};
      absl::StatusOr<std::vector<HostTensor>> got = exe->Run(in);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(seen_batch.load(), batch);
      absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(s, in);
      ASSERT_TRUE(want.ok()) << want.status();
      ASSERT_EQ(got->size(), 1u);
      ExpectClose((*want)[0], (*got)[0], Tol(0), "batch " + std::to_string(batch));
    }
  }
}

// AddRows that reports, as generated code does (kernel_abi.h), every row whose x[r, 0] is
// below -100: value r, bound 10000 + r (so a torn record would show), first report wins.
std::atomic<int> square_calls{0};
extern "C" void ReportingAddRows(int64_t b, int64_t e, char* const* bufs, const int64_t* syms,
                                 CoilKernelError* error) {
  AddRows(b, e, bufs, syms, error);
  const float* x = reinterpret_cast<const float*>(bufs[1]);
  for (int64_t r = b; r < e; ++r) {
    if (x[r * 4] >= -100) continue;
    int64_t zero = 0;
    if (__atomic_compare_exchange_n(&error->failed, &zero, 1, false, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST)) {
      *error = CoilKernelError{1, COIL_KERNEL_INDEX_OUT_OF_BOUNDS, r, 10000 + r, 0, "row"};
    }
  }
}
extern "C" void CountedSquareRows(int64_t b, int64_t e, char* const* bufs, const int64_t* syms,
                                  CoilKernelError* error) {
  ++square_calls;
  SquareRows(b, e, bufs, syms, error);
}

TEST(CpuExecutableTest, KernelErrorsStopTheRunAndTheFirstReportWins) {
  std::unique_ptr<CpuExecutable> exe =
      MustCreate(PointwiseChain(), {{1, &ReportingAddRows}, {2, &CountedSquareRows}}, 4);
  ASSERT_NE(exe, nullptr);
  for (int attempt = 0; attempt < 3; ++attempt) {
    HostTensor x = Random({20000, 4}, 1);
    for (int64_t bad : {7, 9000, 19999}) x.StoreDouble(bad * 4, -1000);  // rows in 3 slices
    square_calls = 0;
    absl::StatusOr<std::vector<HostTensor>> got = exe->Run({x, Random({20000, 4}, 2)});
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kOutOfRange);
    EXPECT_EQ(square_calls.load(), 0) << "the kernel after the failed one ran";
    const std::string m(got.status().message());
    bool one_of_them = false;
    for (int64_t bad : {7, 9000, 19999}) {
      one_of_them = one_of_them ||
                    m == absl::StrCat("kernel 1 'k1': index ", bad,
                                      " is out of bounds for dimension 0 with size ", 10000 + bad,
                                      " (row)");
    }
    EXPECT_TRUE(one_of_them) << m;
    // The executable is not left in a bad state: a good input runs normally.
    std::vector<HostTensor> in = {Random({20000, 4}, 3), Random({20000, 4}, 4)};
    absl::StatusOr<std::vector<HostTensor>> good = exe->Run(in);
    ASSERT_TRUE(good.ok()) << good.status();
    absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(PointwiseChain(), in);
    ASSERT_TRUE(want.ok()) << want.status();
    ExpectClose((*want)[0], (*good)[0], Tol(0), "after an error");
  }
}

TEST(CpuExecutableTest, OutputsAreFreshAndAdopted) {
  std::unique_ptr<CpuExecutable> exe =
      MustCreate(PointwiseChain(), {{1, &AddRows}, {2, &SquareRows}}, 2);
  std::vector<HostTensor> in = {Random({5, 4}, 1), Random({5, 4}, 2)};
  absl::StatusOr<std::vector<HostTensor>> a = exe->Run(in);
  absl::StatusOr<std::vector<HostTensor>> b = exe->Run(in);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE((*a)[0].RawData(), (*b)[0].RawData());
  ExpectClose((*a)[0], (*b)[0], Tol(0), "second run");
}

extern "C" void SumRows(int64_t b, int64_t e, char* const* bufs, const int64_t*,
                        CoilKernelError*) {
  const float* x = reinterpret_cast<const float*>(bufs[1]);
  float* out = reinterpret_cast<float*>(bufs[2]);
  for (int64_t r = b; r < e; ++r) {
    double acc = 0;
    for (int j = 0; j < 8; ++j) acc += x[r * 8 + j];
    out[r] = static_cast<float>(acc);
  }
}

TEST(CpuExecutableTest, Reduction) {
  proto::Schedule s = FromGraph(R"(graph @g(%0 "x": f32[batch, 8]) {
  symbol batch min 1 max 0 hint 4
  %1: f32[batch] = aten.sum(%0) {dim = [1], keepdim = false, dtype = none}
  return %1
})");
  SymExpr batch = Sy("batch");
  AddBuffer(s, 1, proto::Buffer::INPUT, {batch, 8}, 0);
  AddBuffer(s, 2, proto::Buffer::OUTPUT, {batch});
  *s.mutable_memory_plan()->mutable_arena_bytes() = SymExpr(0).ToProto();
  s.add_outputs(2);
  proto::Kernel* k = AddKernel(s, 7, proto::Kernel::REDUCTION, {batch});
  proto::Loop* l0 = k->add_loops();
  *l0->add_ranges() = SymExpr(8).ToProto();
  Load(l0, 1, 1, {I(0), R(0)});
  proto::Expr* red = Add(l0, 2, proto::Expr::REDUCE);
  red->set_op("sum");
  red->add_args(1);
  Store(k->add_loops(), 3, 2, {I(0)}, 2);
  std::unique_ptr<CpuExecutable> exe = MustCreate(s, {{7, &SumRows}}, 2);
  for (int64_t batch : {1, 9, 5000}) {
    std::vector<HostTensor> in = {Random({batch, 8}, 3)};
    absl::StatusOr<std::vector<HostTensor>> got = exe->Run(in);
    ASSERT_TRUE(got.ok()) << got.status();
    absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(s, in);
    ASSERT_TRUE(want.ok()) << want.status();
    ExpectClose((*want)[0], (*got)[0], Tol(1e-6), "sum");
  }
}

extern "C" void AbsEpilogue(int64_t b, int64_t e, char* const* bufs, const int64_t*,
                        CoilKernelError*) {
  const float* m = reinterpret_cast<const float*>(bufs[3]);
  float* out = reinterpret_cast<float*>(bufs[4]);
  for (int64_t r = b; r < e; ++r) {
    for (int j = 0; j < 3; ++j) out[r * 3 + j] = std::fabs(m[r * 3 + j]);
  }
}

// A dense constant's text in the IR (little-endian bytes as hex, as ir/printer writes them).
std::string HexFloats(const std::vector<float>& v) {
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
}

// y = |x @ w| with a constant w: an aten.mm EXTERN whose epilogue is the abs.
proto::Schedule MmAbsSchedule() {
  std::vector<float> w = {0.5f, -1, 2, 1.5f, 0.25f, -0.75f, 3, -2, 1, -0.5f, 0.125f, 4};
  proto::Schedule s = FromGraph(R"(graph @g(%0 "x": f32[batch, 4]) {
  symbol batch min 1 max 0 hint 4
  %1 "w": f32[4, 3] = constant dense ")" + HexFloats(w) + R"("
  %2: f32[batch, 3] = aten.mm(%0, %1)
  %3: f32[batch, 3] = aten.abs(%2)
  return %3
})");
  SymExpr batch = Sy("batch");
  AddBuffer(s, 1, proto::Buffer::INPUT, {batch, 4}, 0);
  AddBuffer(s, 2, proto::Buffer::CONSTANT, {SymExpr(4), SymExpr(3)}, 1);
  AddBuffer(s, 3, proto::Buffer::INTERMEDIATE, {batch, 3}, 0, SymExpr(0));
  AddBuffer(s, 4, proto::Buffer::OUTPUT, {batch, 3});
  *s.mutable_memory_plan()->mutable_arena_bytes() = (batch * 12).ToProto();
  s.add_outputs(4);
  proto::Kernel* k = AddKernel(s, 1, proto::Kernel::EXTERN, {batch, 3});
  k->set_extern_op("aten.mm");
  k->add_extern_inputs(1);
  k->add_extern_inputs(2);
  k->set_extern_output(3);
  proto::Loop* l = k->add_loops();
  Load(l, 1, 3, {I(0), I(1)});
  Apply(l, 2, "prims.abs", {1});
  Store(l, 3, 4, {I(0), I(1)}, 2);
  return s;
}

TEST(CpuExecutableTest, MmExternWithEpilogueAndConstant) {
  proto::Schedule s = MmAbsSchedule();
  std::unique_ptr<CpuExecutable> exe = MustCreate(s, {{1, &AbsEpilogue}}, 2);
  for (int64_t batch : {1, 6, 3000}) {
    std::vector<HostTensor> in = {Random({batch, 4}, 4)};
    absl::StatusOr<std::vector<HostTensor>> got = exe->Run(in);
    ASSERT_TRUE(got.ok()) << got.status();
    absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(s, in);
    ASSERT_TRUE(want.ok()) << want.status();
    ExpectClose((*want)[0], (*got)[0], Tol(1e-5), "mm + abs");
  }
}

TEST(CpuExecutableTest, ProfilesEachKernelWhenAsked) {
  proto::Schedule s = MmAbsSchedule();
  s.mutable_kernels(0)->set_name("k1_mm");
  std::unique_ptr<CpuExecutable> exe = MustCreate(s, {{1, &AbsEpilogue}}, 2);
  std::vector<HostTensor> in = {Random({64, 4}, 4)};
  ASSERT_TRUE(exe->Run(in).ok());  // not counted: profiling is off
  exe->SetProfiling(true);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(exe->Run(in).ok());
  std::vector<CpuExecutable::KernelTime> p = exe->Profile();
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].kernel, "k1_mm");
  EXPECT_EQ(p[0].kind, "extern aten.mm");
  EXPECT_EQ(p[0].calls, 3);
  EXPECT_GT(p[0].total_ms, 0.0);
  exe->SetProfiling(true);  // starts again from zero
  EXPECT_EQ(exe->Profile()[0].calls, 0);
  exe->SetProfiling(false);
  ASSERT_TRUE(exe->Run(in).ok());
  EXPECT_EQ(exe->Profile()[0].calls, 0);
}

// out = x; x = x * x (a prims.copy_to into the input).
extern "C" void SquareInPlace(int64_t b, int64_t e, char* const* bufs, const int64_t*,
                        CoilKernelError*) {
  float* x = reinterpret_cast<float*>(bufs[1]);
  float* out = reinterpret_cast<float*>(bufs[2]);
  for (int64_t r = b; r < e; ++r) {
    for (int j = 0; j < 4; ++j) {
      out[r * 4 + j] = x[r * 4 + j];
      x[r * 4 + j] = x[r * 4 + j] * x[r * 4 + j];
    }
  }
}

TEST(CpuExecutableTest, StoreIntoInputWritesThrough) {
  proto::Schedule s = FromGraph(R"(graph @g(%0 "x": f32[batch, 4]) {
  symbol batch min 1 max 0 hint 4
  %1: f32[batch, 4] = aten.abs(%0)
  return %1
})");
  SymExpr batch = Sy("batch");
  AddBuffer(s, 1, proto::Buffer::INPUT, {batch, 4}, 0);
  AddBuffer(s, 2, proto::Buffer::OUTPUT, {batch, 4});
  *s.mutable_memory_plan()->mutable_arena_bytes() = SymExpr(0).ToProto();
  s.add_outputs(2);
  s.add_outputs(1);  // the input itself is returned too
  proto::Loop* l = AddKernel(s, 1, proto::Kernel::POINTWISE, {batch, 4})->add_loops();
  Load(l, 1, 1, {I(0), I(1)});
  Apply(l, 2, "prims.mul", {1, 1});
  Store(l, 3, 2, {I(0), I(1)}, 1);
  Store(l, 4, 1, {I(0), I(1)}, 2);
  std::unique_ptr<CpuExecutable> exe = MustCreate(s, {{1, &SquareInPlace}}, 2);
  for (bool contiguous : {true, false}) {
    const int64_t batch = 7;
    HostTensor base = Random({4, batch}, 5);
    // The non-contiguous case: a transposed view of a [4, batch] tensor.
    HostTensor x = contiguous ? Random({batch, 4}, 6) : base.View({batch, 4}, {1, batch}, 0);
    HostTensor x_interp = x.Contiguous().To(proto::FLOAT32);
    const std::vector<double> before = x.ToDoubles();
    absl::StatusOr<std::vector<HostTensor>> got = exe->Run({x});
    ASSERT_TRUE(got.ok()) << got.status();
    absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(s, {x_interp});
    ASSERT_TRUE(want.ok()) << want.status();
    ExpectClose((*want)[0], (*got)[0], Tol(0), "old values");
    ExpectClose(x_interp, x, Tol(0), "written input");
    EXPECT_EQ((*got)[1].RawData(), x.RawData()) << "the caller's tensor is returned";
    std::vector<double> after = x.ToDoubles();
    for (size_t i = 0; i < after.size(); ++i) {
      ASSERT_EQ(after[i], static_cast<float>(before[i] * before[i]));
    }
    if (!contiguous) {
      EXPECT_EQ(base.GetDouble({1, 2}), x.GetDouble({2, 1})) << "written through the view";
    }
  }
}

absl::Status CreateStatus(const proto::Schedule& s, KernelTable t) {
  return CpuExecutable::Create(s, std::move(t)).status();
}

TEST(CpuExecutableTest, CreateErrors) {
  proto::Schedule s = PointwiseChain();
  absl::Status st = CreateStatus(s, {{1, &AddRows}});
  EXPECT_EQ(st.message(), "kernel 2 'k2': no function in the kernel table") << st;
  st = CreateStatus(s, {{1, &AddRows}, {2, &SquareRows}, {9, &SquareRows}});
  EXPECT_EQ(st.message(),
            "the kernel table has a function for kernel 9, which the schedule does not have");
  proto::Schedule bad = s;
  bad.mutable_kernels(1)->mutable_loops(0)->mutable_body(0)->set_buffer(42);
  st = CreateStatus(bad, {{1, &AddRows}, {2, &SquareRows}});
  EXPECT_EQ(st.message(), "kernel 2 'k2': expression 1: unknown buffer 42") << st;
  bad = s;
  bad.mutable_buffers(3)->set_id(2);
  st = CreateStatus(bad, {{1, &AddRows}, {2, &SquareRows}});
  EXPECT_EQ(st.message(), "buffer 2 ('buf4'): ids must be >= 1 and unique") << st;
  bad = s;
  bad.clear_memory_plan();
  st = CreateStatus(bad, {{1, &AddRows}, {2, &SquareRows}});
  EXPECT_EQ(st.message(), "the schedule has intermediate buffers but no memory plan") << st;
  bad = s;
  bad.mutable_kernels(0)->set_kind(proto::Kernel::EXTERN);
  bad.mutable_kernels(0)->set_extern_op("aten.no_such_op");
  bad.mutable_kernels(0)->add_extern_inputs(1);
  bad.mutable_kernels(0)->set_extern_output(3);
  st = CreateStatus(bad, {{1, &AddRows}, {2, &SquareRows}});
  EXPECT_EQ(st.message(), "kernel 1 'k1': unknown extern op 'aten.no_such_op'") << st;
  bad = s;
  bad.mutable_kernels(1)->set_parallel_dims(3);  // rank 2
  st = CreateStatus(bad, {{1, &AddRows}, {2, &SquareRows}});
  EXPECT_EQ(st.message(), "kernel 2 'k2': parallel_dims 3 is not between 0 and the rank 2") << st;
  bad.mutable_kernels(1)->set_parallel_dims(-1);
  st = CreateStatus(bad, {{1, &AddRows}, {2, &SquareRows}});
  EXPECT_EQ(st.message(), "kernel 2 'k2': parallel_dims -1 is not between 0 and the rank 2") << st;
  bad = s;
  bad.mutable_buffers(0)->set_graph_value(77);
  st = CreateStatus(bad, {{1, &AddRows}, {2, &SquareRows}});
  EXPECT_EQ(st.message(), "buffer 1 ('buf1'): graph value %77 is not a graph input") << st;
}

TEST(CpuExecutableTest, InputErrorsMatchTheInterpreter) {
  proto::Schedule s = PointwiseChain();
  std::unique_ptr<CpuExecutable> exe = MustCreate(s, {{1, &AddRows}, {2, &SquareRows}}, 2);
  absl::StatusOr<Graph> g = Graph::FromProto(s.graph());
  ASSERT_TRUE(g.ok());
  const std::vector<std::vector<HostTensor>> bad = {
      {Random({2, 4}, 1)},
      {Random({2, 4}, 1), HostTensor::Zeros(proto::FLOAT64, {2, 4})},
      {Random({2, 4}, 1), Random({3, 4}, 2)},
      {Random({2, 4}, 1), Random({2, 4, 1}, 2)},
      {Random({2, 5}, 1), Random({2, 5}, 2)},
      {Random({0, 4}, 1), Random({0, 4}, 2)},  // batch min 1
  };
  for (const std::vector<HostTensor>& in : bad) {
    absl::Status got = exe->Run(in).status();
    absl::Status want = Interpret(*g, in).status();
    EXPECT_FALSE(got.ok());
    EXPECT_EQ(got, want);
  }
}

// The real pipeline: text IR -> the compile driver's prims and inductor (stopping at the
// Schedule, which this runtime then runs; no extern epilogues declared, so each extern kernel
// is the extern alone).
absl::StatusOr<proto::Schedule> ScheduleOf(const Graph& graph) {
  driver::DriverOptions options;
  options.backend = driver::ScheduleInterpreterBackend();
  options.stop_after = driver::Stage::kInductor;
  options.cache = nullptr;
  absl::StatusOr<driver::CompileResult> r = driver::CompileGraph(graph.Clone(), options);
  if (!r.ok()) return r.status();
  return *std::move(r->schedule);
}

// The real pipeline on graphs whose schedules are externs writing straight into the outputs, so
// no generated kernel is needed; a schedule that does need one must make Create ask for it.
void CheckPipeline(const std::string& text, bool expect_extern_only) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<proto::Schedule> s = ScheduleOf(*g);
  ASSERT_TRUE(s.ok()) << s.status();
  bool only_externs = true;
  for (const proto::Kernel& k : s->kernels()) {
    only_externs = only_externs && k.kind() == proto::Kernel::EXTERN && k.loops_size() == 0;
  }
  EXPECT_EQ(only_externs, expect_extern_only) << inductor::SummarizeSchedule(*s);
  absl::StatusOr<std::unique_ptr<CpuExecutable>> exe = CpuExecutable::Create(*s, {});
  if (!only_externs) {
    EXPECT_FALSE(exe.ok());
    EXPECT_NE(exe.status().message().find("no function in the kernel table"), std::string::npos)
        << exe.status();
    return;
  }
  ASSERT_TRUE(exe.ok()) << exe.status();
  for (int64_t batch : {1, 3}) {
    std::vector<HostTensor> in;
    int seed = 1;
    for (const Value* v : g->inputs()) {
      std::vector<int64_t> shape;
      for (const SymExpr& d : v->type().shape) shape.push_back(*d.Evaluate({{"batch", batch}}));
      in.push_back(Random(shape, seed++));
    }
    absl::StatusOr<std::vector<HostTensor>> got = (*exe)->Run(in);
    ASSERT_TRUE(got.ok()) << got.status();
    absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(*s, in);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_EQ(got->size(), want->size());
    for (size_t o = 0; o < got->size(); ++o) {
      ExpectClose((*want)[o], (*got)[o], Tol(1e-5), g->name());
    }
  }
}

TEST(CpuExecutableTest, ExternSchedulesFromThePipeline) {
  CheckPipeline(R"(graph @mm(%0 "x": f32[batch, 8], %1 "w": f32[8, 5]) {
  symbol batch min 1 max 0 hint 4
  %2: f32[batch, 5] = aten.mm(%0, %1)
  return %2
})", true);
  CheckPipeline(R"(graph @bmm(%0 "x": f32[batch, 3, 8], %1 "y": f32[batch, 8, 5]) {
  symbol batch min 1 max 0 hint 4
  %2: f32[batch, 3, 5] = aten.bmm(%0, %1)
  return %2
})", true);
  CheckPipeline(R"(graph @conv(%0 "x": f32[batch, 4, 9, 9], %1 "w": f32[6, 2, 3, 3]) {
  symbol batch min 1 max 0 hint 4
  %2: f32[batch, 6, 5, 5] = aten.convolution(%0, %1) {dilation = [1], groups = 2, output_padding = [0], padding = [1], stride = [2], transposed = false}
  return %2
})", true);
  CheckPipeline(R"(graph @deconv(%0 "x": f32[batch, 4, 5, 5], %1 "w": f32[4, 3, 3, 3]) {
  symbol batch min 1 max 0 hint 4
  %2: f32[batch, 3, 10, 10] = aten.convolution(%0, %1) {dilation = [1], groups = 1, output_padding = [1], padding = [1], stride = [2], transposed = true}
  return %2
})", true);
  // matmul with a broadcast batch: the decomposition materializes the broadcast (a kernel).
  CheckPipeline(R"(graph @matmul(%0 "x": f32[batch, 2, 3, 4], %1 "y": f32[2, 4, 5]) {
  symbol batch min 1 max 0 hint 4
  %2: f32[batch, 2, 3, 5] = aten.matmul(%0, %1)
  return %2
})", false);
}

// ---- Transposed mm operands (internal/transposed_operand.h).
std::atomic<int> transposes_run{0};

// buf3[5, 6] = a[6, 5]^T and buf4[6, 3] = w[3, 6]^T, row by row.
extern "C" void TransposeA(int64_t b, int64_t e, char* const* bufs, const int64_t*,
                           CoilKernelError*) {
  transposes_run.fetch_add(1);
  const float* a = reinterpret_cast<const float*>(bufs[1]);
  float* t = reinterpret_cast<float*>(bufs[3]);
  for (int64_t r = b; r < e; ++r) {
    for (int j = 0; j < 6; ++j) t[r * 6 + j] = a[j * 5 + r];
  }
}
extern "C" void TransposeW(int64_t b, int64_t e, char* const* bufs, const int64_t*,
                           CoilKernelError*) {
  transposes_run.fetch_add(1);
  const float* w = reinterpret_cast<const float*>(bufs[2]);
  float* t = reinterpret_cast<float*>(bufs[4]);
  for (int64_t r = b; r < e; ++r) {
    for (int j = 0; j < 3; ++j) t[r * 3 + j] = w[j * 6 + r];
  }
}

// out[5, 3] = a^T @ w^T with a [6, 5] and w [3, 6] inputs: two transposing copies, then mm.
proto::Schedule TransposedMmSchedule() {
  proto::Schedule s = FromGraph(R"(graph @g(%0 "a": f32[6, 5], %1 "w": f32[3, 6]) {
  %2: f32[5, 6] = prims.permute(%0) {dims = [1, 0]}
  %3: f32[6, 3] = prims.permute(%1) {dims = [1, 0]}
  %4: f32[5, 3] = aten.mm(%2, %3)
  return %4
})");
  AddBuffer(s, 1, proto::Buffer::INPUT, {6, 5}, 0);
  AddBuffer(s, 2, proto::Buffer::INPUT, {3, 6}, 1);
  AddBuffer(s, 3, proto::Buffer::INTERMEDIATE, {5, 6}, 2, SymExpr(0));
  AddBuffer(s, 4, proto::Buffer::INTERMEDIATE, {6, 3}, 3, SymExpr(128));
  AddBuffer(s, 5, proto::Buffer::OUTPUT, {5, 3}, 4);
  *s.mutable_memory_plan()->mutable_arena_bytes() = SymExpr(256).ToProto();
  s.add_outputs(5);
  proto::Loop* l = AddKernel(s, 1, proto::Kernel::POINTWISE, {5, 6})->add_loops();
  Load(l, 1, 1, {I(1), I(0)});
  Store(l, 2, 3, {I(0), I(1)}, 1);
  l = AddKernel(s, 2, proto::Kernel::POINTWISE, {6, 3})->add_loops();
  Load(l, 1, 2, {I(1), I(0)});
  Store(l, 2, 4, {I(0), I(1)}, 1);
  proto::Kernel* mm = AddKernel(s, 3, proto::Kernel::EXTERN, {5, 3});
  mm->set_extern_op("aten.mm");
  mm->add_extern_inputs(3);
  mm->add_extern_inputs(4);
  mm->set_extern_output(5);
  return s;
}

// The aten.mm reads both inputs transposed in place: the copies do not run (with oneDNN; a
// library that declines gets them run late), the result matches the Schedule interpreter
// (which runs the copies), and COIL_MM_TRANSPOSED=0 keeps the copies.
TEST(CpuExecutableTest, MmReadsTransposedInputsWithoutTheirCopies) {
  const proto::Schedule s = TransposedMmSchedule();
  std::vector<HostTensor> in = {Random({6, 5}, 7), Random({3, 6}, 8)};
  absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(s, in);
  ASSERT_TRUE(want.ok()) << want.status();
  for (const char* env : {"", "0"}) {
    if (*env != 0) setenv("COIL_MM_TRANSPOSED", env, 1);
    std::unique_ptr<CpuExecutable> exe = MustCreate(s, {{1, &TransposeA}, {2, &TransposeW}}, 2);
    unsetenv("COIL_MM_TRANSPOSED");
    exe->SetProfiling(true);
    transposes_run = 0;
    for (int run = 0; run < 3; ++run) {
      absl::StatusOr<std::vector<HostTensor>> got = exe->Run(in);
      ASSERT_TRUE(got.ok()) << got.status();
      ExpectClose((*want)[0], (*got)[0], Tol(1e-5), absl::StrCat("a^T w^T, env '", env, "'"));
    }
    std::vector<CpuExecutable::KernelTime> p = exe->Profile();
    ASSERT_EQ(p.size(), 3u);
    if (*env == 0) {
      EXPECT_EQ(transposes_run.load(), 0);
      EXPECT_EQ(p[0].kind, "skipped (mm operand)");
      EXPECT_EQ(p[1].kind, "skipped (mm operand)");
      EXPECT_EQ(p[2].kind, "extern aten.mm (transposed operand)");
    } else {
      EXPECT_EQ(transposes_run.load(), 6);  // each copy once per run, inline (tiny)
      EXPECT_EQ(p[0].kind, "pointwise");
      EXPECT_EQ(p[2].kind, "extern aten.mm");
    }
  }
}

// What does not qualify: a source some kernel writes, a copy result read twice, or returned,
// or read through a view.
TEST(CpuExecutableTest, TransposedOperandsOnlyWhereTheCopyIsPrivate) {
  proto::Schedule s = TransposedMmSchedule();
  EXPECT_EQ(FindTransposedOperands(s).size(), 2u);
  {
    proto::Schedule t = s;  // the mm reads buf3 twice: mm(buf3^T... , buf3)
    t.mutable_kernels(2)->set_extern_inputs(1, 3);
    std::vector<TransposedOperand> f = FindTransposedOperands(t);
    EXPECT_TRUE(f.empty());
  }
  {
    proto::Schedule t = s;  // buf4 is also returned
    t.add_outputs(4);
    std::vector<TransposedOperand> f = FindTransposedOperands(t);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].operand, 0);
    EXPECT_EQ(f[0].source_buffer, 1);
  }
  {
    proto::Schedule t = s;  // a kernel writes the input w
    proto::Loop* l = AddKernel(t, 4, proto::Kernel::POINTWISE, {3, 6})->add_loops();
    Load(l, 1, 2, {I(0), I(1)});
    Store(l, 2, 2, {I(0), I(1)}, 1);
    std::vector<TransposedOperand> f = FindTransposedOperands(t);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].source_buffer, 1);
  }
  {
    proto::Schedule t = s;  // the mm reads buf4 (operand 1) through a view of it
    proto::Kernel* mm = t.mutable_kernels(2);
    mm->add_extern_input_views();
    proto::SymExpr* size = mm->add_extern_input_views()->add_dims()->add_sizes();
    size->set_kind(proto::SymExpr::CONST);
    size->set_value(6);
    std::vector<TransposedOperand> f = FindTransposedOperands(t);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].operand, 0);
  }
}

// A convolution whose weights are a CONSTANT buffer: the extern keeps its primitives per batch
// size and the weights reordered once; every run, in any order of batch sizes, matches the
// Schedule interpreter.
TEST(CpuExecutableTest, ConvolutionWithConstantWeightsAcrossBatches) {
  std::vector<float> w(6 * 2 * 3 * 3), bias = {0.5f, -1, 0.25f, 2, -0.75f, 1};
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 7919) % 23) / 11.0f - 1;
  absl::StatusOr<Graph> g = ParseGraph(R"(graph @conv(%0 "x": f32[batch, 4, 9, 9]) {
  symbol batch min 1 max 0 hint 4
  %1 "w": f32[6, 2, 3, 3] = constant dense ")" + HexFloats(w) + R"("
  %2 "b": f32[6] = constant dense ")" + HexFloats(bias) + R"("
  %3: f32[batch, 6, 5, 5] = aten.convolution(%0, %1, %2) {dilation = [1], groups = 2, output_padding = [0], padding = [1], stride = [2], transposed = false}
  return %3
})");
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<proto::Schedule> s = ScheduleOf(*g);
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::unique_ptr<CpuExecutable>> exe = CpuExecutable::Create(*s, {});
  ASSERT_TRUE(exe.ok()) << exe.status();
  for (int64_t batch : {1, 3, 1, 5, 3, 2, 1}) {
    std::vector<HostTensor> in = {Random({batch, 4, 9, 9}, static_cast<int>(batch))};
    absl::StatusOr<std::vector<HostTensor>> got = (*exe)->Run(in);
    ASSERT_TRUE(got.ok()) << got.status();
    absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(*s, in);
    ASSERT_TRUE(want.ok()) << want.status();
    ExpectClose((*want)[0], (*got)[0], Tol(1e-5), "batch " + std::to_string(batch));
  }
}

std::mutex calls_mu;
std::vector<std::pair<std::thread::id, int64_t>> calls;  // (thread, rows) per kernel call

extern "C" void RecordedAddRows(int64_t b, int64_t e, char* const* bufs, const int64_t* syms,
                                CoilKernelError*) {
  {
    std::lock_guard<std::mutex> lock(calls_mu);
    calls.emplace_back(std::this_thread::get_id(), e - b);
  }
  AddRows(b, e, bufs, syms, nullptr);
}

// Waking the pool costs more than a small kernel's work: a kernel of at most 16,384 iterations
// (65,536 on 2 or 3 threads) is one call on the calling thread; above, it is split into chunks.
TEST(CpuExecutableTest, SmallKernelsRunInlineLargeOnesSplit) {
  for (int threads : {2, 4}) {
    std::unique_ptr<CpuExecutable> exe =
        MustCreate(PointwiseChain(), {{1, &RecordedAddRows}, {2, &SquareRows}}, threads);
    for (int64_t batch : {1, 1000, 4096, 4097, 10000, 16000, 16385, 40000}) {
      SCOPED_TRACE(absl::StrCat(threads, " threads"));
      calls.clear();
      std::vector<HostTensor> in = {Random({batch, 4}, 1), Random({batch, 4}, 2)};
      ASSERT_TRUE(exe->Run(in).ok());
      const bool small = batch * 4 <= (threads >= 4 ? 16384 : 65536);
      if (small) {
        ASSERT_EQ(calls.size(), 1u) << "batch " << batch;
        EXPECT_EQ(calls[0].first, std::this_thread::get_id());
        EXPECT_EQ(calls[0].second, batch);
      } else {
        EXPECT_GT(calls.size(), 1u) << "batch " << batch;
      }
    }
  }
}

// Kernel.parallel_dims = rank: [begin, end) counts the positions of [batch, 4], not rows.
extern "C" void AddPositions(int64_t b, int64_t e, char* const* bufs, const int64_t*,
                             CoilKernelError*) {
  {
    std::lock_guard<std::mutex> lock(calls_mu);
    calls.emplace_back(std::this_thread::get_id(), e - b);
  }
  for (int64_t p = b; p < e; ++p) {
    reinterpret_cast<float*>(bufs[3])[p] = reinterpret_cast<const float*>(bufs[1])[p] +
                                           reinterpret_cast<const float*>(bufs[2])[p];
  }
}

TEST(CpuExecutableTest, ParallelDimsSetTheSplit) {
  proto::Schedule s = PointwiseChain();
  s.mutable_kernels(0)->set_parallel_dims(2);
  std::unique_ptr<CpuExecutable> exe = MustCreate(s, {{1, &AddPositions}, {2, &SquareRows}}, 4);
  for (int64_t batch : {1, 3, 20000}) {
    calls.clear();
    std::vector<HostTensor> in = {Random({batch, 4}, 1), Random({batch, 4}, 2)};
    absl::StatusOr<std::vector<HostTensor>> got = exe->Run(in);
    ASSERT_TRUE(got.ok()) << got.status();
    absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(s, in);
    ASSERT_TRUE(want.ok()) << want.status();
    ExpectClose((*want)[0], (*got)[0], Tol(1e-6), absl::StrCat("batch ", batch));
  }
  EXPECT_GT(calls.size(), 1u) << "80,000 positions split between threads";
  for (const auto& [thread, n] : calls) EXPECT_EQ(n % 4, 0) << "rows enough: whole rows";
}

}  // namespace
}  // namespace coil::cpu
