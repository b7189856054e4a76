// f32 aten.mm / aten.bmm / aten.convolution through oneDNN 2.6 (the library chosen by
// measurement: docs/benchmarks.md), loaded at run time (runtime/cpu/dnnl_api.h). Unsupported
// dtypes and variants, or no oneDNN on the machine, return false, so the reference kernel
// runs them. Its threads are OpenMP's, set per call to ExternArgs::num_threads (one thread for
// small calls).
//
// With a call site's state slot (ExternArgs::state), each op keeps a plan per distinct call
// (shapes, attributes, thread count; at most kMaxPlans, least recently used dropped: a
// symbolic batch gets one plan per batch size in use): the primitive, its reorders and memory
// objects, so a call only sets data pointers and executes. CONSTANT weights
// (ExternTensor::constant) are reordered into the primitive's layout once per site and kept;
// other weights, and blocked copies of activations, go through per-thread scratch buffers that
// grow and are reused. A convolution plan measures, on its first call, oneDNN's blocked
// activation layouts (with reorders) against the plain layout and keeps the faster.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/cpu/dnnl_api.h"
#include "runtime/cpu/externs.h"

namespace coil::cpu {
namespace {

// Plans kept per call site (distinct shapes of a symbolic batch).
constexpr size_t kMaxPlans = 8;
// Calls with fewer floating-point operations run on the calling thread alone: waking OpenMP's
// sleeping workers and putting them back to sleep costs about as much as such a call
// (docs/cpu_backend.md, "Runtime performance").
constexpr double kMinParallelFlops = 8e6;

int ThreadsFor(const ExternArgs& a, double flops) {
  return flops < kMinParallelFlops ? 1 : std::max(1, a.num_threads);
}

const DnnlApi& Api() { return *Dnnl(); }

// A failed oneDNN call inside an op; Guarded turns it into a Status.
struct DnnlFailure {
  std::string what;
};

void Check(dnnl_status_t status, const char* what) {
  if (status != dnnl_success) throw DnnlFailure{absl::StrCat(what, " (status ", status, ")")};
}

// Runs `fn`, translating failures into a Status.
template <typename Fn>
absl::StatusOr<bool> Guarded(absl::string_view op, Fn&& fn) {
  try {
    fn();
  } catch (const DnnlFailure& e) {
    return absl::InternalError(absl::StrCat("oneDNN ", op, ": ", e.what));
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat("oneDNN ", op, ": out of memory"));
  }
  return true;
}

dnnl_stream_t Stream() {
  thread_local DnnlStream stream = [] {
    dnnl_stream_t s = nullptr;
    Check(Api().stream_create(&s, Api().engine, dnnl_stream_default_flags), "stream_create");
    return DnnlStream(s);
  }();
  return stream.get();
}

// Per-thread scratch: slot `i` is a 64-byte-aligned buffer of at least `bytes`, reused by
// every later call on this thread (ops run one at a time per thread).
enum ScratchSlot { kScratchSrc, kScratchDst, kScratchWeights, kNumScratch };
void* Scratch(ScratchSlot slot, size_t bytes) {
  struct Buffer {
    std::unique_ptr<char, decltype(&std::free)> data{nullptr, &std::free};
    size_t size = 0;
  };
  thread_local Buffer buffers[kNumScratch];
  Buffer& b = buffers[slot];
  if (b.size < bytes) {
    const size_t size = (bytes + 4095) / 4096 * 4096;
    b.data.reset(static_cast<char*>(std::aligned_alloc(64, size)));
    if (b.data == nullptr) throw std::bad_alloc();
    b.size = size;
  }
  return b.data.get();
}

// ---- Thin helpers over the C API.

dnnl_memory_desc_t Desc(absl::Span<const int64_t> dims, dnnl_format_tag_t tag) {
  dnnl_memory_desc_t md;
  dnnl_dims_t d;
  std::copy(dims.begin(), dims.end(), d);
  Check(Api().memory_desc_init_by_tag(&md, static_cast<int>(dims.size()), d, dnnl_f32, tag),
        "memory_desc_init_by_tag");
  return md;
}

bool Same(const dnnl_memory_desc_t& a, const dnnl_memory_desc_t& b) {
  return Api().memory_desc_equal(&a, &b) != 0;
}

DnnlMemory Memory(const dnnl_memory_desc_t& md, void* handle) {
  dnnl_memory_t m = nullptr;
  Check(Api().memory_create(&m, &md, Api().engine, handle), "memory_create");
  return DnnlMemory(m);
}

void SetData(dnnl_memory_t m, void* data) {
  Check(Api().memory_set_data_handle(m, data), "memory_set_data_handle");
}

DnnlPrimitive Primitive(const void* op_desc) {
  dnnl_primitive_desc_t pd = nullptr;
  Check(Api().primitive_desc_create(&pd, op_desc, nullptr, Api().engine, nullptr),
        "primitive_desc_create");
  DnnlPrimitiveDesc owned(pd);
  dnnl_primitive_t p = nullptr;
  Check(Api().primitive_create(&p, pd), "primitive_create");
  return DnnlPrimitive(p);
}

// The primitive's layout for one of its arguments.
dnnl_memory_desc_t QueryDesc(const void* op_desc, dnnl_query_t what, DnnlPrimitive& out) {
  dnnl_primitive_desc_t pd = nullptr;
  Check(Api().primitive_desc_create(&pd, op_desc, nullptr, Api().engine, nullptr),
        "primitive_desc_create");
  DnnlPrimitiveDesc owned(pd);
  if (out == nullptr) {
    dnnl_primitive_t p = nullptr;
    Check(Api().primitive_create(&p, pd), "primitive_create");
    out.reset(p);
  }
  const dnnl_memory_desc_t* md = Api().primitive_desc_query_md(pd, what, 0);
  if (md == nullptr) throw DnnlFailure{"primitive_desc_query_md"};
  return *md;
}

DnnlPrimitive Reorder(const dnnl_memory_desc_t& from, const dnnl_memory_desc_t& to) {
  dnnl_primitive_desc_t pd = nullptr;
  Check(Api().reorder_primitive_desc_create(&pd, &from, Api().engine, &to, Api().engine,
                                            nullptr),
        "reorder_primitive_desc_create");
  DnnlPrimitiveDesc owned(pd);
  dnnl_primitive_t p = nullptr;
  Check(Api().primitive_create(&p, pd), "primitive_create (reorder)");
  return DnnlPrimitive(p);
}

void Execute(dnnl_primitive_t p, std::initializer_list<dnnl_exec_arg_t> args) {
  Check(Api().primitive_execute(p, Stream(), static_cast<int>(args.size()), args.begin()),
        "primitive_execute");
}

void RunReorder(dnnl_primitive_t reorder, dnnl_memory_t from, dnnl_memory_t to) {
  Execute(reorder, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
}

// ---- Operands, weights, plans.

// A tensor in a primitive's layout: the caller's plain buffer when the layouts agree, else a
// blocked buffer (scratch) filled (inputs) or drained (the output) by a reorder.
struct Operand {
  dnnl_memory_desc_t inner_desc;
  DnnlMemory user;     // plain layout; data set per call
  DnnlMemory blocked;  // the primitive's layout, when it differs
  DnnlPrimitive reorder;

  Operand(const dnnl_memory_desc_t& plain, const dnnl_memory_desc_t& want, bool is_output)
      : inner_desc(want), user(Memory(plain, DNNL_MEMORY_NONE)) {
    if (Same(plain, want)) return;
    blocked = Memory(want, DNNL_MEMORY_NONE);
    reorder = is_output ? Reorder(want, plain) : Reorder(plain, want);
  }
  dnnl_memory_t inner() const { return blocked != nullptr ? blocked.get() : user.get(); }
  // Points the plain side at `data` and the blocked side at scratch `slot`.
  void Bind(void* data, ScratchSlot slot) {
    SetData(user.get(), data);
    if (blocked != nullptr) {
      SetData(blocked.get(), Scratch(slot, Api().memory_desc_get_size(&inner_desc)));
    }
  }
  void Fill() {
    if (blocked != nullptr) RunReorder(reorder.get(), user.get(), blocked.get());
  }
  void Drain() {
    if (blocked != nullptr) RunReorder(reorder.get(), blocked.get(), user.get());
  }
};

// Constant weights in the layouts the site's primitives asked for (one per distinct layout;
// the source address is part of the key, so weights that move are reordered again).
class WeightCache {
 public:
  // Drops the copies in layout `desc` (a variant that was not chosen).
  void Forget(const dnnl_memory_desc_t& desc) {
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                  [&](const Entry& e) { return Same(e.desc, desc); }),
                   entries_.end());
  }
  dnnl_memory_t Get(Operand& w, void* data) {
    for (Entry& e : entries_) {
      if (e.src == data && Same(e.desc, w.inner_desc)) return e.mem.get();
    }
    if (entries_.size() >= kMaxPlans) entries_.erase(entries_.begin());
    DnnlMemory mem = Memory(w.inner_desc, DNNL_MEMORY_ALLOCATE);
    SetData(w.user.get(), data);
    RunReorder(w.reorder.get(), w.user.get(), mem.get());
    entries_.push_back({w.inner_desc, data, std::move(mem)});
    return entries_.back().mem.get();
  }

 private:
  struct Entry {
    dnnl_memory_desc_t desc;
    void* src;
    DnnlMemory mem;
  };
  std::vector<Entry> entries_;
};

// Weights as the primitive wants them: cached when constant and the site keeps state,
// reordered into scratch on every call otherwise.
dnnl_memory_t Weights(Operand& w, const ExternTensor& t, WeightCache* cache) {
  if (w.blocked != nullptr && t.constant && cache != nullptr) return cache->Get(w, t.data);
  w.Bind(t.data, kScratchWeights);
  w.Fill();
  return w.inner();
}

// A call's identity for plan lookup: every shape and attribute that shapes the primitive.
using PlanKey = std::vector<int64_t>;
void AppendKey(PlanKey& key, absl::Span<const int64_t> values) {
  key.push_back(static_cast<int64_t>(values.size()));
  key.insert(key.end(), values.begin(), values.end());
}

// The plans of one call site, most recently used last.
template <typename Plan>
class PlanCache {
 public:
  Plan* Find(const PlanKey& key) {
    for (size_t i = 0; i < plans_.size(); ++i) {
      if (plans_[i].first != key) continue;
      std::rotate(plans_.begin() + i, plans_.begin() + i + 1, plans_.end());
      return plans_.back().second.get();
    }
    return nullptr;
  }
  Plan* Insert(PlanKey key, std::unique_ptr<Plan> plan) {
    if (plans_.size() >= kMaxPlans) plans_.erase(plans_.begin());
    plans_.emplace_back(std::move(key), std::move(plan));
    return plans_.back().second.get();
  }

 private:
  std::vector<std::pair<PlanKey, std::unique_ptr<Plan>>> plans_;
};

// The plan for `key` from the site's state (made by `make` on a miss), or a one-off plan
// kept in `one_off` when there is no state.
template <typename Plan, typename State, typename Make>
Plan* FindPlan(State* state, PlanKey key, std::unique_ptr<Plan>& one_off, Make make) {
  if (state == nullptr) {
    one_off = make();
    return one_off.get();
  }
  if (Plan* p = state->plans.Find(key)) return p;
  return state->plans.Insert(std::move(key), make());
}

// The state of type S in `slot` (made, or replacing a state of another type, when needed);
// nullptr without a slot.
template <typename S>
S* StateOf(ExternStateSlot* slot) {
  if (slot == nullptr) return nullptr;
  S* s = dynamic_cast<S*>(slot->get());
  if (s == nullptr) {
    auto fresh = std::make_unique<S>();
    s = fresh.get();
    *slot = std::move(fresh);
  }
  return s;
}

bool AllF32(const ExternArgs& a) {
  if (a.output.dtype != proto::FLOAT32) return false;
  for (const ExternTensor& t : a.inputs) {
    if (t.dtype != proto::FLOAT32) return false;
  }
  return true;
}

std::string Shape(const ExternTensor& t) {
  return absl::StrCat("[", absl::StrJoin(t.shape, ", "), "]");
}

absl::Status ShapeError(absl::string_view op, const ExternArgs& a) {
  std::vector<std::string> ins;
  for (const ExternTensor& t : a.inputs) ins.push_back(Shape(t));
  return absl::InvalidArgumentError(absl::StrCat(op, " of ", absl::StrJoin(ins, ", "),
                                                 " cannot produce ", Shape(a.output)));
}

// ---- aten.mm: x[m, k] @ y[k, n].

struct MmPlan {
  DnnlPrimitive prim;
  std::unique_ptr<Operand> x, y, out;
};

struct MmState : ExternState {
  PlanCache<MmPlan> plans;
  WeightCache weights;
};

absl::StatusOr<bool> Mm(const ExternArgs& a) {
  if (a.inputs.size() != 2 || !AllF32(a)) return false;
  const ExternTensor &x = a.inputs[0], &y = a.inputs[1], &out = a.output;
  if (x.shape.size() != 2 || y.shape.size() != 2 || out.shape.size() != 2 ||
      x.shape[1] != y.shape[0] || out.shape[0] != x.shape[0] || out.shape[1] != y.shape[1]) {
    return ShapeError("aten.mm", a);
  }
  const int64_t m = x.shape[0], k = x.shape[1], n = y.shape[1];
  if (m == 0 || n == 0) return true;
  if (k == 0) {
    std::memset(out.data, 0, m * n * sizeof(float));
    return true;
  }
  if (Dnnl() == nullptr) return false;
  const int threads = ThreadsFor(a, 2.0 * m * n * k);
  Api().omp_set_num_threads(threads);
  MmState* state = y.constant ? StateOf<MmState>(a.state) : nullptr;
  if (state == nullptr) {
    // Weights computed at run time: a plain GEMM, nothing to keep.
    dnnl_status_t s =
        Api().sgemm('N', 'N', m, n, k, 1.0f, reinterpret_cast<const float*>(x.data), k,
                    reinterpret_cast<const float*>(y.data), n, 0.0f,
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

// ---- aten.bmm: x[b, m, k] @ y[b, k, n].

struct BmmPlan {
  DnnlPrimitive prim;
  DnnlMemory x, y, out;
};

struct BmmState : ExternState {
  PlanCache<BmmPlan> plans;
};

absl::StatusOr<bool> Bmm(const ExternArgs& a) {
  if (a.inputs.size() != 2 || !AllF32(a)) return false;
  const ExternTensor &x = a.inputs[0], &y = a.inputs[1], &out = a.output;
  if (x.shape.size() != 3 || y.shape.size() != 3 || out.shape.size() != 3 ||
      x.shape[0] != y.shape[0] || x.shape[2] != y.shape[1] || out.shape[0] != x.shape[0] ||
      out.shape[1] != x.shape[1] || out.shape[2] != y.shape[2]) {
    return ShapeError("aten.bmm", a);
  }
  const int64_t b = x.shape[0], m = x.shape[1], k = x.shape[2], n = y.shape[2];
  if (b == 0 || m == 0 || n == 0) return true;
  if (k == 0) {
    std::memset(out.data, 0, b * m * n * sizeof(float));
    return true;
  }
  if (Dnnl() == nullptr) return false;
  const int threads = ThreadsFor(a, 2.0 * b * m * n * k);
  Api().omp_set_num_threads(threads);
  return Guarded("aten.bmm", [&] {
    std::unique_ptr<BmmPlan> one_off;
    BmmPlan* plan = FindPlan(StateOf<BmmState>(a.state), {b, m, k, n, threads}, one_off,
                             [&] {
      const dnnl_memory_desc_t xd = Desc({b, m, k}, dnnl_abc), yd = Desc({b, k, n}, dnnl_abc),
                               od = Desc({b, m, n}, dnnl_abc);
      dnnl_matmul_desc_t desc;
      Check(Api().matmul_desc_init(&desc, &xd, &yd, nullptr, &od), "matmul_desc_init");
      auto p = std::make_unique<BmmPlan>();
      p->prim = Primitive(&desc);
      p->x = Memory(xd, DNNL_MEMORY_NONE);
      p->y = Memory(yd, DNNL_MEMORY_NONE);
      p->out = Memory(od, DNNL_MEMORY_NONE);
      return p;
    });
    SetData(plan->x.get(), x.data);
    SetData(plan->y.get(), y.data);
    SetData(plan->out.get(), out.data);
    Execute(plan->prim.get(), {{DNNL_ARG_SRC, plan->x.get()},
                               {DNNL_ARG_WEIGHTS, plan->y.get()},
                               {DNNL_ARG_DST, plan->out.get()}});
    Check(Api().stream_wait(Stream()), "stream_wait");
  });
}

// ---- aten.convolution: 1-3 spatial dims, not transposed.

// A list attribute with one value per spatial dim (a single value applies to all).
bool Expand(const AttrMap& attrs, const char* name, size_t d, std::vector<int64_t>& out) {
  absl::StatusOr<IntList> v = GetInts(attrs, name);
  if (!v.ok() || (v->size() != 1 && v->size() != d)) return false;
  out = v->size() == 1 ? std::vector<int64_t>(d, (*v)[0]) : *v;
  return true;
}

struct ConvParams {
  size_t d = 0;  // spatial dims
  int64_t groups = 1;
  std::vector<int64_t> stride, padding, dilation;
  bool bias = false;
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
};

struct ConvState : ExternState {
  PlanCache<ConvPlan> plans;
  WeightCache weights;
};

// Which variants a new plan considers: COIL_CONV_LAYOUT=blocked or =plain forces one (for
// reproducible timings or debugging), anything else measures both on the first call.
enum class LayoutChoice { kMeasure, kBlocked, kPlain };
LayoutChoice ConvLayoutChoice() {
  const char* v = std::getenv("COIL_CONV_LAYOUT");
  if (v != nullptr && std::string(v) == "blocked") return LayoutChoice::kBlocked;
  if (v != nullptr && std::string(v) == "plain") return LayoutChoice::kPlain;
  return LayoutChoice::kMeasure;
}

std::string ImplName(dnnl_primitive_desc_t pd) {
  const char* name = nullptr;
  if (Api().primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name) != dnnl_success ||
      name == nullptr) {
    return "?";
  }
  return name;
}

// The variant whose activations are described by `x_desc` / `o_desc` (format `any`: blocked),
// or none when oneDNN has only its reference implementation for it.
std::optional<ConvVariant> MakeVariant(const ExternArgs& a, const ConvParams& p,
                                       const dnnl_memory_desc_t& x_desc,
                                       const dnnl_memory_desc_t& o_desc,
                                       const dnnl_memory_desc_t& x_plain,
                                       const dnnl_memory_desc_t& w_plain,
                                       const dnnl_memory_desc_t& o_plain, const char* name) {
  const int64_t oc = a.inputs[1].shape[0];
  std::vector<int64_t> wdims(w_plain.dims, w_plain.dims + w_plain.ndims);
  const dnnl_memory_desc_t w_any = Desc(wdims, dnnl_format_tag_any), b_desc = Desc({oc}, dnnl_x);
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
  dnnl_primitive_desc_t raw = nullptr;
  if (Api().primitive_desc_create(&raw, &desc, nullptr, Api().engine, nullptr) != dnnl_success) {
    return std::nullopt;
  }
  DnnlPrimitiveDesc pd(raw);
  const std::string impl = ImplName(pd.get());
  if (impl.rfind("ref", 0) == 0) return std::nullopt;
  ConvVariant v;
  v.name = absl::StrCat(name, " (", impl, ")");
  dnnl_primitive_t prim = nullptr;
  Check(Api().primitive_create(&prim, pd.get()), "primitive_create");
  v.prim.reset(prim);
  auto md = [&](dnnl_query_t what) {
    const dnnl_memory_desc_t* m = Api().primitive_desc_query_md(pd.get(), what, 0);
    if (m == nullptr) throw DnnlFailure{"primitive_desc_query_md"};
    return *m;
  };
  v.x = std::make_unique<Operand>(x_plain, md(dnnl_query_src_md), false);
  v.w = std::make_unique<Operand>(w_plain, md(dnnl_query_weights_md), false);
  v.out = std::make_unique<Operand>(o_plain, md(dnnl_query_dst_md), true);
  return v;
}

std::unique_ptr<ConvPlan> MakeConvPlan(const ExternArgs& a, const ConvParams& p,
                                       LayoutChoice choice) {
  static const dnnl_format_tag_t kData[] = {dnnl_ncw, dnnl_nchw, dnnl_ncdhw};
  static const dnnl_format_tag_t kWeights[] = {dnnl_oiw, dnnl_oihw, dnnl_oidhw};
  static const dnnl_format_tag_t kGroupWeights[] = {dnnl_goiw, dnnl_goihw, dnnl_goidhw};
  const ExternTensor &x = a.inputs[0], &w = a.inputs[1], &out = a.output;
  const int64_t g = p.groups, oc = w.shape[0];
  std::vector<int64_t> wdims = {oc};
  if (g > 1) wdims = {g, oc / g};
  wdims.insert(wdims.end(), w.shape.begin() + 1, w.shape.end());
  const dnnl_format_tag_t w_tag = g > 1 ? kGroupWeights[p.d - 1] : kWeights[p.d - 1];
  const dnnl_memory_desc_t x_plain = Desc(x.shape, kData[p.d - 1]), w_plain = Desc(wdims, w_tag),
                           o_plain = Desc(out.shape, kData[p.d - 1]);
  auto plan = std::make_unique<ConvPlan>();
  if (choice != LayoutChoice::kPlain) {
    std::optional<ConvVariant> blocked =
        MakeVariant(a, p, Desc(x.shape, dnnl_format_tag_any), Desc(out.shape, dnnl_format_tag_any),
                    x_plain, w_plain, o_plain, "blocked");
    if (blocked.has_value()) plan->variants.push_back(*std::move(blocked));
  }
  if (choice != LayoutChoice::kBlocked) {
    std::optional<ConvVariant> plain =
        MakeVariant(a, p, x_plain, o_plain, x_plain, w_plain, o_plain, "plain");
    if (plain.has_value()) plan->variants.push_back(*std::move(plain));
  }
  if (plan->variants.empty()) {
    // Only reference implementations (or a forced layout oneDNN lacks): take the blocked
    // request as oneDNN offers it.
    std::optional<ConvVariant> any =
        MakeVariant(a, p, Desc(x.shape, dnnl_format_tag_any), Desc(out.shape, dnnl_format_tag_any),
                    x_plain, w_plain, o_plain, "blocked");
    if (!any.has_value()) throw DnnlFailure{"no convolution implementation"};
    plan->variants.push_back(*std::move(any));
  }
  if (p.bias) plan->bias = Memory(Desc({oc}, dnnl_x), DNNL_MEMORY_NONE);
  return plan;
}

void RunVariant(ConvVariant& v, ConvPlan& plan, const ExternArgs& a, WeightCache* cache) {
  const ExternTensor &x = a.inputs[0], &w = a.inputs[1], &out = a.output;
  v.x->Bind(x.data, kScratchSrc);
  v.out->Bind(out.data, kScratchDst);
  v.x->Fill();
  dnnl_memory_t weights = Weights(*v.w, w, cache);
  if (plan.bias != nullptr) {
    SetData(plan.bias.get(), a.inputs[2].data);
    Execute(v.prim.get(), {{DNNL_ARG_SRC, v.x->inner()},
                           {DNNL_ARG_WEIGHTS, weights},
                           {DNNL_ARG_BIAS, plan.bias.get()},
                           {DNNL_ARG_DST, v.out->inner()}});
  } else {
    Execute(v.prim.get(), {{DNNL_ARG_SRC, v.x->inner()},
                           {DNNL_ARG_WEIGHTS, weights},
                           {DNNL_ARG_DST, v.out->inner()}});
  }
  v.out->Drain();
  Check(Api().stream_wait(Stream()), "stream_wait");
}

// Keeps the fastest variant of a new plan: each runs kTrials times on this call's data (the
// best time counts, so a preempted trial does not decide), the others and their cached weights
// are dropped. Which layout wins depends on the shape and the CPU: on a 2-core Zen 4, 1x1
// convolutions ran 1.4-3.5x faster plain at batch 1 (far more at batch 8), 3x3 ones blocked.
void ChooseVariant(ConvPlan& plan, const ExternArgs& a, WeightCache* cache) {
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
  ConvVariant chosen = std::move(plan.variants[keep]);
  plan.variants.clear();
  plan.variants.push_back(std::move(chosen));
}

absl::StatusOr<bool> Convolution(const ExternArgs& a) {
  if (a.inputs.size() < 2 || a.inputs.size() > 3 || !AllF32(a)) return false;
  absl::StatusOr<bool> transposed = GetBool(a.attrs, "transposed");
  absl::StatusOr<int64_t> groups = GetInt(a.attrs, "groups");
  if (!transposed.ok() || *transposed || !groups.ok() || *groups < 1) return false;
  const ExternTensor &x = a.inputs[0], &w = a.inputs[1], &out = a.output;
  const size_t rank = w.shape.size();
  if (rank < 3 || rank > 5 || x.shape.size() != rank || out.shape.size() != rank) return false;
  ConvParams p;
  p.d = rank - 2;
  p.groups = *groups;
  p.bias = a.inputs.size() == 3;
  if (!Expand(a.attrs, "stride", p.d, p.stride) || !Expand(a.attrs, "padding", p.d, p.padding) ||
      !Expand(a.attrs, "dilation", p.d, p.dilation)) {
    return false;
  }
  const int64_t g = p.groups, n = x.shape[0], c = x.shape[1], oc = w.shape[0];
  // Degenerate sizes (empty tensors) go to the reference kernel.
  if (x.numel() == 0 || w.numel() == 0 || out.numel() == 0 || oc % g != 0) return false;
  // The output's shape must be the convolution's (as the op's meta function computes it).
  bool ok = c == w.shape[1] * g && out.shape[0] == n && out.shape[1] == oc;
  for (size_t i = 0; ok && i < p.d; ++i) {
    const int64_t extent = p.dilation[i] * (w.shape[2 + i] - 1) + 1;
    ok = x.shape[2 + i] + 2 * p.padding[i] >= extent &&
         out.shape[2 + i] == (x.shape[2 + i] + 2 * p.padding[i] - extent) / p.stride[i] + 1;
  }
  if (p.bias) ok = ok && a.inputs[2].shape.size() == 1 && a.inputs[2].shape[0] == oc;
  if (!ok) return ShapeError("aten.convolution", a);
  if (Dnnl() == nullptr) return false;
  double flops = 2.0 * out.numel() * (c / g);
  for (size_t i = 0; i < p.d; ++i) flops *= w.shape[2 + i];
  const int threads = ThreadsFor(a, flops);
  Api().omp_set_num_threads(threads);
  return Guarded("aten.convolution", [&] {
    PlanKey key;
    AppendKey(key, x.shape);
    AppendKey(key, w.shape);
    AppendKey(key, p.stride);
    AppendKey(key, p.padding);
    AppendKey(key, p.dilation);
    key.insert(key.end(), {g, p.bias, threads});
    ConvState* state = StateOf<ConvState>(a.state);
    WeightCache* cache = state != nullptr ? &state->weights : nullptr;
    std::unique_ptr<ConvPlan> one_off;
    ConvPlan* plan = FindPlan(state, std::move(key), one_off, [&] {
      // A one-off call measures nothing: it takes oneDNN's blocked layouts unless told.
      const LayoutChoice choice = ConvLayoutChoice();
      return MakeConvPlan(a, p, state == nullptr && choice == LayoutChoice::kMeasure
                                    ? LayoutChoice::kBlocked
                                    : choice);
    });
    ChooseVariant(*plan, a, cache);
    RunVariant(plan->variants.front(), *plan, a, cache);
  });
}

}  // namespace

void RegisterDnnlExterns(ExternRegistry& registry) {
  registry.Register("aten.mm", Mm);
  registry.Register("aten.bmm", Bmm);
  registry.Register("aten.convolution", Convolution);
}

}  // namespace coil::cpu
