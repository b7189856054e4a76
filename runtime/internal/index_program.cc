// IndexProgram compilation (from the SymExpr's proto form) and the bytecode loop.
#include "runtime/internal/index_program.h"

#include <algorithm>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/proto/graph.pb.h"

namespace coil::schedule_internal {

class IndexCompiler {
 public:
  IndexCompiler(IndexProgram& p, const IndexProgram::SlotOf& slot_of) : p_(p), slot_of_(slot_of) {}

  absl::Status Top(const proto::SymExpr& e) {
    if (e.kind() == proto::SymExpr::ADD) {
      bool have_rest = false;
      for (const proto::SymExpr& a : e.args()) {
        if (absl::Status s = Term(a, have_rest); !s.ok()) return s;
      }
      return absl::OkStatus();
    }
    bool have_rest = false;
    return Term(e, have_rest);
  }

 private:
  // One summand: folded into the affine part when it is c, v or c*v; else compiled and added.
  absl::Status Term(const proto::SymExpr& e, bool& have_rest) {
    if (e.kind() == proto::SymExpr::CONST) {
      p_.constant_ = static_cast<int64_t>(static_cast<uint64_t>(p_.constant_) +
                                          static_cast<uint64_t>(e.value()));
      return absl::OkStatus();
    }
    if (e.kind() == proto::SymExpr::SYMBOL) {
      absl::StatusOr<int> slot = Slot(e.name());
      if (!slot.ok()) return slot.status();
      p_.terms_.push_back({*slot, 1});
      return absl::OkStatus();
    }
    if (e.kind() == proto::SymExpr::MUL && e.args_size() == 2 &&
        e.args(0).kind() == proto::SymExpr::CONST && e.args(1).kind() == proto::SymExpr::SYMBOL) {
      absl::StatusOr<int> slot = Slot(e.args(1).name());
      if (!slot.ok()) return slot.status();
      p_.terms_.push_back({*slot, e.args(0).value()});
      return absl::OkStatus();
    }
    if (absl::Status s = Emit(e, have_rest ? 1 : 0); !s.ok()) return s;
    if (have_rest) p_.code_.push_back({IndexProgram::Op::kAdd, 0});
    have_rest = true;
    return absl::OkStatus();
  }

  absl::StatusOr<int> Slot(const std::string& name) {
    int slot = slot_of_(name);
    if (slot < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("symbol '", name, "' is neither bound nor a loop variable here"));
    }
    return slot;
  }

  // Emits postfix code for `e`, with `depth` entries already on the stack.
  absl::Status Emit(const proto::SymExpr& e, int depth) {
    if (depth > 250) return absl::InvalidArgumentError("index expression nested too deeply");
    p_.max_depth_ = std::max(p_.max_depth_, depth + 1);
    using Op = IndexProgram::Op;
    switch (e.kind()) {
      case proto::SymExpr::CONST:
        p_.code_.push_back({Op::kConst, e.value()});
        return absl::OkStatus();
      case proto::SymExpr::SYMBOL: {
        absl::StatusOr<int> slot = Slot(e.name());
        if (!slot.ok()) return slot.status();
        p_.code_.push_back({Op::kVar, *slot});
        return absl::OkStatus();
      }
      default:
        break;
    }
    Op op;
    switch (e.kind()) {
      case proto::SymExpr::ADD: op = Op::kAdd; break;
      case proto::SymExpr::MUL: op = Op::kMul; break;
      case proto::SymExpr::FLOORDIV: op = Op::kFloorDiv; break;
      case proto::SymExpr::MOD: op = Op::kMod; break;
      case proto::SymExpr::MIN: op = Op::kMin; break;
      case proto::SymExpr::MAX: op = Op::kMax; break;
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("malformed index expression (kind ", static_cast<int>(e.kind()), ")"));
    }
    bool binary = op == Op::kFloorDiv || op == Op::kMod;
    if (e.args_size() < 1 || (binary && e.args_size() != 2)) {
      return absl::InvalidArgumentError("malformed index expression (argument count)");
    }
    for (int i = 0; i < e.args_size(); ++i) {
      if (absl::Status s = Emit(e.args(i), depth + (i == 0 ? 0 : 1)); !s.ok()) return s;
      if (i > 0) p_.code_.push_back({op, 0});
    }
    return absl::OkStatus();
  }

  IndexProgram& p_;
  const IndexProgram::SlotOf& slot_of_;
};

absl::StatusOr<IndexProgram> IndexProgram::Compile(const SymExpr& e, const SlotOf& slot_of) {
  IndexProgram p;
  if (e.is_constant()) {
    p.constant_ = e.constant();
    return p;
  }
  IndexCompiler c(p, slot_of);
  if (absl::Status s = c.Top(e.ToProto()); !s.ok()) return s;
  return p;
}

namespace {

int64_t FloorDivI(int64_t a, int64_t b) {
  if (b == -1) return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t ModI(int64_t a, int64_t b) {
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

}  // namespace

bool IndexProgram::RunCode(const int64_t* vars, int64_t* out) const {
  int64_t stack[256];
  int sp = 0;
  for (const Instr& in : code_) {
    switch (in.op) {
      case Op::kConst:
        stack[sp++] = in.arg;
        break;
      case Op::kVar:
        stack[sp++] = vars[in.arg];
        break;
      default: {
        int64_t b = stack[--sp];
        int64_t& a = stack[sp - 1];
        switch (in.op) {
          case Op::kAdd:
            a = static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
            break;
          case Op::kMul:
            a = static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
            break;
          case Op::kFloorDiv:
            if (b == 0) return false;
            a = FloorDivI(a, b);
            break;
          case Op::kMod:
            if (b == 0) return false;
            a = ModI(a, b);
            break;
          case Op::kMin:
            a = std::min(a, b);
            break;
          case Op::kMax:
            a = std::max(a, b);
            break;
          default:
            break;
        }
      }
    }
  }
  *out = stack[0];
  return true;
}

}  // namespace coil::schedule_internal
