// GuardProgram: building, checking and describing the guards of one compiled artifact.
#include "capture/internal/guards.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "capture/internal/tensor_impl.h"
#include "ir/check.h"
#include "ir/shape_guards.h"

namespace coil::capture_internal {
namespace {

constexpr int kMaxStack = 64;
constexpr int kInlineSymbols = 16;

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t FloorMod(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

bool SameScalar(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

}  // namespace

void NegateRelation(proto::Guard::Relation& relation, SymExpr& lhs, SymExpr& rhs) {
  switch (relation) {
    case proto::Guard::EQ:
      relation = proto::Guard::NE;
      return;
    case proto::Guard::NE:
      relation = proto::Guard::EQ;
      return;
    case proto::Guard::LT:
      relation = proto::Guard::LE;
      std::swap(lhs, rhs);
      return;
    case proto::Guard::LE:
      relation = proto::Guard::LT;
      std::swap(lhs, rhs);
      return;
    default:
      COIL_CHECK(false) << "unknown relation " << relation;
  }
}

std::string RelationText(proto::Guard::Relation relation, const SymExpr& lhs, const SymExpr& rhs) {
  return absl::StrCat(lhs.ToString(), " ", GuardRelationSymbol(relation), " ", rhs.ToString());
}

int GuardProgram::AddSymbol(std::string name, int64_t min, int64_t max) {
  int index = static_cast<int>(symbols_.size());
  symbol_index_[name] = index;
  symbols_.push_back({std::move(name), min, max});
  return index;
}

void GuardProgram::AddTensor(std::string name, DType dtype, Device device, bool contiguous,
                             std::vector<Dim> dims) {
  TensorCheck t{std::move(name), dtype, device, contiguous, {}};
  t.dims.assign(dims.begin(), dims.end());
  tensors_.push_back(std::move(t));
}

void GuardProgram::AddScalar(std::string name, double value) {
  scalars_.push_back({std::move(name), value});
}

void GuardProgram::SetListLengths(std::vector<int32_t> lengths) {
  list_lengths_ = std::move(lengths);
}

void GuardProgram::Compile(const proto::SymExpr& e, int* depth, int* max_depth) {
  auto push = [&](Instr instr, int argc) {
    instrs_.push_back(instr);
    *depth += 1 - argc;
    *max_depth = std::max(*max_depth, *depth);
  };
  switch (e.kind()) {
    case proto::SymExpr::CONST:
      push({Instr::kConst, 0, e.value()}, 0);
      return;
    case proto::SymExpr::SYMBOL: {
      auto it = symbol_index_.find(e.name());
      COIL_CHECK(it != symbol_index_.end()) << "guard on unknown symbol " << e.name();
      push({Instr::kSym, 0, it->second}, 0);
      return;
    }
    default:
      break;
  }
  for (const proto::SymExpr& arg : e.args()) Compile(arg, depth, max_depth);
  int argc = e.args_size();
  Instr::Op op = Instr::kAdd;
  switch (e.kind()) {
    case proto::SymExpr::ADD:
      op = Instr::kAdd;
      break;
    case proto::SymExpr::MUL:
      op = Instr::kMul;
      break;
    case proto::SymExpr::FLOORDIV:
      op = Instr::kFloorDiv;
      break;
    case proto::SymExpr::MOD:
      op = Instr::kMod;
      break;
    case proto::SymExpr::MIN:
      op = Instr::kMin;
      break;
    case proto::SymExpr::MAX:
      op = Instr::kMax;
      break;
    default:
      COIL_CHECK(false) << "unknown SymExpr kind " << e.kind();
  }
  push({op, argc, 0}, argc);
}

void GuardProgram::AddRelation(proto::Guard::Relation relation, const SymExpr& lhs,
                               const SymExpr& rhs) {
  for (const RelationCheck& r : relations_) {
    if (r.relation == relation && r.lhs == lhs && r.rhs == rhs) return;
  }
  RelationCheck r{relation, lhs, rhs, 0, 0, 0, 0};
  int depth = 0, max_depth = 0;
  r.lhs_begin = static_cast<int32_t>(instrs_.size());
  Compile(lhs.ToProto(), &depth, &max_depth);
  r.lhs_end = static_cast<int32_t>(instrs_.size());
  depth = 0;
  r.rhs_begin = r.lhs_end;
  Compile(rhs.ToProto(), &depth, &max_depth);
  r.rhs_end = static_cast<int32_t>(instrs_.size());
  COIL_CHECK(max_depth <= kMaxStack) << "guard expression too deep: " << lhs.ToString();
  relations_.push_back(std::move(r));
}

bool GuardProgram::Eval(int32_t begin, int32_t end, const int64_t* symbols, int64_t* out) const {
  int64_t stack[kMaxStack];
  int sp = 0;
  for (int32_t i = begin; i < end; ++i) {
    const Instr& in = instrs_[i];
    switch (in.op) {
      case Instr::kConst:
        stack[sp++] = in.value;
        continue;
      case Instr::kSym:
        stack[sp++] = symbols[in.value];
        continue;
      default:
        break;
    }
    int64_t* args = stack + sp - in.argc;
    int64_t r = args[0];
    for (int k = 1; k < in.argc; ++k) {
      int64_t b = args[k];
      switch (in.op) {
        case Instr::kAdd:
          r += b;
          break;
        case Instr::kMul:
          r *= b;
          break;
        case Instr::kFloorDiv:
          if (b == 0) return false;
          r = FloorDiv(r, b);
          break;
        case Instr::kMod:
          if (b == 0) return false;
          r = FloorMod(r, b);
          break;
        case Instr::kMin:
          r = std::min(r, b);
          break;
        case Instr::kMax:
          r = std::max(r, b);
          break;
        default:
          break;
      }
    }
    sp -= in.argc;
    stack[sp++] = r;
  }
  *out = stack[0];
  return sp == 1;
}

std::string GuardProgram::SymbolText(int32_t symbol) const { return symbols_[symbol].name; }

bool GuardProgram::Run(const FlatArgs& args, std::string* why) const {
  // Layout.
  if (args.list_lengths.size() != list_lengths_.size() ||
      args.tensors.size() != tensors_.size() || args.scalars.size() != scalars_.size()) {
    if (why) {
      *why = absl::StrCat("argument layout changed: ", args.tensors.size(), " tensors and ",
                          args.scalars.size(), " scalars, traced with ", tensors_.size(),
                          " and ", scalars_.size());
    }
    return false;
  }
  for (size_t i = 0; i < list_lengths_.size(); ++i) {
    if (args.list_lengths[i] != list_lengths_[i]) {
      if (why) {
        *why = absl::StrCat("vector argument ", i, " has length ", args.list_lengths[i],
                            ", expected ", list_lengths_[i]);
      }
      return false;
    }
  }
  for (size_t i = 0; i < scalars_.size(); ++i) {
    if (!SameScalar(args.scalars[i], scalars_[i].value)) {
      if (why) {
        *why = absl::StrCat(scalars_[i].name, " == ", scalars_[i].value, " failed (got ",
                            args.scalars[i], ")");
      }
      return false;
    }
  }
  absl::InlinedVector<int64_t, kInlineSymbols> values(symbols_.size(), 0);
  absl::InlinedVector<bool, kInlineSymbols> bound(symbols_.size(), false);
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const TensorCheck& check = tensors_[i];
    const TensorImpl* impl = args.tensors[i]->impl();
    if (impl == nullptr || impl->is_lazy()) {
      if (why) *why = absl::StrCat(check.name, ": not a concrete tensor");
      return false;
    }
    const HostTensor& data = impl->data();
    if (data.dtype() != check.dtype) {
      if (why) {
        *why = absl::StrCat(check.name, ": dtype ", DTypeName(data.dtype()), ", expected ",
                            DTypeName(check.dtype));
      }
      return false;
    }
    if (args.tensors[i]->device() != check.device) {
      if (why) {
        *why = absl::StrCat(check.name, ": device ", args.tensors[i]->device().ToString(),
                            ", expected ", check.device.ToString());
      }
      return false;
    }
    const std::vector<int64_t>& shape = data.shape();
    if (shape.size() != check.dims.size()) {
      if (why) {
        *why = absl::StrCat(check.name, ": rank ", shape.size(), ", expected ", check.dims.size());
      }
      return false;
    }
    for (size_t d = 0; d < shape.size(); ++d) {
      const Dim& dim = check.dims[d];
      if (dim.symbol < 0) {
        if (shape[d] != dim.size) {
          if (why) {
            *why = absl::StrCat(check.name, " dim ", d, ": size ", shape[d], ", expected ",
                                dim.size);
          }
          return false;
        }
      } else if (!bound[dim.symbol]) {
        bound[dim.symbol] = true;
        values[dim.symbol] = shape[d];
      } else if (values[dim.symbol] != shape[d]) {
        if (why) {
          *why = absl::StrCat(check.name, " dim ", d, ": size ", shape[d], ", expected ",
                              SymbolText(dim.symbol), " = ", values[dim.symbol]);
        }
        return false;
      }
    }
    if (check.contiguous && !data.IsContiguous()) {
      if (why) *why = absl::StrCat(check.name, ": not contiguous, traced contiguous");
      return false;
    }
    if (!check.contiguous && data.IsContiguous()) {
      if (why) *why = absl::StrCat(check.name, ": contiguous, traced non-contiguous");
      return false;
    }
  }
  for (size_t s = 0; s < symbols_.size(); ++s) {
    const SymbolCheck& sym = symbols_[s];
    if (!bound[s]) continue;  // only in relations of values the function made
    if (values[s] < sym.min || (sym.max != 0 && values[s] > sym.max)) {
      if (why) {
        *why = absl::StrCat(sym.name, " = ", values[s], " is outside [", sym.min, ", ",
                            sym.max == 0 ? "inf" : absl::StrCat(sym.max), "]");
      }
      return false;
    }
  }
  for (const RelationCheck& r : relations_) {
    int64_t a = 0, b = 0;
    bool ok = Eval(r.lhs_begin, r.lhs_end, values.data(), &a) &&
              Eval(r.rhs_begin, r.rhs_end, values.data(), &b) && GuardHolds(r.relation, a, b);
    if (!ok) {
      if (why) {
        *why = absl::StrCat(RelationText(r.relation, r.lhs, r.rhs), " failed (", a, " vs ", b,
                            ")");
      }
      return false;
    }
  }
  return true;
}

std::string GuardProgram::FirstFailure(const FlatArgs& args) const {
  std::string why;
  if (Run(args, &why)) return "";
  return why;
}

std::vector<std::string> GuardProgram::Describe() const {
  std::vector<std::string> out;
  for (const TensorCheck& t : tensors_) {
    std::vector<std::string> dims;
    for (const Dim& d : t.dims) {
      dims.push_back(d.symbol < 0 ? absl::StrCat(d.size) : SymbolText(d.symbol));
    }
    out.push_back(absl::StrCat(t.name, ": ", DTypeName(t.dtype), "[", absl::StrJoin(dims, ", "),
                               "] ", t.contiguous ? "contiguous" : "non-contiguous", " ",
                               t.device.ToString()));
  }
  for (const SymbolCheck& s : symbols_) {
    out.push_back(absl::StrCat(s.min, " <= ", s.name));
    if (s.max != 0) out.push_back(absl::StrCat(s.name, " <= ", s.max));
  }
  for (size_t i = 0; i < list_lengths_.size(); ++i) {
    out.push_back(absl::StrCat("len(vector argument ", i, ") == ", list_lengths_[i]));
  }
  for (const ScalarCheck& s : scalars_) out.push_back(absl::StrCat(s.name, " == ", s.value));
  for (const RelationCheck& r : relations_) out.push_back(RelationText(r.relation, r.lhs, r.rhs));
  return out;
}

std::vector<proto::Guard> GuardProgram::ToProto() const {
  std::vector<proto::Guard> out;
  auto reason_only = [&](std::string reason) {
    proto::Guard g;
    g.set_reason(std::move(reason));
    out.push_back(std::move(g));
  };
  auto relation = [&](proto::Guard::Relation rel, const SymExpr& a, const SymExpr& b,
                      std::string reason) {
    proto::Guard g;
    g.set_relation(rel);
    *g.mutable_lhs() = a.ToProto();
    *g.mutable_rhs() = b.ToProto();
    g.set_reason(std::move(reason));
    out.push_back(std::move(g));
  };
  std::vector<std::string> text = Describe();
  for (size_t i = 0; i < tensors_.size(); ++i) reason_only(text[i]);
  for (const SymbolCheck& s : symbols_) {
    relation(proto::Guard::LE, s.min, SymExpr::Symbol(s.name), "symbol range");
    if (s.max != 0) relation(proto::Guard::LE, SymExpr::Symbol(s.name), s.max, "symbol range");
  }
  for (size_t i = 0; i < list_lengths_.size(); ++i) {
    reason_only(absl::StrCat("len(vector argument ", i, ") == ", list_lengths_[i]));
  }
  for (const ScalarCheck& s : scalars_) reason_only(absl::StrCat(s.name, " == ", s.value));
  for (const RelationCheck& r : relations_) {
    relation(r.relation, r.lhs, r.rhs, "branch on a symbolic size");
  }
  return out;
}

}  // namespace coil::capture_internal
