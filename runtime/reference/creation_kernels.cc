// Reference kernels of the creation ops (the ops of ir/ops/creation_ops.cc): full, zeros,
// ones, the *_like ops and arange. A fill value is a Python-number attribute cast to the output
// dtype as torch casts it (truncated for integers).
#include <vector>

#include "runtime/reference/kernel_registry.h"
#include "runtime/reference/kernel_util.h"

namespace coil {
namespace {

using Ctx = const KernelContext&;
using Result = absl::StatusOr<std::vector<HostTensor>>;

// A new tensor of the context's output type filled with a Python-number attribute.
Result Filled(Ctx c, const Attribute& value) {
  DType out = c.output_dtypes[0];
  HostTensor r = HostTensor::Zeros(out, c.output_shapes[0]);
  for (int64_t i = 0; i < r.numel(); ++i) {
    if (IsFloating(out)) {
      r.StoreDouble(i, ScalarAsDouble(value, out));
    } else {
      r.StoreInt(i, ScalarAsInt(value, out));
    }
  }
  return std::vector<HostTensor>{r};
}

}  // namespace

void RegisterCreationKernels(ReferenceKernels& k) {
  static const Attribute kZero(int64_t{0}), kOne(int64_t{1});
  k.Register("aten.full", [](Ctx c) { return Filled(c, c.attrs.find("value")->second); });
  k.Register("aten.full_like", [](Ctx c) { return Filled(c, c.attrs.find("value")->second); });
  k.Register("aten.zeros", [](Ctx c) { return Filled(c, kZero); });
  k.Register("aten.zeros_like", [](Ctx c) { return Filled(c, kZero); });
  k.Register("aten.ones", [](Ctx c) { return Filled(c, kOne); });
  k.Register("aten.ones_like", [](Ctx c) { return Filled(c, kOne); });
  k.Register("aten.arange", [](Ctx c) -> Result {
    DType out = c.output_dtypes[0];
    HostTensor r = HostTensor::Zeros(out, c.output_shapes[0]);
    const Attribute& start = c.attrs.find("start")->second;
    const Attribute& step = c.attrs.find("step")->second;
    if (IsFloating(out)) {
      double s = *GetFloat(c.attrs, "start"), k = *GetFloat(c.attrs, "step");
      for (int64_t i = 0; i < r.numel(); ++i) r.StoreDouble(i, s + static_cast<double>(i) * k);
    } else {
      // torch accumulates integral aranges in int64 from the truncated bounds.
      int64_t s = ScalarAsInt(start, proto::INT64), k = ScalarAsInt(step, proto::INT64);
      for (int64_t i = 0; i < r.numel(); ++i) r.StoreInt(i, WrapAdd(s, WrapMul(i, k)));
    }
    return std::vector<HostTensor>{r};
  });
}

}  // namespace coil
