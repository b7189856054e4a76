// Shape manipulation: Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Concat, Split, Slice,
// Expand, Tile, Pad, DepthToSpace, SpaceToDepth, Trilu. Shape operands (Reshape's shape,
// Slice's bounds, ...) must be known at import time (see known_value.h) and become symbolic
// attributes.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "capture/onnx/internal/op_table.h"

namespace coil::onnx_internal {
namespace {

constexpr int64_t kHuge = int64_t{1} << 40;

// ONNX Reshape's target: 0 copies the input dimension (unless allowzero), -1 is inferred.
absl::StatusOr<SymList> ReshapeTarget(OnnxNode& n, const std::vector<SymExpr>& in_shape,
                                      std::vector<SymExpr> target, bool allowzero) {
  int infer = -1;
  SymExpr known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == SymExpr(0) && !allowzero) {
      if (i >= in_shape.size()) return n.Invalid("a 0 in shape is past the input's rank");
      target[i] = in_shape[i];
    }
    if (target[i] == SymExpr(-1)) {
      if (infer >= 0) return n.Invalid("shape has more than one -1");
      infer = static_cast<int>(i);
      continue;
    }
    if (std::optional<int64_t> c = target[i].AsConstant(); c && *c < 0) {
      return n.Invalid(absl::StrCat("shape has negative dimension ", *c));
    }
    known *= target[i];
  }
  if (infer >= 0) {
    SymExpr numel = 1;
    for (const SymExpr& d : in_shape) numel *= d;
    if (known == SymExpr(0)) return n.Invalid("cannot infer -1 next to a 0 dimension");
    target[infer] = SymExpr::FloorDiv(numel, known);
  }
  return target;
}

absl::Status ImportReshape(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  std::vector<SymExpr> target;
  if (n.opset() < 5) {
    for (int64_t d : n.Ints("shape")) target.push_back(d);
  } else {
    COIL_ASSIGN_OR_RETURN(target, n.KnownSyms(1, "shape"));
  }
  COIL_ASSIGN_OR_RETURN(SymList shape,
                        ReshapeTarget(n, x->type().shape, target, n.Int("allowzero", 0) != 0));
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.reshape", {x}, {{"shape", shape}}));
  return n.SetOutput(0, y);
}

absl::Status ImportFlatten(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  const TensorType& t = x->type();
  int64_t axis = n.Int("axis", 1);
  if (axis < -t.rank() || axis > t.rank()) return n.Invalid(absl::StrCat("axis ", axis, " is out of range"));
  if (axis < 0) axis += t.rank();
  SymExpr outer = 1, inner = 1;
  for (int64_t d = 0; d < t.rank(); ++d) (d < axis ? outer : inner) *= t.shape[d];
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.reshape", {x}, {{"shape", SymList{outer, inner}}}));
  return n.SetOutput(0, y);
}

absl::Status ImportTranspose(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  const int64_t r = x->type().rank();
  IntList perm = n.Ints("perm");
  if (perm.empty()) {
    for (int64_t d = r - 1; d >= 0; --d) perm.push_back(d);
  }
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.permute", {x}, {{"dims", perm}}));
  return n.SetOutput(0, y);
}

// Axes of Squeeze/Unsqueeze: an attribute before opset 13, an input from 13.
absl::StatusOr<std::vector<int64_t>> SqueezeAxes(OnnxNode& n) {
  if (n.opset() < 13) return n.Ints("axes");
  if (!n.has_input(1)) return std::vector<int64_t>();
  return n.KnownInts(1, "axes");
}

absl::Status ImportSqueeze(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  const TensorType& t = x->type();
  COIL_ASSIGN_OR_RETURN(std::vector<int64_t> axes, SqueezeAxes(n));
  IntList dims;
  for (int64_t a : axes) {
    COIL_ASSIGN_OR_RETURN(int64_t d, n.Axis(a, t.rank()));
    if (t.shape[d] != SymExpr(1)) {
      return n.Invalid(absl::StrCat("cannot squeeze dimension ", d, " of size ", t.shape[d].ToString()));
    }
    dims.push_back(d);
  }
  if (axes.empty()) {
    for (int64_t d = 0; d < t.rank(); ++d) {
      if (t.shape[d] == SymExpr(1)) dims.push_back(d);
    }
  }
  Value* y;
  if (dims.empty()) {
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.clone", {x}));
  } else {
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.squeeze", {x}, {{"dims", dims}}));
  }
  return n.SetOutput(0, y);
}

absl::Status ImportUnsqueeze(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  COIL_ASSIGN_OR_RETURN(std::vector<int64_t> axes, SqueezeAxes(n));
  const int64_t out_rank = x->type().rank() + static_cast<int64_t>(axes.size());
  std::vector<int64_t> dims;
  for (int64_t a : axes) {
    COIL_ASSIGN_OR_RETURN(int64_t d, n.Axis(a, out_rank));
    dims.push_back(d);
  }
  std::sort(dims.begin(), dims.end());
  if (std::adjacent_find(dims.begin(), dims.end()) != dims.end()) return n.Invalid("axes must not repeat");
  Value* y = x;
  for (int64_t d : dims) {
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.unsqueeze", {y}, {{"dim", d}}));
  }
  if (y == x) {
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.clone", {x}));
  }
  return n.SetOutput(0, y);
}

absl::Status ImportConcat(OnnxNode& n) {
  std::vector<Value*> parts;
  for (int i = 0; i < n.num_inputs(); ++i) {
    COIL_ASSIGN_OR_RETURN(Value* v, n.In(i));
    parts.push_back(v);
  }
  if (parts.empty()) return n.Invalid("needs at least one input");
  COIL_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", 0), parts[0]->type().rank()));
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.cat", parts, {{"dim", axis}}));
  return n.SetOutput(0, y);
}

absl::Status ImportSplit(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  const TensorType& t = x->type();
  COIL_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", 0), t.rank()));
  std::vector<SymExpr> sizes;
  if (n.opset() < 13) {
    for (int64_t s : n.Ints("split")) sizes.push_back(s);
  } else if (n.has_input(1)) {
    COIL_ASSIGN_OR_RETURN(sizes, n.KnownSyms(1, "split"));
  }
  if (sizes.empty()) {
    const int64_t parts = n.HasAttr("num_outputs") ? n.Int("num_outputs", 1) : n.num_outputs();
    if (parts <= 0) return n.Invalid("needs at least one output");
    const SymExpr& dim = t.shape[axis];
    if (std::optional<int64_t> c = dim.AsConstant()) {
      // Opset 18: the last chunk may be smaller; before, the split must be even.
      int64_t chunk = (*c + parts - 1) / parts;
      if (n.opset() < 18 && *c % parts != 0) {
        return n.Invalid(absl::StrCat("dimension ", *c, " does not split evenly into ", parts));
      }
      int64_t left = *c;
      for (int64_t i = 0; i < parts; ++i) {
        sizes.push_back(std::min(chunk, left));
        left -= std::min(chunk, left);
      }
    } else {
      for (int64_t i = 0; i < parts; ++i) sizes.push_back(SymExpr::FloorDiv(dim, parts));
    }
  }
  if (static_cast<int>(sizes.size()) != n.num_outputs()) {
    return n.Invalid(absl::StrCat("split has ", sizes.size(), " parts for ", n.num_outputs(), " outputs"));
  }
  COIL_ASSIGN_OR_RETURN(std::vector<Value*> ys,
                        n.OpMulti("aten.split", {x}, {{"sizes", SymList(sizes)}, {"dim", axis}}));
  for (size_t i = 0; i < ys.size(); ++i) COIL_RETURN_IF_ERROR(n.SetOutput(static_cast<int>(i), ys[i]));
  return absl::OkStatus();
}

struct SliceSpec {
  std::vector<SymExpr> starts, ends;
  std::vector<int64_t> axes, steps;
};

absl::StatusOr<SliceSpec> GetSliceSpec(OnnxNode& n, int64_t rank) {
  SliceSpec s;
  std::vector<int64_t> axes;
  if (n.opset() < 10) {
    for (int64_t v : n.Ints("starts")) s.starts.push_back(v);
    for (int64_t v : n.Ints("ends")) s.ends.push_back(v);
    axes = n.Ints("axes");
  } else {
    COIL_ASSIGN_OR_RETURN(s.starts, n.KnownSyms(1, "starts"));
    COIL_ASSIGN_OR_RETURN(s.ends, n.KnownSyms(2, "ends"));
    if (n.has_input(3)) {
      COIL_ASSIGN_OR_RETURN(axes, n.KnownInts(3, "axes"));
    }
    if (n.has_input(4)) {
      COIL_ASSIGN_OR_RETURN(s.steps, n.KnownInts(4, "steps"));
    }
  }
  if (s.starts.size() != s.ends.size()) return n.Invalid("starts and ends differ in length");
  if (axes.empty()) {
    for (size_t i = 0; i < s.starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (s.steps.empty()) s.steps.assign(s.starts.size(), 1);
  if (axes.size() != s.starts.size() || s.steps.size() != s.starts.size()) {
    return n.Invalid("starts, ends, axes and steps differ in length");
  }
  for (int64_t a : axes) {
    COIL_ASSIGN_OR_RETURN(int64_t d, n.Axis(a, rank));
    s.axes.push_back(d);
  }
  for (int64_t& st : s.steps) {
    if (st == 0) return n.Invalid("slice step must not be 0");
    st = std::max(-kHuge, std::min(st, kHuge));
  }
  return s;
}

// A bound past the int range of a symbolic size, kept representable.
SymExpr ClampBound(const SymExpr& b) {
  std::optional<int64_t> c = b.AsConstant();
  if (!c) return b;
  if (*c >= kHuge) return SymExpr(INT64_MAX);
  if (*c <= -kHuge) return SymExpr(-kHuge);
  return b;
}

absl::Status ImportSlice(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  COIL_ASSIGN_OR_RETURN(SliceSpec spec, GetSliceSpec(n, x->type().rank()));
  Value* y = x;
  for (size_t i = 0; i < spec.axes.size(); ++i) {
    const int64_t axis = spec.axes[i], step = spec.steps[i];
    const SymExpr dim = y->type().shape[axis];
    std::optional<int64_t> d = dim.AsConstant();
    std::optional<int64_t> st = spec.starts[i].AsConstant(), en = spec.ends[i].AsConstant();
    if (d && st && en) {
      StaticSlice s = NormalizeSlice(*d, *st, *en, step);
      if (step < 0 && s.count > 0) {
        COIL_ASSIGN_OR_RETURN(y, n.Op("aten.flip", {y}, {{"dims", IntList{axis}}}));
        s.start = *d - 1 - s.start;
        s.step = -step;
      }
      const int64_t end = s.count == 0 ? s.start : s.start + (s.count - 1) * s.step + 1;
      COIL_ASSIGN_OR_RETURN(y, n.Op("aten.slice", {y}, {{"dim", axis}, {"start", SymExpr(s.start)},
                                                      {"end", SymExpr(end)}, {"step", std::abs(s.step)}}));
      continue;
    }
    if (step < 0) return n.Unsupported("a negative slice step on a symbolic dimension or bound");
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.slice", {y}, {{"dim", axis}, {"start", ClampBound(spec.starts[i])},
                                                    {"end", ClampBound(spec.ends[i])}, {"step", step}}));
  }
  if (y == x) {
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.clone", {x}));
  }
  return n.SetOutput(0, y);
}

// Bidirectional (numpy) broadcast of a symbolic shape with Expand's target.
absl::StatusOr<SymList> ExpandShape(OnnxNode& n, const SymList& in, const SymList& target) {
  const size_t r = std::max(in.size(), target.size());
  SymList out(r);
  for (size_t i = 0; i < r; ++i) {
    SymExpr a = i < r - in.size() ? SymExpr(1) : in[i - (r - in.size())];
    SymExpr b = i < r - target.size() ? SymExpr(1) : target[i - (r - target.size())];
    std::optional<int64_t> ca = a.AsConstant(), cb = b.AsConstant();
    if (a == b || cb == 1) {
      out[i] = a;
    } else if (ca == 1) {
      out[i] = b;
    } else if (ca && cb) {
      return n.Invalid(absl::StrCat("cannot expand dimension of size ", *ca, " to ", *cb));
    } else {
      out[i] = cb ? b : (ca ? a : b);
    }
  }
  return out;
}

absl::Status ImportExpand(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  COIL_ASSIGN_OR_RETURN(std::vector<SymExpr> target, n.KnownSyms(1, "shape"));
  COIL_ASSIGN_OR_RETURN(SymList shape, ExpandShape(n, x->type().shape, target));
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.expand", {x}, {{"size", shape}}));
  return n.SetOutput(0, y);
}

absl::Status ImportTile(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  COIL_ASSIGN_OR_RETURN(std::vector<SymExpr> repeats, n.KnownSyms(1, "repeats"));
  if (static_cast<int64_t>(repeats.size()) != x->type().rank()) {
    return n.Invalid("repeats must have one entry per input dimension");
  }
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.tile", {x}, {{"dims", SymList(repeats)}}));
  return n.SetOutput(0, y);
}

// Pads one side of axis d by a symbolic amount in constant mode: a block of `value` sized by
// the amount is concatenated (amount >= 0), or the side is cropped (amount <= 0). An amount
// whose sign the symbols' ranges do not decide is Unsupported.
absl::StatusOr<Value*> PadSymbolicSide(OnnxNode& n, Value* y, int64_t d, const SymExpr& amount,
                                       bool at_begin, double value) {
  const SymRange r = Bounds(amount, n.ctx().Ranges());
  if (r.min >= 0) {
    SymList shape = y->type().shape;
    shape[d] = amount;
    COIL_ASSIGN_OR_RETURN(Value* fill, n.Op("aten.full", {}, {{"size", shape}, {"value", value},
                                                              {"dtype", y->type().dtype},
                                                              {"has_dtype", true}}));
    std::vector<Value*> parts = at_begin ? std::vector<Value*>{fill, y} : std::vector<Value*>{y, fill};
    return n.Op("aten.cat", parts, {{"dim", d}});
  }
  if (r.max <= 0) {
    const SymExpr size = y->type().shape[d];
    AttrMap attrs = {{"dim", d}, {"step", int64_t{1}}};
    attrs["start"] = at_begin ? -amount : SymExpr(0);
    attrs["end"] = at_begin ? SymExpr(INT64_MAX) : size + amount;
    return n.Op("aten.slice", {y}, std::move(attrs));
  }
  return n.Unsupported(absl::StrCat("pad amount ", amount.ToString(), " on axis ", d,
                                    " may be negative or positive (a symbolic pad must have a "
                                    "known sign)"));
}

absl::Status ImportPad(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  const int64_t r = x->type().rank();
  std::string mode = n.String("mode", "constant");
  std::vector<SymExpr> pads;
  std::vector<int64_t> axes;
  double value = 0;
  if (n.opset() < 11) {
    for (int64_t p : n.Ints("pads")) pads.push_back(p);
    value = n.Float("value", 0.0);
  } else {
    COIL_ASSIGN_OR_RETURN(pads, n.KnownSyms(1, "pads"));
    if (n.has_input(2)) {
      COIL_ASSIGN_OR_RETURN(value, n.KnownScalar(2, "constant_value"));
    }
    if (n.has_input(3)) {
      COIL_ASSIGN_OR_RETURN(axes, n.KnownInts(3, "axes"));
    }
  }
  if (axes.empty()) {
    for (int64_t d = 0; d < r; ++d) axes.push_back(d);
  }
  if (pads.size() != 2 * axes.size()) return n.Invalid("pads must have two entries per axis");
  std::vector<SymExpr> begin(r, 0), end(r, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    COIL_ASSIGN_OR_RETURN(int64_t d, n.Axis(axes[i], r));
    begin[d] = pads[i];
    end[d] = pads[i + axes.size()];
  }
  std::string aten_mode;
  if (mode == "constant") {
    aten_mode = "constant";
  } else if (mode == "reflect") {
    aten_mode = "reflect";
  } else if (mode == "edge") {
    aten_mode = "replicate";
  } else if (mode == "wrap") {
    aten_mode = "circular";
  } else {
    return n.UnsupportedAttr("mode", mode);
  }
  // Constant amounts go to one aten.pad; symbolic ones (computed from symbolic shapes) are
  // padded side by side after it.
  IntList aten_pad;
  bool any_static = false, any_symbolic = false;
  for (int64_t d = r - 1; d >= 0; --d) {
    for (const SymExpr* p : {&begin[d], &end[d]}) {
      std::optional<int64_t> c = p->AsConstant();
      aten_pad.push_back(c.value_or(0));
      any_static = any_static || (c && *c != 0);
      if (!c) {
        any_symbolic = true;
        if (aten_mode != "constant") {
          return n.Unsupported(absl::StrCat("symbolic pads (", p->ToString(), ") in mode ", mode,
                                            " (only constant mode takes pads computed from "
                                            "symbolic shapes)"));
        }
      }
    }
  }
  Value* y = x;
  if (any_static || !any_symbolic) {
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.pad", {x}, {{"pad", aten_pad}, {"mode", aten_mode},
                                                   {"value", value}}));
  }
  for (int64_t d = 0; d < r; ++d) {
    if (!begin[d].is_constant()) {
      COIL_ASSIGN_OR_RETURN(y, PadSymbolicSide(n, y, d, begin[d], /*at_begin=*/true, value));
    }
    if (!end[d].is_constant()) {
      COIL_ASSIGN_OR_RETURN(y, PadSymbolicSide(n, y, d, end[d], /*at_begin=*/false, value));
    }
  }
  return n.SetOutput(0, y);
}

// DepthToSpace (DCR or CRD) and SpaceToDepth as reshape -> permute -> reshape.
absl::Status ImportDepthSpace(OnnxNode& n, bool to_space) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  const TensorType& t = x->type();
  if (t.rank() != 4) return n.Invalid("input must be 4-D");
  const int64_t b = n.Int("blocksize", 0);
  if (b <= 0) return n.Invalid("blocksize must be positive");
  const SymExpr N = t.shape[0], C = t.shape[1], H = t.shape[2], W = t.shape[3];
  Value* y;
  if (to_space) {
    const std::string mode = n.String("mode", "DCR");
    if (mode == "CRD") {
      COIL_ASSIGN_OR_RETURN(y, n.Op("aten.pixel_shuffle", {x}, {{"upscale_factor", b}}));
      return n.SetOutput(0, y);
    }
    if (mode != "DCR") return n.UnsupportedAttr("mode", mode);
    const SymExpr c = SymExpr::FloorDiv(C, b * b);
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.reshape", {x}, {{"shape", SymList{N, b, b, c, H, W}}}));
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.permute", {y}, {{"dims", IntList{0, 3, 4, 1, 5, 2}}}));
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.reshape", {y}, {{"shape", SymList{N, c, H * b, W * b}}}));
  } else {
    const SymExpr h = SymExpr::FloorDiv(H, b), w = SymExpr::FloorDiv(W, b);
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.reshape", {x}, {{"shape", SymList{N, C, h, b, w, b}}}));
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.permute", {y}, {{"dims", IntList{0, 3, 5, 1, 2, 4}}}));
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.reshape", {y}, {{"shape", SymList{N, C * (b * b), h, w}}}));
  }
  return n.SetOutput(0, y);
}

absl::Status ImportTrilu(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  const bool upper = n.Int("upper", 1) != 0;
  int64_t k = 0;
  if (n.has_input(1) && n.Known(1) == nullptr) {
    // k known only at run time: keep where (col - row >= k) (upper) or <= k (lower).
    const TensorType& t = x->type();
    if (t.rank() < 2) return n.Invalid("input must have at least 2 dimensions");
    COIL_ASSIGN_OR_RETURN(Value* kv, n.In(1));
    COIL_ASSIGN_OR_RETURN(kv, n.Cast(kv, proto::INT64));
    COIL_ASSIGN_OR_RETURN(kv, n.Op("aten.reshape", {kv}, {{"shape", SymList{}}}));
    AttrMap range = {{"dtype", proto::INT64}, {"has_dtype", true}};
    range["end"] = t.shape[t.rank() - 2];
    COIL_ASSIGN_OR_RETURN(Value* rows, n.Op("aten.arange", {}, range));
    COIL_ASSIGN_OR_RETURN(rows, n.Op("aten.unsqueeze", {rows}, {{"dim", int64_t{1}}}));
    range["end"] = t.shape[t.rank() - 1];
    COIL_ASSIGN_OR_RETURN(Value* cols, n.Op("aten.arange", {}, range));
    COIL_ASSIGN_OR_RETURN(Value* diag, n.Op("aten.sub", {cols, rows}));
    COIL_ASSIGN_OR_RETURN(Value* keep, n.Op(upper ? "aten.ge" : "aten.le", {diag, kv}));
    COIL_ASSIGN_OR_RETURN(Value* zero, n.Op("aten.zeros_like", {x}, {{"dtype", t.dtype}, {"has_dtype", true}}));
    COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.where", {keep, x, zero}));
    return n.SetOutput(0, y);
  }
  if (n.has_input(1)) {
    COIL_ASSIGN_OR_RETURN(double kd, n.KnownScalar(1, "k"));
    k = static_cast<int64_t>(kd);
  }
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op(upper ? "aten.triu" : "aten.tril", {x}, {{"diagonal", k}}));
  return n.SetOutput(0, y);
}

}  // namespace

void RegisterShapeOps(OpTable& t) {
  t["Reshape"].emit = ImportReshape;
  t["Flatten"].emit = ImportFlatten;
  t["Transpose"].emit = ImportTranspose;
  t["Squeeze"].emit = ImportSqueeze;
  t["Unsqueeze"].emit = ImportUnsqueeze;
  t["Concat"].emit = ImportConcat;
  t["Split"].emit = ImportSplit;
  t["Slice"].emit = ImportSlice;
  t["Expand"].emit = ImportExpand;
  t["Tile"].emit = ImportTile;
  t["Pad"].emit = ImportPad;
  t["DepthToSpace"].emit = [](OnnxNode& n) { return ImportDepthSpace(n, true); };
  t["SpaceToDepth"].emit = [](OnnxNode& n) { return ImportDepthSpace(n, false); };
  t["Trilu"].emit = ImportTrilu;
}

}  // namespace coil::onnx_internal
