// The fused CPU attention kernel (attention.h).
#include "runtime/cpu/internal/attention.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/cpu/thread_pool.h"

// The inner loops are plain C++ that the compiler vectorizes; on x86-64 the block function is
// compiled for AVX-512, AVX2 and the baseline and picked at load time (an ifunc), so a
// portable build still runs wide vectors where the CPU has them.
// GCC vectorizes at -O3 (at -O2 only loops that need no run-time checks), so the block function
// asks for it.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define COIL_ATTENTION_CLONES \
  __attribute__((target_clones("avx512f", "avx2", "default"), optimize("O3")))
#elif defined(__x86_64__) && defined(__clang__) && __clang_major__ >= 14
#define COIL_ATTENTION_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define COIL_ATTENTION_CLONES
#endif

namespace coil::cpu::internal {
namespace {

constexpr int64_t kBlockQ = 32;   // query rows per task
constexpr int64_t kBlockK = 64;   // keys per tile

// Where each flat batch index's [rows, cols] matrix starts in a tensor whose leading dims
// broadcast against `batch` (right-aligned; size-1 or missing dims repeat).
bool BatchOffsets(const std::vector<int64_t>& shape, const std::vector<int64_t>& batch,
                  int64_t matrix, std::vector<int64_t>& out) {
  const int64_t nb = static_cast<int64_t>(batch.size());
  const int64_t own = static_cast<int64_t>(shape.size()) - 2;
  if (own < 0 || own > nb) return false;
  std::vector<int64_t> stride(nb, 0);
  int64_t s = matrix;
  for (int64_t d = own - 1; d >= 0; --d) {
    const int64_t bd = d + (nb - own);
    if (shape[d] != batch[bd] && shape[d] != 1) return false;
    stride[bd] = shape[d] == 1 ? 0 : s;
    s *= shape[d];
  }
  int64_t total = 1;
  for (int64_t b : batch) total *= b;
  out.assign(total, 0);
  std::vector<int64_t> idx(nb, 0);
  for (int64_t f = 0; f < total; ++f) {
    int64_t off = 0;
    for (int64_t d = 0; d < nb; ++d) off += idx[d] * stride[d];
    out[f] = off;
    for (int64_t d = nb - 1; d >= 0; --d) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
  return true;
}

struct Problem {
  int64_t l, s, e, ev;
  float scale;
  bool causal;
  const float* q;
  const float* k;
  const float* v;
  float* out;
  // The mask (nullptr: none), one of the two; mask rows may broadcast (row stride 0) and so
  // may its columns (column stride 0).
  const float* fmask = nullptr;
  const uint8_t* bmask = nullptr;
  int64_t mask_row_stride = 0, mask_col_stride = 0;
};

// Query rows [i0, i1) of one matrix: q/k/v/out/mask point at that batch's matrices.
COIL_ATTENTION_CLONES
void Block(const Problem& p, int64_t i0, int64_t i1, const float* __restrict q,
           const float* __restrict k, const float* __restrict v, float* __restrict out,
           const float* fmask, const uint8_t* bmask, float* __restrict kt,
           float* __restrict sc, float* __restrict acc, float* __restrict mx,
           float* __restrict sum) {
  const int64_t rows = i1 - i0, e = p.e, ev = p.ev;
  const float kNegInf = -std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < rows; ++r) {
    mx[r] = kNegInf;
    sum[r] = 0;
  }
  std::fill(acc, acc + rows * ev, 0.0f);
  // Causal: keys after the block's last row are masked for every row of it.
  const int64_t s_end = p.causal ? std::min(p.s, i1) : p.s;
  for (int64_t j0 = 0; j0 < s_end; j0 += kBlockK) {
    const int64_t cols = std::min(kBlockK, s_end - j0);
    // kt[c][j] = k[j0 + j][c]
    for (int64_t j = 0; j < cols; ++j) {
      const float* kr = k + (j0 + j) * e;
      for (int64_t c = 0; c < e; ++c) kt[c * kBlockK + j] = kr[c];
    }
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = i0 + r;
      float* s = sc + r * kBlockK;
      for (int64_t j = 0; j < cols; ++j) s[j] = 0;
      const float* qr = q + i * e;
      for (int64_t c = 0; c < e; ++c) {
        const float qc = qr[c];
        const float* kc = kt + c * kBlockK;
        for (int64_t j = 0; j < cols; ++j) s[j] += qc * kc[j];
      }
      for (int64_t j = 0; j < cols; ++j) s[j] *= p.scale;
      if (fmask != nullptr) {
        const float* m = fmask + i * p.mask_row_stride + j0 * p.mask_col_stride;
        for (int64_t j = 0; j < cols; ++j) s[j] += m[j * p.mask_col_stride];
      } else if (bmask != nullptr) {
        const uint8_t* m = bmask + i * p.mask_row_stride + j0 * p.mask_col_stride;
        for (int64_t j = 0; j < cols; ++j) {
          if (m[j * p.mask_col_stride] == 0) s[j] = kNegInf;
        }
      }
      if (p.causal) {
        for (int64_t j = std::max<int64_t>(0, i + 1 - j0); j < cols; ++j) s[j] = kNegInf;
      }
      float tile_max = kNegInf;
      bool nan = false;
      for (int64_t j = 0; j < cols; ++j) {
        tile_max = std::max(tile_max, s[j]);
        nan |= std::isnan(s[j]);
      }
      if (nan) tile_max = std::numeric_limits<float>::quiet_NaN();
      const float m_new = std::max(mx[r], tile_max);  // keeps NaN once mx[r] is NaN
      if (std::isnan(tile_max) || std::isnan(mx[r])) {
        mx[r] = std::numeric_limits<float>::quiet_NaN();
        continue;  // the row's result is NaN (written at the end)
      }
      if (m_new == kNegInf) continue;  // every score so far masked: nothing to add
      const float correction = std::exp(mx[r] - m_new);  // 0 when mx was -inf
      mx[r] = m_new;
      float tile_sum = 0;
      for (int64_t j = 0; j < cols; ++j) {
        s[j] = std::exp(s[j] - m_new);
        tile_sum += s[j];
      }
      sum[r] = sum[r] * correction + tile_sum;
      float* a = acc + r * ev;
      if (correction != 1.0f) {
        for (int64_t c = 0; c < ev; ++c) a[c] *= correction;
      }
      for (int64_t j = 0; j < cols; ++j) {
        const float pj = s[j];
        const float* vr = v + (j0 + j) * ev;
        for (int64_t c = 0; c < ev; ++c) a[c] += pj * vr[c];
      }
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    float* o = out + (i0 + r) * ev;
    const float* a = acc + r * ev;
    // No finite score (fully masked, or causal with more queries than keys... every key
    // masked) or a NaN score: NaN, as the reference's exp(-inf - -inf).
    if (std::isnan(mx[r]) || sum[r] == 0) {
      std::fill(o, o + ev, std::numeric_limits<float>::quiet_NaN());
      continue;
    }
    const float inv = 1.0f / sum[r];
    for (int64_t c = 0; c < ev; ++c) o[c] = a[c] * inv;
  }
}

absl::Status ShapeError(const ExternArgs& a) {
  std::vector<std::string> shapes;
  for (const ExternTensor& t : a.inputs) shapes.push_back(absl::StrJoin(t.shape, "x"));
  return absl::InvalidArgumentError(absl::StrCat(
      "aten.scaled_dot_product_attention: inconsistent shapes (q, k, v[, mask]) = (",
      absl::StrJoin(shapes, ", "), ") for output ", absl::StrJoin(a.output.shape, "x")));
}

}  // namespace

absl::StatusOr<bool> Attention(const ExternArgs& a) {
  if (a.inputs.size() < 3 || a.inputs.size() > 4) return false;
  absl::StatusOr<double> dropout = GetFloat(a.attrs, "dropout_p");
  if (!dropout.ok() || *dropout != 0) return false;
  absl::StatusOr<bool> causal = GetBool(a.attrs, "is_causal");
  absl::StatusOr<double> scale = GetFloat(a.attrs, "scale");
  if (!causal.ok() || !scale.ok()) return false;
  for (int i = 0; i < 3; ++i) {
    if (a.inputs[i].dtype != proto::FLOAT32 || a.inputs[i].shape.size() < 2) return false;
  }
  if (a.output.dtype != proto::FLOAT32 || a.output.shape.size() < 2) return false;
  const ExternTensor *mask = a.inputs.size() == 4 ? &a.inputs[3] : nullptr;
  if (mask != nullptr && mask->dtype != proto::FLOAT32 && mask->dtype != proto::BOOL) {
    return false;
  }
  const ExternTensor &q = a.inputs[0], &k = a.inputs[1], &v = a.inputs[2];
  const std::vector<int64_t>& os = a.output.shape;
  const int64_t rank = static_cast<int64_t>(os.size());
  std::vector<int64_t> batch(os.begin(), os.end() - 2);
  Problem p;
  p.l = q.shape[q.shape.size() - 2];
  p.e = q.shape.back();
  p.s = k.shape[k.shape.size() - 2];
  p.ev = v.shape.back();
  if (k.shape.back() != p.e || v.shape[v.shape.size() - 2] != p.s || os[rank - 2] != p.l ||
      os[rank - 1] != p.ev) {
    return ShapeError(a);
  }
  std::vector<int64_t> qo, ko, vo, mo;
  if (!BatchOffsets(q.shape, batch, p.l * p.e, qo) || !BatchOffsets(k.shape, batch, p.s * p.e, ko) ||
      !BatchOffsets(v.shape, batch, p.s * p.ev, vo)) {
    return ShapeError(a);
  }
  if (mask != nullptr) {
    // Pad the mask's shape to rank >= 2 and broadcast its last two dims against [L, S].
    std::vector<int64_t> ms = mask->shape;
    while (ms.size() < 2) ms.insert(ms.begin(), 1);
    const int64_t mr = ms[ms.size() - 2], mc = ms.back();
    if ((mr != p.l && mr != 1) || (mc != p.s && mc != 1)) return ShapeError(a);
    p.mask_col_stride = mc == 1 ? 0 : 1;
    p.mask_row_stride = mr == 1 ? 0 : mc;
    if (!BatchOffsets(ms, batch, mr * mc, mo)) return ShapeError(a);
    if (mask->dtype == proto::FLOAT32) {
      p.fmask = reinterpret_cast<const float*>(mask->data);
    } else {
      p.bmask = reinterpret_cast<const uint8_t*>(mask->data);
    }
  }
  p.scale = static_cast<float>(*scale != 0 ? *scale : 1.0 / std::sqrt(static_cast<double>(p.e)));
  p.causal = *causal;
  p.q = reinterpret_cast<const float*>(q.data);
  p.k = reinterpret_cast<const float*>(k.data);
  p.v = reinterpret_cast<const float*>(v.data);
  p.out = reinterpret_cast<float*>(a.output.data);
  const int64_t nb = static_cast<int64_t>(qo.size());
  const int64_t blocks = (p.l + kBlockQ - 1) / kBlockQ;
  if (nb == 0 || p.l == 0 || p.ev == 0) return true;
  if (p.s == 0) {  // no keys: an empty sum, as the reference gives
    std::fill(p.out, p.out + nb * p.l * p.ev, 0.0f);
    return true;
  }
  auto run = [&](int64_t begin, int64_t end) {
    std::vector<float> kt(std::max<int64_t>(p.e, 1) * kBlockK), sc(kBlockQ * kBlockK),
        acc(kBlockQ * p.ev), mx(kBlockQ), sum(kBlockQ);
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / blocks, i0 = (t % blocks) * kBlockQ;
      const int64_t i1 = std::min(p.l, i0 + kBlockQ);
      Block(p, i0, i1, p.q + qo[b], p.k + ko[b], p.v + vo[b], p.out + b * p.l * p.ev,
            p.fmask != nullptr ? p.fmask + mo[b] : nullptr,
            p.bmask != nullptr ? p.bmask + mo[b] : nullptr, kt.data(), sc.data(), acc.data(),
            mx.data(), sum.data());
    }
  };
  const int64_t tasks = nb * blocks;
  if (a.pool != nullptr) {
    a.pool->ParallelFor(tasks, 1, run);
  } else {
    run(0, tasks);
  }
  return true;
}

}  // namespace coil::cpu::internal
