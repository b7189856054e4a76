// Reductions (Reduce*, ArgMax/ArgMin), softmax family and CumSum.
//
// Axes moved from an attribute to an input in opset 13 (ReduceSum) and 18 (the others);
// before opset 13 Softmax, LogSoftmax and Hardmax coerce the input to 2-D at `axis`.
#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "capture/onnx/internal/op_table.h"

namespace coil::onnx_internal {
namespace {

enum class Reduce { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

struct ReduceAxes {
  bool noop = false;           // empty axes with noop_with_empty_axes: the identity
  std::vector<int64_t> dims;   // sorted, non-negative
};

absl::StatusOr<ReduceAxes> GetAxes(OnnxNode& n, int64_t rank, int64_t input_opset) {
  std::vector<int64_t> axes;
  if (n.opset() >= input_opset) {
    if (n.has_input(1)) {
      COIL_ASSIGN_OR_RETURN(axes, n.KnownInts(1, "axes"));
    }
  } else {
    axes = n.Ints("axes");
  }
  ReduceAxes out;
  if (axes.empty()) {
    if (n.opset() >= input_opset && n.Int("noop_with_empty_axes", 0) != 0) {
      out.noop = true;
      return out;
    }
    for (int64_t d = 0; d < rank; ++d) out.dims.push_back(d);
    return out;
  }
  for (int64_t a : axes) {
    COIL_ASSIGN_OR_RETURN(int64_t d, n.Axis(a, rank, "axis"));
    out.dims.push_back(d);
  }
  std::sort(out.dims.begin(), out.dims.end());
  if (std::adjacent_find(out.dims.begin(), out.dims.end()) != out.dims.end()) {
    return n.Invalid("axes must not repeat");
  }
  return out;
}

// The value a reduction over no elements gives.
double EmptyValue(Reduce r) {
  const double inf = std::numeric_limits<double>::infinity();
  switch (r) {
    case Reduce::kMax: return -inf;
    case Reduce::kMin: return inf;
    case Reduce::kProd: return 1;
    case Reduce::kMean: return NAN;
    case Reduce::kLogSum:
    case Reduce::kLogSumExp: return -inf;
    default: return 0;
  }
}

OpHandler ImportReduce(Reduce r, int64_t input_opset) {
  return [r, input_opset](OnnxNode& n) -> absl::Status {
    COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
    const TensorType& xt = x->type();
    const DType dtype = xt.dtype;
    COIL_ASSIGN_OR_RETURN(ReduceAxes axes, GetAxes(n, xt.rank(), input_opset));
    const bool keep = n.Int("keepdims", 1) != 0;
    if (axes.noop) {
      COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.clone", {x}));
      return n.SetOutput(0, y);
    }
    const IntList dims = axes.dims;
    bool empty = false;
    for (int64_t d : dims) empty = empty || xt.shape[d] == SymExpr(0);
    if (empty) {
      SymList shape;
      for (int64_t d = 0; d < xt.rank(); ++d) {
        bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
        if (!reduced) shape.push_back(xt.shape[d]);
        if (reduced && keep) shape.push_back(1);
      }
      COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.full", {}, {{"size", shape}, {"value", EmptyValue(r)},
                                                            {"dtype", dtype}, {"has_dtype", true}}));
      return n.SetOutput(0, y);
    }
    AttrMap attrs = {{"dim", dims}, {"keepdim", keep}};
    Value* y = nullptr;
    switch (r) {
      case Reduce::kSum: {
        COIL_ASSIGN_OR_RETURN(y, n.Op("aten.sum", {x}, attrs));
        break;
      }
      case Reduce::kMean: {
        if (IsFloating(dtype)) {
          COIL_ASSIGN_OR_RETURN(y, n.Op("aten.mean", {x}, attrs));
        } else {
          COIL_ASSIGN_OR_RETURN(Value* xf, n.Cast(x, proto::FLOAT64));
          COIL_ASSIGN_OR_RETURN(y, n.Op("aten.mean", {xf}, attrs));
        }
        break;
      }
      case Reduce::kMax: {
        COIL_ASSIGN_OR_RETURN(y, n.Op("aten.amax", {x}, attrs));
        break;
      }
      case Reduce::kMin: {
        COIL_ASSIGN_OR_RETURN(y, n.Op("aten.amin", {x}, attrs));
        break;
      }
      case Reduce::kProd: {
        // aten.prod reduces one dim at a time.
        y = x;
        for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
          COIL_ASSIGN_OR_RETURN(y, n.Op("aten.prod", {y}, {{"dim", IntList{*it}}, {"keepdim", true}}));
        }
        if (!keep && !dims.empty()) {
          COIL_ASSIGN_OR_RETURN(y, n.Op("aten.squeeze", {y}, {{"dims", dims}}));
        }
        if (dims.empty()) {
          COIL_ASSIGN_OR_RETURN(y, n.Op("aten.clone", {y}));
        }
        break;
      }
      case Reduce::kL1: {
        COIL_ASSIGN_OR_RETURN(Value* a, n.Op("aten.abs", {x}));
        COIL_ASSIGN_OR_RETURN(y, n.Op("aten.sum", {a}, attrs));
        break;
      }
      case Reduce::kL2:
      case Reduce::kSumSquare: {
        COIL_ASSIGN_OR_RETURN(Value* sq, n.Op("aten.mul", {x, x}));
        COIL_ASSIGN_OR_RETURN(y, n.Op("aten.sum", {sq}, attrs));
        if (r == Reduce::kL2) {
          COIL_ASSIGN_OR_RETURN(y, n.Op("aten.sqrt", {y}));
        }
        break;
      }
      case Reduce::kLogSum: {
        COIL_ASSIGN_OR_RETURN(y, n.Op("aten.sum", {x}, attrs));
        COIL_ASSIGN_OR_RETURN(y, n.Op("aten.log", {y}));
        break;
      }
      case Reduce::kLogSumExp: {
        if (dims.empty()) {
          COIL_ASSIGN_OR_RETURN(y, n.Op("aten.clone", {x}));
        } else {
          COIL_ASSIGN_OR_RETURN(y, n.Op("aten.logsumexp", {x}, attrs));
        }
        break;
      }
    }
    COIL_ASSIGN_OR_RETURN(y, n.Cast(y, dtype));
    return n.SetOutput(0, y);
  };
}

OpHandler ImportArg(bool max) {
  return [max](OnnxNode& n) -> absl::Status {
    COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
    const TensorType& xt = x->type();
    COIL_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", 0), std::max<int64_t>(xt.rank(), 1)));
    const bool keep = n.Int("keepdims", 1) != 0;
    const bool last = n.Int("select_last_index", 0) != 0;
    Value* src = x;
    if (last) {
      if (!xt.shape[axis].is_constant()) return n.UnsupportedAttr("select_last_index", "1 on a symbolic dimension");
      COIL_ASSIGN_OR_RETURN(src, n.Op("aten.flip", {x}, {{"dims", IntList{axis}}}));
    }
    COIL_ASSIGN_OR_RETURN(Value* y, n.Op(max ? "aten.argmax" : "aten.argmin", {src},
                                         {{"dim", IntList{axis}}, {"keepdim", keep}}));
    if (last) {
      // index in the flipped tensor i -> size - 1 - i
      Value* last_index = n.Scalar(proto::INT64, static_cast<double>(xt.shape[axis].constant() - 1));
      COIL_ASSIGN_OR_RETURN(y, n.Op("aten.sub", {last_index, y}));
    }
    return n.SetOutput(0, y);
  };
}

// Softmax, LogSoftmax, Hardmax.
OpHandler ImportSoftmax(absl::string_view kind) {
  std::string k(kind);
  return [k](OnnxNode& n) -> absl::Status {
    COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
    const TensorType xt = x->type();
    const int64_t rank = std::max<int64_t>(xt.rank(), 1);
    const bool coerce = n.opset() < 13;
    COIL_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", coerce ? 1 : -1), rank));
    Value* in = x;
    int64_t dim = axis;
    if (coerce && xt.rank() > 0) {
      SymExpr outer = 1, inner = 1;
      for (int64_t d = 0; d < xt.rank(); ++d) (d < axis ? outer : inner) *= xt.shape[d];
      COIL_ASSIGN_OR_RETURN(in, n.Op("aten.reshape", {x}, {{"shape", SymList{outer, inner}}}));
      dim = 1;
    }
    Value* y;
    if (k == "Hardmax") {
      if (!in->type().shape[dim].is_constant()) return n.Unsupported("Hardmax over a symbolic dimension");
      COIL_ASSIGN_OR_RETURN(Value* idx, n.Op("aten.argmax", {in}, {{"dim", IntList{dim}}, {"keepdim", false}}));
      COIL_ASSIGN_OR_RETURN(y, n.Op("aten.one_hot", {idx},
                                    {{"num_classes", in->type().shape[dim].constant()}}));
      const int64_t r = in->type().rank();
      if (dim != r - 1) {
        COIL_ASSIGN_OR_RETURN(y, n.Op("aten.movedim", {y}, {{"source", IntList{r - 1}},
                                                           {"destination", IntList{dim}}}));
      }
      COIL_ASSIGN_OR_RETURN(y, n.Cast(y, xt.dtype));
    } else {
      COIL_ASSIGN_OR_RETURN(y, n.Op(k == "Softmax" ? "aten.softmax" : "aten.log_softmax", {in},
                                    {{"dim", dim}}));
    }
    if (in != x) {
      COIL_ASSIGN_OR_RETURN(y, n.Op("aten.reshape", {y}, {{"shape", SymList(xt.shape)}}));
    }
    return n.SetOutput(0, y);
  };
}

absl::Status ImportCumSum(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  COIL_ASSIGN_OR_RETURN(std::vector<int64_t> axis_list, n.KnownInts(1, "axis"));
  if (axis_list.size() != 1) return n.Invalid("axis must be a scalar");
  COIL_ASSIGN_OR_RETURN(int64_t axis, n.Axis(axis_list[0], x->type().rank()));
  const bool exclusive = n.Int("exclusive", 0) != 0, reverse = n.Int("reverse", 0) != 0;
  Value* in = x;
  if (reverse) {
    COIL_ASSIGN_OR_RETURN(in, n.Op("aten.flip", {x}, {{"dims", IntList{axis}}}));
  }
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.cumsum", {in}, {{"dim", axis}}));
  COIL_ASSIGN_OR_RETURN(y, n.Cast(y, x->type().dtype));
  if (exclusive) {
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.sub", {y, in}));
  }
  if (reverse) {
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.flip", {y}, {{"dims", IntList{axis}}}));
  }
  return n.SetOutput(0, y);
}

}  // namespace

void RegisterReductionOps(OpTable& t) {
  t["ReduceSum"].emit = ImportReduce(Reduce::kSum, 13);
  t["ReduceMean"].emit = ImportReduce(Reduce::kMean, 18);
  t["ReduceMax"].emit = ImportReduce(Reduce::kMax, 18);
  t["ReduceMin"].emit = ImportReduce(Reduce::kMin, 18);
  t["ReduceProd"].emit = ImportReduce(Reduce::kProd, 18);
  t["ReduceL1"].emit = ImportReduce(Reduce::kL1, 18);
  t["ReduceL2"].emit = ImportReduce(Reduce::kL2, 18);
  t["ReduceLogSum"].emit = ImportReduce(Reduce::kLogSum, 18);
  t["ReduceLogSumExp"].emit = ImportReduce(Reduce::kLogSumExp, 18);
  t["ReduceSumSquare"].emit = ImportReduce(Reduce::kSumSquare, 18);
  t["ArgMax"].emit = ImportArg(true);
  t["ArgMin"].emit = ImportArg(false);
  t["Softmax"].emit = ImportSoftmax("Softmax");
  t["LogSoftmax"].emit = ImportSoftmax("LogSoftmax");
  t["Hardmax"].emit = ImportSoftmax("Hardmax");
  t["CumSum"].emit = ImportCumSum;
}

}  // namespace coil::onnx_internal
