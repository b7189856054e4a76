// aten.convolution through oneDNN (dnnl_conv.h): plans with a blocked and a plain variant,
// the faster kept after the first call.
#include "runtime/cpu/internal/dnnl_conv.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/casts.h"
#include "absl/strings/str_cat.h"
#include "ir/attribute.h"
#include "ir/channels_last.h"
#include "ir/dtype.h"
#include "runtime/cpu/internal/conv_direct.h"
#include "runtime/cpu/internal/dnnl_plans.h"
#include "runtime/cpu/internal/gemv.h"
#include "runtime/cpu/thread_pool.h"

namespace coil::cpu::dnnl_internal {
namespace {

struct ConvParams {
  size_t d = 0;  // spatial dims
  int64_t groups = 1;
  std::vector<int64_t> stride, padding, dilation;
  bool bias = false;
  // The activations' logical NC[D]HW dims and whether each is stored channels-last
  // (ir/channels_last.h: the buffer's shape is then [N, H, W, C]).
  std::vector<int64_t> x_dims, o_dims;
  bool x_nhwc = false, o_nhwc = false;
  // Element types (dnnl_plans.h): all f32, or bf16 operands with a bf16 or f32 output and bias.
  PrimitiveTypes types;
};

// One way to run the convolution: activations in oneDNN's blocked layouts (reordered in and
// out on every call) or in the schedule's plain NC[D]HW (no reorders; oneDNN's GEMM-based
// kernels). Weights are in the primitive's layout either way.
struct ConvVariant {
  std::string name;
  DnnlPrimitive prim;
  std::unique_ptr<Operand> x, w, out;
};

struct ConvPlan {
  std::vector<ConvVariant> variants;  // candidates until measured, then the one chosen
  DnnlMemory bias;
  // Fused epilogue (post-ops): each residual's memory (plain layout) and post-op index; a
  // residual that is the destination itself (written in place) is a `sum` post-op instead.
  std::vector<std::pair<int, DnnlMemory>> residuals;
  // An epilogue was asked for, or the call is bf16, and no implementation (other than
  // oneDNN's reference) takes it: the call declines and the generated epilogue (or the
  // reference kernel) runs, unless a direct kernel applies.
  bool unfusable = false;
  // conv_direct.h's kernel was measured faster than every oneDNN variant (which are dropped).
  bool direct = false;
};

struct ConvState : ExternState {
  PlanCache<ConvPlan> plans;
  WeightCache weights;
  internal::GemvWeights gemv;  // 1x1 convolutions of a 1x1 input (gemv.h)
  internal::DirectConvWeights direct;  // depthwise and pointwise NHWC ones (conv_direct.h)
};

// The shape conv_direct.h's kernels see, when one of them applies to this call: 2-D, an NHWC
// output, constant weights, a call site with state and a pool (ClassifyDirectConv decides
// whether an NCHW input is taken).
std::optional<internal::DirectConvShape> DirectShape(const ExternArgs& a, const ConvParams& p) {
  if (p.d != 2 || !p.o_nhwc || !p.types.f32() || !a.inputs[1].constant || a.state == nullptr ||
      a.pool == nullptr || internal::GetDirectConvMode() == internal::DirectConvMode::kOff) {
    return std::nullopt;
  }
  internal::DirectConvShape s;
  s.n = p.x_dims[0];
  s.c = p.x_dims[1];
  s.h = p.x_dims[2];
  s.w = p.x_dims[3];
  s.oc = p.o_dims[1];
  s.oh = p.o_dims[2];
  s.ow = p.o_dims[3];
  s.kh = a.inputs[1].shape[2];
  s.kw = a.inputs[1].shape[3];
  s.stride_h = p.stride[0];
  s.stride_w = p.stride[1];
  s.pad_h = p.padding[0];
  s.pad_w = p.padding[1];
  s.dil_h = p.dilation[0];
  s.dil_w = p.dilation[1];
  s.groups = p.groups;
  s.input_nchw = !p.x_nhwc;
  if (internal::ClassifyDirectConv(s) == internal::DirectConvKind::kNone) return std::nullopt;
  return s;
}

// Runs the direct kernel (packing the weights on the site's first call); false when the packed
// copy cannot be allocated (oneDNN runs instead).
bool RunDirect(const ExternArgs& a, const internal::DirectConvShape& s, bool bias,
               absl::Span<const ExternEpilogueStep> epilogue) {
  ConvState* state = StateOf<ConvState>(a.state);
  const ExternTensor& w = a.inputs[1];
  if (!state->direct.Holds(w.data, s) && !state->direct.Pack(w.data, s)) return false;
  internal::RunDirectConv(s, reinterpret_cast<const float*>(a.inputs[0].data), state->direct,
                          bias ? reinterpret_cast<const float*>(a.inputs[2].data) : nullptr,
                          epilogue, reinterpret_cast<float*>(a.output.data), a.pool,
                          a.scaled_input);
  return true;
}

// A convolution that is a small-M product (gemv.h): groups 1, a 1x1 kernel over a 1x1 input
// without padding (a squeeze-excitation block's), constant weights, a batch of at most
// kGemvMaxRows: out[n, o] = x[n, :] . w[o, :] + bias[o], NCHW and NHWC alike. False when the
// call is not one.
absl::StatusOr<bool> ConvolutionAsGemv(const ExternArgs& a, const ConvParams& p,
                                       absl::Span<const ExternEpilogueStep> epilogue) {
  const ExternTensor &x = a.inputs[0], &w = a.inputs[1];
  if (p.groups != 1 || !p.types.f32() || !w.constant || a.state == nullptr ||
      a.pool == nullptr) {
    return false;
  }
  for (size_t i = 0; i < p.d; ++i) {
    if (p.x_dims[2 + i] != 1 || w.shape[2 + i] != 1 || p.padding[i] != 0) return false;
  }
  const int64_t batch = p.x_dims[0], c = p.x_dims[1], oc = w.shape[0];
  if (!internal::UseGemv(batch, c, oc, a.pool->num_threads())) return false;
  ConvState* state = StateOf<ConvState>(a.state);
  if (!state->gemv.Holds(w.data, c, oc, internal::GemvWeights::kNK) &&
      !state->gemv.Pack(w.data, c, oc, internal::GemvWeights::kNK)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("aten.convolution: out of memory packing a ", Shape(w), " weight"));
  }
  internal::Gemv(reinterpret_cast<const float*>(x.data), batch, c, state->gemv,
                 p.bias ? reinterpret_cast<const float*>(a.inputs[2].data) : nullptr, epilogue,
                 reinterpret_cast<float*>(a.output.data), oc, a.pool);
  return true;
}

// Which variants a new plan considers: COIL_CONV_LAYOUT=blocked or =plain forces one (for
// reproducible timings or debugging), anything else measures both on the first call.
enum class LayoutChoice { kMeasure, kBlocked, kPlain };
LayoutChoice ConvLayoutChoice() {
  const char* v = std::getenv("COIL_CONV_LAYOUT");
  if (v != nullptr && std::string(v) == "blocked") return LayoutChoice::kBlocked;
  if (v != nullptr && std::string(v) == "plain") return LayoutChoice::kPlain;
  return LayoutChoice::kMeasure;
}

// Whether `step` adds the destination's own bytes: a residual add written in place over the
// residual (inductor's extern_epilogue_in_place), which oneDNN's `sum` post-op accumulates into.
bool AddsDestination(const ExternEpilogueStep& step, const ExternTensor& out) {
  return step.kind == ExternEpilogueStep::kAdd && step.other != nullptr &&
         step.other->data == out.data;
}

// Post-ops for `epilogue` (nullptr when empty); the residuals' descriptors are `o_plain`, a
// residual that is `out` itself a `sum`.
DnnlAttr PostOpsAttr(absl::Span<const ExternEpilogueStep> epilogue,
                     const dnnl_memory_desc_t& o_plain, const ExternTensor& out) {
  if (epilogue.empty()) return nullptr;
  dnnl_post_ops_t raw_ops = nullptr;
  Check(Api().post_ops_create(&raw_ops), "post_ops_create");
  DnnlPostOps ops(raw_ops);
  for (const ExternEpilogueStep& step : epilogue) {
    switch (step.kind) {
      case ExternEpilogueStep::kAdd:
        if (AddsDestination(step, out)) {
          Check(Api().post_ops_append_sum(ops.get(), 1.0f), "post_ops_append_sum");
        } else {
          Check(Api().post_ops_append_binary(ops.get(), dnnl_binary_add, &o_plain),
                "post_ops_append_binary");
        }
        break;
      case ExternEpilogueStep::kRelu:
        Check(Api().post_ops_append_eltwise(ops.get(), 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f),
              "post_ops_append_eltwise");
        break;
      case ExternEpilogueStep::kClip:
        Check(Api().post_ops_append_eltwise(ops.get(), 1.0f, dnnl_eltwise_clip, step.lo, step.hi),
              "post_ops_append_eltwise");
        break;
      case ExternEpilogueStep::kHardswish:
        Check(Api().post_ops_append_eltwise(ops.get(), 1.0f, dnnl_eltwise_hardswish, 0.0f, 0.0f),
              "post_ops_append_eltwise");
        break;
      case ExternEpilogueStep::kBias:  // aten.mm's alone (extern_epilogue.h)
      case ExternEpilogueStep::kGeluErf:
      case ExternEpilogueStep::kGeluTanh:
        Check(dnnl_unimplemented, "post-op of an aten.mm epilogue on a convolution");
        break;
    }
  }
  dnnl_primitive_attr_t raw_attr = nullptr;
  Check(Api().primitive_attr_create(&raw_attr), "primitive_attr_create");
  DnnlAttr attr(raw_attr);
  Check(Api().primitive_attr_set_post_ops(attr.get(), ops.get()), "primitive_attr_set_post_ops");
  return attr;
}

// The variant whose activations are described by `x_desc` / `o_desc` (format `any`: blocked),
// or none when oneDNN has only its reference implementation for it.
std::optional<ConvVariant> MakeVariant(const ExternArgs& a, const ConvParams& p,
                                       const dnnl_memory_desc_t& x_desc,
                                       const dnnl_memory_desc_t& o_desc,
                                       const dnnl_memory_desc_t& x_plain,
                                       const dnnl_memory_desc_t& w_plain,
                                       const dnnl_memory_desc_t& o_plain,
                                       const_dnnl_primitive_attr_t attr, const char* name) {
  const int64_t oc = a.inputs[1].shape[0];
  std::vector<int64_t> wdims(w_plain.dims, w_plain.dims + w_plain.ndims);
  const dnnl_memory_desc_t w_any = Desc(wdims, dnnl_format_tag_any, p.types.src),
                           b_desc = Desc({oc}, dnnl_x, p.types.bias);
  dnnl_dims_t strides, dilates, pad;
  for (size_t i = 0; i < p.d; ++i) {
    strides[i] = p.stride[i];
    dilates[i] = p.dilation[i] - 1;  // oneDNN counts the gaps
    pad[i] = p.padding[i];
  }
  dnnl_convolution_desc_t desc;
  Check(Api().dilated_convolution_forward_desc_init(
            &desc, dnnl_forward_inference, dnnl_convolution_direct, &x_desc, &w_any,
            p.bias ? &b_desc : nullptr, &o_desc, strides, dilates, pad, pad),
        "dilated_convolution_forward_desc_init");
  std::string impl;
  DnnlPrimitiveDesc pd = FastPrimitiveDesc(&desc, attr, &impl);
  if (pd == nullptr) return std::nullopt;
  ConvVariant v;
  v.name = absl::StrCat(name, " (", impl, ")");
  dnnl_primitive_t prim = nullptr;
  Check(Api().primitive_create(&prim, pd.get()), "primitive_create");
  v.prim.reset(prim);
  auto md = [&](dnnl_query_t what) { return QueryMd(pd.get(), what); };
  v.x = std::make_unique<Operand>(x_plain, md(dnnl_query_src_md), false);
  v.w = std::make_unique<Operand>(w_plain, md(dnnl_query_weights_md), false);
  v.out = std::make_unique<Operand>(o_plain, md(dnnl_query_dst_md), true);
  return v;
}

std::unique_ptr<ConvPlan> MakeConvPlan(const ExternArgs& a, const ConvParams& p,
                                       LayoutChoice choice,
                                       absl::Span<const ExternEpilogueStep> epilogue) {
  static const dnnl_format_tag_t kData[] = {dnnl_ncw, dnnl_nchw, dnnl_ncdhw};
  static const dnnl_format_tag_t kWeights[] = {dnnl_oiw, dnnl_oihw, dnnl_oidhw};
  static const dnnl_format_tag_t kGroupWeights[] = {dnnl_goiw, dnnl_goihw, dnnl_goidhw};
  const ExternTensor& w = a.inputs[1];
  const int64_t g = p.groups, oc = w.shape[0];
  std::vector<int64_t> wdims = {oc};
  if (g > 1) wdims = {g, oc / g};
  wdims.insert(wdims.end(), w.shape.begin() + 1, w.shape.end());
  const dnnl_format_tag_t w_tag = g > 1 ? kGroupWeights[p.d - 1] : kWeights[p.d - 1];
  // "plain": the activations as the schedule stores them (NC[D]HW, or NHWC for channels-last
  // buffers, which is also oneDNN's own layout for f32 on AVX-512).
  const PrimitiveTypes& t = p.types;
  const dnnl_memory_desc_t x_plain = Desc(p.x_dims, p.x_nhwc ? dnnl_nhwc : kData[p.d - 1], t.src),
                           w_plain = Desc(wdims, w_tag, t.src),
                           o_plain = Desc(p.o_dims, p.o_nhwc ? dnnl_nhwc : kData[p.d - 1], t.dst);
  auto plan = std::make_unique<ConvPlan>();
  const DnnlAttr attr = PostOpsAttr(epilogue, o_plain, a.output);
  const bool sum = std::any_of(epilogue.begin(), epilogue.end(), [&](const ExternEpilogueStep& s) {
    return AddsDestination(s, a.output);
  });
  if (choice != LayoutChoice::kPlain) {
    std::optional<ConvVariant> blocked =
        MakeVariant(a, p, Desc(p.x_dims, dnnl_format_tag_any, t.src),
                    Desc(p.o_dims, dnnl_format_tag_any, t.dst), x_plain, w_plain, o_plain,
                    attr.get(), "blocked");
    if (blocked.has_value()) plan->variants.push_back(*std::move(blocked));
  }
  if (choice != LayoutChoice::kBlocked) {
    std::optional<ConvVariant> plain =
        MakeVariant(a, p, x_plain, o_plain, x_plain, w_plain, o_plain, attr.get(), "plain");
    if (plain.has_value()) plan->variants.push_back(*std::move(plain));
  }
  // A `sum` reads the destination as the primitive lays it out: only variants that write the
  // plain buffer directly (no reorder out) see the residual there.
  if (sum) {
    plan->variants.erase(std::remove_if(plan->variants.begin(), plan->variants.end(),
                                        [](const ConvVariant& v) { return v.out->blocked != nullptr; }),
                         plan->variants.end());
  }
  // bf16 with no fast implementation (a CPU without AVX-512) declines as an epilogue does.
  if (plan->variants.empty() && (attr != nullptr || !t.f32())) {
    plan->unfusable = true;
    return plan;
  }
  for (size_t i = 0; i < epilogue.size(); ++i) {
    if (epilogue[i].kind == ExternEpilogueStep::kAdd && !AddsDestination(epilogue[i], a.output)) {
      plan->residuals.emplace_back(static_cast<int>(i), Memory(o_plain, DNNL_MEMORY_NONE));
    }
  }
  if (plan->variants.empty()) {
    // Only reference implementations (or a forced layout oneDNN lacks): take the blocked
    // request as oneDNN offers it.
    std::optional<ConvVariant> any =
        MakeVariant(a, p, Desc(p.x_dims, dnnl_format_tag_any), Desc(p.o_dims, dnnl_format_tag_any),
                    x_plain, w_plain, o_plain, nullptr, "blocked");
    if (!any.has_value()) throw DnnlFailure{"no convolution implementation"};
    plan->variants.push_back(*std::move(any));
  }
  if (p.bias) plan->bias = Memory(Desc({oc}, dnnl_x, t.bias), DNNL_MEMORY_NONE);
  return plan;
}

void RunVariant(ConvVariant& v, ConvPlan& plan, const ExternArgs& a,
                absl::Span<const ExternEpilogueStep> epilogue, WeightCache* cache) {
  const ExternTensor &x = a.inputs[0], &w = a.inputs[1], &out = a.output;
  v.x->Bind(x.data, kScratchSrc);
  v.out->Bind(out.data, kScratchDst);
  v.x->Fill();
  dnnl_memory_t weights = Weights(*v.w, w, cache);
  std::vector<dnnl_exec_arg_t> args = {{DNNL_ARG_SRC, v.x->inner()},
                                       {DNNL_ARG_WEIGHTS, weights},
                                       {DNNL_ARG_DST, v.out->inner()}};
  if (plan.bias != nullptr) {
    SetData(plan.bias.get(), a.inputs[2].data);
    args.push_back({DNNL_ARG_BIAS, plan.bias.get()});
  }
  for (auto& [index, memory] : plan.residuals) {
    SetData(memory.get(), epilogue[index].other->data);
    args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1, memory.get()});
  }
  Execute(v.prim.get(), args);
  v.out->Drain();
  Check(Api().stream_wait(Stream()), "stream_wait");
}

// Keeps the fastest variant of a new plan: each runs kTrials times on this call's data (the
// best time counts, so a preempted trial does not decide), the others and their cached weights
// are dropped. Which layout wins depends on the shape and the CPU: on a 2-core Zen 4, 1x1
// convolutions ran 1.4-3.5x faster plain at batch 1 (far more at batch 8), 3x3 ones blocked.
// `direct` (null: none) is conv_direct.h's kernel as one more candidate; when it wins every
// oneDNN variant is dropped and plan.direct set. With `accumulates` (an epilogue that adds the
// destination's own bytes: a `sum`), every trial and the run after them start from a copy of
// the output's bytes as the call found them.
void ChooseVariant(ConvPlan& plan, const ExternArgs& a,
                   absl::Span<const ExternEpilogueStep> epilogue, WeightCache* cache,
                   const std::function<void()>* direct, bool accumulates) {
  constexpr int kTrials = 3;
  const size_t candidates = plan.variants.size() + (direct != nullptr ? 1 : 0);
  if (candidates < 2 || plan.direct) return;
  std::vector<char> saved;
  if (accumulates) {
    saved.assign(a.output.data,
                 a.output.data + a.output.numel() * static_cast<int64_t>(ElementSize(a.output.dtype)));
  }
  auto restore = [&] {
    if (accumulates) std::memcpy(a.output.data, saved.data(), saved.size());
  };
  std::vector<double> best(candidates, 1e300);
  for (int t = 0; t < kTrials; ++t) {
    for (size_t v = 0; v < candidates; ++v) {
      restore();
      const auto start = std::chrono::steady_clock::now();
      if (v < plan.variants.size()) {
        RunVariant(plan.variants[v], plan, a, epilogue, cache);
      } else {
        (*direct)();
      }
      best[v] = std::min(
          best[v], std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  }
  restore();
  const size_t keep = std::min_element(best.begin(), best.end()) - best.begin();
  for (size_t v = 0; v < plan.variants.size(); ++v) {
    if (v != keep && cache != nullptr) cache->Forget(plan.variants[v].w->inner_desc);
  }
  if (keep == plan.variants.size()) {
    plan.variants.clear();
    plan.direct = true;
    return;
  }
  ConvVariant chosen = std::move(plan.variants[keep]);
  plan.variants.clear();
  plan.variants.push_back(std::move(chosen));
}

// `a`'s parameters into `p`: false for a call no implementation here takes (the reference
// kernel's), an error for shapes that are not the convolution's.
absl::StatusOr<bool> ParseConv(const ExternArgs& a, ConvParams& p) {
  if (a.inputs.size() < 2 || a.inputs.size() > 3 || !GetPrimitiveTypes(a, p.types)) return false;
  absl::StatusOr<bool> transposed = GetBool(a.attrs, "transposed");
  absl::StatusOr<int64_t> groups = GetInt(a.attrs, "groups");
  if (!transposed.ok() || *transposed || !groups.ok() || *groups < 1) return false;
  const ExternTensor &x = a.inputs[0], &w = a.inputs[1], &out = a.output;
  const size_t rank = w.shape.size();
  if (rank < 3 || rank > 5 || x.shape.size() != rank || out.shape.size() != rank) return false;
  if (HasAttr(a.attrs, kChannelsLastAttr)) {
    AttrMap attrs = a.attrs;
    absl::StatusOr<ChannelsLast> cl = TakeChannelsLast(attrs);
    if (!cl.ok()) return cl.status();
    if (cl->any() && rank != 4) {
      return absl::InvalidArgumentError(absl::StrCat(
          "aten.convolution: attribute '", kChannelsLastAttr, "' on a ", rank - 2,
          "-D convolution (only 2-D ones are stored channels-last)"));
    }
    p.x_nhwc = cl->input;
    p.o_nhwc = cl->output;
  }
  p.x_dims = p.x_nhwc ? FromChannelsLast(x.shape) : x.shape;
  p.o_dims = p.o_nhwc ? FromChannelsLast(out.shape) : out.shape;
  const std::vector<int64_t>&xs = p.x_dims, &os = p.o_dims;
  p.d = rank - 2;
  p.groups = *groups;
  p.bias = a.inputs.size() == 3;
  if (!ExpandSpatial(a.attrs, "stride", p.d, 1, p.stride) ||
      !ExpandSpatial(a.attrs, "padding", p.d, 0, p.padding) ||
      !ExpandSpatial(a.attrs, "dilation", p.d, 1, p.dilation)) {
    return false;
  }
  const int64_t g = p.groups, n = xs[0], c = xs[1], oc = w.shape[0];
  // Degenerate sizes (empty tensors) go to the reference kernel.
  if (x.numel() == 0 || w.numel() == 0 || out.numel() == 0 || oc % g != 0) return false;
  // The output's shape must be the convolution's (as the op's meta function computes it).
  bool ok = c == w.shape[1] * g && os[0] == n && os[1] == oc;
  for (size_t i = 0; ok && i < p.d; ++i) {
    const int64_t extent = p.dilation[i] * (w.shape[2 + i] - 1) + 1;
    ok = xs[2 + i] + 2 * p.padding[i] >= extent &&
         os[2 + i] == (xs[2 + i] + 2 * p.padding[i] - extent) / p.stride[i] + 1;
  }
  if (p.bias) ok = ok && a.inputs[2].shape.size() == 1 && a.inputs[2].shape[0] == oc;
  if (!ok) return ShapeError("aten.convolution", a);
  return true;
}

// Whether the direct kernel for `s` runs by the mode and the rule (not by measurement).
bool DirectByRule(const internal::DirectConvShape& s, const ExternArgs& a) {
  const internal::DirectConvMode mode = internal::GetDirectConvMode();
  return Dnnl() == nullptr || mode == internal::DirectConvMode::kAlways ||
         (mode == internal::DirectConvMode::kRule &&
          internal::UseDirectConv(s, a.pool->num_threads()));
}

// Whether the direct pointwise kernel takes a scaled input for `s` (a task's scaled rows, 64
// at most, then stay within a few MB of scratch per thread).
bool TakesScaledInput(const ExternArgs& a, const std::optional<internal::DirectConvShape>& s) {
  constexpr int64_t kMaxChannels = 8192;
  return s.has_value() && s->c <= kMaxChannels &&
         internal::ClassifyDirectConv(*s) == internal::DirectConvKind::kPointwise &&
         DirectByRule(*s, a);
}

// The direct pointwise kernel with a scaled input (ExternScaledInput), which the executable
// asked ConvolutionTakesScaledInput for.
absl::StatusOr<bool> RunScaledInput(const ExternArgs& a, const ConvParams& p,
                                    absl::Span<const ExternEpilogueStep> epilogue) {
  const ExternScaledInput& si = *a.scaled_input;
  const std::optional<internal::DirectConvShape> s = DirectShape(a, p);
  if (!TakesScaledInput(a, s)) {
    return absl::InternalError(
        "aten.convolution: a scaled input for a call the pointwise kernel does not take");
  }
  if (si.x.dtype != proto::FLOAT32 || si.x.shape != a.inputs[0].shape ||
      si.scale.dtype != proto::FLOAT32 || si.scale.numel() != s->n * s->c) {
    return absl::InternalError(absl::StrCat("aten.convolution: a scaled input of ",
                                            Shape(si.x), " and a scale of ", Shape(si.scale),
                                            " for an input of ", Shape(a.inputs[0])));
  }
  if (!RunDirect(a, *s, p.bias, epilogue)) {
    return absl::ResourceExhaustedError(
        "aten.convolution: no memory for the pointwise kernel's packed weights");
  }
  return true;
}

// The convolution, with `epilogue` as post-ops when it is not empty (false: nothing ran).
absl::StatusOr<bool> RunConvolution(const ExternArgs& a,
                                    absl::Span<const ExternEpilogueStep> epilogue) {
  ConvParams p;
  if (absl::StatusOr<bool> parsed = ParseConv(a, p); !parsed.ok() || !*parsed) {
    if (parsed.ok() && a.scaled_input != nullptr) {
      return absl::InternalError("aten.convolution: a scaled input for a call it declines");
    }
    return parsed;
  }
  const ExternTensor &x = a.inputs[0], &w = a.inputs[1], &out = a.output;
  const int64_t g = p.groups, c = p.x_dims[1];
  for (const ExternEpilogueStep& step : epilogue) {
    if (step.kind != ExternEpilogueStep::kAdd) continue;
    if (step.other == nullptr || step.other->dtype != out.dtype ||
        step.other->shape != out.shape) {
      return absl::InvalidArgumentError(absl::StrCat(
          "aten.convolution: a fused residual of ",
          step.other == nullptr ? std::string("(none)") : Shape(*step.other),
          " for an output of ", Shape(out)));
    }
  }
  if (a.scaled_input != nullptr) return RunScaledInput(a, p, epilogue);
  if (absl::StatusOr<bool> gemv = ConvolutionAsGemv(a, p, epilogue); !gemv.ok() || *gemv) {
    return gemv;
  }
  const std::optional<internal::DirectConvShape> direct_shape = DirectShape(a, p);
  const internal::DirectConvMode mode = internal::GetDirectConvMode();
  if (direct_shape.has_value() && DirectByRule(*direct_shape, a) &&
      RunDirect(a, *direct_shape, p.bias, epilogue)) {
    return true;
  }
  if (Dnnl() == nullptr) return false;
  // COIL_CONV_DIRECT=measure: the direct kernel as a candidate of the measured choice (its
  // weights packed first, so that packing is not timed); null when it does not apply.
  std::function<void()> direct_fn;
  if (direct_shape.has_value() && mode == internal::DirectConvMode::kMeasure) {
    ConvState* state = StateOf<ConvState>(a.state);
    if (state->direct.Holds(a.inputs[1].data, *direct_shape) ||
        state->direct.Pack(a.inputs[1].data, *direct_shape)) {
      direct_fn = [&] { RunDirect(a, *direct_shape, p.bias, epilogue); };
    }
  }
  double flops = 2.0 * out.numel() * (c / g);
  for (size_t i = 0; i < p.d; ++i) flops *= w.shape[2 + i];
  const int threads = ThreadsFor(a, flops);
  Api().omp_set_num_threads(threads);
  bool ran = true;
  absl::StatusOr<bool> status = Guarded("aten.convolution", [&] {
    PlanKey key;
    AppendKey(key, x.shape);
    AppendKey(key, w.shape);
    AppendKey(key, p.stride);
    AppendKey(key, p.padding);
    AppendKey(key, p.dilation);
    key.insert(key.end(), {g, p.bias, threads, p.x_nhwc, p.o_nhwc, p.types.src, p.types.dst,
                           p.types.bias});
    bool accumulates = false;
    for (const ExternEpilogueStep& step : epilogue) {
      accumulates = accumulates || AddsDestination(step, out);
      key.insert(key.end(), {step.kind, static_cast<int64_t>(absl::bit_cast<uint32_t>(step.lo)),
                             static_cast<int64_t>(absl::bit_cast<uint32_t>(step.hi)),
                             AddsDestination(step, out)});
    }
    ConvState* state = StateOf<ConvState>(a.state);
    WeightCache* cache = state != nullptr ? &state->weights : nullptr;
    std::unique_ptr<ConvPlan> one_off;
    ConvPlan* plan = FindPlan(state, std::move(key), one_off, [&] {
      // A one-off call measures nothing: it takes oneDNN's blocked layouts unless told.
      const LayoutChoice choice = ConvLayoutChoice();
      return MakeConvPlan(a, p, state == nullptr && choice == LayoutChoice::kMeasure
                                    ? LayoutChoice::kBlocked
                                    : choice,
                          epilogue);
    });
    if (plan->unfusable) {
      // No oneDNN implementation takes the epilogue: the direct kernel does, if it applies.
      ran = direct_fn != nullptr;
      if (ran) direct_fn();
      return;
    }
    ChooseVariant(*plan, a, epilogue, cache, direct_fn != nullptr ? &direct_fn : nullptr,
                  accumulates);
    if (plan->direct) {
      ran = direct_fn != nullptr;  // false only when packing the weights ran out of memory
      if (ran) direct_fn();
    } else {
      RunVariant(plan->variants.front(), *plan, a, epilogue, cache);
    }
  });
  if (!status.ok()) return status;
  return ran;
}

}  // namespace

absl::StatusOr<bool> Convolution(const ExternArgs& a) { return RunConvolution(a, {}); }

absl::StatusOr<bool> ConvolutionWithEpilogue(const ExternArgs& a,
                                             absl::Span<const ExternEpilogueStep> epilogue) {
  for (const ExternEpilogueStep& s : epilogue) {  // aten.mm's steps (extern_epilogue.h)
    if (s.kind == ExternEpilogueStep::kBias || s.kind == ExternEpilogueStep::kGeluErf ||
        s.kind == ExternEpilogueStep::kGeluTanh) {
      return false;
    }
  }
  return RunConvolution(a, epilogue);
}

}  // namespace coil::cpu::dnnl_internal

namespace coil::cpu {

bool ConvolutionTakesScaledInput(const ExternArgs& args) {
  using dnnl_internal::ConvParams;
  ConvParams p;
  absl::StatusOr<bool> parsed = dnnl_internal::ParseConv(args, p);
  if (!parsed.ok() || !*parsed || args.scaled_input != nullptr) return false;
  return dnnl_internal::TakesScaledInput(args, dnnl_internal::DirectShape(args, p));
}

}  // namespace coil::cpu
