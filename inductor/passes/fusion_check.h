// Test helpers: a decomposed graph lowered and fused (VerifyProgram after every pass), and the
// fused program run by the Schedule interpreter against the graph interpreter.
//
// The memory plan is not fusion's business: every INTERMEDIATE buffer gets its own 64-byte
// aligned arena slot.
#ifndef COIL_INDUCTOR_PASSES_FUSION_CHECK_H_
#define COIL_INDUCTOR_PASSES_FUSION_CHECK_H_

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "inductor/loop_ir.h"
#include "inductor/passes/fusion.h"
#include "inductor/passes/lower.h"
#include "inductor/passes/verify_program.h"
#include "inductor/pipeline.h"
#include "ir/graph.h"
#include "ir/parser.h"
#include "prims/decompose.h"
#include "runtime/interpreter.h"
#include "runtime/schedule_interpreter.h"

namespace coil::inductor::testing {

// Lowers a prims graph and runs the fusion passes in pipeline order, verifying after each.
inline absl::StatusOr<Program> LowerAndFuse(const Graph& g,
                                            const std::vector<std::string>& epilogues = {},
                                            bool fuse = true) {
  absl::StatusOr<Program> p = Lower(g);
  if (!p.ok()) return p.status();
  absl::Status v = VerifyProgram(*p);
  if (!v.ok()) return absl::InternalError(absl::StrCat("after lower: ", v.message()));
  if (!fuse) return p;
  Capabilities capabilities;
  capabilities.extern_epilogues = epilogues;
  absl::StatusOr<bool> fused = FusionPipeline(capabilities).Run(*p);
  if (!fused.ok()) return fused.status();
  return p;
}

// Kernels (name, kind, Loops, fused ops) and decisions, one a line, for failure messages.
inline std::string Describe(const Program& p) {
  std::string s;
  for (const Kernel& k : p.kernels) {
    absl::StrAppend(&s, k.name, " ", proto::Kernel::Kind_Name(k.kind), " loops ", k.loops.size(),
                    " ranges ", k.ranges.size(), " ops");
    for (const std::string& op : k.source_ops) absl::StrAppend(&s, " ", op);
    absl::StrAppend(&s, "\n");
  }
  for (const FusionDecision& d : p.decisions) {
    absl::StrAppend(&s, d.pass, " ", d.kind, " [");
    for (const std::string& k : d.kernels) absl::StrAppend(&s, k, " ");
    absl::StrAppend(&s, "] ", d.accepted ? "accepted: " : "rejected: ", d.reason, " (",
                    d.bytes_saved_hint, ")\n");
  }
  return s;
}

// Parses a text-IR aten graph and decomposes it to prims.
inline absl::StatusOr<Graph> ParseAndDecompose(const std::string& text) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  if (!g.ok()) return g.status();
  absl::StatusOr<bool> d = prims::Decompose(*g);
  if (!d.ok()) return d.status();
  return g;
}

// The program as a Schedule with every INTERMEDIATE buffer in its own 64-byte aligned slot.
inline proto::Schedule ToScheduleWithSlots(Program p, const Graph& g) {
  SymExpr offset(0);
  for (Buffer& b : p.buffers) {
    if (b.kind != proto::Buffer::INTERMEDIATE) continue;
    b.arena_offset = offset;
    offset = offset + SymExpr::FloorDiv(b.SizeBytes() + 63, 64) * 64;
  }
  proto::Schedule s = ToProto(p, g.ToProto());
  *s.mutable_memory_plan()->mutable_arena_bytes() = offset.ToProto();
  return s;
}

// Runs the fused program and the graph on random inputs with every graph symbol bound to each
// of `sizes`; integral inputs take values in [0, int_max).
inline void ExpectSameAsGraph(const Graph& g, const Program& p, const std::string& what,
                              std::vector<int64_t> sizes = {3, 5}, int64_t int_max = 4) {
  proto::Schedule schedule = ToScheduleWithSlots(p, g);
  for (int64_t size : sizes) {
    absl::flat_hash_map<std::string, int64_t> bind;
    for (const SymbolInfo& s : g.symbols()) bind[s.name] = size;
    std::mt19937 rng(11 + size);
    std::uniform_real_distribution<double> real(-2.0, 2.0);
    std::vector<HostTensor> args;
    for (const Value* in : g.inputs()) {
      std::vector<int64_t> shape;
      int64_t n = 1;
      for (const SymExpr& d : in->type().shape) {
        absl::StatusOr<int64_t> v = d.Evaluate(bind);
        ASSERT_TRUE(v.ok()) << what << ": " << v.status();
        shape.push_back(*v);
        n *= *v;
      }
      DType dt = in->type().dtype;
      std::vector<double> values(n);
      for (double& v : values) {
        v = IsFloating(dt) ? real(rng) : static_cast<double>(rng() % int_max);
      }
      args.push_back(HostTensor::FromDoubles(dt, shape, values));
    }
    // Deep copies: prims.copy_to writes through to INPUT tensors.
    auto copies = [&] {
      std::vector<HostTensor> c;
      for (const HostTensor& t : args) {
        c.push_back(HostTensor::FromDoubles(t.dtype(), t.shape(), t.ToDoubles()));
      }
      return c;
    };
    absl::StatusOr<std::vector<HostTensor>> want = Interpret(g, copies());
    ASSERT_TRUE(want.ok()) << what << ": " << want.status();
    ScheduleInterpreterOptions options;
    options.poison_dead_buffers = true;
    absl::StatusOr<std::vector<HostTensor>> got = InterpretSchedule(schedule, copies(), options);
    ASSERT_TRUE(got.ok()) << what << ": " << got.status();
    ASSERT_EQ(want->size(), got->size()) << what;
    for (size_t o = 0; o < want->size(); ++o) {
      std::vector<double> a = (*want)[o].ToDoubles(), b = (*got)[o].ToDoubles();
      ASSERT_EQ((*want)[o].shape(), (*got)[o].shape()) << what << " output " << o;
      for (size_t i = 0; i < a.size(); ++i) {
        if (std::isnan(a[i]) && std::isnan(b[i])) continue;
        ASSERT_NEAR(a[i], b[i], 1e-5 + 1e-4 * std::abs(a[i]))
            << what << " size " << size << " output " << o << " element " << i;
      }
    }
  }
}

}  // namespace coil::inductor::testing

#endif  // COIL_INDUCTOR_PASSES_FUSION_CHECK_H_
