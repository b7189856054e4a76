// coil's own f32 GEMM against packed constant weights (own_gemm.h): packing, the split into
// tiles over the pool, and the portable tile loop (the AVX-512 one: own_gemm_avx512.cc).
#include "runtime/cpu/internal/own_gemm.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <string>

#include "runtime/cpu/thread_pool.h"
#include "runtime/cpu/internal/weight_memory.h"

namespace coil::cpu::internal {
namespace {

constexpr int64_t kP = kOwnGemmPanel;
constexpr int64_t kR = kOwnGemmRows;

std::atomic<int64_t> own_gemm_calls{0};

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v == nullptr || *v == '\0' ? fallback : std::atoll(v);
}

// The K block: K itself up to kMaxKc, else K split into equal blocks of at most kMaxKc
// (COIL_OWN_GEMM_KC overrides the bound). A block of a 32-column panel is 4 * 32 * kc bytes
// (48 KB at 384) streamed from L2 once per 12 rows; x's 12 rows of it stay in L1.
int64_t KBlock(int64_t k) {
  static const int64_t max_kc = std::max<int64_t>(16, EnvInt("COIL_OWN_GEMM_KC", 384));
  const int64_t blocks = (k + max_kc - 1) / max_kc;
  return (k + blocks - 1) / blocks;
}

struct Tiling {
  int64_t rows;    // rows of x per tile (a multiple of kR unless it is all of m)
  int64_t panels;  // panels per tile
};

// The tiles for `threads`: the (rows, panels) split whose slowest thread does the least work
// (tiles are taken dynamically, so that is ceil(tiles / threads) tiles' worth), counting a
// partial micro-tile of rows as a whole one and a fixed cost per tile; ties to fewer tiles.
Tiling ChooseTiling(int64_t m, int64_t panels, int threads) {
  const int64_t micro_rows = (m + kR - 1) / kR;
  Tiling best{m, panels};
  double best_cost = -1;
  for (int64_t mb = 1; mb <= std::min<int64_t>(micro_rows, 16); ++mb) {
    const int64_t rows = (micro_rows + mb - 1) / mb * kR;  // micro-tiles per block, as rows
    const int64_t row_blocks = (m + rows - 1) / rows;
    if (row_blocks != mb) continue;
    for (int64_t np = 1; np <= std::min<int64_t>(panels, 64); ++np) {
      const int64_t col_blocks = (panels + np - 1) / np;
      const int64_t tiles = row_blocks * col_blocks;
      const int64_t rounds = (tiles + threads - 1) / threads;
      // A tile: rows * np micro-tile columns of work plus the cost of starting one (about
      // two micro-tiles' worth: its x rows are read into cache again).
      const double cost = rounds * (static_cast<double>(rows) * np + 2.0 * kR);
      if (best_cost < 0 || cost < best_cost) {
        best_cost = cost;
        best = {std::min(rows, m), np};
      }
    }
  }
  return best;
}

float Apply(const ExternEpilogueStep& s, float v, const float* other_at) {
  switch (s.kind) {
    case ExternEpilogueStep::kAdd:
      return v + *other_at;
    case ExternEpilogueStep::kRelu:
      return std::max(v, 0.0f);
    case ExternEpilogueStep::kClip:
      return std::min(std::max(v, s.lo), s.hi);
    case ExternEpilogueStep::kHardswish:
      return v * std::min(std::max(v + 3.0f, 0.0f), 6.0f) / 6.0f;
    case ExternEpilogueStep::kBias:
      return v;  // OwnGemm takes it out of the steps
    case ExternEpilogueStep::kGeluErf:
      return 0.5f * v * (1.0f + std::erf(v * 0.70710678f));
    case ExternEpilogueStep::kGeluTanh:
      return 0.5f * v * (1.0f + std::tanh(0.79788456f * (v + 0.044715f * v * v * v)));
  }
  return v;
}

}  // namespace

bool OwnGemmWeights::Pack(const void* src, int64_t k, int64_t n) {
  const int64_t panels = (n + kP - 1) / kP;
  const size_t bytes = static_cast<size_t>(panels * k * kP) * sizeof(float);
  float* dst = static_cast<float*>(AllocateWeights(bytes, /*huge=*/true));
  if (dst == nullptr) return false;
  const float* s = static_cast<const float*>(src);
  for (int64_t c = 0; c < k; ++c) {
    for (int64_t p = 0; p < panels; ++p) {
      float* d = dst + (p * k + c) * kP;
      const int64_t cols = std::min(kP, n - p * kP);
      std::memcpy(d, s + c * n + p * kP, cols * sizeof(float));
      std::fill(d + cols, d + kP, 0.0f);
    }
  }
  data_.reset(dst);
  src_ = src;
  k_ = k;
  n_ = n;
  return true;
}

bool OwnGemmCpu() {
  static const bool has = [] {
#if defined(__x86_64__) && defined(__GNUC__)
    return OwnGemmHasAvx512Build() && __builtin_cpu_supports("avx512f");
#else
    return false;
#endif
  }();
  return has;
}

bool OwnGemmAvailable() {
  static const bool available = [] {
    // Off unless asked for: not yet measured against oneDNN on the 16-core Xeon.
    const char* v = std::getenv("COIL_OWN_GEMM");
    return v != nullptr && std::string(v) == "1" && OwnGemmCpu();
  }();
  return available;
}

bool UseOwnGemm(int64_t m, int64_t k, int64_t n) {
  return OwnGemmAvailable() && m > 8 && k >= 1 && n >= 1 && 2.0 * m * k * n >= 4e6;
}

int64_t OwnGemmCallCount() { return own_gemm_calls.load(std::memory_order_relaxed); }

void OwnGemmTilePortable(const OwnGemmJob& j, int64_t r0, int64_t r1, int64_t p0, int64_t p1) {
  const int64_t k = j.w->k(), n = j.w->n();
  for (int64_t r = r0; r < r1; ++r) {
    const float* a = j.x + r * j.ldx;
    for (int64_t p = p0; p < p1; ++p) {
      const float* b = j.w->panel(p);
      const int64_t col0 = p * kP, cols = std::min(kP, n - col0);
      float acc[kP] = {};
      for (int64_t t = 0; t < k; ++t) {
        const float av = a[t];
        for (int64_t c = 0; c < kP; ++c) acc[c] = std::fma(av, b[t * kP + c], acc[c]);
      }
      float* o = j.out + r * j.ldo + col0;
      for (int64_t c = 0; c < cols; ++c) {
        float v = acc[c];
        if (j.bias != nullptr) v += j.bias[col0 + c];
        for (const ExternEpilogueStep& s : j.steps) {
          const float* other = s.kind == ExternEpilogueStep::kAdd
                                   ? reinterpret_cast<const float*>(s.other->data) + r * n +
                                         col0 + c
                                   : nullptr;
          v = Apply(s, v, other);
        }
        o[c] = v;
      }
    }
  }
}

void OwnGemm(const float* x, int64_t m, int64_t ldx, const OwnGemmWeights& w, const float* bias,
             absl::Span<const ExternEpilogueStep> steps, float* out, int64_t ldo, int threads,
             cpu::ThreadPool* pool, bool portable) {
  own_gemm_calls.fetch_add(1, std::memory_order_relaxed);
  const OwnGemmJob j{x, m, ldx, &w, bias, steps, out, ldo, KBlock(w.k())};
  const bool avx512 = !portable && OwnGemmCpu();
  auto tile = [&](int64_t r0, int64_t r1, int64_t p0, int64_t p1) {
    if (avx512) {
      OwnGemmTileAvx512(j, r0, r1, p0, p1);
    } else {
      OwnGemmTilePortable(j, r0, r1, p0, p1);
    }
  };
  const int64_t panels = w.panels();
  if (pool == nullptr || threads <= 1 || pool->num_threads() <= 1) {
    tile(0, m, 0, panels);
    return;
  }
  threads = std::min(threads, pool->num_threads());
  const Tiling t = ChooseTiling(m, panels, threads);
  const int64_t row_blocks = (m + t.rows - 1) / t.rows;
  const int64_t col_blocks = (panels + t.panels - 1) / t.panels;
  // Tiles row-block-major within a column block: consecutive tiles share their panels.
  pool->ParallelFor(row_blocks * col_blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t cb = i / row_blocks, rb = i % row_blocks;
      tile(rb * t.rows, std::min(m, (rb + 1) * t.rows), cb * t.panels,
           std::min(panels, (cb + 1) * t.panels));
    }
  });
}

}  // namespace coil::cpu::internal
