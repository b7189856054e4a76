// Packed bf16x2 / f16x2 arithmetic on pairs of a group's positions (see packed_pairs.h).
#include "codegen_cuda/internal/packed_pairs.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <initializer_list>

#include "absl/strings/str_cat.h"
#include "runtime/half.h"

namespace coil::codegen_cuda_internal {
namespace {

bool IsConvert(const proto::Expr& e) {
  return e.kind() == proto::Expr::APPLY && e.op() == "prims.convert_element_type" &&
         e.args_size() == 1 && e.mask() == 0;
}

// The pair word of `d` in `t` when d is exact in it, else nullopt.
std::optional<std::string> LiteralPair(double d, DType t) {
  const float f = static_cast<float>(d);
  if (static_cast<double>(f) != d) return std::nullopt;
  uint16_t h = 0;
  if (t == proto::BFLOAT16) {
    if ((FloatBits(f) & 0xffffu) != 0) return std::nullopt;
    h = static_cast<uint16_t>(FloatBits(f) >> 16);
  } else {
    h = FloatToHalf(f);
    if (FloatBits(HalfToFloat(h)) != FloatBits(f)) return std::nullopt;
  }
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%04x%04xu", h, h);
  return std::string(buf);
}

// One plan being built for the STOREs of dtype `t`.
class Planner {
 public:
  Planner(DType t, const absl::flat_hash_map<int, const proto::Expr*>& defs,
          const absl::flat_hash_map<int, std::vector<int>>& readers,
          const absl::flat_hash_set<int>& body, const std::function<bool(int)>& excluded,
          const std::function<std::optional<double>(int)>& literal, PackedPairs& p)
      : t_(t), defs_(defs), readers_(readers), body_(body), excluded_(excluded),
        literal_(literal), p_(p) {}

  // Adds STORE `st` (of dtype t) and what it reads; false (the plan may hold a partial chain,
  // the caller restores it) when its value is not such a chain.
  bool Store(const proto::Expr& st) {
    const proto::Expr* r = Def(st.args(0));
    if (r == nullptr) return false;
    if (IsConvert(*r) && r->dtype() == t_) {  // the rounding to the store's dtype
      if (!body_.contains(r->id()) || excluded_(r->id()) || !Op(r->args(0))) return false;
      Member(r->id(), p_.words.at(r->args(0)));
    } else if (!Op(r->id())) {  // an f32 value that the store rounds
      return false;
    }
    p_.exprs.insert(st.id());
    std::string word = p_.words.at(st.args(0));  // a copy: inserting may rehash
    p_.words[st.id()] = std::move(word);
    p_.stores.push_back(st.id());
    return true;
  }

 private:
  const proto::Expr* Def(int id) const {
    auto it = defs_.find(id);
    return it == defs_.end() ? nullptr : it->second;
  }

  // Whether every reader of `id` is of one of `kinds` (APPLY ops by name, "store").
  bool ReadOnlyBy(int id, std::initializer_list<const char*> kinds) const {
    auto it = readers_.find(id);
    if (it == readers_.end()) return true;
    for (int r : it->second) {
      const proto::Expr* e = Def(r);
      bool ok = false;
      for (const char* k : kinds) {
        ok = ok || (e != nullptr && (std::string(k) == "store" ? e->kind() == proto::Expr::STORE
                                                                : e->op() == k));
      }
      if (!ok) return false;
    }
    return true;
  }

  void Member(int id, std::string word) {  // by value: `word` may live in words
    p_.exprs.insert(id);
    p_.words[id] = word;
  }

  // APPLY add / sub / mul in f32 of the Loop's body of two operands exact in t.
  bool Op(int id) {
    if (p_.exprs.contains(id)) return true;
    const proto::Expr* e = Def(id);
    if (e == nullptr || !body_.contains(id) || e->kind() != proto::Expr::APPLY || e->mask() != 0 ||
        e->dtype() != proto::FLOAT32 || e->args_size() != 2 || excluded_(id) ||
        (e->op() != "prims.add" && e->op() != "prims.sub" && e->op() != "prims.mul")) {
      return false;
    }
    if (!Operand(e->args(0)) || !Operand(e->args(1))) return false;
    Member(id, absl::StrCat("p", id));
    op_ids_.insert(id);
    p_.ops.push_back({id, e->op().substr(6), e->args(0), e->args(1)});  // "prims.add" -> "add"
    return true;
  }

  // An operation's operand: a literal exact in t, the widening of a planned operation's
  // rounding, or a boundary (a value exact in t that each position of the Loop computes). An
  // operation's own word holds its rounded value: not an operand for its unrounded uses.
  bool Operand(int id) {
    if (p_.words.contains(id)) return !op_ids_.contains(id);
    if (std::optional<double> v = literal_(id); v.has_value()) {
      std::optional<std::string> w = LiteralPair(*v, t_);
      if (!w.has_value()) return false;
      p_.words[id] = *w;
      return true;
    }
    const proto::Expr* e = Def(id);
    if (e == nullptr || e->kind() == proto::Expr::STORE || !body_.contains(id)) return false;
    if (IsConvert(*e) && e->dtype() == proto::FLOAT32) {
      const proto::Expr* c = Def(e->args(0));
      // Into the operation whose rounding this widens, when only operations (or stores) read
      // the widening and the rounding; else the widening is a boundary.
      if (c != nullptr && c->dtype() == t_ && IsConvert(*c) && !excluded_(id) &&
          !excluded_(c->id()) &&
          ReadOnlyBy(id, {"prims.add", "prims.sub", "prims.mul", "store"}) &&
          ReadOnlyBy(c->id(), {"prims.convert_element_type", "store"}) && Op(c->args(0))) {
        Member(c->id(), p_.words.at(c->args(0)));
        Member(id, p_.words.at(c->args(0)));
        return true;
      }
      if (c == nullptr || c->dtype() != t_) return false;
    } else if (e->dtype() != t_) {
      return false;
    }
    p_.boundaries.push_back(id);
    p_.words[id] = absl::StrCat("p", id);
    return true;
  }

  const DType t_;
  const absl::flat_hash_map<int, const proto::Expr*>& defs_;
  const absl::flat_hash_map<int, std::vector<int>>& readers_;
  const absl::flat_hash_set<int>& body_;
  const std::function<bool(int)>& excluded_;
  const std::function<std::optional<double>(int)>& literal_;
  PackedPairs& p_;
  absl::flat_hash_set<int> op_ids_;  // planned operations
};

// Whether every expression of the plan (but its STOREs) is read only by the plan's
// expressions, and no boundary is itself planned.
bool Closed(const PackedPairs& p, const absl::flat_hash_map<int, std::vector<int>>& readers) {
  for (int id : p.exprs) {
    auto it = readers.find(id);
    if (it == readers.end()) continue;
    for (int r : it->second) {
      if (!p.exprs.contains(r)) return false;
    }
  }
  for (int b : p.boundaries) {
    if (p.exprs.contains(b)) return false;
  }
  return true;
}

}  // namespace

PackedPairs PlanPackedPairs(const proto::Loop& loop, int items,
                            const std::vector<const proto::Expr*>& vector_stores,
                            const absl::flat_hash_map<int, const proto::Expr*>& defs,
                            const absl::flat_hash_map<int, std::vector<int>>& readers,
                            const RowCache& cache, const absl::flat_hash_set<int>& data_values,
                            const ScheduleInfo& info) {
  PackedPairs plan;
  if (items < 2 || items % 2 != 0) return plan;
  absl::flat_hash_set<int> stores_set;
  for (const proto::Expr* e : vector_stores) stores_set.insert(e->id());
  const std::function<bool(int)> excluded = [&](int id) {
    return cache.slot_of.contains(id) || cache.dead.contains(id) || data_values.contains(id);
  };
  const std::function<std::optional<double>(int)> literal = [&](int id) -> std::optional<double> {
    const proto::Expr& e = *defs.at(id);
    if (e.kind() == proto::Expr::LITERAL && IsFloating(e.dtype())) return e.literal();
    if (ScalarConstantLoad(e, info) && IsFloating(info.buffers.at(e.buffer())->dtype())) {
      return info.scalar_constants.at(e.buffer()).d;
    }
    return std::nullopt;
  };
  absl::flat_hash_map<int, int> order;
  absl::flat_hash_set<int> body;
  for (const proto::Expr& e : loop.body()) {
    order[e.id()] = static_cast<int>(order.size());
    body.insert(e.id());
  }
  for (const proto::Expr& st : loop.body()) {
    if (st.kind() != proto::Expr::STORE || st.mask() != 0 || st.args_size() != 1 ||
        !stores_set.contains(st.id()) || cache.store_fills.contains(st.id()) ||
        cache.dropped_stores.contains(st.id())) {
      continue;
    }
    const DType t = info.buffers.at(st.buffer())->dtype();
    if ((t != proto::BFLOAT16 && t != proto::FLOAT16) || (!plan.empty() && t != plan.dtype)) {
      continue;
    }
    PackedPairs trial = plan;
    trial.dtype = t;
    Planner planner(trial.dtype, defs, readers, body, excluded, literal, trial);
    if (planner.Store(st) && Closed(trial, readers)) plan = std::move(trial);
  }
  if (plan.empty()) return PackedPairs();
  auto by_order = [&](int a, int b) { return order.at(a) < order.at(b); };
  std::sort(plan.ops.begin(), plan.ops.end(),
            [&](const PackedPairs::Op& a, const PackedPairs::Op& b) { return by_order(a.id, b.id); });
  std::sort(plan.boundaries.begin(), plan.boundaries.end(), by_order);
  plan.boundaries.erase(std::unique(plan.boundaries.begin(), plan.boundaries.end()),
                        plan.boundaries.end());
  return plan;
}

std::string PackedStashDeclarations(const PackedPairs& p, int items, const std::string& pad) {
  if (p.empty()) return "";
  std::string o;
  for (int b : p.boundaries) absl::StrAppend(&o, pad, "float coil_pk", b, "[", items, "];\n");
  for (int s : p.stores) absl::StrAppend(&o, pad, "u32 coil_w", s, "[", items / 2, "];\n");
  return o;
}

std::string PackedStash(const PackedPairs& p, int item, const std::string& pad) {
  if (p.empty()) return "";
  std::string o;
  for (int b : p.boundaries) absl::StrAppend(&o, pad, "coil_pk", b, "[", item, "] = e", b, ";\n");
  return o;
}

std::string PackedPairsSource(const PackedPairs& p, int items, const std::string& pad) {
  if (p.empty()) return "";
  const bool bf16 = p.dtype == proto::BFLOAT16;
  std::string o;
  for (int k = 0; k < items / 2; ++k) {
    absl::StrAppend(&o, pad, "{  // positions ", 2 * k, ", ", 2 * k + 1, " as ",
                    bf16 ? "bf16x2" : "f16x2", " (packed_pairs.h)\n");
    for (int b : p.boundaries) {
      absl::StrAppend(&o, pad, "  const u32 p", b, " = ",
                      bf16 ? "coil_pack_bf16x2(" : "coil_pack_f16x2(", "coil_pk", b, "[", 2 * k,
                      "], coil_pk", b, "[", 2 * k + 1, "]);\n");
    }
    for (const PackedPairs::Op& op : p.ops) {
      absl::StrAppend(&o, pad, "  u32 p", op.id, "; asm(\"", op.instruction, ".rn.",
                      bf16 ? "bf16x2" : "f16x2", " %0, %1, %2;\" : \"=r\"(p", op.id,
                      ") : \"r\"(", p.words.at(op.a), "), \"r\"(", p.words.at(op.b), "));\n");
    }
    for (int st : p.stores) {
      absl::StrAppend(&o, pad, "  coil_w", st, "[", k, "] = ", p.words.at(st), ";\n");
    }
    absl::StrAppend(&o, pad, "}\n");
  }
  return o;
}

}  // namespace coil::codegen_cuda_internal
