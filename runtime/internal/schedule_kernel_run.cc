// Running a compiled Schedule kernel: the outer and inner loop nests and the expression loop.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/internal/schedule_kernel.h"
#include "runtime/reference/philox.h"

namespace coil::schedule_internal {
namespace {

// Accumulator of one REDUCE for the current outer index.
struct RedState {
  double d = 0;
  int64_t i = 0;
  int64_t arg = -1;
};

// What stopped the expression loop.
enum class Why { kNone, kOutOfRange, kDivByZero, kIntError };
struct Failure {
  const Instr* instr = nullptr;
  Why what = Why::kNone;
};

int64_t WAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t WMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

class Runner {
 public:
  explicit Runner(const CompiledKernel& k)
      : k_(k), vars_(k.num_vars, 0), vals_(k.num_values), red_(k.reduces.size()) {}

  absl::Status Run() {
    if (k_.count == 0 || k_.loops.empty()) return absl::OkStatus();
    for (const CompiledLoop& l : k_.loops) {
      if (l.count != 0) continue;
      for (int r : l.reduces) {
        RedOp op = k_.reduces[r].op;
        if (op != RedOp::kSum && op != RedOp::kProd) {
          return absl::InvalidArgumentError(absl::StrCat(
              k_.where, ": cannot reduce (max/min/argmax/argmin) over an empty Loop (expr ",
              k_.reduces[r].expr_id, ")"));
        }
      }
    }
    const int rank = static_cast<int>(k_.ranges.size());
    for (int64_t n = 0; n < k_.count; ++n) {
      for (const CompiledLoop& l : k_.loops) {
        if (!RunLoop(l)) return Error();
      }
      for (int d = rank - 1; d >= 0; --d) {  // next outer index, row-major
        if (++vars_[d] < k_.ranges[d]) break;
        vars_[d] = 0;
      }
    }
    return absl::OkStatus();
  }

 private:
  bool RunLoop(const CompiledLoop& l) {
    for (int r : l.reduces) Reset(k_.reduces[r], red_[r]);
    const int rank = static_cast<int>(l.ranges.size());
    int64_t* inner = vars_.data() + k_.r_base;
    for (int d = 0; d < rank; ++d) inner[d] = 0;
    for (int64_t pos = 0; pos < l.count; ++pos) {
      if (!RunBody(l, pos)) return false;
      for (int d = rank - 1; d >= 0; --d) {
        if (++inner[d] < l.ranges[d]) break;
        inner[d] = 0;
      }
    }
    for (int r : l.reduces) Finish(k_.reduces[r], red_[r]);
    return true;
  }

  static void Reset(const ReduceSpec& r, RedState& s) {
    s.arg = -1;
    switch (r.op) {
      case RedOp::kSum:
        s.d = 0;
        s.i = 0;
        break;
      case RedOp::kProd:
        s.d = 1;
        s.i = 1;
        break;
      case RedOp::kMax:
        s.d = -std::numeric_limits<double>::infinity();
        s.i = std::numeric_limits<int64_t>::lowest();
        break;
      case RedOp::kMin:
        s.d = std::numeric_limits<double>::infinity();
        s.i = std::numeric_limits<int64_t>::max();
        break;
      default:
        break;
    }
  }

  void Accumulate(const ReduceSpec& r, RedState& s, const Val& v, int64_t pos) {
    switch (r.op) {
      case RedOp::kSum:
        if (r.in_fp) s.d += v.d; else s.i = WAdd(s.i, v.i);
        return;
      case RedOp::kProd:
        if (r.in_fp) s.d *= v.d; else s.i = WMul(s.i, v.i);
        return;
      case RedOp::kMax:
        if (r.in_fp) s.d = NanMax(s.d, v.d); else s.i = std::max(s.i, v.i);
        return;
      case RedOp::kMin:
        if (r.in_fp) s.d = NanMin(s.d, v.d); else s.i = std::min(s.i, v.i);
        return;
      case RedOp::kArgMax:
      case RedOp::kArgMin: {
        // First occurrence; NaN counts as the extreme.
        const bool is_max = r.op == RedOp::kArgMax;
        bool take;
        if (s.arg < 0) {
          take = true;
        } else if (r.in_fp) {
          take = !std::isnan(s.d) && (std::isnan(v.d) || (is_max ? v.d > s.d : v.d < s.d));
        } else {
          take = is_max ? v.i > s.i : v.i < s.i;
        }
        if (take) {
          s.d = v.d;
          s.i = v.i;
          s.arg = pos;
        }
        return;
      }
    }
  }

  void Finish(const ReduceSpec& r, const RedState& s) {
    Val v;
    if (r.op == RedOp::kArgMax || r.op == RedOp::kArgMin) {
      v = FromInt(s.arg, r.dtype);
    } else {
      v = r.in_fp ? FromDouble(s.d, r.dtype) : FromInt(s.i, r.dtype);
    }
    vals_[r.dst] = v;
    if (r.v_slot >= 0) vars_[r.v_slot] = IsFloating(r.dtype) ? TruncSat(v.d) : v.i;
  }

  // The element address of an access; false when an index is out of range (or divides by 0).
  bool Address(const Access& a, uint8_t** p, Why* why) {
    const BufferMem& b = *a.buf;
    int64_t off = 0;
    const int64_t* vars = vars_.data();
    for (size_t d = 0; d < a.index.size(); ++d) {
      int64_t v;
      if (!a.index[d].Eval(vars, &v)) {
        *why = Why::kDivByZero;
        return false;
      }
      if (static_cast<uint64_t>(v) >= static_cast<uint64_t>(b.shape[d])) {
        *why = Why::kOutOfRange;
        return false;
      }
      off += v * b.strides[d];
    }
    *p = b.data + off * b.elem_size;
    return true;
  }

  bool Fail(const Instr& in, Why what) {
    fail_.instr = &in;
    fail_.what = what;
    return false;
  }

  bool RunBody(const CompiledLoop& l, int64_t pos) {
    Val* vals = vals_.data();
    for (const Instr& in : l.body) {
      Val& out = vals[in.dst];
      switch (in.kind) {
        case proto::Expr::LOAD: {
          if (in.mask >= 0 && vals[in.mask].i == 0) {
            out = in.literal;
            break;
          }
          const Access& a = k_.accesses[in.access];
          uint8_t* p;
          Why why;
          if (!Address(a, &p, &why)) return Fail(in, why);
          out = Convert(LoadRaw(p, a.buf->dtype), a.buf->dtype, in.dtype);
          break;
        }
        case proto::Expr::LITERAL:
          out = in.literal;
          break;
        case proto::Expr::INDEX:
        case proto::Expr::RANDOM: {
          int64_t v;
          if (!k_.programs[in.program].Eval(vars_.data(), &v)) return Fail(in, Why::kDivByZero);
          out = in.kind == proto::Expr::INDEX ? FromInt(v, in.dtype)
                                              : FromDouble(PhiloxUniformAt(in.seed, v), in.dtype);
          break;
        }
        case proto::Expr::APPLY:
          if (in.convert) {
            out = Convert(vals[in.args[0]], in.in_dtype, in.dtype);
          } else if (in.in_fp) {
            double a[3];
            for (int i = 0; i < in.nargs; ++i) {
              const Val& v = vals[in.args[i]];
              a[i] = IsFloating(in.arg_dtypes[i]) ? v.d : static_cast<double>(v.i);
            }
            out = FromDouble(EvalFloat(in.op, a), in.dtype);
          } else {
            int64_t a[3];
            for (int i = 0; i < in.nargs; ++i) a[i] = vals[in.args[i]].i;
            int64_t r;
            if (!EvalInt(in.op, a, in.in_bool, &r)) {
              int_error_ = IntErrorMessage(in.op, a);
              return Fail(in, Why::kIntError);
            }
            out = FromInt(r, in.dtype);
          }
          break;
        case proto::Expr::REDUCE:
          Accumulate(k_.reduces[in.reduce], red_[in.reduce], vals[in.args[0]], pos);
          continue;  // the result is written when the Loop ends
        case proto::Expr::STORE: {
          const Access& a = k_.accesses[in.access];
          uint8_t* p;
          Why why;
          if (!Address(a, &p, &why)) return Fail(in, why);
          StoreRaw(p, a.buf->dtype, vals[in.args[0]], in.arg_dtypes[0]);
          continue;
        }
        default:
          break;
      }
      if (in.v_slot >= 0) vars_[in.v_slot] = IsFloating(in.dtype) ? TruncSat(out.d) : out.i;
    }
    return true;
  }

  // The message for fail_, with the loop variables and the failing index.
  absl::Status Error() const {
    const Instr& in = *fail_.instr;
    std::string at = absl::StrCat(k_.where, ": expr ", in.expr_id, " (",
                                  proto::Expr::Kind_Name(in.kind), ")");
    std::vector<int64_t> outer(vars_.begin(), vars_.begin() + k_.r_base);
    std::string iter = absl::StrCat(" at outer index [", absl::StrJoin(outer, ", "), "]");
    switch (fail_.what) {
      case Why::kOutOfRange: {
        const Access& a = k_.accesses[in.access];
        std::vector<std::string> idx;
        for (const IndexProgram& p : a.index) {
          int64_t v;
          idx.push_back(p.Eval(vars_.data(), &v) ? absl::StrCat(v) : "?");
        }
        // OutOfRange, as the reference kernels and the CPU and CUDA backends report it.
        return absl::OutOfRangeError(absl::StrCat(
            at, ": index [", absl::StrJoin(idx, ", "), "] is out of range for buffer ",
            a.buf->id, " ('", a.buf->name, "') of shape [", absl::StrJoin(a.buf->shape, ", "),
            "]", iter));
      }
      case Why::kDivByZero:
        return absl::InvalidArgumentError(
            absl::StrCat(at, ": index expression divides by zero", iter));
      case Why::kIntError:
        return absl::InvalidArgumentError(
            absl::StrCat(at, ": ", ScalarOpName(in.op), ": ", int_error_, iter));
      default:
        return absl::InternalError(at);
    }
  }

  const CompiledKernel& k_;
  std::vector<int64_t> vars_;
  std::vector<Val> vals_;
  std::vector<RedState> red_;
  Failure fail_;
  std::string int_error_;
};

}  // namespace

absl::Status RunCompiledKernel(const CompiledKernel& kernel) { return Runner(kernel).Run(); }

}  // namespace coil::schedule_internal
