// f32 divisions on the GPU against the host's IEEE division, bit for bit: by constants, and by
// a row's reduction (codegen_cuda/internal/row_division.h: one reciprocal per row, Markstein's
// correction, IEEE divisions for a group with a dividend out of its range), for every kind of
// dividend and divisor (zeros, subnormals, the range's edges, the largest finite values,
// infinities, NaN).
//
// Tagged "gpu". Without a CUDA driver the tests check that loading fails cleanly with "no CUDA
// driver" and skip, saying so.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "runtime/host_tensor.h"
#include "tests/cuda/cuda_gpu_testing.h"
#include "tests/cuda/generate_module.h"

namespace coil {
namespace {

using cuda_testing::Compile;
using cuda_testing::Compiled;

// Dividends of every kind for `rows` rows of `width` (>= 32): every exponent (255: infinities
// and NaNs) with random significands and both signs, then in the middle of each row the
// special values.
std::vector<uint32_t> DividendBits(int64_t rows, int64_t width) {
  std::vector<uint32_t> bits(rows * width);
  uint64_t state = 12345;
  auto next = [&] { state = state * 6364136223846793005ull + 1442695040888963407ull; return static_cast<uint32_t>(state >> 33); };
  for (size_t i = 0; i < bits.size(); ++i) {
    const uint32_t sign = (i & 1) << 31, exponent = static_cast<uint32_t>((i / 2) % 256);
    bits[i] = sign | (exponent << 23) | (next() & 0x7fffffu);
  }
  const uint32_t specials[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x007fffffu, 0x7f7fffffu,
                               0xff7fffffu, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x0d800000u,
                               0x21800000u, 0x217fffffu, 0x5d800000u, 0x5d800001u, 0xa1800000u};
  for (int64_t r = 0; r < rows; ++r) {
    for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); ++i) {
      bits[r * width + width / 2 + i] = specials[i];
    }
  }
  return bits;
}

// Whether `got` is the IEEE quotient a / d (NaN: any NaN); else a failure naming them.
bool ExpectQuotient(float a, float d, float got) {
  volatile float dv = d;
  const float want = a / dv;
  if (std::isnan(want) ? std::isnan(got) : std::memcmp(&want, &got, 4) == 0) return true;
  uint32_t ab;
  std::memcpy(&ab, &a, 4);
  ADD_FAILURE() << a << " (0x" << std::hex << ab << ") / " << d << " gave " << got
                << ", the IEEE quotient is " << want;
  return false;
}

// f32 divisions by constants (a power of two, sqrt(2), 3, 0.1, 1e30) give the IEEE quotient's
// bits for every kind of dividend: each exponent with random significands and signs, zeros,
// subnormals, the largest finite values, infinities and NaN; the host's f32 division is the
// oracle (a guard for any rewrite of divisions by constants; a multiply-and-correct one was
// measured and dropped at stop 37, docs/benchmarks.md).
TEST(CudaDivisionGpuTest, F32DivisionsByConstantsAreCorrectlyRounded) {
  REQUIRE_GPU();
  std::unique_ptr<Compiled> c = Compile(R"(graph @d(%0 "x": f32[batch, 256]) {
  symbol batch min 1 max 0 hint 4
  %1 "eight": f32[] = constant dense "00000041"
  %2 "sqrt2": f32[] = constant dense "f304b53f"
  %3 "three": f32[] = constant dense "00004040"
  %4 "tenth": f32[] = constant dense "cdcccc3d"
  %5 "huge": f32[] = constant dense "caf24971"
  %6: f32[batch, 256] = aten.div(%0, %1) {rounding_mode = ""}
  %7: f32[batch, 256] = aten.div(%0, %2) {rounding_mode = ""}
  %8: f32[batch, 256] = aten.div(%0, %3) {rounding_mode = ""}
  %9: f32[batch, 256] = aten.div(%0, %4) {rounding_mode = ""}
  %10: f32[batch, 256] = aten.div(%0, %5) {rounding_mode = ""}
  return %6, %7, %8, %9, %10
})");
  ASSERT_NE(c, nullptr);
  const int64_t batch = 2048;
  const std::vector<uint32_t> bits = DividendBits(batch, 256);
  std::string bytes(reinterpret_cast<const char*>(bits.data()), bits.size() * 4);
  absl::StatusOr<HostTensor> x = HostTensor::FromBytes(proto::FLOAT32, {batch, 256}, bytes);
  ASSERT_TRUE(x.ok()) << x.status();
  absl::StatusOr<std::vector<HostTensor>> got = c->exe->Run({*x});
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 5u);
  const float divisors[] = {8.0f, 1.41421356f, 3.0f, 0.1f, 1e30f};
  for (int o = 0; o < 5; ++o) {
    const std::string out = (*got)[o].Bytes();
    int failures = 0;
    for (size_t i = 0; i < bits.size() && failures < 5; ++i) {
      float a, q;
      std::memcpy(&a, &bits[i], 4);
      std::memcpy(&q, out.data() + 4 * i, 4);
      if (!ExpectQuotient(a, divisors[o], q)) ++failures;
    }
  }
}

// x / sum(z) per row: the sum is a row invariant of the kernel's second Loop, so the division
// is coil_div_row's. Each row of z holds one divisor (then zeros: the sum is exact): inside
// Markstein's range, its edges, just outside (tiny, huge, subnormal), zero, negative, infinite
// and NaN; each row of x holds dividends of every kind.
TEST(CudaDivisionGpuTest, DivisionsByARowsSumAreCorrectlyRounded) {
  const char* text = R"(graph @r(%0 "x": f32[batch, 1024], %1 "z": f32[batch, 1024]) {
  symbol batch min 1 max 0 hint 4
  %2: f32[batch, 1] = aten.sum(%1) {dim = [1], keepdim = true, dtype = none}
  %3: f32[batch, 1024] = aten.div(%0, %2) {rounding_mode = ""}
  return %3, %2
})";
  // The generated code takes the path under test (checked without a GPU too).
  absl::StatusOr<proto::KernelModule> m = cuda_testing::GenerateModule(text);
  ASSERT_TRUE(m.ok()) << m.status();
  bool row_division = false;
  for (const proto::CompiledKernel& k : m->kernels()) {
    row_division = row_division || absl::StrContains(k.source(), "coil_div_row(e");
  }
  ASSERT_TRUE(row_division) << "the division is not coil_div_row's";
  REQUIRE_GPU();
  std::unique_ptr<Compiled> c = Compile(text);
  ASSERT_NE(c, nullptr);
  const float divisors[] = {1.0f, 3.0f, 0.1f, 1.41421356f, 8192.0f, 1.99999988f, -7.5f,
                            0x1p-60f, 0x1p60f, 0x1.fffffep59f, 0x1.fffffep-61f, 0x1.000002p60f,
                            1e-30f, 1e30f, 1e-40f, 0.0f, INFINITY, NAN, 0x1p-126f};  // -0 sums to +0
  const int64_t per = 8, rows = per * static_cast<int64_t>(sizeof(divisors) / sizeof(float));
  std::vector<uint32_t> xbits = DividendBits(rows, 1024);
  std::vector<float> z(rows * 1024, 0.0f);
  for (int64_t r = 0; r < rows; ++r) z[r * 1024 + (r * 37) % 1024] = divisors[r / per];
  absl::StatusOr<HostTensor> x = HostTensor::FromBytes(
      proto::FLOAT32, {rows, 1024},
      std::string(reinterpret_cast<const char*>(xbits.data()), xbits.size() * 4));
  absl::StatusOr<HostTensor> zt = HostTensor::FromBytes(
      proto::FLOAT32, {rows, 1024}, std::string(reinterpret_cast<const char*>(z.data()), z.size() * 4));
  ASSERT_TRUE(x.ok() && zt.ok());
  absl::StatusOr<std::vector<HostTensor>> got = c->exe->Run({*x, *zt});
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 2u);
  const std::string q = (*got)[0].Bytes(), s = (*got)[1].Bytes();
  int failures = 0;
  for (int64_t r = 0; r < rows && failures < 8; ++r) {
    float sum;
    std::memcpy(&sum, s.data() + 4 * r, 4);
    const float d = divisors[r / per];
    if (!(std::isnan(d) ? std::isnan(sum) : std::memcmp(&sum, &d, 4) == 0)) {
      ADD_FAILURE() << "row " << r << ": sum " << sum << ", want " << d;
      ++failures;
      continue;
    }
    for (int64_t i = r * 1024; i < (r + 1) * 1024 && failures < 8; ++i) {
      float a, g;
      std::memcpy(&a, &xbits[i], 4);
      std::memcpy(&g, q.data() + 4 * i, 4);
      if (!ExpectQuotient(a, sum, g)) ++failures;
    }
  }
}

}  // namespace
}  // namespace coil
