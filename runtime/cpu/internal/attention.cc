// The fused CPU attention kernel (attention.h).
#include "runtime/cpu/internal/attention.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/cpu/internal/attention_block.h"
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

// Query rows [i0, i1) of one matrix. The score and P.V loops run over contiguous keys / value
// columns (K packed transposed), so they vectorize; so does the exp (AttentionExp).
COIL_ATTENTION_CLONES
void GenericBlock(const AttentionProblem& p, int64_t i0, int64_t i1, const float* __restrict q,
                  const float* __restrict kt, const float* __restrict v, float* __restrict out,
                  const float* fmask, const uint8_t* bmask, float* __restrict sc,
                  float* __restrict acc, float* __restrict mx, float* __restrict sum) {
  constexpr int64_t kBlockK = kAttentionBlockK;
  const int64_t rows = i1 - i0, e = p.e, ev = p.ev, kts = p.kt_stride;
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
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = i0 + r;
      float* s = sc + r * kBlockK;
      for (int64_t j = 0; j < cols; ++j) s[j] = 0;
      const float* qr = q + i * e;
      for (int64_t c = 0; c < e; ++c) {
        const float qc = qr[c];
        const float* kc = kt + c * kts + j0;
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
      const float correction = AttentionExp(mx[r] - m_new);  // 0 when mx was -inf
      mx[r] = m_new;
      float tile_sum = 0;
      for (int64_t j = 0; j < cols; ++j) {
        s[j] = AttentionExp(s[j] - m_new);
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
  AttentionFinishRows(rows, ev, acc, mx, sum, out + i0 * ev);
}

// K [S, E] of one matrix into kt [E, kt_stride], zero past S.
void PackKeys(const float* k, int64_t s, int64_t e, int64_t kts, float* kt) {
  for (int64_t c = 0; c < e; ++c) {
    float* row = kt + c * kts;
    for (int64_t j = 0; j < s; ++j) row[j] = k[j * e + c];
    std::fill(row + s, row + kts, 0.0f);
  }
}

// Scratch kept across calls of one call site (the packed keys; a fresh vector per call would
// page-fault its megabytes in every time).
struct AttentionState : ExternState {
  std::vector<float> kt;
};

// COIL_CPU_ATTENTION_KERNEL=generic keeps the plain C++ block on an AVX-512 CPU (tests and
// A/B measurements); read per call.
bool UseAvx512() {
  const char* env = std::getenv("COIL_CPU_ATTENTION_KERNEL");
  if (env != nullptr && std::string_view(env) == "generic") return false;
  return AttentionHasAvx512();
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
  AttentionProblem p;
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
  const float* fmask = nullptr;
  const uint8_t* bmask = nullptr;
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
      fmask = reinterpret_cast<const float*>(mask->data);
    } else {
      bmask = reinterpret_cast<const uint8_t*>(mask->data);
    }
  }
  p.scale = static_cast<float>(*scale != 0 ? *scale : 1.0 / std::sqrt(static_cast<double>(p.e)));
  p.causal = *causal;
  p.kt_stride = (p.s + kAttentionBlockK - 1) / kAttentionBlockK * kAttentionBlockK;
  const float* qd = reinterpret_cast<const float*>(q.data);
  const float* kd = reinterpret_cast<const float*>(k.data);
  const float* vd = reinterpret_cast<const float*>(v.data);
  float* od = reinterpret_cast<float*>(a.output.data);
  const int64_t nb = static_cast<int64_t>(qo.size());
  const int64_t blocks = (p.l + kAttentionBlockQ - 1) / kAttentionBlockQ;
  if (nb == 0 || p.l == 0 || p.ev == 0) return true;
  if (p.s == 0) {  // no keys: an empty sum, as the reference gives
    std::fill(od, od + nb * p.l * p.ev, 0.0f);
    return true;
  }
  // Pack each distinct K matrix transposed once (a broadcast K is packed once), in parallel.
  std::vector<int64_t> kslot(nb), kfirst;
  absl::flat_hash_map<int64_t, int64_t> slot_of;
  for (int64_t b = 0; b < nb; ++b) {
    auto [it, fresh] = slot_of.try_emplace(ko[b], static_cast<int64_t>(kfirst.size()));
    if (fresh) kfirst.push_back(ko[b]);
    kslot[b] = it->second;
  }
  std::vector<float> local;
  std::vector<float>* kt = &local;
  if (a.state != nullptr) {
    if (dynamic_cast<AttentionState*>(a.state->get()) == nullptr) {
      *a.state = std::make_unique<AttentionState>();
    }
    kt = &static_cast<AttentionState*>(a.state->get())->kt;
  }
  const int64_t kt_size = std::max<int64_t>(p.e, 1) * p.kt_stride;
  const int64_t kt_need = static_cast<int64_t>(kfirst.size()) * kt_size;
  if (static_cast<int64_t>(kt->size()) < kt_need) kt->resize(kt_need);
  float* ktd = kt->data();
  auto pack = [&](int64_t begin, int64_t end) {
    for (int64_t m = begin; m < end; ++m) PackKeys(kd + kfirst[m], p.s, p.e, p.kt_stride, ktd + m * kt_size);
  };
  const int64_t packs = static_cast<int64_t>(kfirst.size());
  if (a.pool != nullptr && packs > 1) {
    a.pool->ParallelFor(packs, 1, pack);
  } else {
    pack(0, packs);
  }
  const bool avx512 = UseAvx512();
  auto run = [&](int64_t begin, int64_t end) {
    std::vector<float> sc(kAttentionBlockQ * kAttentionBlockK), acc(kAttentionBlockQ * p.ev),
        mx(kAttentionBlockQ), sum(kAttentionBlockQ);
    for (int64_t t = begin; t < end; ++t) {
      // Causal blocks further down have more keys: hand those out first.
      const int64_t bi = p.causal ? blocks - 1 - t % blocks : t % blocks;
      const int64_t b = t / blocks, i0 = bi * kAttentionBlockQ;
      const int64_t i1 = std::min(p.l, i0 + kAttentionBlockQ);
      AttentionBlockArgs args{qd + qo[b], ktd + kslot[b] * kt_size, vd + vo[b], od + b * p.l * p.ev,
                              fmask != nullptr ? fmask + mo[b] : nullptr,
                              bmask != nullptr ? bmask + mo[b] : nullptr,
                              sc.data(), acc.data(), mx.data(), sum.data()};
      if (avx512) {
        AttentionBlockAvx512(p, i0, i1, args);
      } else {
        AttentionBlock(p, i0, i1, args);
      }
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

void AttentionBlock(const AttentionProblem& p, int64_t i0, int64_t i1,
                    const AttentionBlockArgs& b) {
  GenericBlock(p, i0, i1, b.q, b.kt, b.v, b.out, b.fmask, b.bmask, b.sc, b.acc, b.mx, b.sum);
}

}  // namespace coil::cpu::internal
