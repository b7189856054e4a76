// Small-M products against packed constant weights (gemv.h).
#include "runtime/cpu/internal/gemv.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "runtime/cpu/thread_pool.h"
#include "runtime/cpu/internal/weight_memory.h"

// The panel loop is plain C++ over GCC/clang vector types (16 floats: one AVX-512 register, two
// AVX2 ones, four SSE ones); on x86-64 it is compiled for AVX-512, AVX2 and the baseline and
// picked at load time (an ifunc), so a portable build still runs wide vectors where the CPU has
// them. GCC needs -O3 to unroll the accumulator loops into registers, so the function asks.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define COIL_GEMV_CLONES \
  __attribute__((target_clones("avx512f", "avx2", "default"), optimize("O3")))
#elif defined(__x86_64__) && defined(__clang__) && __clang_major__ >= 14
#define COIL_GEMV_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define COIL_GEMV_CLONES
#endif

namespace coil::cpu::internal {
namespace {

// 16 floats; the packed panels are 64-byte aligned and 64 bytes per row.
typedef float V16 __attribute__((vector_size(64)));

// Rows of x per register block, and the most panels a block covers: R * P <= 8 accumulators
// plus P weight vectors fit AVX-512's 32 registers (on AVX2 a 16-float vector is two of its 16
// registers, so the widest blocks spill there: correct, slower).
constexpr int kMaxBlockRows = 4;
constexpr int kMaxBlockPanels = 4;
constexpr int kResultStride = 16 * kMaxBlockPanels;

struct Job {
  const float* x;
  int64_t m, ldx;
  const GemvWeights* w;
  const float* bias;
  absl::Span<const ExternEpilogueStep> steps;
  float* out;
  int64_t ldo;
};

// res[r * kResultStride + 16 * q + l] = sum_c x[r * ldx + c] * panel(p + q)[c * 16 + l] for
// r < R, q < P.
template <int R, int P>
inline __attribute__((always_inline)) void Block(const float* x, int64_t ldx,
                                                 const float* panel0, int64_t k,
                                                 float* res) {
  V16 acc[R][P];
  for (int r = 0; r < R; ++r) {
    for (int q = 0; q < P; ++q) acc[r][q] = V16{};
  }
  const int64_t panel_stride = k * 16;
  for (int64_t c = 0; c < k; ++c) {
    V16 wv[P];
    for (int q = 0; q < P; ++q) {
      wv[q] = *reinterpret_cast<const V16*>(panel0 + q * panel_stride + c * 16);
    }
    for (int r = 0; r < R; ++r) {
      const float xv = x[r * ldx + c];
      for (int q = 0; q < P; ++q) acc[r][q] += xv * wv[q];
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int q = 0; q < P; ++q) std::memcpy(res + r * kResultStride + 16 * q, &acc[r][q], 64);
  }
}

// Bias, epilogue steps and the store of a block's valid columns [col0, col0 + cols).
void Store(const Job& j, int64_t r0, int rows, int64_t col0, int64_t cols, const float* res) {
  const int64_t n = j.w->n();
  for (int r = 0; r < rows; ++r) {
    float* o = j.out + (r0 + r) * j.ldo + col0;
    const float* s = res + r * kResultStride;
    for (int64_t t = 0; t < cols; ++t) {
      float v = s[t];
      if (j.bias != nullptr) v += j.bias[col0 + t];
      for (const ExternEpilogueStep& step : j.steps) {
        switch (step.kind) {
          case ExternEpilogueStep::kAdd:
            v += reinterpret_cast<const float*>(step.other->data)[(r0 + r) * n + col0 + t];
            break;
          case ExternEpilogueStep::kRelu:
            v = std::max(v, 0.0f);
            break;
          case ExternEpilogueStep::kClip:
            v = std::min(std::max(v, step.lo), step.hi);
            break;
          case ExternEpilogueStep::kHardswish:
            v = v * std::min(std::max(v + 3.0f, 0.0f), 6.0f) / 6.0f;
            break;
          case ExternEpilogueStep::kBias:
            v += reinterpret_cast<const float*>(step.other->data)[col0 + t];
            break;
          case ExternEpilogueStep::kGeluErf:
            v = 0.5f * v * (1.0f + std::erf(v * 0.70710678f));
            break;
          case ExternEpilogueStep::kGeluTanh:
            v = 0.5f * v * (1.0f + std::tanh(0.79788456f * (v + 0.044715f * v * v * v)));
            break;
        }
      }
      o[t] = v;
    }
  }
}

// Panels [p0, p1) for every row.
COIL_GEMV_CLONES void RunPanels(const Job& j, int64_t p0, int64_t p1) {
  const int64_t k = j.w->k(), n = j.w->n();
  alignas(64) float res[kMaxBlockRows * kResultStride];
  // Up to 4 panels per block for one or two rows, 2 for more (at most 8 accumulators).
  const int most = j.m <= 2 ? 4 : 2;
  for (int64_t p = p0, panels = 0; p < p1; p += panels) {
    panels = std::min<int64_t>(p1 - p, most);
    if (panels == 3) panels = 2;
    const float* w = j.w->panel(p);
    const int64_t col0 = p * 16, cols = std::min<int64_t>(16 * panels, n - col0);
    // Every row block reads the same panels (from cache after the first).
    for (int64_t r0 = 0; r0 < j.m; r0 += kMaxBlockRows) {
      const int rows = static_cast<int>(std::min<int64_t>(kMaxBlockRows, j.m - r0));
      const float* x = j.x + r0 * j.ldx;
      switch (rows * 8 + panels) {
        case 1 * 8 + 1: Block<1, 1>(x, j.ldx, w, k, res); break;
        case 1 * 8 + 2: Block<1, 2>(x, j.ldx, w, k, res); break;
        case 1 * 8 + 4: Block<1, 4>(x, j.ldx, w, k, res); break;
        case 2 * 8 + 1: Block<2, 1>(x, j.ldx, w, k, res); break;
        case 2 * 8 + 2: Block<2, 2>(x, j.ldx, w, k, res); break;
        case 2 * 8 + 4: Block<2, 4>(x, j.ldx, w, k, res); break;
        case 3 * 8 + 1: Block<3, 1>(x, j.ldx, w, k, res); break;
        case 3 * 8 + 2: Block<3, 2>(x, j.ldx, w, k, res); break;
        case 4 * 8 + 1: Block<4, 1>(x, j.ldx, w, k, res); break;
        default: Block<4, 2>(x, j.ldx, w, k, res); break;  // 4 rows, 2 panels
      }
      Store(j, r0, rows, col0, cols, res);
    }
  }
}

std::atomic<int64_t> gemv_calls{0};

bool GemvEnabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("COIL_GEMV");
    return v == nullptr || std::string(v) != "0";
  }();
  return enabled;
}

}  // namespace

int GemvThreads(int64_t k, int64_t n, int threads) {
  const int64_t panels = (n + 15) / 16;
  const int64_t by_bytes = 4 * k * n / kGemvBytesPerThread;
  return static_cast<int>(
      std::max<int64_t>(1, std::min({by_bytes, panels, static_cast<int64_t>(threads)})));
}

bool UseGemv(int64_t m, int64_t k, int64_t n, int threads) {
  return GemvEnabled() && m >= 1 && m <= kGemvMaxRows && k >= 1 && n >= 1 &&
         GemvThreads(k, n, threads) >= 2;
}

bool GemvWeights::Pack(const void* src, int64_t k, int64_t n, Layout layout) {
  const int64_t panels = (n + 15) / 16;
  const size_t bytes = static_cast<size_t>(panels * k * 16) * sizeof(float);
  float* dst = static_cast<float*>(AllocateWeights(bytes, /*huge=*/false));
  if (dst == nullptr) return false;
  const float* s = static_cast<const float*>(src);
  for (int64_t p = 0; p < panels; ++p) {
    float* panel = dst + p * k * 16;
    for (int l = 0; l < 16; ++l) {
      const int64_t col = p * 16 + l;
      for (int64_t c = 0; c < k; ++c) {
        panel[c * 16 + l] = col >= n ? 0.0f : layout == kKN ? s[c * n + col] : s[col * k + c];
      }
    }
  }
  data_.reset(dst);
  src_ = src;
  k_ = k;
  n_ = n;
  layout_ = layout;
  return true;
}

int64_t GemvCallCount() { return gemv_calls.load(std::memory_order_relaxed); }

void Gemv(const float* x, int64_t m, int64_t ldx, const GemvWeights& w, const float* bias,
          absl::Span<const ExternEpilogueStep> steps, float* out, int64_t ldo,
          cpu::ThreadPool* pool) {
  gemv_calls.fetch_add(1, std::memory_order_relaxed);
  const Job j{x, m, ldx, &w, bias, steps, out, ldo};
  const int64_t panels = w.panels();
  const int threads = pool == nullptr ? 1 : GemvThreads(w.k(), w.n(), pool->num_threads());
  if (threads <= 1) {
    RunPanels(j, 0, panels);
    return;
  }
  // One chunk per thread (ParallelFor's chunks are at least the grain).
  pool->ParallelFor(panels, (panels + threads - 1) / threads,
                    [&](int64_t begin, int64_t end) { RunPanels(j, begin, end); });
}

}  // namespace coil::cpu::internal
