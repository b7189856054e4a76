// Fusion machinery: kernel shapes, expression rewriting, inlining and merging.
// (Dependencies, scoring and decisions: fusion_deps.cc.)
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <set>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "inductor/passes/fusion_util.h"
#include "ir/check.h"

namespace coil::inductor {

namespace {

std::string VarName(const char* prefix, int d) { return absl::StrCat(prefix, d); }

}  // namespace

bool IsLoneLoopVar(const SymExpr& x) {
  static const std::vector<SymExpr>* vars = [] {
    auto* v = new std::vector<SymExpr>();
    for (int d = 0; d < 16; ++d) {
      v->push_back(LoopVar(d));
      v->push_back(InnerVar(d));
    }
    return v;
  }();
  if (!x.is_symbol()) return false;
  return std::find(vars->begin(), vars->end(), x) != vars->end();
}

namespace {

// x.Substitute(values) for a map of _v symbols only: constants and lone loop variables are left
// as they are without a walk.
void SubstituteValues(SymExpr& x, const absl::flat_hash_map<std::string, SymExpr>& values) {
  if (x.is_constant() || IsLoneLoopVar(x)) return;
  x = x.Substitute(values);
}

void UnionProvenance(Kernel& dst, const Kernel& src) {
  // Most unions are of a few elements each: a search of dst per element.
  if (dst.source_values.size() * src.source_values.size() <= 256 &&
      dst.source_ops.size() * src.source_ops.size() <= 256) {
    for (int64_t v : src.source_values) {
      if (std::find(dst.source_values.begin(), dst.source_values.end(), v) ==
          dst.source_values.end()) {
        dst.source_values.push_back(v);
      }
    }
    for (const std::string& op : src.source_ops) {
      if (std::find(dst.source_ops.begin(), dst.source_ops.end(), op) == dst.source_ops.end()) {
        dst.source_ops.push_back(op);
      }
    }
    return;
  }
  // Hash sets, not a search of dst per element: fused kernels hold hundreds of source values.
  absl::flat_hash_set<int64_t> values;
  values.reserve(dst.source_values.size() + src.source_values.size());
  values.insert(dst.source_values.begin(), dst.source_values.end());
  for (int64_t v : src.source_values) {
    if (values.insert(v).second) dst.source_values.push_back(v);
  }
  absl::flat_hash_set<std::string> ops(dst.source_ops.begin(), dst.source_ops.end());
  for (const std::string& op : src.source_ops) {
    if (ops.insert(op).second) dst.source_ops.push_back(op);
  }
}

void SetKindFromLoops(Kernel& k) {
  if (k.kind == proto::Kernel::EXTERN) return;
  bool ranged = false;
  for (const Loop& l : k.loops) ranged = ranged || !l.ranges.empty();
  k.kind = ranged ? proto::Kernel::REDUCTION : proto::Kernel::POINTWISE;
}

// `src` with every id moved to first_id.. (loops kept), and the old -> new map.
Kernel RenumberKernel(const Kernel& src, int first_id, absl::flat_hash_map<int, int>& id_map) {
  Kernel out = src;
  int next = first_id;
  for (Loop& l : out.loops) {
    l.body = CopyRenumbered(l.body, next, id_map);
    for (const Expr& e : l.body) next = std::max(next, e.id + 1);
  }
  return out;
}

// Everything that defines an expression's value but its id, compared in place (Cse's keys:
// an Expr* into a body that does not reallocate). Literals compare by their bits. The hash
// leaves the SymExprs out (hashing them walks their trees): loads of one buffer at different
// indices share a bucket, and equality tells them apart.
struct ExprValueHash {
  size_t operator()(const Expr* e) const {
    uint64_t bits = 0;
    static_assert(sizeof(bits) == sizeof(e->literal));
    std::memcpy(&bits, &e->literal, sizeof(bits));
    return absl::HashOf(e->kind, e->dtype, e->buffer, e->mask, bits, e->int_literal, e->op,
                        e->seed, e->args, e->index.size());
  }
};
struct ExprValueEq {
  bool operator()(const Expr* a, const Expr* b) const {
    return a->kind == b->kind && a->dtype == b->dtype && a->buffer == b->buffer &&
           a->mask == b->mask &&
           std::memcmp(&a->literal, &b->literal, sizeof(a->literal)) == 0 &&
           a->int_literal == b->int_literal && a->value == b->value && a->op == b->op &&
           a->seed == b->seed && a->args == b->args && a->index == b->index;
  }
};

}  // namespace

std::vector<SymExpr> IdentityIndex(int rank) {
  std::vector<SymExpr> index;
  for (int d = 0; d < rank; ++d) index.push_back(LoopVar(d));
  return index;
}

bool IsIdentityIndex(const std::vector<SymExpr>& index) {
  for (size_t d = 0; d < index.size(); ++d) {
    if (index[d] != LoopVar(static_cast<int>(d))) return false;
  }
  return true;
}

std::optional<int> PointwiseOutput(const Kernel& k) {
  if (k.kind != proto::Kernel::POINTWISE || k.loops.size() != 1 || !k.loops[0].ranges.empty()) {
    return std::nullopt;
  }
  std::optional<int> out;
  for (const Expr& e : k.loops[0].body) {
    if (e.kind != proto::Expr::STORE) continue;
    if (out.has_value() || e.index.size() != k.ranges.size() || !IsIdentityIndex(e.index)) {
      return std::nullopt;
    }
    out = e.buffer;
  }
  return out;
}

namespace {

// Whether `e` refers to a value of the kernel (a _v<id> symbol): an index from data.
bool RefersToValue(const SymExpr& e) {
  if (e.is_constant() || IsLoneLoopVar(e)) return false;  // most indices: no names built
  for (const std::string& s : e.Symbols()) {
    if (absl::StartsWith(s, "_v")) return true;
  }
  return false;
}

}  // namespace

bool KeepsDataIndexChecks(const Program& program, const Kernel& producer, const Kernel& consumer,
                          int buffer) {
  for (const Loop& l : consumer.loops) {
    for (const Expr& e : l.body) {
      if (e.kind != proto::Expr::LOAD || e.buffer != buffer) continue;
      for (size_t d = 0; d < e.index.size() && d < producer.ranges.size(); ++d) {
        if (!RefersToValue(e.index[d])) continue;
        const SymExpr var = LoopVar(static_cast<int>(d));
        bool kept = false;
        for (const Loop& pl : producer.loops) {
          for (const Expr& x : pl.body) {
            // A masked load is not checked where its mask is false (pad's padding).
            if (x.kind != proto::Expr::LOAD || x.mask != 0) continue;
            const Buffer& b = program.buffer(x.buffer);
            for (size_t i = 0; i < x.index.size() && !kept; ++i) {
              kept = x.index[i] == var && i < b.shape.size() && b.shape[i] == producer.ranges[d];
            }
          }
        }
        if (!kept) return false;
      }
    }
  }
  return true;
}

std::vector<std::pair<int, int>> LoadsOf(const Kernel& k, int buffer) {
  std::vector<std::pair<int, int>> loads;
  for (size_t l = 0; l < k.loops.size(); ++l) {
    for (const Expr& e : k.loops[l].body) {
      if (e.kind == proto::Expr::LOAD && e.buffer == buffer) {
        loads.emplace_back(static_cast<int>(l), e.id);
      }
    }
  }
  return loads;
}

bool ExternReads(const Kernel& k, int buffer) {
  return std::find(k.extern_inputs.begin(), k.extern_inputs.end(), buffer) !=
         k.extern_inputs.end();
}

int CountLoads(const Kernel& k) {
  int n = 0;
  for (const Loop& l : k.loops) {
    for (const Expr& e : l.body) n += e.kind == proto::Expr::LOAD;
  }
  return n;
}

int CountExprs(const Kernel& k) {
  int n = 0;
  for (const Loop& l : k.loops) n += static_cast<int>(l.body.size());
  return n;
}

std::string RangesString(const std::vector<SymExpr>& ranges) {
  std::vector<std::string> parts;
  for (const SymExpr& r : ranges) parts.push_back(r.ToString());
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

void SubstituteSymbols(Loop& loop, const absl::flat_hash_map<std::string, SymExpr>& values) {
  if (values.empty()) return;
  for (Expr& e : loop.body) {
    for (SymExpr& i : e.index) i = i.Substitute(values);
    e.value = e.value.Substitute(values);
  }
}

void ReplaceUses(Kernel& k, int from, int to) {
  // The _v renaming map is built at the first index or value that could name a value (most
  // kernels have none).
  absl::flat_hash_map<std::string, SymExpr> v;
  auto substitute = [&](SymExpr& x) {
    if (x.is_constant() || IsLoneLoopVar(x)) return;
    if (v.empty()) v.emplace(VarName("_v", from), ValueVar(to));
    x = x.Substitute(v);
  };
  for (Loop& l : k.loops) {
    for (Expr& e : l.body) {
      for (int& a : e.args) a = a == from ? to : a;
      if (e.mask == from) e.mask = to;
      for (SymExpr& i : e.index) substitute(i);
      substitute(e.value);
    }
  }
}

namespace {

// A loop variable's name and SymExpr, and what replaces it.
struct LoopVarValue {
  std::string name;
  SymExpr var;
  SymExpr value;
};

// CopyRenumbered on expressions already copied (or moved) into `out`, with `loop_vars` for its
// `extra`.
void RenumberInPlace(std::vector<Expr>& out, int first_id, absl::flat_hash_map<int, int>& id_map,
                     const std::vector<LoopVarValue>& loop_vars) {
  id_map.reserve(id_map.size() + out.size());
  int next = first_id;
  for (Expr& e : out) id_map[e.id] = next++;
  // The _v renaming (and substitution by name) is needed only where an index or value is more
  // than a constant or a lone loop variable (indirect indexing, INDEX values): usually nowhere.
  bool names_values = false;
  for (const Expr& e : out) {
    for (const SymExpr& i : e.index) names_values |= !i.is_constant() && !IsLoneLoopVar(i);
    names_values |= !e.value.is_constant() && !IsLoneLoopVar(e.value);
  }
  absl::flat_hash_map<std::string, SymExpr> symbols;
  if (names_values) {
    for (const LoopVarValue& v : loop_vars) symbols[v.name] = v.value;
    for (const auto& [from, to] : id_map) symbols[VarName("_v", from)] = ValueVar(to);
  }
  auto substitute = [&](SymExpr& x) {
    if (x.is_constant()) return;
    if (IsLoneLoopVar(x)) {
      for (const LoopVarValue& v : loop_vars) {
        if (x == v.var) {
          x = v.value;
          break;
        }
      }
      return;
    }
    x = x.Substitute(symbols);
  };
  auto remap = [&](int id) {
    auto it = id_map.find(id);
    return it == id_map.end() ? id : it->second;
  };
  for (Expr& e : out) {
    e.id = id_map[e.id];
    for (int& a : e.args) a = remap(a);
    if (e.mask != 0) e.mask = remap(e.mask);
    for (SymExpr& i : e.index) substitute(i);
    substitute(e.value);
  }
}

}  // namespace

std::vector<Expr> CopyRenumbered(const std::vector<Expr>& body, int first_id,
                                 absl::flat_hash_map<int, int>& id_map,
                                 const absl::flat_hash_map<std::string, SymExpr>& extra) {
  std::vector<LoopVarValue> loop_vars;
  for (const auto& [name, value] : extra) loop_vars.push_back({name, SymExpr::Symbol(name), value});
  std::vector<Expr> out = body;
  RenumberInPlace(out, first_id, id_map, loop_vars);
  return out;
}

int InlineBody(const Kernel& producer, Kernel& consumer, int loop, int load_id) {
  COIL_CHECK(PointwiseOutput(producer).has_value()) << "producer " << producer.name;
  COIL_CHECK(loop >= 0 && loop < static_cast<int>(consumer.loops.size()));
  std::vector<Expr>& body = consumer.loops[loop].body;
  auto pos = std::find_if(body.begin(), body.end(), [&](const Expr& e) { return e.id == load_id; });
  COIL_CHECK(pos != body.end() && pos->kind == proto::Expr::LOAD)
      << "kernel " << consumer.name << " has no load " << load_id << " in loop " << loop;
  const Expr load = *pos;
  COIL_CHECK(load.index.size() == producer.ranges.size()) << "load arity in " << consumer.name;

  std::vector<LoopVarValue> loop_vars;
  loop_vars.reserve(load.index.size());
  for (size_t d = 0; d < load.index.size(); ++d) {
    loop_vars.push_back({VarName("_i", d), LoopVar(static_cast<int>(d)), load.index[d]});
  }
  // One copy of the producer's body (its STORE left out), renumbered in place.
  std::vector<Expr> copied;
  copied.reserve(producer.loops[0].body.size());
  int stored = 0;
  for (const Expr& e : producer.loops[0].body) {
    if (e.kind == proto::Expr::STORE) {
      stored = e.args[0];
    } else {
      copied.push_back(e);
    }
  }
  absl::flat_hash_map<int, int> id_map;
  RenumberInPlace(copied, consumer.next_id(), id_map, loop_vars);
  int next = consumer.next_id();
  for (const Expr& e : copied) next = std::max(next, e.id + 1);
  int value = id_map.at(stored);

  if (load.mask != 0) {
    // Out-of-range positions must not be read: the producer's loads take the consumer's mask.
    std::vector<Expr> masked;
    for (Expr& e : copied) {
      if (e.kind == proto::Expr::LOAD) {
        if (e.mask == 0) {
          e.mask = load.mask;
        } else {
          Expr both;
          both.kind = proto::Expr::APPLY;
          both.id = next++;
          both.dtype = proto::BOOL;
          both.op = "prims.bitwise_and";
          both.args = {load.mask, e.mask};
          e.mask = both.id;
          masked.push_back(std::move(both));
        }
      }
      masked.push_back(std::move(e));
    }
    Expr lit;
    lit.kind = proto::Expr::LITERAL;
    lit.id = next++;
    lit.dtype = load.dtype;
    lit.literal = load.literal;
    // As Kernel::Literal: a bool is any nonzero value (a pad of bools with 1e-05 is true).
    lit.int_literal = IsBool(load.dtype) ? (load.literal != 0) : static_cast<int64_t>(load.literal);
    Expr where;
    where.kind = proto::Expr::APPLY;
    where.id = next++;
    where.dtype = load.dtype;
    where.op = "prims.where";
    where.args = {load.mask, value, lit.id};
    value = where.id;
    masked.push_back(std::move(lit));
    masked.push_back(std::move(where));
    copied = std::move(masked);
  }
  // The body with the load replaced by the copy: everything moves once.
  std::vector<Expr> spliced;
  spliced.reserve(body.size() - 1 + copied.size());
  std::move(body.begin(), pos, std::back_inserter(spliced));
  std::move(copied.begin(), copied.end(), std::back_inserter(spliced));
  std::move(pos + 1, body.end(), std::back_inserter(spliced));
  body = std::move(spliced);
  ReplaceUses(consumer, load_id, value);
  UnionProvenance(consumer, producer);
  return value;
}

void Cse(Kernel& k) {
  std::vector<int> written = k.Writes();
  absl::flat_hash_set<int> writes(written.begin(), written.end());
  absl::flat_hash_map<int, int> remap;
  absl::flat_hash_map<std::string, SymExpr> vars;
  for (Loop& l : k.loops) {
    std::vector<Expr> body;
    body.reserve(l.body.size());  // `seen` points into it
    absl::flat_hash_map<const Expr*, int, ExprValueHash, ExprValueEq> seen;
    seen.reserve(l.body.size());
    for (Expr& e : l.body) {
      for (int& a : e.args) {
        auto it = remap.find(a);
        if (it != remap.end()) a = it->second;
      }
      auto it = remap.find(e.mask);
      if (e.mask != 0 && it != remap.end()) e.mask = it->second;
      if (!vars.empty()) {
        for (SymExpr& i : e.index) SubstituteValues(i, vars);
        SubstituteValues(e.value, vars);
      }
      bool pure = e.kind == proto::Expr::LITERAL || e.kind == proto::Expr::INDEX ||
                  e.kind == proto::Expr::APPLY || e.kind == proto::Expr::RANDOM ||
                  (e.kind == proto::Expr::LOAD && !writes.contains(e.buffer));
      if (pure) {
        auto found = seen.find(&e);
        if (found != seen.end()) {
          remap[e.id] = found->second;
          vars[VarName("_v", e.id)] = ValueVar(found->second);
          continue;
        }
      }
      body.push_back(std::move(e));
      if (pure) seen.emplace(&body.back(), body.back().id);
    }
    l.body = std::move(body);
  }
}

void JoinRangelessLoops(Kernel& k) {
  std::vector<Loop> loops;
  for (Loop& l : k.loops) {
    if (!loops.empty() && loops.back().ranges.empty() && l.ranges.empty()) {
      for (Expr& e : l.body) loops.back().body.push_back(std::move(e));
    } else {
      loops.push_back(std::move(l));
    }
  }
  k.loops = std::move(loops);
}

void AppendKernel(Kernel& dst, const Kernel& src) {
  const int rank = static_cast<int>(dst.ranges.size());
  absl::flat_hash_map<int, int> stored;  // buffer -> value id, stored at identity, top scope
  for (const Loop& l : dst.loops) {
    if (!l.ranges.empty()) continue;
    for (const Expr& e : l.body) {
      if (e.kind == proto::Expr::STORE && static_cast<int>(e.index.size()) == rank &&
          IsIdentityIndex(e.index)) {
        stored[e.buffer] = e.args[0];
      }
    }
  }
  absl::flat_hash_map<int, int> id_map;
  Kernel moved = RenumberKernel(src, dst.next_id(), id_map);
  for (Loop& l : moved.loops) {
    std::vector<std::pair<int, int>> forwarded;
    for (const Expr& e : l.body) {
      auto it = stored.find(e.buffer);
      if (e.kind == proto::Expr::LOAD && it != stored.end() && e.mask == 0 &&
          static_cast<int>(e.index.size()) == rank && IsIdentityIndex(e.index)) {
        forwarded.emplace_back(e.id, it->second);
      }
    }
    for (const std::pair<int, int>& f : forwarded) {
      const int from = f.first, to = f.second;  // not a structured binding: clang 14 lambdas
      l.body.erase(std::find_if(l.body.begin(), l.body.end(),
                                [&](const Expr& e) { return e.id == from; }));
      ReplaceUses(moved, from, to);
    }
  }
  for (Loop& l : moved.loops) dst.loops.push_back(std::move(l));
  JoinRangelessLoops(dst);
  SetKindFromLoops(dst);
  UnionProvenance(dst, src);
}

void ZipKernel(Kernel& dst, const Kernel& src) {
  COIL_CHECK(dst.loops.size() == src.loops.size()) << dst.name << " vs " << src.name;
  absl::flat_hash_map<int, int> id_map;
  Kernel moved = RenumberKernel(src, dst.next_id(), id_map);
  for (size_t l = 0; l < dst.loops.size(); ++l) {
    COIL_CHECK(dst.loops[l].ranges == moved.loops[l].ranges) << dst.name << " loop " << l;
    for (Expr& e : moved.loops[l].body) dst.loops[l].body.push_back(std::move(e));
  }
  UnionProvenance(dst, src);
}

Kernel AsInnerLoop(const Kernel& k, int outer_rank) {
  COIL_CHECK(k.loops.size() == 1 && k.loops[0].ranges.empty()) << k.name;
  COIL_CHECK(outer_rank <= static_cast<int>(k.ranges.size())) << k.name;
  Kernel out = k;
  out.ranges.assign(k.ranges.begin(), k.ranges.begin() + outer_rank);
  Loop& l = out.loops[0];
  l.ranges.assign(k.ranges.begin() + outer_rank, k.ranges.end());
  absl::flat_hash_map<std::string, SymExpr> vars;
  for (size_t d = 0; d < l.ranges.size(); ++d) {
    vars[VarName("_i", outer_rank + d)] = InnerVar(static_cast<int>(d));
  }
  SubstituteSymbols(l, vars);
  SetKindFromLoops(out);
  return out;
}

}  // namespace coil::inductor
