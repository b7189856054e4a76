// Test helpers: hand-built Programs in exactly the shape Lower produces (lower.h), and the
// fusion passes run in pipeline order.
#ifndef COIL_INDUCTOR_PASSES_FUSION_TEST_UTIL_H_
#define COIL_INDUCTOR_PASSES_FUSION_TEST_UTIL_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "inductor/loop_ir.h"
#include "inductor/passes/fusion.h"
#include "inductor/pipeline.h"

namespace coil::inductor::testing {

inline int AddBuf(Program& p, proto::Buffer::Kind kind, std::vector<SymExpr> shape,
                  std::string name = "") {
  Buffer b;
  b.kind = kind;
  b.dtype = proto::FLOAT32;
  b.shape = std::move(shape);
  b.name = std::move(name);
  int id = p.AddBuffer(std::move(b));
  if (kind == proto::Buffer::OUTPUT) {
    p.buffer(id).graph_outputs = {static_cast<int>(p.outputs.size())};
    p.outputs.push_back(id);
  }
  return id;
}

inline std::vector<SymExpr> Ident(int rank) {
  std::vector<SymExpr> idx;
  for (int d = 0; d < rank; ++d) idx.push_back(LoopVar(d));
  return idx;
}

// A pointwise kernel out = op(in0[idx0], in1[idx1], ...) over out's shape.
inline Kernel Pw(const Program& p, std::string op, std::vector<int> ins,
                 std::vector<std::vector<SymExpr>> idx, int out) {
  const std::vector<SymExpr>& shape = p.buffer(out).shape;
  Kernel k = Kernel::Pointwise(absl::StrCat(op.substr(op.find('.') + 1), "_", out), shape);
  std::vector<int> args;
  for (size_t i = 0; i < ins.size(); ++i) {
    args.push_back(k.Load(0, ins[i], proto::FLOAT32,
                          i < idx.size() ? idx[i] : Ident(static_cast<int>(shape.size()))));
  }
  int v = k.Apply(0, op, proto::FLOAT32, args);
  k.Store(0, out, Ident(static_cast<int>(shape.size())), v);
  k.source_ops = {op};
  k.source_values = {out};
  return k;
}

// out[i0..] = reduce(op) over the trailing dims `reduced` of `in` (loaded at [_i.., _r..]).
inline Kernel Red(const Program& p, std::string op, int in, std::vector<SymExpr> reduced,
                  int out) {
  const std::vector<SymExpr>& shape = p.buffer(out).shape;
  Kernel k;
  k.name = absl::StrCat(op, "_", out);
  k.kind = proto::Kernel::REDUCTION;
  k.ranges = shape;
  k.loops.resize(2);
  k.loops[0].ranges = reduced;
  std::vector<SymExpr> idx = Ident(static_cast<int>(shape.size()));
  for (size_t d = 0; d < reduced.size(); ++d) idx.push_back(InnerVar(static_cast<int>(d)));
  int x = k.Load(0, in, proto::FLOAT32, idx);
  int r = k.Reduce(0, op, proto::FLOAT32, x);
  k.Store(1, out, Ident(static_cast<int>(shape.size())), r);
  k.source_ops = {absl::StrCat("prims.", op)};
  k.source_values = {out};
  return k;
}

inline Kernel Extern(const Program& p, std::string op, std::vector<int> ins, int out) {
  Kernel k;
  k.name = absl::StrCat("extern_", out);
  k.kind = proto::Kernel::EXTERN;
  k.ranges = p.buffer(out).shape;
  k.extern_op = op;
  k.extern_inputs = std::move(ins);
  k.extern_output = out;
  k.source_ops = {k.extern_op};
  k.source_values = {out};
  return k;
}

inline void Number(Program& p) {
  for (size_t i = 0; i < p.kernels.size(); ++i) p.kernels[i].id = static_cast<int>(i);
  p.kernels_unfused = static_cast<int>(p.kernels.size());
}

// The fusion passes as production runs them (inductor/pipeline.h), verified after each.
inline absl::Status RunFusion(Program& p, const std::vector<std::string>& epilogues = {}) {
  Capabilities capabilities;
  capabilities.extern_epilogues = epilogues;
  return FusionPipeline(capabilities).Run(p).status();
}

inline int CountDecisions(const Program& p, const std::string& pass, bool accepted) {
  int n = 0;
  for (const FusionDecision& d : p.decisions) n += d.pass == pass && d.accepted == accepted;
  return n;
}

}  // namespace coil::inductor::testing

#endif  // COIL_INDUCTOR_PASSES_FUSION_TEST_UTIL_H_
