// Small random graphs from fuzzer bytes (see random_graph.h).
#include "tools/fuzz/random_graph.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "ir/attribute.h"
#include "ir/builder.h"
#include "ir/dtype.h"
#include "ir/op_registry.h"
#include "ir/sym_expr.h"
#include "ir/tensor_type.h"

namespace coil::fuzz {
namespace {

constexpr char kSymbol[] = "s0";

// Ops drawn from the registry: everything but random ops (their values cannot be compared)
// and in-place ops (graphs before functionalization only; the capture stage makes those).
std::vector<const OpSchema*> CandidateOps() {
  std::vector<const OpSchema*> ops;
  for (const OpSchema* s : OpRegistry::Global().All()) {
    if (s->op_class == OpClass::kRandom || s->mutated_input >= 0) continue;
    if (absl::EndsWith(s->name, "_")) continue;
    ops.push_back(s);
  }
  return ops;
}

const std::vector<const OpSchema*>& Candidates() {
  static const std::vector<const OpSchema*>* ops =
      new std::vector<const OpSchema*>(CandidateOps());
  return *ops;
}

// The elements of `t` with the symbol bound; nullopt when a size does not evaluate.
std::optional<int64_t> Elements(const TensorType& t,
                                const absl::flat_hash_map<std::string, int64_t>& values) {
  int64_t n = 1;
  for (const SymExpr& d : t.shape) {
    absl::StatusOr<int64_t> v = d.Evaluate(values);
    if (!v.ok() || *v < 0 || *v > kMaxRandomGraphElements) return std::nullopt;
    n *= *v;
    if (n > kMaxRandomGraphElements) return std::nullopt;
  }
  return n;
}

SymExpr SmallSym(ByteReader& bytes, bool symbolic) {
  if (symbolic && bytes.Range(0, 3) == 0) {
    SymExpr s = SymExpr::Symbol(kSymbol);
    return bytes.Bool() ? s : s + SymExpr(bytes.Range(-1, 1));
  }
  return SymExpr(bytes.Range(-1, 4));
}

Attribute RandomAttr(AttrKind kind, ByteReader& bytes, bool symbolic) {
  static constexpr double kFloats[] = {0.0, 0.5, 1.0, -1.0, 2.0, 1e-5, 3.0, -0.25};
  static const char* const kStrings[] = {"none", "tanh", "mean", "sum", "constant", "reflect",
                                         "replicate", "floor", "trunc", "nearest", "linear"};
  static constexpr DType kDTypes[] = {proto::FLOAT32, proto::INT64, proto::INT32, proto::BOOL,
                                      proto::FLOAT64, proto::FLOAT16, proto::BFLOAT16,
                                      proto::UINT8};
  switch (kind) {
    case AttrKind::kInt:
      return Attribute(bytes.Range(-2, 3));
    case AttrKind::kFloat:
      return Attribute(kFloats[bytes.Range(0, 7)]);
    case AttrKind::kBool:
      return Attribute(bytes.Bool());
    case AttrKind::kString:
      return Attribute(std::string(kStrings[bytes.Range(0, 10)]));
    case AttrKind::kInts: {
      IntList list(bytes.Range(0, 3));
      for (int64_t& v : list) v = bytes.Range(-1, 3);
      return Attribute(std::move(list));
    }
    case AttrKind::kFloats: {
      FloatList list(bytes.Range(1, 2));
      for (double& v : list) v = kFloats[bytes.Range(0, 7)];
      return Attribute(std::move(list));
    }
    case AttrKind::kDType:
      return Attribute(kDTypes[bytes.Range(0, 7)]);
    case AttrKind::kSym:
      return Attribute(SmallSym(bytes, symbolic));
    case AttrKind::kSyms: {
      SymList list(bytes.Range(0, 3));
      for (SymExpr& v : list) v = SmallSym(bytes, symbolic);
      return Attribute(std::move(list));
    }
  }
  return Attribute(int64_t{0});
}

// Input data: floats in [-4, 4) in steps of 1/32 (so sums and products stay exact for a
// while), integers in [-4, 4] (indices, divisors: zero included), booleans.
HostTensor RandomInput(DType dtype, std::vector<int64_t> shape, ByteReader& bytes) {
  HostTensor t = HostTensor::Zeros(dtype, std::move(shape));
  int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    if (IsFloating(dtype)) {
      t.StoreDouble(i, (static_cast<double>(bytes.Byte()) - 128.0) / 32.0);
    } else if (IsBool(dtype)) {
      t.StoreInt(i, bytes.Byte() & 1);
    } else {
      t.StoreInt(i, bytes.Range(-4, 4));
    }
  }
  return t;
}

// For a static f32 matrix p of the pool (none: nothing is added):
//   pt = t(p); r1 = mm(p, pt); r2 = mm(u0(p), pt); a = u1(r1); c = u2(r2) + r1; out = mm(a, c)
// with u0..u2 unary ops drawn from a small table. a and c are pointwise over the same [m, m]
// ranges, independent, and share r1, so horizontal fusion (before epilogue fusion) puts them in
// one kernel that stores a before it loads r2, whose last use that is; a and r2 have the same
// shape and both live in the arena.
void AddHorizontalTail(GraphBuilder& b, std::vector<Value*>& pool, const ByteReader& bytes,
                       std::vector<std::string>& ops) {
  static const char* const kUnary[] = {"aten.relu", "aten.neg", "aten.exp", "aten.sigmoid",
                                       "aten.tanh", "aten.abs"};
  std::vector<Value*> mats;
  for (Value* v : pool) {
    const TensorType& t = v->type();
    if (t.dtype == proto::FLOAT32 && t.rank() == 2 && t.shape[0].is_constant() &&
        t.shape[1].is_constant()) {
      mats.push_back(v);
    }
  }
  if (mats.empty()) return;
  // Choices from bytes 1-4, read without moving.
  Value* p = mats[bytes.At(1) % mats.size()];
  size_t next = 2;
  auto unary = [&](Value* x) -> Value* {
    absl::StatusOr<std::vector<Value*>> out = b.OpMulti(kUnary[bytes.At(next++) % 6], {x}, {});
    return out.ok() ? (*out)[0] : nullptr;
  };
  auto op = [&](const char* name, std::vector<Value*> in) -> Value* {
    absl::StatusOr<std::vector<Value*>> out = b.OpMulti(name, std::move(in), {});
    return out.ok() ? (*out)[0] : nullptr;
  };
  Value* pt = op("aten.t", {p});
  Value* u = pt != nullptr ? unary(p) : nullptr;
  Value* r1 = u != nullptr ? op("aten.mm", {p, pt}) : nullptr;
  Value* r2 = r1 != nullptr ? op("aten.mm", {u, pt}) : nullptr;
  Value* a = r2 != nullptr ? unary(r1) : nullptr;
  Value* c2 = a != nullptr ? unary(r2) : nullptr;
  Value* c = c2 != nullptr ? op("aten.add", {c2, r1}) : nullptr;
  Value* out = c != nullptr ? op("aten.mm", {a, c}) : nullptr;
  if (out != nullptr) {
    pool.push_back(out);
    ops.push_back("horizontal tail");
  }
}

}  // namespace

std::optional<RandomGraph> MakeRandomGraph(ByteReader& bytes) {
  RandomGraph r;
  Graph& g = r.graph;
  GraphBuilder b(g);

  bool symbolic = bytes.Bool();
  absl::flat_hash_map<std::string, int64_t> run_values;
  if (symbolic) {
    int64_t hint = bytes.Range(1, 5);
    g.symbols().push_back(SymbolInfo{kSymbol, 1, 64, hint});
    // The value the graph runs with: its hint or another one (compiled once, run at another).
    run_values[kSymbol] = bytes.Bool() ? hint : bytes.Range(1, 6);
  }

  std::vector<Value*> pool;
  // Attributes may use the symbol only once an input binds it (Verify refuses other uses).
  bool symbol_bound = false;
  int num_inputs = static_cast<int>(bytes.Range(1, 3));
  std::vector<std::vector<int64_t>> input_shapes;
  for (int i = 0; i < num_inputs; ++i) {
    static constexpr DType kInputDTypes[] = {proto::FLOAT32, proto::FLOAT32, proto::FLOAT32,
                                             proto::FLOAT32, proto::INT64,   proto::BOOL,
                                             proto::FLOAT32, proto::INT32};
    DType dtype = kInputDTypes[bytes.Range(0, 7)];
    int rank = static_cast<int>(bytes.Range(0, 3));
    std::vector<SymExpr> shape;
    std::vector<int64_t> concrete;
    for (int d = 0; d < rank; ++d) {
      if (symbolic && d == 0 && bytes.Bool()) {
        shape.push_back(SymExpr::Symbol(kSymbol));
        concrete.push_back(run_values[kSymbol]);
        symbol_bound = true;
      } else {
        int64_t size = bytes.Range(1, 5);
        shape.push_back(SymExpr(size));
        concrete.push_back(size);
      }
    }
    pool.push_back(b.Input(TensorType(dtype, std::move(shape)), "in" + std::to_string(i)));
    input_shapes.push_back(std::move(concrete));
  }

  const std::vector<const OpSchema*>& ops = Candidates();
  int num_ops = static_cast<int>(bytes.Range(1, 8));
  for (int k = 0; k < num_ops && !bytes.exhausted(); ++k) {
    const OpSchema& op = *ops[(static_cast<size_t>(bytes.Byte()) << 8 | bytes.Byte()) % ops.size()];
    int max_inputs = std::min(op.max_inputs(), op.min_inputs() + 2);
    int arity = static_cast<int>(bytes.Range(op.min_inputs(), std::max(op.min_inputs(), max_inputs)));
    std::vector<Value*> in;
    for (int i = 0; i < arity; ++i) in.push_back(pool[bytes.Byte() % pool.size()]);
    AttrMap attrs;
    for (const AttrSpec& spec : op.attrs) {
      if (spec.default_value.has_value() && bytes.Range(0, 2) != 0) continue;
      attrs[spec.name] = RandomAttr(spec.kind, bytes, symbol_bound);
    }
    // Sizes first: an op whose outputs are too big is not added (a dead node could fail in
    // the reference interpreter while the compiled path removes it).
    std::vector<TensorType> in_types;
    for (Value* v : in) in_types.push_back(v->type());
    AttrMap checked = attrs;
    absl::StatusOr<std::vector<TensorType>> types = InferOutputTypes(op, in_types, checked);
    if (!types.ok()) continue;
    bool small = true;
    for (const TensorType& t : *types) small = small && Elements(t, run_values).has_value();
    if (!small) continue;
    absl::StatusOr<std::vector<Value*>> out = b.OpMulti(op.name, std::move(in), std::move(attrs));
    if (!out.ok()) continue;
    r.ops.push_back(op.name);
    for (Value* v : *out) pool.push_back(v);
  }
  // Sometimes a tail that makes inductor fuse two pointwise kernels horizontally, the first
  // storing an arena buffer before the second loads a same-shaped arena buffer that dies there
  // (the shape of the in-place bug fixed in the memory plan's MayWriteInPlace): matmuls make
  // both inputs and outputs materialize.
  // Decided from bits 1-2 of byte 0 (bit 0 is `symbolic`), read without moving.
  if ((bytes.At(0) & 6) == 6) AddHorizontalTail(b, pool, bytes, r.ops);
  // Every value nothing reads is an output, so no node is dead.
  std::vector<Value*> outputs;
  for (Node* n : g.nodes()) {
    for (Value* v : n->outputs()) {
      if (!v->HasUsers()) outputs.push_back(v);
    }
  }
  if (outputs.empty()) return std::nullopt;
  g.SetOutputs(std::move(outputs));

  for (int i = 0; i < num_inputs; ++i) {
    r.inputs.push_back(RandomInput(g.inputs()[i]->type().dtype, input_shapes[i], bytes));
  }
  return r;
}

}  // namespace coil::fuzz
