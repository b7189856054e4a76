// The test kit's own checks: ExpectClose fails exactly where its Tolerance says, RandomInputs
// follows its spec and its seed.
#include "runtime/testing/test_kit.h"

#include <cmath>

#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"
#include "ir/parser.h"

namespace coil::test_kit {
namespace {

HostTensor F32(std::vector<double> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return HostTensor::FromDoubles(proto::FLOAT32, {n}, v);
}

TEST(TestKitTest, WithinAbsPlusRelPasses) {
  ExpectClose(F32({100, 1}), F32({100.5, 1.25}), {.abs = 0.25, .rel = 0.0025}, "close");
}

TEST(TestKitTest, OutsideFails) {
  EXPECT_NONFATAL_FAILURE(
      ExpectClose(F32({100}), F32({100.6}), {.abs = 0.25, .rel = 0.0025}, "x"), "x element 0");
}

TEST(TestKitTest, NanPolicy) {
  ExpectClose(F32({NAN}), F32({NAN}), {}, "nan");
  EXPECT_NONFATAL_FAILURE(ExpectClose(F32({NAN}), F32({NAN}), {.nan_matches_nan = false}, "n"),
                          "n element 0");
  EXPECT_NONFATAL_FAILURE(ExpectClose(F32({1}), F32({NAN}), {.abs = 1}, "one"), "one element 0");
}

TEST(TestKitTest, EqualInfinitiesNeedTheFlag) {
  ExpectClose(F32({INFINITY}), F32({INFINITY}), {.equal_values_match = true}, "inf");
  EXPECT_NONFATAL_FAILURE(ExpectClose(F32({INFINITY}), F32({INFINITY}), {.rel = 1}, "i"),
                          "i element 0");
}

TEST(TestKitTest, ShapesAndDtypes) {
  EXPECT_FATAL_FAILURE(ExpectClose(F32({1, 2}), F32({1}), {}, "shape"), "shape");
  // (EXPECT_FATAL_FAILURE's statement may not use locals.)
  EXPECT_FATAL_FAILURE(
      ExpectClose(F32({1}), HostTensor::FromDoubles(proto::FLOAT64, {1}, {1}), {}, "dtype"),
      "dtype");
  ExpectClose(F32({1}), HostTensor::FromDoubles(proto::FLOAT64, {1}, {1}),
              {.compare_dtypes = false}, "dtype ignored");
}

TEST(TestKitTest, RandomInputsFollowSpecAndSeed) {
  absl::StatusOr<Graph> g = ParseGraph(R"(
graph @g(%0 "x": f32[batch, 4], %1 "i": i64[batch], %2 "m": bool[8]) {
  symbol batch min 1 max 0 hint 2
  return %0
}
)");
  ASSERT_TRUE(g.ok()) << g.status();
  const RandomInputSpec spec{.int_range = 5, .signed_nonzero = true};
  std::vector<HostTensor> a = RandomInputs(*g, {{"batch", 3}}, 1, spec);
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0].shape(), (std::vector<int64_t>{3, 4}));
  for (double v : a[0].ToDoubles()) EXPECT_TRUE(v >= -2 && v < 2) << v;
  for (double v : a[1].ToDoubles()) EXPECT_TRUE(v >= -5 && v < 5 && v != 0) << v;
  for (double v : a[2].ToDoubles()) EXPECT_TRUE(v == 0 || v == 1) << v;
  std::vector<HostTensor> again = RandomInputs(*g, {{"batch", 3}}, 1, spec);
  EXPECT_EQ(a[0].ToDoubles(), again[0].ToDoubles());
  EXPECT_NE(a[0].ToDoubles(), RandomInputs(*g, {{"batch", 3}}, 2, spec)[0].ToDoubles());
  const RandomInputSpec nans{.nan_rate = 1.0};
  for (double v : RandomInputs(*g, {{"batch", 3}}, 1, nans)[0].ToDoubles()) {
    EXPECT_TRUE(std::isnan(v));
  }
}

}  // namespace
}  // namespace coil::test_kit
