// ReferenceKernels storage and the global registry.
#include "runtime/reference/kernel_registry.h"

#include <algorithm>

#include "ir/check.h"

namespace coil {

const ReferenceKernels& ReferenceKernels::Global() {
  static const ReferenceKernels* kernels = [] {
    auto* k = new ReferenceKernels();
    RegisterElementwiseKernels(*k);
    RegisterBinaryKernels(*k);
    RegisterCreationKernels(*k);
    RegisterReductionKernels(*k);
    RegisterShapeKernels(*k);
    RegisterIndexingKernels(*k);
    RegisterNnKernels(*k);
    RegisterPrimsKernels(*k);
    RegisterPrimsShapeKernels(*k);
    RegisterPrimsCreationKernels(*k);
    RegisterPrimsIndexingKernels(*k);
    RegisterPrimsSymKernels(*k);
    RegisterInplaceKernels(*k);
    return k;
  }();
  return *kernels;
}

void ReferenceKernels::Register(absl::string_view op, ReferenceKernel kernel) {
  COIL_CHECK(kernel != nullptr);
  bool inserted = kernels_.emplace(std::string(op), std::move(kernel)).second;
  COIL_CHECK(inserted) << "reference kernel for " << op << " registered twice";
}

const ReferenceKernel* ReferenceKernels::Find(absl::string_view op) const {
  auto it = kernels_.find(op);
  return it == kernels_.end() ? nullptr : &it->second;
}

std::vector<std::string> ReferenceKernels::Ops() const {
  std::vector<std::string> out;
  for (const auto& [name, k] : kernels_) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace coil
