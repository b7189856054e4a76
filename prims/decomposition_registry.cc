// The decomposition table and the extern list.
#include "prims/decomposition_registry.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "ir/check.h"
#include "prims/decompositions/register.h"

namespace coil::prims {

const DecompositionRegistry& DecompositionRegistry::Global() {
  static const DecompositionRegistry* registry = [] {
    auto* r = new DecompositionRegistry;
    RegisterElementwiseDecompositions(*r);
    RegisterBinaryDecompositions(*r);
    RegisterCreationDecompositions(*r);
    RegisterReductionDecompositions(*r);
    RegisterShapeDecompositions(*r);
    RegisterNnDecompositions(*r);
    RegisterViewScatterDecompositions(*r);
    return r;
  }();
  return *registry;
}

void DecompositionRegistry::Add(std::string op, DecompositionFn fn) {
  COIL_CHECK(fn != nullptr) << "decomposition of " << op << " is null";
  bool inserted = table_.emplace(op, std::move(fn)).second;
  COIL_CHECK(inserted) << "two decompositions of " << op;
}

const DecompositionFn* DecompositionRegistry::Find(absl::string_view op) const {
  auto it = table_.find(op);
  return it == table_.end() ? nullptr : &it->second;
}

std::vector<std::string> DecompositionRegistry::Ops() const {
  std::vector<std::string> ops;
  for (const auto& [name, fn] : table_) ops.push_back(name);
  std::sort(ops.begin(), ops.end());
  return ops;
}

bool IsPrim(absl::string_view op) { return absl::StartsWith(op, "prims."); }

const std::vector<std::string>& ExternOps() {
  static const std::vector<std::string>* ops =
      new std::vector<std::string>{"aten.bmm", "aten.convolution", "aten.mm"};
  return *ops;
}

bool IsExtern(absl::string_view op) {
  const std::vector<std::string>& ops = ExternOps();
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

}  // namespace coil::prims
