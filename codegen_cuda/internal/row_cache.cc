// Persistent row kernels: the register cache plan (see row_cache.h).
#include "codegen_cuda/internal/row_cache.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen_cuda/internal/index_source.h"
#include "runtime/cuda/kernel_abi.h"

namespace coil::codegen_cuda_internal {
namespace {

// The positions a ranged Loop covers, as one comparable string (its ranges), and their count
// when constant.
std::string RangesKey(const proto::Loop& l) {
  std::string key;
  for (const proto::SymExpr& r : l.ranges()) absl::StrAppend(&key, r.SerializeAsString(), "|");
  return key;
}

std::optional<int64_t> ConstantCount(const proto::Loop& l) {
  int64_t count = 1;
  for (const proto::SymExpr& r : l.ranges()) {
    std::optional<int64_t> v = ConstantValue(r);
    if (!v.has_value() || *v <= 0 || *v > (int64_t{1} << 30) / count) return std::nullopt;
    count *= *v;
  }
  return count;
}

// Two accesses touch the same element when buffer and index agree (within Loops that cover the
// same positions); two LOADs read the same value when their dtypes agree too.
std::string ElementKey(const proto::Expr& e) {
  std::string key = absl::StrCat(e.buffer(), ":");
  for (const proto::SymExpr& ix : e.index()) absl::StrAppend(&key, ix.SerializeAsString(), "|");
  return key;
}

std::string LoadKey(const proto::Expr& e) { return absl::StrCat(e.dtype(), ":", ElementKey(e)); }

bool IsWide(DType t) {
  return t == proto::FLOAT64 || t == proto::INT64;
}

}  // namespace

namespace {

// The vector accesses of ranged Loop `l` (RowVectorAccesses), and whether all of them are 1 or
// 2 bytes wide with the innermost range a multiple of kCudaRowVectorItems16 (`narrow`).
absl::flat_hash_set<int> LoopVectorAccesses(const proto::Kernel& k, const proto::Loop& l,
                                            const ScheduleInfo& info, bool& narrow) {
  absl::flat_hash_set<int> out;
  narrow = false;
  if (!info.vectorize || l.ranges_size() == 0) return out;
  std::optional<int64_t> last = ConstantValue(l.ranges(l.ranges_size() - 1));
  if (!last.has_value() || *last <= 0 || *last % cuda::kCudaVectorItems != 0) return out;
  const int nk = k.ranges_size(), nl = l.ranges_size();
  // The access's index is _i.. (`outer` of them), then _r.., over a buffer of those ranges.
  auto matches = [&](const proto::Expr& e, int outer) {
    const proto::Buffer& b = *info.buffers.at(e.buffer());
    if (b.shape_size() != outer + nl || e.index_size() != outer + nl) return false;
    for (int d = 0; d < outer + nl; ++d) {
      const proto::SymExpr& ix = e.index(d);
      const std::string want = d < outer ? absl::StrCat("_i", d) : absl::StrCat("_r", d - outer);
      const proto::SymExpr& range = d < outer ? k.ranges(d) : l.ranges(d - outer);
      if (ix.kind() != proto::SymExpr::SYMBOL || ix.name() != want ||
          b.shape(d).SerializeAsString() != range.SerializeAsString()) {
        return false;
      }
    }
    return true;
  };
  narrow = *last % kCudaRowVectorItems16 == 0;
  for (const proto::Expr& e : l.body()) {
    if (e.kind() != proto::Expr::LOAD && e.kind() != proto::Expr::STORE) continue;
    if (e.mask() != 0) continue;
    // The row's elements, or (loads only) a row-shaped operand every row reads: a layer
    // norm's weight and bias.
    if (matches(e, nk) || (e.kind() == proto::Expr::LOAD && nk > 0 && matches(e, 0))) {
      out.insert(e.id());
      narrow = narrow && ElementSize(info.buffers.at(e.buffer())->dtype()) <= 2;
    }
  }
  return out;
}

}  // namespace

RowVector RowVectorAccesses(const proto::Kernel& k, const proto::Loop& l,
                            const ScheduleInfo& info) {
  RowVector out;
  bool narrow = false;
  out.accesses = LoopVectorAccesses(k, l, info, narrow);
  if (out.accesses.empty()) return out;
  // 8 per group only when every vectorized Loop of the kernel can take 8, so that persistent
  // rows see the same groups in each (a bf16 row with an f32 weight stays at 4).
  for (const proto::Loop& other : k.loops()) {
    bool n = false;
    if (!LoopVectorAccesses(k, other, info, n).empty() && !n) narrow = false;
  }
  out.items = narrow ? kCudaRowVectorItems16 : cuda::kCudaVectorItems;
  return out;
}

std::string RowCache::Slot(int id, int item) const {
  auto it = slot_of.find(id);
  if (it == slot_of.end()) it = store_fills.find(id);
  return absl::StrCat("coil_c", it->second, "[coil_j][", item, "]");
}

std::string RowCache::RawVector(int id) const {
  return absl::StrCat("coil_c", slot_of.at(id), "[coil_j]");
}

std::string PersistentLoopHead(const RowCache& c, const std::string& ix, const std::string& pad) {
  const std::string p = c.items == 1 ? "coil_p" : "coil_pv";
  const std::string count = c.items == 1 ? "coil_m" : absl::StrCat("coil_m / ", c.items);
  return absl::StrCat("for (int coil_j = 0; coil_j < ", c.iterations, "; ++coil_j) {\n", pad,
                      "  const ", ix, " ", p, " = (", ix, ")threadIdx.x + (", ix, ")coil_j * ",
                      c.threads, ";\n",
                      c.exact ? "" : absl::StrCat(pad, "  if (", p, " >= ", count, ") break;\n"));
}

RowCache PlanRowCache(const proto::Kernel& k, const ScheduleInfo& info, bool warp_rows) {
  RowCache none;
  if (!info.persistent_rows) return none;
  std::optional<std::string> ranges;
  std::optional<int> items;  // positions per group, the same in every ranged Loop
  absl::flat_hash_set<int> vector_loads;
  int64_t count = 0;
  int ranged = 0;
  absl::flat_hash_set<int> stored;
  // Buffers whose every STORE is unmasked, in a ranged Loop, at one index: those STOREs and
  // the first one's Loop (an empty list: not forwarded).
  std::map<int, std::pair<std::vector<const proto::Expr*>, int>> stores;
  absl::flat_hash_set<int> unforwardable;
  for (int li = 0; li < k.loops_size(); ++li) {
    const proto::Loop& l = k.loops(li);
    for (const proto::Expr& e : l.body()) {
      if (e.kind() != proto::Expr::STORE) continue;
      stored.insert(e.buffer());
      auto [it, fresh] = stores.try_emplace(e.buffer(), std::vector<const proto::Expr*>{}, li);
      if (e.mask() != 0 || l.ranges_size() == 0 ||
          (!fresh && ElementKey(e) != ElementKey(*it->second.first.front()))) {
        unforwardable.insert(e.buffer());
      }
      it->second.first.push_back(&e);
    }
    if (l.ranges_size() == 0) continue;
    ++ranged;
    const std::string key = RangesKey(l);
    const RowVector rv = RowVectorAccesses(k, l, info);
    std::optional<int64_t> c = ConstantCount(l);
    if (!c.has_value() || (ranges.has_value() && (*ranges != key || *items != rv.items))) {
      return none;
    }
    ranges = key;
    items = rv.items;
    vector_loads.insert(rv.accesses.begin(), rv.accesses.end());
    count = *c;
  }
  if (ranged < 2) return none;
  RowCache cache;
  cache.items = *items;
  cache.threads = warp_rows ? 32 : cuda::kCudaBlockThreads;
  const int64_t groups = count / cache.items;  // vectorized: count is a multiple of items
  cache.iterations = static_cast<int>((groups + cache.threads - 1) / cache.threads);
  cache.exact = groups % cache.threads == 0;
  const int64_t per_slot = int64_t{cache.iterations} * cache.items;
  if (per_slot > kRowCacheRegisters) return none;
  // LOADs by element: the ranged Loops each key occurs in, and its LOADs in program order.
  struct Seen {
    absl::flat_hash_set<int> loops;
    std::vector<const proto::Expr*> loads;
  };
  absl::flat_hash_map<std::string, Seen> seen;
  std::vector<std::string> order;
  for (int li = 0; li < k.loops_size(); ++li) {
    if (k.loops(li).ranges_size() == 0) continue;
    for (const proto::Expr& e : k.loops(li).body()) {
      if (e.kind() != proto::Expr::LOAD || e.mask() != 0 || stored.contains(e.buffer())) continue;
      const std::string key = LoadKey(e);
      auto [it, fresh] = seen.try_emplace(key);
      if (fresh) order.push_back(key);
      it->second.loops.insert(li);
      it->second.loads.push_back(&e);
    }
  }
  int64_t registers = 0;
  for (const std::string& key : order) {
    const Seen& s = seen.at(key);
    if (s.loops.size() < 2) continue;
    const DType dt = s.loads.front()->dtype();
    // A vector load keeps the bytes it read (a bf16 row: half the registers of its f32 values).
    const bool raw = vector_loads.contains(s.loads.front()->id());
    const DType mem = info.buffers.at(s.loads.front()->buffer())->dtype();
    const int64_t cost =
        raw ? (per_slot * ElementSize(mem) + 3) / 4 : per_slot * (IsWide(dt) ? 2 : 1);
    if (registers + cost > kRowCacheRegisters) continue;
    registers += cost;
    const int slot = static_cast<int>(cache.slot_dtype.size());
    cache.slot_dtype.push_back(dt);
    cache.slot_raw.push_back(raw ? std::optional<DType>(mem) : std::nullopt);
    cache.fills.insert(s.loads.front()->id());
    for (const proto::Expr* e : s.loads) cache.slot_of[e->id()] = slot;
  }
  // Forwarded stores: the LOADs of a stored element in ranged Loops after the first STORE's
  // (those of the first such LOAD's dtype); every STORE of the element fills the slot.
  for (const auto& [buffer, st] : stores) {
    if (unforwardable.contains(buffer)) continue;
    const std::string key = ElementKey(*st.first.front());
    std::vector<const proto::Expr*> loads;
    for (int li = st.second + 1; li < k.loops_size(); ++li) {
      if (k.loops(li).ranges_size() == 0) continue;
      for (const proto::Expr& e : k.loops(li).body()) {
        if (e.kind() != proto::Expr::LOAD || e.buffer() != buffer || e.mask() != 0 ||
            ElementKey(e) != key || (!loads.empty() && e.dtype() != loads.front()->dtype())) {
          continue;
        }
        loads.push_back(&e);
      }
    }
    if (loads.empty()) continue;
    const DType dt = loads.front()->dtype();
    const int64_t cost = per_slot * (IsWide(dt) ? 2 : 1);
    if (registers + cost > kRowCacheRegisters) continue;
    registers += cost;
    const int slot = static_cast<int>(cache.slot_dtype.size());
    cache.slot_dtype.push_back(dt);
    cache.slot_raw.push_back(std::nullopt);
    for (const proto::Expr* e : st.first) cache.store_fills[e->id()] = slot;
    for (const proto::Expr* e : loads) cache.slot_of[e->id()] = slot;
  }
  if (cache.slot_dtype.empty()) return none;
  return cache;
}

}  // namespace coil::codegen_cuda_internal
