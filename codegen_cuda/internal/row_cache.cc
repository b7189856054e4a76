// Persistent row kernels: the register cache plan (see row_cache.h).
#include "codegen_cuda/internal/row_cache.h"

#include <cstring>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen_cuda/internal/index_source.h"
#include "ir/check.h"
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

// Value numbering of a row kernel's ranged Loops: equal keys are equal values at the same
// position (the same op and dtype over equally keyed operands; loads by element; literals by
// bits). Loads of stored buffers, masked loads, INDEX and RANDOM are keyed by their own id.
struct Numbered {
  struct Node {
    const proto::Expr* e = nullptr;
    int loop = 0;
    int key = 0;
    bool varying = false;   // depends on the position (else a per-row value)
    std::vector<int> deps;  // the same Loop's expressions it reads (args, mask)
  };
  absl::flat_hash_map<int, Node> nodes;
  std::vector<std::vector<int>> loop_exprs;  // per Loop (ranged only), in program order
  std::map<int, std::vector<int>> occurrences;  // key -> expression ids in program order
};

bool MentionsPosition(const proto::SymExpr& e) {
  if (e.kind() == proto::SymExpr::SYMBOL) return e.name().rfind("_r", 0) == 0;
  for (const proto::SymExpr& a : e.args()) {
    if (MentionsPosition(a)) return true;
  }
  return false;
}

Numbered NumberValues(const proto::Kernel& k, const absl::flat_hash_set<int>& stored) {
  Numbered n;
  absl::flat_hash_map<std::string, int> intern;
  n.loop_exprs.resize(k.loops_size());
  for (int li = 0; li < k.loops_size(); ++li) {
    if (k.loops(li).ranges_size() == 0) continue;
    for (const proto::Expr& e : k.loops(li).body()) {
      Numbered::Node node;
      node.e = &e;
      node.loop = li;
      std::string key;
      const std::string own = absl::StrCat("U", e.id());
      // An operand's key; the same Loop's operands are dependencies (and carry `varying`).
      auto operand = [&](int id) -> std::string {
        auto it = n.nodes.find(id);
        if (it == n.nodes.end()) return absl::StrCat("X", id);  // a Loop without ranges
        if (it->second.loop != li) return absl::StrCat("R", id);  // an earlier Loop's REDUCE
        node.deps.push_back(id);
        node.varying = node.varying || it->second.varying;
        return absl::StrCat(it->second.key);
      };
      switch (e.kind()) {
        case proto::Expr::LOAD:
          if (e.mask() != 0 || stored.contains(e.buffer())) {
            if (e.mask() != 0) operand(e.mask());
            key = own;
            node.varying = true;
          } else {
            key = absl::StrCat("L", LoadKey(e));
            for (const proto::SymExpr& ix : e.index()) {
              node.varying = node.varying || MentionsPosition(ix);
            }
          }
          break;
        case proto::Expr::LITERAL: {
          uint64_t bits;
          const double d = e.literal();
          std::memcpy(&bits, &d, sizeof bits);
          key = absl::StrCat("C", e.dtype(), ":", bits, ":", e.int_literal());
          break;
        }
        case proto::Expr::APPLY:
          key = absl::StrCat("A", e.op(), ":", e.dtype(), "(");
          for (int a : e.args()) absl::StrAppend(&key, operand(a), ",");
          break;
        default:  // REDUCE, STORE: effects; INDEX, RANDOM: their own
          for (int a : e.args()) operand(a);
          key = own;
          node.varying = true;
          break;
      }
      node.key = intern.try_emplace(key, static_cast<int>(intern.size())).first->second;
      n.occurrences[node.key].push_back(e.id());
      n.loop_exprs[li].push_back(e.id());
      n.nodes[e.id()] = std::move(node);
    }
  }
  return n;
}

// The expressions evaluated when the keys in `cached` are read from their slots in the Loops
// after their first occurrence's (which fills the slot, so it is evaluated).
absl::flat_hash_set<int> LiveExprs(const Numbered& n, const std::set<int>& cached) {
  absl::flat_hash_set<int> live;
  for (const std::vector<int>& loop : n.loop_exprs) {
    std::vector<int> work;
    for (int id : loop) {
      const Numbered::Node& x = n.nodes.at(id);
      const proto::Expr::Kind kind = x.e->kind();
      if (kind == proto::Expr::STORE || kind == proto::Expr::REDUCE ||
          (cached.contains(x.key) && n.occurrences.at(x.key).front() == id)) {
        work.push_back(id);
      }
    }
    while (!work.empty()) {
      const int id = work.back();
      work.pop_back();
      if (!live.insert(id).second) continue;
      const Numbered::Node& x = n.nodes.at(id);
      if (cached.contains(x.key) && x.loop > n.nodes.at(n.occurrences.at(x.key).front()).loop) {
        continue;  // read from its slot
      }
      for (int d : x.deps) work.push_back(d);
    }
  }
  return live;
}

// Loads and elementwise expressions evaluated per position.
int PositionWork(const Numbered& n, const absl::flat_hash_set<int>& live) {
  int work = 0;
  for (int id : live) {
    const Numbered::Node& x = n.nodes.at(id);
    const proto::Expr::Kind kind = x.e->kind();
    if (x.varying && (kind == proto::Expr::LOAD || kind == proto::Expr::APPLY)) ++work;
  }
  return work;
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
  // Forwarded stores: the LOADs of a stored element in ranged Loops after the first STORE's
  // (those of the first such LOAD's dtype); every STORE of the element fills the slot.
  struct Forward {
    const std::vector<const proto::Expr*>* stores = nullptr;
    std::vector<const proto::Expr*> loads;
    int64_t cost = 0;
  };
  std::vector<Forward> forwards;
  int64_t forward_registers = 0;
  for (const auto& [buffer, st] : stores) {
    if (unforwardable.contains(buffer)) continue;
    const std::string key = ElementKey(*st.first.front());
    Forward f;
    f.stores = &st.first;
    for (int li = st.second + 1; li < k.loops_size(); ++li) {
      if (k.loops(li).ranges_size() == 0) continue;
      for (const proto::Expr& e : k.loops(li).body()) {
        if (e.kind() != proto::Expr::LOAD || e.buffer() != buffer || e.mask() != 0 ||
            ElementKey(e) != key || (!f.loads.empty() && e.dtype() != f.loads.front()->dtype())) {
          continue;
        }
        f.loads.push_back(&e);
      }
    }
    if (f.loads.empty()) continue;
    f.cost = per_slot * (IsWide(f.loads.front()->dtype()) ? 2 : 1);
    forward_registers += f.cost;
    forwards.push_back(std::move(f));
  }
  // LOADs by element that two or more ranged Loops evaluate (`live`), with their LOADs in
  // program order, and the registers of their slots.
  struct Seen {
    absl::flat_hash_set<int> loops;
    std::vector<const proto::Expr*> loads;
  };
  const auto load_cost = [&](const proto::Expr& first) -> int64_t {
    // A vector load keeps the bytes it read (a bf16 row: half the registers of its f32 values).
    if (vector_loads.contains(first.id())) {
      return (per_slot * ElementSize(info.buffers.at(first.buffer())->dtype()) + 3) / 4;
    }
    return per_slot * (IsWide(first.dtype()) ? 2 : 1);
  };
  const auto repeated_loads = [&](const absl::flat_hash_set<int>& live, int64_t* registers) {
    std::vector<Seen> out;
    absl::flat_hash_map<std::string, int> index;
    for (int li = 0; li < k.loops_size(); ++li) {
      if (k.loops(li).ranges_size() == 0) continue;
      for (const proto::Expr& e : k.loops(li).body()) {
        if (e.kind() != proto::Expr::LOAD || e.mask() != 0 || stored.contains(e.buffer()) ||
            !live.contains(e.id()) || info.scalar_constants.contains(e.buffer())) {
          continue;
        }
        auto [it, fresh] = index.try_emplace(LoadKey(e), static_cast<int>(out.size()));
        if (fresh) out.emplace_back();
        out[it->second].loops.insert(li);
        out[it->second].loads.push_back(&e);
      }
    }
    std::vector<Seen> repeated;
    *registers = 0;
    for (Seen& s : out) {
      if (s.loops.size() < 2) continue;
      *registers += load_cost(*s.loads.front());
      repeated.push_back(std::move(s));
    }
    return repeated;
  };
  // Computed values: greedily the key that saves the most work per register, while the values,
  // the loads still repeated and the forwarded stores fit the budget.
  const Numbered numbered = NumberValues(k, stored);
  // Values read through an index (_v<id>: gathers) are used outside the args: none kept.
  bool data_indices = false;
  for (const proto::Loop& l : k.loops()) {
    for (const proto::Expr& e : l.body()) {
      for (const proto::SymExpr& ix : e.index()) data_indices = data_indices || MentionsDataValue(ix);
      if (e.has_value()) data_indices = data_indices || MentionsDataValue(e.value());
    }
  }
  std::set<int> candidates, chosen;
  for (const auto& [key, ids] : numbered.occurrences) {
    const Numbered::Node& first = numbered.nodes.at(ids.front());
    if (!info.row_values || data_indices || first.e->kind() != proto::Expr::APPLY ||
        !first.varying) {
      continue;
    }
    for (int id : ids) {
      if (numbered.nodes.at(id).loop != first.loop) candidates.insert(key);
    }
  }
  const auto value_cost = [&](int key) {
    return per_slot * (IsWide(numbered.nodes.at(numbered.occurrences.at(key).front()).e->dtype())
                           ? 2 : 1);
  };
  const auto total_registers = [&](const std::set<int>& values, int64_t* work,
                                   absl::flat_hash_set<int>* live_out) {
    absl::flat_hash_set<int> live = LiveExprs(numbered, values);
    int64_t registers = 0;
    repeated_loads(live, &registers);
    registers += forward_registers;
    for (int key : values) registers += value_cost(key);
    *work = PositionWork(numbered, live);
    if (live_out != nullptr) *live_out = std::move(live);
    return registers;
  };
  int64_t work = 0;
  int64_t registers_now = total_registers(chosen, &work, nullptr);
  while (true) {
    int best = -1;
    double best_score = 0;
    int64_t best_work = work, best_registers = registers_now;
    for (int key : candidates) {
      if (chosen.contains(key)) continue;
      std::set<int> with = chosen;
      with.insert(key);
      int64_t w = 0;
      const int64_t r = total_registers(with, &w, nullptr);
      if (work - w < kRowCacheMinSaving || r > kRowCacheRegisters) continue;
      const double score =
          static_cast<double>(work - w) / static_cast<double>(std::max<int64_t>(1, r - registers_now));
      if (best < 0 || score > best_score) {
        best = key;
        best_score = score;
        best_work = w;
        best_registers = r;
      }
    }
    if (best < 0) break;
    chosen.insert(best);
    work = best_work;
    registers_now = best_registers;
  }
  absl::flat_hash_set<int> live;
  total_registers(chosen, &work, &live);
  // A value whose later occurrences all feed a value chosen after it is never read: dropped.
  for (auto it = chosen.begin(); it != chosen.end();) {
    const std::vector<int>& ids = numbered.occurrences.at(*it);
    const int first_loop = numbered.nodes.at(ids.front()).loop;
    bool read = false;
    for (int id : ids) read = read || (numbered.nodes.at(id).loop > first_loop && live.contains(id));
    it = read ? std::next(it) : chosen.erase(it);
  }
  total_registers(chosen, &work, &live);
  if (!chosen.empty()) {
    for (const auto& [id, node] : numbered.nodes) {
      const proto::Expr::Kind kind = node.e->kind();
      if (kind != proto::Expr::STORE && kind != proto::Expr::REDUCE && !live.contains(id)) {
        cache.dead.insert(id);
      }
    }
  } else {
    for (const auto& [id, node] : numbered.nodes) live.insert(id);
  }
  int64_t registers = 0;
  int64_t unused = 0;
  for (const Seen& s : repeated_loads(live, &unused)) {
    const proto::Expr& first = *s.loads.front();
    const int64_t cost = load_cost(first);
    if (registers + cost > kRowCacheRegisters) continue;
    registers += cost;
    const int slot = static_cast<int>(cache.slot_dtype.size());
    const bool raw = vector_loads.contains(first.id());
    cache.slot_dtype.push_back(first.dtype());
    cache.slot_raw.push_back(
        raw ? std::optional<DType>(info.buffers.at(first.buffer())->dtype()) : std::nullopt);
    cache.fills.insert(first.id());
    for (const proto::Expr* e : s.loads) cache.slot_of[e->id()] = slot;
  }
  for (const Forward& f : forwards) {
    if (registers + f.cost > kRowCacheRegisters) continue;
    registers += f.cost;
    const int slot = static_cast<int>(cache.slot_dtype.size());
    cache.slot_dtype.push_back(f.loads.front()->dtype());
    cache.slot_raw.push_back(std::nullopt);
    for (const proto::Expr* e : *f.stores) cache.store_fills[e->id()] = slot;
    for (const proto::Expr* e : f.loads) cache.slot_of[e->id()] = slot;
    // Every LOAD of the buffer reads the slot: the STOREs before the last only fill it.
    int loads_of_buffer = 0;
    for (const proto::Loop& l : k.loops()) {
      for (const proto::Expr& e : l.body()) {
        loads_of_buffer += e.kind() == proto::Expr::LOAD && e.buffer() == f.stores->front()->buffer();
      }
    }
    if (loads_of_buffer == static_cast<int>(f.loads.size())) {
      for (size_t i = 0; i + 1 < f.stores->size(); ++i) {
        cache.dropped_stores.insert((*f.stores)[i]->id());
      }
    }
  }
  // Value slots: filled by the first occurrence, read by the live ones of later Loops.
  for (int key : chosen) {
    COIL_CHECK(registers + value_cost(key) <= kRowCacheRegisters) << "value slot over budget";
    registers += value_cost(key);
    const std::vector<int>& ids = numbered.occurrences.at(key);
    const Numbered::Node& first = numbered.nodes.at(ids.front());
    const int slot = static_cast<int>(cache.slot_dtype.size());
    cache.slot_dtype.push_back(first.e->dtype());
    cache.slot_raw.push_back(std::nullopt);
    cache.fills.insert(ids.front());
    ++cache.values;
    for (int id : ids) {
      if (id == ids.front() || (numbered.nodes.at(id).loop > first.loop && live.contains(id))) {
        cache.slot_of[id] = slot;
      }
    }
  }
  if (cache.slot_dtype.empty()) return none;
  return cache;
}

}  // namespace coil::codegen_cuda_internal
