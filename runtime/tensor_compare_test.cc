// MaxRelativeError under both NaN policies, on hand-computed cases.
#include "runtime/tensor_compare.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace coil {
namespace {

constexpr double kNan = NAN, kInf = INFINITY;

TEST(TensorCompareTest, MaxDifferenceOverMaxMagnitude) {
  const std::vector<double> want = {1, -4, 2}, got = {1.5, -4, 2};
  for (NanPolicy p : {NanPolicy::kNanMatchesNan, NanPolicy::kNanIsError}) {
    EXPECT_DOUBLE_EQ(MaxRelativeError(got, want, p), 0.5 / 4);
  }
}

TEST(TensorCompareTest, AllZeroOracleGivesTheAbsoluteDifference) {
  const std::vector<double> want = {0, 0}, got = {0.25, -0.5};
  EXPECT_DOUBLE_EQ(MaxRelativeError(got, want, NanPolicy::kNanMatchesNan), 0.5);
}

TEST(TensorCompareTest, NanInBoth) {
  const std::vector<double> want = {kNan, 2}, got = {kNan, 2};
  EXPECT_EQ(MaxRelativeError(got, want, NanPolicy::kNanMatchesNan), 0);
  EXPECT_EQ(MaxRelativeError(got, want, NanPolicy::kNanIsError), kInf);
}

TEST(TensorCompareTest, NanInOneIsInfinitelyWrong) {
  const std::vector<double> want = {1, 2}, got = {kNan, 2};
  EXPECT_EQ(MaxRelativeError(got, want, NanPolicy::kNanMatchesNan), kInf);
  EXPECT_EQ(MaxRelativeError(want, got, NanPolicy::kNanMatchesNan), kInf);
  EXPECT_EQ(MaxRelativeError(got, want, NanPolicy::kNanIsError), kInf);
}

TEST(TensorCompareTest, EqualInfinities) {
  const std::vector<double> want = {kInf, 2}, got = {kInf, 3};
  // Skipped, but the infinite magnitude scales the other differences to 0.
  EXPECT_EQ(MaxRelativeError(got, want, NanPolicy::kNanMatchesNan), 0);
  // An infinite difference over an infinite scale: NaN, which fails every `err <= bound`.
  EXPECT_TRUE(std::isnan(MaxRelativeError(got, want, NanPolicy::kNanIsError)));
}

TEST(TensorCompareTest, HostTensorsCompareTheirElements) {
  HostTensor want = HostTensor::FromDoubles(proto::FLOAT32, {2}, {2, 4});
  HostTensor got = HostTensor::FromDoubles(proto::FLOAT32, {2}, {2, 5});
  EXPECT_DOUBLE_EQ(MaxRelativeError(got, want, NanPolicy::kNanMatchesNan), 0.25);
}

}  // namespace
}  // namespace coil
