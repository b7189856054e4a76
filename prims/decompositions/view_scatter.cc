// Decompositions of the view inverses that prims::Functionalize emits (aten.slice_scatter,
// aten.select_scatter). The positions a view reads are computed by applying the view itself
// to an iota over the dimension, so the bound clamping and index wrapping stay defined once
// (in aten.slice / aten.select and their decompositions); src is then scattered there.
#include "prims/decomposition_registry.h"
#include "prims/decompositions/register.h"

namespace coil::prims {
namespace {

// The positions along `dim` that `view` (aten.slice or aten.select, with the op's attributes)
// reads from self: a 1-D (slice) or rank-0 (select) int64 tensor.
Val ViewPositions(const OpCall& c, const char* view) {
  Val self = c.in(0);
  int64_t dim = c.Int("dim");
  if (dim < 0) dim += self.rank();
  Val positions = Iota(c.e(), self.size(dim), 0, 1, proto::INT64);
  AttrMap attrs = c.attrs();
  attrs["dim"] = int64_t{0};
  return c.e().Op1(view, {positions}, attrs);
}

}  // namespace

void RegisterViewScatterDecompositions(DecompositionRegistry& r) {
  // slice_scatter(self, src, dim, start, end, step) -> scatter(self, dim, slice(iota)[bcast], src)
  r.Add("aten.slice_scatter", [](const OpCall& c) -> std::vector<Val> {
    Val src = c.in(1);
    int64_t dim = c.Int("dim");
    if (dim < 0) dim += src.rank();
    Val index = BroadcastInDim(ViewPositions(c, "aten.slice"), src.shape(), {dim});
    return {Scatter(c.in(0), dim, index, src)};
  });
  // select_scatter(self, src, dim, index) -> scatter(self, dim, select(iota)[bcast], src[dim+])
  r.Add("aten.select_scatter", [](const OpCall& c) -> std::vector<Val> {
    int64_t dim = c.Int("dim");
    if (dim < 0) dim += c.in(0).rank();
    Val src = Unsqueeze(c.in(1), dim);
    Val index = BroadcastInDim(ViewPositions(c, "aten.select"), src.shape(), {});
    return {Scatter(c.in(0), dim, index, src)};
  });
}

}  // namespace coil::prims
