// The inverses of slicing views: `aten.slice_scatter` and `aten.select_scatter` (PyTorch's
// ops of the same names). Each returns a copy of self with src written where the view
// (`aten.slice` / `aten.select` with the same attributes) would read. prims::Functionalize
// emits them to write a mutated view back into its base.
#include <climits>
#include <string>
#include <vector>

#include "ir/check.h"
#include "ir/op_registry.h"
#include "ir/ops/meta_util.h"
#include "ir/shape_assumption.h"

namespace coil {

void RegisterScatterViewOps(OpRegistry& registry);

namespace {

using Types = absl::StatusOr<std::vector<TensorType>>;

// A meta for `<view>_scatter`: self's type, once src has the shape the view of self has.
MetaFn ScatterMeta(const char* view_name, MetaFn view_meta) {
  return [view_name, view_meta](absl::Span<const TensorType> in, const AttrMap& attrs) -> Types {
    Types view = view_meta(in.subspan(0, 1), attrs);
    if (!view.ok()) return view;
    const TensorType& want = (*view)[0];
    bool same = want.rank() == in[1].rank();
    for (int64_t d = 0; same && d < want.rank(); ++d) {
      same = MayEqual(want.shape[d], in[1].shape[d], "src has the size of the slice of self");
    }
    if (!same) {
      return meta::Error(view_name, "_scatter: expected src to have a size equal to the slice of "
                         "self. src size = ", meta::ShapeText(in[1].shape), ", slice size = ",
                         meta::ShapeText(want.shape));
    }
    if (in[1].dtype != in[0].dtype) {
      return meta::Error(view_name, "_scatter: src dtype ", DTypeName(in[1].dtype),
                         " differs from self's ", DTypeName(in[0].dtype));
    }
    return std::vector<TensorType>{in[0]};
  };
}

}  // namespace

void RegisterScatterViewOps(OpRegistry& registry) {
  const OpSchema* slice = registry.Find("aten.slice");
  const OpSchema* select = registry.Find("aten.select");
  COIL_CHECK(slice != nullptr && select != nullptr);
  registry.Register(meta::MakeSchema(
      "aten.slice_scatter", {{"self"}, {"src"}}, slice->attrs, OpClass::kShape,
      ScatterMeta("slice", slice->meta),
      "torch.slice_scatter: self with src written into self[dim][start:end:step]; coil requires "
      "src's dtype to equal self's"));
  registry.Register(meta::MakeSchema(
      "aten.select_scatter", {{"self"}, {"src"}}, select->attrs, OpClass::kShape,
      ScatterMeta("select", select->meta),
      "torch.select_scatter: self with src written into self.select(dim, index); coil requires "
      "src's dtype to equal self's"));
}

}  // namespace coil
