// CudaExecutable's run modes on a GPU (tag "gpu"), each output compared with the Schedule
// interpreter (the float64 oracle) or with the plain run's bytes: inputs that are strided views,
// the run's device times and per-kernel profile, inputs through pinned host buffers
// (pinned_inputs), and timed passes (SetTimedPasses: the kernels back to back within one run,
// as `coil bench cuda` times them). Without a CUDA driver the tests skip, saying so.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/cuda/executable.h"
#include "runtime/schedule_interpreter.h"
#include "tests/cuda/cuda_gpu_testing.h"
#include "tests/cuda/cuda_test_graphs.h"
#include "tools/driver/cuda_backend.h"

namespace coil {
namespace {

using cuda_testing::Compile;
using cuda_testing::Compiled;
using cuda_testing::ExpectClose;
using cuda_testing::RandomInputs;

// Inputs that are views (transposed, offset) are copied as their elements, not their storage;
// the timings of a run are device event times that add up; the profile has one entry per
// kernel per run.
TEST(CudaRunModesGpuTest, StridedInputsRunTimesAndProfile) {
  REQUIRE_GPU();
  std::unique_ptr<Compiled> c = Compile(cuda_testing::TestGraphs()[0].text);  // x, w, b, r
  ASSERT_NE(c, nullptr);
  cuda::CudaExecutable* exe = driver::AsCudaExecutable(*c->exe);
  ASSERT_NE(exe, nullptr);
  std::vector<HostTensor> inputs = RandomInputs(c->graph, 9, 21, {});
  // x as the transpose of a [40, 9] tensor, starting one row in: same values, other strides.
  HostTensor base = HostTensor::Zeros(proto::FLOAT32, {41, 9});
  HostTensor x = base.View({9, 40}, {1, 9}, 9);
  for (int64_t i = 0; i < 9; ++i) {
    for (int64_t j = 0; j < 40; ++j) x.SetDouble({i, j}, inputs[0].GetDouble({i, j}));
  }
  ASSERT_FALSE(x.IsContiguous());
  std::vector<HostTensor> strided = inputs;
  strided[0] = x;
  absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(c->schedule, inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  exe->SetProfiling(true);
  const int runs = 3;
  double device_total = 0;
  for (int r = 0; r < runs; ++r) {
    absl::StatusOr<std::vector<HostTensor>> got = c->exe->Run(strided);
    ASSERT_TRUE(got.ok()) << got.status();
    for (size_t o = 0; o < want->size(); ++o) {
      ExpectClose((*want)[o], (*got)[o], absl::StrCat("strided x, run ", r, ", output ", o));
    }
    const cuda::CudaExecutable::RunTimes t = exe->last_run_times();
    EXPECT_GT(t.device_ms, 0);
    EXPECT_GE(t.copy_in_ms, 0);
    EXPECT_GE(t.copy_out_ms, 0);
    device_total += t.device_ms;
  }
  const std::vector<cuda::CudaExecutable::KernelTime> profile = exe->Profile();
  ASSERT_EQ(static_cast<int>(profile.size()), c->schedule.kernels_size());
  double kernels_total = 0;
  for (const cuda::CudaExecutable::KernelTime& k : profile) {
    EXPECT_EQ(k.calls, runs) << k.kernel;
    EXPECT_GE(k.total_ms, 0) << k.kernel;
    EXPECT_FALSE(k.kind.empty()) << k.kernel;
    kernels_total += k.total_ms;
  }
  // The per-kernel events lie between the run's first-kernel and end events.
  EXPECT_GT(kernels_total, 0);
  EXPECT_LE(kernels_total, device_total * 1.001 + 1e-3);
  exe->SetProfiling(false);
  EXPECT_TRUE(exe->Profile().empty());
}

// With pinned_inputs (executable.h; off by default), inputs of 1 MiB and more go through pinned host buffers:
// the same outputs as pageable copies, run after run (the buffers are reused), and as the
// Schedule interpreter's.
TEST(CudaRunModesGpuTest, LargeInputsThroughPinnedBuffersMatch) {
  REQUIRE_GPU();
  const cuda_testing::TestGraph& t = cuda_testing::MemoryBoundGraphs()[0];  // gelu chain, x and y
  std::unique_ptr<Compiled> pinned = Compile(t.text, {.pinned_inputs = true});
  std::unique_ptr<Compiled> pageable = Compile(t.text);
  ASSERT_NE(pinned, nullptr);
  ASSERT_NE(pageable, nullptr);
  // 1 MiB per input (the smallest pinned size), then under it (pageable in both), then 4 MiB
  // (the pinned buffers grow). The same kernels run either way, so the pinned run must give
  // the pageable run's bytes; the Schedule interpreter checks the first size only (it takes
  // minutes at 4 MiB per input; MemoryBoundGraphsMatchTheScheduleInterpreter checks the
  // pageable path against it).
  for (int64_t batch : {1024, 512, 4096}) {
    std::vector<HostTensor> inputs = RandomInputs(pinned->graph, batch, 50 + batch, t.spec);
    // The second output divides the first by y: |y| >= 0.5, so that the interpreter's check is
    // not of an f32 rounding error in the first divided by a y near 0.
    for (int64_t i = 0; i < inputs[1].numel(); ++i) {
      const double y = inputs[1].LoadDouble(i);
      inputs[1].StoreDouble(i, y < 0 ? y - 0.5 : y + 0.5);
    }
    absl::StatusOr<std::vector<HostTensor>> a = pinned->exe->Run(inputs);
    absl::StatusOr<std::vector<HostTensor>> b = pageable->exe->Run(inputs);
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    ASSERT_EQ(a->size(), b->size());
    for (size_t o = 0; o < a->size(); ++o) {
      EXPECT_EQ((*a)[o].Bytes(), (*b)[o].Bytes()) << "batch " << batch << ", output " << o;
    }
    if (batch != 1024) continue;
    absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(pinned->schedule, inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    for (size_t o = 0; o < want->size(); ++o) {
      ExpectClose((*want)[o], (*a)[o], absl::StrCat("pinned, batch ", batch, ", output ", o));
    }
  }
}

// Enough passes for 5 ms samples, at most 64 (no GPU needed).
TEST(CudaRunModesGpuTest, PassesForSample) {
  EXPECT_EQ(cuda::CudaExecutable::PassesForSample(0.16), 32);  // ceil(31.25)
  EXPECT_EQ(cuda::CudaExecutable::PassesForSample(2.5), 2);
  EXPECT_EQ(cuda::CudaExecutable::PassesForSample(18.8), 1);
  EXPECT_EQ(cuda::CudaExecutable::PassesForSample(0.01), 64);
  EXPECT_EQ(cuda::CudaExecutable::PassesForSample(0), 64);  // no time measured
  EXPECT_EQ(cuda::CudaExecutable::PassesForSample(1.0, 10.0), 10);
}

// SetTimedPasses(n): one Run enqueues the kernels n times back to back; its outputs are one
// pass's (the same bytes as a one-pass run, and the interpreter's), last_run_times() reports the
// n passes, and the GEMM counts grow by n (each pass ran its GEMM). A program that updates an
// input in place, and an executable that synchronizes after every kernel, run one pass: the
// in-place result is the interpreter's single update, not n of them.
TEST(CudaRunModesGpuTest, TimedPassesRunBackToBack) {
  REQUIRE_GPU();
  std::unique_ptr<Compiled> c = Compile(R"(graph @g(%0 "x": f32[batch, 96], %1 "w": f32[96, 80]) {
  symbol batch min 1 max 0 hint 4
  %2: f32[batch, 80] = aten.matmul(%0, %1)
  %3: f32[batch, 80] = aten.gelu(%2) {approximate = "none"}
  %4: f32[batch] = aten.sum(%3) {dim = [1], keepdim = false, dtype = none}
  return %3, %4
})", {.sync_each_kernel = false});
  ASSERT_NE(c, nullptr);
  cuda::CudaExecutable* exe = driver::AsCudaExecutable(*c->exe);
  ASSERT_NE(exe, nullptr);
  std::vector<HostTensor> inputs = RandomInputs(c->graph, 300, 5, {});
  absl::StatusOr<std::vector<HostTensor>> want = InterpretSchedule(c->schedule, inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  absl::StatusOr<std::vector<HostTensor>> one = c->exe->Run(inputs);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(exe->last_run_times().passes, 1);
  const cuda::CudaExecutable::GemmCounts before = exe->gemm_counts();
  exe->SetTimedPasses(8);
  absl::StatusOr<std::vector<HostTensor>> eight = c->exe->Run(inputs);
  ASSERT_TRUE(eight.ok()) << eight.status();
  const cuda::CudaExecutable::RunTimes t = exe->last_run_times();
  EXPECT_EQ(t.passes, 8);
  EXPECT_GT(t.device_ms, 0);
  const cuda::CudaExecutable::GemmCounts after = exe->gemm_counts();
  EXPECT_EQ((after.fused + after.plain + after.host) - (before.fused + before.plain + before.host),
            8);
  ASSERT_EQ(eight->size(), want->size());
  for (size_t o = 0; o < want->size(); ++o) {
    EXPECT_EQ((*eight)[o].Bytes(), (*one)[o].Bytes()) << "output " << o;
    ExpectClose((*want)[o], (*eight)[o], absl::StrCat("8 passes, output ", o));
  }
  exe->SetTimedPasses(1);
  ASSERT_TRUE(c->exe->Run(inputs).ok());
  EXPECT_EQ(exe->last_run_times().passes, 1);

  // x += y in place: one pass whatever the setting, so x is updated once.
  for (const bool sync : {false, true}) {
    SCOPED_TRACE(sync ? "sync_each_kernel" : "in place");
    std::unique_ptr<Compiled> u = Compile(sync ? cuda_testing::TestGraphs()[0].text : R"(
graph @inplace(%0 "x": f32[batch, 5], %1 "y": f32[batch, 5]) {
  symbol batch min 2 max 0 hint 8
  %2: f32[batch, 5] = aten.exp(%0)
  %3: f32[batch, 5] = aten.add_(%0, %1) {alpha = 1}
  %4: f32[batch, 5] = aten.mul(%2, %0)
  return %4
})", {.sync_each_kernel = sync});
    ASSERT_NE(u, nullptr);
    cuda::CudaExecutable* ue = driver::AsCudaExecutable(*u->exe);
    ASSERT_NE(ue, nullptr);
    std::vector<HostTensor> ins = RandomInputs(u->graph, 6, 9, {});
    std::vector<HostTensor> before, oracle_ins;
    for (const HostTensor& x : ins) {
      before.push_back(x.To(x.dtype()));  // copies
      oracle_ins.push_back(x.To(x.dtype()));
    }
    absl::StatusOr<std::vector<HostTensor>> w = InterpretSchedule(u->schedule, oracle_ins);
    ASSERT_TRUE(w.ok()) << w.status();
    ue->SetTimedPasses(4);
    absl::StatusOr<std::vector<HostTensor>> got = u->exe->Run(ins);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(ue->last_run_times().passes, 1);
    for (size_t o = 0; o < w->size(); ++o) {
      ExpectClose((*w)[o], (*got)[o], absl::StrCat("output ", o));
    }
    if (!sync) {  // x += y once: x's new values are the f32 sums of its old ones and y's
      std::vector<double> sum(before[0].numel());
      for (int64_t i = 0; i < before[0].numel(); ++i) {
        sum[i] = static_cast<float>(before[0].LoadDouble(i)) + static_cast<float>(before[1].LoadDouble(i));
      }
      ExpectClose(HostTensor::FromDoubles(proto::FLOAT32, before[0].shape(), sum), ins[0],
                  "x after the run");
    }
  }
}

}  // namespace
}  // namespace coil
