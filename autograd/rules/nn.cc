// Derivative rules of the matmul family (mm, bmm, matmul, dot, mv, outer, addmm, baddbmm,
// linear), the indexing ops (gather, scatter, scatter_add, index_select, index_tensor,
// index_put, embedding) and dropout (ir/ops/nn_ops.cc, indexing_ops.cc).
#include <cstdint>
#include <vector>

#include "autograd/derivative_registry.h"
#include "autograd/rules/register.h"

namespace coil::autograd {
namespace {

using namespace coil::prims;  // NOLINT: the rule language

Val X(const GradCall& c, int i) { return Upcast(c.in(i)); }

// The last two dims swapped.
Val MT(Val x) { return Transpose(x, -2, -1); }

Val MatmulOp(Emitter& e, Val a, Val b) { return e.Op1("aten.matmul", {a, b}); }

// matmul(a, b) backward with torch.matmul's 1-D promotion and batch broadcasting:
// a <- sum-to-size(g @ b^T), b <- sum-to-size(a^T @ g), on the promoted operands.
std::vector<Val> MatmulGrad(const GradCall& c) {
  Emitter& e = c.e();
  Val a = X(c, 0), b = X(c, 1), g = c.grad();
  Val a2 = a.rank() == 1 ? Unsqueeze(a, 0) : a;
  Val b2 = b.rank() == 1 ? Unsqueeze(b, 1) : b;
  SymList gshape = g.shape();
  if (a.rank() == 1) gshape.insert(gshape.end() - (b.rank() == 1 ? 0 : 1), SymExpr(1));
  if (b.rank() == 1) gshape.push_back(SymExpr(1));
  Val g2 = Reshape(g, gshape);
  std::vector<Val> out(2);
  if (c.needs_grad(0)) out[0] = Reshape(SumToShape(MatmulOp(e, g2, MT(b2)), a2.shape()), a.shape());
  if (c.needs_grad(1)) out[1] = Reshape(SumToShape(MatmulOp(e, MT(a2), g2), b2.shape()), b.shape());
  return out;
}

// The index of an indexing op as int64 (index_put/index_tensor take int64 only).
Val Index64(Val index) { return Cast(index, proto::INT64); }

// index_put(zeros(x), index, g, dim, accumulate=true): g summed into x's shape at the indices.
Val IndexAdd(const GradCall& c, const Val& like, Val index, int64_t dim, Val g) {
  return c.e().Op1("aten.index_put", {FullLike(like, 0.0, g.dtype()), Index64(index), g},
                   {{"dim", dim}, {"accumulate", true}});
}

}  // namespace

void RegisterNnRules(DerivativeRegistry& r) {
  // mm(a, b): a <- g b^T, b <- a^T g
  r.Add("aten.mm", [](const GradCall& c) -> std::vector<Val> {
    Val g = c.grad();
    return {c.e().Op1("aten.mm", {g, MT(X(c, 1))}), c.e().Op1("aten.mm", {MT(X(c, 0)), g})};
  });
  // bmm(a, b): a <- g b^T, b <- a^T g (per batch)
  r.Add("aten.bmm", [](const GradCall& c) -> std::vector<Val> {
    Val g = c.grad();
    return {c.e().Op1("aten.bmm", {g, MT(X(c, 1))}), c.e().Op1("aten.bmm", {MT(X(c, 0)), g})};
  });
  // matmul(a, b): see MatmulGrad
  r.Add("aten.matmul", MatmulGrad);
  // dot(a, b): a <- g b, b <- g a
  r.Add("aten.dot", [](const GradCall& c) -> std::vector<Val> {
    return {c.grad() * X(c, 1), c.grad() * X(c, 0)};
  });
  // mv(m, v): m <- outer(g, v), v <- m^T g
  r.Add("aten.mv", [](const GradCall& c) -> std::vector<Val> {
    Val g = c.grad();
    return {Unsqueeze(g, 1) * Unsqueeze(X(c, 1), 0), MatmulOp(c.e(), MT(X(c, 0)), g)};
  });
  // outer(a, b): a <- g b, b <- g^T a
  r.Add("aten.outer", [](const GradCall& c) -> std::vector<Val> {
    Val g = c.grad();
    return {MatmulOp(c.e(), g, X(c, 1)), MatmulOp(c.e(), MT(g), X(c, 0))};
  });
  // addmm(x, m1, m2, beta, alpha): x <- beta g, m1 <- alpha g m2^T, m2 <- alpha m1^T g
  // baddbmm: the same per batch
  for (const char* op : {"aten.addmm", "aten.baddbmm"}) {
    std::string mm = op == std::string("aten.addmm") ? "aten.mm" : "aten.bmm";
    r.Add(op, [mm](const GradCall& c) -> std::vector<Val> {
      Val g = c.grad();
      double alpha = c.Float("alpha"), beta = c.Float("beta");
      return {c.SumTo(0, g * beta), c.e().Op1(mm, {g, MT(X(c, 2))}) * alpha,
              c.e().Op1(mm, {MT(X(c, 1)), g}) * alpha};
    });
  }
  // linear(x, w [out, in], b?): x <- g w, w <- g2^T x2 (rows flattened), b <- sum-to-size(g)
  r.Add("aten.linear", [](const GradCall& c) -> std::vector<Val> {
    Val x = X(c, 0), w = X(c, 1), g = c.grad();
    if (w.rank() != 2) {
      c.e().Fail(absl::UnimplementedError("aten.linear: derivative needs a 2-D weight"));
      return {};
    }
    SymExpr rows(1);
    for (int64_t d = 0; d + 1 < x.rank(); ++d) rows = rows * x.size(d);
    Val g2 = Reshape(g, {rows, w.size(0)});
    Val x2 = Reshape(x, {rows, w.size(1)});
    std::vector<Val> out = {MatmulOp(c.e(), g, w), c.e().Op1("aten.mm", {MT(g2), x2})};
    if (c.has_in(2)) out.push_back(c.SumTo(2, g));
    return out;
  });

  // gather(x, index, dim): x <- scatter_add(zeros(x), index, g, dim)
  r.Add("aten.gather", [](const GradCall& c) -> std::vector<Val> {
    Val g = c.grad();
    return {c.e().Op1("aten.scatter_add", {FullLike(c.in(0), 0.0, g.dtype()), c.in(1), g},
                      {{"dim", c.Int("dim")}}),
            Val()};
  });
  // scatter(x, index, src, dim): x <- scatter(g, index, zeros(src)), src <- gather(g, index)
  r.Add("aten.scatter", [](const GradCall& c) -> std::vector<Val> {
    Val g = c.grad();
    AttrMap dim = {{"dim", c.Int("dim")}};
    return {c.e().Op1("aten.scatter", {g, c.in(1), FullLike(c.in(2), 0.0, g.dtype())}, dim),
            Val(), c.e().Op1("aten.gather", {g, c.in(1)}, dim)};
  });
  // scatter_add(x, index, src, dim): x <- g, src <- gather(g, index)
  r.Add("aten.scatter_add", [](const GradCall& c) -> std::vector<Val> {
    Val g = c.grad();
    return {g, Val(), c.e().Op1("aten.gather", {g, c.in(1)}, {{"dim", c.Int("dim")}})};
  });
  // index_select(x, index, dim), index_tensor(x, index, dim): x <- index_put(zeros(x), index,
  // g, dim, accumulate=true)
  for (const char* op : {"aten.index_select", "aten.index_tensor"}) {
    r.Add(op, [](const GradCall& c) -> std::vector<Val> {
      Val x = c.in(0);
      int64_t dim = c.Int("dim");
      if (dim < 0) dim += x.rank();
      return {IndexAdd(c, x, c.in(1), dim, c.grad()), Val()};
    });
  }
  // index_put(x, index, values, dim, accumulate): x <- g (accumulate) or g with the written
  // positions zeroed; values <- sum-to-size(index_tensor(g, index, dim))
  r.Add("aten.index_put", [](const GradCall& c) -> std::vector<Val> {
    Val g = c.grad();
    AttrMap dim = {{"dim", c.Int("dim")}};
    Val gx = g;
    if (!c.Bool("accumulate")) {
      gx = c.e().Op1("aten.index_put", {g, c.in(1), FullLike(c.in(2), 0.0, g.dtype())},
                     {{"dim", c.Int("dim")}, {"accumulate", false}});
    }
    return {gx, Val(), c.SumTo(2, c.e().Op1("aten.index_tensor", {g, c.in(1)}, dim))};
  });
  // embedding(w [V, D], idx, padding_idx): w <- rows of g summed at idx (rows at padding_idx
  // get none)
  r.Add("aten.embedding", [](const GradCall& c) -> std::vector<Val> {
    if (c.Bool("scale_grad_by_freq")) {
      c.e().Fail(absl::UnimplementedError(
          "aten.embedding: no derivative with scale_grad_by_freq=true yet"));
      return {};
    }
    Val w = c.in(0), idx = c.in(1), g = c.grad();
    SymExpr n = NumElements(idx, {});
    Val flat = Reshape(Index64(idx), {n});
    Val g2 = Reshape(g, {n, w.size(1)});
    int64_t pad = c.Int("padding_idx");
    if (pad >= 0) g2 = Where(Unsqueeze(Eq(flat, static_cast<double>(pad)), 1), 0.0, g2);
    return {IndexAdd(c, w, flat, 0, g2), Val()};
  });
  // dropout(x, p, train=false): g
  // dropout(x, p, train=true, seed, offset): dropout(g) with the same seed and offset, i.e.
  //   g * mask / (1 - p) with the forward's mask drawn again from (seed, offset)
  r.Add("aten.dropout", [](const GradCall& c) -> std::vector<Val> {
    if (!c.Bool("train") || c.Float("p") == 0) return {c.grad()};
    return {c.e().Op1("aten.dropout", {c.grad()}, c.attrs())};
  });
}

}  // namespace coil::autograd
