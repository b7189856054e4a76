// The pointwise kernel of the direct convolutions (conv_direct.h): a 1x1 kernel, stride 1, no
// padding, groups 1, i.e. the product of the [N*H*W, C] activation with the [C, OC] weight
// packed into gemv.h's 16-column panels. Register blocks of kBlockRows rows x 2 panels (3
// where three are left), tasks of rows x groups of panels (conv_direct.cc's Partition). A
// scaled input (ExternScaledInput) is computed per task into a thread's scratch rows first.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "runtime/cpu/internal/conv_direct.h"
#include "runtime/cpu/internal/conv_direct_task.h"
#include "runtime/cpu/internal/conv_direct_vectors.h"
#include "runtime/cpu/internal/gemv.h"

namespace coil::cpu::internal::conv_direct {
namespace {

// The rows a task reads: x's row r at x + (r - base) * c, rows past `last` repeating it.
struct Rows {
  const float* x;
  int64_t base, last;
};

// acc[r][q] = sum_c x[row r, c] * panel(q)[c]; rows past the last repeat it (not stored).
template <int P>
COIL_CONV_INLINE void PointwiseBlock(const Job& j, const Rows& rows, int64_t r0,
                                     const float* panel0, V16 (&acc)[kBlockRows][P]) {
  const int64_t k = j.s->c;
  const float* xr[kBlockRows];
  for (int r = 0; r < kBlockRows; ++r) {
    xr[r] = rows.x + (std::min(r0 + r, rows.last) - rows.base) * k;
  }
  for (int r = 0; r < kBlockRows; ++r) {
    for (int q = 0; q < P; ++q) acc[r][q] = V16{};
  }
  const int64_t panel_stride = k * 16;
  for (int64_t c = 0; c < k; ++c) {
    V16 wv[P];
    for (int q = 0; q < P; ++q) wv[q] = Load<V16>(panel0 + q * panel_stride + c * 16);
    for (int r = 0; r < kBlockRows; ++r) {
      const float xv = xr[r][c];
      for (int q = 0; q < P; ++q) acc[r][q] += xv * wv[q];
    }
  }
}

// The epilogue steps on the first `lanes` (< 16) results at output index `idx`, the rest of
// the vector zero (a kAdd operand is read only up to `lanes`).
COIL_CONV_INLINE V16 StepsPartial(V16 v, absl::Span<const ExternEpilogueStep> steps,
                                  int64_t idx, int64_t lanes) {
  for (const ExternEpilogueStep& step : steps) {
    if (step.kind == ExternEpilogueStep::kAdd) {
      alignas(64) float other[16] = {};
      std::memcpy(other, reinterpret_cast<const float*>(step.other->data) + idx,
                  lanes * sizeof(float));
      v += Load<V16>(other);
    } else {
      v = Steps(v, absl::MakeConstSpan(&step, 1), idx);
    }
  }
  return v;
}

template <int P>
COIL_CONV_INLINE void PointwiseStore(const Job& j, int64_t r0, int64_t col0,
                                     V16 (&acc)[kBlockRows][P]) {
  const int64_t n = j.s->oc, m = j.s->n * j.s->h * j.s->w;
  const int rows = static_cast<int>(std::min<int64_t>(kBlockRows, m - r0));
  for (int q = 0; q < P; ++q) {
    const int64_t col = col0 + 16 * q;
    if (col + 16 <= n) {
      const V16 b = j.bias != nullptr ? Load<V16>(j.bias + col) : V16{};
      for (int r = 0; r < rows; ++r) {
        const int64_t idx = (r0 + r) * n + col;
        StoreV(j.out + idx, Steps(acc[r][q] + b, j.steps, idx));
      }
    } else {
      // A partial panel: whole vectors computed, the valid lanes copied out.
      const int64_t lanes = n - col;
      alignas(64) float bias[16] = {};
      if (j.bias != nullptr) std::memcpy(bias, j.bias + col, lanes * sizeof(float));
      const V16 b = Load<V16>(bias);
      for (int r = 0; r < rows; ++r) {
        const int64_t idx = (r0 + r) * n + col;
        const V16 v = StepsPartial(acc[r][q] + b, j.steps, idx, lanes);
        std::memcpy(j.out + idx, &v, lanes * sizeof(float));
      }
    }
  }
}

// Rows [row0, row1) of the scaled input (ExternScaledInput) into `tile`, [row][c]:
// steps(x) * g(scale[image of the row]).
COIL_CONV_INLINE void ScaleRows(const Job& j, int64_t row0, int64_t row1, float* tile) {
  const ExternScaledInput& si = *j.scaled;
  const int64_t k = j.s->c, pixels = j.s->h * j.s->w;
  const float* x = reinterpret_cast<const float*>(si.x.data);
  const float* scale = reinterpret_cast<const float*>(si.scale.data);
  const absl::Span<const ExternEpilogueStep> steps = si.steps;
  auto g = [&](V16 v) {
    return si.hardsigmoid
               ? MinOf(MaxOf(v * (1.0f / 6.0f) + 0.5f, Splat<V16>(0.0f)), Splat<V16>(1.0f))
               : v;
  };
  for (int64_t r = row0; r < row1; ++r) {
    const float* xr = x + r * k;
    const float* sr = scale + (r / pixels) * k;
    float* dst = tile + (r - row0) * k;
    int64_t c = 0;
    for (; c + 16 <= k; c += 16) {
      StoreV(dst + c, Steps(Load<V16>(xr + c), steps, 0) * g(Load<V16>(sr + c)));
    }
    if (c < k) {
      alignas(64) float xv[16] = {}, sv[16] = {};
      std::memcpy(xv, xr + c, (k - c) * sizeof(float));
      std::memcpy(sv, sr + c, (k - c) * sizeof(float));
      const V16 v = Steps(Load<V16>(xv), steps, 0) * g(Load<V16>(sv));
      std::memcpy(dst + c, &v, (k - c) * sizeof(float));
    }
  }
}

}  // namespace

int64_t PanelGroups(int64_t panels, int64_t task_panels) {
  const int64_t groups = (panels + task_panels - 1) / task_panels;
  return groups > 1 && panels % task_panels == 1 ? groups - 1 : groups;
}

// Tasks [begin, end): task t covers rows [task_rows * (t / groups), +task_rows) and panels
// [task_panels * g, +task_panels) for g = t % groups (PanelGroups: the last group to the end),
// in blocks of 2 panels, 3 where three are left.
COIL_CONV_CLONES void PointwiseTask(const Job& j, int64_t begin, int64_t end) {
  const GemvWeights& w = j.w->panels();
  const int64_t m = j.s->n * j.s->h * j.s->w, panels = w.panels();
  const int64_t groups = PanelGroups(panels, j.task_panels);
  for (int64_t t = begin; t < end; ++t) {
    const int64_t row0 = (t / groups) * j.task_rows, row1 = std::min(m, row0 + j.task_rows);
    const int64_t g = t % groups, p0 = g * j.task_panels,
                  p1 = g + 1 == groups ? panels : p0 + j.task_panels;
    Rows rows{j.x, 0, m - 1};
    if (j.scaled != nullptr) {  // the task's rows scaled once, read by each of its panels
      float* tile = ScaledRowsScratch((row1 - row0) * j.s->c);
      ScaleRows(j, row0, row1, tile);
      rows = Rows{tile, row0, row1 - 1};
    }
    for (int64_t p = p0; p < p1;) {
      const int64_t left = p1 - p;
      for (int64_t r0 = row0; r0 < row1; r0 += kBlockRows) {
        if (left == 3) {
          V16 acc[kBlockRows][3];
          PointwiseBlock<3>(j, rows, r0, w.panel(p), acc);
          PointwiseStore<3>(j, r0, p * 16, acc);
        } else if (left >= 2) {
          V16 acc[kBlockRows][2];
          PointwiseBlock<2>(j, rows, r0, w.panel(p), acc);
          PointwiseStore<2>(j, r0, p * 16, acc);
        } else {
          V16 acc[kBlockRows][1];
          PointwiseBlock<1>(j, rows, r0, w.panel(p), acc);
          PointwiseStore<1>(j, r0, p * 16, acc);
        }
      }
      p += left == 3 ? 3 : std::min<int64_t>(left, 2);
    }
  }
}

}  // namespace coil::cpu::internal::conv_direct
