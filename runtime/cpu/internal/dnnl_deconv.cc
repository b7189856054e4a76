// Transposed aten.convolution through oneDNN's deconvolution (dnnl_deconv.h).
//
// torch's conv_transpose maps x [N, C, *] with w [C, O/G, *k] to y [N, O, *] of size
// (in - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1. oneDNN's
// deconvolution takes the weight as [O, C, *k] ([G, O/G, C/G, *k] grouped) in any memory
// order, so torch's layout is its `iohw` (`giohw`) order read in place, and output_padding is
// a smaller right padding (padding - output_padding, negative when output_padding is larger:
// oneDNN then pads the output's far edge with the rows no input reaches).
#include "runtime/cpu/internal/dnnl_deconv.h"

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

struct DeconvParams {
  size_t d = 0;  // spatial dims
  int64_t groups = 1;
  std::vector<int64_t> stride, padding, dilation, output_padding;
  bool bias = false;
};

struct DeconvVariant {
  DnnlPrimitive prim;
  std::unique_ptr<Operand> x, w, out;
};

struct DeconvPlan {
  std::vector<DeconvVariant> variants;  // candidates until measured, then the one chosen
  DnnlMemory bias;
};

struct DeconvState : ExternState {
  PlanCache<DeconvPlan> plans;
  WeightCache weights;
};

// The variant with activations in `x_desc` / `o_desc` (format `any`: oneDNN's choice), or none
// when oneDNN offers only its reference implementation.
std::optional<DeconvVariant> MakeVariant(const DeconvParams& p, int64_t oc,
                                         const dnnl_memory_desc_t& x_desc,
                                         const dnnl_memory_desc_t& o_desc,
                                         const dnnl_memory_desc_t& x_plain,
                                         const dnnl_memory_desc_t& w_plain,
                                         const dnnl_memory_desc_t& o_plain) {
  std::vector<int64_t> wdims(w_plain.dims, w_plain.dims + w_plain.ndims);
  const dnnl_memory_desc_t w_any = Desc(wdims, dnnl_format_tag_any), b_desc = Desc({oc}, dnnl_x);
  dnnl_dims_t strides, dilates, pad_l, pad_r;
  for (size_t i = 0; i < p.d; ++i) {
    strides[i] = p.stride[i];
    dilates[i] = p.dilation[i] - 1;  // oneDNN counts the gaps
    pad_l[i] = p.padding[i];
    pad_r[i] = p.padding[i] - p.output_padding[i];
  }
  dnnl_deconvolution_desc_t desc;
  if (Api().dilated_deconvolution_forward_desc_init(
          &desc, dnnl_forward_inference, dnnl_deconvolution_direct, &x_desc, &w_any,
          p.bias ? &b_desc : nullptr, &o_desc, strides, dilates, pad_l, pad_r) != dnnl_success) {
    return std::nullopt;
  }
  dnnl_primitive_desc_t raw = nullptr;
  if (Api().primitive_desc_create(&raw, &desc, nullptr, Api().engine, nullptr) != dnnl_success) {
    return std::nullopt;
  }
  DnnlPrimitiveDesc pd(raw);
  const char* impl = nullptr;
  if (Api().primitive_desc_query(pd.get(), dnnl_query_impl_info_str, 0, &impl) != dnnl_success ||
      impl == nullptr || std::string(impl).rfind("ref", 0) == 0) {
    return std::nullopt;
  }
  DeconvVariant v;
  dnnl_primitive_t prim = nullptr;
  Check(Api().primitive_create(&prim, pd.get()), "primitive_create");
  v.prim.reset(prim);
  auto md = [&](dnnl_query_t what) { return QueryMd(pd.get(), what); };
  v.x = std::make_unique<Operand>(x_plain, md(dnnl_query_src_md), false);
  v.w = std::make_unique<Operand>(w_plain, md(dnnl_query_weights_md), false);
  v.out = std::make_unique<Operand>(o_plain, md(dnnl_query_dst_md), true);
  return v;
}

// Both variants unless COIL_CONV_LAYOUT forces one; no variant when oneDNN has only reference
// code (the call declines).
std::unique_ptr<DeconvPlan> MakePlan(const ExternArgs& a, const DeconvParams& p, bool measure) {
  static const dnnl_format_tag_t kData[] = {dnnl_ncw, dnnl_nchw, dnnl_ncdhw};
  // torch's [C, O, *k] as oneDNN's dims [O, C, *k]; grouped [G, O/G, C/G, *k] over [G, C/G, O/G, *k].
  static const dnnl_format_tag_t kWeights[] = {dnnl_bac, dnnl_bacd, dnnl_bacde};
  static const dnnl_format_tag_t kGroupWeights[] = {dnnl_acbd, dnnl_acbde, dnnl_acbdef};
  const ExternTensor &x = a.inputs[0], &w = a.inputs[1], &out = a.output;
  const int64_t g = p.groups, oc = out.shape[1];
  std::vector<int64_t> wdims = {oc, w.shape[0]};
  if (g > 1) wdims = {g, oc / g, w.shape[0] / g};
  wdims.insert(wdims.end(), w.shape.begin() + 2, w.shape.end());
  const dnnl_memory_desc_t x_plain = Desc(x.shape, kData[p.d - 1]),
                           w_plain = Desc(wdims, g > 1 ? kGroupWeights[p.d - 1] : kWeights[p.d - 1]),
                           o_plain = Desc(out.shape, kData[p.d - 1]);
  const char* env = std::getenv("COIL_CONV_LAYOUT");
  const std::string forced = env != nullptr ? env : "";
  auto plan = std::make_unique<DeconvPlan>();
  if (forced != "plain") {
    std::optional<DeconvVariant> v =
        MakeVariant(p, oc, Desc(x.shape, dnnl_format_tag_any),
                    Desc(out.shape, dnnl_format_tag_any), x_plain, w_plain, o_plain);
    if (v.has_value()) plan->variants.push_back(*std::move(v));
  }
  if (forced != "blocked" && (measure || plan->variants.empty())) {
    std::optional<DeconvVariant> v = MakeVariant(p, oc, x_plain, o_plain, x_plain, w_plain, o_plain);
    if (v.has_value()) plan->variants.push_back(*std::move(v));
  }
  if (plan->variants.empty()) return plan;  // declined, remembered for the site
  if (p.bias) plan->bias = Memory(Desc({oc}, dnnl_x), DNNL_MEMORY_NONE);
  return plan;
}

void RunVariant(DeconvVariant& v, DeconvPlan& plan, const ExternArgs& a, WeightCache* cache) {
  v.x->Bind(a.inputs[0].data, kScratchSrc);
  v.out->Bind(a.output.data, kScratchDst);
  v.x->Fill();
  std::vector<dnnl_exec_arg_t> args = {{DNNL_ARG_SRC, v.x->inner()},
                                       {DNNL_ARG_WEIGHTS, Weights(*v.w, a.inputs[1], cache)},
                                       {DNNL_ARG_DST, v.out->inner()}};
  if (plan.bias != nullptr) {
    SetData(plan.bias.get(), a.inputs[2].data);
    args.push_back({DNNL_ARG_BIAS, plan.bias.get()});
  }
  Execute(v.prim.get(), args);
  v.out->Drain();
  Check(Api().stream_wait(Stream()), "stream_wait");
}

// Keeps the faster variant (best of 3 runs each on this call's data), as the plain
// convolution's plans do.
void ChooseVariant(DeconvPlan& plan, const ExternArgs& a, WeightCache* cache) {
  constexpr int kTrials = 3;
  if (plan.variants.size() < 2) return;
  std::vector<double> best(plan.variants.size(), 1e300);
  for (int t = 0; t < kTrials; ++t) {
    for (size_t v = 0; v < plan.variants.size(); ++v) {
      const auto start = std::chrono::steady_clock::now();
      RunVariant(plan.variants[v], plan, a, cache);
      best[v] = std::min(
          best[v], std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  }
  const size_t keep = std::min_element(best.begin(), best.end()) - best.begin();
  for (size_t v = 0; v < plan.variants.size(); ++v) {
    if (v != keep && cache != nullptr) cache->Forget(plan.variants[v].w->inner_desc);
  }
  DeconvVariant chosen = std::move(plan.variants[keep]);
  plan.variants.clear();
  plan.variants.push_back(std::move(chosen));
}

}  // namespace

absl::StatusOr<bool> TransposedConvolution(const ExternArgs& a) {
  if (a.inputs.size() < 2 || a.inputs.size() > 3 || !AllF32(a)) return false;
  absl::StatusOr<int64_t> groups = GetInt(a.attrs, "groups");
  if (!groups.ok() || *groups < 1) return false;
  const ExternTensor &x = a.inputs[0], &w = a.inputs[1], &out = a.output;
  const size_t rank = w.shape.size();
  if (rank < 3 || rank > 5 || x.shape.size() != rank || out.shape.size() != rank) return false;
  DeconvParams p;
  p.d = rank - 2;
  p.groups = *groups;
  p.bias = a.inputs.size() == 3;
  if (!ExpandSpatial(a.attrs, "stride", p.d, 1, p.stride) ||
      !ExpandSpatial(a.attrs, "padding", p.d, 0, p.padding) ||
      !ExpandSpatial(a.attrs, "dilation", p.d, 1, p.dilation) ||
      !ExpandSpatial(a.attrs, "output_padding", p.d, 0, p.output_padding)) {
    return false;
  }
  const int64_t g = p.groups, n = x.shape[0], c = x.shape[1];
  if (x.numel() == 0 || w.numel() == 0 || out.numel() == 0 || c % g != 0) return false;
  const int64_t oc = w.shape[1] * g;
  bool ok = w.shape[0] == c && out.shape[0] == n && out.shape[1] == oc;
  for (size_t i = 0; ok && i < p.d; ++i) {
    ok = out.shape[2 + i] == (x.shape[2 + i] - 1) * p.stride[i] - 2 * p.padding[i] +
                                 p.dilation[i] * (w.shape[2 + i] - 1) + p.output_padding[i] + 1;
  }
  if (p.bias) ok = ok && a.inputs[2].shape.size() == 1 && a.inputs[2].shape[0] == oc;
  if (!ok) return ShapeError("aten.convolution (transposed)", a);
  if (Dnnl() == nullptr) return false;
  double flops = 2.0 * x.numel() * (oc / g);
  for (size_t i = 0; i < p.d; ++i) flops *= w.shape[2 + i];
  const int threads = ThreadsFor(a, flops);
  Api().omp_set_num_threads(threads);
  bool ran = true;
  absl::StatusOr<bool> status = Guarded("aten.convolution (transposed)", [&] {
    PlanKey key;
    AppendKey(key, x.shape);
    AppendKey(key, w.shape);
    AppendKey(key, p.stride);
    AppendKey(key, p.padding);
    AppendKey(key, p.dilation);
    AppendKey(key, p.output_padding);
    key.insert(key.end(), {g, p.bias, threads});
    DeconvState* state = StateOf<DeconvState>(a.state);
    WeightCache* cache = state != nullptr ? &state->weights : nullptr;
    std::unique_ptr<DeconvPlan> one_off;
    // A one-off call (no state) measures nothing: it takes oneDNN's blocked layouts.
    DeconvPlan* plan = FindPlan(state, std::move(key), one_off,
                                [&] { return MakePlan(a, p, /*measure=*/state != nullptr); });
    if (plan->variants.empty()) {
      ran = false;  // only oneDNN's reference code: the float64 reference kernel runs
      return;
    }
    ChooseVariant(*plan, a, cache);
    RunVariant(plan->variants.front(), *plan, a, cache);
  });
  if (!status.ok()) return status;
  return ran;
}

}  // namespace coil::cpu::dnnl_internal
