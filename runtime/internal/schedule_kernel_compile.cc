// Compiling a Schedule kernel's loops: scoping checks, slots, index programs.
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/internal/schedule_kernel.h"

namespace coil::schedule_internal {

absl::StatusOr<SymExpr> BindExpr(const proto::SymExpr& e,
                                 const absl::flat_hash_map<std::string, SymExpr>& bindings) {
  // An unset field (arena_offset of a buffer at 0, no memory plan) means 0, as in proto3.
  if (e.kind() == proto::SymExpr::KIND_UNSPECIFIED && e.args_size() == 0) return SymExpr(0);
  // Substituted in the proto, so that FromProto reports what SymExpr::Substitute would
  // CHECK-fail on (int64 overflow, a divisor that becomes 0).
  proto::SymExpr bound = e;
  std::vector<proto::SymExpr*> todo = {&bound};
  while (!todo.empty()) {
    proto::SymExpr* n = todo.back();
    todo.pop_back();
    if (n->kind() == proto::SymExpr::SYMBOL) {
      auto it = bindings.find(n->name());
      if (it != bindings.end()) *n = it->second.ToProto();
      continue;
    }
    for (proto::SymExpr& a : *n->mutable_args()) todo.push_back(&a);
  }
  return SymExpr::FromProto(bound);
}

absl::StatusOr<int64_t> EvalConstant(const proto::SymExpr& e,
                                     const absl::flat_hash_map<std::string, SymExpr>& bindings) {
  absl::StatusOr<SymExpr> s = BindExpr(e, bindings);
  if (!s.ok()) return s.status();
  if (!s->is_constant()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", s->ToString(), "' has unbound symbols (",
                     absl::StrJoin(s->Symbols(), ", "), ")"));
  }
  return s->constant();
}

namespace {

// Where an expression id was defined and whether later Loops may use it.
struct Def {
  int slot = -1;
  DType dtype = proto::DTYPE_UNSPECIFIED;
  int loop = -1;
  bool is_reduce = false;
  bool exported = false;  // visible to later Loops
};

class Compiler {
 public:
  Compiler(const proto::Kernel& k, const absl::flat_hash_map<std::string, SymExpr>& bindings,
           const std::vector<BufferMem*>& buffers)
      : k_(k), bindings_(bindings), buffers_(buffers) {}

  absl::StatusOr<CompiledKernel> Run() {
    out_.id = k_.id();
    out_.name = k_.name();
    out_.where = absl::StrCat("kernel ", k_.id(), " '", k_.name(), "'");
    absl::Status s = Compile();
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat(out_.where, ": ", s.message()));
    return std::move(out_);
  }

 private:
  absl::Status Compile() {
    for (const proto::SymExpr& r : k_.ranges()) {
      absl::StatusOr<int64_t> v = EvalConstant(r, bindings_);
      if (!v.ok()) return absl::InvalidArgumentError(absl::StrCat("range: ", v.status().message()));
      if (*v < 0) return absl::InvalidArgumentError(absl::StrCat("negative range ", *v));
      out_.ranges.push_back(*v);
      if (__builtin_mul_overflow(out_.count, *v, &out_.count)) {
        return absl::InvalidArgumentError("the ranges' product overflows int64");
      }
    }
    int max_inner = 0;
    for (const proto::Loop& l : k_.loops()) max_inner = std::max(max_inner, l.ranges_size());
    out_.r_base = k_.ranges_size();
    out_.num_vars = out_.r_base + max_inner;
    for (int li = 0; li < k_.loops_size(); ++li) {
      if (absl::Status s = CompileLoop(li); !s.ok()) return s;
    }
    // Values used as _v<id> publish their integer value into a variable slot.
    for (CompiledLoop& l : out_.loops) {
      for (Instr& in : l.body) {
        auto it = v_slots_.find(in.expr_id);
        if (it != v_slots_.end() && in.kind != proto::Expr::REDUCE) in.v_slot = it->second;
      }
    }
    for (ReduceSpec& r : out_.reduces) {
      auto it = v_slots_.find(r.expr_id);
      if (it != v_slots_.end()) r.v_slot = it->second;
    }
    out_.num_values = static_cast<int>(defs_.size());
    return absl::OkStatus();
  }

  absl::Status CompileLoop(int li) {
    const proto::Loop& l = k_.loops(li);
    CompiledLoop cl;
    for (const proto::SymExpr& r : l.ranges()) {
      absl::StatusOr<int64_t> v = EvalConstant(r, bindings_);
      if (!v.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("loop ", li, " range: ", v.status().message()));
      }
      if (*v < 0) return absl::InvalidArgumentError(absl::StrCat("negative loop range ", *v));
      cl.ranges.push_back(*v);
      if (__builtin_mul_overflow(cl.count, *v, &cl.count)) {
        return absl::InvalidArgumentError(
            absl::StrCat("loop ", li, ": the ranges' product overflows int64"));
      }
    }
    loop_ = li;
    inner_rank_ = l.ranges_size();
    for (const proto::Expr& e : l.body()) {
      absl::StatusOr<Instr> in = CompileExpr(e, cl);
      if (!in.ok()) {
        return absl::Status(in.status().code(), absl::StrCat("loop ", li, " expr ", e.id(), " (",
                                                             proto::Expr::Kind_Name(e.kind()),
                                                             "): ", in.status().message()));
      }
      cl.body.push_back(*std::move(in));
    }
    const bool ranged = l.ranges_size() > 0;
    for (auto& [id, def] : defs_) {
      if (def.loop == li && (!ranged || def.is_reduce)) def.exported = true;
    }
    out_.loops.push_back(std::move(cl));
    return absl::OkStatus();
  }

  absl::StatusOr<const Def*> Use(int id) {
    auto it = defs_.find(id);
    if (it == defs_.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("refers to expr ", id, ", not defined before"));
    }
    const Def& d = it->second;
    if (d.loop == loop_ && d.is_reduce) {
      return absl::InvalidArgumentError(
          absl::StrCat("uses REDUCE ", id, " inside its own Loop (visible to later Loops only)"));
    }
    if (d.loop != loop_ && !d.exported) {
      return absl::InvalidArgumentError(absl::StrCat(
          "uses expr ", id, " of loop ", d.loop, ", which is not visible outside it"));
    }
    return &d;
  }

  absl::StatusOr<IndexProgram> Program(const proto::SymExpr& p) {
    absl::StatusOr<SymExpr> e = BindExpr(p, bindings_);
    if (!e.ok()) return e.status();
    absl::Status bad;
    IndexProgram::SlotOf slot_of = [&](absl::string_view name) -> int {
      int d;
      if (name.size() < 3 || name[0] != '_' || !absl::SimpleAtoi(name.substr(2), &d) || d < 0) {
        return -1;
      }
      if (name[1] == 'i') return d < k_.ranges_size() ? d : -1;
      if (name[1] == 'r') return d < inner_rank_ ? out_.r_base + d : -1;
      if (name[1] != 'v') return -1;
      absl::StatusOr<const Def*> def = Use(d);
      if (!def.ok()) {
        bad = def.status();
        return -1;
      }
      auto [it, inserted] = v_slots_.emplace(d, out_.num_vars);
      if (inserted) ++out_.num_vars;
      return it->second;
    };
    absl::StatusOr<IndexProgram> prog = IndexProgram::Compile(*e, slot_of);
    if (!bad.ok()) return bad;
    if (!prog.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("index '", e->ToString(), "': ", prog.status().message()));
    }
    return prog;
  }

  absl::StatusOr<int> CompileAccess(const proto::Expr& e) {
    if (e.buffer() <= 0 || e.buffer() >= static_cast<int>(buffers_.size()) ||
        buffers_[e.buffer()] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown buffer ", e.buffer()));
    }
    Access a;
    a.buf = buffers_[e.buffer()];
    if (e.index_size() != static_cast<int>(a.buf->shape.size())) {
      return absl::InvalidArgumentError(absl::StrCat("buffer ", e.buffer(), " ('", a.buf->name,
                                                     "') has rank ", a.buf->shape.size(),
                                                     ", the index has ", e.index_size(), " dims"));
    }
    for (const proto::SymExpr& ix : e.index()) {
      absl::StatusOr<IndexProgram> p = Program(ix);
      if (!p.ok()) return p.status();
      a.index.push_back(*std::move(p));
    }
    out_.accesses.push_back(std::move(a));
    return static_cast<int>(out_.accesses.size()) - 1;
  }

  absl::StatusOr<Instr> CompileExpr(const proto::Expr& e, CompiledLoop& cl) {
    if (e.id() <= 0 || defs_.contains(e.id())) {
      return absl::InvalidArgumentError("expression ids must be >= 1 and unique in the kernel");
    }
    Instr in;
    in.kind = e.kind();
    in.expr_id = e.id();
    in.dtype = e.dtype();
    if (e.kind() != proto::Expr::STORE && !IsValidDType(e.dtype())) {
      return absl::InvalidArgumentError("has no valid dtype");
    }
    in.nargs = e.args_size();
    if (in.nargs > 3) return absl::InvalidArgumentError("has more than 3 arguments");
    for (int i = 0; i < in.nargs; ++i) {
      absl::StatusOr<const Def*> d = Use(e.args(i));
      if (!d.ok()) return d.status();
      in.args[i] = (*d)->slot;
      in.arg_dtypes[i] = (*d)->dtype;
    }
    auto want_args = [&](int n) -> absl::Status {
      if (in.nargs == n) return absl::OkStatus();
      return absl::InvalidArgumentError(absl::StrCat("takes ", n, " args, got ", in.nargs));
    };
    switch (e.kind()) {
      case proto::Expr::LOAD: {
        absl::StatusOr<int> a = CompileAccess(e);
        if (!a.ok()) return a.status();
        in.access = *a;
        if (e.mask() != 0) {
          absl::StatusOr<const Def*> m = Use(e.mask());
          if (!m.ok()) return m.status();
          in.mask = (*m)->slot;
          if (IsFloating((*m)->dtype)) return absl::InvalidArgumentError("mask is not bool");
          in.literal = FromDouble(e.literal(), e.dtype());
        }
        break;
      }
      case proto::Expr::LITERAL:
        in.literal = IsFloating(e.dtype()) ? FromDouble(e.literal(), e.dtype())
                                           : FromInt(e.int_literal(), e.dtype());
        break;
      case proto::Expr::INDEX:
      case proto::Expr::RANDOM: {
        absl::StatusOr<IndexProgram> p = Program(e.value());
        if (!p.ok()) return p.status();
        out_.programs.push_back(*std::move(p));
        in.program = static_cast<int>(out_.programs.size()) - 1;
        in.seed = e.seed();
        if (e.kind() == proto::Expr::RANDOM && !IsFloating(e.dtype())) {
          return absl::InvalidArgumentError("RANDOM needs a floating dtype");
        }
        break;
      }
      case proto::Expr::APPLY:
        if (absl::Status s = CompileApply(e, in); !s.ok()) return s;
        break;
      case proto::Expr::REDUCE:
        if (absl::Status s = want_args(1); !s.ok()) return s;
        if (absl::Status s = CompileReduce(e, in, cl); !s.ok()) return s;
        break;
      case proto::Expr::STORE: {
        if (absl::Status s = want_args(1); !s.ok()) return s;
        absl::StatusOr<int> a = CompileAccess(e);
        if (!a.ok()) return a.status();
        in.access = *a;
        break;
      }
      default:
        return absl::InvalidArgumentError("unknown expression kind");
    }
    Def d;
    d.slot = static_cast<int>(defs_.size());
    d.dtype = e.dtype();
    d.loop = loop_;
    d.is_reduce = e.kind() == proto::Expr::REDUCE;
    in.dst = d.slot;
    if (in.kind == proto::Expr::REDUCE) out_.reduces[in.reduce].dst = d.slot;
    defs_.emplace(e.id(), d);
    return in;
  }

  absl::Status CompileApply(const proto::Expr& e, Instr& in) {
    if (in.nargs < 1) return absl::InvalidArgumentError("APPLY without arguments");
    in.in_dtype = in.arg_dtypes[in.nargs - 1];
    in.in_fp = IsFloating(in.in_dtype);
    in.in_bool = IsBool(in.arg_dtypes[0]);
    if (e.op() == "prims.convert_element_type") {
      if (in.nargs != 1) return absl::InvalidArgumentError("convert_element_type takes 1 arg");
      in.convert = true;
      return absl::OkStatus();
    }
    std::optional<ScalarOp> op = ScalarOpFromName(e.op());
    if (!op.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat("'", e.op(), "' is not an elementwise prim"));
    }
    in.op = *op;
    if (in.nargs != ScalarOpArity(*op)) {
      return absl::InvalidArgumentError(absl::StrCat(e.op(), " takes ", ScalarOpArity(*op),
                                                     " args, got ", in.nargs));
    }
    if (in.in_fp ? !HasFloatPath(*op) : !HasIntPath(*op)) {
      return absl::InvalidArgumentError(
          absl::StrCat(e.op(), " does not take ", DTypeName(in.in_dtype), " operands"));
    }
    return absl::OkStatus();
  }

  absl::Status CompileReduce(const proto::Expr& e, Instr& in, CompiledLoop& cl) {
    static const std::pair<const char*, RedOp> kOps[] = {
        {"sum", RedOp::kSum},       {"prod", RedOp::kProd},     {"max", RedOp::kMax},
        {"min", RedOp::kMin},       {"argmax", RedOp::kArgMax}, {"argmin", RedOp::kArgMin},
    };
    ReduceSpec r;
    bool found = false;
    for (const auto& [name, op] : kOps) {
      if (e.op() == name) {
        r.op = op;
        found = true;
      }
    }
    if (!found) return absl::InvalidArgumentError(absl::StrCat("unknown reduction '", e.op(), "'"));
    r.dtype = e.dtype();
    r.in_dtype = in.arg_dtypes[0];
    r.in_fp = IsFloating(r.in_dtype);
    r.arg = in.args[0];
    r.expr_id = e.id();
    out_.reduces.push_back(r);
    in.reduce = static_cast<int>(out_.reduces.size()) - 1;
    cl.reduces.push_back(in.reduce);
    return absl::OkStatus();
  }

  const proto::Kernel& k_;
  const absl::flat_hash_map<std::string, SymExpr>& bindings_;
  const std::vector<BufferMem*>& buffers_;
  CompiledKernel out_;
  absl::flat_hash_map<int, Def> defs_;
  absl::flat_hash_map<int, int> v_slots_;  // expr id -> variable slot
  int loop_ = 0;
  int inner_rank_ = 0;
};

}  // namespace

absl::StatusOr<CompiledKernel> CompileKernel(
    const proto::Kernel& kernel, const absl::flat_hash_map<std::string, SymExpr>& bindings,
    const std::vector<BufferMem*>& buffers) {
  return Compiler(kernel, bindings, buffers).Run();
}

}  // namespace coil::schedule_internal
