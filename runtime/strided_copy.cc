// CopyStridedToRowMajor (strided_copy.h).
#include "runtime/strided_copy.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "ir/check.h"

namespace coil {
namespace {

constexpr int64_t kTile = 32;

// Calls fn(src_offset, dst_offset) for every index of the dims not in `skip` (at most two),
// in row-major order, with the offsets of that index's first element.
template <typename Fn>
void ForEachOuterIndex(absl::Span<const int64_t> shape, absl::Span<const int64_t> strides,
                       absl::Span<const int64_t> dst_strides, int64_t skip_a, int64_t skip_b,
                       Fn&& fn) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d != skip_a && d != skip_b) dims.push_back(d);
  }
  std::vector<int64_t> index(dims.size(), 0);
  int64_t src = 0, dst = 0;
  while (true) {
    fn(src, dst);
    int64_t k = static_cast<int64_t>(dims.size()) - 1;
    for (; k >= 0; --k) {
      const int64_t d = dims[k];
      if (++index[k] < shape[d]) {
        src += strides[d];
        dst += dst_strides[d];
        break;
      }
      src -= (shape[d] - 1) * strides[d];
      dst -= (shape[d] - 1) * dst_strides[d];
      index[k] = 0;
    }
    if (k < 0) return;
  }
}

// One element of K bytes (a fixed-size memcpy: one move, no aliasing questions).
template <int K>
inline void Move(const uint8_t* from, uint8_t* to) {
  std::memcpy(to, from, K);
}

// Offsets below are in elements of K bytes.
template <int K>
void Copy(const uint8_t* src, absl::Span<const int64_t> shape, absl::Span<const int64_t> strides,
          uint8_t* dst) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0) {
    Move<K>(src, dst);
    return;
  }
  std::vector<int64_t> dst_strides(rank);
  int64_t running = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    dst_strides[d] = running;
    running *= shape[d];
  }
  const int64_t last = rank - 1, n = shape[last], s = strides[last];
  // The source's unit-stride dim, when the last dim is not it: copy that pair in tiles.
  int64_t unit = -1;
  if (s != 1 && n > 1) {
    for (int64_t d = 0; d < last; ++d) {
      if (strides[d] == 1 && shape[d] > 1) unit = d;
    }
  }
  if (unit >= 0) {
    const int64_t m = shape[unit], su = strides[unit], du = dst_strides[unit];
    ForEachOuterIndex(shape, strides, dst_strides, unit, last, [&](int64_t so, int64_t dof) {
      for (int64_t i0 = 0; i0 < m; i0 += kTile) {
        const int64_t i1 = std::min(m, i0 + kTile);
        for (int64_t j0 = 0; j0 < n; j0 += kTile) {
          const int64_t j1 = std::min(n, j0 + kTile);
          for (int64_t i = i0; i < i1; ++i) {
            const uint8_t* in = src + (so + i * su) * K;
            uint8_t* out = dst + (dof + i * du) * K;
            for (int64_t j = j0; j < j1; ++j) Move<K>(in + j * s * K, out + j * K);
          }
        }
      }
    });
    return;
  }
  ForEachOuterIndex(shape, strides, dst_strides, last, -1, [&](int64_t so, int64_t dof) {
    const uint8_t* in = src + so * K;
    uint8_t* out = dst + dof * K;
    if (s == 1) {
      std::memcpy(out, in, n * K);
    } else {
      for (int64_t j = 0; j < n; ++j) Move<K>(in + j * s * K, out + j * K);
    }
  });
}

}  // namespace

void CopyStridedToRowMajor(const uint8_t* src, absl::Span<const int64_t> shape,
                           absl::Span<const int64_t> strides, int64_t element_size,
                           uint8_t* dst) {
  COIL_CHECK(shape.size() == strides.size());
  for (int64_t d : shape) {
    if (d == 0) return;
  }
  switch (element_size) {
    case 1: return Copy<1>(src, shape, strides, dst);
    case 2: return Copy<2>(src, shape, strides, dst);
    case 4: return Copy<4>(src, shape, strides, dst);
    case 8: return Copy<8>(src, shape, strides, dst);
    default: COIL_CHECK(false) << "element size " << element_size;
  }
}

}  // namespace coil
