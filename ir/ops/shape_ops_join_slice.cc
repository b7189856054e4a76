// Schemas and meta functions of the shape family's join and slice ops: joining (cat, stack),
// splitting (split, chunk), slicing (slice, select, narrow), padding (pad) and repetition
// (repeat, tile), the ops that put tensors together or cut them apart along dims. Views,
// reshapes and reorderings are in shape_ops.cc, which registers these.
#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "ir/op_registry.h"
#include "ir/ops/meta_util.h"
#include "ir/shape_assumption.h"

namespace coil {

void RegisterJoinSliceOps(OpRegistry& registry);

namespace {

using meta::Error;
using Types = absl::StatusOr<std::vector<TensorType>>;

OpSchema Schema(std::string name, std::vector<OpInput> inputs, std::vector<AttrSpec> attrs,
                MetaFn meta, std::string doc) {
  return meta::MakeSchema(std::move(name), std::move(inputs), std::move(attrs), OpClass::kShape,
                          std::move(meta), std::move(doc));
}

// Checks that two dims that must agree can: equal, or not provably different (then a shape
// assumption, checked at run time).
bool MayBeEqual(const SymExpr& a, const SymExpr& b) {
  return MayEqual(a, b, "the joined tensors agree outside the joined dim");
}

Types CatMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  absl::StatusOr<Device> device = meta::CommonDevice(in);
  if (!device.ok()) return device.status();
  absl::StatusOr<DType> dtype = meta::ResultType(in);
  if (!dtype.ok()) return dtype.status();
  for (size_t k = 0; k < in.size(); ++k) {
    if (in[k].rank() == 0) {
      return Error("zero-dimensional tensor (at position ", k, ") cannot be concatenated");
    }
    if (in[k].rank() != in[0].rank()) {
      return Error("Tensors must have same number of dimensions: got ", in[0].rank(), " and ",
                   in[k].rank(), " (coil does not skip legacy 1-D empty tensors)");
    }
  }
  absl::StatusOr<int64_t> dim = meta::NormalizeDim(meta::IntAttr(attrs, "dim"), in[0].rank());
  if (!dim.ok()) return dim.status();
  std::vector<SymExpr> shape = in[0].shape;
  shape[*dim] = 0;
  for (size_t k = 0; k < in.size(); ++k) {
    for (int64_t d = 0; d < in[0].rank(); ++d) {
      if (d == *dim) continue;
      if (!MayBeEqual(in[k].shape[d], in[0].shape[d])) {
        return Error("Sizes of tensors must match except in dimension ", *dim, ". Expected size ",
                     in[0].shape[d].ToString(), " but got size ", in[k].shape[d].ToString(),
                     " for tensor number ", k, " in the list.");
      }
    }
    shape[*dim] += in[k].shape[*dim];
  }
  return std::vector<TensorType>{meta::Out(*dtype, shape, *device)};
}

Types StackMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  absl::StatusOr<Device> device = meta::CommonDevice(in);
  if (!device.ok()) return device.status();
  absl::StatusOr<DType> dtype = meta::ResultType(in);
  if (!dtype.ok()) return dtype.status();
  for (size_t k = 0; k < in.size(); ++k) {
    bool same = in[k].rank() == in[0].rank();
    for (int64_t d = 0; same && d < in[0].rank(); ++d) {
      same = MayBeEqual(in[k].shape[d], in[0].shape[d]);
    }
    if (!same) {
      return Error("stack expects each tensor to be equal size, but got ",
                   meta::ShapeText(in[0].shape), " at entry 0 and ", meta::ShapeText(in[k].shape),
                   " at entry ", k);
    }
  }
  absl::StatusOr<int64_t> dim = meta::NormalizeDim(meta::IntAttr(attrs, "dim"), in[0].rank() + 1);
  if (!dim.ok()) return dim.status();
  std::vector<SymExpr> shape = in[0].shape;
  shape.insert(shape.begin() + *dim, SymExpr(static_cast<int64_t>(in.size())));
  return std::vector<TensorType>{meta::Out(*dtype, shape, *device)};
}

// Graph symbols are sizes >= 2 by convention (0 and 1 are specialized), so slice clamps are
// simplified under that assumption (x[1:] of s0 rows has s0 - 1); the kernel checks the
// actual bounds against the shape the graph computed.
SymRanges AssumedSizeRanges(std::initializer_list<SymExpr> exprs) {
  SymRanges ranges;
  for (const SymExpr& e : exprs) {
    for (const std::string& name : e.Symbols()) ranges[name] = SymRange{2, INT64_MAX};
  }
  return ranges;
}

// Outputs of splitting dim `dim` of `x` into pieces of `split_size` (the last may be smaller).
// The number of pieces must be static.
Types SplitBySize(const TensorType& x, int64_t dim, const SymExpr& split_size) {
  const SymExpr& size = x.shape[dim];
  if (split_size.is_constant() && split_size.constant() < 0) {
    return Error("split expects split_size be non-negative, but got split_size=",
                 split_size.constant());
  }
  std::vector<TensorType> out;
  if (meta::IsConst(split_size, 0)) {
    if (!meta::IsConst(size, 0)) {
      return Error("split_size can only be 0 if dimension size is 0, but got dimension size of ",
                   size.ToString());
    }
    out.push_back(meta::Like(x, x.shape));
    return out;
  }
  SymExpr n = SymExpr::FloorDiv(size + split_size - 1, split_size);
  if (!n.is_constant()) {
    SymRange r = Bounds(n, AssumedSizeRanges({n}));
    if (r.min == r.max) n = r.min;
  }
  if (!n.is_constant()) {
    return Error("the number of pieces, ", n.ToString(), ", of splitting dimension ", dim,
                 " of size ", size.ToString(), " by ", split_size.ToString(),
                 " is not static (coil needs a static number of outputs)");
  }
  int64_t pieces = std::max<int64_t>(n.constant(), 1);
  for (int64_t i = 0; i < pieces; ++i) {
    std::vector<SymExpr> shape = x.shape;
    shape[dim] = i + 1 < pieces ? split_size : size - split_size * (pieces - 1);
    out.push_back(meta::Like(x, shape));
  }
  return out;
}

Types SplitMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  if (x.rank() == 0) return Error("split expects at least a 1-dimensional tensor");
  absl::StatusOr<int64_t> dim = meta::NormalizeDim(meta::IntAttr(attrs, "dim"), x.rank());
  if (!dim.ok()) return dim.status();
  SymExpr split_size = meta::SymAttr(attrs, "split_size");
  SymList sizes = meta::SymsAttr(attrs, "sizes");
  bool has_size = !meta::IsConst(split_size, -1);
  if (has_size == !sizes.empty()) {
    return Error("give exactly one of split_size (", split_size.ToString(), ") and sizes ",
                 meta::ShapeText(sizes), " (split_size -1 and sizes [] mean not given)");
  }
  if (has_size) return SplitBySize(x, *dim, split_size);
  SymExpr total = 0;
  std::vector<TensorType> out;
  for (const SymExpr& s : sizes) {
    if (s.is_constant() && s.constant() < 0) {
      return Error(
          "split_with_sizes expects split_sizes have only non-negative entries, but got "
          "split_sizes=",
          meta::ShapeText(sizes));
    }
    total += s;
    std::vector<SymExpr> shape = x.shape;
    shape[*dim] = s;
    out.push_back(meta::Like(x, shape));
  }
  if (!MayEqual(total, x.shape[*dim], "split sizes sum to the split dimension")) {
    return Error("split_with_sizes expects split_sizes to sum exactly to ",
                 x.shape[*dim].ToString(), " (input tensor's size at dimension ", *dim,
                 "), but got split_sizes=", meta::ShapeText(sizes));
  }
  return out;
}

Types ChunkMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  if (x.rank() == 0) return Error("chunk expects at least a 1-dimensional tensor");
  int64_t chunks = meta::IntAttr(attrs, "chunks");
  if (chunks <= 0) return Error("chunk expects `chunks` to be greater than 0, got: ", chunks);
  absl::StatusOr<int64_t> dim = meta::NormalizeDim(meta::IntAttr(attrs, "dim"), x.rank());
  if (!dim.ok()) return dim.status();
  const SymExpr& size = x.shape[*dim];
  if (meta::IsConst(size, 0)) {
    // As torch: `chunks` empty pieces (split would give one).
    return std::vector<TensorType>(chunks, meta::Like(x, x.shape));
  }
  return SplitBySize(x, *dim, SymExpr::FloorDiv(size + chunks - 1, chunks));
}

// Python-style clamping of a slice bound into [0, size].
absl::StatusOr<SymExpr> ClampBound(const SymExpr& v, const SymExpr& size, absl::string_view what) {
  if (v.is_constant() && size.is_constant()) {
    int64_t c = v.constant(), n = size.constant();
    if (c < 0) c = std::max<int64_t>(c + n, 0);
    return SymExpr(std::min(c, n));
  }
  if (meta::IsConst(v, INT64_MAX)) return size;
  SymRanges ranges = AssumedSizeRanges({v, size});
  SymRange r = Bounds(v, ranges);
  if (r.min >= 0) return ProveLe(v, size, ranges) == Truth::kTrue ? v : SymExpr::Min(v, size);
  if (r.max < 0) {
    return ProveLe(-v, size, ranges) == Truth::kTrue ? size + v : SymExpr::Max(size + v, 0);
  }
  return Error("the sign of the symbolic slice ", what, " ", v.ToString(), " is unknown");
}

Types SliceMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  if (x.rank() == 0) return Error("slice() cannot be applied to a 0-dim tensor.");
  absl::StatusOr<int64_t> dim = meta::NormalizeDim(meta::IntAttr(attrs, "dim"), x.rank());
  if (!dim.ok()) return dim.status();
  int64_t step = meta::IntAttr(attrs, "step");
  if (step <= 0) return Error("slice step must be positive, got ", step);
  const SymExpr& size = x.shape[*dim];
  absl::StatusOr<SymExpr> start = ClampBound(meta::SymAttr(attrs, "start"), size, "start");
  if (!start.ok()) return start.status();
  absl::StatusOr<SymExpr> end = ClampBound(meta::SymAttr(attrs, "end"), size, "end");
  if (!end.ok()) return end.status();
  SymExpr stop = ProveLe(*start, *end, AssumedSizeRanges({*start, *end})) == Truth::kTrue
                     ? *end
                     : SymExpr::Max(*end, *start);
  std::vector<SymExpr> shape = x.shape;
  shape[*dim] = step == 1 ? stop - *start : SymExpr::FloorDiv(stop - *start + (step - 1), step);
  return std::vector<TensorType>{meta::Like(x, shape)};
}

Types SelectMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  if (x.rank() == 0) return Error("select() cannot be applied to a 0-dim tensor.");
  absl::StatusOr<int64_t> dim = meta::NormalizeDim(meta::IntAttr(attrs, "dim"), x.rank());
  if (!dim.ok()) return dim.status();
  SymExpr index = meta::SymAttr(attrs, "index");
  const SymExpr& size = x.shape[*dim];
  if (index.is_constant() && size.is_constant() &&
      (index.constant() < -size.constant() || index.constant() >= size.constant())) {
    return Error("select(): index ", index.constant(), " out of range for tensor of size ",
                 meta::ShapeText(x.shape), " at dimension ", *dim);
  }
  std::vector<SymExpr> shape = x.shape;
  shape.erase(shape.begin() + *dim);
  return std::vector<TensorType>{meta::Like(x, shape)};
}

Types NarrowMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  if (x.rank() == 0) return Error("narrow() cannot be applied to a 0-dim tensor.");
  absl::StatusOr<int64_t> dim = meta::NormalizeDim(meta::IntAttr(attrs, "dim"), x.rank());
  if (!dim.ok()) return dim.status();
  SymExpr start = meta::SymAttr(attrs, "start");
  SymExpr length = meta::SymAttr(attrs, "length");
  const SymExpr& size = x.shape[*dim];
  if (length.is_constant() && length.constant() < 0) {
    return Error("narrow(): length must be non-negative, got ", length.constant());
  }
  if (start.is_constant() && size.is_constant()) {
    int64_t s = start.constant(), n = size.constant();
    if (s < -n || s > n) {
      return Error("start out of range (expected to be in range of [", -n, ", ", n, "], but got ",
                   s, ")");
    }
    if (s < 0) s += n;
    if (length.is_constant() && s + length.constant() > n) {
      return Error("start (", s, ") + length (", length.constant(), ") exceeds dimension size (", n,
                   ").");
    }
  }
  std::vector<SymExpr> shape = x.shape;
  shape[*dim] = length;
  return std::vector<TensorType>{meta::Like(x, shape)};
}

Types PadMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  IntList pad = meta::IntsAttr(attrs, "pad");
  std::string mode = meta::StringAttr(attrs, "mode");
  if (mode != "constant" && mode != "reflect" && mode != "replicate" && mode != "circular") {
    return Error("unknown padding mode '", mode,
                 "' (expected constant, reflect, replicate or circular)");
  }
  if (pad.size() % 2 != 0) return Error("Padding length must be divisible by 2, got ", pad.size());
  if (static_cast<int64_t>(pad.size()) > 2 * x.rank()) {
    return Error(
        "Padding length should be less than or equal to two times the input dimension "
        "but got padding length ",
        pad.size(), " and input of dimension ", x.rank());
  }
  std::vector<SymExpr> shape = x.shape;
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    int64_t d = x.rank() - 1 - static_cast<int64_t>(i);
    int64_t lo = pad[2 * i], hi = pad[2 * i + 1];
    const SymExpr& size = x.shape[d];
    std::optional<int64_t> n = size.AsConstant();
    auto where = [&] {
      return absl::StrCat(" (padding (", lo, ", ", hi, ") at dimension ", d, " of input ",
                          meta::ShapeText(x.shape), ")");
    };
    if (mode == "reflect" || mode == "replicate") {
      if (lo < 0 || hi < 0) return Error(mode, " padding must be non-negative", where());
      if (mode == "reflect" && n && (lo >= *n || hi >= *n)) {
        return Error("Padding size should be less than the corresponding input dimension", where());
      }
      if (mode == "replicate" && n && *n == 0 && lo + hi > 0) {
        return Error("replicate padding of an empty dimension", where());
      }
    }
    if (mode == "circular" && n) {
      int64_t kept = *n - std::max<int64_t>(-lo, 0) - std::max<int64_t>(-hi, 0);
      if (lo > kept || hi > kept) {
        return Error("Padding value causes wrapping around more than once", where());
      }
    }
    shape[d] = size + (lo + hi);
    if (n && *n + lo + hi < 0) {
      return Error("The input size ", *n, ", plus negative padding ", lo, " and ", hi,
                   " resulted in a negative output size, which is invalid. Check dimension ", d,
                   " of your input.");
    }
  }
  return std::vector<TensorType>{meta::Like(x, shape)};
}

absl::StatusOr<std::vector<SymExpr>> RepeatShape(const TensorType& x, const SymList& repeats) {
  if (static_cast<int64_t>(repeats.size()) < x.rank()) {
    return Error(
        "Number of dimensions of repeat dims can not be smaller than number of "
        "dimensions of tensor");
  }
  std::vector<SymExpr> shape;
  int64_t lead = static_cast<int64_t>(repeats.size()) - x.rank();
  for (size_t i = 0; i < repeats.size(); ++i) {
    if (repeats[i].is_constant() && repeats[i].constant() < 0) {
      return Error("Trying to create tensor with negative dimension ", repeats[i].constant(),
                   ": repeats ", meta::ShapeText(repeats));
    }
    int64_t j = static_cast<int64_t>(i) - lead;
    shape.push_back(j < 0 ? repeats[i] : repeats[i] * x.shape[j]);
  }
  return shape;
}

Types RepeatMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  absl::StatusOr<std::vector<SymExpr>> shape = RepeatShape(in[0], meta::SymsAttr(attrs, "repeats"));
  if (!shape.ok()) return shape.status();
  return std::vector<TensorType>{meta::Like(in[0], *std::move(shape))};
}

Types TileMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  SymList dims = meta::SymsAttr(attrs, "dims");
  while (static_cast<int64_t>(dims.size()) < in[0].rank()) dims.insert(dims.begin(), SymExpr(1));
  absl::StatusOr<std::vector<SymExpr>> shape = RepeatShape(in[0], dims);
  if (!shape.ok()) return shape.status();
  return std::vector<TensorType>{meta::Like(in[0], *std::move(shape))};
}

}  // namespace

void RegisterJoinSliceOps(OpRegistry& registry) {
  registry.Register(Schema(
      "aten.cat", {{"tensors", false, true}}, {{"dim", AttrKind::kInt, int64_t{0}}}, CatMeta,
      "torch.cat with type promotion; coil does not skip legacy 1-D empty tensors (all inputs "
      "must have the same rank)"));
  registry.Register(Schema("aten.stack", {{"tensors", false, true}},
                           {{"dim", AttrKind::kInt, int64_t{0}}}, StackMeta,
                           "torch.stack with type promotion"));
  registry.Register(
      Schema("aten.split", {{"self"}},
             {{"split_size", AttrKind::kSym, SymExpr(-1)},
              {"sizes", AttrKind::kSyms, SymList{}},
              {"dim", AttrKind::kInt, int64_t{0}}},
             SplitMeta,
             "torch.split: give split_size (aten.split.Tensor) or sizes (aten.split_with_sizes); "
             "split_size -1 / sizes [] mean not given; the number of outputs must be static"));
  registry.Register(Schema(
      "aten.chunk", {{"self"}},
      {{"chunks", AttrKind::kInt, std::nullopt}, {"dim", AttrKind::kInt, int64_t{0}}}, ChunkMeta,
      "torch.chunk; the number of outputs must be static (may be fewer "
      "than chunks, as torch)"));
  registry.Register(Schema("aten.slice", {{"self"}},
                           {{"dim", AttrKind::kInt, int64_t{0}},
                            {"start", AttrKind::kSym, SymExpr(0)},
                            {"end", AttrKind::kSym, SymExpr(INT64_MAX)},
                            {"step", AttrKind::kInt, int64_t{1}}},
                           SliceMeta,
                           "aten.slice.Tensor: Python slicing with clamped bounds; end "
                           "INT64_MAX means to the end; step > 0; symbolic sizes are assumed "
                           ">= 2 when simplifying the clamps (the kernel checks)"));
  registry.Register(
      Schema("aten.select", {{"self"}},
             {{"dim", AttrKind::kInt, std::nullopt}, {"index", AttrKind::kSym, std::nullopt}},
             SelectMeta, "torch.select; a negative index wraps"));
  registry.Register(Schema("aten.narrow", {{"self"}},
                           {{"dim", AttrKind::kInt, std::nullopt},
                            {"start", AttrKind::kSym, std::nullopt},
                            {"length", AttrKind::kSym, std::nullopt}},
                           NarrowMeta, "torch.narrow; a negative start wraps"));
  registry.Register(Schema(
      "aten.pad", {{"self"}},
      {{"pad", AttrKind::kInts, std::nullopt},
       {"mode", AttrKind::kString, std::string("constant")},
       {"value", AttrKind::kFloat, 0.0}},
      PadMeta,
      "F.pad (pad lists the last dim first); value is used in constant mode only; coil accepts "
      "any rank for every mode (torch restricts non-constant modes to 2-5-D inputs) and rejects "
      "negative reflect/replicate padding; circular crops negative sides first, as torch"));
  registry.Register(Schema("aten.repeat", {{"self"}}, {{"repeats", AttrKind::kSyms, std::nullopt}},
                           RepeatMeta, "Tensor.repeat"));
  registry.Register(Schema("aten.tile", {{"self"}}, {{"dims", AttrKind::kSyms, std::nullopt}},
                           TileMeta, "torch.tile (dims padded with leading 1s)"));
}

}  // namespace coil
