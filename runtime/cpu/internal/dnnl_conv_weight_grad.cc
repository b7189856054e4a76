// aten.convolution_backward_weight through oneDNN's backward-weights primitive
// (dnnl_conv_weight_grad.h).
//
// oneDNN describes the weight gradient by the forward convolution it belongs to: src x
// [N, C, *], weights [O, C/G, *k] ([G, O/G, C/G, *k] grouped, the same bytes), dst [N, O, *].
// Its backward primitives need the forward primitive descriptor as a hint, so a plan makes the
// forward (training) descriptor first. Padding is symmetric (torch's); the right padding that
// oneDNN also wants is the same value, which gives torch's floor division for the output size.
#include "runtime/cpu/internal/dnnl_conv_weight_grad.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/attribute.h"
#include "runtime/cpu/internal/dnnl_plans.h"

namespace coil::cpu::dnnl_internal {
namespace {

struct WeightGradParams {
  size_t d = 0;  // spatial dims
  int64_t groups = 1;
  std::vector<int64_t> stride, padding, dilation;
};

// A oneDNN primitive, or (gemm set) im2col + sgemm.
struct WeightGradVariant {
  DnnlPrimitive prim;
  std::unique_ptr<Operand> x, g, w;  // src, diff_dst, diff_weights (the output)
  bool gemm = false;
};

struct WeightGradPlan {
  std::vector<WeightGradVariant> variants;  // candidates until measured, then the one chosen
};

struct WeightGradState : ExternState {
  PlanCache<WeightGradPlan> plans;
};

bool IsReference(dnnl_primitive_desc_t pd) {
  const char* impl = nullptr;
  return Api().primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success ||
         impl == nullptr || std::string(impl).rfind("ref", 0) == 0;
}

// The variant with activations in `x_desc` / `g_desc` (format `any`: oneDNN's choice), or none
// when oneDNN offers only its reference implementation.
std::optional<WeightGradVariant> MakeVariant(const WeightGradParams& p,
                                             const dnnl_memory_desc_t& x_desc,
                                             const dnnl_memory_desc_t& g_desc,
                                             const dnnl_memory_desc_t& x_plain,
                                             const dnnl_memory_desc_t& g_plain,
                                             const dnnl_memory_desc_t& w_plain) {
  std::vector<int64_t> wdims(w_plain.dims, w_plain.dims + w_plain.ndims);
  const dnnl_memory_desc_t w_any = Desc(wdims, dnnl_format_tag_any);
  dnnl_dims_t strides, dilates, pad;
  for (size_t i = 0; i < p.d; ++i) {
    strides[i] = p.stride[i];
    dilates[i] = p.dilation[i] - 1;  // oneDNN counts the gaps
    pad[i] = p.padding[i];
  }
  dnnl_convolution_desc_t fwd;
  if (Api().dilated_convolution_forward_desc_init(&fwd, dnnl_forward_training,
                                                  dnnl_convolution_direct, &x_desc, &w_any,
                                                  nullptr, &g_desc, strides, dilates, pad,
                                                  pad) != dnnl_success) {
    return std::nullopt;
  }
  dnnl_primitive_desc_t raw = nullptr;
  if (Api().primitive_desc_create(&raw, &fwd, nullptr, Api().engine, nullptr) != dnnl_success) {
    return std::nullopt;
  }
  DnnlPrimitiveDesc hint(raw);
  dnnl_convolution_desc_t bwd;
  if (Api().dilated_convolution_backward_weights_desc_init(
          &bwd, dnnl_convolution_direct, &x_desc, &w_any, nullptr, &g_desc, strides, dilates,
          pad, pad) != dnnl_success) {
    return std::nullopt;
  }
  raw = nullptr;
  if (Api().primitive_desc_create(&raw, &bwd, nullptr, Api().engine, hint.get()) !=
      dnnl_success) {
    return std::nullopt;
  }
  DnnlPrimitiveDesc pd(raw);
  if (IsReference(pd.get())) return std::nullopt;
  WeightGradVariant v;
  dnnl_primitive_t prim = nullptr;
  Check(Api().primitive_create(&prim, pd.get()), "primitive_create");
  v.prim.reset(prim);
  auto md = [&](dnnl_query_t what) { return QueryMd(pd.get(), what); };
  v.x = std::make_unique<Operand>(x_plain, md(dnnl_query_src_md), false);
  v.g = std::make_unique<Operand>(g_plain, md(dnnl_query_diff_dst_md), false);
  v.w = std::make_unique<Operand>(w_plain, md(dnnl_query_diff_weights_md), true);
  return v;
}

// ---- The gemm variant: im2col + one sgemm per group.
//
// With the gradient as gT [O, N*S] (S: the output's spatial size; n-major columns) and the
// input unfolded as cols [C * K, N*S] (K: the kernel's taps; row (c, k) holds the input element
// that tap k of channel c meets at each output position, zero in the padding), group j's
// weight gradient [O/G, C/G * K] is gT_j cols_j^T: one sgemm whose inner dimension is N*S.
// At small spatial sizes (resnet18's layers 3 and 4 at 32x32: S = 4 and 1) that is a thin,
// output-bound GEMM; the backward-weights primitive took about 2.5x the time of the same
// layer's deconvolution there (docs/benchmarks.md, "Training steps"). Which one is faster is
// measured per shape (MakePlan, ChooseVariant).

// Spatial sizes padded to 3 dims (leading dims of size 1).
struct Dims3 {
  int64_t in[3], out[3], k[3], stride[3], pad[3], dil[3];
};

Dims3 ToDims3(const ExternArgs& a, const WeightGradParams& p) {
  Dims3 d;
  const size_t lead = 3 - p.d;
  for (size_t i = 0; i < 3; ++i) {
    const bool real = i >= lead;
    const size_t j = i - lead;
    d.in[i] = real ? a.inputs[0].shape[2 + j] : 1;
    d.out[i] = real ? a.inputs[1].shape[2 + j] : 1;
    d.k[i] = real ? a.output.shape[2 + j] : 1;
    d.stride[i] = real ? p.stride[j] : 1;
    d.pad[i] = real ? p.padding[j] : 0;
    d.dil[i] = real ? p.dilation[j] : 1;
  }
  return d;
}

// The unfolded input's bytes (cols), which bound the gemm variant.
int64_t ColsBytes(const ExternArgs& a, const Dims3& d) {
  const int64_t n = a.inputs[0].shape[0], c = a.inputs[0].shape[1];
  return 4 * n * c * d.k[0] * d.k[1] * d.k[2] * d.out[0] * d.out[1] * d.out[2];
}

// Larger unfolded inputs are left to oneDNN (the scratch stays small).
constexpr int64_t kMaxColsBytes = int64_t{16} << 20;
// The gemm variant is a candidate only for outputs of at most this many spatial positions.
// Measured per shape on resnet18's weight gradients at 32x32, batch 8 (2-core VM, min of 60
// runs, `coil run --profile`; docs/benchmarks.md): 1x1 outputs 1.51 vs 7.99 ms (layer4's 3x3)
// and 0.71 vs 2.12 ms (its stride-2 entry); 2x2: 1.06 vs 0.90 ms; 4x4 and larger 2-5x slower
// than the blocked primitive. Larger outputs are not offered, so a noisy first-call
// measurement cannot pick it where it loses.
constexpr int64_t kMaxGemmOutputSpatial = 4;

// cols [C * K, N * S] from x [N, C, *in] (row-major, as ColsBytes counts).
void Im2Col(const float* x, int64_t n, int64_t c, const Dims3& d, float* cols) {
  const int64_t in_size = d.in[0] * d.in[1] * d.in[2];
  float* dst = cols;
  for (int64_t ci = 0; ci < c; ++ci) {
    for (int64_t k0 = 0; k0 < d.k[0]; ++k0) {
      for (int64_t k1 = 0; k1 < d.k[1]; ++k1) {
        for (int64_t k2 = 0; k2 < d.k[2]; ++k2) {
          for (int64_t ni = 0; ni < n; ++ni) {
            const float* src = x + (ni * c + ci) * in_size;
            for (int64_t o0 = 0; o0 < d.out[0]; ++o0) {
              const int64_t i0 = o0 * d.stride[0] - d.pad[0] + k0 * d.dil[0];
              if (i0 < 0 || i0 >= d.in[0]) {
                std::fill(dst, dst + d.out[1] * d.out[2], 0.0f);
                dst += d.out[1] * d.out[2];
                continue;
              }
              for (int64_t o1 = 0; o1 < d.out[1]; ++o1) {
                const int64_t i1 = o1 * d.stride[1] - d.pad[1] + k1 * d.dil[1];
                if (i1 < 0 || i1 >= d.in[1]) {
                  std::fill(dst, dst + d.out[2], 0.0f);
                  dst += d.out[2];
                  continue;
                }
                const float* row = src + (i0 * d.in[1] + i1) * d.in[2];
                for (int64_t o2 = 0; o2 < d.out[2]; ++o2) {
                  const int64_t i2 = o2 * d.stride[2] - d.pad[2] + k2 * d.dil[2];
                  *dst++ = i2 >= 0 && i2 < d.in[2] ? row[i2] : 0.0f;
                }
              }
            }
          }
        }
      }
    }
  }
}

void RunGemm(const ExternArgs& a, const WeightGradParams& p) {
  const ExternTensor &x = a.inputs[0], &g = a.inputs[1];
  const Dims3 d = ToDims3(a, p);
  const int64_t n = x.shape[0], c = x.shape[1], o = g.shape[1];
  const int64_t s = d.out[0] * d.out[1] * d.out[2], taps = d.k[0] * d.k[1] * d.k[2];
  float* cols = static_cast<float*>(Scratch(kScratchSrc, ColsBytes(a, d)));
  Im2Col(reinterpret_cast<const float*>(x.data), n, c, d, cols);
  // gT [O, N*S]: the gradient itself when N = 1.
  const float* gsrc = reinterpret_cast<const float*>(g.data);
  const float* gt = gsrc;
  if (n > 1) {
    float* t = static_cast<float*>(Scratch(kScratchWeights, sizeof(float) * o * n * s));
    for (int64_t oi = 0; oi < o; ++oi) {
      for (int64_t ni = 0; ni < n; ++ni) {
        std::copy_n(gsrc + (ni * o + oi) * s, s, t + (oi * n + ni) * s);
      }
    }
    gt = t;
  }
  const int64_t m = o / p.groups, cols_per_group = c / p.groups * taps, inner = n * s;
  float* out = reinterpret_cast<float*>(a.output.data);
  for (int64_t j = 0; j < p.groups; ++j) {
    Check(Api().sgemm('N', 'T', m, cols_per_group, inner, 1.0f, gt + j * m * inner, inner,
                      cols + j * cols_per_group * inner, inner, 0.0f,
                      out + j * m * cols_per_group, cols_per_group),
          "sgemm");
  }
}

// The gemm variant (for small outputs whose unfolded input fits kMaxColsBytes) and oneDNN's
// blocked and plain ones, unless COIL_CONV_LAYOUT forces one (=dnnl: oneDNN's two) or `measure` is false
// (blocked only); no variant when oneDNN has only reference code and gemm is out (the call
// declines).
std::unique_ptr<WeightGradPlan> MakePlan(const ExternArgs& a, const WeightGradParams& p,
                                         bool measure) {
  static const dnnl_format_tag_t kData[] = {dnnl_ncw, dnnl_nchw, dnnl_ncdhw};
  static const dnnl_format_tag_t kWeights[] = {dnnl_oiw, dnnl_oihw, dnnl_oidhw};
  static const dnnl_format_tag_t kGroupWeights[] = {dnnl_goiw, dnnl_goihw, dnnl_goidhw};
  const ExternTensor &x = a.inputs[0], &g = a.inputs[1], &w = a.output;
  const int64_t groups = p.groups;
  std::vector<int64_t> wdims = {w.shape[0]};
  if (groups > 1) wdims = {groups, w.shape[0] / groups};
  wdims.insert(wdims.end(), w.shape.begin() + 1, w.shape.end());
  const dnnl_memory_desc_t x_plain = Desc(x.shape, kData[p.d - 1]),
                           g_plain = Desc(g.shape, kData[p.d - 1]),
                           w_plain = Desc(wdims, groups > 1 ? kGroupWeights[p.d - 1]
                                                            : kWeights[p.d - 1]);
  const char* env = std::getenv("COIL_CONV_LAYOUT");
  const std::string forced = env != nullptr ? env : "";
  auto plan = std::make_unique<WeightGradPlan>();
  const Dims3 d3 = ToDims3(a, p);
  const bool gemm_fits = ColsBytes(a, d3) <= kMaxColsBytes;
  if ((forced == "gemm" && gemm_fits) ||
      (forced.empty() && measure && gemm_fits &&
       d3.out[0] * d3.out[1] * d3.out[2] <= kMaxGemmOutputSpatial)) {
    WeightGradVariant v;
    v.gemm = true;
    plan->variants.push_back(std::move(v));
  }
  const bool dnnl_too = forced != "gemm" || plan->variants.empty();
  if (dnnl_too && forced != "plain") {
    std::optional<WeightGradVariant> v =
        MakeVariant(p, Desc(x.shape, dnnl_format_tag_any), Desc(g.shape, dnnl_format_tag_any),
                    x_plain, g_plain, w_plain);
    if (v.has_value()) plan->variants.push_back(*std::move(v));
  }
  if (dnnl_too && forced != "blocked" && (measure || plan->variants.empty())) {
    std::optional<WeightGradVariant> v = MakeVariant(p, x_plain, g_plain, x_plain, g_plain, w_plain);
    if (v.has_value()) plan->variants.push_back(*std::move(v));
  }
  return plan;
}

void RunVariant(WeightGradVariant& v, const ExternArgs& a, const WeightGradParams& p) {
  if (v.gemm) {
    RunGemm(a, p);
    return;
  }
  v.x->Bind(a.inputs[0].data, kScratchSrc);
  v.g->Bind(a.inputs[1].data, kScratchWeights);
  v.w->Bind(a.output.data, kScratchDst);
  v.x->Fill();
  v.g->Fill();
  Execute(v.prim.get(), {{DNNL_ARG_SRC, v.x->inner()},
                         {DNNL_ARG_DIFF_DST, v.g->inner()},
                         {DNNL_ARG_DIFF_WEIGHTS, v.w->inner()}});
  v.w->Drain();
  Check(Api().stream_wait(Stream()), "stream_wait");
}

// Keeps the faster variant (best of 3 runs each on this call's data), as the convolution's
// plans do; every trial overwrites the output, so the last run's result stands.
void ChooseVariant(WeightGradPlan& plan, const ExternArgs& a, const WeightGradParams& p) {
  constexpr int kTrials = 3;
  if (plan.variants.size() < 2) return;
  std::vector<double> best(plan.variants.size(), 1e300);
  for (int t = 0; t < kTrials; ++t) {
    for (size_t v = 0; v < plan.variants.size(); ++v) {
      const auto start = std::chrono::steady_clock::now();
      RunVariant(plan.variants[v], a, p);
      best[v] = std::min(
          best[v], std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  }
  const size_t keep = std::min_element(best.begin(), best.end()) - best.begin();
  WeightGradVariant chosen = std::move(plan.variants[keep]);
  plan.variants.clear();
  plan.variants.push_back(std::move(chosen));
}

}  // namespace

absl::StatusOr<bool> ConvolutionWeightGrad(const ExternArgs& a) {
  if (a.inputs.size() != 2 || !AllF32(a)) return false;
  absl::StatusOr<int64_t> groups = GetInt(a.attrs, "groups");
  if (!groups.ok() || *groups < 1) return false;
  const ExternTensor &x = a.inputs[0], &g = a.inputs[1], &w = a.output;
  const size_t rank = w.shape.size();
  if (rank < 3 || rank > 5 || x.shape.size() != rank || g.shape.size() != rank) return false;
  WeightGradParams p;
  p.d = rank - 2;
  p.groups = *groups;
  if (!ExpandSpatial(a.attrs, "stride", p.d, 1, p.stride) ||
      !ExpandSpatial(a.attrs, "padding", p.d, 0, p.padding) ||
      !ExpandSpatial(a.attrs, "dilation", p.d, 1, p.dilation)) {
    return false;
  }
  const int64_t n = x.shape[0], c = x.shape[1], oc = g.shape[1];
  // Degenerate sizes (empty tensors) go to the reference kernel.
  if (x.numel() == 0 || g.numel() == 0 || w.numel() == 0) return false;
  bool ok = g.shape[0] == n && c % p.groups == 0 && oc % p.groups == 0 && w.shape[0] == oc &&
            w.shape[1] * p.groups == c;
  for (size_t i = 0; ok && i < p.d; ++i) {
    const int64_t extent = p.dilation[i] * (w.shape[2 + i] - 1) + 1;
    ok = x.shape[2 + i] + 2 * p.padding[i] >= extent &&
         g.shape[2 + i] == (x.shape[2 + i] + 2 * p.padding[i] - extent) / p.stride[i] + 1;
  }
  if (!ok) return ShapeError("aten.convolution_backward_weight", a);
  if (Dnnl() == nullptr) return false;
  double flops = 2.0 * g.numel() * (c / p.groups);
  for (size_t i = 0; i < p.d; ++i) flops *= w.shape[2 + i];
  const int threads = ThreadsFor(a, flops);
  Api().omp_set_num_threads(threads);
  bool ran = true;
  absl::StatusOr<bool> status = Guarded("aten.convolution_backward_weight", [&] {
    PlanKey key;
    AppendKey(key, x.shape);
    AppendKey(key, g.shape);
    AppendKey(key, w.shape);
    AppendKey(key, p.stride);
    AppendKey(key, p.padding);
    AppendKey(key, p.dilation);
    key.insert(key.end(), {p.groups, threads});
    WeightGradState* state = StateOf<WeightGradState>(a.state);
    std::unique_ptr<WeightGradPlan> one_off;
    // A one-off call (no state) measures nothing: it takes oneDNN's blocked layouts.
    WeightGradPlan* plan = FindPlan(state, std::move(key), one_off,
                                    [&] { return MakePlan(a, p, /*measure=*/state != nullptr); });
    if (plan->variants.empty()) {
      ran = false;  // only oneDNN's reference code: the float64 reference kernel runs
      return;
    }
    ChooseVariant(*plan, a, p);
    RunVariant(plan->variants.front(), a, p);
  });
  if (!status.ok()) return status;
  return ran;
}

}  // namespace coil::cpu::dnnl_internal
