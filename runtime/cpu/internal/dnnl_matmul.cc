// aten.mm and aten.bmm through oneDNN (dnnl_matmul.h).
#include "runtime/cpu/internal/dnnl_matmul.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/cpu/internal/dnnl_plans.h"
#include "runtime/cpu/internal/gemv.h"
#include "runtime/cpu/internal/own_gemm.h"
#include "runtime/cpu/thread_pool.h"

namespace coil::cpu::dnnl_internal {
namespace {

// ---- aten.mm: x[m, k] @ y[k, n].

struct MmPlan {
  DnnlPrimitive prim;  // bf16 plans: null when oneDNN has no fast implementation (declined)
  std::unique_ptr<Operand> x, y, out;
  // MmWithEpilogue: the bias ([1, n]) and the residuals by post-op index.
  DnnlMemory bias;
  std::vector<std::pair<int, DnnlMemory>> residuals;
};

struct MmState : ExternState {
  PlanCache<MmPlan> plans;
  WeightCache weights{/*huge=*/true};  // streamed per call (weight_memory.h)
  internal::GemvWeights gemv;  // small-M calls (gemv.h)
  internal::OwnGemmWeights own;  // larger M on AVX-512 CPUs (own_gemm.h)
};

// Runs x[m, k] (row-major, rows ldx apart) @ the site's constant y through own_gemm.h, packing
// y on the first call.
absl::StatusOr<bool> RunOwnGemm(const ExternArgs& a, MmState* state, int64_t m, int64_t k,
                                int64_t n, const float* bias,
                                absl::Span<const ExternEpilogueStep> steps) {
  const ExternTensor &x = a.inputs[0], &y = a.inputs[1];
  if (!state->own.Holds(y.data, k, n) && !state->own.Pack(y.data, k, n)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("aten.mm: out of memory packing a ", k, "x", n, " weight"));
  }
  internal::OwnGemm(reinterpret_cast<const float*>(x.data), m, k, state->own, bias, steps,
                    reinterpret_cast<float*>(a.output.data), n, ThreadsFor(a, 2.0 * m * n * k),
                    a.pool);
  return true;
}

// Runs x[m, k] (row-major) @ the site's constant y through gemv.h's kernel on a.pool, packing
// y on the first call; `bias` (or null) and `steps` applied in its stores.
absl::StatusOr<bool> RunGemv(const ExternArgs& a, MmState* state, int64_t m, int64_t k,
                             int64_t n, const float* bias,
                             absl::Span<const ExternEpilogueStep> steps) {
  const ExternTensor &x = a.inputs[0], &y = a.inputs[1];
  if (!state->gemv.Holds(y.data, k, n, internal::GemvWeights::kKN) &&
      !state->gemv.Pack(y.data, k, n, internal::GemvWeights::kKN)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("aten.mm: out of memory packing a ", k, "x", n, " weight"));
  }
  internal::Gemv(reinterpret_cast<const float*>(x.data), m, k, state->gemv, bias, steps,
                 reinterpret_cast<float*>(a.output.data), n, a.pool);
  return true;
}

// ---- aten.bmm: x[b, m, k] @ y[b, k, n].

struct BmmPlan {
  DnnlPrimitive prim;  // bf16 plans: null when oneDNN has no fast implementation (declined)
  DnnlMemory x, y, out;
};

struct BmmState : ExternState {
  PlanCache<BmmPlan> plans;
};

// The primitive of a matmul descriptor and its weights' layout, or a null primitive when oneDNN
// has only its reference implementation (bf16 on a CPU without AVX-512).
DnnlPrimitive MatmulPrimitive(const dnnl_memory_desc_t& x, const dnnl_memory_desc_t& y,
                              const dnnl_memory_desc_t& out, dnnl_memory_desc_t* y_layout) {
  dnnl_matmul_desc_t desc;
  Check(Api().matmul_desc_init(&desc, &x, &y, nullptr, &out), "matmul_desc_init");
  DnnlPrimitiveDesc pd = FastPrimitiveDesc(&desc, nullptr);
  if (pd == nullptr) return nullptr;
  if (y_layout != nullptr) *y_layout = QueryMd(pd.get(), dnnl_query_weights_md);
  dnnl_primitive_t p = nullptr;
  Check(Api().primitive_create(&p, pd.get()), "primitive_create");
  return DnnlPrimitive(p);
}

// aten.mm of bf16 operands (bf16 or f32 output) through a matmul primitive: f32 accumulation
// inside oneDNN, transposed operands read through a transposed layout, constant weights packed
// once per call site as for f32. False (the reference kernel runs) when oneDNN has no fast
// implementation.
absl::StatusOr<bool> MmBf16(const ExternArgs& a, const PrimitiveTypes& t) {
  const ExternTensor &x = a.inputs[0], &y = a.inputs[1], &out = a.output;
  const int64_t m = x.shape[0], k = x.shape[1], n = y.shape[1];
  if (Dnnl() == nullptr) return false;
  const int threads = ThreadsFor(a, 2.0 * m * n * k);
  Api().omp_set_num_threads(threads);
  const bool xt = x.transposed, yt = y.transposed;
  MmState* state = StateOf<MmState>(a.state);
  const bool pack = y.constant && state != nullptr;
  bool ran = true;
  absl::StatusOr<bool> status = Guarded("aten.mm", [&] {
    std::unique_ptr<MmPlan> one_off;
    MmPlan* plan = FindPlan(state, {m, k, n, threads, xt, yt, t.src, t.dst, pack}, one_off, [&] {
      const dnnl_memory_desc_t xd = Desc({m, k}, xt ? dnnl_ba : dnnl_ab, t.src),
                               yd = Desc({k, n}, yt ? dnnl_ba : dnnl_ab, t.src),
                               od = Desc({m, n}, dnnl_ab, t.dst);
      auto p = std::make_unique<MmPlan>();
      dnnl_memory_desc_t yw = yd;
      p->prim = MatmulPrimitive(xd, pack ? Desc({k, n}, dnnl_format_tag_any, t.src) : yd, od,
                                &yw);
      if (p->prim == nullptr) return p;
      p->x = std::make_unique<Operand>(xd, xd, false);
      p->y = std::make_unique<Operand>(yd, yw, false);
      p->out = std::make_unique<Operand>(od, od, true);
      return p;
    });
    if (plan->prim == nullptr) {
      ran = false;
      return;
    }
    plan->x->Bind(x.data, kScratchSrc);
    plan->out->Bind(out.data, kScratchDst);
    dnnl_memory_t w = Weights(*plan->y, y, pack ? &state->weights : nullptr);
    Execute(plan->prim.get(), {{DNNL_ARG_SRC, plan->x->inner()},
                               {DNNL_ARG_WEIGHTS, w},
                               {DNNL_ARG_DST, plan->out->inner()}});
    Check(Api().stream_wait(Stream()), "stream_wait");
  });
  if (!status.ok()) return status;
  return ran;
}

// An [m, k] operand whose bytes are row-major [m, k] (a view that is one: a reshape).
bool RowMajor(const ExternTensor& t, int64_t m, int64_t k) {
  if (t.transposed) return false;
  if (t.view.empty()) return true;
  if (t.view.size() != 2 || t.view[0].size() > 1 || t.view[1].size() > 1) return false;
  return (m == 1 || t.view[0].empty() || t.view[0][0].stride == k) &&
         (k == 1 || t.view[1].empty() || t.view[1][0].stride == 1);
}

// The post-ops of a matmul's epilogue after its bias (nullptr when none); residuals are
// described by `od`. Throws DnnlFailure for a bias after the first step.
DnnlAttr MmPostOpsAttr(absl::Span<const ExternEpilogueStep> post, const dnnl_memory_desc_t& od) {
  if (post.empty()) return nullptr;
  dnnl_post_ops_t raw_ops = nullptr;
  Check(Api().post_ops_create(&raw_ops), "post_ops_create");
  DnnlPostOps ops(raw_ops);
  for (const ExternEpilogueStep& step : post) {
    auto eltwise = [&](dnnl_alg_kind_t alg, float alpha, float beta) {
      Check(Api().post_ops_append_eltwise(ops.get(), 1.0f, alg, alpha, beta),
            "post_ops_append_eltwise");
    };
    switch (step.kind) {
      case ExternEpilogueStep::kAdd:
        Check(Api().post_ops_append_binary(ops.get(), dnnl_binary_add, &od),
              "post_ops_append_binary");
        break;
      case ExternEpilogueStep::kRelu:
        eltwise(dnnl_eltwise_relu, 0.0f, 0.0f);
        break;
      case ExternEpilogueStep::kClip:
        eltwise(dnnl_eltwise_clip, step.lo, step.hi);
        break;
      case ExternEpilogueStep::kHardswish:
        eltwise(dnnl_eltwise_hardswish, 0.0f, 0.0f);
        break;
      case ExternEpilogueStep::kGeluErf:
        eltwise(dnnl_eltwise_gelu_erf, 0.0f, 0.0f);
        break;
      case ExternEpilogueStep::kGeluTanh:
        eltwise(dnnl_eltwise_gelu_tanh, 0.0f, 0.0f);
        break;
      case ExternEpilogueStep::kBias:
        Check(dnnl_unimplemented, "a bias after another epilogue step");
        break;
    }
  }
  dnnl_primitive_attr_t raw_attr = nullptr;
  Check(Api().primitive_attr_create(&raw_attr), "primitive_attr_create");
  DnnlAttr attr(raw_attr);
  Check(Api().primitive_attr_set_post_ops(attr.get(), ops.get()), "primitive_attr_set_post_ops");
  return attr;
}

}  // namespace

absl::StatusOr<bool> MmWithEpilogue(const ExternArgs& a,
                                    absl::Span<const ExternEpilogueStep> epilogue) {
  if (a.inputs.size() != 2 || !AllF32(a)) return false;
  const ExternTensor &x = a.inputs[0], &y = a.inputs[1], &out = a.output;
  if (x.shape.size() != 2 || y.shape.size() != 2 || out.shape.size() != 2 ||
      x.shape[1] != y.shape[0] || out.shape[0] != x.shape[0] || out.shape[1] != y.shape[1]) {
    return ShapeError("aten.mm", a);
  }
  const int64_t m = x.shape[0], k = x.shape[1], n = y.shape[1];
  // Packed constant weights only (the site's state keeps them); anything else runs the plain
  // extern and the generated epilogue.
  if (m == 0 || n == 0 || k == 0 || !RowMajor(x, m, k) || y.transposed || !y.view.empty() ||
      !y.constant || !out.view.empty() || a.state == nullptr) {
    return false;
  }
  const ExternTensor* bias = nullptr;
  absl::Span<const ExternEpilogueStep> post = epilogue;
  if (!post.empty() && post[0].kind == ExternEpilogueStep::kBias) {
    bias = post[0].other;
    post.remove_prefix(1);
    if (bias == nullptr || bias->numel() != n || !bias->view.empty()) return false;
  }
  PlanKey key = {m, k, n, ThreadsFor(a, 2.0 * m * n * k), bias != nullptr ? 1 : 0};
  for (const ExternEpilogueStep& s : post) {
    if (s.kind == ExternEpilogueStep::kBias) return false;
    if (s.kind == ExternEpilogueStep::kAdd &&
        (s.other == nullptr || s.other->numel() != m * n || !s.other->view.empty())) {
      return false;
    }
    int32_t lo, hi;
    std::memcpy(&lo, &s.lo, sizeof lo);
    std::memcpy(&hi, &s.hi, sizeof hi);
    key.insert(key.end(), {100 + s.kind, lo, hi});
  }
  const float* bias_data = bias != nullptr ? reinterpret_cast<const float*>(bias->data) : nullptr;
  // Small M: the plain path's GEMV over the pool, with the epilogue in its stores (oneDNN's
  // matmul would run a classifier's GEMV on one thread: mobilenet_v3_large's 1280 -> 1000 at
  // batch 1 took 0.21 ms against the GEMV's 0.07 on the 16-core Xeon at 4 threads).
  if (a.pool != nullptr && internal::UseGemv(m, k, n, a.pool->num_threads())) {
    return RunGemv(a, StateOf<MmState>(a.state), m, k, n, bias_data, post);
  }
  if (internal::UseOwnGemm(m, k, n)) {
    return RunOwnGemm(a, StateOf<MmState>(a.state), m, k, n, bias_data, post);
  }
  if (Dnnl() == nullptr) return false;
  const int threads = static_cast<int>(key[3]);
  Api().omp_set_num_threads(threads);
  MmState* state = StateOf<MmState>(a.state);
  bool ran = true;
  absl::StatusOr<bool> status = Guarded("aten.mm", [&] {
    std::unique_ptr<MmPlan> one_off;
    MmPlan* plan = FindPlan(state, key, one_off, [&] {
      const dnnl_memory_desc_t xd = Desc({m, k}, dnnl_ab), yd = Desc({k, n}, dnnl_ab),
                               od = Desc({m, n}, dnnl_ab), bd = Desc({1, n}, dnnl_ab),
                               y_any = Desc({k, n}, dnnl_format_tag_any);
      auto p = std::make_unique<MmPlan>();
      dnnl_matmul_desc_t desc;
      Check(Api().matmul_desc_init(&desc, &xd, &y_any, bias != nullptr ? &bd : nullptr, &od),
            "matmul_desc_init");
      const DnnlAttr attr = MmPostOpsAttr(post, od);
      DnnlPrimitiveDesc pd = FastPrimitiveDesc(&desc, attr.get());
      if (pd == nullptr) return p;  // only oneDNN's reference kernel: declined
      const dnnl_memory_desc_t yw = QueryMd(pd.get(), dnnl_query_weights_md);
      dnnl_primitive_t raw = nullptr;
      Check(Api().primitive_create(&raw, pd.get()), "primitive_create");
      p->prim = DnnlPrimitive(raw);
      p->x = std::make_unique<Operand>(xd, xd, false);
      p->y = std::make_unique<Operand>(yd, yw, false);
      p->out = std::make_unique<Operand>(od, od, true);
      if (bias != nullptr) p->bias = Memory(bd, DNNL_MEMORY_NONE);
      for (size_t i = 0; i < post.size(); ++i) {
        if (post[i].kind != ExternEpilogueStep::kAdd) continue;
        p->residuals.emplace_back(static_cast<int>(i), Memory(od, DNNL_MEMORY_NONE));
      }
      return p;
    });
    if (plan->prim == nullptr) {
      ran = false;
      return;
    }
    plan->x->Bind(x.data, kScratchSrc);
    plan->out->Bind(out.data, kScratchDst);
    std::vector<dnnl_exec_arg_t> args = {{DNNL_ARG_SRC, plan->x->inner()},
                                         {DNNL_ARG_WEIGHTS, Weights(*plan->y, y, &state->weights)},
                                         {DNNL_ARG_DST, plan->out->inner()}};
    if (plan->bias != nullptr) {
      SetData(plan->bias.get(), bias->data);
      args.push_back({DNNL_ARG_BIAS, plan->bias.get()});
    }
    for (auto& [index, memory] : plan->residuals) {
      SetData(memory.get(), post[index].other->data);
      args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1, memory.get()});
    }
    Execute(plan->prim.get(), args);
    Check(Api().stream_wait(Stream()), "stream_wait");
  });
  if (!status.ok()) return status;
  return ran;
}

absl::StatusOr<bool> Mm(const ExternArgs& a) {
  PrimitiveTypes types;
  if (a.inputs.size() != 2 || !GetPrimitiveTypes(a, types)) return false;
  const ExternTensor &x = a.inputs[0], &y = a.inputs[1], &out = a.output;
  if (x.shape.size() != 2 || y.shape.size() != 2 || out.shape.size() != 2 ||
      x.shape[1] != y.shape[0] || out.shape[0] != x.shape[0] || out.shape[1] != y.shape[1]) {
    return ShapeError("aten.mm", a);
  }
  const int64_t m = x.shape[0], k = x.shape[1], n = y.shape[1];
  if (m == 0 || n == 0) return true;
  if (k == 0) {
    std::memset(out.data, 0, m * n * ElementSize(out.dtype));  // +0.0 in f32 and bf16 alike
    return true;
  }
  if (!out.view.empty()) return false;  // a strided result: RunExtern writes it through
  if (!x.view.empty() || !y.view.empty()) return MmViewed(a);
  if (!types.f32()) return MmBf16(a, types);
  // A transposed operand (transposed_operand.h): sgemm reads it with 'T'.
  const bool xt = x.transposed, yt = y.transposed;
  // Small M against constant weights: split over the executable's pool at memory bandwidth.
  if (!xt && !yt && y.constant && a.state != nullptr && a.pool != nullptr &&
      internal::UseGemv(m, k, n, a.pool->num_threads())) {
    return RunGemv(a, StateOf<MmState>(a.state), m, k, n, nullptr, {});
  }
  // Larger M against constant weights on AVX-512 CPUs: coil's own GEMM.
  if (!xt && !yt && y.constant && a.state != nullptr && internal::UseOwnGemm(m, k, n)) {
    return RunOwnGemm(a, StateOf<MmState>(a.state), m, k, n, nullptr, {});
  }
  if (Dnnl() == nullptr) return false;
  const int threads = ThreadsFor(a, 2.0 * m * n * k);
  Api().omp_set_num_threads(threads);
  MmState* state = y.constant && !xt && !yt ? StateOf<MmState>(a.state) : nullptr;
  if (state == nullptr) {
    // Weights computed at run time: a plain GEMM, nothing to keep.
    dnnl_status_t s =
        Api().sgemm(xt ? 'T' : 'N', yt ? 'T' : 'N', m, n, k, 1.0f,
                    reinterpret_cast<const float*>(x.data), xt ? m : k,
                    reinterpret_cast<const float*>(y.data), yt ? k : n, 0.0f,
                    reinterpret_cast<float*>(out.data), n);
    if (s != dnnl_success) return absl::InternalError(absl::StrCat("dnnl_sgemm failed: ", s));
    return true;
  }
  // Constant weights: a matmul whose weights oneDNN packs once into its blocked layout.
  return Guarded("aten.mm", [&] {
    std::unique_ptr<MmPlan> one_off;
    MmPlan* plan = FindPlan(state, {m, k, n, threads}, one_off, [&] {
      const dnnl_memory_desc_t xd = Desc({m, k}, dnnl_ab), yd = Desc({k, n}, dnnl_ab),
                               od = Desc({m, n}, dnnl_ab),
                               y_any = Desc({k, n}, dnnl_format_tag_any);
      dnnl_matmul_desc_t desc;
      Check(Api().matmul_desc_init(&desc, &xd, &y_any, nullptr, &od), "matmul_desc_init");
      auto p = std::make_unique<MmPlan>();
      const dnnl_memory_desc_t yw = QueryDesc(&desc, dnnl_query_weights_md, p->prim);
      p->x = std::make_unique<Operand>(xd, xd, false);
      p->y = std::make_unique<Operand>(yd, yw, false);
      p->out = std::make_unique<Operand>(od, od, true);
      return p;
    });
    plan->x->Bind(x.data, kScratchSrc);
    plan->out->Bind(out.data, kScratchDst);
    dnnl_memory_t w = Weights(*plan->y, y, &state->weights);
    Execute(plan->prim.get(), {{DNNL_ARG_SRC, plan->x->inner()},
                               {DNNL_ARG_WEIGHTS, w},
                               {DNNL_ARG_DST, plan->out->inner()}});
    Check(Api().stream_wait(Stream()), "stream_wait");
  });
}

absl::StatusOr<bool> Bmm(const ExternArgs& a) {
  PrimitiveTypes t;
  if (a.inputs.size() != 2 || !GetPrimitiveTypes(a, t)) return false;
  const ExternTensor &x = a.inputs[0], &y = a.inputs[1], &out = a.output;
  if (x.shape.size() != 3 || y.shape.size() != 3 || out.shape.size() != 3 ||
      x.shape[0] != y.shape[0] || x.shape[2] != y.shape[1] || out.shape[0] != x.shape[0] ||
      out.shape[1] != x.shape[1] || out.shape[2] != y.shape[2]) {
    return ShapeError("aten.bmm", a);
  }
  const int64_t b = x.shape[0], m = x.shape[1], k = x.shape[2], n = y.shape[2];
  if (b == 0 || m == 0 || n == 0) return true;
  if (k == 0) {
    std::memset(out.data, 0, b * m * n * ElementSize(out.dtype));
    return true;
  }
  if (!x.view.empty() || !y.view.empty() || !out.view.empty()) return BmmViewed(a);
  if (Dnnl() == nullptr) return false;
  const int threads = ThreadsFor(a, 2.0 * b * m * n * k);
  Api().omp_set_num_threads(threads);
  bool ran = true;
  absl::StatusOr<bool> status = Guarded("aten.bmm", [&] {
    std::unique_ptr<BmmPlan> one_off;
    BmmPlan* plan = FindPlan(StateOf<BmmState>(a.state), {b, m, k, n, threads, t.src, t.dst},
                             one_off, [&] {
      const dnnl_memory_desc_t xd = Desc({b, m, k}, dnnl_abc, t.src),
                               yd = Desc({b, k, n}, dnnl_abc, t.src),
                               od = Desc({b, m, n}, dnnl_abc, t.dst);
      auto p = std::make_unique<BmmPlan>();
      if (t.f32()) {
        dnnl_matmul_desc_t desc;
        Check(Api().matmul_desc_init(&desc, &xd, &yd, nullptr, &od), "matmul_desc_init");
        p->prim = Primitive(&desc);
      } else {
        p->prim = MatmulPrimitive(xd, yd, od, nullptr);
        if (p->prim == nullptr) return p;
      }
      p->x = Memory(xd, DNNL_MEMORY_NONE);
      p->y = Memory(yd, DNNL_MEMORY_NONE);
      p->out = Memory(od, DNNL_MEMORY_NONE);
      return p;
    });
    if (plan->prim == nullptr) {
      ran = false;
      return;
    }
    SetData(plan->x.get(), x.data);
    SetData(plan->y.get(), y.data);
    SetData(plan->out.get(), out.data);
    Execute(plan->prim.get(), {{DNNL_ARG_SRC, plan->x.get()},
                               {DNNL_ARG_WEIGHTS, plan->y.get()},
                               {DNNL_ARG_DST, plan->out.get()}});
    Check(Api().stream_wait(Stream()), "stream_wait");
  });
  if (!status.ok()) return status;
  return ran;
}

}  // namespace coil::cpu::dnnl_internal
