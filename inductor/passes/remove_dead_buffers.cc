// RemoveDeadBuffers: intermediate buffers nobody reads lose their STOREs, then the
// expressions, Loops and kernels left without effect go, then the buffers (fusion.h).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/match.h"
#include "inductor/passes/fusion.h"
#include "inductor/passes/fusion_util.h"

namespace coil::inductor {

namespace {

void MarkSymbols(const SymExpr& e, absl::flat_hash_set<int>& live) {
  if (e.is_constant() || IsLoneLoopVar(e)) return;  // most indices: no _v symbol, no names built
  for (const std::string& s : e.Symbols()) {
    int id = 0;
    if (absl::StartsWith(s, "_v") && absl::SimpleAtoi(s.substr(2), &id)) live.insert(id);
  }
}

// Drops expressions that no STORE needs, then empty Loops; returns whether anything went.
bool EliminateDeadCode(Kernel& k) {
  absl::flat_hash_set<int> live;
  bool changed = false;
  for (auto l = k.loops.rbegin(); l != k.loops.rend(); ++l) {
    std::vector<Expr> kept;
    for (auto e = l->body.rbegin(); e != l->body.rend(); ++e) {
      if (e->kind != proto::Expr::STORE && !live.contains(e->id)) {
        changed = true;
        continue;
      }
      for (int a : e->args) live.insert(a);
      if (e->mask != 0) live.insert(e->mask);
      for (const SymExpr& i : e->index) MarkSymbols(i, live);
      MarkSymbols(e->value, live);
      kept.push_back(std::move(*e));
    }
    std::reverse(kept.begin(), kept.end());
    l->body = std::move(kept);
  }
  std::vector<Loop> loops;
  for (Loop& l : k.loops) {
    if (l.body.empty()) {
      changed = true;
    } else {
      loops.push_back(std::move(l));
    }
  }
  k.loops = std::move(loops);
  JoinRangelessLoops(k);
  if (k.kind == proto::Kernel::REDUCTION &&
      std::none_of(k.loops.begin(), k.loops.end(),
                   [](const Loop& l) { return !l.ranges.empty(); })) {
    k.kind = proto::Kernel::POINTWISE;
    changed = true;
  }
  return changed;
}

// One round: dead STOREs, dead code, kernels without effect. Returns whether anything changed.
bool RemoveRound(Program& program) {
  absl::flat_hash_set<int> read;
  for (const Kernel& k : program.kernels) {
    for (int b : k.Reads()) read.insert(b);
  }
  auto dead = [&](int b) {
    return program.buffer(b).kind == proto::Buffer::INTERMEDIATE && !read.contains(b);
  };
  bool changed = false;
  std::vector<Kernel> kernels;
  for (Kernel& k : program.kernels) {
    for (Loop& l : k.loops) {
      size_t before = l.body.size();
      l.body.erase(std::remove_if(l.body.begin(), l.body.end(),
                                  [&](const Expr& e) {
                                    return e.kind == proto::Expr::STORE && dead(e.buffer);
                                  }),
                   l.body.end());
      changed = changed || l.body.size() != before;
    }
    changed = EliminateDeadCode(k) || changed;
    bool effect = false;
    for (const Loop& l : k.loops) {
      for (const Expr& e : l.body) effect = effect || e.kind == proto::Expr::STORE;
    }
    if (k.kind == proto::Kernel::EXTERN && !dead(k.extern_output)) effect = true;
    if (effect) {
      kernels.push_back(std::move(k));
    } else {
      changed = true;
    }
  }
  program.kernels = std::move(kernels);
  return changed;
}

// Drops INTERMEDIATE buffers no kernel uses and renumbers the rest.
bool CompactBuffers(Program& program) {
  absl::flat_hash_set<int> used(program.outputs.begin(), program.outputs.end());
  for (const Kernel& k : program.kernels) {
    for (int b : k.Reads()) used.insert(b);
    for (int b : k.Writes()) used.insert(b);
  }
  auto unused = [&](const Buffer& b) {
    return b.kind == proto::Buffer::INTERMEDIATE && !used.contains(b.id);
  };
  if (std::none_of(program.buffers.begin(), program.buffers.end(), unused)) return false;
  absl::flat_hash_map<int, int> ids;
  std::vector<Buffer> buffers;
  for (Buffer& b : program.buffers) {
    if (unused(b)) continue;
    ids[b.id] = static_cast<int>(buffers.size()) + 1;
    b.id = ids[b.id];
    buffers.push_back(std::move(b));
  }
  program.buffers = std::move(buffers);
  for (Kernel& k : program.kernels) {
    for (int& b : k.extern_inputs) b = ids.at(b);
    if (k.extern_output != 0) k.extern_output = ids.at(k.extern_output);
    for (Loop& l : k.loops) {
      for (Expr& e : l.body) {
        if (e.kind == proto::Expr::LOAD || e.kind == proto::Expr::STORE) {
          e.buffer = ids.at(e.buffer);
        }
      }
    }
  }
  for (int& o : program.outputs) o = ids.at(o);
  return true;
}

}  // namespace

absl::StatusOr<bool> RemoveDeadBuffers(Program& program) {
  bool changed = false;
  while (RemoveRound(program)) changed = true;
  return CompactBuffers(program) || changed;
}

}  // namespace coil::inductor
