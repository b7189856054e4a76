// CopyStridedToRowMajor against a per-index copy (the definition): permutations of up to five
// dims with sizes around the tile edges, broadcast (stride 0) and reversed (negative stride)
// dims, offsets into a larger buffer, element sizes 1, 2, 4 and 8.
#include "runtime/strided_copy.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace coil {
namespace {

// The definition: element i of the row-major output is the view's element at the i-th index.
std::vector<uint8_t> Naive(const uint8_t* src, const std::vector<int64_t>& shape,
                           const std::vector<int64_t>& strides, int64_t k) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<uint8_t> out(n * k);
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < shape.size(); ++d) off += index[d] * strides[d];
    std::memcpy(out.data() + i * k, src + off * k, k);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

struct View {
  std::vector<int64_t> shape, strides;
  int64_t offset = 0;  // of element [0, ...] in the buffer, in elements
  int64_t extent = 0;  // buffer size in elements
};

// A permutation of a row-major base tensor, some dims broadcast or reversed.
View RandomView(std::mt19937& rng) {
  const int64_t sizes[] = {1, 2, 3, 7, 31, 32, 33, 65};
  const int rank = std::uniform_int_distribution<int>(0, 5)(rng);
  std::vector<int64_t> base(rank);
  int64_t numel = 1;
  for (int64_t& d : base) {
    d = sizes[std::uniform_int_distribution<int>(0, rank > 3 ? 3 : 7)(rng)];
    numel *= d;
  }
  std::vector<int64_t> base_strides(rank);
  for (int64_t d = rank - 1, s = 1; d >= 0; --d) {
    base_strides[d] = s;
    s *= base[d];
  }
  std::vector<int> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  View v;
  v.extent = numel;
  for (int d = 0; d < rank; ++d) {
    int64_t size = base[perm[d]], stride = base_strides[perm[d]];
    const int kind = std::uniform_int_distribution<int>(0, 5)(rng);
    if (kind == 0 && size == 1) {  // broadcast a size-1 dim to 3
      size = 3;
      stride = 0;
    } else if (kind == 1 && size > 1) {  // reversed
      v.offset += (size - 1) * stride;
      stride = -stride;
    }
    v.shape.push_back(size);
    v.strides.push_back(stride);
  }
  return v;
}

TEST(StridedCopyTest, MatchesThePerIndexCopy) {
  std::mt19937 rng(1);
  for (int trial = 0; trial < 600; ++trial) {
    const View v = RandomView(rng);
    for (int64_t k : {1, 2, 4, 8}) {
      std::vector<uint8_t> buffer(v.extent * k);
      for (uint8_t& b : buffer) b = static_cast<uint8_t>(rng());
      const uint8_t* src = buffer.data() + v.offset * k;
      std::vector<uint8_t> want = Naive(src, v.shape, v.strides, k);
      std::vector<uint8_t> got(want.size() + 8, 0xab);  // guard bytes past the end
      CopyStridedToRowMajor(src, v.shape, v.strides, k, got.data());
      ASSERT_TRUE(std::equal(want.begin(), want.end(), got.begin()))
          << "trial " << trial << " element size " << k << " rank " << v.shape.size();
      for (size_t i = want.size(); i < got.size(); ++i) ASSERT_EQ(got[i], 0xab) << "overrun";
    }
  }
}

TEST(StridedCopyTest, TransposeAcrossTileEdges) {
  // [m, n] read as the transpose of an [n, m] row-major tensor, sizes around the 32 tile.
  for (int64_t m : {1, 31, 32, 33, 100}) {
    for (int64_t n : {1, 31, 33, 64, 97}) {
      std::vector<uint32_t> base(m * n);
      std::iota(base.begin(), base.end(), 0u);
      std::vector<uint32_t> got(m * n);
      CopyStridedToRowMajor(reinterpret_cast<const uint8_t*>(base.data()), {m, n}, {1, m}, 4,
                            reinterpret_cast<uint8_t*>(got.data()));
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          ASSERT_EQ(got[i * n + j], base[j * m + i]) << m << "x" << n << " at " << i << "," << j;
        }
      }
    }
  }
}

TEST(StridedCopyTest, EmptyShapesWriteNothing) {
  uint8_t src[4] = {1, 2, 3, 4}, dst[4] = {9, 9, 9, 9};
  CopyStridedToRowMajor(src, {3, 0}, {1, 1}, 1, dst);
  EXPECT_EQ(dst[0], 9);
}

}  // namespace
}  // namespace coil
