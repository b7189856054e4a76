// VerifyProgram: checks the loop-IR invariants listed in verify_program.h,
// kernel by kernel in program order, then the program's outputs.
#include "inductor/passes/verify_program.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace coil::inductor {
namespace {

template <typename... Args>
absl::Status Bug(Args&&... args) {
  return absl::InternalError(absl::StrCat("VerifyProgram: ", std::forward<Args>(args)...));
}

// Checks one kernel; `written` holds the buffers written by earlier kernels.
class KernelChecker {
 public:
  KernelChecker(const Program& program, const Kernel& kernel)
      : program_(program),
        k_(kernel),
        where_(absl::StrCat("kernel ", kernel.name, " (id ", kernel.id, ")")) {}

  absl::Status Check() {
    if (absl::Status s = CheckKind(); !s.ok()) return s;
    for (const SymExpr& r : k_.ranges) {
      for (const std::string& sym : r.Symbols()) {
        if (IsLoopVarName(sym))
          return Bug(where_, ": range ", r.ToString(), " uses loop variable ", sym);
      }
    }
    for (size_t li = 0; li < k_.loops.size(); ++li) {
      if (absl::Status s = CheckLoop(static_cast<int>(li)); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

 private:
  bool ValidBuffer(int id) const {
    return id >= 1 && id <= static_cast<int>(program_.buffers.size());
  }

  absl::Status CheckKind() {
    const bool is_extern = k_.kind == proto::Kernel::EXTERN;
    if (is_extern) {
      if (k_.extern_op.empty()) return Bug(where_, ": EXTERN kernel without extern_op");
      if (!ValidBuffer(k_.extern_output)) {
        return Bug(where_, ": extern_output ", k_.extern_output, " is not a buffer");
      }
      for (int b : k_.extern_inputs) {
        if (!ValidBuffer(b)) return Bug(where_, ": extern input ", b, " is not a buffer");
      }
      if (!k_.extern_input_views.empty() &&
          k_.extern_input_views.size() != k_.extern_inputs.size()) {
        return Bug(where_, ": ", k_.extern_input_views.size(), " extern input views for ",
                   k_.extern_inputs.size(), " inputs");
      }
      for (const Loop& l : k_.loops) {
        if (!l.ranges.empty()) return Bug(where_, ": an extern epilogue Loop has ranges");
      }
      return absl::OkStatus();
    }
    if (!k_.extern_op.empty() || k_.extern_output != 0 || !k_.extern_inputs.empty() ||
        !k_.extern_input_views.empty()) {
      return Bug(where_, ": a non-EXTERN kernel has extern fields (", k_.extern_op, ")");
    }
    if (k_.kind == proto::Kernel::POINTWISE) {
      if (k_.loops.size() != 1 || !k_.loops[0].ranges.empty()) {
        return Bug(where_, ": a POINTWISE kernel needs exactly one Loop without ranges");
      }
      return absl::OkStatus();
    }
    if (k_.kind == proto::Kernel::REDUCTION) {
      for (const Loop& l : k_.loops) {
        if (!l.ranges.empty()) return absl::OkStatus();
      }
      return Bug(where_, ": a REDUCTION kernel has no Loop with ranges");
    }
    return Bug(where_, ": kernel kind is unspecified");
  }

  // Loop variables in `e` must be bound: _i<d> by the kernel, _r<d> by loop
  // `li`, _v<id> by an integral expression in scope.
  absl::Status CheckVars(const SymExpr& e, int li, int expr_id, bool inner_allowed) {
    for (const std::string& sym : e.Symbols()) {
      if (!IsLoopVarName(sym)) continue;
      int64_t n = 0;
      if (!absl::SimpleAtoi(absl::string_view(sym).substr(2), &n) || n < 0) {
        return Bug(where_, ": expression ", expr_id, " uses malformed loop variable ", sym);
      }
      const char kind = sym[1];
      if (kind == 'i' && n >= static_cast<int64_t>(k_.ranges.size())) {
        return Bug(where_, ": expression ", expr_id, " uses ", sym, " but the kernel has ",
                   k_.ranges.size(), " ranges");
      }
      if (kind == 'r' &&
          (!inner_allowed || n >= static_cast<int64_t>(k_.loops[li].ranges.size()))) {
        return Bug(where_, ": expression ", expr_id, " uses ", sym, " but loop ", li, " has ",
                   k_.loops[li].ranges.size(), " ranges");
      }
      if (kind == 'v') {
        auto it = scope_.find(static_cast<int>(n));
        if (it == scope_.end()) {
          return Bug(where_, ": expression ", expr_id, " uses ", sym, " but expression ", n,
                     " is not in scope");
        }
        if (!IsIntegral(it->second)) {
          return Bug(where_, ": expression ", expr_id, " uses ", sym, " but expression ", n,
                     " is not integral");
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckArg(int arg, int expr_id) {
    if (!scope_.contains(arg)) {
      return Bug(where_, ": expression ", expr_id, " uses ", arg,
                 ", which is not defined earlier in scope");
    }
    return absl::OkStatus();
  }

  absl::Status CheckAccess(const Expr& e, int li) {
    if (!ValidBuffer(e.buffer)) {
      return Bug(where_, ": expression ", e.id, " accesses buffer ", e.buffer,
                 ", which does not exist");
    }
    const Buffer& b = program_.buffer(e.buffer);
    if (e.index.size() != b.shape.size()) {
      return Bug(where_, ": expression ", e.id, " indexes buffer ", b.name, " of rank ",
                 b.shape.size(), " with ", e.index.size(), " indices");
    }
    for (const SymExpr& i : e.index) {
      if (absl::Status s = CheckVars(i, li, e.id, true); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  absl::Status CheckExpr(const Expr& e, int li) {
    const Loop& loop = k_.loops[li];
    switch (e.kind) {
      case proto::Expr::LOAD:
        if (absl::Status s = CheckAccess(e, li); !s.ok()) return s;
        if (e.dtype != program_.buffer(e.buffer).dtype) {
          return Bug(where_, ": LOAD ", e.id, " has dtype ", DTypeName(e.dtype), " but buffer ",
                     program_.buffer(e.buffer).name, " is ",
                     DTypeName(program_.buffer(e.buffer).dtype));
        }
        if (e.mask != 0) {
          if (absl::Status s = CheckArg(e.mask, e.id); !s.ok()) return s;
          if (!IsBool(scope_[e.mask])) return Bug(where_, ": LOAD ", e.id, " has a non-bool mask");
        }
        return absl::OkStatus();
      case proto::Expr::LITERAL:
        return absl::OkStatus();
      case proto::Expr::INDEX:
      case proto::Expr::RANDOM:
        return CheckVars(e.value, li, e.id, true);
      case proto::Expr::APPLY:
        if (e.op.empty()) return Bug(where_, ": APPLY ", e.id, " has no op");
        for (int a : e.args) {
          if (absl::Status s = CheckArg(a, e.id); !s.ok()) return s;
        }
        return absl::OkStatus();
      case proto::Expr::REDUCE: {
        if (loop.ranges.empty()) {
          return Bug(where_, ": REDUCE ", e.id, " is in loop ", li, ", which has no ranges");
        }
        static const absl::flat_hash_set<std::string> kOps = {"sum", "prod",   "max",
                                                              "min", "argmax", "argmin"};
        if (!kOps.contains(e.op))
          return Bug(where_, ": REDUCE ", e.id, " has unknown op '", e.op, "'");
        if (e.args.size() != 1) return Bug(where_, ": REDUCE ", e.id, " needs one argument");
        return CheckArg(e.args[0], e.id);
      }
      case proto::Expr::STORE: {
        if (absl::Status s = CheckAccess(e, li); !s.ok()) return s;
        if (e.args.size() != 1) return Bug(where_, ": STORE ", e.id, " needs one argument");
        if (absl::Status s = CheckArg(e.args[0], e.id); !s.ok()) return s;
        const Buffer& b = program_.buffer(e.buffer);
        if (scope_[e.args[0]] != b.dtype) {
          return Bug(where_, ": STORE ", e.id, " stores a ", DTypeName(scope_[e.args[0]]),
                     " value into buffer ", b.name, " of dtype ", DTypeName(b.dtype));
        }
        if (b.kind == proto::Buffer::CONSTANT) {
          return Bug(where_, ": STORE ", e.id, " writes the constant buffer ", b.name);
        }
        return absl::OkStatus();
      }
      default:
        return Bug(where_, ": expression ", e.id, " has no kind");
    }
  }

  absl::Status CheckLoop(int li) {
    const Loop& loop = k_.loops[li];
    for (const SymExpr& r : loop.ranges) {
      if (absl::Status s = CheckVars(r, li, 0, false); !s.ok()) return s;
    }
    absl::flat_hash_map<int, DType> outer = scope_;
    std::vector<std::pair<int, DType>> exported;
    for (const Expr& e : loop.body) {
      if (e.id < 1 || !ids_.insert(e.id).second) {
        return Bug(where_, ": expression id ", e.id, " is not >= 1 or not unique");
      }
      if (absl::Status s = CheckExpr(e, li); !s.ok()) return s;
      scope_[e.id] = e.dtype;
      if (loop.ranges.empty() || e.kind == proto::Expr::REDUCE)
        exported.emplace_back(e.id, e.dtype);
    }
    // A Loop with ranges exports only its REDUCE results; one without exports
    // everything.
    scope_ = std::move(outer);
    for (const auto& [id, dtype] : exported) scope_[id] = dtype;
    return absl::OkStatus();
  }

  const Program& program_;
  const Kernel& k_;
  std::string where_;
  absl::flat_hash_map<int, DType> scope_;  // expression id -> dtype, visible here
  absl::flat_hash_set<int> ids_;
};

// Whether every LOAD of `buffer` in `k` sits in a Loop after one that STOREs it (a value kept
// from an earlier Loop: passes/reuse_loop_values.cc).
bool ReadsOnlyWhatAnEarlierLoopStored(const Kernel& k, int buffer) {
  int first_store = -1;
  for (int l = 0; l < static_cast<int>(k.loops.size()); ++l) {
    for (const Expr& e : k.loops[l].body) {
      if (e.buffer != buffer) continue;
      if (e.kind == proto::Expr::STORE && first_store < 0) first_store = l;
      if (e.kind == proto::Expr::LOAD && (first_store < 0 || first_store >= l)) return false;
    }
  }
  return first_store >= 0;
}

}  // namespace

absl::Status VerifyProgram(const Program& program) {
  const int num_buffers = static_cast<int>(program.buffers.size());
  for (int i = 0; i < num_buffers; ++i) {
    if (program.buffers[i].id != i + 1) {
      return Bug("buffer ", program.buffers[i].name, " at position ", i, " has id ",
                 program.buffers[i].id, " (expected ", i + 1, ")");
    }
  }
  absl::flat_hash_set<int> written;
  for (const Kernel& k : program.kernels) {
    if (absl::Status s = KernelChecker(program, k).Check(); !s.ok()) return s;
    for (int b : k.Reads()) {
      const Buffer& buf = program.buffer(b);
      if (buf.kind == proto::Buffer::INPUT || buf.kind == proto::Buffer::CONSTANT) continue;
      if (written.contains(b)) continue;
      if (k.kind == proto::Kernel::EXTERN && b == k.extern_output) continue;
      if (ReadsOnlyWhatAnEarlierLoopStored(k, b)) continue;
      return Bug("kernel ", k.name, " (id ", k.id, ") reads buffer ", buf.name,
                 " before any kernel wrote it");
    }
    for (int b : k.Writes()) written.insert(b);
  }
  for (const Buffer& b : program.buffers) {
    if (b.kind == proto::Buffer::OUTPUT && !written.contains(b.id)) {
      return Bug("OUTPUT buffer ", b.name, " is never written");
    }
  }
  for (size_t p = 0; p < program.outputs.size(); ++p) {
    const int id = program.outputs[p];
    if (id < 1 || id > num_buffers)
      return Bug("output ", p, " is buffer ", id, ", which does not exist");
    const Buffer& b = program.buffer(id);
    bool listed = false;
    for (int o : b.graph_outputs) listed |= o == static_cast<int>(p);
    if (b.kind != proto::Buffer::OUTPUT || !listed) {
      return Bug("output ", p, " is buffer ", b.name,
                 ", which is not an OUTPUT buffer returned there");
    }
  }
  return absl::OkStatus();
}

}  // namespace coil::inductor
