// The loop-level IR inductor's passes work on: the in-memory form of ir/proto/schedule.proto.
//
// A Program is buffers plus kernels in program order. A kernel is an outer (parallel) loop nest
// over `ranges` with variables _i0.._iN, and a list of inner Loops; each Loop has its own
// ranges (variables _r0..) and a body of SSA expressions (loads, literals, index values,
// elementwise prims, reductions, stores). See schedule.proto for the exact semantics of each
// expression kind and of Loop scoping.
//
//   // out[i0, i1] = exp(x[i1, i0])   (a transposed load fused into a pointwise kernel)
//   Kernel k = Kernel::Pointwise("exp", {n, m});
//   int x = k.Load(0, /*buffer=*/1, proto::FLOAT32, {LoopVar(1), LoopVar(0)});
//   int e = k.Apply(0, "prims.exp", proto::FLOAT32, {x});
//   k.Store(0, /*buffer=*/2, {LoopVar(0), LoopVar(1)}, e);
//
// Passes take and return Programs (inductor/passes/*.h), the public entry point converts to
// and from the protobuf contract (inductor/schedule.h).
#ifndef COIL_INDUCTOR_LOOP_IR_H_
#define COIL_INDUCTOR_LOOP_IR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/attribute.h"
#include "ir/dtype.h"
#include "ir/proto/schedule.pb.h"
#include "ir/sym_expr.h"

namespace coil::inductor {

// The reserved loop-variable symbols (schedule.proto): _i<d>, _r<d>, _v<id>.
SymExpr LoopVar(int d);
SymExpr InnerVar(int d);
SymExpr ValueVar(int expr_id);
// Whether a symbol name is one of the reserved loop-variable names.
bool IsLoopVarName(absl::string_view name);

struct Buffer {
  int id = 0;  // >= 1
  std::string name;
  proto::Buffer::Kind kind = proto::Buffer::INTERMEDIATE;
  DType dtype = proto::FLOAT32;
  std::vector<SymExpr> shape;
  int64_t graph_value = -1;        // INPUT / CONSTANT
  std::vector<int> graph_outputs;  // OUTPUT
  // Memory plan.
  SymExpr arena_offset{0};
  int reuses = 0;
  bool in_place = false;

  SymExpr NumElements() const;
  SymExpr SizeBytes() const;
};

struct Expr {
  proto::Expr::Kind kind = proto::Expr::KIND_UNSPECIFIED;
  int id = 0;  // >= 1, unique in the kernel
  DType dtype = proto::FLOAT32;
  int buffer = 0;               // LOAD, STORE
  std::vector<SymExpr> index;   // LOAD, STORE: one per buffer dim
  int mask = 0;                 // LOAD: a bool expr id, or 0
  double literal = 0;           // LITERAL (floating), LOAD (masked-off value)
  int64_t int_literal = 0;      // LITERAL (integral / bool)
  SymExpr value{0};             // INDEX; RANDOM: the counter
  std::string op;               // APPLY: "prims.exp"...; REDUCE: "sum", "max", ...
  std::vector<int> args;        // APPLY, REDUCE, STORE (args[0] = the stored value)
  int64_t seed = 0;             // RANDOM
};

// An extern operand read as a strided view of its buffer (schedule.proto's ExternView): the
// operand's dim d is the row-major factors dims[d] (outer to inner), each a size and a stride in
// elements. No dims: the buffer whole.
struct ExternFactor {
  SymExpr size, stride;
};
struct ExternView {
  SymExpr offset{0};
  std::vector<std::vector<ExternFactor>> dims;
  bool whole() const { return dims.empty(); }
};

struct Loop {
  std::vector<SymExpr> ranges;  // empty: runs once per outer index
  std::vector<Expr> body;
};

struct Kernel {
  int id = 0;
  std::string name;
  proto::Kernel::Kind kind = proto::Kernel::POINTWISE;
  std::vector<SymExpr> ranges;
  std::vector<Loop> loops;
  // EXTERN.
  std::string extern_op;
  std::vector<int> extern_inputs;
  // Empty, or one per extern_inputs entry (ExternView; whole() entries read the buffer).
  std::vector<ExternView> extern_input_views;
  int extern_output = 0;
  // The op's result shape where the output buffer is a reshape of it (schedule.proto); empty:
  // the buffer's shape.
  std::vector<SymExpr> extern_output_shape;
  // The op's result written through this view of the output buffer (schedule.proto); whole():
  // none.
  ExternView extern_output_view;
  AttrMap extern_attrs;
  // Provenance.
  std::vector<int64_t> source_values;
  std::vector<std::string> source_ops;

  // A kernel with one range-less Loop over `ranges`.
  static Kernel Pointwise(std::string name, std::vector<SymExpr> ranges);

  // Appenders to loops[loop]; each returns the new expression's id (next_id() before).
  int Load(int loop, int buffer, DType dtype, std::vector<SymExpr> index, int mask = 0,
           double masked_value = 0);
  int Literal(int loop, DType dtype, double value);
  int Index(int loop, DType dtype, SymExpr value);
  int Apply(int loop, std::string op, DType dtype, std::vector<int> args);
  int Reduce(int loop, std::string op, DType dtype, int arg);
  int Store(int loop, int buffer, std::vector<SymExpr> index, int value);
  int Random(int loop, DType dtype, int64_t seed, SymExpr counter);
  // Appends a prepared expression (its id is assigned).
  int Append(int loop, Expr e);

  // The expression with `id` (CHECKs it exists) and a fresh id.
  const Expr& Find(int id) const;
  int next_id() const;

  // Buffers read (LOAD, extern inputs) and written (STORE, extern output), each once, sorted.
  std::vector<int> Reads() const;
  std::vector<int> Writes() const;
};

struct FusionDecision {
  std::string pass;
  std::string kind;
  std::vector<std::string> kernels;
  bool accepted = false;
  std::string reason;
  int64_t bytes_saved_hint = 0;
};

struct Program {
  // Buffers by id: buffers[i].id == i + 1.
  std::vector<Buffer> buffers;
  std::vector<Kernel> kernels;
  std::vector<int> outputs;  // buffer ids, one per graph output
  std::vector<FusionDecision> decisions;
  // Symbol hints for estimates (from the graph's symbols; unknown symbols count as 2... see
  // EvaluateHint).
  std::vector<std::pair<std::string, int64_t>> hints;
  // Filled by lowering (before any fusion), for the stats.
  int kernels_unfused = 0;
  int64_t bytes_moved_unfused_hint = 0;

  Buffer& buffer(int id);
  const Buffer& buffer(int id) const;
  // Adds a buffer and returns its id.
  int AddBuffer(Buffer b);

  // The value of `e` at the symbols' hints (symbols without a hint count as 64).
  int64_t EvaluateHint(const SymExpr& e) const;
  // Bytes a kernel moves: each buffer it reads or writes, once.
  SymExpr BytesMoved(const Kernel& k) const;
  // Every buffer's SizeBytes(), by id - 1: symbolic products are not cheap, so a pass that
  // needs them often computes them once.
  std::vector<SymExpr> BufferSizes() const;
  // Those sizes at the hints, as EvaluateHint gives them (nullopt where one cannot be
  // evaluated or overflows; EvaluateHint says 0), computed from the dimensions' values without
  // building the symbolic products.
  std::vector<std::optional<int64_t>> SizeHints() const;
  // EvaluateHint(BytesMoved(k)) from SizeHints(): 0 when a size cannot be evaluated.
  static int64_t BytesMovedHint(const Kernel& k, const std::vector<std::optional<int64_t>>& sizes);
};

// Conversion to the protobuf contract (stats and memory plan fields included; `graph` goes into
// the Schedule as given: pass an rvalue to move its constants instead of copying them).
proto::Schedule ToProto(const Program& program, proto::Graph graph);

}  // namespace coil::inductor

#endif  // COIL_INDUCTOR_LOOP_IR_H_
