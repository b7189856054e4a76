// Derivative rules of views, reshapes, reorderings, concatenation/splitting, padding and
// repetition (ir/ops/shape_ops.cc, shape_ops_join_slice.cc). Views of a slice or an element
// go back through the scatter ops (slice_scatter, select_scatter), which keep symbolic
// bounds.
#include <cstdint>
#include <vector>

#include "autograd/derivative_registry.h"
#include "autograd/rules/register.h"

namespace coil::autograd {
namespace {

using namespace coil::prims;  // NOLINT: the rule language

int64_t NormDim(int64_t d, int64_t rank) { return d < 0 ? d + rank : d; }

// repeat backward: g [r0 s0, r1 s1, ...] viewed as [r0, s0, r1, s1, ...], summed over the r's.
Val RepeatGrad(Val g, const Val& x, const SymList& repeats) {
  int64_t n = static_cast<int64_t>(repeats.size());
  SymList sizes(n - x.rank(), SymExpr(1));
  sizes.insert(sizes.end(), x.shape().begin(), x.shape().end());
  SymList split;
  IntList rdims;
  for (int64_t i = 0; i < n; ++i) {
    rdims.push_back(2 * i);
    split.push_back(repeats[i]);
    split.push_back(sizes[i]);
  }
  return Reshape(Sum(Reshape(g, split), rdims), x.shape());
}

// g into a zero tensor of x's shape through `op` (aten.slice_scatter / aten.select_scatter).
Val ScatterInto(const GradCall& c, const char* op, AttrMap attrs) {
  Val g = c.grad();
  return c.e().Op1(op, {FullLike(c.in(0), 0.0, g.dtype()), g}, std::move(attrs));
}

}  // namespace

void RegisterShapeRules(DerivativeRegistry& r) {
  // Reshapes (same elements, new shape): reshape(g, x.shape)
  for (const char* op : {"aten.reshape", "aten.view", "aten.flatten", "aten.unflatten",
                         "aten.squeeze", "aten.unsqueeze"}) {
    r.Add(op, [](const GradCall& c) -> std::vector<Val> {
      return {Reshape(c.grad(), c.in(0).shape())};
    });
  }
  // expand(x, size): sum-to-size(g, x.shape)
  r.Add("aten.expand", [](const GradCall& c) -> std::vector<Val> {
    return {c.SumTo(0, c.grad())};
  });
  // permute(x, dims): permute(g, inverse(dims))
  r.Add("aten.permute", [](const GradCall& c) -> std::vector<Val> {
    IntList dims = c.Ints("dims"), inverse(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) {
      inverse[NormDim(dims[i], static_cast<int64_t>(dims.size()))] = static_cast<int64_t>(i);
    }
    return {Permute(c.grad(), inverse)};
  });
  // transpose(x, d0, d1): transpose(g, d0, d1); t(x): transpose(g, 0, 1) (rank < 2: g)
  r.Add("aten.transpose", [](const GradCall& c) -> std::vector<Val> {
    Val g = c.grad();
    if (g.rank() == 0) return {g};
    return {Transpose(g, c.Int("dim0"), c.Int("dim1"))};
  });
  r.Add("aten.t", [](const GradCall& c) -> std::vector<Val> {
    Val g = c.grad();
    return {g.rank() < 2 ? g : Transpose(g, 0, 1)};
  });
  // movedim(x, source, destination): movedim(g, destination, source)
  r.Add("aten.movedim", [](const GradCall& c) -> std::vector<Val> {
    Val g = c.grad();
    if (g.rank() == 0) return {g};
    return {c.e().Op1("aten.movedim", {g},
                      {{"source", c.Ints("destination")}, {"destination", c.Ints("source")}})};
  });
  // slice(x, dim, start, end, step): slice_scatter(zeros(x), g, dim, start, end, step)
  r.Add("aten.slice", [](const GradCall& c) -> std::vector<Val> {
    return {ScatterInto(c, "aten.slice_scatter",
                        {{"dim", c.Int("dim")}, {"start", c.Sym("start")},
                         {"end", c.Sym("end")}, {"step", c.Int("step")}})};
  });
  // narrow(x, dim, start, length): slice_scatter(zeros(x), g, dim, start, start + length)
  r.Add("aten.narrow", [](const GradCall& c) -> std::vector<Val> {
    return {ScatterInto(c, "aten.slice_scatter",
                        {{"dim", c.Int("dim")}, {"start", c.Sym("start")},
                         {"end", c.Sym("start") + c.Sym("length")}, {"step", int64_t{1}}})};
  });
  // select(x, dim, index): select_scatter(zeros(x), g, dim, index)
  r.Add("aten.select", [](const GradCall& c) -> std::vector<Val> {
    return {ScatterInto(c, "aten.select_scatter",
                        {{"dim", c.Int("dim")}, {"index", c.Sym("index")}})};
  });
  // slice_scatter(x, src, ...): x <- slice_scatter(g, zeros(src), ...), src <- slice(g, ...)
  r.Add("aten.slice_scatter", [](const GradCall& c) -> std::vector<Val> {
    Val g = c.grad();
    return {c.e().Op1("aten.slice_scatter", {g, FullLike(c.in(1), 0.0, g.dtype())}, c.attrs()),
            c.e().Op1("aten.slice", {g}, c.attrs())};
  });
  // select_scatter(x, src, dim, index): x <- select_scatter(g, zeros(src)), src <- select(g)
  r.Add("aten.select_scatter", [](const GradCall& c) -> std::vector<Val> {
    Val g = c.grad();
    return {c.e().Op1("aten.select_scatter", {g, FullLike(c.in(1), 0.0, g.dtype())}, c.attrs()),
            c.e().Op1("aten.select", {g}, c.attrs())};
  });
  // cat(xs, dim): x_i <- slice of g along dim at x_i's offset
  r.Add("aten.cat", [](const GradCall& c) -> std::vector<Val> {
    Val g = c.grad();
    int64_t d = NormDim(c.Int("dim"), g.rank());
    std::vector<Val> out;
    SymExpr offset(0);
    for (const Val& x : c.inputs()) {
      SymExpr end = offset + x.size(d);
      out.push_back(Slice(g, d, offset, end));
      offset = end;
    }
    return out;
  });
  // stack(xs, dim): x_i <- g[..., i, ...] along dim
  r.Add("aten.stack", [](const GradCall& c) -> std::vector<Val> {
    Val g = c.grad();
    int64_t d = NormDim(c.Int("dim"), g.rank());
    std::vector<Val> out;
    for (int i = 0; i < c.num_inputs(); ++i) {
      out.push_back(Squeeze(Slice(g, d, i, i + 1), {d}));
    }
    return out;
  });
  // split / chunk (several outputs): cat(g_i, dim), zeros for outputs without a gradient
  for (const char* op : {"aten.split", "aten.chunk"}) {
    r.Add(op, [](const GradCall& c) -> std::vector<Val> {
      std::vector<Val> parts;
      for (int i = 0; i < c.num_outputs(); ++i) parts.push_back(c.grad(i));
      return {Concat(parts, NormDim(c.Int("dim"), c.in(0).rank()))};
    });
  }
  // flip(x, dims): flip(g, dims)
  r.Add("aten.flip", [](const GradCall& c) -> std::vector<Val> {
    Val g = c.grad();
    return {g.rank() == 0 ? g : Rev(g, c.Ints("dims"))};
  });
  // roll(x, shifts, dims): roll(g, -shifts, dims)
  r.Add("aten.roll", [](const GradCall& c) -> std::vector<Val> {
    IntList shifts = c.Ints("shifts");
    for (int64_t& s : shifts) s = -s;
    return {c.e().Op1("aten.roll", {c.grad()}, {{"shifts", shifts}, {"dims", c.Ints("dims")}})};
  });
  // repeat(x, repeats): sum of g's repeated blocks; tile(x, dims): repeat with dims padded
  r.Add("aten.repeat", [](const GradCall& c) -> std::vector<Val> {
    return {RepeatGrad(c.grad(), c.in(0), c.Syms("repeats"))};
  });
  r.Add("aten.tile", [](const GradCall& c) -> std::vector<Val> {
    SymList dims = c.Syms("dims");
    while (static_cast<int64_t>(dims.size()) < c.in(0).rank()) dims.insert(dims.begin(), 1);
    return {RepeatGrad(c.grad(), c.in(0), dims)};
  });
  // pad(x, pad, mode="constant"): g cropped by the pads (negative pads)
  r.Add("aten.pad", [](const GradCall& c) -> std::vector<Val> {
    if (c.Str("mode") != "constant") {
      c.e().Fail(absl::UnimplementedError(absl::StrCat(
          "aten.pad: no derivative for mode '", c.Str("mode"), "' yet (constant only)")));
      return {};
    }
    Val g = c.grad();
    IntList pad = c.Ints("pad"), low(g.rank(), 0), high(g.rank(), 0);
    for (size_t i = 0; 2 * i + 1 < pad.size(); ++i) {
      int64_t d = g.rank() - 1 - static_cast<int64_t>(i);
      low[d] = -pad[2 * i];
      high[d] = -pad[2 * i + 1];
    }
    return {Pad(g, low, high, 0.0)};
  });
  // tril(x, k) / triu(x, k): the same mask on g
  for (const char* op : {"aten.tril", "aten.triu"}) {
    r.Add(op, [op](const GradCall& c) -> std::vector<Val> {
      return {c.e().Op1(op, {c.grad()}, {{"diagonal", c.Int("diagonal")}})};
    });
  }
  // diagonal(x, offset, dim1, dim2): g written on that diagonal of zeros(x): g [..., L]
  // padded to the length of the axis its index runs along (dim1 for offset >= 0, else dim2),
  // broadcast over the other, kept where j - i == offset, the two axes moved back (static sizes)
  r.Add("aten.diagonal", [](const GradCall& c) -> std::vector<Val> {
    Val x = c.in(0), g = c.grad();
    int64_t rank = x.rank(), off = c.Int("offset");
    int64_t d1 = NormDim(c.Int("dim1"), rank), d2 = NormDim(c.Int("dim2"), rank);
    const SymExpr &a = x.size(d1), &b = x.size(d2), &l = g.size(-1);
    if (!a.is_constant() || !b.is_constant() || !l.is_constant()) {
      c.e().Fail(absl::UnimplementedError("aten.diagonal: derivative needs static sizes"));
      return {};
    }
    IntList low(g.rank(), 0), high(g.rank(), 0);
    high.back() = (off >= 0 ? a.constant() : b.constant()) - l.constant();
    Val line = Pad(g, low, high, 0.0);
    SymList shape(g.shape().begin(), g.shape().end() - 1);
    shape.push_back(a);
    shape.push_back(b);
    Val plane = BroadcastTo(Unsqueeze(line, off >= 0 ? -1 : -2), shape);
    Emitter& e = c.e();
    Val i = Unsqueeze(Iota(e, a, 0, 1, proto::INT64), 1);
    Val j = Unsqueeze(Iota(e, b, 0, 1, proto::INT64), 0);
    Val on = Where(Eq(j - i, static_cast<double>(off)), plane, 0.0);
    return {e.Op1("aten.movedim", {on},
                  {{"source", IntList{rank - 2, rank - 1}}, {"destination", IntList{d1, d2}}})};
  });
  // pixel_shuffle(x, r) <-> pixel_unshuffle(x, r): each one's gradient is the other
  r.Add("aten.pixel_shuffle", [](const GradCall& c) -> std::vector<Val> {
    return {c.e().Op1("aten.pixel_unshuffle", {c.grad()},
                      {{"downscale_factor", c.Int("upscale_factor")}})};
  });
  r.Add("aten.pixel_unshuffle", [](const GradCall& c) -> std::vector<Val> {
    return {c.e().Op1("aten.pixel_shuffle", {c.grad()},
                      {{"upscale_factor", c.Int("downscale_factor")}})};
  });
}

}  // namespace coil::autograd
