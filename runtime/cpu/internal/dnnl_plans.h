// The plumbing the oneDNN externs share (dnnl_matmul.cc, dnnl_conv.cc): failures as Status,
// per-thread streams and scratch, thin helpers over oneDNN's C API, operands that reorder
// between the schedule's plain layout and a primitive's blocked one, constant weights kept in
// the primitive's layout, and the per-call-site plan cache (at most kMaxPlans plans, least
// recently used dropped: a symbolic batch gets one plan per batch size in use).
// Not an API: used by the externs library only.
//
//   return Guarded("aten.mm", [&] {
//     MmPlan* plan = FindPlan(StateOf<MmState>(a.state), {m, k, n, threads}, one_off, make);
//     plan->x->Bind(x.data, kScratchSrc);
//     Execute(plan->prim.get(), {{DNNL_ARG_SRC, plan->x->inner()}, ...});
//   });
#ifndef COIL_RUNTIME_CPU_INTERNAL_DNNL_PLANS_H_
#define COIL_RUNTIME_CPU_INTERNAL_DNNL_PLANS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/cpu/dnnl_api.h"
#include "runtime/cpu/externs.h"
#include "runtime/cpu/internal/weight_memory.h"

namespace coil::cpu::dnnl_internal {

// Plans kept per call site (distinct shapes of a symbolic batch).
constexpr size_t kMaxPlans = 8;

// The OpenMP threads for a call of `flops` floating-point operations (ThreadsForCall with the
// call's f32 input and output bytes, a.num_threads and the bounds below, each overridable once
// per process: COIL_DNNL_MIN_PARALLEL_FLOPS, COIL_DNNL_BYTES_PER_THREAD,
// COIL_DNNL_MIN_PARALLEL_BYTES, COIL_DNNL_FLOPS_PER_THREAD).
int ThreadsFor(const ExternArgs& a, double flops);

struct ParallelBounds {
  double min_flops = 8e6;  // a call with at least these flops runs on every thread
  double min_bytes = 0;    // >0: a call with at least these bytes runs on every thread
  // A smaller call gets one thread per this many bytes when that is at least 4 threads
  // (0: one thread, whatever its bytes).
  double bytes_per_thread = 256 << 10;
  double flops_per_thread = 0;  // >0: a flop-bound call gets at most flops / this threads
};

// The rule behind ThreadsFor, for `threads` available: calls of at least min_flops run on all
// of them (or flops / flops_per_thread); smaller ones, which are memory-bound or tiny, run on
// the calling thread alone (waking OpenMP's passive workers costs about as much: the rule was
// tuned on the 2-core CI machine, where it stays so) unless their bytes give at least 4
// threads bytes_per_thread each (on 16 threads a 1 MB call gets 4, a 4 MB one 16).
int ThreadsForCall(double flops, double bytes, int threads, const ParallelBounds& bounds);

// The loaded oneDNN (Dnnl() must be non-null).
const DnnlApi& Api();

// A failed oneDNN call inside an op; Guarded turns it into a Status.
struct DnnlFailure {
  std::string what;
};

// Throws DnnlFailure naming `what` unless `status` is dnnl_success.
void Check(dnnl_status_t status, const char* what);
// The memory descriptor `what` of a primitive descriptor (throws DnnlFailure when absent).
dnnl_memory_desc_t QueryMd(const_dnnl_primitive_desc_t pd, dnnl_query_t what);
// A convolution's list attribute with one value per spatial dim: a single value applies to
// all, an absent attribute gives `fallback` for each; false when it has another length.
bool ExpandSpatial(const AttrMap& attrs, const char* name, size_t d, int64_t fallback,
                   std::vector<int64_t>& out);

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

// This thread's oneDNN stream on the CPU engine.
dnnl_stream_t Stream();

// Per-thread scratch: slot `i` is a 64-byte-aligned buffer of at least `bytes`, reused by
// every later call on this thread (ops run one at a time per thread).
enum ScratchSlot { kScratchSrc, kScratchDst, kScratchWeights, kNumScratch };
void* Scratch(ScratchSlot slot, size_t bytes);

// ---- Thin helpers over the C API (each throws DnnlFailure on failure).

// A memory descriptor of `dims` in format `tag` with elements of `type` (f32 unless given).
dnnl_memory_desc_t Desc(absl::Span<const int64_t> dims, dnnl_format_tag_t tag,
                        dnnl_data_type_t type = dnnl_f32);
// Whether two descriptors describe the same layout.
bool Same(const dnnl_memory_desc_t& a, const dnnl_memory_desc_t& b);
// A memory object of `md` over `handle` (DNNL_MEMORY_NONE: data set later).
DnnlMemory Memory(const dnnl_memory_desc_t& md, void* handle);
void SetData(dnnl_memory_t m, void* data);
// The primitive of an op descriptor.
DnnlPrimitive Primitive(const void* op_desc);
// The primitive's layout for one of its arguments (`out` receives the primitive when empty).
dnnl_memory_desc_t QueryDesc(const void* op_desc, dnnl_query_t what, DnnlPrimitive& out);
// The primitive descriptor of `op_desc` with `attr` (may be null), or null when oneDNN has no
// implementation for it or only its reference one (`impl` receives the implementation's name).
DnnlPrimitiveDesc FastPrimitiveDesc(const void* op_desc, const_dnnl_primitive_attr_t attr,
                                    std::string* impl = nullptr);
// The implementation's name oneDNN reports ("?" when it does not).
std::string ImplName(const_dnnl_primitive_desc_t pd);
// A reorder primitive between two layouts.
DnnlPrimitive Reorder(const dnnl_memory_desc_t& from, const dnnl_memory_desc_t& to);
// Runs `p` on this thread's stream.
void Execute(dnnl_primitive_t p, absl::Span<const dnnl_exec_arg_t> args);
void RunReorder(dnnl_primitive_t reorder, dnnl_memory_t from, dnnl_memory_t to);

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
  // `huge`: the copies on huge pages where large (weight_memory.h: a matmul's).
  explicit WeightCache(bool huge = false) : huge_(huge) {}
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
    // The copy in weight memory (weight_memory.h).
    std::unique_ptr<char, decltype(&std::free)> bytes(
        static_cast<char*>(internal::AllocateWeights(
            std::max<size_t>(1, Api().memory_desc_get_size(&w.inner_desc)), huge_)),
        &std::free);
    if (bytes == nullptr) throw std::bad_alloc();
    DnnlMemory mem = Memory(w.inner_desc, bytes.get());
    SetData(w.user.get(), data);
    RunReorder(w.reorder.get(), w.user.get(), mem.get());
    entries_.push_back({w.inner_desc, data, std::move(bytes), std::move(mem)});
    return entries_.back().mem.get();
  }

 private:
  struct Entry {
    dnnl_memory_desc_t desc;
    void* src;
    std::unique_ptr<char, decltype(&std::free)> bytes;  // outlives mem (declared before it)
    DnnlMemory mem;
  };
  std::vector<Entry> entries_;
  bool huge_ = false;
};

// Weights as the primitive wants them: cached when constant and the site keeps state,
// reordered into scratch on every call otherwise.
dnnl_memory_t Weights(Operand& w, const ExternTensor& t, WeightCache* cache);

// A call's identity for plan lookup: every shape and attribute that shapes the primitive.
using PlanKey = std::vector<int64_t>;
// Appends `values` (with their count) to `key`.
void AppendKey(PlanKey& key, absl::Span<const int64_t> values);

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

// Whether every input and the output are f32.
bool AllF32(const ExternArgs& a);

// The oneDNN element type of `t`: f32 or bf16, dnnl_data_type_undef for any other.
dnnl_data_type_t DnnlType(DType t);

// The element types of a matmul or convolution call: every tensor f32, or bf16 inputs (the
// operands; a convolution's bias, input 2, bf16 or f32) with a bf16 or f32 output (autocast's
// products: bf16 in, f32 accumulation inside oneDNN, the graph's output type out).
struct PrimitiveTypes {
  dnnl_data_type_t src = dnnl_f32;   // inputs 0 and 1
  dnnl_data_type_t dst = dnnl_f32;   // the output
  dnnl_data_type_t bias = dnnl_f32;  // input 2, when there is one
  bool f32() const { return src == dnnl_f32 && dst == dnnl_f32 && bias == dnnl_f32; }
};
// The call's types, or false for any other combination (the reference kernel runs it).
bool GetPrimitiveTypes(const ExternArgs& a, PrimitiveTypes& types);

// "[2, 3]".
std::string Shape(const ExternTensor& t);

// InvalidArgument: `op` of the inputs' shapes cannot produce the output's.
absl::Status ShapeError(absl::string_view op, const ExternArgs& a);

}  // namespace coil::cpu::dnnl_internal

#endif  // COIL_RUNTIME_CPU_INTERNAL_DNNL_PLANS_H_
