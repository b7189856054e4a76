// Reference kernel of prims.sym_value (the interpreter binds the sym attribute to a constant).
#include "absl/strings/str_cat.h"
#include "runtime/reference/kernel_registry.h"

namespace coil {

void RegisterPrimsSymKernels(ReferenceKernels& k) {
  k.Register("prims.sym_value",
             [](const KernelContext& c) -> absl::StatusOr<std::vector<HostTensor>> {
               absl::StatusOr<SymExpr> v = GetSym(c.attrs, "value");
               if (!v.ok()) return v.status();
               if (!v->is_constant()) {
                 return absl::InvalidArgumentError(
                     absl::StrCat("prims.sym_value: ", v->ToString(), " is not bound"));
               }
               HostTensor r = HostTensor::Zeros(c.output_dtypes[0], {});
               if (IsFloating(r.dtype())) {
                 r.StoreDouble(0, static_cast<double>(v->constant()));
               } else {
                 r.StoreInt(0, v->constant());
               }
               return std::vector<HostTensor>{r};
             });
}

}  // namespace coil
