// PlanMemory: liveness-driven best-fit slot assignment in one arena (slots cut, joined and
// grown), with in-place reuse.
//
// [Note: slots] The arena is a list of contiguous slots, each 64-byte aligned (sizes rounded up
// as floordiv(n + 63, 64) * 64, so offsets are sums of multiples of 64 even when symbolic). In
// program order, a buffer born at kernel t takes (1) the slot of an input that dies at t when
// the kernel is a plain pointwise one reading that input only at the index it writes (in
// place: each element is read before the same element is written), or an extern kernel of an
// op the backend names whose epilogue Loop is such (the input not an operand of the extern op:
// a convolution's residual add, which the CPU runtime then runs as oneDNN's `sum` post-op),
// else (2) the smallest free
// slot provably large enough, cut down to the buffer's size when provably larger (the rest
// stays a free slot), else (3) the smallest run of adjacent free slots provably large enough
// together, joined and cut down, else (4) the free slots at the end of the arena, joined and
// grown to its size, else (5) a new slot at the end. Cutting and joining is what keeps
// concat-heavy models (densenet's ever-wider feature maps) from leaving a trail of slots too
// small for anything that comes later. Slots of buffers that die at t become free only after
// t, so a kernel's inputs and outputs never share bytes except in place. `reuses` names the
// buffer that last held the bytes at a buffer's offset.
// With reuse, an intermediate that no kernel touches gets no slot (offset 0, no bytes used).
// The peak of live bytes counts an in-place pair once at the kernel where one dies and the
// other is born (they share the bytes), so arena_bytes >= peak_live_bytes always holds.
#include "inductor/passes/memory_plan.h"

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "inductor/passes/liveness.h"
#include "ir/check.h"

namespace coil::inductor {
namespace {

SymExpr AlignUp(const SymExpr& n) { return SymExpr::FloorDiv(n + 63, 64) * 64; }

struct Slot {
  SymExpr offset;
  SymExpr size;
  int owner = 0;  // the buffer holding it now, or the last one when free
  bool free = false;
};

// Whether every buffer id a kernel references exists (a pass bug otherwise).
absl::Status CheckBufferIds(const Program& program) {
  const int n = static_cast<int>(program.buffers.size());
  for (const Kernel& k : program.kernels) {
    for (const std::vector<int>& ids : {k.Reads(), k.Writes()}) {
      for (int b : ids) {
        if (b < 1 || b > n) {
          return absl::InternalError(absl::StrCat("memory plan: kernel ", k.name,
                                                  " references buffer ", b, " of ", n));
        }
      }
    }
  }
  return absl::OkStatus();
}

// One range-less Loop and no reductions: each outer index is computed independently.
bool IsPlainPointwise(const Kernel& k) {
  if (k.kind != proto::Kernel::POINTWISE || k.loops.size() != 1 || !k.loops[0].ranges.empty()) {
    return false;
  }
  for (const Expr& e : k.loops[0].body) {
    if (e.kind == proto::Expr::REDUCE) return false;
  }
  return true;
}

// An EXTERN kernel of one of `ops` whose epilogue is one range-less Loop without reductions.
bool IsExternWithPlainEpilogue(const Kernel& k, const std::vector<std::string>& ops) {
  if (k.kind != proto::Kernel::EXTERN || k.loops.size() != 1 || !k.loops[0].ranges.empty() ||
      std::find(ops.begin(), ops.end(), k.extern_op) == ops.end()) {
    return false;
  }
  for (const Expr& e : k.loops[0].body) {
    if (e.kind == proto::Expr::REDUCE) return false;
  }
  return true;
}

bool SameShape(const Buffer& a, const Buffer& b, const SymRanges& ranges) {
  if (ElementSize(a.dtype) != ElementSize(b.dtype) || a.shape.size() != b.shape.size()) {
    return false;
  }
  for (size_t d = 0; d < a.shape.size(); ++d) {
    if (ProveEq(a.shape[d], b.shape[d], ranges) != Truth::kTrue) return false;
  }
  return true;
}

// Whether `k` (a plain pointwise kernel) may write `out` over `in`: it iterates over out's
// shape and stores `out` only at the identity index (_i0, _i1, ...), so each element is
// written once, by the iteration that reads it; it never loads `out` nor writes `in`, and
// loads `in` only, unmasked, at that same index, and before its first store of `out` in the
// body (a horizontally fused kernel can store one output before it loads another's input: a
// store first would overwrite the element the load then reads). Same shapes and element
// sizes make equal indices equal byte offsets.
bool MayWriteInPlace(const Kernel& k, const Buffer& out, const Buffer& in,
                     const SymRanges& ranges) {
  if (!SameShape(out, in, ranges) || k.ranges.size() != out.shape.size()) return false;
  std::vector<SymExpr> identity;
  for (size_t d = 0; d < k.ranges.size(); ++d) {
    if (ProveEq(k.ranges[d], out.shape[d], ranges) != Truth::kTrue) return false;
    identity.push_back(LoopVar(static_cast<int>(d)));
  }
  bool stored = false;
  for (const Expr& e : k.loops[0].body) {
    if (e.kind != proto::Expr::STORE || e.buffer != out.id) continue;
    if (e.index != identity) return false;
    stored = true;
  }
  if (!stored) return false;
  bool out_stored = false;
  for (const Expr& e : k.loops[0].body) {
    if (e.kind == proto::Expr::STORE && e.buffer == in.id) return false;
    if (e.kind == proto::Expr::LOAD && e.buffer == out.id) return false;
    if (e.kind == proto::Expr::LOAD && e.buffer == in.id &&
        (out_stored || e.mask != 0 || e.index != identity)) {
      return false;
    }
    if (e.kind == proto::Expr::STORE && e.buffer == out.id) out_stored = true;
  }
  return true;
}

class Planner {
 public:
  Planner(Program& program, const SymRanges& ranges,
          const std::vector<std::string>& in_place_externs)
      : program_(program),
        ranges_(ranges),
        in_place_externs_(in_place_externs),
        live_(ComputeLiveRanges(program)),
        slot_of_(program.buffers.size() + 1, -1),
        sizes_(program.BufferSizes()),
        size_hints_(program.SizeHints()) {}

  // Buffer `id`'s SizeBytes(), and its value at the hints (EvaluateHint's: 0 when unknown).
  const SymExpr& size(int id) const { return sizes_[id - 1]; }
  int64_t size_hint(int id) const { return size_hints_[id - 1].value_or(0); }

  // Every intermediate buffer its own slot, in id order.
  void PlanWithoutReuse() {
    for (Buffer& b : program_.buffers) {
      if (b.kind == proto::Buffer::INTERMEDIATE) NewSlot(b);
    }
  }

  void PlanWithReuse() {
    const int n = static_cast<int>(program_.kernels.size());
    std::vector<std::vector<int>> births(n), deaths(n);
    for (const Buffer& b : program_.buffers) {
      if (b.kind != proto::Buffer::INTERMEDIATE || !live_[b.id].used()) continue;
      births[live_[b.id].first].push_back(b.id);
      deaths[live_[b.id].last].push_back(b.id);
    }
    for (int t = 0; t < n; ++t) {
      for (int id : births[t]) Place(program_.buffer(id), t);
      for (int id : deaths[t]) {
        Slot& s = slots_[slot_of_[id]];
        if (s.owner == id) s.free = true;  // else taken over in place at t
      }
    }
  }

  // Live intermediate bytes at each kernel, at the hints; a buffer written in place over an
  // input counts once with it at the kernel where one dies and the other is born. One sweep
  // over births and deaths (each buffer's size evaluated once), not every buffer at every
  // kernel: O(kernels + buffers).
  int64_t PeakLiveBytesHint() const {
    const int n = static_cast<int>(program_.kernels.size());
    std::vector<int64_t> delta(n + 1, 0);  // change of the live bytes at each kernel
    for (const Buffer& b : program_.buffers) {
      if (b.kind != proto::Buffer::INTERMEDIATE || !live_[b.id].used()) continue;
      const int64_t bytes = size_hint(b.id);
      delta[live_[b.id].first] += bytes;
      delta[live_[b.id].last + 1] -= bytes;
      if (b.in_place) {
        const int t = live_[b.id].first;
        const int64_t shared = size_hint(b.reuses);
        delta[t] -= shared;
        delta[t + 1] += shared;
      }
    }
    int64_t peak = 0, sum = 0;
    for (int t = 0; t < n; ++t) {
      sum += delta[t];
      peak = std::max(peak, sum);
    }
    return peak;
  }

  const SymExpr& arena_bytes() const { return arena_bytes_; }

 private:
  void NewSlot(Buffer& b) {
    Slot s;
    s.offset = arena_bytes_;
    s.size = Canon(AlignUp(size(b.id)));
    s.owner = b.id;
    arena_bytes_ = arena_bytes_ + s.size;
    b.arena_offset = s.offset;
    slot_of_[b.id] = static_cast<int>(slots_.size());
    slots_.push_back(std::move(s));
  }

  void Take(Buffer& b, int slot) {
    Slot& s = slots_[slot];
    b.reuses = s.owner;
    b.arena_offset = s.offset;
    s.owner = b.id;
    s.free = false;
    slot_of_[b.id] = slot;
  }

  // slot_of_ after slots were split or joined: every slot's current (or last) owner.
  void Reindex() {
    for (int i = 0; i < static_cast<int>(slots_.size()); ++i) slot_of_[slots_[i].owner] = i;
  }

  // Cuts free slot i down to `size` (provably smaller, a multiple of 64) and inserts the rest
  // after it as a free slot with the same last owner.
  void Split(int i, const SymExpr& size) {
    Slot rest;
    rest.offset = slots_[i].offset + size;
    rest.size = Canon(slots_[i].size - size);
    rest.owner = slots_[i].owner;
    rest.free = true;
    slots_[i].size = size;
    slots_.insert(slots_.begin() + i + 1, std::move(rest));
    Reindex();
  }

  // Joins the free slots first..last into one (the first one's last owner).
  void Join(int first, int last) {
    SymExpr total = slots_[first].size;
    for (int i = first + 1; i <= last; ++i) total = total + slots_[i].size;
    slots_[first].size = Canon(std::move(total));
    slots_.erase(slots_.begin() + first + 1, slots_.begin() + last + 1);
    Reindex();
  }

  // b takes free slot i, cut down to b's aligned size when that is provably smaller.
  void TakeFitting(Buffer& b, int i) {
    const SymExpr need = Canon(AlignUp(size(b.id)));
    if (Lt(need, slots_[i].size)) Split(i, need);
    Take(b, i);
  }

  // The smallest run of two or more consecutive free slots whose joined size provably holds
  // `need`, as (first, last); (-1, -1) when there is none.
  std::pair<int, int> FittingRun(const SymExpr& need) const {
    std::pair<int, int> best = {-1, -1};
    SymExpr best_size;
    const int n = static_cast<int>(slots_.size());
    for (int i = 0; i < n; ++i) {
      if (!slots_[i].free) continue;
      SymExpr total = slots_[i].size;
      for (int j = i + 1; j < n && slots_[j].free; ++j) {
        total = Canon(total + slots_[j].size);
        if (!Le(need, total)) continue;
        if (best.first < 0 || SmallerSize(total, best_size)) {
          best = {i, j};
          best_size = total;
        }
        break;
      }
    }
    return best;
  }

  // Whether a buffer of `size` bytes (`aligned` rounded up) fits slot s.
  bool Fits(const SymExpr& size, const SymExpr& aligned, const Slot& s) const {
    return Le(size, s.size) || Le(aligned, s.size);
  }

  // One instance of each symbolic size (slot sizes, buffer sizes, joined runs), so that the
  // memo tables below compare their keys by pointer (operator== tries that first) rather than
  // structurally: placing each buffer looks up its size against every free slot's.
  SymExpr Canon(SymExpr e) const {
    if (e.is_constant()) return e;
    return *canon_.insert(std::move(e)).first;
  }

  // Proofs and hints memoized by their operands: placing every buffer asks the same few size
  // relations against every free slot, and each is a symbolic proof (issue 15: the plan of a
  // wide graph spent seconds re-proving them).
  bool Le(const SymExpr& a, const SymExpr& b) const { return Proved(0, a, b); }
  bool Lt(const SymExpr& a, const SymExpr& b) const { return Proved(1, a, b); }
  bool Proved(int relation, const SymExpr& a, const SymExpr& b) const {
    auto key = std::make_tuple(relation, a, b);
    auto it = proofs_.find(key);
    if (it != proofs_.end()) return it->second;
    const bool proved =
        (relation == 0 ? ProveLe(a, b, ranges_) : ProveLt(a, b, ranges_)) == Truth::kTrue;
    proofs_.emplace(std::move(key), proved);
    return proved;
  }
  int64_t Hint(const SymExpr& e) const {
    auto it = hints_.find(e);
    if (it == hints_.end()) it = hints_.emplace(e, program_.EvaluateHint(e)).first;
    return it->second;
  }

  // Whether size a is smaller than size b: provably, else at the hints.
  bool SmallerSize(const SymExpr& a, const SymExpr& b) const {
    if (Lt(a, b)) return true;
    if (Le(b, a)) return false;
    return Hint(a) < Hint(b);
  }
  bool Smaller(const Slot& a, const Slot& b) const { return SmallerSize(a.size, b.size); }

  // An input of kernel t dying there whose slot `b` may take in place, or 0.
  int InPlaceInput(const Buffer& b, int t) const {
    const Kernel& k = program_.kernels[t];
    const bool extern_epilogue = IsExternWithPlainEpilogue(k, in_place_externs_);
    if (!IsPlainPointwise(k) && !extern_epilogue) return 0;
    if (extern_epilogue && b.id == k.extern_output) return 0;  // written by the op, not the Loop
    for (int in : k.Reads()) {
      const Buffer& input = program_.buffer(in);
      if (in == b.id || input.kind != proto::Buffer::INTERMEDIATE) continue;
      // The op reads its operands (and writes its result) before the epilogue runs.
      if (extern_epilogue && (in == k.extern_output ||
                              std::find(k.extern_inputs.begin(), k.extern_inputs.end(), in) !=
                                  k.extern_inputs.end())) {
        continue;
      }
      if (live_[in].last != t || live_[in].first >= t || slot_of_[in] < 0) continue;
      if (slots_[slot_of_[in]].owner != in) continue;  // already taken by another output
      if (MayWriteInPlace(k, b, input, ranges_)) return in;
    }
    return 0;
  }

  // [Note: placement] In order of preference: in place over a dying input; the smallest free
  // slot that fits (cut down to b's size, the rest staying free); the smallest run of adjacent
  // free slots that fits together (joined, then cut down); the free slots at the arena's end,
  // grown to b's size; a new slot at the end. Cutting and joining keep slots contiguous (each
  // offset is the previous offset plus its size), so offsets stay sums of multiples of 64.
  void Place(Buffer& b, int t) {
    if (int in = InPlaceInput(b, t); in != 0) {
      Take(b, slot_of_[in]);
      b.in_place = true;
      return;
    }
    const SymExpr size = Canon(this->size(b.id));
    const SymExpr need = Canon(AlignUp(size));
    int best = -1;
    for (int i = 0; i < static_cast<int>(slots_.size()); ++i) {
      if (!slots_[i].free || !Fits(size, need, slots_[i])) continue;
      if (best < 0 || Smaller(slots_[i], slots_[best])) best = i;
    }
    if (best >= 0) {
      TakeFitting(b, best);
      return;
    }
    if (auto [first, last] = FittingRun(need); first >= 0) {
      Join(first, last);
      TakeFitting(b, first);
      return;
    }
    int top = static_cast<int>(slots_.size());
    while (top > 0 && slots_[top - 1].free) --top;
    if (top < static_cast<int>(slots_.size())) {
      SymExpr free_at_end(0);
      for (int i = top; i < static_cast<int>(slots_.size()); ++i) {
        free_at_end = free_at_end + slots_[i].size;
      }
      free_at_end = Canon(std::move(free_at_end));
      if (Le(free_at_end, need)) {
        Join(top, static_cast<int>(slots_.size()) - 1);
        slots_[top].size = need;
        arena_bytes_ = slots_[top].offset + need;
        Take(b, top);
        return;
      }
    }
    NewSlot(b);
  }

  Program& program_;
  const SymRanges& ranges_;
  const std::vector<std::string>& in_place_externs_;
  std::vector<LiveRange> live_;
  std::vector<int> slot_of_;  // by buffer id: index into slots_, or -1
  const std::vector<SymExpr> sizes_;                      // by buffer id - 1
  const std::vector<std::optional<int64_t>> size_hints_;  // by buffer id - 1
  std::vector<Slot> slots_;
  SymExpr arena_bytes_{0};
  mutable absl::flat_hash_map<std::tuple<int, SymExpr, SymExpr>, bool> proofs_;
  mutable absl::flat_hash_map<SymExpr, int64_t> hints_;
  mutable absl::flat_hash_set<SymExpr> canon_;
};

}  // namespace

absl::StatusOr<MemoryPlanSummary> PlanMemory(Program& program, const SymRanges& ranges,
                                             bool reuse,
                                             const std::vector<std::string>& in_place_externs) {
  if (absl::Status s = CheckBufferIds(program); !s.ok()) return s;
  for (Buffer& b : program.buffers) {
    b.arena_offset = SymExpr(0);
    b.reuses = 0;
    b.in_place = false;
  }
  Planner planner(program, ranges, in_place_externs);
  if (reuse) {
    planner.PlanWithReuse();
  } else {
    planner.PlanWithoutReuse();
  }
  MemoryPlanSummary summary;
  summary.arena_bytes = planner.arena_bytes();
  summary.arena_bytes_hint = program.EvaluateHint(summary.arena_bytes);
  summary.peak_live_bytes_hint = planner.PeakLiveBytesHint();
  for (const Buffer& b : program.buffers) {
    if (b.kind == proto::Buffer::INTERMEDIATE) summary.unplanned_bytes_hint += planner.size_hint(b.id);
  }
  return summary;
}

}  // namespace coil::inductor
